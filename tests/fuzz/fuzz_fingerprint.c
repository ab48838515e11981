/*
 * fuzz_fingerprint.c — libFuzzer target for text -> fingerprint
 * (nd_fingerprint, nd_features): any bytes (invalid UTF-8, NULs, any
 * script) under any valid options give a fingerprint, deterministically,
 * equal to the simhash of the features nd_features reports.
 *
 * Input: two option bytes (feature kind and n, flags), then the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <neardup.h>

static void add_cb(uint64_t hash, int32_t weight, void *payload)
{
    nd_simhash_add_hash(payload, hash, weight);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    nd_fp_options o = ND_FP_OPTIONS_INIT;
    o.features = (nd_feature_kind)(data[0] & 3);
    o.n = (unsigned)(data[0] >> 2) % 17; /* 0 = default; words reject n > 1 */
    o.flags = data[1] & (ND_FP_HTML | ND_FP_NO_CJK_BIGRAMS);
    o.title_weight = (unsigned)(data[1] >> 2) % 4;
    static const char *const stop[] = {"the", "a", "of"};
    if (data[1] & 0x80) {
        o.stopwords = stop;
        o.n_stopwords = 3;
    }
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    char *copy = malloc(len ? len : 1); /* exact size: ASan catches over-reads */
    if (!copy) return 0;
    memcpy(copy, text, len);

    uint64_t fp1, fp2;
    int rc = nd_fingerprint(&fp1, copy, len, &o);
    if (rc == ND_EINVAL) { /* options this combination rejects: must say so up front */
        char cfg[256];
        if (nd_fp_config_string(cfg, sizeof cfg, &o) != ND_EINVAL) abort();
        free(copy);
        return 0;
    }
    if (rc != ND_OK) abort();
    if (nd_fingerprint(&fp2, copy, len, &o) != ND_OK || fp1 != fp2) abort();
    nd_simhash acc;
    nd_simhash_init(&acc);
    if (nd_features(copy, len, &o, add_cb, &acc) != ND_OK) abort();
    if (nd_simhash_final(&acc) != fp1) abort();
    free(copy);
    return 0;
}
