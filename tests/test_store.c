/*
 * test_store.c — the storage layer: open/create rules, batches that read
 * their own writes, and table operations (insert, remove, fold, range,
 * scan) against a reference sorted set, also across
 * memtables and files of either key space; range reads
 * racing inserts, removals and folds from other threads.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_fixture.h"
#include "oracle.h"
#include "storage.h"
#include "tmpdir.h"

/* One sequence through every test, in order. */
static oracle_rng rng = {5};
static uint64_t rnd(void) { return oracle_next(&rng); }

/* A new store of ntables tables at path. */
static st_store *store_create(const char *path, unsigned ntables)
{
    st_store *s = NULL;
    st_open_opts o = {.create = 1, .ntables = ntables};
    assert_int_equal(st_open(&s, path, &o), ND_OK);
    return s;
}

static void test_open_rules(void **state)
{
    db_fixture *fx = *state;
    st_store *s = NULL, *s2 = NULL;
    st_open_opts o = {.create = 0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_ENOTFOUND);
    o = (st_open_opts){.create = 1, .ntables = 5};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_ntables(s), 5);
    /* A second writer is refused; a read-only reader is not. */
    st_open_opts o2 = {.create = 0};
    assert_int_equal(st_open(&s2, fx->path, &o2), ND_EBUSY);
    st_open_opts ro = {.readonly = 1};
    assert_int_equal(st_open(&s2, fx->path, &ro), ND_OK);
    assert_int_equal(st_ntables(s2), 5);
    st_close(s2);
    st_close(s);
    o = (st_open_opts){.create = 1, .excl = 1, .ntables = 5};
    assert_int_equal(st_open(&s, fx->path, &o), ND_EEXIST);
    o = (st_open_opts){.create = 0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_ntables(s), 5);
    st_close(s);
    /* A regular file is not a database, and none is created over it. */
    char other[128];
    snprintf(other, sizeof other, "%s/file", fx->dir);
    FILE *f = fopen(other, "w");
    fputs("x", f);
    fclose(f);
    o = (st_open_opts){.create = 1, .ntables = 2};
    assert_int_equal(st_open(&s, other, &o), ND_EEXIST);
    assert_non_null(strstr(nd_errmsg(), other));
    o = (st_open_opts){.create = 0};
    assert_int_equal(st_open(&s, other, &o), ND_EINVAL);
    /* An empty directory without CURRENT is not found unless created. */
    snprintf(other, sizeof other, "%s/empty", fx->dir);
    mkdir(other, 0755);
    o = (st_open_opts){.create = 0};
    assert_int_equal(st_open(&s, other, &o), ND_ENOTFOUND);
}

static void test_batch_reads_own_writes(void **state)
{
    db_fixture *fx = *state;
    st_store *s;
    st_batch *b;
    char *v;
    size_t len;
    s = store_create(fx->path, 2);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    assert_int_equal(st_batch_put(b, ST_CF_DOCS, "k", 1, "v1", 2), ND_OK);
    assert_int_equal(st_batch_put(b, ST_CF_REV, "r", 1, "", 0), ND_OK);
    assert_int_equal(st_batch_get(s, b, ST_CF_DOCS, "k", 1, &v, &len), ND_OK);
    assert_int_equal(len, 2);
    assert_memory_equal(v, "v1", 2);
    free(v);
    assert_int_equal(st_get(s, ST_CF_DOCS, "k", 1, &v, &len), ND_ENOTFOUND);
    assert_int_equal(st_write(s, b, 1), ND_OK);
    assert_int_equal(st_get(s, ST_CF_DOCS, "k", 1, &v, &len), ND_OK);
    free(v);
    assert_int_equal(st_get(s, ST_CF_REV, "r", 1, &v, &len), ND_OK);
    assert_int_equal(len, 0);
    free(v);
    st_batch_free(b);
    st_close(s);
}

/* ---- tables against a reference set ---------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct ref {
    uint64_t *v;
    size_t n;
} ref;

static int ref_has(const ref *r, uint64_t x)
{
    return bsearch(&x, r->v, r->n, sizeof x, cmp_u64) != NULL;
}

static void ref_sort(ref *r) { qsort(r->v, r->n, sizeof *r->v, cmp_u64); }

/* Keep the reference sorted: insert at / remove from the right place
 * (sorting after every change made this test quadratic in time). */
static void ref_insert(ref *r, uint64_t x)
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

static void ref_remove_at(ref *r, size_t at)
{
    memmove(r->v + at, r->v + at + 1, (r->n - at - 1) * sizeof *r->v);
    r->n--;
}

static int count_cb(const uint64_t *e, size_t n, int is_run, size_t bytes, void *payload)
{
    (void)e;
    (void)is_run;
    (void)bytes;
    *(size_t *)payload += n;
    return 0;
}

static void check_ranges(st_store *s, const ref *r)
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

static void test_table_ops(void **state)
{
    db_fixture *fx = *state;
    st_store *s;
    st_batch *b;
    const unsigned run_sizes[] = {4, 8, 128};
    for (size_t rs = 0; rs < 3; rs++) {
        s = store_create(fx->path, 1);
        assert_int_equal(st_batch_new(&b, s), ND_OK);
        ref r = {malloc(20000 * sizeof(uint64_t)), 0};
        /* Clustered values so several land in one run. */
        for (int round = 0; round < 6; round++) {
            st_batch_clear(b);
            for (int i = 0; i < 1500; i++) {
                uint64_t x = (rnd() & 0xffff000000000000ull) | (rnd() & 0xffff);
                if (ref_has(&r, x)) continue;
                assert_int_equal(st_table_insert(s, b, 0, x), ND_OK);
                ref_insert(&r, x);
            }
            assert_int_equal(st_write(s, b, 0), ND_OK);
            check_ranges(s, &r);
            /* Remove some: heads, tails, middles, fresh or folded. */
            st_batch_clear(b);
            for (int i = 0; i < 200 && r.n; i++) {
                size_t at = rnd() % r.n;
                assert_int_equal(st_table_remove(s, b, 0, r.v[at]), ND_OK);
                assert_int_equal(st_table_remove(s, b, 0, r.v[at]), ND_ENOTFOUND);
                ref_remove_at(&r, at);
            }
            assert_int_equal(st_write(s, b, 0), ND_OK);
            check_ranges(s, &r);
            uint64_t folded = 0;
            assert_int_equal(st_table_fold(s, 0, run_sizes[rs], 0, NULL, NULL, NULL, &folded), ND_OK);
            check_ranges(s, &r);
        }
        free(r.v);
        st_batch_free(b);
        st_close(s);
        tmpdir_remove(fx->path); /* the next size starts empty */
    }
}

