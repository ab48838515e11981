/*
 * test_load.c — the bulk loader (nd_loader_*) against its contract in
 * neardup.h: one nd_db_import of everything added, written in one pass.
 *
 * Exactness: oracle stores (random fingerprints plus planted neighbours of
 * the query centres at every distance 0..k+2, k = 3) loaded in chunks small
 * enough that several spill (and one case where the last add fills a chunk
 * exactly, so the commit finds the last chunk empty), on the planner's
 * tables and on 10 tables, into an empty database and into one already
 * holding imported documents and fresh (unfolded) nd_db_add'ed ones. Keys are
 * loaded twice or three times across chunks and within a chunk, with
 * superseded fingerprints planted near the query centres (so a leaked one
 * shows). Afterwards: every query at distance 0..k+2 returns exactly the
 * documents a popcount scan finds in the expected final document set;
 * nd_db_foreach_doc visits exactly that set (fingerprint, score and time of the
 * last document of each key); nd_db_stats and nd_db_counts count its
 * documents and distinct fingerprints (and every table holds each
 * fingerprint once); nd_db_verify passes; commit's out_new is the number of
 * keys new to the store; all of it again after close + reopen. A load
 * that never fills a chunk (one nd_db_import; the default chunk size) is
 * checked the same way.
 *
 * Documents: the last document of a key wins across chunks, within a chunk
 * and with the same fingerprint twice (score and time of the last); a
 * fingerprint held only by a superseded document is not found. Stored keys
 * are replaced when their chunk spills (visible before the commit), the last
 * chunk's at the commit; new documents stay invisible until the commit.
 *
 * Other writers, temporary files and errors: test_load_races.c; the
 * model and the checks both use: load_model.h.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_fixture.h"
#include "load_model.h"
#include "neardup.h"
#include "oracle.h"
#include "tmpdir.h"

/* ---- exactness against the oracle ------------------------------------- */

/* Load the oracle store through a loader of chunk_docs (0: the default, a
 * load that never fills a chunk) into a database on `tables` tables (0:
 * the planner's); with prefill, the database first holds imported and
 * fresh documents, many of whose keys the load replaces; with exact_fill
 * the load is padded to a multiple of chunk_docs (the commit finds the last
 * chunk empty). The database at fx->path is deleted at the end, so that
 * the test's next case starts empty there. */
