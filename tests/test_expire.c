/*
 * test_expire.c — nd_db_expire against the brute-force oracle, and the
 * group deletion under it (db_txn_stage_delete_many).
 *
 * A store with planted neighbours at every distance 0..k+2, fingerprints
 * shared by two documents (one of them expiring, or both), table entries
 * in every state a deletion meets — folded runs (small: many), fresh
 * keys, and the mirror's logged entries — and more expiring documents
 * than one group holds: after the expiry every query at every distance
 * returns exactly the surviving documents a scan finds, the counters and
 * verify agree, and so they do again after a reopen and a compact.
 *
 * The rewrite also on one thread; the sample that may choose it counts
 * what it reads exactly.
 *
 * The group call itself skips a key not stored and a document refreshed
 * since it was chosen, deletes each key once when a fingerprint loses all
 * its documents in one group, and leaves a fingerprint in the tables while
 * one of its documents stays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "db_core.h"
#include "db_expire.h"
#include "db_fixture.h"
#include "db_txn.h"
#include "expire_walk.h"
#include "neardup.h"
#include "oracle.h"
#include "sort.h"

#define OLD 100   /* last-seen time of the documents that expire */
#define NEW 5000  /* and of those that stay */
#define BEFORE 1000

typedef struct doc {
    char key[24];
    uint64_t fp;
    int64_t time;
} doc;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every query of qs at every distance 0..k+2, and random ones: the keys
 * nd_db_query returns are those of the surviving documents within the
 * distance. */
static void check_queries_before(nd_db *db, const doc *docs, size_t n, const uint64_t *qs,
                                 size_t nq, unsigned k, nd_results *res, int64_t before)
{
    const char **want = malloc(n * sizeof *want), **got = malloc(n * sizeof *got);
    oracle_rng r = {77};
    for (size_t q = 0; q < nq + 20; q++) {
        uint64_t fp = q < nq ? qs[q] : oracle_next(&r);
        for (unsigned kq = 0; kq <= k + 2; kq++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (docs[i].time >= before && nd_hamming(docs[i].fp, fp) <= kq)
                    want[m++] = docs[i].key;
            nd_query_options qo = ND_QUERY_OPTIONS_INIT;
            qo.limit = 0;
            assert_int_equal(nd_db_query(res, db, fp, kq, &qo), ND_OK);
            assert_int_equal(nd_results_count(res), m);
            for (size_t i = 0; i < m; i++) got[i] = (const char *)nd_results_get(res, i)->key;
            qsort(want, m, sizeof *want, cmp_str);
            qsort(got, m, sizeof *got, cmp_str);
            for (size_t i = 0; i < m; i++) assert_string_equal(want[i], got[i]);
        }
    }
    free(want);
    free(got);
}

static void check_queries(nd_db *db, const doc *docs, size_t n, const uint64_t *qs, size_t nq,
                          unsigned k, nd_results *res)
{
    check_queries_before(db, docs, n, qs, nq, k, res, BEFORE);
}

/* The counters: documents last seen at before or later and their
 * distinct fingerprints. */
static void check_counts_before(nd_db *db, const doc *docs, size_t n, int64_t before)
{
    uint64_t *fps = malloc(n * sizeof *fps), want_docs = 0, want_fps = 0, got_docs, got_fps;
    for (size_t i = 0; i < n; i++)
        if (docs[i].time >= before) fps[want_docs++] = docs[i].fp;
    qsort(fps, want_docs, sizeof *fps, sort_cmp_u64);
    for (size_t i = 0; i < want_docs; i++) want_fps += i == 0 || fps[i] != fps[i - 1];
    assert_int_equal(nd_db_counts(&got_docs, &got_fps, db), ND_OK);
    assert_int_equal(got_docs, want_docs);
    assert_int_equal(got_fps, want_fps);
    free(fps);
}

static void check_counts(nd_db *db, const doc *docs, size_t n)
{
    check_counts_before(db, docs, n, BEFORE);
}

/* 0: one per CPU; 1: everything on the caller's thread */
static unsigned store_threads;

static nd_db *open_store(const char *path)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.threads = store_threads;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.expected_docs = 100000;
    o.k = 3;
    o.tables = 4;
    o.run_size = 16;
    o.fold_threshold = UINT64_MAX; /* the test places fresh entries itself */
    assert_int_equal(nd_db_open(&db, path, &o), ND_OK);
    return db;
}

