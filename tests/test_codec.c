/*
 * test_codec.c — the run codec, both versions (2 written by default, 1
 * still read; the encoder writes 1 when cmp_codec_write_version asks):
 * round trips over edge cases and random runs (whole, and up to a stop),
 * golden encodings (the
 * on-disk formats are frozen), version 2's size against the entropy, and
 * hostile bytes (every truncation and random flips decode to ND_ECORRUPT or
 * to a valid ascending run, never a crash; decoded from exact-size copies
 * so ASan sees any read past the end).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cmp_codec.h"
#include "neardup.h"
#include "golden_runs.h"
#include "golden_runs_v2.h"
#include "oracle.h"

/* One sequence through every test, in order. */
static oracle_rng rng = {99};
static uint64_t rnd(void) { return oracle_next(&rng); }

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

static void roundtrip_one(cmp_codec *c, const uint64_t *v, size_t n, unsigned version)
{
    size_t cap = cmp_run_bound(n), len = 0, got = 0, cnt = 0;
    uint8_t *buf = malloc(cap);
    uint64_t *back = malloc(n * sizeof *back);
    assert_non_null(buf);
    unsigned was = cmp_codec_write_version(version);
    assert_int_equal(cmp_run_encode(c, buf, cap, &len, v, n), ND_OK);
    cmp_codec_write_version(was);
    assert_true(len <= cap);
    assert_int_equal(buf[0] & 0x0f, version);
    /* Exact size: ASan sees a read past the end. */
    uint8_t *exact = malloc(len);
    memcpy(exact, buf, len);
    free(buf);
    buf = exact;
    assert_int_equal(cmp_run_count(&cnt, buf, len), ND_OK);
    assert_int_equal(cnt, n);
    assert_int_equal(cmp_run_decode(c, back, n, &got, v[0], buf, len), ND_OK);
    assert_int_equal(got, n);
    assert_memory_equal(back, v, n * sizeof *v);
    /* The context is optional. */
    assert_int_equal(cmp_run_decode(NULL, back, n, &got, v[0], buf, len), ND_OK);
    assert_memory_equal(back, v, n * sizeof *v);
    if (n > 1) assert_int_equal(cmp_run_decode(c, back, n - 1, &got, v[0], buf, len), ND_ELIMIT);
    /* Up to a stop: at, just below and just above values, and the ends. */
    for (size_t j = 0; j < 8 * 3 + 2; j++) {
        size_t at = j < 24 ? (j / 3) * (n - 1) / 7 : 0;
        uint64_t stop = j == 24 ? 0 : j == 25 ? UINT64_MAX : v[at] + (uint64_t)(j % 3) - 1;
        size_t want = 1;
        while (want < n && v[want] <= stop) want++;
        if (version == 1) want = n;
        memset(back, 0, n * sizeof *back);
        assert_int_equal(cmp_run_decode_upto(c, back, n, &got, v[0], buf, len, stop), ND_OK);
        assert_int_equal(got, want);
        assert_memory_equal(back, v, want * sizeof *v);
    }
    free(buf);
    free(back);
}

