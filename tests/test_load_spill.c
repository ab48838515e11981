/*
 * test_load_spill.c — the bulk loader's merge of fingerprint files
 * (engine/bulk/load_spill.c), checked against a sorted, deduplicated copy of
 * everything written: files that share values, an empty file, files longer
 * than a reader's block (refills), reads of several sizes; a file out of
 * order is corruption, a missing one an I/O error naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "load_spill.h"
#include "neardup.h"
#include "oracle.h"
#include "sort.h"
#include "tmpdir.h"

#define NFILES 6

static oracle_rng rng = {0x9e3779b97f4a7c15ull};
static uint64_t rnd(void) { return oracle_next(&rng); }

/* Sort v[0..n) and drop repeats; returns the new count. */
static size_t sort_unique(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, sort_cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || v[i] != v[m - 1]) v[m++] = v[i];
    return m;
}

static void write_file(const char *path, const uint64_t *v, size_t n)
{
    spill_out *o = NULL;
    assert_int_equal(spill_create(&o, path), ND_OK);
    assert_int_equal(spill_put_u64s(o, v, n), ND_OK);
    assert_int_equal(spill_close(o), ND_OK);
}

/* Everything the merge hands out, read cap values at a time. */
static size_t merge_all(char *const *paths, size_t n, size_t cap, uint64_t *out, size_t max)
{
    spill_u64_merge *m = NULL;
    assert_int_equal(spill_u64_merge_open(&m, paths, n), ND_OK);
    size_t total = 0, got;
    do {
        assert_true(total + cap <= max + cap);
        assert_int_equal(spill_u64_merge_read(m, out + total, cap, &got), ND_OK);
        assert_true(got <= cap);
        total += got;
    } while (got > 0);
    spill_u64_merge_close(m);
    return total;
}

static void test_merge(void **state)
{
    (void)state;
    char dir[64], names[NFILES][128], *paths[NFILES];
    tmpdir_make(dir);
    /* Sizes around the reader's block of 8192 values; file 2 is empty. */
    const size_t sizes[NFILES] = {20000, 8192, 0, 1, 30001, 8193};
    size_t all_n = 0;
    for (size_t f = 0; f < NFILES; f++) all_n += sizes[f];
    uint64_t *all = malloc(all_n * sizeof *all), *got = malloc((all_n + 4096) * sizeof *got);
    assert_non_null(all);
    assert_non_null(got);
    size_t at = 0;
    for (size_t f = 0; f < NFILES; f++) {
        uint64_t *v = all + at;
        for (size_t i = 0; i < sizes[f]; i++) {
            /* Every third value repeats one of an earlier file; the ends
             * of the range appear too. */
            if (at && i % 3 == 0) v[i] = all[rnd() % at];
            else v[i] = rnd();
        }
        if (sizes[f] > 2) {
            v[0] = 0;
            v[1] = UINT64_MAX;
        }
        size_t n = sort_unique(v, sizes[f]);
        snprintf(names[f], sizeof names[f], "%s/t%zu", dir, f);
        paths[f] = names[f];
        write_file(paths[f], v, n);
        at += n;
    }
    size_t want = sort_unique(all, at);
    const size_t caps[] = {1, 7, 4096};
    for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
        size_t n = merge_all(paths, NFILES, caps[c], got, all_n);
        assert_int_equal(n, want);
        assert_memory_equal(got, all, want * sizeof *all);
    }
    /* No file at all, and one empty file: nothing. */
    assert_int_equal(merge_all(paths, 0, 16, got, all_n), 0);
    assert_int_equal(merge_all(paths + 2, 1, 16, got, all_n), 0);
    free(all);
    free(got);
    tmpdir_remove(dir);
}

static void test_errors(void **state)
{
    (void)state;
    char dir[64], a[128], b[128], missing[128];
    tmpdir_make(dir);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(missing, sizeof missing, "%s/missing", dir);
    uint64_t good[3] = {1, 5, 9}, bad[3] = {2, 8, 3};
    write_file(a, good, 3);
    write_file(b, bad, 3);
    char *paths[2] = {a, b};
    spill_u64_merge *m = NULL;
    uint64_t out[8];
    size_t got;
    assert_int_equal(spill_u64_merge_open(&m, paths, 2), ND_OK);
    assert_int_equal(spill_u64_merge_read(m, out, 8, &got), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "out of order"));
    assert_non_null(strstr(nd_errmsg(), b));
    spill_u64_merge_close(m);
    char *none[2] = {a, missing};
    m = NULL;
    assert_int_equal(spill_u64_merge_open(&m, none, 2), ND_EIO);
    assert_null(m);
    assert_non_null(strstr(nd_errmsg(), missing));
    spill_u64_merge_close(NULL);
    tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