static void expire_oracle(void **state, int how)
{
    db_fixture *fx = *state;
    enum { NBASE = 30000, NQ = 12, K = 3 };
    size_t cap = (NBASE + NQ * (K + 3)) * 2;
    doc *docs = calloc(cap, sizeof *docs);
    uint64_t *fps = malloc(cap * sizeof *fps), qs[NQ];
    oracle_rng r = {4242};
    size_t nf = oracle_make(&r, fps, NBASE, qs, NQ, K + 2), n = 0;
    /* Each fingerprint's document: two thirds expire. Every fifth has a
     * second document: kept when the first expires (the fingerprint
     * stays), expiring too when it is kept, or both going. */
    for (size_t i = 0; i < nf; i++) {
        docs[n] = (doc){.fp = fps[i], .time = i % 3 ? OLD : NEW};
        sprintf(docs[n++].key, "d%zu", i);
        if (i % 5 == 0) {
            docs[n] = (doc){.fp = fps[i], .time = i % 2 ? OLD : NEW};
            sprintf(docs[n++].key, "x%zu", i);
        }
    }
    nd_db *db = fx->db = open_store(fx->path);
    /* The first half in large calls, then folded into runs; a quarter in
     * large calls left fresh; the rest one by one (the mirror's log). */
    nd_doc *batch = malloc(n * sizeof *batch);
    for (size_t i = 0; i < n; i++)
        batch[i] = (nd_doc){docs[i].key, strlen(docs[i].key), docs[i].fp, 1.0, docs[i].time, NULL};
    size_t half = n / 2, three = 3 * n / 4;
    for (size_t at = 0; at < half; at += 5000)
        assert_int_equal(nd_db_add_many(db, batch + at, at + 5000 < half ? 5000 : half - at), ND_OK);
    assert_int_equal(nd_db_compact(db), ND_OK);
    for (size_t at = half; at < three; at += 5000)
        assert_int_equal(nd_db_add_many(db, batch + at, at + 5000 < three ? 5000 : three - at),
                         ND_OK);
    for (size_t i = three; i < n; i++) assert_int_equal(nd_db_add_many(db, batch + i, 1), ND_OK);
    free(batch);

    size_t expiring = 0;
    for (size_t i = 0; i < n; i++) expiring += docs[i].time < BEFORE;
    assert_true(expiring > 16384); /* more than one group */
    uint64_t gone = 0, gen_before = st_generation(db->store);
    assert_int_equal(db_expire(&gone, db, BEFORE, how), ND_OK);
    /* groups stay in the generation; a rewrite (the choice here: two
     * thirds expire) makes a new one */
    assert_true(how == DB_EXPIRE_GROUPS ? st_generation(db->store) == gen_before : st_generation(db->store) > gen_before);
    assert_int_equal(gone, expiring);
    check_counts(db, docs, n);
    assert_int_equal(nd_db_verify(db), ND_OK);
    check_queries(db, docs, n, qs, NQ, K, fx->res);
    assert_int_equal(nd_db_get(fx->res, db, "d1", 2), ND_ENOTFOUND);
    assert_int_equal(nd_db_get(fx->res, db, "d0", 2), ND_OK);

    /* Reopened, then compacted: the same answers. */
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = open_store(fx->path);
    check_counts(db, docs, n);
    check_queries(db, docs, n, qs, NQ, K, fx->res);
    assert_int_equal(nd_db_compact(db), ND_OK);
    assert_int_equal(nd_db_verify(db), ND_OK);
    check_queries(db, docs, n, qs, NQ, K, fx->res);
    /* Nothing left to expire. */
    assert_int_equal(nd_db_expire(&gone, db, BEFORE), ND_OK);
    assert_int_equal(gone, 0);
    free(docs);
    free(fps);
}

/* st_table_rewrite_without refuses a value the table does not hold and
 * values out of order; a generation never switched to is dropped, the
 * store as it was. */
static void test_rewrite_without_refuses(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path);
    const uint64_t fps[3] = {0x0123456789abcdefull, 0xfedcba9876543210ull, 0x5555aaaa5555aaaaull};
    uint64_t v[3];
    for (int i = 0; i < 3; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(nd_db_add(db, key, strlen(key), fps[i], 1.0, NEW), ND_OK);
        v[i] = nd_perm_apply(&db->plan.table[0], fps[i]);
    }
    assert_int_equal(nd_db_compact(db), ND_OK); /* no fresh entries */
    qsort(v, 3, sizeof *v, sort_cmp_u64);
    uint64_t absent = v[0] + 1, backwards[2] = {v[1], v[0]};
    st_regen *g = NULL;
    assert_int_equal(st_regen_new(&g, db->store), ND_OK);
    assert_int_equal(st_table_rewrite_without(g, db->store, 0, 16, &absent, 1), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "to remove is not stored"));
    st_regen_free(g);
    assert_int_equal(st_regen_new(&g, db->store), ND_OK);
    assert_int_equal(st_table_rewrite_without(g, db->store, 0, 16, backwards, 2), ND_EINVAL);
    st_regen_free(g);
    assert_int_equal(st_regen_new(&g, db->store), ND_OK);
    assert_int_equal(st_table_rewrite_without(g, db->store, 0, 16, v, 2), ND_OK);
    st_regen_free(g);
    assert_int_equal(nd_db_verify(db), ND_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(nd_db_query(fx->res, db, fps[i], 0, NULL), ND_OK);
        assert_int_equal(nd_results_count(fx->res), 1);
    }
}