/* Both versions round-trip (version 2 is the default). */
static void roundtrip(cmp_codec *c, const uint64_t *v, size_t n)
{
    roundtrip_one(c, v, n, 2);
    roundtrip_one(c, v, n, 1);
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
    /* Version 1 packed and zstd forms (the zstd form needs n >= 64), then
     * version 2 (small and large b). */
    for (int form = 0; form < 5; form++) {
        unsigned version = form < 2 ? 1 : 2;
        size_t n = make_run(v, form == 0 || form == 2 ? 40 : 600, form == 4 ? 1e2 : 1e7);
        size_t cap = cmp_run_bound(n), len;
        uint8_t *buf = malloc(cap), *mut = malloc(cap);
        unsigned was = cmp_codec_write_version(version);
        assert_int_equal(cmp_run_encode(NULL, buf, cap, &len, v, n), ND_OK);
        cmp_codec_write_version(was);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *exact = malloc(cut ? cut : 1);
            memcpy(exact, buf, cut);
            size_t cnt;
            static uint64_t dec[CMP_RUN_MAX];
            int rc = cmp_run_decode(NULL, dec, CMP_RUN_MAX, &cnt, v[0], exact, cut);
            assert_int_equal(rc, ND_ECORRUPT);
            free(exact);
        }
        for (int r = 0; r < 3000; r++) {
            memcpy(mut, buf, len);
            int flips = 1 + (int)(rnd() % 4);
            for (int f = 0; f < flips; f++) mut[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
            check_hostile(mut, len, v[0]);
            check_hostile(mut, len, rnd()); /* any head, up to UINT64_MAX */
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
        if (len) junk[0] = (uint8_t)(r & 1 ? 0x02 : (0x01 | (rnd() & 0x10)));
        if (len > 2 && r % 3 == 0) junk[2] = (uint8_t)(rnd() % 64); /* a valid b */
        check_hostile(junk, len, rnd());
    }
}

/* The formats are frozen: these encodings were produced once and must
 * stay. Version 1's are decoded (databases hold them) and still produced
 * by the encoder when asked for version 1; version 2's are what it writes. */
static void check_golden(const golden_run *runs, size_t count, unsigned version)
{
    unsigned was = cmp_codec_write_version(version);
    for (size_t g = 0; g < count; g++) {
        const golden_run *gr = &runs[g];
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
        assert_int_equal(cmp_run_count(&n, gr->bytes, gr->len), ND_OK);
        assert_int_equal(n, gr->n);
    }
    cmp_codec_write_version(was);
}

static void test_golden(void **state)
{
    (void)state;
    check_golden(golden_runs, sizeof golden_runs / sizeof golden_runs[0], 1);
    check_golden(golden_runs_v2, sizeof golden_runs_v2 / sizeof golden_runs_v2[0], 2);
}

/* ---- version 2 -------------------------------------------------------- */

/* Every run size, the largest run, values 0 and UINT64_MAX, gaps of every
 * width (every Rice parameter 0..63), a few huge gaps among tiny ones (long
 * unary quotients). */
static void test_v2_shapes(void **state)
{
    (void)state;
    cmp_codec *c;
    assert_int_equal(cmp_codec_new(&c), ND_OK);
    uint64_t *v = malloc(CMP_RUN_MAX * sizeof *v);
    for (size_t n = 1; n <= 300; n++) {
        size_t m = make_run(v, n, n % 2 ? 1e6 : 1e15);
        roundtrip_one(c, v, m, 2);
    }
    /* Largest run: consecutive from 0, consecutive up to UINT64_MAX, spread
     * over the whole range from 0 to UINT64_MAX. */
    for (size_t i = 0; i < CMP_RUN_MAX; i++) v[i] = i;
    roundtrip_one(c, v, CMP_RUN_MAX, 2);
    for (size_t i = 0; i < CMP_RUN_MAX; i++) v[i] = UINT64_MAX - (CMP_RUN_MAX - 1) + i;
    roundtrip_one(c, v, CMP_RUN_MAX, 2);
    for (size_t i = 0; i < CMP_RUN_MAX; i++) v[i] = (uint64_t)i << 48;
    v[CMP_RUN_MAX - 1] = UINT64_MAX;
    roundtrip_one(c, v, CMP_RUN_MAX, 2);
    /* Tiny gaps and one of nearly 2^64: a quotient of ~2^17 zero bits. */
    for (size_t i = 0; i + 1 < CMP_RUN_MAX; i++) v[i] = i;
    v[CMP_RUN_MAX - 1] = UINT64_MAX;
    roundtrip_one(c, v, CMP_RUN_MAX, 2);
    v[0] = 0;
    v[1] = UINT64_MAX - 1;
    v[2] = UINT64_MAX;
    roundtrip_one(c, v, 3, 2);
    /* Gaps of every width: Rice parameters 0..63 (b > 56 reads in two). */
    for (unsigned k = 0; k < 64; k++) {
        uint64_t g = k ? (1ull << k) - 1 + (rnd() & ((1ull << (k - 1)) - 1)) : 0;
        size_t n = 0;
        v[n++] = k == 63 ? 0 : rnd() >> 1;
        while (n < 40 && v[n - 1] <= UINT64_MAX - g - 1) {
            v[n] = v[n - 1] + g + 1;
            n++;
        }
        roundtrip_one(c, v, n, 2);
        uint64_t two[] = {0, g + 1}, top[] = {UINT64_MAX - g - 1, UINT64_MAX};
        roundtrip_one(c, two, 2, 2);
        roundtrip_one(c, top, 2, 2);
    }
    /* Half tiny gaps, half huge ones (mean far from either). */
    for (size_t n = 0; n < 1000; n++) v[n] = (n ? v[n - 1] : 0) + 1 + (n % 2 ? rnd() >> 12 : 0);
    roundtrip_one(c, v, 1000, 2);
    free(v);
    cmp_codec_free(c);
}

/* Sorted uniform random values: version 2 costs about the geometric
 * entropy of the gaps, log2(mean) + 1.44 bits each, plus Rice's loss
 * against it: 0.03 bit when 2^b / mean is near 0.66, up to ~0.13 when the
 * mean falls between two powers of two (here: +0.10 at all three means). */
static void test_v2_size(void **state)
{
    (void)state;
    uint64_t *v = malloc(CMP_RUN_MAX * sizeof *v);
    const unsigned shifts[] = {44, 24, 1}; /* values below 2^20, 2^40, 2^63 */
    for (size_t s = 0; s < 3; s++) {
        size_t n = 0;
        for (size_t i = 0; i < CMP_RUN_MAX; i++) v[i] = rnd() >> shifts[s];
        qsort(v, CMP_RUN_MAX, sizeof *v, cmp_u64);
        for (size_t i = 0; i < CMP_RUN_MAX; i++)
            if (i == 0 || v[i] != v[n - 1]) v[n++] = v[i];
        size_t cap = cmp_run_bound(n), len;
        uint8_t *buf = malloc(cap);
        assert_int_equal(cmp_run_encode(NULL, buf, cap, &len, v, n), ND_OK);
        /* Entropy of a geometric gap of mean m: (m+1) log2(m+1) - m log2 m. */
        double m = (double)(v[n - 1] - v[0] - (n - 1)) / (double)(n - 1);
        double bits = 8.0 * (double)len / (double)(n - 1);
        double entropy = log2(m + 1) + m * log1p(1 / m) / log(2);
        if (getenv("ND_TEST_VERBOSE") || bits > entropy + 0.15)
            fprintf(stderr, "mean gap %.3g: %.3f bits per gap, entropy %.3f\n", m, bits, entropy);
        assert_true(bits <= entropy + 0.15);
        free(buf);
    }
    free(v);
}

static int decode_bytes(uint64_t head, const uint8_t *bytes, size_t len, size_t *n)
{
    static uint64_t out[CMP_RUN_MAX];
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, bytes, len);
    int rc = cmp_run_decode(NULL, out, CMP_RUN_MAX, n, head, exact, len);
    free(exact);
    return rc;
}

