/*
 * test_db.c — the database against the brute-force oracle, and its
 * document semantics.
 *
 * Exactness: for k in {0,1,2,3,4,6} and plans of several table counts,
 * random stores with planted neighbours at every distance 0..k+2 answer
 * every query distance 0..k+2 exactly as a popcount scan does — with fresh
 * entries, after nd_db_compact (small runs, so many of them), with a mix, and
 * after close + reopen (read-only, reading the tables by pread, then
 * through mappings: ND_DB_MMAP).
 *
 * Concurrency: racing add_if_new calls store one of a group of
 * near-duplicates; queries racing streams, deletions and background folds
 * see every acknowledged fingerprint.
 *
 * Format upgrade: a database of format 1 (runs in codec version 1, made
 * with the encoder switched to version 1) answers every query exactly,
 * stays at format 1 when opened read-only, is upgraded to the current
 * format by the first open for writing, and answers exactly with both run
 * versions mixed.
 *
 * Rev values (format 3): a query's score and time come from the rev entry;
 * entries written before format 3 (empty values) are read through docs, a
 * change of score or time rewrites both families, and verify catches a rev
 * value that disagrees with docs.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmp_codec.h"
#include "cmp_direct.h"
#include "cmp_kv.h"
#include "db_core.h"
#include "db_expire.h"
#include "db_fold.h"
#include "db_mirrored.h"
#include "db_fixture.h"
#include "neardup.h"
#include "oracle.h"
#include "storage.h"
#include "tmpdir.h"

/* Keys are "d<index>" so the oracle's indexes map to keys. */
static void key_of(char *buf, size_t i) { sprintf(buf, "d%zu", i); }

static nd_db *open_db(const char *path, unsigned k, unsigned tables, unsigned run_size)
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The documents nd_db_query returns equal the oracle's, with distances. */
static void check_query(nd_db *db, const uint64_t *fps, size_t n, uint64_t q, unsigned k,
                        size_t *scratch, nd_results *res)
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

static void check_all(nd_db *db, const uint64_t *fps, size_t n, const uint64_t *qs, size_t nq,
                      unsigned k)
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

/* One case of a test: a new database at fx->path, deleted at the end so
 * the test's next case starts empty there. */
static void exactness_case(db_fixture *fx, unsigned k, unsigned tables)
{
    char key[32];
    oracle_rng r = {1000u + k * 31 + tables};
    enum { NBASE = 2500, NQ = 12 };
    uint64_t fps[NBASE + NQ * 9], qs[NQ];
    size_t n = oracle_make(&r, fps, NBASE, qs, NQ, k + 2);
    nd_db *db = fx->db = open_db(fx->path, k, tables, 16);
    nd_plan_info p;
    nd_db_plan(&p, db);
    assert_int_equal(p.tables, tables);
    /* First half, then fold, then the rest fresh: a mix of runs and fresh. */
    for (size_t i = 0; i < n; i++) {
        key_of(key, i);
        assert_int_equal(nd_db_add(db, key, strlen(key), fps[i], (double)i, 1000 + (int64_t)i), ND_OK);
        if (i == n / 2) assert_int_equal(nd_db_compact(db), ND_OK);
    }
    check_all(db, fps, n, qs, NQ, k);
    assert_int_equal(nd_db_compact(db), ND_OK);
    check_all(db, fps, n, qs, NQ, k);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    /* Read-only, then with the tables mapped: each table's runs are one
     * file then, read directly (by pread, then through the mapping). */
    unsigned ro[2] = {ND_DB_READONLY, ND_DB_READONLY | ND_DB_MMAP};
    for (int i = 0; i < 2; i++) {
        nd_db_options o = ND_DB_OPTIONS_INIT;
        o.flags = ro[i];
        assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
        unsigned major, minor;
        kv_version(&major, &minor);
        cmp_direct *d = st_table_direct(fx->db->store, tables - 1);
        if (cmp_direct_supports(major, minor)) assert_non_null(d);
        cmp_direct_unref(d);
        check_all(fx->db, fps, n, qs, NQ, k);
        assert_int_equal(nd_db_verify(fx->db), ND_OK);
        db_fixture_close(fx);
    }
    tmpdir_remove(fx->path);
}

static void test_exact_k0(void **s) { exactness_case(*s, 0, 1); }
static void test_exact_k1(void **s) { exactness_case(*s, 1, 2); exactness_case(*s, 1, 4); }
static void test_exact_k2(void **s) { exactness_case(*s, 2, 3); exactness_case(*s, 2, 10); }
static void test_exact_k3(void **s)
{
    exactness_case(*s, 3, 4);
    exactness_case(*s, 3, 10);
    exactness_case(*s, 3, 20);
}
static void test_exact_k4(void **s) { exactness_case(*s, 4, 5); exactness_case(*s, 4, 15); }
static void test_exact_k6(void **s) { exactness_case(*s, 6, 7); exactness_case(*s, 6, 28); }

/* ---- documents -------------------------------------------------------- */

