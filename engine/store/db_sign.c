/*
 * db_sign.c — what a text becomes in a store: its fingerprint and its
 * resemblance sketch under the store's fingerprint options, from one
 * tokenisation (nd_db_sign), and the store's threshold.
 *
 * The features are those of nd_fingerprint under the store's options, so
 * a fingerprint signed here equals nd_fingerprint's; the sketch is of the
 * same features (fp_feat.c does both in one pass, as the corpus
 * dedupe does). Callers: the public API (the CLI and the Python binding
 * sign texts for resemblance stores through it).
 */
#include <string.h>

#include "db_core.h"
#include "fp_feat.h"
#include "nd_error.h"

int nd_db_sign(nd_signature *out, nd_db *db, const char *text, size_t len, unsigned flags)
{
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_db_sign: NULL argument");
    ND_RETURN_IF(flags & ~ND_FP_HTML, ND_EINVAL, "nd_db_sign: unknown flags 0x%x", flags);
    nd_fp_options o = db->fp;
    o.flags |= flags;
    fp_feat f;
    memset(&f, 0, sizeof f);
    fp_feat_begin(&f);
    int rc = nd_features(text, len, &o, fp_feat_add, &f);
    memset(out, 0, sizeof *out);
    uint32_t distinct;
    out->fp = fp_feat_end(&f, &out->sketch, &distinct);
    out->length = len;
    int oom = f.oom;
    fp_feat_dispose(&f);
    if (rc < 0) return rc;
    ND_RETURN_IF(oom, ND_ENOMEM, "nd_db_sign: out of memory sketching a text of %zu bytes", len);
    return ND_OK;
}

double nd_db_min_resemblance(const nd_db *db)
{
    return db ? db->min_resemblance : 0;
}