/* A bulk of fresh entries larger than one fold step. */
static void test_bulk_fold(void **state)
{
    db_fixture *fx = *state;
    st_store *s;
    st_batch *b;
    s = store_create(fx->path, 1);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    ref r = {malloc(200000 * sizeof(uint64_t)), 0};
    for (int i = 0; i < 150000; i++) {
        uint64_t x = rnd();
        assert_int_equal(st_table_insert(s, b, 0, x), ND_OK);
        r.v[r.n++] = x;
    }
    assert_int_equal(st_write(s, b, 0), ND_OK);
    ref_sort(&r);
    uint64_t folded;
    assert_int_equal(st_table_fold(s, 0, 128, 0, NULL, NULL, NULL, &folded), ND_OK);
    assert_int_equal(folded, 150000);
    check_ranges(s, &r);
    /* A second fold finds nothing to do. */
    assert_int_equal(st_table_fold(s, 0, 128, 0, NULL, NULL, NULL, &folded), ND_OK);
    assert_int_equal(folded, 0);
    free(r.v);
    st_batch_free(b);
    st_close(s);
}

/* Probes read the run space through the tables' prefix filters (a file or
 * memtable without runs is skipped): runs and fresh entries spread over
 * the memtable, files of fresh entries alone, files of runs and of a
 * fold's deletions, and files from before a reopen must all be found. */
static void insert_fresh(st_store *s, st_batch *b, ref *r, int n)
{
    st_batch_clear(b);
    for (int i = 0; i < n; i++) {
        uint64_t x = rnd();
        if (ref_has(r, x)) continue;
        assert_int_equal(st_table_insert(s, b, 0, x), ND_OK);
        ref_insert(r, x);
    }
    assert_int_equal(st_write(s, b, 0), ND_OK);
}

static void check_runs_only(st_store *s, const ref *r, size_t expect)
{
    st_reader *rd;
    st_u64s out = {0};
    assert_int_equal(st_reader_new(&rd, s), ND_OK);
    assert_int_equal(st_table_range(rd, 0, 0, UINT64_MAX, 0, &out), ND_OK);
    assert_int_equal(out.n, expect);
    for (size_t i = 0; i < out.n; i++) assert_true(ref_has(r, out.v[i]));
    st_u64s_dispose(&out);
    st_reader_free(rd);
}

/* Fresh keys of entries the mirror holds already, written through an
 * ingested file: beside fresh keys in the memtable and runs, twice over,
 * across a reopen (the mirror then loads them from the table) and into
 * runs by a fold; and the errors, which ingest nothing. */