static void test_documents(void **state)
{
    db_fixture *fx = *state;
    nd_results *res = fx->res;
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 8);
    uint64_t f = 0x0123456789abcdefull;
    assert_int_equal(nd_db_add(db, "a", 1, f, 1.5, 10), ND_OK);
    assert_int_equal(nd_db_add(db, "b", 1, f, 2.5, 20), ND_OK);
    assert_int_equal(nd_db_query(res, db, f, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 2);
    assert_string_equal(nd_results_get(res, 0)->key, "a");
    assert_true(nd_results_get(res, 0)->score == 1.5);
    assert_int_equal(nd_results_get(res, 1)->time, 20);
    /* Deleting one document keeps the fingerprint for the other. */
    assert_int_equal(nd_db_delete(db, "a", 1), ND_OK);
    assert_int_equal(nd_db_delete(db, "a", 1), ND_ENOTFOUND);
    assert_int_equal(nd_db_query(res, db, f ^ 1, 1, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 1);
    assert_string_equal(nd_results_get(res, 0)->key, "b");
    assert_int_equal(nd_db_compact(db), ND_OK);
    /* Deleting the last removes it from the tables. */
    assert_int_equal(nd_db_delete(db, "b", 1), ND_OK);
    assert_int_equal(nd_db_query(res, db, f, 3, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    /* Re-add; then move the key to another fingerprint. */
    assert_int_equal(nd_db_add(db, "b", 1, f, 0, 30), ND_OK);
    assert_int_equal(nd_db_add(db, "b", 1, ~f, 0, 31), ND_OK);
    assert_int_equal(nd_db_query(res, db, f, 3, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 0);
    assert_int_equal(nd_db_get(res, db, "b", 1), ND_OK);
    assert_true(nd_results_get(res, 0)->fp == ~f);
    assert_int_equal(nd_results_get(res, 0)->time, 31);
    assert_int_equal(nd_db_get(res, db, "zz", 2), ND_ENOTFOUND);
    /* Keys: empty and over the limit. */
    char *big = calloc(1, ND_MAX_KEY_LEN + 2);
    memset(big, 'x', ND_MAX_KEY_LEN + 1);
    assert_int_equal(nd_db_add(db, big, ND_MAX_KEY_LEN + 1, 1, 0, 0), ND_ELIMIT);
    assert_int_equal(nd_db_add(db, big, ND_MAX_KEY_LEN, 1, 0, 0), ND_OK);
    assert_int_equal(nd_db_add(db, "", 0, 1, 0, 0), ND_EINVAL);
    /* add_many is atomic: a bad document in the middle stores nothing. */
    nd_doc docs[3] = {{"m1", 2, 77, 0, 0}, {big, ND_MAX_KEY_LEN + 1, 78, 0, 0}, {"m3", 2, 79, 0, 0}};
    assert_int_equal(nd_db_add_many(db, docs, 3), ND_ELIMIT);
    assert_int_equal(nd_db_get(res, db, "m1", 2), ND_ENOTFOUND);
    docs[1].key_len = 3;
    assert_int_equal(nd_db_add_many(db, docs, 3), ND_OK);
    assert_int_equal(nd_db_get(res, db, "m3", 2), ND_OK);
    free(big);
    /* FP_ONLY, FIRST and limit. */
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    assert_int_equal(nd_db_add(db, "c", 1, 77, 0, 0), ND_OK);
    qo.flags = ND_QUERY_FP_ONLY;
    assert_int_equal(nd_db_query(res, db, 77, 1, &qo), ND_OK);
    assert_int_equal(nd_results_count(res), 2); /* 77 and 79 (1 bit apart); 78 is 2 bits away */
    qo.flags = ND_QUERY_FIRST;
    assert_int_equal(nd_db_query(res, db, 77, 2, &qo), ND_OK);
    assert_int_equal(nd_results_count(res), 1);
    qo.flags = 0;
    qo.limit = 2;
    assert_int_equal(nd_db_query(res, db, 77, 2, &qo), ND_OK);
    assert_int_equal(nd_results_count(res), 2);
    assert_int_equal(nd_results_get(res, 0)->dist, 0);
    assert_int_equal(nd_db_query(res, db, 77, ND_MAX_K + 1, NULL), ND_EINVAL);
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, 6); /* b, big, m1, x.., m3, c */
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* ---- add_if_new races ------------------------------------------------- */

typedef struct racer {
    nd_db *db;
    int id;
    uint64_t base;
    int added;
} racer;

static void *race_main(void *p)
{
    racer *r = p;
    nd_results *res;
    char key[32];
    if (nd_results_new(&res)) return NULL;
    oracle_rng g = {(uint64_t)r->id * 1000003u};
    for (int round = 0; round < 60; round++) {
        /* Every racer adds a near-duplicate (<= 2 bits) of the round's base. */
        uint64_t fp = oracle_flip(&g, r->base + (uint64_t)round * 0x9e3779b97f4a7c15ull, 1 + r->id % 2);
        sprintf(key, "r%d-%d", r->id, round);
        if (nd_db_add_if_new(res, r->db, key, strlen(key), fp, 0, 0, 3) == ND_OK &&
            nd_results_count(res) == 0)
            r->added++;
    }
    nd_results_free(res);
    return NULL;
}

/* Is fp stored (a k=0 fingerprint-only query finds it)? */
static int fp_stored(nd_db *db, nd_results *res, uint64_t fp)
{
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.flags = ND_QUERY_FP_ONLY;
    assert_int_equal(nd_db_query(res, db, fp, 0, &qo), ND_OK);
    return nd_results_count(res) == 1;
}

/* nd_db_add_many stages the tables' entries of its new fingerprints at the
 * end of the call, table by table in order; a key moved in the same call
 * unlinks a fingerprint whose entries may still be deferred. Whatever the
 * order inside the call, the tables end up holding exactly the
 * fingerprints that still have documents. */
static void test_add_many_replacing(void **state)
{
    db_fixture *fx = *state;
    nd_results *res = fx->res;
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 8);
    const uint64_t F = 0x1111000011110000ull, G = 0x2222000022220000ull,
                   H = 0x3333000033330000ull, I = 0x4444000044440000ull,
                   S = 0x5555000055550000ull, T = 0x6666000066660000ull;
    assert_int_equal(nd_db_add(db, "s", 1, S, 0, 1), ND_OK);
    enum { NEW = 300 };
    nd_doc docs[NEW + 7];
    char keys[NEW][8];
    uint64_t fps[NEW];
    oracle_rng r = {99};
    size_t n = 0;
    for (size_t i = 0; i < NEW; i++) {
        sprintf(keys[i], "n%zu", i);
        fps[i] = oracle_next(&r);
        docs[n++] = (nd_doc){keys[i], strlen(keys[i]), fps[i], 0, 2};
        if (i == 100) { /* in the middle of the deferred ones */
            docs[n++] = (nd_doc){"x", 1, F, 0, 2};
            docs[n++] = (nd_doc){"x", 1, G, 0, 3}; /* F loses its only document */
            docs[n++] = (nd_doc){"y", 1, F, 0, 3}; /* and gets one again */
            docs[n++] = (nd_doc){"z", 1, H, 0, 2};
            docs[n++] = (nd_doc){"z", 1, I, 0, 3}; /* H leaves for good */
            docs[n++] = (nd_doc){"s", 1, T, 0, 3}; /* S, stored before, leaves */
        }
    }
    assert_int_equal(nd_db_add_many(db, docs, n), ND_OK);
    for (int round = 0; round < 2; round++) {
        assert_int_equal(nd_db_verify(db), ND_OK);
        uint64_t ndocs, nfps;
        assert_int_equal(nd_db_counts(&ndocs, &nfps, db), ND_OK);
        assert_int_equal(ndocs, NEW + 4);
        assert_int_equal(nfps, NEW + 4);
        for (size_t i = 0; i < NEW; i++) assert_true(fp_stored(db, res, fps[i]));
        assert_true(fp_stored(db, res, F) && fp_stored(db, res, G));
        assert_true(fp_stored(db, res, I) && fp_stored(db, res, T));
        assert_false(fp_stored(db, res, H) || fp_stored(db, res, S));
        assert_int_equal(nd_db_get(res, db, "x", 1), ND_OK);
        assert_true(nd_results_get(res, 0)->fp == G);
        assert_int_equal(nd_db_get(res, db, "y", 1), ND_OK);
        assert_true(nd_results_get(res, 0)->fp == F);
        assert_int_equal(nd_db_get(res, db, "s", 1), ND_OK);
        assert_true(nd_results_get(res, 0)->fp == T);
        assert_int_equal(nd_db_compact(db), ND_OK); /* again, from the runs */
    }
}

static void test_add_if_new_race(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path, 3, 10, 16);
    racer rs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        rs[i] = (racer){db, i, 0x5555aaaa5555aaaaull, 0};
        pthread_create(&th[i], NULL, race_main, &rs[i]);
    }
    int total = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        total += rs[i].added;
    }
    /* Near-duplicates of one base are within 4 of each other only if they
     * are within 3 of the first: flips are 1 or 2 bits, so two of them can
     * be 4 apart. Exactly: stored ones are pairwise > 3 apart, and every
     * round stores at least one. */
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, (uint64_t)total);
    assert_true(total >= 60);
    nd_results *res = fx->res;
    for (int round = 0; round < 60; round++) {
        uint64_t base = 0x5555aaaa5555aaaaull + (uint64_t)round * 0x9e3779b97f4a7c15ull;
        assert_int_equal(nd_db_query(res, db, base, 5, NULL), ND_OK);
        for (size_t i = 0; i < nd_results_count(res); i++)
            for (size_t j = i + 1; j < nd_results_count(res); j++)
                assert_true(nd_hamming(nd_results_get(res, i)->fp, nd_results_get(res, j)->fp) > 3);
    }
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* Unrelated documents from two threads all get in. */
static void *unrelated_main(void *p)
{
    racer *r = p;
    nd_results *res;
    char key[32];
    oracle_rng g = {(uint64_t)r->id * 77 + 5};
    if (nd_results_new(&res)) return NULL;
    for (int i = 0; i < 300; i++) {
        sprintf(key, "u%d-%d", r->id, i);
        if (nd_db_add_if_new(res, r->db, key, strlen(key), oracle_next(&g), 0, 0, 3) == ND_OK &&
            nd_results_count(res) == 0)
            r->added++;
    }
    nd_results_free(res);
    return NULL;
}

