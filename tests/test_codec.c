/*
 * test_codec.c — the run codec: round trips over edge cases and random
 * runs, golden encodings (the on-disk format is frozen), and hostile bytes
 * (every truncation and random flips decode to ND_ECORRUPT or to a valid
 * ascending run, never a crash).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cmp_codec.h"
#include "neardup.h"
#include "golden_runs.h"

static uint64_t rng = 99;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* n distinct sorted values spaced like a sorted random set of N. */
static size_t make_run(uint64_t *v, size_t n, double N)
{
    double gap = 18446744073709551615.0 / N;
    uint64_t x = rnd();
    for (size_t i = 0; i < n; i++) {
        v[i] = x;
        uint64_t step = (uint64_t)(gap * ((double)(rnd() % 1000) / 500.0)) + 1;
        if (x > UINT64_MAX - step) return i + 1;
        x += step;
    }
    return n;
}

static void roundtrip(cmp_codec *c, const uint64_t *v, size_t n)
{
    size_t cap = cmp_run_bound(n), len = 0, got = 0, cnt = 0;
    uint8_t *buf = malloc(cap);
    uint64_t *back = malloc(n * sizeof *back);
    assert_non_null(buf);
    assert_int_equal(cmp_run_encode(c, buf, cap, &len, v, n), ND_OK);
    assert_true(len <= cap);
    assert_int_equal(cmp_run_count(&cnt, buf, len), ND_OK);
    assert_int_equal(cnt, n);
    assert_int_equal(cmp_run_decode(c, back, n, &got, v[0], buf, len), ND_OK);
    assert_int_equal(got, n);
    assert_memory_equal(back, v, n * sizeof *v);
    /* The context is optional. */
    assert_int_equal(cmp_run_decode(NULL, back, n, &got, v[0], buf, len), ND_OK);
    assert_memory_equal(back, v, n * sizeof *v);
    if (n > 1) assert_int_equal(cmp_run_decode(c, back, n - 1, &got, v[0], buf, len), ND_ELIMIT);
    free(buf);
    free(back);
}

static void test_edge_cases(void **state)
{
    (void)state;
    cmp_codec *c;
    assert_int_equal(cmp_codec_new(&c), ND_OK);
    uint64_t one[] = {42};
    roundtrip(c, one, 1);
    uint64_t two[] = {0, UINT64_MAX};
    roundtrip(c, two, 2);
    uint64_t ext[] = {0, 1, 2, 1ull << 63, UINT64_MAX - 1, UINT64_MAX};
    roundtrip(c, ext, 6);
    uint64_t low[300];
    for (size_t i = 0; i < 300; i++) low[i] = 0xabcdef0000000000ull + i; /* equal prefixes */
    roundtrip(c, low, 300);
    for (size_t i = 0; i < 300; i++) low[i] = (uint64_t)i << 56; /* huge gaps */
    roundtrip(c, low, 256);
    cmp_codec_free(c);
}

static void test_random_runs(void **state)
{
    (void)state;
    cmp_codec *c;
    assert_int_equal(cmp_codec_new(&c), ND_OK);
    uint64_t *v = malloc(CMP_RUN_MAX * sizeof *v);
    const size_t sizes[] = {2, 3, 17, 63, 64, 65, 128, 129, 512, 1000, 4096, CMP_RUN_MAX};
    const double dens[] = {1e3, 1e6, 1e8, 1e12, 1e18};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t d = 0; d < sizeof dens / sizeof dens[0]; d++) {
            size_t n = make_run(v, sizes[s], dens[d]);
            roundtrip(c, v, n);
        }
    /* Uniform random sets. */
    for (int r = 0; r < 50; r++) {
        size_t n = 1 + rnd() % 700, m = 0;
        for (size_t i = 0; i < n; i++) v[i] = rnd();
        qsort(v, n, sizeof *v, cmp_u64);
        for (size_t i = 0; i < n; i++)
            if (i == 0 || v[i] != v[m - 1]) v[m++] = v[i];
        roundtrip(c, v, m);
    }
    free(v);
    cmp_codec_free(c);
}

