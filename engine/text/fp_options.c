/*
 * fp_options.c — fingerprint options: defaults, validation, and the
 * canonical configuration string a database records.
 *
 * Two option sets give the same fingerprint for every text exactly when
 * their configuration strings are equal, so a database can refuse a caller
 * whose fingerprints would not be comparable with the stored ones. The
 * string begins with the version of the function computed ("fp2;"), which
 * the options select with ND_FP_FUNCTION (none: ND_FP_VERSION).
 *
 * Callers: the public API (nd_fp_options_init, nd_fp_config_string),
 * fp_text.c (fp_resolve) and db_open.c (the record it checks at open).
 */
#include <stdio.h>
#include <string.h>

#include "fp_internal.h"
#include "nd_error.h"
#include "nd_options.h"

int nd_fp_options_init(nd_fp_options *opts, unsigned version)
{
    return nd_options_init(opts, sizeof *opts, version, ND_FP_OPTIONS_VERSION, ND_FP_OPTIONS_VERSION, "fp");
}

int fp_resolve(fp_resolved *out, const nd_fp_options *opts)
{
    nd_fp_options def = ND_FP_OPTIONS_INIT;
    if (!opts) opts = &def;
    ND_RETURN_IF(opts->version != ND_FP_OPTIONS_VERSION, ND_EINVAL,
                 "fp options: version %u unknown (this build knows %u)", opts->version,
                 ND_FP_OPTIONS_VERSION);
    ND_RETURN_IF(opts->flags & ~(ND_FP_HTML | ND_FP_NO_CJK_BIGRAMS | ND_FP_FOLD_CHINESE |
                                 ND_FP_FUNCTION_MASK),
                 ND_EINVAL, "fp options: unknown flags 0x%x", opts->flags);
    unsigned version = ND_FP_FUNCTION_OF(opts->flags);
    if (version == 0) version = ND_FP_VERSION;
    ND_RETURN_IF(version < ND_FP_VERSION_OLDEST || version > ND_FP_VERSION, ND_EVERSION,
                 "fp options: fingerprint function version %u unknown (this build computes "
                 "%u to %u)", version, ND_FP_VERSION_OLDEST, ND_FP_VERSION);
    ND_RETURN_IF((opts->flags & ND_FP_FOLD_CHINESE) && version < 2, ND_EINVAL,
                 "fp options: folding Chinese needs fingerprint function version 2 (asked %u)",
                 version);
    ND_RETURN_IF(opts->n_stopwords && !opts->stopwords, ND_EINVAL,
                 "fp options: n_stopwords without a list");
    memset(out, 0, sizeof *out);
    out->features = opts->features ? opts->features : FP_DEFAULT_FEATURES;
    switch (out->features) {
    case ND_FEATURES_WORDS:
        ND_RETURN_IF(opts->n > 1, ND_EINVAL, "fp options: words take no n (got %u)", opts->n);
        out->n = 1;
        break;
    case ND_FEATURES_SHINGLES:
        out->n = opts->n ? opts->n : FP_DEFAULT_SHINGLE_N;
        break;
    case ND_FEATURES_CHARS:
        out->n = opts->n ? opts->n : FP_DEFAULT_CHARS_N;
        break;
    default:
        return nd_err_set(ND_EINVAL, "fp options: unknown feature kind %d", (int)opts->features);
    }
    ND_RETURN_IF(out->n > 16, ND_EINVAL, "fp options: n=%u (1..16 allowed)", out->n);
    out->version = version;
    out->flags = opts->flags & ~ND_FP_FUNCTION_MASK;
    out->title_weight = opts->title_weight ? opts->title_weight
                        : version == 1     ? FP_DEFAULT_TITLE_WEIGHT_V1
                                           : FP_DEFAULT_TITLE_WEIGHT;
    ND_RETURN_IF(out->title_weight > 1000, ND_EINVAL, "fp options: title_weight %u (1..1000)",
                 out->title_weight);
    out->stopwords = opts->stopwords;
    out->n_stopwords = opts->n_stopwords;
    /* Order-independent hash of the stop list: sum of the words' hashes. */
    for (size_t i = 0; i < opts->n_stopwords; i++) {
        ND_RETURN_IF(!opts->stopwords[i], ND_EINVAL, "fp options: stopword %zu is NULL", i);
        out->stop_hash += nd_feature_hash(opts->stopwords[i], strlen(opts->stopwords[i])) | 1;
    }
    return ND_OK;
}

int nd_fp_config_string(char *out, size_t cap, const nd_fp_options *opts)
{
    static const char *const kinds[] = {"", "words", "shingles", "chars"};
    fp_resolved r;
    ND_FORWARD(fp_resolve(&r, opts));
    ND_RETURN_IF(!out, ND_EINVAL, "fp config: NULL buffer");
    /* The HTML flag describes the input, not the function: it is left out,
     * so a database accepts both plain and HTML documents. */
    int w = snprintf(out, cap, "fp%u;%s:%u;nfkc-cf%s;%s;stop:%016llx;title:%u", r.version,
                     kinds[r.features], r.n, (r.flags & ND_FP_FOLD_CHINESE) ? "+t2s" : "",
                     (r.flags & ND_FP_NO_CJK_BIGRAMS) ? "nocjk" : "cjk2",
                     (unsigned long long)r.stop_hash, r.title_weight);
    ND_RETURN_IF(w < 0 || (size_t)w >= cap, ND_ELIMIT, "fp config: buffer of %zu bytes too small",
                 cap);
    return ND_OK;
}