/* Hand-made bad version 2 runs: each ND_ECORRUPT with a message naming
 * what is wrong. */
static void test_v2_corrupt(void **state)
{
    (void)state;
    size_t n;
    uint8_t b[600];
    /* Absurd Rice parameter. */
    const uint8_t big_b[] = {0x02, 0x02, 64, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(decode_bytes(0, big_b, sizeof big_b, &n), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "Rice parameter 64"));
    const uint8_t huge_b[] = {0x02, 0x02, 0xff, 0x01};
    assert_int_equal(decode_bytes(0, huge_b, sizeof huge_b, &n), ND_ECORRUPT);
    /* No parameter byte; unknown flag bits on version 2. */
    const uint8_t no_b[] = {0x02, 0x02};
    assert_int_equal(decode_bytes(0, no_b, sizeof no_b, &n), ND_ECORRUPT);
    const uint8_t flag[] = {0x12, 0x02, 0x00, 0x02};
    assert_int_equal(decode_bytes(0, flag, sizeof flag, &n), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "format byte 0x12"));
    /* Unary overrun: zeros to the end of the value, short and long. */
    const uint8_t zeros[] = {0x02, 0x02, 0x00, 0x00, 0x00};
    assert_int_equal(decode_bytes(0, zeros, sizeof zeros, &n), ND_ECORRUPT);
    memset(b, 0, sizeof b);
    b[0] = 0x02, b[1] = 0x02, b[2] = 0x00;
    assert_int_equal(decode_bytes(0, b, sizeof b, &n), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "truncated"));
    /* A quotient that would pass 2^64 - 1: 800 zero bits with b = 0 is a
     * fine gap from 0 but not from UINT64_MAX - 10; with b = 60 even 16
     * is too long from 0. */
    b[sizeof b - 1] = 0x01; /* ends the quotient: 596 * 8 zero bits, then a one */
    assert_int_equal(decode_bytes(0, b, sizeof b, &n), ND_OK);
    assert_int_equal(decode_bytes(UINT64_MAX - 10, b, sizeof b, &n), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "2^64"));
    const uint8_t q16[] = {0x02, 0x02, 60, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(decode_bytes(0, q16, sizeof q16, &n), ND_ECORRUPT);
    /* Past the top: a next value after UINT64_MAX, or a gap landing past it. */
    const uint8_t after_top[] = {0x02, 0x03, 0x00, 0x05};
    assert_int_equal(decode_bytes(UINT64_MAX - 1, after_top, sizeof after_top, &n), ND_ECORRUPT);
    const uint8_t top_gap[] = {0x02, 0x02, 0x00, 0x04}; /* gap 2 */
    assert_int_equal(decode_bytes(UINT64_MAX - 3, top_gap, sizeof top_gap, &n), ND_OK);
    assert_int_equal(decode_bytes(UINT64_MAX - 2, top_gap, sizeof top_gap, &n), ND_ECORRUPT);
    /* Trailing bits set, a trailing byte, a missing low-bits tail. */
    const uint8_t tail_bits[] = {0x02, 0x02, 0x00, 0x05};
    assert_int_equal(decode_bytes(0, tail_bits, sizeof tail_bits, &n), ND_ECORRUPT);
    const uint8_t tail_byte[] = {0x02, 0x02, 0x00, 0x01, 0x00};
    assert_int_equal(decode_bytes(0, tail_byte, sizeof tail_byte, &n), ND_ECORRUPT);
    const uint8_t short_low[] = {0x02, 0x02, 40, 0x01, 0xff, 0xff};
    assert_int_equal(decode_bytes(0, short_low, sizeof short_low, &n), ND_ECORRUPT);
    /* n larger than the stream holds; n = 1 with a parameter byte. */
    const uint8_t more_n[] = {0x02, 0x0a, 0x00, 0xff};
    assert_int_equal(decode_bytes(0, more_n, sizeof more_n, &n), ND_ECORRUPT);
    const uint8_t one_b[] = {0x02, 0x01, 0x00};
    assert_int_equal(decode_bytes(0, one_b, sizeof one_b, &n), ND_ECORRUPT);
    /* The good ones these were made from. */
    const uint8_t good[] = {0x02, 0x02, 0x00, 0x01};
    assert_int_equal(decode_bytes(0, good, sizeof good, &n), ND_OK);
    assert_int_equal(n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_random_runs),
        cmocka_unit_test(test_rejects_bad_input),
        cmocka_unit_test(test_truncation_and_flips),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_v2_shapes),
        cmocka_unit_test(test_v2_size),
        cmocka_unit_test(test_v2_corrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
