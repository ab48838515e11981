/*
 * db_oracle.h — the fingerprint-only store against the brute-force oracle,
 * for the tests of the database (test_db.c, test_db_open.c,
 * test_db_format.c; test_batch.c opens its stores so): keys "d<index>",
 * a store opened with a plan, and every query of a list at k..k+2 (and
 * random ones) compared with a popcount scan (include it after cmocka.h).
 */
#ifndef ND_TEST_DB_ORACLE_H
#define ND_TEST_DB_ORACLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neardup.h"
#include "oracle.h"

/* Keys are "d<index>" so the oracle's indexes map to keys. */
static inline void key_of(char *buf, size_t i) { sprintf(buf, "d%zu", i); }

static inline nd_db *open_db(const char *path, unsigned k, unsigned tables, unsigned run_size)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.k = k;
    o.has_k = 1;
    o.tables = tables;
    o.run_size = run_size;
    o.expected_docs = 100000;
    int rc = nd_db_open(&db, path, &o);
    if (rc) fprintf(stderr, "open: %s\n", nd_errmsg());
    assert_int_equal(rc, ND_OK);
    return db;
}

static inline int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The documents nd_db_query returns equal the oracle's, with distances. */
static inline void check_query(nd_db *db, const uint64_t *fps, size_t n, uint64_t q,
                               unsigned k, size_t *scratch, nd_results *res)
{
    size_t m = oracle_scan(fps, n, q, k, scratch);
    assert_int_equal(nd_db_query(res, db, q, k, NULL), ND_OK);
    if (nd_results_count(res) != m)
        fprintf(stderr, "k=%u: got %zu, oracle %zu\n", k, nd_results_count(res), m);
    assert_int_equal(nd_results_count(res), m);
    char **want = malloc((m + 1) * sizeof *want), **got = malloc((m + 1) * sizeof *got);
    for (size_t i = 0; i < m; i++) {
        want[i] = malloc(32);
        key_of(want[i], scratch[i]);
        const nd_match *mt = nd_results_get(res, i);
        got[i] = (char *)mt->key;
        assert_int_equal(mt->dist, nd_hamming(mt->fp, q));
        assert_true(mt->dist <= k);
        if (i) assert_true(nd_results_get(res, i - 1)->dist <= mt->dist);
    }
    qsort(want, m, sizeof *want, cmp_str);
    qsort(got, m, sizeof *got, cmp_str);
    for (size_t i = 0; i < m; i++) {
        assert_string_equal(want[i], got[i]);
        free(want[i]);
    }
    free(want);
    free(got);
}

static inline void check_all(nd_db *db, const uint64_t *fps, size_t n, const uint64_t *qs,
                             size_t nq, unsigned k)
{
    size_t *scratch = malloc(n * sizeof *scratch);
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    for (size_t q = 0; q < nq; q++)
        for (unsigned kq = 0; kq <= k + 2; kq++) check_query(db, fps, n, qs[q], kq, scratch, res);
    /* Random queries too (mostly empty answers). */
    oracle_rng r = {k * 7919u + 1};
    for (int i = 0; i < 10; i++) check_query(db, fps, n, oracle_next(&r), k, scratch, res);
    nd_results_free(res);
    free(scratch);
}

#endif /* ND_TEST_DB_ORACLE_H */
