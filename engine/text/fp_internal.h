/*
 * fp_internal.h — fingerprint pipeline internals shared by fp_*.c.
 *
 * Room: text/. It may call: index/ (and common/).
 * The room turns documents into signatures and compares them, with no
 * storage: features and the simhash (fp_simhash.c, fp_options.c,
 * fp_text.c), HTML to text (fp_html.c, the only libxml2), min-hash
 * sketches (sketch.c), fingerprint and sketch in one pass (fp_feat.c),
 * exact resemblance (resemble.c) and the one near-duplicate decision
 * (verify_pair.c). The store, the corpus dedupe and the shards use it.
 */
#ifndef ND_FP_INTERNAL_H
#define ND_FP_INTERNAL_H

#include "neardup.h"

/* The defaults, chosen by measurement (docs/fingerprints.md). */
#define FP_DEFAULT_FEATURES ND_FEATURES_SHINGLES
#define FP_DEFAULT_SHINGLE_N 3u
#define FP_DEFAULT_CHARS_N 4u
/* The HTML title's weight by default: 1 from function version 2 (as often
 * as a reader sees it; measured in bench/README.md, "HTML pages"), 2 in
 * version 1. */
#define FP_DEFAULT_TITLE_WEIGHT 1u
#define FP_DEFAULT_TITLE_WEIGHT_V1 2u

/* Options with every default filled in. */
typedef struct fp_resolved {
    unsigned version; /* of the function, ND_FP_VERSION_OLDEST..ND_FP_VERSION */
    nd_feature_kind features;
    unsigned n;
    unsigned flags;   /* without the version bits (ND_FP_FUNCTION_MASK) */
    unsigned title_weight;
    const char *const *stopwords;
    size_t n_stopwords;
    uint64_t stop_hash; /* 0 if no stopwords */
} fp_resolved;

/* Validate and resolve opts (NULL = defaults). ND_EINVAL naming the bad
 * field. */
int fp_resolve(fp_resolved *out, const nd_fp_options *opts);

/* ND_FP_FOLD_CHINESE (fp_fold_zh.c, the only OpenCC): *out the normalised
 * text[0, len) with Traditional Chinese folded to Simplified (malloc'd,
 * *out_len bytes, NUL included as in text), or NULL when the text holds no
 * character that could change (use it as it is). ND_OK; ND_EIO (OpenCC's
 * data missing); ND_ENOMEM. Thread-safe. */
int fp_fold_chinese(char **out, size_t *out_len, const char *text, size_t len);

/* Features of one plain text with a weight per occurrence (fp_text.c). */
int fp_text_features(const fp_resolved *o, const char *text, size_t len, int32_t weight,
                     nd_feature_cb cb, void *payload);

#endif
