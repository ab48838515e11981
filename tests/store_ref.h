/*
 * store_ref.h — what the storage layer's tests share (test_store.c,
 * test_store_regen.c): a random sequence, a new store, and a reference
 * sorted set every table read is checked against (include it after
 * cmocka.h).
 */
#ifndef ND_TEST_STORE_REF_H
#define ND_TEST_STORE_REF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "storage.h"

/* One sequence through each program's tests, in order. */
static oracle_rng rng = {5};
static inline uint64_t rnd(void) { return oracle_next(&rng); }

/* A new store of ntables tables at path. */
static inline st_store *store_create(const char *path, unsigned ntables)
{
    st_store *s = NULL;
    st_open_opts o = {.create = 1, .ntables = ntables};
    assert_int_equal(st_open(&s, path, &o), ND_OK);
    return s;
}

/* Count the keys of family cf as of snapshot sn (NULL: now). */
static inline size_t family_keys(st_store *s, int cf, const st_snap *sn)
{
    st_iter *it;
    size_t n = 0;
    if (sn) assert_int_equal(st_iter_new_at(&it, s, cf, sn), ND_OK);
    else assert_int_equal(st_iter_new(&it, s, cf, NULL, 1), ND_OK);
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) n++;
    assert_int_equal(st_iter_status(it), ND_OK);
    st_iter_free(it);
    return n;
}

/* Switch s to generation g (every family written) by a write of its own
 * (synced or not), and free g. */
static inline void store_switch(st_store *s, st_regen *g, int sync)
{
    st_batch *b;
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, sync), ND_OK);
    st_batch_free(b);
    st_regen_free(g);
}

/* ---- tables against a reference set ---------------------------------- */

static inline int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct ref {
    uint64_t *v;
    size_t n;
} ref;

static inline int ref_has(const ref *r, uint64_t x)
{
    return bsearch(&x, r->v, r->n, sizeof x, cmp_u64) != NULL;
}

static inline void ref_sort(ref *r) { qsort(r->v, r->n, sizeof *r->v, cmp_u64); }

/* Keep the reference sorted: insert at / remove from the right place
 * (sorting after every change made this test quadratic in time). */
static inline void ref_insert(ref *r, uint64_t x)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->v[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    memmove(r->v + lo + 1, r->v + lo, (r->n - lo) * sizeof *r->v);
    r->v[lo] = x;
    r->n++;
}

static inline void ref_remove_at(ref *r, size_t at)
{
    memmove(r->v + at, r->v + at + 1, (r->n - at - 1) * sizeof *r->v);
    r->n--;
}

static inline int count_cb(const uint64_t *e, size_t n, int is_run, size_t bytes, void *payload)
{
    (void)e;
    (void)is_run;
    (void)bytes;
    *(size_t *)payload += n;
    return 0;
}

static inline void check_ranges(st_store *s, const ref *r)
{
    st_reader *rd;
    st_u64s out = {0};
    assert_int_equal(st_reader_new(&rd, s), ND_OK);
    for (int q = 0; q < 300; q++) {
        uint64_t lo, hi;
        if (q % 3 == 0 && r->n) { /* ranges around stored values */
            uint64_t x = r->v[rnd() % r->n];
            lo = x - (rnd() % 1000);
            hi = x + (rnd() % 1000);
            if (lo > x) lo = 0;
            if (hi < x) hi = UINT64_MAX;
        } else {
            lo = rnd();
            hi = lo + (rnd() >> (rnd() % 64));
            if (hi < lo) hi = UINT64_MAX;
        }
        out.n = 0;
        assert_int_equal(st_table_range(rd, 0, lo, hi, 1, &out), ND_OK);
        size_t expect = 0;
        for (size_t i = 0; i < r->n; i++)
            if (r->v[i] >= lo && r->v[i] <= hi) {
                assert_true(expect < out.n);
                assert_true(out.v[expect] == r->v[i]);
                expect++;
            }
        assert_int_equal(out.n, expect);
    }
    size_t total = 0;
    assert_int_equal(st_table_scan(s, 0, count_cb, &total), ND_OK);
    assert_int_equal(total, r->n);
    st_u64s_dispose(&out);
    st_reader_free(rd);
}

#endif /* ND_TEST_STORE_REF_H */