static void exact_case(db_fixture *fx, unsigned tables, size_t chunk_docs, int prefill,
                       int exact_fill)
{
    char key[24];
    enum { NBASE = 3000, NQ = 12 };
    oracle_rng r = {7000u + tables * 131u + chunk_docs * 7u + (unsigned)prefill * 3u +
                    (unsigned)exact_fill};
    uint64_t fps[NBASE + NQ * (K + 3)], qs[NQ];
    size_t n = oracle_make(&r, fps, NBASE, qs, NQ, K + 2);
    /* A fingerprint within K+2 of a query centre: superseded documents get
     * these, so one leaking into the answers shows. */
#define DECOY(i) oracle_flip(&r, qs[(i) % NQ], (unsigned)((i) % (K + 3)))
    nd_db *db = fx->db = open_db(fx->path, K, tables, 16);
    if (tables) {
        nd_plan_info p;
        assert_int_equal(nd_db_plan(&p, db), ND_OK);
        assert_int_equal(p.tables, tables);
    }
    model m = {0};

    if (prefill) {
        /* Imported: keys the load replaces (with decoys), keys it leaves
         * alone (random and near the query centres). */
        docs pre = {0};
        for (size_t i = 0; i < n; i += 5) {
            key_of(key, i);
            docs_add(&pre, key, DECOY(i), -1.0, 1);
        }
        for (size_t j = 0; j < 300 + NQ * (K + 3); j++) {
            sprintf(key, "s%zu", j);
            uint64_t fp = j < 300 ? oracle_next(&r) : oracle_flip(&r, qs[(j - 300) % NQ],
                                                                  (unsigned)((j - 300) / NQ));
            docs_add(&pre, key, fp, 0.5, 2);
        }
        assert_int_equal(nd_db_import(db, docs_fix(&pre), pre.n), ND_OK);
        for (size_t i = 0; i < pre.n; i++)
            model_put(&m, pre.keys[i], pre.d[i].fp, pre.d[i].score, pre.d[i].time);
        docs_free(&pre);
        /* Fresh (NO_BACKGROUND: never folded): more replaced keys, some of
         * them imported too, and keys the load leaves alone. */
        for (size_t i = 0; i < n; i += 11) {
            key_of(key, i);
            dadd(db, &m, key, DECOY(i + 1), -2.0, 3);
        }
        for (size_t j = 0; j < 100 + NQ * (K + 3); j++) {
            sprintf(key, "f%zu", j);
            uint64_t fp = j < 100 ? oracle_next(&r) : oracle_flip(&r, qs[(j - 100) % NQ],
                                                                  (unsigned)((j - 100) / NQ));
            dadd(db, &m, key, fp, 0.25, 4);
        }
        nd_stats st;
        assert_int_equal(nd_db_stats(&st, db), ND_OK);
        assert_true(st.table[0].fresh > 0); /* the load meets fresh entries */
    }
    size_t npre;
    mdoc *pre_final = model_final(&m, &npre);

    /* The load: decoys first (superseded by later chunks), the same
     * fingerprint twice (score and time of the last win), then every
     * document in a shuffled order, some right after a decoy of their own
     * key (a duplicate within a chunk). */
    docs ld = {0};
    for (size_t i = 0; i < n; i++) {
        key_of(key, i);
        if (i % 7 == 0) docs_add(&ld, key, DECOY(i + 2), (double)ld.n, 100000 + (int64_t)ld.n);
        if (i % 17 == 0) docs_add(&ld, key, fps[i], (double)ld.n, 100000 + (int64_t)ld.n);
    }
    size_t *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = oracle_next(&r) % i, t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t x = 0; x < n; x++) {
        size_t i = perm[x];
        key_of(key, i);
        if (i % 13 == 0) docs_add(&ld, key, DECOY(i + 3), (double)ld.n, 100000 + (int64_t)ld.n);
        docs_add(&ld, key, fps[i], (double)ld.n, 100000 + (int64_t)ld.n);
    }
    for (size_t j = 0; exact_fill && ld.n % chunk_docs; j++) {
        sprintf(key, "p%zu", j);
        docs_add(&ld, key, oracle_next(&r), (double)ld.n, 100000 + (int64_t)ld.n);
    }
    free(perm);
    docs_fix(&ld);
    int spills = chunk_docs && chunk_docs < ld.n;
    if (spills) assert_true(ld.n > 3 * chunk_docs); /* several chunks spill */

    /* Keys new to the store. */
    for (size_t i = 0; i < ld.n; i++) model_put(&m, ld.keys[i], ld.d[i].fp, ld.d[i].score, ld.d[i].time);
    size_t nload;
    model lm = {0};
    for (size_t i = 0; i < ld.n; i++) model_put(&lm, ld.keys[i], 0, 0, 0);
    mdoc *load_keys = model_final(&lm, &nload);
    uint64_t want_new = 0;
    for (size_t i = 0; i < nload; i++)
        want_new += !final_find(pre_final, npre, load_keys[i].key, strlen(load_keys[i].key));
    free(load_keys);
    free(lm.d);

    /* Feed in calls of assorted sizes: single documents, calls within a
     * chunk, calls spanning several chunks. */
    static const size_t sizes[] = {1, 7, 333, 64, 1500, 2, 250, 999};
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, chunk_docs), ND_OK);
    assert_non_null(l);
    for (size_t at = 0, c = 0; at < ld.n; c++) {
        size_t take = sizes[c % (sizeof sizes / sizeof *sizes)];
        if (take > ld.n - at) take = ld.n - at;
        expect_ok(nd_loader_add(l, ld.d + at, take), "nd_loader_add");
        at += take;
    }
    if (spills) assert_int_equal(count_load_dirs(fx->path), 1); /* the spills' directory */
    /* Nothing new is visible before the commit. */
    for (size_t i = 0; i < nload && i < 50; i++) {
        key_of(key, i * 37 % n);
        if (!final_find(pre_final, npre, key, strlen(key))) assert_absent(db, key);
    }
    if (!prefill) {
        uint64_t nd = 1;
        assert_int_equal(nd_db_counts(&nd, NULL, db), ND_OK);
        assert_int_equal(nd, 0);
    }
    uint64_t got_new = UINT64_MAX;
    expect_ok(nd_loader_finish(&got_new, l), "nd_loader_finish");
    assert_int_equal(got_new, want_new);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);

    size_t nf;
    mdoc *f = model_final(&m, &nf);
    assert_int_equal(nf, npre + want_new);
    check_db(db, f, nf, qs, NQ, K + 2);
    check_reopened(fx, f, nf, qs, NQ, K + 2);
#undef DECOY
    free(f);
    free(pre_final);
    free(m.d);
    docs_free(&ld);
    tmpdir_remove(fx->path);
}

