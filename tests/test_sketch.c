/*
 * test_sketch.c — the resemblance sketch (engine/text/sketch.c, neardup.h
 * "nd_sketch"): the library's sketches equal those of a plain
 * re-implementation written from the header's description; golden values
 * pin them (ND_SKETCH_VERSION 1: a change of any of them is a new sketch
 * version); order and repeats of the hashes do not matter; a builder is
 * reused across sets; the estimate is unbiased within its noise on sets
 * of known resemblance, short and long; band keys catch pairs of
 * resemblance 0.9 and rarely pairs of 0.5.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "neardup.h"

static uint64_t rng_next(uint64_t *s) /* xorshift64 */
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ---- the header's description, written again plainly ---------------- */

static uint64_t ref_mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void ref_sketch(nd_sketch *out, const uint64_t *h, size_t n)
{
    uint64_t val[256];
    unsigned round[256];
    memset(out, 0, sizeof *out);
    if (n == 0) {
        memset(out->bin, 0xff, sizeof out->bin);
        return;
    }
    for (unsigned i = 0; i < 256; i++) round[i] = ~0u;
    for (unsigned r = 0;; r++) {
        int any_empty = 0;
        for (unsigned i = 0; i < 256; i++) any_empty |= round[i] == ~0u;
        if (!any_empty) break;
        uint64_t best[256];
        int seen[256] = {0};
        for (size_t f = 0; f < n; f++) {
            uint64_t x = r == 0 ? h[f] : ref_mix(h[f] ^ ((uint64_t)r * 0x9e3779b97f4a7c15ull));
            unsigned b = (unsigned)(x % 256);
            if (!seen[b] || x / 256 < best[b]) best[b] = x / 256;
            seen[b] = 1;
        }
        for (unsigned i = 0; i < 256; i++)
            if (round[i] == ~0u && seen[i]) {
                round[i] = r;
                val[i] = r == 0 ? best[i] : ref_mix(best[i] ^ ((uint64_t)r << 58));
            }
    }
    for (unsigned i = 0; i < 256; i++)
        out->bin[i / 2] |= (uint8_t)((val[i] & 0xf) << (4 * (i % 2)));
    for (unsigned b = 0; b < 12; b++) {
        uint8_t bytes[64];
        for (unsigned r = 0; r < 8; r++)
            for (unsigned i = 0; i < 8; i++) bytes[8 * r + i] = (uint8_t)(val[8 * b + r] >> (8 * i));
        out->band[b] = (uint32_t)(nd_feature_hash(bytes, sizeof bytes) >> 32);
    }
}

static uint64_t *random_set(size_t n, uint64_t seed)
{
    uint64_t *h = malloc((n ? n : 1) * sizeof *h);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++) h[i] = rng_next(&seed);
    return h;
}

/* A fingerprint of a sketch for golden values: FNV-1a over its bytes in a
 * fixed order (bins, then band keys big-endian). */
static uint64_t sketch_digest(const nd_sketch *s)
{
    uint64_t x = 0xcbf29ce484222325ull;
    for (unsigned i = 0; i < ND_SKETCH_BYTES; i++) x = (x ^ s->bin[i]) * 0x100000001b3ull;
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++)
        for (int sh = 24; sh >= 0; sh -= 8) x = (x ^ ((s->band[b] >> sh) & 0xff)) * 0x100000001b3ull;
    return x;
}

static void test_matches_description(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 10, 40, 255, 300, 1000, 5000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint64_t *h = random_set(sizes[s], 1000 + s);
        nd_sketch lib, ref;
        assert_int_equal(nd_sketch_of(&lib, h, sizes[s]), ND_OK);
        ref_sketch(&ref, h, sizes[s]);
        if (memcmp(&lib, &ref, sizeof lib) != 0) fail_msg("set of %zu hashes: sketch differs", sizes[s]);
        free(h);
    }
}

static void test_golden(void **state)
{
    (void)state;
    /* Pinned with ND_SKETCH_VERSION 1 (engine/text/sketch.c at its creation,
     * equal to ref_sketch): sets random_set(n, 7). */
    static const struct {
        size_t n;
        uint64_t digest;
    } golden[] = {
        {0, 0x0f5faa2198028e65ull},
        {1, 0xe715d5bd41b59661ull},
        {10, 0xa3bdd8337c2eb949ull},
        {300, 0x5ff1c60801409df6ull},
        {5000, 0x6a347e456ca88684ull},
    };
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        uint64_t *h = random_set(golden[i].n, 7);
        nd_sketch s;
        assert_int_equal(nd_sketch_of(&s, h, golden[i].n), ND_OK);
        uint64_t d = sketch_digest(&s);
        if (d != golden[i].digest)
            fail_msg("set of %zu: digest 0x%016llx, golden 0x%016llx", golden[i].n,
                     (unsigned long long)d, (unsigned long long)golden[i].digest);
        free(h);
    }
    nd_sketch e;
    assert_int_equal(nd_sketch_of(&e, NULL, 0), ND_OK);
    for (unsigned i = 0; i < ND_SKETCH_BYTES; i++) assert_int_equal(e.bin[i], 0xff);
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) assert_int_equal(e.band[b], 0);
}