static void test_expire_groups(void **state) { expire_oracle(state, DB_EXPIRE_GROUPS); }
static void test_expire_rewrite(void **state) { expire_oracle(state, DB_EXPIRE_REWRITE); }
static void test_expire_auto(void **state) { expire_oracle(state, DB_EXPIRE_AUTO); }
/* The walk of rev and the files beside the tables on one thread (the
 * tests above have two wherever the machine has two CPUs) */
static void test_expire_rewrite_one_thread(void **state)
{
    store_threads = 1;
    expire_oracle(state, DB_EXPIRE_REWRITE);
    store_threads = 0;
}

/* expire_walk_sample, the choice's estimate: reads the whole of a small
 * store's rev, and counts exactly what has expired in it. Every fourth
 * document old; then none, then all. */
static void test_expire_sample(void **state)
{
    db_fixture *fx = *state;
    enum { N = 20000 };
    nd_db *db = fx->db = open_store(fx->path);
    oracle_rng r = {77};
    nd_doc *batch = malloc(N * sizeof *batch);
    char (*keys)[16] = malloc(N * sizeof *keys);
    for (size_t i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "s%zu", i);
        batch[i] = (nd_doc){keys[i], strlen(keys[i]), oracle_next(&r), 1.0, i % 4 ? NEW : OLD, NULL};
    }
    assert_int_equal(nd_db_add_many(db, batch, N), ND_OK);
    uint64_t seen = 0, old = 0;
    assert_int_equal(expire_walk_sample(db, BEFORE, &seen, &old), ND_OK);
    assert_true(seen >= N);     /* each spot reads on into the next */
    assert_true(seen <= 64 * 1024);
    assert_true(old * 4 > seen * 9 / 10 && old * 4 < seen * 11 / 10);
    assert_int_equal(expire_walk_sample(db, OLD, &seen, &old), ND_OK);
    assert_int_equal(old, 0);
    assert_int_equal(expire_walk_sample(db, NEW + 1, &seen, &old), ND_OK);
    assert_int_equal(old, seen);
    free(batch);
    free(keys);
}

/* Expiries that carry docs and rev (a generation of the tables only) one
 * after another, then a bulk load's generation that writes docs and rev
 * anew, then a third expiry: every step exact against the oracle, and
 * after a reopen. Times: a third at OLD, a third at MID, a third NEW. */
