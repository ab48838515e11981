/*
 * test_join.c — the self-join (nd_selfjoin, nd_selfjoin_stream): every
 * pair within k exactly once, against a brute-force popcount scan of all
 * pairs, on random fingerprints with planted neighbours at distances
 * 0 .. k + 2; the same pairs in the same order for every memory budget
 * (tiny ones force hundreds of partitions a table); a batch of equal
 * fingerprints larger than the budget; errors and stop values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <neardup.h>

#include "oracle.h"

static oracle_rng rng; /* reseeded per test */
static uint64_t rnd(void)
{
    return oracle_next(&rng);
}

typedef struct tpair {
    uint32_t x, y, d;
} tpair;

typedef struct pairs {
    tpair *p;
    size_t n, cap;
    size_t stop_at; /* return 7 at this pair (0: never) */
} pairs;

static int collect(size_t x, size_t y, unsigned d, void *payload)
{
    pairs *ps = payload;
    assert_true(x < y);
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? 2 * ps->cap : 1024;
        ps->p = realloc(ps->p, ps->cap * sizeof *ps->p);
        assert_non_null(ps->p);
    }
    ps->p[ps->n++] = (tpair){(uint32_t)x, (uint32_t)y, d};
    return ps->stop_at && ps->n == ps->stop_at ? 7 : 0;
}

typedef struct src {
    const uint64_t *fp;
    size_t n, next, calls, fail_at; /* fail_at: return -99 at this call (0: never) */
} src;

static int read_src(uint64_t *out, size_t start, size_t count, void *payload)
{
    src *s = payload;
    if (start == 0) s->next = 0;
    assert_int_equal(start, s->next); /* passes read in order */
    assert_true(count > 0 && start + count <= s->n);
    s->next = start + count;
    if (++s->calls == s->fail_at) return -99;
    memcpy(out, s->fp + start, count * sizeof *out);
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const tpair *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

/* n fingerprints: a third random, the rest planted at 0 .. k + 2 bits
 * from an earlier one. */
static uint64_t *planted(size_t n, unsigned k)
{
    uint64_t *fp = malloc(n * sizeof *fp);
    assert_non_null(fp);
    for (size_t i = 0; i < n; i++)
        fp[i] = i < 3 || rnd() % 3 == 0 ? rnd() : oracle_flip(&rng, fp[rnd() % i], (unsigned)(rnd() % (k + 3)));
    return fp;
}

static void brute(pairs *out, const uint64_t *fp, size_t n, unsigned k)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            unsigned d = (unsigned)__builtin_popcountll(fp[i] ^ fp[j]);
            if (d <= k) collect(i, j, d, out);
        }
}

static void check_budgets(const uint64_t *fp, size_t n, unsigned k)
{
    pairs want = {0}, first = {0};
    brute(&want, fp, n, k);
    assert_int_equal(nd_selfjoin(fp, n, k, collect, &first), ND_OK);
    static const size_t budgets[] = {0, 32, 100, 4096, 65536, (size_t)1 << 30};
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
        pairs got = {0};
        src s = {fp, n, 0, 0, 0};
        assert_int_equal(nd_selfjoin_stream(n, k, budgets[b], read_src, &s, collect, &got), ND_OK);
        /* the same sequence as the in-memory join */
        assert_int_equal(got.n, first.n);
        assert_memory_equal(got.p, first.p, got.n * sizeof *got.p);
        /* the brute-force set, each pair once */
        qsort(got.p, got.n, sizeof *got.p, cmp_pair);
        assert_int_equal(got.n, want.n);
        assert_memory_equal(got.p, want.p, got.n * sizeof *got.p);
        free(got.p);
    }
    free(want.p);
    free(first.p);
}

static void test_planted(void **state)
{
    (void)state;
    static const unsigned ks[] = {0, 1, 3, 6, 8};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        rng.s = 1000 + ks[i];
        size_t n = 5000;
        uint64_t *fp = planted(n, ks[i]);
        check_budgets(fp, n, ks[i]);
        free(fp);
    }
}

/* Many equal fingerprints share every prefix: their partition is larger
 * than any small budget and is sorted whole. */
static void test_equal_run(void **state)
{
    (void)state;
    rng.s = 77;
    size_t n = 1500;
    uint64_t *fp = planted(n, 3);
    for (size_t i = 0; i < n; i += 3) fp[i] = 0x0123456789abcdefull;
    check_budgets(fp, n, 3);
    free(fp);
}

static void test_small(void **state)
{
    (void)state;
    uint64_t fp[3] = {5, 4, ~0ull};
    for (size_t n = 0; n <= 3; n++) {
        pairs got = {0};
        src s = {fp, n, 0, 0, 0};
        assert_int_equal(nd_selfjoin_stream(n, 3, 32, read_src, &s, collect, &got), ND_OK);
        assert_int_equal(got.n, n >= 2 ? 1 : 0);
        free(got.p);
    }
}

static void test_errors(void **state)
{
    (void)state;
    rng.s = 5;
    size_t n = 3000;
    uint64_t *fp = planted(n, 3);
    pairs got = {0};
    src s = {fp, n, 0, 0, 0};
    assert_int_equal(nd_selfjoin_stream(n, ND_MAX_PLAN_K + 1, 0, read_src, &s, collect, &got),
                     ND_EINVAL);
    assert_int_equal(nd_selfjoin_stream(n, 3, 0, NULL, &s, collect, &got), ND_EINVAL);
    assert_int_equal(nd_selfjoin_stream(n, 3, 0, read_src, &s, NULL, &got), ND_EINVAL);
    assert_true(strlen(nd_errmsg()) > 0);
    /* the source's failure, in the first and in a later pass: a negative
     * value of a callback is ND_ESTOPPED, never mistaken for the library's */
    for (size_t at = 1; at <= 40; at += 13) {
        src f = {fp, n, 0, 0, at};
        assert_int_equal(nd_selfjoin_stream(n, 3, 4096, read_src, &f, collect, &got),
                         ND_ESTOPPED);
    }
    /* the callback's stop value */
    got.n = 0;
    got.stop_at = 3;
    assert_int_equal(nd_selfjoin_stream(n, 3, 4096, read_src, &s, collect, &got), 7);
    assert_int_equal(got.n, 3);
    free(got.p);
    free(fp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted),
        cmocka_unit_test(test_equal_run),
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