static void test_ingest_keys(void **state)
{
    db_fixture *fx = *state;
    st_store *s = store_create(fx->path, 1);
    st_batch *b;
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    ref r = {malloc(4000 * sizeof(uint64_t)), 0};
    uint64_t folded, pv[700];
    insert_fresh(s, b, &r, 500);
    assert_int_equal(st_table_fold(s, 0, 16, 0, NULL, NULL, NULL, &folded), ND_OK);
    insert_fresh(s, b, &r, 300); /* fresh keys in the memtable */
    size_t n = 0;
    while (n < 700) {
        uint64_t x = rnd();
        if (!ref_has(&r, x)) pv[n++] = x;
    }
    qsort(pv, n, sizeof *pv, cmp_u64);
    st_batch_clear(b);
    for (size_t i = 0; i < n; i++) assert_int_equal(st_table_insert_mirrored(b, 0, pv[i]), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    size_t total = 0;
    assert_int_equal(st_table_scan(s, 0, count_cb, &total), ND_OK);
    assert_int_equal(total, r.n); /* in the mirror only */
    /* Errors: out of order, repeated, no such table; nothing ingested. */
    uint64_t bad[3] = {pv[1], pv[0], pv[2]};
    assert_int_equal(st_table_ingest_keys(s, 0, bad, 3), ND_EINVAL);
    bad[1] = pv[1];
    assert_int_equal(st_table_ingest_keys(s, 0, bad, 2), ND_EINVAL);
    assert_int_equal(st_table_ingest_keys(s, 1, pv, n), ND_EINVAL);
    total = 0;
    assert_int_equal(st_table_scan(s, 0, count_cb, &total), ND_OK);
    assert_int_equal(total, r.n);
    char tmp[256];
    struct stat sb;
    snprintf(tmp, sizeof tmp, "%s/fresh-keys.sst.tmp", fx->path);
    assert_int_not_equal(stat(tmp, &sb), 0); /* removed after a failure */
    for (size_t i = 0; i < n; i++) ref_insert(&r, pv[i]);
    assert_int_equal(st_table_ingest_keys(s, 0, pv, n), ND_OK);
    check_ranges(s, &r); /* the scan counts each key once */
    assert_int_equal(st_table_ingest_keys(s, 0, pv, n), ND_OK); /* again: the same keys */
    check_ranges(s, &r);
    assert_int_not_equal(stat(tmp, &sb), 0);
    st_batch_free(b);
    st_close(s);
    /* Read-only: refused. Reopened: the mirror loads them from the table. */
    st_open_opts ro = {.readonly = 1};
    assert_int_equal(st_open(&s, fx->path, &ro), ND_OK);
    assert_int_equal(st_table_ingest_keys(s, 0, pv, n), ND_EREADONLY);
    st_close(s);
    st_open_opts rw = {0};
    assert_int_equal(st_open(&s, fx->path, &rw), ND_OK);
    check_ranges(s, &r);
    assert_int_equal(st_table_fold(s, 0, 16, 0, NULL, NULL, NULL, &folded), ND_OK);
    assert_int_equal(folded, 300 + n);
    check_runs_only(s, &r, r.n);
    check_ranges(s, &r);
    free(r.v);
    st_close(s);
}

/* A range deletion: in a plain batch, outside the tables. */
static void test_delete_range(void **state)
{
    db_fixture *fx = *state;
    st_store *s = store_create(fx->path, 1);
    st_batch *b, *plain;
    char *v;
    size_t vlen;
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    assert_int_equal(st_batch_new_plain(&plain, s), ND_OK);
    const char *keys[4] = {"a", "a1", "a9", "b"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(st_batch_put(plain, ST_CF_META, keys[i], strlen(keys[i]), "x", 1),
                         ND_OK);
    assert_int_equal(st_write(s, plain, 0), ND_OK);
    st_batch_clear(plain);
    assert_int_equal(st_batch_delete_range(b, ST_CF_META, "a1", 2, "b", 1), ND_EINVAL);
    assert_int_equal(st_batch_delete_range(plain, ST_CF_TABLE(0), "a1", 2, "b", 1), ND_EINVAL);
    assert_int_equal(st_batch_delete_range(plain, ST_CF_META, "a1", 2, "b", 1), ND_OK);
    assert_int_equal(st_write(s, plain, 0), ND_OK);
    for (int i = 0; i < 4; i++) {
        int rc = st_get(s, ST_CF_META, keys[i], strlen(keys[i]), &v, &vlen);
        assert_int_equal(rc, i == 1 || i == 2 ? ND_ENOTFOUND : ND_OK);
        if (rc == ND_OK) free(v);
    }
    st_batch_free(b);
    st_batch_free(plain);
    st_close(s);
}

static void test_probe_across_files(void **state)
{
    db_fixture *fx = *state;
    st_store *s;
    st_batch *b;
    ref r = {malloc(10000 * sizeof(uint64_t)), 0};
    s = store_create(fx->path, 1);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    insert_fresh(s, b, &r, 3000);
    assert_int_equal(st_table_fold(s, 0, 8, 0, NULL, NULL, NULL, NULL), ND_OK);
    assert_int_equal(st_flush(s), ND_OK); /* runs and deletions of fresh keys */
    size_t folded = r.n;
    insert_fresh(s, b, &r, 2000);
    assert_int_equal(st_flush(s), ND_OK); /* fresh entries alone */
    insert_fresh(s, b, &r, 1000);         /* fresh entries in the memtable */
    check_ranges(s, &r);
    check_runs_only(s, &r, folded);
    /* Runs rewritten in the memtable over a file of fresh entries. */
    st_batch_clear(b);
    for (int i = 0; i < 100; i++) {
        size_t at = rnd() % r.n;
        assert_int_equal(st_table_remove(s, b, 0, r.v[at]), ND_OK);
        ref_remove_at(&r, at);
    }
    assert_int_equal(st_write(s, b, 0), ND_OK);
    check_ranges(s, &r);
    assert_int_equal(st_close(s), ND_OK);
    st_open_opts o = {0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    st_batch_free(b);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    check_ranges(s, &r);
    uint64_t n = 0;
    assert_int_equal(st_table_fold(s, 0, 8, 0, NULL, NULL, NULL, &n), ND_OK);
    assert_true(n > 0);
    check_ranges(s, &r);
    check_runs_only(s, &r, r.n);
    free(r.v);
    st_batch_free(b);
    st_close(s);
}

static int fail_cb(const uint64_t *e, size_t n, int is_run, size_t bytes, void *payload)
{
    (void)e, (void)n, (void)is_run, (void)bytes, (void)payload;
    return 0;
}

static void test_corrupt_value(void **state)
{
    db_fixture *fx = *state;
    st_store *s;
    st_batch *b;
    st_reader *rd;
    st_u64s out = {0};
    s = store_create(fx->path, 1);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    uint8_t key[9] = {'R', 1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(st_batch_put(b, ST_CF_TABLE(0), key, 9, "\x01\x05garbage", 9), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    assert_int_equal(st_reader_new(&rd, s), ND_OK);
    assert_int_equal(st_table_range(rd, 0, 0, UINT64_MAX, 1, &out), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "table 0"));
    assert_int_equal(st_table_scan(s, 0, fail_cb, NULL), ND_ECORRUPT);
    st_batch_clear(b);
    assert_int_equal(st_batch_delete(b, ST_CF_TABLE(0), key, 9), ND_OK);
    key[0] = 'X'; /* a key outside both spaces */
    assert_int_equal(st_batch_put(b, ST_CF_TABLE(0), key, 9, "", 0), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    assert_int_equal(st_table_scan(s, 0, fail_cb, NULL), ND_ECORRUPT);
    st_batch_clear(b);
    assert_int_equal(st_batch_delete(b, ST_CF_TABLE(0), key, 9), ND_OK);
    key[0] = 'F'; /* a fresh key of the wrong length */
    assert_int_equal(st_batch_put(b, ST_CF_TABLE(0), key, 8, "", 0), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    assert_int_equal(st_table_scan(s, 0, fail_cb, NULL), ND_ECORRUPT);
    st_u64s_dispose(&out);
    st_reader_free(rd);
    st_batch_free(b);
    st_close(s);
}

/* A reader keeps its iterator between calls only while nothing was
 * written: every write is seen by the next range read. */
static void test_reader_sees_writes(void **state)
{
    db_fixture *fx = *state;
    st_store *s;
    st_batch *b;
    st_reader *rd;
    st_u64s out = {0};
    s = store_create(fx->path, 1);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    assert_int_equal(st_reader_new(&rd, s), ND_OK);
    for (uint64_t i = 1; i <= 50; i++) {
        st_batch_clear(b);
        assert_int_equal(st_table_insert(s, b, 0, i << 40), ND_OK);
        assert_int_equal(st_write(s, b, 0), ND_OK);
        if (i % 10 == 0) /* some of them folded into runs */
            assert_int_equal(st_table_fold(s, 0, 4, 0, NULL, NULL, NULL, NULL), ND_OK);
        out.n = 0;
        assert_int_equal(st_table_range(rd, 0, 0, UINT64_MAX, 1, &out), ND_OK);
        assert_int_equal(out.n, i);
        out.n = 0; /* the run space alone after a fold */
        assert_int_equal(st_table_range(rd, 0, 0, UINT64_MAX, 0, &out), ND_OK);
        assert_int_equal(out.n, i - i % 10);
    }
    st_batch_clear(b);
    assert_int_equal(st_table_remove(s, b, 0, 7ull << 40), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    out.n = 0;
    assert_int_equal(st_table_range(rd, 0, 0, UINT64_MAX, 1, &out), ND_OK);
    assert_int_equal(out.n, 49);
    st_u64s_dispose(&out);
    st_reader_free(rd);
    st_batch_free(b);
    st_close(s);
}

static void test_checkpoint(void **state)
{
    db_fixture *fx = *state;
    char cp[128];
    st_store *s, *s2;
    st_batch *b;
    s = store_create(fx->path, 3);
    snprintf(cp, sizeof cp, "%s/cp", fx->dir);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    for (int i = 0; i < 100; i++) assert_int_equal(st_table_insert(s, b, 2, rnd()), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    assert_int_equal(st_checkpoint(s, cp), ND_OK);
    assert_int_equal(st_checkpoint(s, cp), ND_EEXIST);
    st_open_opts o2 = {.readonly = 1};
    assert_int_equal(st_open(&s2, cp, &o2), ND_OK);
    size_t total = 0;
    assert_int_equal(st_table_scan(s2, 2, count_cb, &total), ND_OK);
    assert_int_equal(total, 100);
    uint64_t bytes;
    assert_int_equal(st_disk_bytes(s2, &bytes), ND_OK);
    assert_true(bytes > 0);
    st_close(s2);
    st_batch_free(b);
    st_close(s);
}

/* ---- range reads racing writes and folds ------------------------------ */

/* One writer inserts values into table 0 (a few per batch) and removes
 * some "victims" again (from the fresh space or, once folded, from a run);
 * a folder folds the table again and again, between the writer's
 * batches; readers read random ranges and the whole table. A reader must
 * see every kept value acknowledged before its read began, never a value
 * twice, never one that was not written. */
enum { RACE_VALUES = 6000, RACE_READERS = 2 };

typedef struct race {
    st_store *s;
    pthread_mutex_t mu; /* the "writer lock" of the fold steps */
    uint64_t vals[RACE_VALUES];
    uint64_t all[RACE_VALUES]; /* vals, sorted */
    char removed[RACE_VALUES];
    _Atomic size_t acked; /* vals[0..acked) are durable */
    _Atomic int readers;
    _Atomic int stop;
    int failed;
} race;

static int race_victim(uint64_t v) { return (v & 7) == 0; }
static void race_lock(void *p) { pthread_mutex_lock(&((race *)p)->mu); }
static void race_unlock(void *p) { pthread_mutex_unlock(&((race *)p)->mu); }

static void *race_writer(void *p)
{
    race *r = p;
    st_batch *b;
    if (st_batch_new(&b, r->s)) return NULL;
    for (size_t i = 0; i < RACE_VALUES;) {
        size_t n = 1 + r->vals[i] % 4;
        if (i + n > RACE_VALUES) n = RACE_VALUES - i;
        pthread_mutex_lock(&r->mu);
        st_batch_clear(b);
        for (size_t j = i; j < i + n; j++)
            if (st_table_insert(r->s, b, 0, r->vals[j])) r->failed = 1;
        /* Remove the victim written some batches ago, wherever it is. */
        if (i >= 40 && race_victim(r->vals[i - 40])) {
            if (st_table_remove(r->s, b, 0, r->vals[i - 40])) r->failed = 1;
            r->removed[i - 40] = 1;
        }
        if (st_write(r->s, b, 0)) r->failed = 1;
        pthread_mutex_unlock(&r->mu);
        i += n;
        atomic_store(&r->acked, i);
    }
    st_batch_free(b);
    atomic_store(&r->stop, 1);
    return NULL;
}

static void *race_folder(void *p)
{
    race *r = p;
    while (!atomic_load(&r->stop))
        if (st_table_fold(r->s, 0, 8, 0, race_lock, race_unlock, r, NULL)) r->failed = 1;
    return NULL;
}

static void *race_reader(void *p)
{
    race *r = p;
    st_reader *rd;
    st_u64s out = {0};
    uint64_t g = 77 + (uint64_t)atomic_fetch_add(&r->readers, 1);
    uint64_t *want = malloc(RACE_VALUES * sizeof *want);
    if (!want || st_reader_new(&rd, r->s)) {
        r->failed = 1;
        free(want);
        return NULL;
    }
    while (!atomic_load(&r->stop) && !r->failed) {
        g = g * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t lo = g & ~((1ull << 60) - 1), hi = lo | ((1ull << 60) - 1);
        if ((g >> 20) % 4 == 0) lo = 0, hi = UINT64_MAX;
        size_t acked = atomic_load(&r->acked), nw = 0;
        for (size_t i = 0; i < acked; i++)
            if (!race_victim(r->vals[i]) && r->vals[i] >= lo && r->vals[i] <= hi)
                want[nw++] = r->vals[i];
        out.n = 0;
        if (st_table_range(rd, 0, lo, hi, 1, &out)) {
            r->failed = 1;
            break;
        }
        qsort(want, nw, sizeof *want, cmp_u64);
        size_t j = 0;
        for (size_t i = 0; i < out.n; i++) {
            if (i && out.v[i] <= out.v[i - 1]) r->failed = 2; /* twice or out of order */
            if (out.v[i] < lo || out.v[i] > hi) r->failed = 3;
            if (!bsearch(&out.v[i], r->all, RACE_VALUES, sizeof *r->all, cmp_u64))
                r->failed = 6; /* never written */
            if (j < nw && out.v[i] == want[j]) j++;
            else if (j < nw && out.v[i] > want[j]) r->failed = 4; /* want[j] skipped */
        }
        if (j != nw) r->failed = 5; /* an acknowledged value is missing */
    }
    st_u64s_dispose(&out);
    st_reader_free(rd);
    free(want);
    return NULL;
}

/* Count the keys of family cf as of snapshot sn (NULL: now). */
static size_t family_keys(st_store *s, int cf, const st_snap *sn)
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

/* Random distinct sorted values, also inserted into the reference. */
static size_t fresh_values(uint64_t *v, size_t n, ref *r)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rnd();
        if (!ref_has(r, x)) v[m++] = x;
    }
    qsort(v, m, sizeof *v, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || v[u - 1] != v[i]) v[u++] = v[i];
    return u;
}

/* New docs entries "d<x>" -> "v" for the values of a rewrite. */
typedef struct doc_src {
    const uint64_t *v;
    char key[24];
} doc_src;

static int doc_src_kv(void *payload, size_t i, const void **key, size_t *klen, const void **val,
                      size_t *vlen)
{
    doc_src *d = payload;
    snprintf(d->key, sizeof d->key, "d%016llx", (unsigned long long)d->v[i]);
    *key = d->key;
    *klen = strlen(d->key);
    *val = "v";
    *vlen = 1;
    return ND_OK;
}

/* Rewrite generation g: tables 0 and 1 with vals (table 1 gets exactly
 * the values table 0 reports as added), docs with a key per added value,
 * rev as it is. */
static void rewrite_all(st_regen *g, st_store *s, const uint64_t *vals, size_t n, size_t want_added)
{
    st_u64s added = {0};
    assert_int_equal(st_table_rewrite(g, s, 0, 16, vals, n, &added), ND_OK);
    assert_int_equal(added.n, want_added);
    assert_int_equal(st_table_rewrite(g, s, 1, 16, added.v, added.n, NULL), ND_OK);
    doc_src d = {added.v, ""};
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, added.n, doc_src_kv, &d), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_REV, 0, doc_src_kv, &d), ND_OK);
    st_u64s_dispose(&added);
}

/* A source that hands out at most 777 values a call, whatever it is
 * asked for (st_table_rewrite_stream must not assume full blocks). */
typedef struct odd_src {
    const uint64_t *v;
    size_t n, i;
} odd_src;

static int odd_read(void *payload, uint64_t *buf, size_t cap, size_t *got)
{
    odd_src *o = payload;
    size_t k = o->n - o->i;
    if (k > cap) k = cap;
    if (k > 777) k = 777;
    memcpy(buf, o->v + o->i, k * sizeof *buf);
    o->i += k;
    *got = k;
    return ND_OK;
}

/* st_table_rewrite_stream merges piece by piece (run_size * 1024 values at
 * a time) where many new values fall into a stored run or above the last:
 * a store of 20 values below 2^63 (one run), then 100k new
 * values across the whole range plus every stored value again (skipped).
 * Both tables (one streamed, one from an array) then hold exactly the
 * union, in runs that decode; out-of-order values are refused. */
static void test_rewrite_pieces(void **state)
{
    db_fixture *fx = *state;
    st_store *s = store_create(fx->path, 2);
    st_batch *b;
    st_regen *g;
    enum { STORED = 20, NEW = 100000 };
    ref r = {malloc((STORED + NEW) * sizeof(uint64_t)), 0};
    uint64_t *vals = malloc((STORED + NEW) * sizeof *vals);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    for (size_t i = 0; i < STORED; i++) {
        uint64_t x = rnd() >> 1;
        if (ref_has(&r, x)) continue;
        ref_insert(&r, x);
        assert_int_equal(st_table_insert(s, b, 0, x), ND_OK);
        assert_int_equal(st_table_insert(s, b, 1, x), ND_OK);
    }
    assert_int_equal(st_write(s, b, 0), ND_OK);
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(st_table_fold(s, t, 16, 0, NULL, NULL, NULL, NULL), ND_OK);
    size_t stored = r.n, n = fresh_values(vals, NEW, &r);
    size_t nnew = n;
    memcpy(vals + n, r.v, stored * sizeof *vals);
    n += stored;
    qsort(vals, n, sizeof *vals, cmp_u64);
    /* Out of order: refused. */
    uint64_t bad[3] = {7, 9, 8};
    odd_src o = {bad, 3, 0};
    uint64_t put = 0;
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_table_rewrite_stream(g, s, 0, 16, odd_read, &o, &put), ND_EINVAL);
    st_regen_free(g);
    /* The merge. */
    o = (odd_src){vals, n, 0};
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_table_rewrite_stream(g, s, 0, 16, odd_read, &o, &put), ND_OK);
    assert_int_equal(put, nnew);
    st_u64s added = {0};
    assert_int_equal(st_table_rewrite(g, s, 1, 16, vals, n, &added), ND_OK);
    assert_int_equal(added.n, nnew);
    doc_src d = {vals, ""};
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, 0, doc_src_kv, &d), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_REV, 0, doc_src_kv, &d), ND_OK);
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_META, "k", 1, "v", 1), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    for (size_t i = 0; i < n; i++)
        if (!ref_has(&r, vals[i])) ref_insert(&r, vals[i]);
    assert_int_equal(r.n, stored + nnew);
    check_ranges(s, &r);
    st_reader *rd;
    assert_int_equal(st_reader_new(&rd, s), ND_OK);
    for (unsigned t = 0; t < 2; t++) {
        added.n = 0;
        assert_int_equal(st_table_range(rd, t, 0, UINT64_MAX, 1, &added), ND_OK);
        assert_int_equal(added.n, r.n);
        assert_memory_equal(added.v, r.v, r.n * sizeof *r.v);
    }
    st_reader_free(rd);
    st_u64s_dispose(&added);
    st_batch_free(b);
    free(vals);
    free(r.v);
    st_close(s);
}