#define MID 2000
static void test_expire_carried_twice(void **state)
{
    db_fixture *fx = *state;
    enum { NBASE = 24000, NQ = 12, K = 3 };
    oracle_rng r = {4343};
    size_t cap = NBASE + NQ * (K + 3);
    uint64_t qs[NQ], *fps = malloc(cap * sizeof *fps);
    size_t N = oracle_make(&r, fps, NBASE, qs, NQ, K + 2);
    doc *docs = malloc((N + N / 4) * sizeof *docs);
    nd_doc *batch = malloc((N + N / 4) * sizeof *batch);
    uint64_t old = 0, mid = 0;
    for (size_t i = 0; i < N; i++) {
        docs[i] = (doc){.fp = fps[i], .time = i % 3 == 0 ? OLD : i % 3 == 1 ? MID : NEW};
        old += i % 3 == 0;
        mid += i % 3 == 1;
        sprintf(docs[i].key, "d%zu", i);
        batch[i] = (nd_doc){docs[i].key, strlen(docs[i].key), docs[i].fp, 1.0, docs[i].time, NULL};
    }
    nd_db *db = fx->db = open_store(fx->path);
    assert_int_equal(nd_db_add_many(db, batch, N), ND_OK);
    uint64_t gone, gen = st_generation(db->store);
    assert_int_equal(db_expire(&gone, db, BEFORE, DB_EXPIRE_REWRITE), ND_OK);
    assert_int_equal(gone, old);
    assert_int_equal(st_generation(db->store), gen + 1);
    check_counts_before(db, docs, N, BEFORE);
    assert_int_equal(nd_db_verify(db), ND_OK);
    check_queries_before(db, docs, N, qs, NQ, K, fx->res, BEFORE);
    assert_int_equal(db_expire(&gone, db, MID + 1, DB_EXPIRE_REWRITE), ND_OK);
    assert_int_equal(gone, mid);
    assert_int_equal(st_generation(db->store), gen + 2);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = open_store(fx->path);
    check_counts_before(db, docs, N, MID + 1);
    assert_int_equal(nd_db_verify(db), ND_OK);
    check_queries_before(db, docs, N, qs, NQ, K, fx->res, MID + 1);

    /* A load of N / 4 more, old ones among them, then their expiry. */
    size_t m = N;
    for (size_t i = 0; i < N / 4; i++, m++) {
        docs[m] = (doc){.fp = oracle_next(&r), .time = i % 2 ? OLD : NEW};
        sprintf(docs[m].key, "e%zu", i);
        batch[m] = (nd_doc){docs[m].key, strlen(docs[m].key), docs[m].fp, 1.0, docs[m].time, NULL};
    }
    nd_loader *l;
    uint64_t added;
    assert_int_equal(nd_loader_new(&l, db, 0), ND_OK);
    assert_int_equal(nd_loader_add(l, batch + N, N / 4), ND_OK);
    assert_int_equal(nd_loader_finish(&added, l), ND_OK);
    nd_loader_free(l);
    assert_int_equal(added, N / 4);
    assert_true(st_generation(db->store) > gen + 2);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(db_expire(&gone, db, MID + 1, DB_EXPIRE_REWRITE), ND_OK);
    assert_int_equal(gone, N / 4 / 2);
    check_counts_before(db, docs, m, MID + 1);
    assert_int_equal(nd_db_verify(db), ND_OK);
    check_queries_before(db, docs, m, qs, NQ, K, fx->res, MID + 1);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = open_store(fx->path);
    check_counts_before(db, docs, m, MID + 1);
    check_queries_before(db, docs, m, qs, NQ, K, fx->res, MID + 1);
    free(batch);
    free(docs);
    free(fps);
}

static void test_group_call(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path);
    /* a and b share a fingerprint, c has one of its own, d is refreshed */
    nd_doc in[] = {
        {"a", 1, 0x1111, 0, OLD, NULL},
        {"b", 1, 0x1111, 0, OLD, NULL},
        {"c", 1, 0x2222, 0, OLD, NULL},
        {"d", 1, 0x3333, 0, NEW, NULL},
        {"e", 1, 0x4444, 0, OLD, NULL},
        {"f", 1, 0x4444, 0, NEW, NULL},
    };
    assert_int_equal(nd_db_add_many(db, in, 6), ND_OK);
    assert_int_equal(nd_db_compact(db), ND_OK);
    const char *keys[] = {"a", "b", "c", "d", "e", "missing"};
    size_t lens[] = {1, 1, 1, 1, 1, 7}, done = 99;
    int64_t before = BEFORE;
    db_txn t = {0};
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_int_equal(db_txn_stage_delete_many(&t, keys, lens, 6, &before, &done), ND_OK);
    assert_int_equal(done, 4); /* not d (refreshed), not the missing key */
    assert_int_equal(db_txn_commit(&t), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    uint64_t ndocs, nfps;
    assert_int_equal(nd_db_counts(&ndocs, &nfps, db), ND_OK);
    assert_int_equal(ndocs, 2);
    assert_int_equal(nfps, 2);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(nd_db_query(fx->res, db, 0x1111, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 0);
    assert_int_equal(nd_db_query(fx->res, db, 0x4444, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 1);
    assert_string_equal((const char *)nd_results_get(fx->res, 0)->key, "f");
    /* Without a time, every stored key goes; nd_db_delete is the call of one. */
    const char *rest[] = {"d", "f"};
    size_t rlens[] = {1, 1};
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_int_equal(db_txn_stage_delete_many(&t, rest, rlens, 2, NULL, &done), ND_OK);
    assert_int_equal(done, 2);
    assert_int_equal(db_txn_commit(&t), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    assert_int_equal(nd_db_counts(&ndocs, &nfps, db), ND_OK);
    assert_int_equal(ndocs, 0);
    assert_int_equal(nfps, 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(nd_db_delete(db, "d", 1), ND_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_expire_groups),
        DB_FIXTURE_TEST(test_expire_rewrite),
        DB_FIXTURE_TEST(test_expire_auto),
        DB_FIXTURE_TEST(test_expire_rewrite_one_thread),
        DB_FIXTURE_TEST(test_expire_sample),
        DB_FIXTURE_TEST(test_expire_carried_twice),
        DB_FIXTURE_TEST(test_group_call),
        DB_FIXTURE_TEST(test_rewrite_without_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
