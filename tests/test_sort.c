/*
 * test_sort.c — the engine's radix sorts (engine/index/sort.c) against qsort:
 * random keys, keys whose bytes are all alike in some positions (passes
 * skipped, an odd count of passes moved), equal keys (sort_items keeps
 * their order), the smallest sizes, arrays below and above the size that
 * splits by the top bits first, keys already grouped by their top bits,
 * and sort_u64_unique.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "oracle.h"
#include "sort.h"

static oracle_rng rng = {0x2545f4914f6cdd1dull};
static uint64_t rnd(void) { return oracle_next(&rng); }

static int cmp_item(const void *a, const void *b)
{
    const sort_item *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx); /* stable: input order */
}

/* Keys of n random values kept to the bits of mask. */
static void fill(uint64_t *a, size_t n, uint64_t mask)
{
    for (size_t i = 0; i < n; i++) a[i] = rnd() & mask;
}

static void check_u64(size_t n, uint64_t mask)
{
    uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b),
             *tmp = malloc((n + 1) * sizeof *tmp);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(tmp);
    fill(a, n, mask);
    memcpy(b, a, n * sizeof *a);
    sort_u64(a, tmp, n);
    qsort(b, n, sizeof *b, sort_cmp_u64);
    assert_memory_equal(a, b, n * sizeof *a);
    /* Unique: the distinct values, ascending. */
    for (size_t i = 0; i < n; i++) a[i] = b[n - 1 - i]; /* descending input */
    size_t m = sort_u64_unique(a, tmp, n), want = 0;
    for (size_t i = 0; i < n; i++)
        if (want == 0 || b[i] != b[want - 1]) b[want++] = b[i];
    assert_int_equal(m, want);
    assert_memory_equal(a, b, m * sizeof *a);
    free(a);
    free(b);
    free(tmp);
}

static void test_u64(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 2, 3, 255, 256, 1000, 100003};
    /* Every byte random; one byte alike everywhere (7 passes: the result
     * comes back from scratch); only the low 16 bits (6 passes skipped);
     * a few values (many repeats); all keys equal. */
    const uint64_t masks[] = {~0ull, ~0xff00ull, 0xffffull, 0x3ull, 0};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t m = 0; m < sizeof masks / sizeof *masks; m++) check_u64(sizes[s], masks[m]);
}

/* Sort a[0..n) with sort_items and with qsort (ties by input order):
 * the same keys in the same order. */
static void check_items(sort_item *a, size_t n)
{
    sort_item *b = malloc(n * sizeof *b), *tmp = malloc(n * sizeof *tmp);
    assert_non_null(b);
    assert_non_null(tmp);
    memcpy(b, a, n * sizeof *a);
    sort_items(a, tmp, n);
    qsort(b, n, sizeof *b, cmp_item);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].key, b[i].key);
        assert_int_equal(a[i].idx, b[i].idx);
    }
    free(b);
    free(tmp);
}

static void test_items_stable(void **state)
{
    (void)state;
    const size_t n = 150000;
    sort_item *a = malloc(n * sizeof *a);
    assert_non_null(a);
    const uint64_t masks[] = {~0ull, 0xf0f0000000000000ull, 0x7ull};
    for (size_t m = 0; m < sizeof masks / sizeof *masks; m++) {
        for (size_t i = 0; i < n; i++) a[i] = (sort_item){rnd() & masks[m], (uint32_t)i};
        check_items(a, n);
    }
    free(a);
}

/* Keys whose top bits already rise through the array (the sort skips its
 * split, as for a table whose permutation keeps the top block), the bits
 * below at random; items with repeats, to see they stay in order. */
static void test_grouped(void **state)
{
    (void)state;
    const size_t n = 200000;
    uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *tmp = malloc(n * sizeof *tmp);
    sort_item *ia = malloc(n * sizeof *ia);
    assert_true(a && b && tmp && ia);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint64_t)(i * 2048 / n) << 53 | rnd() >> 11;
        ia[i] = (sort_item){(a[i] & ~0xffffull) | (rnd() & 0x3), (uint32_t)i};
    }
    memcpy(b, a, n * sizeof *a);
    sort_u64(a, tmp, n);
    qsort(b, n, sizeof *b, sort_cmp_u64);
    assert_memory_equal(a, b, n * sizeof *a);
    check_items(ia, n);
    free(a);
    free(b);
    free(tmp);
    free(ia);
}