/* Table generations (st_regen): a rewrite equals the set it replaces plus
 * the new values; nothing shows before the switching write, while
 * snapshots taken before it keep the old tables; an abandoned generation,
 * or one a crash left behind, is dropped and the old one stays. */
/* Point reads fill the block cache only while the files fit in it. */
static void test_cache_fill(void **state)
{
    db_fixture *fx = *state;
    char key[16], val[1024];
    st_store *s = NULL;
    st_batch *b;
    st_open_opts o = {.create = 1, .ntables = 1, .cache_bytes = 1u << 20};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_true(st_fills_cache(s)); /* empty */
    /* 4 MB of values that do not compress, past the 1 MiB cache */
    uint64_t x = 88172645463325252ull;
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    for (int i = 0; i < 4096; i++) {
        for (size_t j = 0; j < sizeof val; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            val[j] = (char)x;
        }
        snprintf(key, sizeof key, "k%06d", i);
        assert_int_equal(st_batch_put(b, ST_CF_DOCS, key, strlen(key), val, sizeof val), ND_OK);
        if (i % 512 == 511) {
            assert_int_equal(st_write(s, b, 0), ND_OK);
            st_batch_clear(b);
        }
    }
    assert_int_equal(st_compact_files(s), ND_OK);
    assert_false(st_fills_cache(s));
    char *v;
    size_t vlen;
    assert_int_equal(st_get(s, ST_CF_DOCS, "k004095", 7, &v, &vlen), ND_OK); /* still read */
    assert_true(vlen == sizeof val && memcmp(v, val, vlen) == 0);
    free(v);
    st_batch_free(b);
    st_close(s);
    o = (st_open_opts){.create = 0, .cache_bytes = 64u << 20};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_true(st_fills_cache(s)); /* fits the larger cache */
    st_close(s);
    o.cache_bytes = 1u << 20;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_false(st_fills_cache(s)); /* decided at open too */
    st_close(s);
}

