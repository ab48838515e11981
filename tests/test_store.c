/*
 * test_store.c — the storage layer: open/create rules, batches that read
 * their own writes, and table operations (insert, remove, fold, range,
 * scan) against a reference sorted set, also across
 * memtables and files of either key space; range reads
 * racing inserts, removals and folds from other threads. Generations
 * (st_regen): test_store_regen.c; the reference set: store_ref.h.
 */#include <pthread.h>
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
#include "store_ref.h"
#include "oracle.h"
#include "storage.h"
#include "tmpdir.h"

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
        DB_FIXTURE_TEST(test_probe_across_files),
        DB_FIXTURE_TEST(test_ingest_keys),
        DB_FIXTURE_TEST(test_delete_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
