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
 * Opening, crashes and errors: test_db_open.c; older formats:
 * test_db_format.c.
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
#include "db_oracle.h"
#include "neardup.h"
#include "oracle.h"
#include "storage.h"
#include "tmpdir.h"

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


int main(void)
{
    const struct CMUnitTest tests[] = {
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
        DB_FIXTURE_TEST(test_stream_races),
        cmocka_unit_test(test_fold_threshold_default),
        DB_FIXTURE_TEST(test_fold_across_opens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