static void test_threads_unrelated(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path, 3, 10, 16);
    racer rs[2] = {{db, 0, 0, 0}, {db, 1, 0, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, unrelated_main, &rs[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_int_equal(rs[0].added + rs[1].added, 600);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* db_write_lock excludes: four threads (more than the cores, so some
 * spin out and sleep) each add 1 to a plain counter 20,000 times, with a
 * yield between the read and the write; the total is exact. */
typedef struct lock_racer {
    nd_db *db;
    uint64_t *count;
} lock_racer;

static void *lock_racer_main(void *arg)
{
    lock_racer *r = arg;
    for (int i = 0; i < 20000; i++) {
        db_write_lock(r->db);
        uint64_t c = *(volatile uint64_t *)r->count;
        if (i % 64 == 0) sched_yield();
        *(volatile uint64_t *)r->count = c + 1;
        pthread_mutex_unlock(&r->db->write.mu);
    }
    return NULL;
}

static void test_write_lock(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 16);
    uint64_t count = 0;
    lock_racer r = {db, &count};
    pthread_t th[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, lock_racer_main, &r), 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    assert_int_equal(count, 4 * 20000);
}

/* ---- streams racing queries and folds ---------------------------------- */

/* Two threads stream nd_db_add_if_new (random documents and near-duplicates
 * of what they added), a third adds and deletes documents whose
 * fingerprints are in runs by then, background folds run every few hundred
 * adds, and two threads query. Every query must return every fingerprint
 * within k that an add acknowledged before the query began (and not yet
 * deleted), and nothing that was never added. */
enum { SR_ADDERS = 2, SR_ADDS = 700, SR_VICTIMS = 300, SR_READERS = 2 };

typedef struct stream_race {
    nd_db *db;
    pthread_mutex_t mu;
    uint64_t acked[SR_ADDERS * SR_ADDS]; /* fingerprints added, in ack order */
    _Atomic size_t nacked;
    _Atomic uint64_t tried[SR_ADDERS * SR_ADDS + SR_VICTIMS]; /* every fp ever offered */
    _Atomic int done;
    _Atomic int adder_ids, reader_ids; /* separate: an adder's id indexes tried */
    int failed;
} stream_race;

static void sr_ack(stream_race *r, uint64_t fp)
{
    pthread_mutex_lock(&r->mu);
    size_t n = atomic_load(&r->nacked);
    r->acked[n] = fp;
    atomic_store(&r->nacked, n + 1); /* published after the slot is written */
    pthread_mutex_unlock(&r->mu);
}

static uint64_t sr_fp(int id, size_t i)
{
    oracle_rng g = {(uint64_t)id * 1000003u + i * 7919u + 11};
    return oracle_next(&g);
}

static void *sr_adder(void *p)
{
    stream_race *r = p;
    int id = atomic_fetch_add(&r->adder_ids, 1);
    nd_results *res;
    char key[32];
    oracle_rng g = {(uint64_t)id + 99};
    if (nd_results_new(&res)) return NULL;
    uint64_t mine[SR_ADDS];
    size_t nmine = 0;
    for (size_t i = 0; i < SR_ADDS && !r->failed; i++) {
        uint64_t fp = r->tried[(size_t)id * SR_ADDS + i];
        if (nmine && i % 3 == 0) { /* a near-duplicate of an earlier one */
            fp = oracle_flip(&g, mine[oracle_next(&g) % nmine], 1 + (unsigned)(i % 5));
            r->tried[(size_t)id * SR_ADDS + i] = fp;
        }
        sprintf(key, "s%d-%zu", id, i);
        if (nd_db_add_if_new(res, r->db, key, strlen(key), fp, 0, 0, 3) != ND_OK) {
            r->failed = 1;
            break;
        }
        if (nd_results_count(res) == 0) {
            mine[nmine++] = fp;
            sr_ack(r, fp);
        }
    }
    nd_results_free(res);
    return NULL;
}

/* Adds victims, then deletes each some adds later (after folds moved
 * it into a run): removals from runs race the readers. */
static void *sr_victims(void *p)
{
    stream_race *r = p;
    char key[32];
    for (size_t i = 0; i < SR_VICTIMS + 20 && !r->failed; i++) {
        if (i < SR_VICTIMS) {
            sprintf(key, "v%zu", i);
            if (nd_db_add(r->db, key, strlen(key), r->tried[SR_ADDERS * SR_ADDS + i], 0, 0))
                r->failed = 1;
        }
        if (i >= 20) {
            sprintf(key, "v%zu", i - 20);
            if (nd_db_delete(r->db, key, strlen(key))) r->failed = 1;
        }
    }
    return NULL;
}

static void *sr_reader(void *p)
{
    stream_race *r = p;
    nd_results *res;
    oracle_rng g = {(uint64_t)atomic_fetch_add(&r->reader_ids, 1) * 31 + 7};
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.flags = ND_QUERY_FP_ONLY;
    if (nd_results_new(&res)) return NULL;
    while (!atomic_load(&r->done) && !r->failed) {
        size_t n = atomic_load(&r->nacked);
        uint64_t q = n && oracle_next(&g) % 2 ? oracle_flip(&g, r->acked[oracle_next(&g) % n],
                                                            (unsigned)(oracle_next(&g) % 5))
                                             : oracle_next(&g);
        if (nd_db_query(res, r->db, q, 3, &qo) != ND_OK) {
            r->failed = 1;
            break;
        }
        for (size_t i = 0; i < n; i++) {
            if (nd_hamming(r->acked[i], q) > 3) continue;
            size_t j = 0;
            while (j < nd_results_count(res) && nd_results_get(res, j)->fp != r->acked[i]) j++;
            if (j == nd_results_count(res)) r->failed = 2; /* acknowledged, not found */
        }
        for (size_t j = 0; j < nd_results_count(res); j++) {
            uint64_t fp = nd_results_get(res, j)->fp;
            size_t i = 0;
            while (i < SR_ADDERS * SR_ADDS + SR_VICTIMS && r->tried[i] != fp) i++;
            if (i == SR_ADDERS * SR_ADDS + SR_VICTIMS || nd_hamming(fp, q) > 3)
                r->failed = 3; /* never added, or too far */
        }
    }
    nd_results_free(res);
    return NULL;
}

/* Open with background folds past threshold fresh entries (4 tables,
 * runs of 8). */
static nd_db *open_folding(const char *path, uint64_t threshold)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY;
    o.k = 3;
    o.tables = 4;
    o.run_size = 8;
    o.expected_docs = 100000;
    o.fold_threshold = threshold;
    assert_int_equal(nd_db_open(&db, path, &o), ND_OK);
    return db;
}

static void test_stream_races(void **state)
{
    db_fixture *fx = *state;
    static stream_race r;
    memset(&r, 0, sizeof r);
    pthread_mutex_init(&r.mu, NULL);
    /* background folds every 400 table entries: 100 new fingerprints */
    nd_db *db = fx->db = open_folding(fx->path, 400);
    r.db = db;
    for (size_t i = 0; i < SR_ADDERS * SR_ADDS + SR_VICTIMS; i++)
        r.tried[i] = sr_fp((int)(i / SR_ADDS), i);
    pthread_t th[SR_ADDERS + 1 + SR_READERS];
    for (int i = 0; i < SR_ADDERS; i++) pthread_create(&th[i], NULL, sr_adder, &r);
    pthread_create(&th[SR_ADDERS], NULL, sr_victims, &r);
    for (int i = 0; i < SR_READERS; i++)
        pthread_create(&th[SR_ADDERS + 1 + i], NULL, sr_reader, &r);
    for (int i = 0; i <= SR_ADDERS; i++) pthread_join(th[i], NULL);
    atomic_store(&r.done, 1);
    for (int i = 0; i < SR_READERS; i++) pthread_join(th[SR_ADDERS + 1 + i], NULL);
    assert_int_equal(r.failed, 0);
    /* At rest, after a last fold: the acknowledged set exactly. */
    assert_int_equal(nd_db_compact(db), ND_OK);
    uint64_t ndocs, nfps;
    assert_int_equal(nd_db_counts(&ndocs, &nfps, db), ND_OK);
    assert_int_equal(ndocs, atomic_load(&r.nacked));
    assert_int_equal(nd_db_verify(db), ND_OK);
    nd_results *res = fx->res;
    size_t *scratch = malloc(r.nacked * sizeof *scratch);
    for (size_t i = 0; i < r.nacked; i += 7) {
        assert_int_equal(nd_db_query(res, db, r.acked[i], 3, NULL), ND_OK);
        assert_int_equal(nd_results_count(res), oracle_scan(r.acked, r.nacked, r.acked[i], 3, scratch));
    }
    free(scratch);
    pthread_mutex_destroy(&r.mu);
}

static void add_random(nd_db *db, oracle_rng *rng, unsigned n, unsigned *next_key)
{
    for (unsigned i = 0; i < n; i++) {
        char key[16];
        int kl = snprintf(key, sizeof key, "d%u", (*next_key)++);
        assert_int_equal(nd_db_add(db, key, (size_t)kl, oracle_next(rng), 0, 0), ND_OK);
    }
}

/* Fresh entries of table 0 (all tables hold as many). */
static uint64_t fresh_of(nd_db *db)
{
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    return st.table[0].fresh;
}

/* Wait (at most about 30 s) for a background fold to leave at most
 * bound fresh entries per table; the count then. */
static uint64_t fresh_after_fold(nd_db *db, uint64_t bound)
{
    uint64_t f = fresh_of(db);
    for (int i = 0; i < 3000 && f > bound; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        f = fresh_of(db);
    }
    return f;
}

/* The default threshold grows with the store to about one fresh entry
 * per run; an explicit option is kept as given. */
static void test_fold_threshold_default(void **state)
{
    (void)state;
    assert_int_equal(db_fold_threshold(0, 100000000, 10, 128), 7812500);
    assert_int_equal(db_fold_threshold(0, 10000000, 4, 128), 1000000); /* 312500: the floor */
    assert_int_equal(db_fold_threshold(0, 0, 4, 128), 1000000);
    assert_int_equal(db_fold_threshold(400, 100000000, 10, 128), 400);
    assert_int_equal(db_fold_threshold(0, 1000000000, 12, 64), 187500000);
}

/* The fold threshold counts what earlier opens left unfolded: a writer
 * that closes before reaching it still folds over several sessions. */
static void test_fold_across_opens(void **state)
{
    db_fixture *fx = *state;
    oracle_rng rng = {77};
    unsigned key = 0;
    /* 60 fingerprints: 240 table entries, below 400. */
    fx->db = open_folding(fx->path, 400);
    add_random(fx->db, &rng, 60, &key);
    assert_int_equal(fresh_of(fx->db), 60);
    db_fixture_close(fx);
    /* 60 more cross 400 only with the 240 left by the first session, at
     * the 40th: the fold it starts leaves at most the 20 added after. */
    fx->db = open_folding(fx->path, 400);
    assert_int_equal(fresh_of(fx->db), 60);
    add_random(fx->db, &rng, 60, &key);
    assert_in_range(fresh_after_fold(fx->db, 20), 0, 20);
    db_fixture_close(fx);
    /* Past the threshold already at open: the open itself starts a fold. */
    fx->db = open_folding(fx->path, UINT64_MAX);
    uint64_t left = fresh_of(fx->db);
    add_random(fx->db, &rng, 120, &key);
    assert_int_equal(fresh_of(fx->db), left + 120);
    db_fixture_close(fx);
    fx->db = open_folding(fx->path, 400);
    assert_int_equal(fresh_after_fold(fx->db, 0), 0);
    uint64_t ndocs;
    assert_int_equal(nd_db_counts(&ndocs, NULL, fx->db), ND_OK);
    assert_int_equal(ndocs, 240);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
}

/* ---- fingerprints whose table keys wait (db_mirrored.c) --------------- */

/* Options with flags (ND_DB_NO_BACKGROUND added), k=3 and 4 tables. */
static nd_db_options options_flags(unsigned flags)
{
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = flags | ((flags & ND_DB_READONLY) ? 0 : ND_DB_NO_BACKGROUND);
    o.k = 3;
    o.has_k = !(flags & ND_DB_READONLY);
    o.tables = 4;
    o.run_size = 16;
    o.expected_docs = 100000;
    return o;
}

static nd_db *open_flags(const char *path, unsigned flags)
{
    nd_db *db = NULL;
    nd_db_options o = options_flags(flags);
    int rc = nd_db_open(&db, path, &o);
    if (rc) fprintf(stderr, "open: %s\n", nd_errmsg());
    assert_int_equal(rc, ND_OK);
    return db;
}

/* Run write(db, arg) in a child process on a store created at fx->path,
 * which then exits without nd_db_close, as a crash after its last write;
 * write returns 0, or a nonzero exit code naming what failed (no cmocka
 * in the child). */
static void crash_after(db_fixture *fx, int (*write)(nd_db *db, const void *arg), const void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nd_db *db = NULL;
        nd_db_options o = options_flags(ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY);
        _exit(nd_db_open(&db, fx->path, &o) ? 2 : write(db, arg));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

typedef struct fp_list {
    const uint64_t *fps;
    size_t n;
} fp_list;

/* Documents key_of(i) -> fps[i], one nd_db_add each. */
static int add_singly(nd_db *db, const void *arg)
{
    const fp_list *l = arg;
    for (size_t i = 0; i < l->n; i++) {
        char key[32];
        key_of(key, i);
        if (nd_db_add(db, key, strlen(key), l->fps[i], (double)i, 1000 + (int64_t)i)) return 3;
    }
    return 0;
}

/* A process that adds documents one at a time and dies without closing
 * leaves the last ones' table entries as meta records only; every reader
 * finds them after a read-only open (queries, scanning queries beyond the
 * plan's k, stats, verify), a writable open too, and a removal of one
 * (whose keys a flush cut short wrote into some tables) takes it from
 * the log and every table, the others still waiting. A writable close
 * leaves no record. */
static void test_mirrored_after_crash(void **state)
{
    db_fixture *fx = *state;
    oracle_rng r = {4242};
    /* More than DB_MIRRORED_MAX: the writer flushes once, then dies with
     * some waiting. */
    enum { NBASE = DB_MIRRORED_MAX + 1000, NQ = 12 };
    uint64_t *fps = malloc((NBASE + NQ * 6) * sizeof *fps), qs[NQ];
    assert_non_null(fps);
    size_t n = oracle_make(&r, fps, NBASE, qs, NQ, 5);
    fp_list all = {fps, n};
    crash_after(fx, add_singly, &all);

    /* Read-only: the records enter the mirror, and nothing flushes them. */
    nd_db *db = fx->db = open_flags(fx->path, ND_DB_READONLY);
    size_t waiting = db->mirror.fps.n;
    assert_int_equal(waiting, n - DB_MIRRORED_MAX);
    check_all(db, fps, n, qs, NQ, 3); /* k up to 5: beyond the plan's 3 too */
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.table[0].entries, st.fingerprints);
    assert_int_equal(st.table[0].fresh, n);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(db->mirror.fps.n, waiting);

    /* A flush cut by a crash after two tables took their keys, before
     * the records went: those tables hold the keys, the records remain. */
    size_t cut[2];
    uint64_t *cut_pv[2];
    for (unsigned t = 0; t < 2; t++) {
        cut_pv[t] = malloc(2 * waiting * sizeof *cut_pv[t]);
        assert_non_null(cut_pv[t]);
        cut[t] = db_table_sorted(db, t, db->mirror.fps.v, waiting, cut_pv[t]);
        assert_int_equal(cut[t], waiting);
    }
    db_fixture_close(fx);
    st_store *s = NULL;
    st_open_opts so = {0};
    assert_int_equal(st_open(&s, fx->path, &so), ND_OK);
    for (unsigned t = 0; t < 2; t++) {
        assert_int_equal(st_table_ingest_keys(s, t, cut_pv[t], cut[t]), ND_OK);
        free(cut_pv[t]);
    }
    assert_int_equal(st_close(s), ND_OK);
    db = fx->db = open_flags(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, waiting);
    check_all(db, fps, n, qs, NQ, 3);
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    for (unsigned t = 0; t < 4; t++) { /* each entry counted once */
        assert_int_equal(st.table[t].entries, st.fingerprints);
        assert_int_equal(st.table[t].fresh, n);
    }
    assert_int_equal(nd_db_verify(db), ND_OK);
    db_fixture_close(fx);

    /* Writable: still waiting, less the one a removal takes. */
    db = fx->db = open_flags(fx->path, 0);
    assert_int_equal(db->mirror.fps.n, waiting);
    check_all(db, fps, n, qs, NQ, 3);
    char key[32];
    uint64_t flushes = db->mirror.flushes;
    key_of(key, n - 1); /* the last added: its entries were waiting */
    assert_int_equal(nd_db_delete(db, key, strlen(key)), ND_OK);
    assert_int_equal(db->mirror.fps.n, waiting - 1);
    assert_int_equal(db->mirror.flushes, flushes);
    check_all(db, fps, n - 1, qs, NQ, 3);
    assert_int_equal(nd_db_verify(db), ND_OK); /* its scans flush */
    assert_int_equal(db->mirror.fps.n, 0);
    /* Five more wait (one a fingerprint removed above); the close writes
     * their keys. */
    for (size_t i = n - 1; i < n + 4; i++) {
        uint64_t fp = i < n ? fps[i] : oracle_next(&r);
        key_of(key, i);
        assert_int_equal(nd_db_add(db, key, strlen(key), fp, 0, 0), ND_OK);
    }
    assert_int_equal(db->mirror.fps.n, 5);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = open_flags(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, 0);
    check_all(db, fps, n, qs, NQ, 3);
    assert_int_equal(nd_db_verify(db), ND_OK);
    uint64_t ndocs;
    assert_int_equal(nd_db_counts(&ndocs, NULL, db), ND_OK);
    assert_int_equal(ndocs, n + 4);
    free(fps);
}

enum { MANY_FIRST = DB_MIRRORED_CALL + 1, MANY_SECOND = 100 };
enum { MANY_N = MANY_FIRST + MANY_SECOND + DB_MIRRORED_CALL };

/* Documents key_of(i) -> fps[i] by nd_db_add_many calls of MANY_FIRST,
 * MANY_SECOND and DB_MIRRORED_CALL; each call's fingerprints wait or not
 * as said. */
static int add_three_calls(nd_db *db, const void *arg)
{
    const uint64_t *fps = arg;
    static char keys[MANY_N][32];
    static nd_doc docs[MANY_N];
    for (size_t i = 0; i < MANY_N; i++) {
        key_of(keys[i], i);
        docs[i] = (nd_doc){keys[i], strlen(keys[i]), fps[i], (double)i, 1000 + (int64_t)i};
    }
    if (nd_db_add_many(db, docs, MANY_FIRST)) return 3;
    if (db->mirror.fps.n != 0) return 4;
    if (nd_db_add_many(db, docs + MANY_FIRST, MANY_SECOND)) return 5;
    if (db->mirror.fps.n != MANY_SECOND) return 6;
    if (nd_db_add_many(db, docs + MANY_FIRST + MANY_SECOND, DB_MIRRORED_CALL)) return 7;
    if (db->mirror.fps.n != MANY_SECOND + DB_MIRRORED_CALL) return 8;
    return 0;
}

/* A call adding up to DB_MIRRORED_CALL new fingerprints logs them (their
 * table keys wait), a larger one writes their keys: a process that adds
 * by nd_db_add_many calls of DB_MIRRORED_CALL + 1, 100 and DB_MIRRORED_CALL
 * documents and dies without closing leaves the last two calls' waiting,
 * and a read-only open finds every document. */
static void test_mirrored_add_many(void **state)
{
    db_fixture *fx = *state;
    oracle_rng r = {777};
    enum { NQ = 12, MAXD = 5, NBASE = MANY_N - NQ * (MAXD + 1) };
    uint64_t *fps = malloc(MANY_N * sizeof *fps), qs[NQ];
    assert_non_null(fps);
    assert_int_equal(oracle_make(&r, fps, NBASE, qs, NQ, MAXD), MANY_N);
    crash_after(fx, add_three_calls, fps);

    nd_db *db = fx->db = open_flags(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, MANY_SECOND + DB_MIRRORED_CALL);
    check_all(db, fps, MANY_N, qs, NQ, MAXD); /* the planted neighbours: the last call's */
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, MANY_N);
    for (unsigned t = 0; t < 4; t++) assert_int_equal(st.table[t].entries, st.fingerprints);
    assert_int_equal(nd_db_verify(db), ND_OK);
    free(fps);
}