static void test_rejects_bad_input(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t len;
    uint64_t dup[] = {5, 5}, desc[] = {9, 3};
    assert_int_equal(cmp_run_encode(NULL, buf, sizeof buf, &len, dup, 2), ND_EINVAL);
    assert_int_equal(cmp_run_encode(NULL, buf, sizeof buf, &len, desc, 2), ND_EINVAL);
    assert_int_equal(cmp_run_encode(NULL, buf, sizeof buf, &len, dup, 0), ND_EINVAL);
    assert_int_equal(cmp_run_encode(NULL, buf, 3, &len, desc, 2), ND_ELIMIT);
}

/* Decode must return ND_ECORRUPT or an ascending run: never crash. */
static void check_hostile(const uint8_t *bytes, size_t len, uint64_t head)
{
    static uint64_t out[CMP_RUN_MAX];
    size_t n = 0;
    int rc = cmp_run_decode(NULL, out, CMP_RUN_MAX, &n, head, bytes, len);
    if (rc == ND_OK) {
        assert_true(n >= 1 && out[0] == head);
        for (size_t i = 1; i < n; i++) assert_true(out[i] > out[i - 1]);
    } else {
        assert_int_equal(rc, ND_ECORRUPT);
    }
}

static void test_truncation_and_flips(void **state)
{
    (void)state;
    uint64_t v[600];
    for (int form = 0; form < 2; form++) {
        size_t n = make_run(v, form ? 600 : 40, 1e7); /* zstd form needs n >= 64 */
        size_t cap = cmp_run_bound(n), len;
        uint8_t *buf = malloc(cap), *mut = malloc(cap);
        assert_int_equal(cmp_run_encode(NULL, buf, cap, &len, v, n), ND_OK);
        for (size_t cut = 0; cut < len; cut++) {
            memcpy(mut, buf, cut);
            size_t cnt;
            int rc = cmp_run_decode(NULL, (uint64_t[CMP_RUN_MAX]){0}, CMP_RUN_MAX, &cnt, v[0], mut, cut);
            assert_int_equal(rc, ND_ECORRUPT);
        }
        for (int r = 0; r < 3000; r++) {
            memcpy(mut, buf, len);
            int flips = 1 + (int)(rnd() % 4);
            for (int f = 0; f < flips; f++) mut[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
            check_hostile(mut, len, v[0]);
        }
        /* Trailing garbage is rejected. */
        memcpy(mut, buf, len);
        mut[len] = 0;
        size_t cnt;
        static uint64_t out[CMP_RUN_MAX];
        assert_int_equal(cmp_run_decode(NULL, out, CMP_RUN_MAX, &cnt, v[0], mut, len + 1), ND_ECORRUPT);
        free(buf);
        free(mut);
    }
    for (int r = 0; r < 5000; r++) {
        uint8_t junk[64];
        size_t len = rnd() % sizeof junk;
        for (size_t i = 0; i < len; i++) junk[i] = (uint8_t)rnd();
        if (len) junk[0] = (uint8_t)(0x01 | (rnd() & 0x10));
        check_hostile(junk, len, rnd());
    }
}

/* The format is frozen: these encodings were produced once and must stay. */
static void test_golden(void **state)
{
    (void)state;
    for (size_t g = 0; g < sizeof golden_runs / sizeof golden_runs[0]; g++) {
        const golden_run *gr = &golden_runs[g];
        uint8_t buf[4096];
        size_t len;
        uint64_t back[256];
        size_t n;
        assert_int_equal(cmp_run_encode(NULL, buf, sizeof buf, &len, gr->vals, gr->n), ND_OK);
        assert_int_equal(len, gr->len);
        assert_memory_equal(buf, gr->bytes, len);
        assert_int_equal(cmp_run_decode(NULL, back, 256, &n, gr->vals[0], gr->bytes, gr->len), ND_OK);
        assert_int_equal(n, gr->n);
        assert_memory_equal(back, gr->vals, n * sizeof back[0]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_random_runs),
        cmocka_unit_test(test_rejects_bad_input),
        cmocka_unit_test(test_truncation_and_flips),
        cmocka_unit_test(test_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
