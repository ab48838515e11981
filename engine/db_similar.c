/*
 * db_similar.c — the checks of a document with its sketch:
 * nd_db_query_doc and nd_db_add_doc_if_new (neardup.h, "Resemblance
 * stores"). In a fingerprint-only store they are the fingerprint calls.
 */
#include "db_core.h"
#include "nd_error.h"

int nd_db_query_doc(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k,
                    const nd_query_options *opts)
{
    ND_RETURN_IF(!out || !db || !doc, ND_EINVAL, "nd_db_query_doc: NULL argument");
    if (db->min_resemblance <= 0) return nd_db_query(out, db, doc->fp, k, opts);
    return nd_err_set(ND_EINVAL, "nd_db_query_doc: resemblance stores are not built yet");
}

int nd_db_add_doc_if_new(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k)
{
    ND_RETURN_IF(!out || !db || !doc, ND_EINVAL, "nd_db_add_doc_if_new: NULL argument");
    if (db->min_resemblance <= 0)
        return nd_db_add_if_new(out, db, doc->key, doc->key_len, doc->fp, doc->score, doc->time, k);
    return nd_err_set(ND_EINVAL, "nd_db_add_doc_if_new: resemblance stores are not built yet");
}