/* ---- open errors, verify, expire, backup ------------------------------ */

static void test_open_errors(void **state)
{
    db_fixture *fx = *state;
    char plain[128], cp[128];
    nd_db *db, *db2;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_ENOTFOUND);
    db = fx->db = open_db(fx->path, 3, 10, 16);
    assert_int_equal(nd_db_add(db, "x", 1, 42, 0, 0), ND_OK);
    o.flags = 0;
    assert_int_equal(nd_db_open(&db2, fx->path, &o), ND_EBUSY);
    /* a second handle in this process is told so, not "another process" */
    char want[256];
    snprintf(want, sizeof want, "%s is open for writing by this process (another handle)",
             fx->path);
    assert_string_equal(nd_errmsg(), want);
    assert_string_equal(nd_strerror(ND_EBUSY), "database is busy");
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&db2, fx->path, &o), ND_OK);
    nd_results *res = fx->res;
    assert_int_equal(nd_db_get(res, db2, "x", 1), ND_OK);
    assert_int_equal(nd_db_add(db2, "y", 1, 1, 0, 0), ND_EREADONLY);
    nd_db_close(db2);
    snprintf(cp, sizeof cp, "%s/backup", fx->dir);
    assert_int_equal(nd_db_backup(db, cp), ND_OK);
    assert_int_equal(nd_db_backup(db, cp), ND_EEXIST);
    db_fixture_close(fx);
    /* Mismatches. */
    o = (nd_db_options)ND_DB_OPTIONS_INIT;
    o.has_k = 1;
    o.k = 2;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EMISMATCH);
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    fo.features = ND_FEATURES_CHARS;
    o = (nd_db_options)ND_DB_OPTIONS_INIT;
    o.fp = &fo;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EMISMATCH);
    assert_non_null(strstr(nd_errmsg(), "chars"));
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_EXCL;
    o.fp = NULL;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EEXIST);
    /* The backup opens and holds the document. */
    o = (nd_db_options)ND_DB_OPTIONS_INIT;
    assert_int_equal(nd_db_open(&fx->db, cp, &o), ND_OK);
    assert_int_equal(nd_db_get(res, fx->db, "x", 1), ND_OK);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    db_fixture_close(fx);
    /* A plain directory is not a database. */
    snprintf(plain, sizeof plain, "%s/plain", fx->dir);
    mkdir(plain, 0755);
    FILE *f = fopen(strcat(strcpy(cp, plain), "/CURRENT"), "w");
    fclose(f);
    o.flags = 0;
    assert_int_not_equal(nd_db_open(&db, plain, &o), ND_OK);
}