static void test_regen(void **state)
{
    db_fixture *fx = *state;
    st_store *s = store_create(fx->path, 2);
    st_batch *b;
    st_regen *g;
    st_snap *sn;
    st_reader *rd;
    st_u64s out = {0};
    enum { N = 30000 };
    ref r = {malloc(4 * N * sizeof(uint64_t)), 0};
    uint64_t *vals = malloc(2 * N * sizeof *vals);
    assert_int_equal(st_reader_new(&rd, s), ND_OK);
    assert_int_equal(st_generation(s), 0);
    assert_false(st_family_settled(s, ST_CF_DOCS)); /* gen 0 was never ingested */

    /* Some values through the ordinary path first: fresh, then folded. */
    size_t n = fresh_values(vals, 3000, &r);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(st_table_insert(s, b, 0, vals[i]), ND_OK);
        assert_int_equal(st_table_insert(s, b, 1, vals[i]), ND_OK);
        ref_insert(&r, vals[i]);
    }
    assert_int_equal(st_write(s, b, 0), ND_OK);
    /* Fresh entries refuse a rewrite: they must be folded first. */
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_table_rewrite(g, s, 0, 16, vals, 1, NULL), ND_EINVAL);
    st_regen_free(g);
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(st_table_fold(s, t, 16, 0, NULL, NULL, NULL, NULL), ND_OK);
    size_t keys_before = family_keys(s, ST_CF_TABLE(0), NULL);

    /* Generation 1: new values plus some already stored (skipped). */
    n = fresh_values(vals, N, &r);
    size_t nnew = n;
    for (size_t i = 0; i < 500; i++) vals[n++] = r.v[rnd() % r.n];
    qsort(vals, n, sizeof *vals, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || vals[u - 1] != vals[i]) vals[u++] = vals[i];
    n = u;
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    rewrite_all(g, s, vals, n, nnew);
    /* Written and ingested, but not current: readers see the old tables. */
    assert_int_equal(family_keys(s, ST_CF_TABLE(0), NULL), keys_before);
    check_ranges(s, &r);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), 0);
    assert_int_equal(st_snap_new(&sn, s), ND_OK);
    /* A switching batch writes only meta: docs would go to the old family. */
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_DOCS, "k", 1, "v", 1), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_EINVAL);
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_META, "k", 1, "v", 1), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_batch_put(b, ST_CF_REV, "k", 1, "", 0), ND_EINVAL);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    assert_int_equal(st_generation(s), 1);
    for (size_t i = 0; i < n; i++)
        if (!ref_has(&r, vals[i])) ref_insert(&r, vals[i]);
    check_ranges(s, &r); /* a reader made before the switch follows it */
    out.n = 0;
    assert_int_equal(st_table_range(rd, 1, 0, UINT64_MAX, 1, &out), ND_OK);
    assert_int_equal(out.n, r.n);
    for (size_t i = 0; i < r.n; i++) assert_true(out.v[i] == r.v[i]);
    /* The snapshot still reads generation 0, which is dropped once it goes. */
    assert_int_equal(family_keys(s, ST_CF_TABLE(0), sn), keys_before);
    st_snap_free(sn);
    char *v, dk[24];
    size_t vlen;
    assert_int_equal(st_get(s, ST_CF_META, "k", 1, &v, &vlen), ND_OK);
    free(v);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), nnew);
    snprintf(dk, sizeof dk, "d%016llx", (unsigned long long)vals[0]);
    assert_int_equal(st_get(s, ST_CF_DOCS, dk, strlen(dk), &v, &vlen), ND_OK);
    assert_true(vlen == 1 && v[0] == 'v');
    free(v);
    /* Every family of the switched-to generation is settled (compaction
     * leaves it alone) until a write touches it. */
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE(2); cf++) assert_true(st_family_settled(s, cf));
    assert_false(st_family_settled(s, ST_CF_META));
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_DOCS, "~settled", 8, "v", 1), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    assert_false(st_family_settled(s, ST_CF_DOCS));
    assert_true(st_family_settled(s, ST_CF_REV) && st_family_settled(s, ST_CF_TABLE(1)));
    assert_int_equal(st_compact_files(s), ND_OK);
    check_ranges(s, &r);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), nnew + 1);
    /* A key merged twice, or out of order, is refused (and the generation
     * dropped). */
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    doc_src d = {vals, ""};
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, 1, doc_src_kv, &d), ND_ECORRUPT);
    st_regen_free(g);
    uint64_t twice[2] = {5, 5};
    d.v = twice;
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_REV, 2, doc_src_kv, &d), ND_EINVAL);
    /* Every family must be written before a switch. */
    st_batch_clear(b);
    assert_int_equal(st_batch_set_regen(b, g), ND_EINVAL);
    st_regen_free(g);

    /* An abandoned generation changes nothing; the next one can be made. */
    size_t keys1 = family_keys(s, ST_CF_TABLE(0), NULL);
    ref r0 = r;
    n = fresh_values(vals, 1000, &r);
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    rewrite_all(g, s, vals, n, n);
    st_regen_free(g);
    assert_int_equal(st_generation(s), 1);
    assert_int_equal(family_keys(s, ST_CF_TABLE(0), NULL), keys1);
    check_ranges(s, &r0);

    /* A crash after the files were ingested, before the switch: the child
     * stops without a word to RocksDB; the next open drops its families,
     * whose names a new generation then reuses. */
    st_reader_free(rd);
    st_batch_free(b);
    st_close(s);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        st_open_opts oc = {.create = 0};
        if (st_open(&s, fx->path, &oc) != ND_OK || st_regen_new(&g, s) != ND_OK) _exit(1);
        st_u64s added = {0};
        if (st_table_rewrite(g, s, 0, 16, vals, n, &added) != ND_OK) _exit(2);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    st_open_opts o = {.create = 0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_generation(s), 1);
    assert_int_equal(st_ntables(s), 2);
    check_ranges(s, &r0);
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    rewrite_all(g, s, vals, n, n);
    assert_int_equal(st_batch_new_plain(&b, s), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    for (size_t i = 0; i < n; i++) ref_insert(&r, vals[i]);
    check_ranges(s, &r);
    st_batch_free(b);
    st_close(s);

    /* A crash while a family's file is being written leaves the file; a
     * read-only open keeps it, the next writable open removes it. */
    char tmpfile[160];
    snprintf(tmpfile, sizeof tmpfile, "%s/regen.sst.tmp", fx->path);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        st_open_opts oc = {.create = 0};
        if (st_open(&s, fx->path, &oc) != ND_OK || st_regen_new(&g, s) != ND_OK ||
            st_regen_begin(g, ST_CF_TABLE(0)) != ND_OK)
            _exit(1);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat sb;
    assert_int_equal(stat(tmpfile, &sb), 0);
    o.readonly = 1;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    st_close(s);
    assert_int_equal(stat(tmpfile, &sb), 0);
    o.readonly = 0;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_generation(s), 2);
    st_close(s);
    assert_int_not_equal(stat(tmpfile, &sb), 0);

    /* Reopened, read-only too: generation 2 with every value. */
    o.readonly = 1;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_generation(s), 2);
    assert_false(st_family_settled(s, ST_CF_TABLE(0))); /* not known after a reopen */
    check_ranges(s, &r);
    st_close(s);
    st_u64s_dispose(&out);
    free(vals);
    free(r.v);
}