/* ---- sort_strings ------------------------------------------------------ */

typedef struct str_ref {
    const char *p;
    size_t len;
} str_ref;

static int cmp_str_ref(const void *a, const void *b)
{
    const str_ref *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* n distinct strings after a skipped head of `skip` bytes, of the shape
 * `shape` picks, sorted by sort_strings and by qsort: the same order. */
static void check_strings(size_t n, size_t skip, int shape)
{
    char *base = malloc(n * 64);
    uint64_t *off = malloc((n + 1) * sizeof *off);
    uint32_t *order = malloc(n * sizeof *order);
    sort_item *items = malloc(n * sizeof *items), *tmp = malloc(n * sizeof *tmp);
    str_ref *want = malloc(n * sizeof *want);
    assert_true(base && off && order && items && tmp && want);
    size_t at = 0;
    off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        char s[64];
        size_t len;
        switch (shape) {
        case 0: /* a URL with a long common prefix, numbered */
            len = (size_t)sprintf(s, "https://example.com/page/%09zu", (size_t)(rnd() % 1000000000));
            break;
        case 1: /* few letters, any length up to 40: prefixes of one another, many ties */
            len = (size_t)(rnd() % 41);
            for (size_t j = 0; j < len; j++) s[j] = (char)('a' + rnd() % 2);
            break;
        default: /* bytes 0 and 255 and lengths near the 7-byte steps */
            len = 6 + (size_t)(rnd() % 17);
            for (size_t j = 0; j < len; j++) s[j] = (char)(rnd() % 3 ? 0 : 0xff);
            break;
        }
        memset(base + at, 'h', skip);
        memcpy(base + at + skip, s, len);
        at += skip + len;
        off[i + 1] = at;
    }
    /* distinct: drop repeats (document keys are) by sorting and rebuilding */
    for (size_t i = 0; i < n; i++)
        want[i] = (str_ref){base + off[i] + skip, (size_t)(off[i + 1] - off[i] - skip)};
    qsort(want, n, sizeof *want, cmp_str_ref);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || cmp_str_ref(&want[i], &want[m - 1]) != 0) want[m++] = want[i];
    char *uniq = malloc(n * 64);
    assert_non_null(uniq);
    at = 0;
    for (size_t i = 0; i < m; i++) { /* in a shuffled order */
        size_t j = i + (size_t)(rnd() % (m - i));
        str_ref x = want[j];
        want[j] = want[i];
        want[i] = x;
        memset(uniq + at, 'h', skip);
        memcpy(uniq + at + skip, x.p, x.len);
        at += skip + x.len;
        off[i + 1] = at;
    }
    sort_strings(uniq, off, skip, m, order, items, tmp);
    for (size_t i = 0; i < m; i++)
        want[i] = (str_ref){uniq + off[i] + skip, (size_t)(off[i + 1] - off[i] - skip)};
    qsort(want, m, sizeof *want, cmp_str_ref);
    for (size_t i = 0; i < m; i++) {
        str_ref got = {uniq + off[order[i]] + skip, (size_t)(off[order[i] + 1] - off[order[i]] - skip)};
        assert_int_equal(cmp_str_ref(&got, &want[i]), 0);
    }
    free(base);
    free(uniq);
    free(off);
    free(order);
    free(items);
    free(tmp);
    free(want);
}

static void test_strings(void **state)
{
    (void)state;
    for (int shape = 0; shape < 3; shape++) {
        check_strings(1, 0, shape);
        check_strings(12, 8, shape);
        check_strings(3000, 0, shape);
        check_strings(100000, 8, shape);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_items_stable),
        cmocka_unit_test(test_grouped),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