static void touch(const char *dir, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

/* One refusal rule, in the library: a store is created in a new or empty
 * directory (or over what RocksDB leaves of a creation that did not
 * finish), never beside other files; a directory of a database's files
 * without CURRENT is damage, not a place to create. */
static void test_create_refusal(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = NULL;
    char d[128], file[160];
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY;
    snprintf(d, sizeof d, "%s/busy", fx->dir);
    assert_int_equal(mkdir(d, 0755), 0);
    touch(d, "notes.txt");
    assert_int_equal(nd_db_open(&db, d, &o), ND_EEXIST);
    assert_null(db);
    assert_non_null(strstr(nd_errmsg(), "is not empty"));
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_EXCL;
    assert_int_equal(nd_db_open(&db, d, &o), ND_EEXIST);
    o.flags = 0;
    assert_int_equal(nd_db_open(&db, d, &o), ND_ENOTFOUND); /* nothing was made there */
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY;
    snprintf(file, sizeof file, "%s/notes.txt", d);
    assert_int_equal(nd_db_open(&db, file, &o), ND_EEXIST);
    assert_non_null(strstr(nd_errmsg(), "is not a directory"));
    /* An empty directory, and one holding only what RocksDB writes
     * before CURRENT, are places to create. */
    snprintf(d, sizeof d, "%s/empty", fx->dir);
    assert_int_equal(mkdir(d, 0755), 0);
    assert_int_equal(nd_db_open(&db, d, &o), ND_OK);
    nd_db_close(db);
    snprintf(d, sizeof d, "%s/unfinished", fx->dir);
    assert_int_equal(mkdir(d, 0755), 0);
    touch(d, "LOCK");
    touch(d, "IDENTITY");
    touch(d, "MANIFEST-000001");
    assert_int_equal(nd_db_open(&db, d, &o), ND_OK);
    assert_int_equal(nd_db_add(db, "x", 1, 42, 0, 0), ND_OK);
    nd_db_close(db);
    /* An existing store opens with CREATE (and only EXCL refuses it). */
    assert_int_equal(nd_db_open(&db, d, &o), ND_OK);
    assert_int_equal(nd_db_get(fx->res, db, "x", 1), ND_OK);
    nd_db_close(db);
    /* Its files without CURRENT: damage, reported as such, created over by
     * nobody. */
    snprintf(file, sizeof file, "%s/CURRENT", d);
    assert_int_equal(unlink(file), 0);
    assert_int_equal(nd_db_open(&db, d, &o), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "no CURRENT"));
    o.flags = 0;
    assert_int_equal(nd_db_open(&db, d, &o), ND_ECORRUPT);
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&db, d, &o), ND_ECORRUPT);
}