static void test_order_repeats_reuse(void **state)
{
    (void)state;
    uint64_t *h = random_set(500, 42);
    nd_sketch a, b;
    assert_int_equal(nd_sketch_of(&a, h, 60), ND_OK);
    nd_sketch_builder bl;
    nd_sketch_init(&bl);
    for (int round = 0; round < 3; round++) { /* reuse, with other sets between */
        nd_sketch_begin(&bl);
        for (size_t i = 0; i < 500; i++) nd_sketch_add(&bl, h[(i * 7) % 500]);
        assert_int_equal(nd_sketch_finish(&b, &bl), ND_OK);
        nd_sketch_begin(&bl);
        for (int rep = 0; rep < 50; rep++) /* every hash many times, reversed */
            for (size_t i = 60; i-- > 0;) nd_sketch_add(&bl, h[i]);
        assert_int_equal(nd_sketch_finish(&b, &bl), ND_OK);
        assert_memory_equal(&a, &b, sizeof a);
    }
    nd_sketch_dispose(&bl);
    nd_sketch_dispose(&bl); /* twice is harmless */
    nd_sketch_dispose(NULL);
    assert_true(nd_sketch_resemblance(&a, &b) == 1.0);
    assert_int_equal(nd_sketch_of(NULL, h, 1), ND_EINVAL);
    assert_int_equal(nd_sketch_of(&a, NULL, 1), ND_EINVAL);
    free(h);
}

/* Two sets of n hashes sharing c: resemblance c / (2n - c). */
static double pair_sketches(nd_sketch *x, nd_sketch *y, size_t n, size_t c, uint64_t *seed)
{
    uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_true(a && b);
    for (size_t i = 0; i < n; i++) {
        a[i] = rng_next(seed);
        b[i] = i < c ? a[i] : rng_next(seed);
    }
    assert_int_equal(nd_sketch_of(x, a, n), ND_OK);
    assert_int_equal(nd_sketch_of(y, b, n), ND_OK);
    free(a);
    free(b);
    return (double)c / (double)(2 * n - c);
}

static void test_estimate(void **state)
{
    (void)state;
    /* The sizes of short texts (30, 60 features) and of long ones; J
     * around the thresholds people choose (0.8-0.95). */
    static const size_t sizes[] = {30, 60, 300, 3000};
    static const double js[] = {0.5, 0.8, 0.9, 0.95};
    uint64_t seed = 99;
    for (size_t s = 0; s < 4; s++)
        for (size_t t = 0; t < 4; t++) {
            size_t n = sizes[s], c = (size_t)(2 * js[t] * (double)n / (1 + js[t]) + 0.5);
            double sum = 0, sq = 0, j = 0;
            const int pairs = 200;
            for (int p = 0; p < pairs; p++) {
                nd_sketch x, y;
                j = pair_sketches(&x, &y, n, c, &seed);
                double e = nd_sketch_resemblance(&x, &y);
                assert_true(e >= 0 && e <= 1);
                sum += e - j;
                sq += (e - j) * (e - j);
            }
            double bias = sum / pairs, rms = __builtin_sqrt(sq / pairs);
            /* Measured: rms 0.011-0.033 (the largest at n 3000, J 0.5);
             * the mean of 200 has sd < 0.003, bias within 0.0021. */
            if (bias > 0.012 || bias < -0.012 || rms > 0.045)
                fail_msg("n=%zu J=%.3f: bias %.4f rms %.4f", n, j, bias, rms);
        }
}

static void test_bands(void **state)
{
    (void)state;
    uint64_t seed = 5;
    unsigned hit9 = 0, hit5 = 0;
    const unsigned pairs = 500;
    for (unsigned p = 0; p < pairs; p++) {
        nd_sketch x, y;
        pair_sketches(&x, &y, 100, 95, &seed); /* J = 0.905 */
        unsigned any = 0;
        for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) any |= x.band[b] == y.band[b];
        hit9 += any;
        pair_sketches(&x, &y, 100, 67, &seed); /* J = 0.504 */
        any = 0;
        for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) any |= x.band[b] == y.band[b];
        hit5 += any;
    }
    /* Expected 1 - (1 - J^8)^12: 0.9985 and 0.045. */
    if (hit9 < pairs * 98 / 100) fail_msg("J 0.9: %u of %u pairs share a band", hit9, pairs);
    if (hit5 > pairs * 12 / 100) fail_msg("J 0.5: %u of %u pairs share a band", hit5, pairs);
    /* A short text (60 features) and a copy of J 0.935: expected
     * 1 - (1 - 0.935^8)^12 > 0.9999. */
    unsigned hit = 0;
    for (unsigned p = 0; p < pairs; p++) {
        nd_sketch x, y;
        pair_sketches(&x, &y, 60, 58, &seed);
        unsigned any = 0;
        for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) any |= x.band[b] == y.band[b];
        hit += any;
    }
    if (hit < pairs * 99 / 100) fail_msg("60 features, J 0.935: %u of %u pairs share a band", hit, pairs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_description),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_order_repeats_reuse),
        cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_bands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