/* A fork's table rewrite, for a thread. */
typedef struct fork_job {
    st_regen *g;
    st_store *s;
    const uint64_t *vals;
    size_t n;
    int rc;
} fork_job;

static void *fork_main(void *arg)
{
    fork_job *j = arg;
    j->rc = st_table_rewrite(j->g, j->s, 1, 16, j->vals, j->n, NULL);
    return NULL;
}

/* Forks of a generation's writer (st_regen_fork): a fork writes table 1
 * on another thread while the parent writes table 0 and docs, and rev
 * too; joined and kept, the switch shows both tables' union and the
 * docs. A fork dropped leaves its family unwritten (the switch refuses)
 * until the parent writes it; a family written by both is refused at the
 * join; forks of forks and of a table rewritten in place are refused. A
 * crash left a fork's finished file: the next writable open removes it
 * and the generation stays. */
static void test_regen_fork(void **state)
{
    db_fixture *fx = *state;
    char forkfile[160];
    st_store *s = store_create(fx->path, 2);
    st_batch *b;
    st_regen *g, *f, *f2;
    enum { N = 20000 };
    ref r = {malloc(4 * N * sizeof(uint64_t)), 0};
    uint64_t *vals = malloc(N * sizeof *vals);
    size_t n = fresh_values(vals, 3000, &r);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(st_table_insert(s, b, 0, vals[i]), ND_OK);
        assert_int_equal(st_table_insert(s, b, 1, vals[i]), ND_OK);
        ref_insert(&r, vals[i]);
    }
    assert_int_equal(st_write(s, b, 0), ND_OK);
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(st_table_fold(s, t, 16, 0, NULL, NULL, NULL, NULL), ND_OK);

    /* Kept: table 1 and rev by the fork, on a thread, the rest by g. */
    n = fresh_values(vals, N, &r);
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_regen_fork(&f, g), ND_OK);
    assert_int_equal(st_regen_fork(&f2, f), ND_EINVAL);
    fork_job j = {f, s, vals, n, -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fork_main, &j), 0);
    assert_int_equal(st_table_rewrite(g, s, 0, 16, vals, n, NULL), ND_OK);
    doc_src d = {vals, ""};
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, n, doc_src_kv, &d), ND_OK);
    pthread_join(th, NULL);
    assert_int_equal(j.rc, ND_OK);
    assert_int_equal(st_family_merge(f, s, ST_CF_REV, 0, doc_src_kv, &d), ND_OK);
    st_batch_clear(b);
    assert_int_equal(st_batch_set_regen(b, g), ND_EINVAL); /* not joined yet */
    assert_int_equal(st_regen_join(g, f, 1), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    for (size_t i = 0; i < n; i++) ref_insert(&r, vals[i]);
    check_ranges(s, &r);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), n);

    /* Dropped: table 1 must be written again, by g. */
    ref r1 = r;
    r1.v = malloc(4 * N * sizeof(uint64_t));
    memcpy(r1.v, r.v, r.n * sizeof *r.v);
    size_t n2 = fresh_values(vals, 1000, &r1);
    for (size_t i = 0; i < n2; i++) ref_insert(&r1, vals[i]);
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_regen_fork(&f, g), ND_OK);
    uint64_t other = vals[0] ^ 1; /* what the dropped file held */
    assert_int_equal(st_table_rewrite(f, s, 1, 16, &other, 1, NULL), ND_OK);
    assert_int_equal(st_regen_join(g, f, 0), ND_OK);
    assert_int_equal(st_table_rewrite(g, s, 0, 16, vals, n2, NULL), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, 0, doc_src_kv, &d), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_REV, 0, doc_src_kv, &d), ND_OK);
    st_batch_clear(b);
    assert_int_equal(st_batch_set_regen(b, g), ND_EINVAL); /* table 1 dropped */
    assert_int_equal(st_table_rewrite(g, s, 1, 16, vals, n2, NULL), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    check_ranges(s, &r1);

    /* Written twice: refused at the join (and g still switches). */
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_regen_fork(&f, g), ND_OK);
    assert_int_equal(st_table_rewrite(f, s, 0, 16, &other, 1, NULL), ND_OK);
    assert_int_equal(st_table_rewrite(g, s, 0, 16, NULL, 0, NULL), ND_OK);
    assert_int_equal(st_regen_join(g, f, 1), ND_EINVAL);
    st_regen_free(g);
    check_ranges(s, &r1);
    const st_snap *view;
    assert_int_equal(st_regen_new_table(&g, s, 0, &view), ND_OK);
    assert_int_equal(st_regen_fork(&f, g), ND_EINVAL);
    st_regen_free(g);

    /* A crash after a fork finished its file. */
    st_batch_free(b);
    st_close(s);
    snprintf(forkfile, sizeof forkfile, "%s/regen-%d.sst.tmp", fx->path, ST_CF_TABLE(1));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        st_open_opts oc = {.create = 0};
        if (st_open(&s, fx->path, &oc) != ND_OK || st_regen_new(&g, s) != ND_OK ||
            st_regen_fork(&f, g) != ND_OK ||
            st_table_rewrite(f, s, 1, 16, &other, 1, NULL) != ND_OK)
            _exit(1);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat sb;
    assert_int_equal(stat(forkfile, &sb), 0);
    st_open_opts o = {.create = 0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_not_equal(stat(forkfile, &sb), 0);
    assert_int_equal(st_generation(s), 2);
    check_ranges(s, &r1);
    st_close(s);
    free(vals);
    free(r.v);
    free(r1.v);
}