typedef struct expire_seen {
    uint64_t n;
    int64_t max_time;
    int bad_keys;
} expire_seen;

static int count_expired(const nd_doc *d, void *payload)
{
    expire_seen *e = payload;
    char want[32];
    /* key e<i> was added with time i */
    snprintf(want, sizeof want, "e%lld", (long long)d->time);
    if (d->key_len != strlen(want) || memcmp(d->key, want, d->key_len) != 0) e->bad_keys++;
    if (e->n == 0 || d->time > e->max_time) e->max_time = d->time;
    e->n++;
    return 0;
}

static int stop_at_first(const nd_doc *d, void *payload)
{
    (void)d;
    (void)payload;
    return 7;
}

static void test_expire(void **state)
{
    db_fixture *fx = *state;
    char key[32];
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 16);
    oracle_rng g = {9};
    for (int i = 0; i < 500; i++) {
        sprintf(key, "e%d", i);
        assert_int_equal(nd_db_add(db, key, strlen(key), oracle_next(&g), 0, i), ND_OK);
    }
    /* The dry run lists exactly what nd_db_expire then deletes, deleting
     * nothing itself. */
    expire_seen seen = {0, 0, 0};
    assert_int_equal(nd_db_foreach_expired(db, 200, count_expired, &seen), ND_OK);
    assert_int_equal(seen.n, 200);
    assert_true(seen.max_time < 200);
    assert_int_equal(seen.bad_keys, 0);
    uint64_t n = 0;
    assert_int_equal(nd_db_counts(&n, NULL, db), ND_OK);
    assert_int_equal(n, 500);
    assert_int_equal(nd_db_foreach_expired(db, 200, stop_at_first, NULL), 7);
    assert_int_equal(nd_db_expire(&n, db, 200), ND_OK);
    assert_int_equal(n, 200);
    seen = (expire_seen){0, 0, 0};
    assert_int_equal(nd_db_foreach_expired(db, 200, count_expired, &seen), ND_OK);
    assert_int_equal(seen.n, 0);
    nd_results *res = fx->res;
    assert_int_equal(nd_db_get(res, db, "e199", 4), ND_ENOTFOUND);
    assert_int_equal(nd_db_get(res, db, "e200", 4), ND_OK);
    assert_int_equal(nd_db_compact(db), ND_OK);
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, 300);
    assert_int_equal(st.table[0].entries, 300);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* Stop words given at creation are recorded: after reopening, the
 * database's options fingerprint texts exactly as at creation. */
static void test_stopwords_kept(void **state)
{
    db_fixture *fx = *state;
    const char *stop[] = {"the", "a", "of"};
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    fo.stopwords = stop;
    fo.n_stopwords = 3;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.fp = &fo;
    nd_db *db = NULL;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.flags = 0;
    o.fp = NULL;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    nd_fp_options got;
    assert_int_equal(nd_db_fp_options(&got, fx->db), ND_OK);
    assert_int_equal(got.n_stopwords, 3);
    assert_string_equal(got.stopwords[1], "a");
    const char *text = "the quick brown fox of the hills jumps over a lazy dog again and again";
    uint64_t want, have, plain;
    assert_int_equal(nd_fingerprint(&want, text, strlen(text), &fo), ND_OK);
    assert_int_equal(nd_fingerprint(&have, text, strlen(text), &got), ND_OK);
    assert_int_equal(nd_fingerprint(&plain, text, strlen(text), NULL), ND_OK);
    assert_true(want == have);
    assert_true(want != plain); /* the words made a difference */
    /* Asking for the same configuration matches; without stop words not. */
    db_fixture_close(fx);
    o.fp = &fo;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    db_fixture_close(fx);
    nd_fp_options none = ND_FP_OPTIONS_INIT;
    o.fp = &none;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EMISMATCH);
}

/* ---- fingerprint function version 1 ---------------------------------- */

/* A meta record of the closed database at path (malloc'd string). */
static char *meta_record(const char *path, const char *name)
{
    st_store *s = NULL;
    st_open_opts so = {.readonly = 1};
    assert_int_equal(st_open(&s, path, &so), ND_OK);
    char *v = NULL;
    size_t len;
    assert_int_equal(st_get(s, ST_CF_META, name, strlen(name), &v, &len), ND_OK);
    char *out = malloc(len + 1);
    assert_non_null(out);
    memcpy(out, v, len);
    out[len] = '\0';
    free(v);
    st_close(s);
    return out;
}

/* A store created with version 1 of the fingerprint function (as every
 * store of the builds before version 2: records "fp1;..." and flags
 * without version bits) opens, and what is added to it or asked of it is
 * fingerprinted with version 1, whatever the caller's options say about
 * the version. */
