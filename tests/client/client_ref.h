/*
 * client_ref.h — what the C client's tests share: a deterministic stream
 * of fingerprints and texts with planted near-duplicates, stores created
 * through the embedded library (the reference beside the served copy),
 * and the comparison of a client's match with the library's. Used by
 * test_client.c and test_fleet.c.
 */
#ifndef ND_TEST_CLIENT_REF_H
#define ND_TEST_CLIENT_REF_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <neardup.h>
#include <neardup_client.h>

static inline uint64_t ref_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* fp with exactly d distinct bits flipped. */
static inline uint64_t ref_flip(uint64_t fp, unsigned d, uint64_t *seed)
{
    uint64_t mask = 0;
    while ((unsigned)__builtin_popcountll(mask) < d) mask |= 1ull << (ref_rand(seed) % 64);
    return fp ^ mask;
}

/* A fresh store at path: fingerprint-only, or verifying by resemblance
 * (min_res 0: the default threshold). Returns the library's code. */
static inline int ref_create(nd_db **out, const char *path, int fingerprint_only)
{
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_EXCL | (fingerprint_only ? ND_DB_FINGERPRINT_ONLY : 0);
    o.expected_docs = 100000;
    o.threads = 1;
    return nd_db_open(out, path, &o);
}

/* Text number `base` of a vocabulary of made-up words, `words` long, with
 * `edits` of its words replaced (0: the base text itself). */
static inline size_t ref_text(char *out, size_t cap, unsigned base, unsigned words,
                              unsigned edits, unsigned edit_seed)
{
    static const char *const syl[] = {"ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi",
                                      "pe", "da", "gu", "ir", "on", "el", "ba", "zu"};
    uint64_t s = 0x9E3779B97F4A7C15ull * (base + 1);
    uint64_t e = 0xC2B2AE3D27D4EB4Full * (edit_seed + 7);
    size_t n = 0;
    unsigned change[64] = {0};
    for (unsigned i = 0; i < edits && i < 64; i++) change[i] = (unsigned)(ref_rand(&e) % words);
    for (unsigned w = 0; w < words; w++) {
        uint64_t r = ref_rand(&s);
        for (unsigned i = 0; i < edits && i < 64; i++)
            if (change[i] == w) r = ref_rand(&e);
        unsigned len = 2 + (unsigned)(r % 3);
        for (unsigned j = 0; j < len && n + 4 < cap; j++) {
            const char *p = syl[(r >> (8 + 4 * j)) & 15];
            size_t l = strlen(p);
            memcpy(out + n, p, l);
            n += l;
        }
        if (n + 1 < cap) out[n++] = w + 1 == words ? '.' : ' ';
    }
    out[n] = '\0';
    return n;
}

/* The first difference between a client's match and the library's, into
 * why (empty: the same). with_meta: compare score and time too. */
static inline void ref_diff(char *why, size_t cap, const nd_match *got, const nd_match *want,
                            int with_meta)
{
    why[0] = '\0';
    if (got->key_len != want->key_len || memcmp(got->key, want->key, want->key_len) != 0)
        snprintf(why, cap, "key %.*s, want %.*s", (int)got->key_len, got->key,
                 (int)want->key_len, want->key);
    else if (got->fp != want->fp)
        snprintf(why, cap, "%s: fingerprint %016llx, want %016llx", want->key,
                 (unsigned long long)got->fp, (unsigned long long)want->fp);
    else if (got->dist != want->dist)
        snprintf(why, cap, "%s: distance %u, want %u", want->key, got->dist, want->dist);
    else if (fabs(got->resemblance - want->resemblance) > 1e-9)
        snprintf(why, cap, "%s: resemblance %g, want %g", want->key, got->resemblance,
                 want->resemblance);
    else if (with_meta && (got->time != want->time || fabs(got->score - want->score) > 1e-9))
        snprintf(why, cap, "%s: score %g time %lld, want %g %lld", want->key, got->score,
                 (long long)got->time, want->score, (long long)want->time);
}

#endif