static void test_range_races(void **state)
{
    db_fixture *fx = *state;
    static race r;
    memset(&r, 0, sizeof r);
    pthread_mutex_init(&r.mu, NULL);
    r.s = store_create(fx->path, 1);
    for (size_t i = 0; i < RACE_VALUES; i++) r.vals[i] = r.all[i] = rnd();
    qsort(r.all, RACE_VALUES, sizeof *r.all, cmp_u64);
    pthread_t w, f, rd[RACE_READERS];
    pthread_create(&w, NULL, race_writer, &r);
    pthread_create(&f, NULL, race_folder, &r);
    for (int i = 0; i < RACE_READERS; i++) pthread_create(&rd[i], NULL, race_reader, &r);
    pthread_join(w, NULL);
    pthread_join(f, NULL);
    for (int i = 0; i < RACE_READERS; i++) pthread_join(rd[i], NULL);
    assert_int_equal(r.failed, 0);
    /* At rest: exactly the values not removed, by every kind of read. */
    st_u64s want = {0}, got = {0};
    for (size_t i = 0; i < RACE_VALUES; i++)
        if (!r.removed[i]) assert_int_equal(st_u64s_push(&want, r.vals[i]), ND_OK);
    qsort(want.v, want.n, sizeof *want.v, cmp_u64);
    st_reader *rd0;
    assert_int_equal(st_reader_new(&rd0, r.s), ND_OK);
    assert_int_equal(st_table_range(rd0, 0, 0, UINT64_MAX, 1, &got), ND_OK);
    assert_int_equal(got.n, want.n);
    assert_memory_equal(got.v, want.v, want.n * sizeof *want.v);
    size_t total = 0;
    assert_int_equal(st_table_scan(r.s, 0, count_cb, &total), ND_OK);
    assert_int_equal(total, want.n);
    st_reader_free(rd0);
    st_u64s_dispose(&want);
    st_u64s_dispose(&got);
    st_close(r.s);
    pthread_mutex_destroy(&r.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_open_rules),
        DB_FIXTURE_TEST(test_batch_reads_own_writes),
        DB_FIXTURE_TEST(test_table_ops),
        DB_FIXTURE_TEST(test_bulk_fold),
        DB_FIXTURE_TEST(test_corrupt_value),
        DB_FIXTURE_TEST(test_checkpoint),
        DB_FIXTURE_TEST(test_reader_sees_writes),
        DB_FIXTURE_TEST(test_range_races),
        DB_FIXTURE_TEST(test_cache_fill),
        DB_FIXTURE_TEST(test_regen),
        DB_FIXTURE_TEST(test_regen_fork),
        DB_FIXTURE_TEST(test_probe_across_files),
        DB_FIXTURE_TEST(test_rewrite_pieces),
        DB_FIXTURE_TEST(test_ingest_keys),
        DB_FIXTURE_TEST(test_delete_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