static void test_fp_version1_store(void **state)
{
    db_fixture *fx = *state;
    /* Segmented Chinese: versions 1 and 2 differ on it. */
    const char *orig = "我们的数据库存储指纹并回答查询，近似重复的文档很快就能找到。";
    const char *seg = "我们 的 数据库 存储 指纹 并 回答 查询 ， 近似 重复 的 文档 很快 就 能 找到 。";
    nd_fp_options v1 = ND_FP_OPTIONS_INIT, v2 = ND_FP_OPTIONS_INIT;
    v1.flags = ND_FP_FUNCTION(1);
    v2.flags = ND_FP_FUNCTION(2);
    uint64_t seg1, seg2, orig1, orig2;
    assert_int_equal(nd_fingerprint(&seg1, seg, strlen(seg), &v1), ND_OK);
    assert_int_equal(nd_fingerprint(&seg2, seg, strlen(seg), &v2), ND_OK);
    assert_int_equal(nd_fingerprint(&orig1, orig, strlen(orig), &v1), ND_OK);
    assert_int_equal(nd_fingerprint(&orig2, orig, strlen(orig), NULL), ND_OK);
    assert_true(seg1 != seg2 && seg2 == orig2 && seg1 != orig1);

    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_NO_BACKGROUND;
    o.fp = &v1;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    char *rec = meta_record(fx->path, "fp");
    assert_string_equal(rec, "fp1;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:2");
    free(rec);
    rec = meta_record(fx->path, "fpopts");
    assert_string_equal(rec, "features=0 n=0 flags=0 title=0"); /* as version 1 builds wrote */
    free(rec);

    /* Opens with no options, and with options naming no version. */
    nd_db_options ro = ND_DB_OPTIONS_INIT;
    ro.flags = ND_DB_NO_BACKGROUND;
    nd_fp_options plain = ND_FP_OPTIONS_INIT;
    ro.fp = &plain;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &ro), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    ro.fp = &v2; /* but not with version 2 asked */
    nd_db *db = NULL;
    assert_int_equal(nd_db_open(&db, fx->path, &ro), ND_EMISMATCH);
    ro.fp = NULL;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &ro), ND_OK);
    nd_fp_options got;
    assert_int_equal(nd_db_fp_options(&got, fx->db), ND_OK);
    assert_int_equal(ND_FP_FUNCTION_OF(got.flags), 1);
    uint64_t fp;
    assert_int_equal(nd_fingerprint(&fp, seg, strlen(seg), &got), ND_OK);
    assert_true(fp == seg1);

    /* add and query sign texts with version 1. */
    nd_signature sig, sig_orig;
    assert_int_equal(nd_db_sign(&sig, fx->db, seg, strlen(seg), 0), ND_OK);
    assert_true(sig.fp == seg1);
    assert_int_equal(nd_db_sign(&sig_orig, fx->db, orig, strlen(orig), 0), ND_OK);
    assert_true(sig_orig.fp == orig1);
    nd_doc doc = {.key = "seg", .key_len = 3, .fp = sig.fp, .sketch = &sig.sketch};
    assert_int_equal(nd_db_add_doc_if_new(fx->res, fx->db, &doc, 3), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 0);
    assert_int_equal(nd_db_query(fx->res, fx->db, seg1, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 1);
    assert_int_equal(nd_db_get(fx->res, fx->db, "seg", 3), ND_OK);
    assert_true(nd_results_get(fx->res, 0)->fp == seg1);
    assert_int_equal(db_fixture_close(fx), ND_OK);

    /* A store of default options computes version 2. */
    char path2[160];
    snprintf(path2, sizeof path2, "%s/v2", fx->dir);
    o.fp = NULL;
    assert_int_equal(nd_db_open(&fx->db, path2, &o), ND_OK);
    assert_int_equal(nd_db_sign(&sig, fx->db, seg, strlen(seg), 0), ND_OK);
    assert_true(sig.fp == seg2);
    assert_int_equal(nd_db_fp_options(&got, fx->db), ND_OK);
    assert_int_equal(ND_FP_FUNCTION_OF(got.flags), 2);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    rec = meta_record(path2, "fp");
    assert_true(strncmp(rec, "fp2;", 4) == 0);
    free(rec);
    ro.fp = &v1;
    assert_int_equal(nd_db_open(&db, path2, &ro), ND_EMISMATCH);
}

/* ---- format 1 databases ----------------------------------------------- */

/* The "format" meta record of the database at path (closed), as a number;
 * with set != 0, overwrite it with set first. */
static unsigned meta_format(const char *path, unsigned set)
{
    st_store *s = NULL;
    st_open_opts so = {0};
    assert_int_equal(st_open(&s, path, &so), ND_OK);
    if (set) {
        char buf[16];
        st_batch *b = NULL;
        snprintf(buf, sizeof buf, "%u", set);
        assert_int_equal(st_batch_new(&b, s), ND_OK);
        assert_int_equal(st_batch_put(b, ST_CF_META, "format", 6, buf, strlen(buf)), ND_OK);
        assert_int_equal(st_write(s, b, 1), ND_OK);
        st_batch_free(b);
    }
    char *v = NULL;
    size_t len;
    assert_int_equal(st_get(s, ST_CF_META, "format", 6, &v, &len), ND_OK);
    unsigned f = (unsigned)strtoul(v, NULL, 10);
    free(v);
    st_close(s);
    return f;
}

/* Count the runs of every table of the closed database at path by the
 * codec version in their first byte. */
static void count_runs(const char *path, size_t *v1, size_t *v2)
{
    st_store *s = NULL;
    st_open_opts so = {.readonly = 1};
    *v1 = *v2 = 0;
    assert_int_equal(st_open(&s, path, &so), ND_OK);
    for (unsigned t = 0; t < st_ntables(s); t++) {
        st_iter *it = NULL;
        assert_int_equal(st_iter_new(&it, s, ST_CF_TABLE(t), NULL, 1), ND_OK);
        for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
            size_t klen, vlen;
            const char *k = st_iter_key(it, &klen);
            const char *v = st_iter_value(it, &vlen);
            if (klen != 9 || k[0] != 'R') continue;
            assert_true(vlen >= 2);
            unsigned version = (unsigned char)v[0] & 0x0f;
            assert_true(version == 1 || version == 2);
            if (version == 1) (*v1)++;
            else (*v2)++;
        }
        assert_int_equal(st_iter_status(it), ND_OK);
        st_iter_free(it);
    }
    st_close(s);
}

static void test_format1_database(void **state)
{
    db_fixture *fx = *state;
    char key[32];
    oracle_rng r = {4242};
    enum { NBASE = 3000, NQ = 12, K = 3 };
    uint64_t fps[NBASE + NQ * (K + 3)], qs[NQ];
    size_t n = oracle_make(&r, fps, NBASE, qs, NQ, K + 2), first = n * 2 / 3, v1, v2;

    /* What a format-1 build wrote: version 1 runs, format record 1, and a
     * few fresh entries not yet folded. */
    unsigned was = cmp_codec_write_version(1);
    fx->db = open_db(fx->path, K, 4, 16);
    for (size_t i = 0; i < first; i++) {
        key_of(key, i);
        assert_int_equal(nd_db_add(fx->db, key, strlen(key), fps[i], 0, 0), ND_OK);
        if (i == first - 50) assert_int_equal(nd_db_compact(fx->db), ND_OK);
    }
    assert_int_equal(db_fixture_close(fx), ND_OK);
    cmp_codec_write_version(was);
    assert_int_equal(meta_format(fx->path, 1), 1);
    count_runs(fx->path, &v1, &v2);
    assert_true(v1 > 100);
    assert_int_equal(v2, 0);

    /* Read-only: every answer, and the format stays 1. */
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    check_all(fx->db, fps, first, qs, NQ, K);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    db_fixture_close(fx);
    assert_int_equal(meta_format(fx->path, 0), 1);

    /* Open for writing: upgraded at once; writes and folds mix versions. */
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    check_all(fx->db, fps, first, qs, NQ, K);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    assert_int_equal(meta_format(fx->path, 0), ND_FORMAT_VERSION);
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    for (size_t i = first; i < n; i++) {
        key_of(key, i);
        assert_int_equal(nd_db_add(fx->db, key, strlen(key), fps[i], 0, 0), ND_OK);
        if (i == first + (n - first) / 2) {
            assert_int_equal(nd_db_compact(fx->db), ND_OK);
            check_all(fx->db, fps, i + 1, qs, NQ, K);
        }
    }
    check_all(fx->db, fps, n, qs, NQ, K);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    count_runs(fx->path, &v1, &v2);
    assert_true(v1 > 0 && v2 > 0); /* both versions were read above */

    /* Reopened: the same answers, read-only and after a full compaction. */
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    check_all(fx->db, fps, n, qs, NQ, K);
    db_fixture_close(fx);
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_compact(fx->db), ND_OK);
    check_all(fx->db, fps, n, qs, NQ, K);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    db_fixture_close(fx);
    assert_int_equal(meta_format(fx->path, 0), ND_FORMAT_VERSION);

    /* A newer format is refused, naming both versions. */
    meta_format(fx->path, ND_FORMAT_VERSION + 1);
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_EVERSION);
    char want[96];
    snprintf(want, sizeof want, "format version %u; this build reads 1 to %u",
             ND_FORMAT_VERSION + 1, ND_FORMAT_VERSION);
    assert_non_null(strstr(nd_errmsg(), want));
}