static void test_exact_empty(void **s)
{
    exact_case(*s, 0, 500, 0, 0);
    exact_case(*s, 10, 700, 0, 0);
}

static void test_exact_prefilled(void **s)
{
    exact_case(*s, 0, 1000, 1, 0);
    exact_case(*s, 10, 600, 1, 0);
}

/* The last add fills a chunk exactly: the commit has no unspilled chunk. */
static void test_exact_full_last_chunk(void **s)
{
    exact_case(*s, 10, 800, 1, 1);
}

/* A load that never fills a chunk: one nd_db_import. */
static void test_exact_unspilled(void **s)
{
    exact_case(*s, 10, 0, 0, 0);
    exact_case(*s, 0, 0, 1, 0);
}

/* ---- documents: the last of a key wins -------------------------------- */

static void test_same_key_chunks(void **state)
{
    db_fixture *fx = *state;
    enum { A, B, C, D, E, F, G, H, X1, X2, X3, Y1, Y2, Y3, NF };
    uint64_t fp[NF];
    random_fps(fp, NF, 11);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 0);
    model m = {0};
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    /* chunk 1 (spilled) */
    ladd(l, &m, "K1", fp[A], 1, 1);
    ladd(l, &m, "x1", fp[X1], 0, 0);
    ladd(l, &m, "x2", fp[X2], 0, 0);
    ladd(l, &m, "x3", fp[X3], 0, 0);
    assert_int_equal(count_load_dirs(fx->path), 1);
    /* chunk 2 (spilled): K1 moves; K2 twice within the chunk */
    nd_doc c2[4] = {{"K1", 2, fp[B], 2, 2}, {"K2", 2, fp[C], 3, 3}, {"K2", 2, fp[D], 4, 4},
                    {"y1", 2, fp[Y1], 0, 0}};
    assert_int_equal(nd_loader_add(l, c2, 4), ND_OK);
    model_put_docs(&m, c2, 4);
    /* chunk 3 (spilled): K1 again with the same fingerprint, newer score
     * and time; K3 first seen */
    ladd(l, &m, "K3", fp[E], 5, 5);
    ladd(l, &m, "K1", fp[B], 9, 99);
    ladd(l, &m, "y2", fp[Y2], 0, 0);
    ladd(l, &m, "y3", fp[Y3], 0, 0);
    /* the last chunk (not spilled): K3 moves again; K4 twice */
    ladd(l, &m, "K3", fp[F], 6, 6);
    ladd(l, &m, "K4", fp[G], 7, 7);
    ladd(l, &m, "K4", fp[H], 8, 8);
    assert_int_equal(count_load_dirs(fx->path), 1);
    /* nothing visible yet */
    assert_absent(db, "K1");
    assert_absent(db, "x1");
    assert_int_equal(count_at(db, fp[B]), 0);
    uint64_t nw = 0;
    assert_int_equal(nd_loader_finish(&nw, l), ND_OK);
    assert_int_equal(nw, 10); /* K1..K4, x1..x3, y1..y3 */
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);

    double sc;
    int64_t tm;
    assert_true(get_fp(db, "K1") == fp[B]);
    get_score_time(db, "K1", &sc, &tm);
    assert_true(sc == 9);
    assert_int_equal(tm, 99);
    /* a query reads them from rev: the entry of the chunk that won */
    assert_int_equal(nd_db_query(fx->res, db, fp[B], 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 1);
    assert_true(nd_results_get(fx->res, 0)->score == 9);
    assert_int_equal(nd_results_get(fx->res, 0)->time, 99);
    assert_true(get_fp(db, "K2") == fp[D]);
    get_score_time(db, "K2", &sc, &tm);
    assert_true(sc == 4);
    assert_int_equal(tm, 4);
    assert_true(get_fp(db, "K3") == fp[F]);
    assert_true(get_fp(db, "K4") == fp[H]);
    /* fingerprints held only by superseded documents are gone */
    assert_int_equal(count_at(db, fp[A]), 0);
    assert_int_equal(count_at(db, fp[C]), 0);
    assert_int_equal(count_at(db, fp[E]), 0);
    assert_int_equal(count_at(db, fp[G]), 0);
    assert_int_equal(count_at(db, fp[B]), 1);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* ---- keys stored before the load -------------------------------------- */

/* Load key "n<nn>" with fingerprint fp[base + nn]; nn++. */
static void new_doc(nd_loader *l, model *m, const uint64_t *fp, int base, int *nn)
{
    char key[16];
    sprintf(key, "n%d", *nn);
    ladd(l, m, key, fp[base + *nn], 2, 2);
    (*nn)++;
}

static void test_stored_keys_replaced(void **state)
{
    db_fixture *fx = *state;
    char key[16];
    enum { S1, S2, S3, S4, S5, S6, A, B1, B2, C, E, F, G, NEW0, NF = NEW0 + 9 };
    uint64_t fp[NF];
    random_fps(fp, NF, 22);
    nd_db *db = fx->db = open_db(fx->path, K, 10, 16);
    model m = {0};
    /* S1-S3, S6 imported; S4, S5 fresh */
    nd_doc pre[4] = {{"S1", 2, fp[S1], 1, 1}, {"S2", 2, fp[S2], 1, 1}, {"S3", 2, fp[S3], 1, 1},
                     {"S6", 2, fp[S6], 1, 1}};
    assert_int_equal(nd_db_import(db, pre, 4), ND_OK);
    for (int i = 0; i < 4; i++) model_put(&m, pre[i].key, pre[i].fp, pre[i].score, pre[i].time);
    dadd(db, &m, "S4", fp[S4], 1, 1);
    dadd(db, &m, "S5", fp[S5], 1, 1);

    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    int nn = 0;
    /* chunk 1: S1 moves when it spills, before the commit */
    ladd(l, &m, "S1", fp[A], 3, 3);
    new_doc(l, &m, fp, NEW0, &nn);
    new_doc(l, &m, fp, NEW0, &nn);
    new_doc(l, &m, fp, NEW0, &nn);
    assert_true(get_fp(db, "S1") == fp[A]);
    assert_int_equal(count_at(db, fp[S1]), 0);
    assert_absent(db, "n0");
    assert_int_equal(count_at(db, fp[NEW0]), 0);
    /* chunk 2: S2 and the fresh S4 */
    ladd(l, &m, "S2", fp[B1], 4, 4);
    new_doc(l, &m, fp, NEW0, &nn);
    ladd(l, &m, "S4", fp[C], 5, 5);
    new_doc(l, &m, fp, NEW0, &nn);
    assert_true(get_fp(db, "S2") == fp[B1]);
    assert_true(get_fp(db, "S4") == fp[C]);
    /* chunk 3: S2 again (the last wins) */
    ladd(l, &m, "S2", fp[B2], 6, 6);
    new_doc(l, &m, fp, NEW0, &nn);
    new_doc(l, &m, fp, NEW0, &nn);
    new_doc(l, &m, fp, NEW0, &nn);
    assert_true(get_fp(db, "S2") == fp[B2]);
    /* the last chunk (unspilled): S3 and the fresh S5, replaced at the commit */
    ladd(l, &m, "S3", fp[E], 7, 7);
    ladd(l, &m, "S5", fp[F], 8, 8);
    new_doc(l, &m, fp, NEW0, &nn);
    assert_true(get_fp(db, "S3") == fp[S3]);
    assert_true(get_fp(db, "S5") == fp[S5]);
    for (int i = 0; i < nn; i++) {
        sprintf(key, "n%d", i);
        assert_absent(db, key);
    }
    uint64_t docs_before = 0;
    assert_int_equal(nd_db_counts(&docs_before, NULL, db), ND_OK);
    assert_int_equal(docs_before, 6);
    uint64_t nw = 0;
    assert_int_equal(nd_loader_finish(&nw, l), ND_OK);
    assert_int_equal(nw, (uint64_t)nn);
    nd_loader_free(l);
    assert_true(get_fp(db, "S1") == fp[A]);
    assert_true(get_fp(db, "S2") == fp[B2]);
    assert_true(get_fp(db, "S3") == fp[E]);
    assert_true(get_fp(db, "S4") == fp[C]);
    assert_true(get_fp(db, "S5") == fp[F]);
    assert_true(get_fp(db, "S6") == fp[S6]);
    double sc;
    int64_t tm;
    get_score_time(db, "S2", &sc, &tm);
    assert_true(sc == 6);
    assert_int_equal(tm, 6);
    for (int i = S1; i <= S5; i++) assert_int_equal(count_at(db, fp[i]), 0);
    assert_int_equal(count_at(db, fp[B1]), 0);
    (void)G;
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_exact_empty),
        DB_FIXTURE_TEST(test_exact_prefilled),
        DB_FIXTURE_TEST(test_exact_full_last_chunk),
        DB_FIXTURE_TEST(test_exact_unspilled),
        DB_FIXTURE_TEST(test_same_key_chunks),
        DB_FIXTURE_TEST(test_stored_keys_replaced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