/* ---- rev values ------------------------------------------------------- */

/* Rewrite every rev entry of the closed database at path with value
 * (vlen bytes; 0: empty, as format 2 wrote them). */
static void rev_values_set(const char *path, const void *value, size_t vlen)
{
    st_store *s = NULL;
    st_open_opts so = {0};
    st_iter *it = NULL;
    st_batch *b = NULL;
    assert_int_equal(st_open(&s, path, &so), ND_OK);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    assert_int_equal(st_iter_new(&it, s, ST_CF_REV, NULL, 1), ND_OK);
    size_t n = 0;
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it), n++) {
        size_t klen;
        const char *k = st_iter_key(it, &klen);
        assert_int_equal(st_batch_put(b, ST_CF_REV, k, klen, value, vlen), ND_OK);
    }
    assert_int_equal(st_iter_status(it), ND_OK);
    assert_true(n > 0);
    st_iter_free(it);
    assert_int_equal(st_write(s, b, 1), ND_OK);
    st_batch_free(b);
    st_close(s);
}

/* The one document of fp that nd_db_query(k=0) returns: key, score, time. */
static void expect_doc(nd_db *db, uint64_t fp, const char *key, double score, int64_t time)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    assert_int_equal(nd_db_query(res, db, fp, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 1);
    const nd_match *m = nd_results_get(res, 0);
    assert_int_equal(m->key_len, strlen(key));
    assert_memory_equal(m->key, key, m->key_len);
    assert_true(m->score == score);
    assert_int_equal(m->time, time);
    nd_results_free(res);
}

static void test_rev_values(void **state)
{
    db_fixture *fx = *state;
    char key[32];
    enum { N = 200 };
    uint64_t fps[N + 1];
    oracle_rng r = {777};
    for (size_t i = 0; i <= N; i++) fps[i] = oracle_next(&r);
    fx->db = open_db(fx->path, 3, 4, 16);
    for (size_t i = 0; i < N; i++) {
        key_of(key, i);
        assert_int_equal(nd_db_add(fx->db, key, strlen(key), fps[i], (double)i / 4, (int64_t)i * 10),
                         ND_OK);
    }
    assert_int_equal(db_fixture_close(fx), ND_OK);

    /* What a format-2 build wrote: empty rev values, read through docs. */
    rev_values_set(fx->path, "", 0);
    meta_format(fx->path, 2);
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    for (size_t i = 0; i < N; i++) {
        key_of(key, i);
        expect_doc(fx->db, fps[i], key, (double)i / 4, (int64_t)i * 10);
    }
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    db_fixture_close(fx);
    assert_int_equal(meta_format(fx->path, 0), 2);

    /* Written to: format 3. A new score and time (same fingerprint) and a
     * move to another fingerprint reach the query through rev; the
     * entries left empty still read through docs. */
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_add(fx->db, "d1", 2, fps[1], 100.5, 1001), ND_OK);
    assert_int_equal(nd_db_add(fx->db, "d2", 2, fps[N], 200.5, 2002), ND_OK);
    nd_results *res = fx->res;
    /* add_if_new of a stored document: its time is refreshed, score kept */
    assert_int_equal(nd_db_add_if_new(res, fx->db, "d3", 2, fps[3], 0, 3003, 3), ND_OK);
    assert_int_equal(nd_db_query(res, fx->db, fps[2], 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 0);
    expect_doc(fx->db, fps[1], "d1", 100.5, 1001);
    expect_doc(fx->db, fps[N], "d2", 200.5, 2002);
    /* d2's rev entry now holds a value: both paths must rewrite it */
    assert_int_equal(nd_db_add(fx->db, "d2", 2, fps[N], 250.5, 2502), ND_OK);
    expect_doc(fx->db, fps[N], "d2", 250.5, 2502);
    assert_int_equal(nd_db_add_if_new(res, fx->db, "d2", 2, fps[N], 0, 2602, 3), ND_OK);
    expect_doc(fx->db, fps[N], "d2", 250.5, 2602);
    expect_doc(fx->db, fps[3], "d3", 3.0 / 4, 3003);
    expect_doc(fx->db, fps[4], "d4", 1.0, 40);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    assert_int_equal(nd_db_compact(fx->db), ND_OK);
    expect_doc(fx->db, fps[1], "d1", 100.5, 1001);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    assert_int_equal(meta_format(fx->path, 0), ND_FORMAT_VERSION);

    /* A rev value that disagrees with docs fails verify; one of a wrong
     * length fails the query, naming the family. */
    uint8_t bad[DB_REV_VALUE_LEN] = {0};
    bad[DB_REV_VALUE_LEN - 1] = 1;
    rev_values_set(fx->path, bad, sizeof bad);
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_verify(fx->db), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "rev entry holds another score or time"));
    db_fixture_close(fx);
    rev_values_set(fx->path, "abc", 3);
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_query(res, fx->db, fps[5], 0, NULL), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "rev entry value of 3 bytes"));
    db_fixture_close(fx);

    /* Expired by a new generation with the rev values empty again: each
     * entry's time is read from docs (d1, d2, d3 were refreshed). */
    rev_values_set(fx->path, "", 0);
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    uint64_t gone = 0, docs;
    assert_int_equal(db_expire(&gone, fx->db, 500, DB_EXPIRE_REWRITE), ND_OK);
    assert_int_equal(gone, 47);
    assert_int_equal(nd_db_counts(&docs, NULL, fx->db), ND_OK);
    assert_int_equal(docs, N - 47);
    assert_int_equal(nd_db_query(res, fx->db, fps[10], 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 0);
    expect_doc(fx->db, fps[1], "d1", 100.5, 1001);
    expect_doc(fx->db, fps[60], "d60", 60.0 / 4, 600);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_rev_values),
        DB_FIXTURE_TEST(test_exact_k0),
        DB_FIXTURE_TEST(test_exact_k1),
        DB_FIXTURE_TEST(test_exact_k2),
        DB_FIXTURE_TEST(test_exact_k3),
        DB_FIXTURE_TEST(test_exact_k4),
        DB_FIXTURE_TEST(test_exact_k6),
        DB_FIXTURE_TEST(test_documents),
        DB_FIXTURE_TEST(test_add_many_replacing),
        DB_FIXTURE_TEST(test_add_if_new_race),
        DB_FIXTURE_TEST(test_threads_unrelated),
        DB_FIXTURE_TEST(test_write_lock),
        DB_FIXTURE_TEST(test_open_errors),
        DB_FIXTURE_TEST(test_create_refusal),
        DB_FIXTURE_TEST(test_stream_races),
        cmocka_unit_test(test_fold_threshold_default),
        DB_FIXTURE_TEST(test_fold_across_opens),
        DB_FIXTURE_TEST(test_expire),
        DB_FIXTURE_TEST(test_stopwords_kept),
        DB_FIXTURE_TEST(test_fp_version1_store),
        DB_FIXTURE_TEST(test_format1_database),
        DB_FIXTURE_TEST(test_mirrored_after_crash),
        DB_FIXTURE_TEST(test_mirrored_add_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
