/*
 * test_batch.c — bulk import and batch mode against the brute-force
 * oracle and against their one-by-one equivalents.
 *
 * Import: a store loaded by nd_db_import in several calls (duplicate keys in
 * a call, keys replaced by a later call, shared fingerprints, a call on top
 * of fresh entries) answers every query like a popcount scan, verifies, and
 * counts documents and fingerprints right.
 * Batch: nd_db_batch decides every document exactly as nd_db_add_if_new called
 * in order would (status, match key, distance), for k within and beyond
 * the plan's k, over runs (small, so many), fresh entries and a mix; with
 * ND_BATCH_ADD the stored documents equal those of the one-by-one run.
 * Threads: the tables are merged on 1, 2, 3 or 4 threads (db->threads)
 * with identical answers, also while a writer adds and folds; a corrupt
 * run found by any thread is returned with its message.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "cmp_layout.h"
#include "cmp_table.h"
#include "db_core.h"
#include "db_mirrored.h"
#include "db_fixture.h"
#include "db_oracle.h"
#include "neardup.h"
#include "oracle.h"

typedef struct docset {
    nd_doc *d;
    char (*keys)[24];
    size_t n;
} docset;

static void docset_init(docset *s, size_t cap)
{
    s->d = calloc(cap, sizeof *s->d);
    s->keys = calloc(cap, sizeof *s->keys);
    s->n = 0;
}

static void docset_add(docset *s, const char *key, uint64_t fp)
{
    snprintf(s->keys[s->n], sizeof s->keys[s->n], "%s", key);
    s->d[s->n] = (nd_doc){s->keys[s->n], strlen(s->keys[s->n]), fp, (double)(s->n % 7), 1000};
    s->n++;
}

static void docset_free(docset *s)
{
    free(s->d);
    free(s->keys);
}

/* Every query centre at every distance 0..k+2 against the oracle
 * (fingerprint sets: the store's distinct fps are compared). */
static void check_against(nd_db *db, const uint64_t *fps, size_t n, const uint64_t *qs, size_t nq,
                          unsigned kmax)
{
    nd_results *res;
    size_t *idx = malloc((n + 1) * sizeof *idx);
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.flags = ND_QUERY_FP_ONLY;
    assert_int_equal(nd_results_new(&res), ND_OK);
    for (size_t q = 0; q < nq; q++)
        for (unsigned k = 0; k <= kmax; k++) {
            size_t m = oracle_scan(fps, n, qs[q], k, idx);
            /* the oracle may list a fingerprint twice (shared by keys) */
            uint64_t *want = malloc((m + 1) * sizeof *want);
            size_t w = 0;
            for (size_t i = 0; i < m; i++) {
                int seen = 0;
                for (size_t j = 0; j < w; j++) seen |= want[j] == fps[idx[i]];
                if (!seen) want[w++] = fps[idx[i]];
            }
            assert_int_equal(nd_db_query(res, db, qs[q], k, &qo), ND_OK);
            assert_int_equal(nd_results_count(res), w);
            for (size_t i = 0; i < nd_results_count(res); i++) {
                int seen = 0;
                for (size_t j = 0; j < w; j++) seen |= want[j] == nd_results_get(res, i)->fp;
                assert_true(seen);
            }
            free(want);
        }
    nd_results_free(res);
    free(idx);
}

static void test_import_oracle(void **state)
{
    db_fixture *fx = *state;
    char key[24];
    oracle_rng r = {42};
    enum { NBASE = 20000, NQ = 40, MAXD = 5 };
    uint64_t *fps = malloc((NBASE + NQ * (MAXD + 1)) * sizeof *fps), qs[NQ];
    size_t n = oracle_make(&r, fps, NBASE, qs, NQ, MAXD);
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 8);
    /* A few documents first, as fresh entries (not folded). */
    for (size_t i = 0; i < 50; i++) {
        sprintf(key, "d%zu", i);
        assert_int_equal(nd_db_add(db, key, strlen(key), fps[i], 0, 1), ND_OK);
    }
    /* Three imports: the first also holds keys that a later one moves to
     * their real fingerprint, and a duplicate key (the later one wins). */
    docset s;
    docset_init(&s, n + 100);
    /* Parts 0-2 each add about as many fingerprints as are stored, so they
     * rewrite every table (a new generation); part 3 is small next
     * to the store and merges into the runs it touches through the batch. */
    size_t m = n - n / 40;
    for (size_t part = 0; part < 4; part++) {
        s.n = 0;
        size_t lo = part < 3 ? part * m / 3 : m, hi = part < 3 ? (part + 1) * m / 3 : n;
        for (size_t i = lo; i < hi; i++) {
            sprintf(key, "d%zu", i);
            if (part == 0 && i % 97 == 0) docset_add(&s, key, ~fps[i]); /* wrong, fixed later */
            else docset_add(&s, key, fps[i]);
        }
        if (part == 0) docset_add(&s, "d1", ~fps[1]), docset_add(&s, "d1", fps[1]);
        if (part == 2)
            for (size_t i = 0; i < n / 3; i += 97) {
                sprintf(key, "d%zu", i);
                docset_add(&s, key, fps[i]);
            }
        /* Two keys sharing a fingerprint. */
        docset_add(&s, part == 0 ? "shared-a" : part == 1 ? "shared-b" : "shared-c", fps[7]);
        assert_int_equal(nd_db_import(db, s.d, s.n), ND_OK);
        if (part == 1) { /* what a switch of generations left is durable */
            db_fixture_close(fx);
            db = fx->db = open_db(fx->path, 3, 4, 8);
            assert_int_equal(nd_db_verify(db), ND_OK);
        }
    }
    assert_int_equal(nd_db_verify(db), ND_OK);
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, n + 3);
    /* distinct fingerprints of the oracle set */
    uint64_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) dup = fps[j] == fps[i];
        distinct += !dup;
    }
    assert_int_equal(st.fingerprints, distinct);
    check_against(db, fps, n, qs, NQ, MAXD);
    assert_int_equal(nd_db_compact(db), ND_OK);
    check_against(db, fps, n, qs, NQ, MAXD);
    assert_int_equal(nd_db_verify(db), ND_OK);
    docset_free(&s);
    free(fps);
}

/* Build a batch: near-duplicates of stored fps, near-duplicates of
 * earlier batch docs, a stored key seen again, random ones, repeats. */
static void make_batch(docset *b, oracle_rng *r, const uint64_t *stored, size_t nstored)
{
    char key[24];
    for (size_t i = 0; i < 600; i++) {
        uint64_t fp;
        switch (i % 6) {
        case 0: fp = oracle_flip(r, stored[oracle_next(r) % nstored], (unsigned)(oracle_next(r) % 7)); break;
        case 1: fp = b->n ? oracle_flip(r, b->d[oracle_next(r) % b->n].fp, (unsigned)(oracle_next(r) % 7)) : oracle_next(r); break;
        case 2: fp = stored[i % nstored]; break;
        /* an exact copy of an earlier document of the batch (a page
         * fetched again under another URL): fingerprint groups of several
         * documents, decided by their first (nd_db_batch joins groups).
         * Not of a document whose key a later one repeats (i % 50 == 42,
         * see below): one by one, the later document replaces it in the
         * store, while the batch keeps it as a candidate (a known
         * difference, nd_db_batch's contract). */
        case 3: {
            size_t at = b->n ? oracle_next(r) % b->n : 0;
            if (b->n && at % 50 == 42) at--;
            fp = b->n ? b->d[at].fp : oracle_next(r);
            break;
        }
        default: fp = oracle_next(r); break;
        }
        if (i % 6 == 2) sprintf(key, "s%zu", i % nstored); /* its own stored key */
        else if (i % 50 == 49) sprintf(key, "b%zu", i - 7); /* a repeated batch key */
        else sprintf(key, "b%zu", i);
        docset_add(b, key, fp);
    }
}

static void store_base(nd_db *db, const uint64_t *fps, size_t n, int compact_half)
{
    char key[24];
    docset s;
    docset_init(&s, n);
    for (size_t i = 0; i < n / 2; i++) {
        sprintf(key, "s%zu", i);
        docset_add(&s, key, fps[i]);
    }
    assert_int_equal(nd_db_import(db, s.d, s.n), ND_OK);
    for (size_t i = n / 2; i < n; i++) { /* the rest as fresh entries */
        sprintf(key, "s%zu", i);
        assert_int_equal(nd_db_add(db, key, strlen(key), fps[i], 0, 1000), ND_OK);
    }
    if (compact_half) assert_int_equal(nd_db_compact(db), ND_OK);
    docset_free(&s);
}

typedef struct doclist {
    char (*keys)[24];
    uint64_t *fps;
    size_t n;
} doclist;

static int collect_cb(const nd_doc *d, void *payload)
{
    doclist *l = payload;
    snprintf(l->keys[l->n], 24, "%.*s", (int)d->key_len, (const char *)d->key);
    l->fps[l->n++] = d->fp;
    return 0;
}

/* Merge the tables on this many threads (NULL: the library's choice):
 * what nd_db_options.threads sets at open, changed on the open handle. */
static void set_threads(nd_db *db, const char *n)
{
    db->threads = n ? (unsigned)atoi(n) : 0;
}

/* Two databases alike: a (fx->db, at fx->path) answers the batch, b the
 * same documents one by one. */
static void run_batch_case(db_fixture *fx, unsigned k, unsigned tables, unsigned run_size,
                           int compact, const char *threads, size_t ns, size_t probes_max)
{
    char pb[128];
    snprintf(pb, sizeof pb, "%s/b", fx->dir);
    oracle_rng r = {7 + k + tables};
    const size_t NS = ns;
    uint64_t *stored = malloc(NS * sizeof *stored);
    for (size_t i = 0; i < NS; i++) stored[i] = oracle_next(&r);
    nd_db *a = fx->db = open_db(fx->path, 3, tables, run_size);
    nd_db *b = open_db(pb, 3, tables, run_size);
    a->batch_probes_max = probes_max;
    set_threads(a, threads);
    store_base(a, stored, NS, compact);
    store_base(b, stored, NS, compact);
    docset bt;
    docset_init(&bt, 1000);
    make_batch(&bt, &r, stored, NS);
    nd_batch_item *out = calloc(bt.n, sizeof *out);
    nd_results *keys, *res = fx->res;
    assert_int_equal(nd_results_new(&keys), ND_OK);
    /* Check only (no add) first: must equal the one-by-one decisions. */
    assert_int_equal(nd_db_batch(out, keys, a, bt.d, bt.n, k, 0), ND_OK);
    size_t dups = 0, batch_dups = 0;
    for (size_t i = 0; i < bt.n; i++) {
        const nd_doc *d = &bt.d[i];
        assert_int_equal(nd_db_add_if_new(res, b, d->key, d->key_len, d->fp, d->score, d->time, k),
                         ND_OK);
        int dup = nd_results_count(res) > 0;
        if (dup != out[i].dup)
            fprintf(stderr, "k=%u doc %zu (%s): batch %d, one-by-one %d\n", k, i,
                    (const char *)d->key, out[i].dup, dup);
        assert_int_equal(out[i].dup, dup);
        if (!dup) continue;
        dups++;
        batch_dups += out[i].match_index != ND_BATCH_STORED;
        const nd_match *m = nd_results_get(res, 0);
        assert_int_equal(out[i].dist, m->dist);
        assert_true(out[i].match_fp == m->fp);
        assert_int_equal(out[i].match_key_len, m->key_len);
        assert_memory_equal(out[i].match_key, m->key, m->key_len);
    }
    assert_true(dups > 100);
    assert_true(batch_dups > 10);
    /* Now with ADD: same decisions, same stored documents as b. */
    nd_batch_item *out2 = calloc(bt.n, sizeof *out2);
    assert_int_equal(nd_db_batch(out2, keys, a, bt.d, bt.n, k, ND_BATCH_ADD), ND_OK);
    for (size_t i = 0; i < bt.n; i++) assert_int_equal(out2[i].dup, out[i].dup);
    assert_int_equal(nd_db_verify(a), ND_OK);
    doclist la = {calloc(NS + 1000, 24), calloc(NS + 1000, 8), 0};
    doclist lb = {calloc(NS + 1000, 24), calloc(NS + 1000, 8), 0};
    assert_int_equal(nd_db_foreach_doc(a, collect_cb, &la), ND_OK);
    assert_int_equal(nd_db_foreach_doc(b, collect_cb, &lb), ND_OK);
    assert_int_equal(la.n, lb.n);
    for (size_t i = 0; i < la.n; i++) {
        assert_string_equal(la.keys[i], lb.keys[i]);
        assert_true(la.fps[i] == lb.fps[i]);
    }
    free(la.keys), free(la.fps), free(lb.keys), free(lb.fps);
    free(out);
    free(out2);
    nd_results_free(keys);
    docset_free(&bt);
    nd_db_close(b);
    free(stored);
}

/* The merge join (a batch of 600 is above a probes_max of 0): 3000
 * stored, a document for every few runs, and the tables are read ahead
 * (dense). */
static void test_batch_k3_runs(void **state) { run_batch_case(*state, 3, 4, 4, 1, NULL, 3000, 0); }
static void test_batch_k3_fresh(void **state) { run_batch_case(*state, 3, 10, 16, 0, "3", 3000, 0); }
static void test_batch_k2(void **state) { run_batch_case(*state, 2, 4, 64, 1, "4", 3000, 0); }
static void test_batch_k5_beyond_plan(void **state)
{
    run_batch_case(*state, 5, 4, 8, 1, NULL, 3000, 0); /* probes whatever its size */
}
/* 20000 stored in runs of 2: 10000 runs, more than 8 per batch document,
 * so the tables are walked block by block (sparse). */
static void test_batch_k3_sparse(void **state) { run_batch_case(*state, 3, 4, 2, 1, "2", 20000, 0); }
/* The same batches by probes (as the default does up to
 * DB_BATCH_PROBES_MAX documents), on 1 to 4 threads. */
static void test_batch_k3_runs_probed(void **state)
{
    run_batch_case(*state, 3, 4, 4, 1, "1", 3000, SIZE_MAX);
}
static void test_batch_k3_fresh_probed(void **state)
{
    run_batch_case(*state, 3, 10, 16, 0, "3", 3000, SIZE_MAX);
}
static void test_batch_k2_probed(void **state) { run_batch_case(*state, 2, 4, 64, 1, "4", 3000, SIZE_MAX); }
static void test_batch_k3_sparse_probed(void **state)
{
    run_batch_case(*state, 3, 4, 2, 1, "2", 20000, SIZE_MAX);
}

/* out equals want item by item, keys compared by their bytes. */
static void assert_same_items(const nd_batch_item *out, const nd_batch_item *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(out[i].dup, want[i].dup);
        assert_int_equal(out[i].dist, want[i].dist);
        assert_true(out[i].match_fp == want[i].match_fp);
        assert_true(out[i].match_index == want[i].match_index);
        assert_int_equal(out[i].match_key_len, want[i].match_key_len);
        if (out[i].dup) assert_memory_equal(out[i].match_key, want[i].match_key, want[i].match_key_len);
    }
}

/* Adds documents one at a time, keys "w0", "w1", ...: fps[i] (or, fps
 * NULL, random ones: none within k of a batch, since a random
 * fingerprint is within 3 of a given one with probability 2^-48), and
 * folds them into runs every `every`, until told to stop or WRITER_MAX
 * are added. acked counts the adds that returned. */
enum { WRITER_MAX = 200000 };
typedef struct writer {
    nd_db *db;
    const uint64_t *fps;
    unsigned every;
    atomic_size_t acked;
    atomic_int stop;
    atomic_uint folds;
    unsigned failures;
} writer;

static void writer_init(writer *w, nd_db *db, const uint64_t *fps, unsigned every)
{
    *w = (writer){.db = db, .fps = fps, .every = every};
    atomic_init(&w->acked, 0);
    atomic_init(&w->stop, 0);
    atomic_init(&w->folds, 0);
}

static void *writer_main(void *p)
{
    writer *w = p;
    oracle_rng r = {99};
    char key[24];
    for (size_t i = 0; i < WRITER_MAX && !atomic_load(&w->stop); i++) {
        sprintf(key, "w%zu", i);
        uint64_t fp = w->fps ? w->fps[i] : oracle_next(&r);
        if (nd_db_add(w->db, key, strlen(key), fp, 0, 1000) != ND_OK) w->failures++;
        atomic_store(&w->acked, i + 1);
        if ((i + 1) % w->every == 0) {
            if (nd_db_compact(w->db) != ND_OK) w->failures++;
            atomic_fetch_add(&w->folds, 1);
        }
    }
    return NULL;
}

/* A store of THREAD_NS random fingerprints (k=3, `tables` tables, runs of
 * run_size; all in runs if compact, else half fresh) at fx->path, and a
 * batch made against it. */
enum { THREAD_NS = 3000 };
static nd_db *thread_case(db_fixture *fx, uint64_t seed, unsigned tables, unsigned run_size,
                          int compact, uint64_t **stored, docset *bt)
{
    oracle_rng r = {seed};
    *stored = malloc(THREAD_NS * sizeof **stored);
    for (size_t i = 0; i < THREAD_NS; i++) (*stored)[i] = oracle_next(&r);
    nd_db *db = fx->db = open_db(fx->path, 3, tables, run_size);
    store_base(db, *stored, THREAD_NS, compact);
    docset_init(bt, 1000);
    make_batch(bt, &r, *stored, THREAD_NS);
    return db;
}

/* 1, 2, 3 and 4 threads give the same answers, with and without a
 * concurrent writer. */
static void test_batch_threads(void **state)
{
    db_fixture *fx = *state;
    static const char *const counts[] = {"1", "2", "3", "4"};
    uint64_t *stored;
    docset bt;
    /* 10 tables, half of the store in runs, half fresh */
    nd_db *db = thread_case(fx, 2024, 10, 16, 0, &stored, &bt);
    nd_batch_item *want = calloc(bt.n, sizeof *want), *out = calloc(bt.n, sizeof *out);
    nd_results *wkeys, *keys = fx->res;
    assert_int_equal(nd_results_new(&wkeys), ND_OK);
    set_threads(db, "1");
    db->batch_probes_max = 0; /* the merge */
    assert_int_equal(nd_db_batch(want, wkeys, db, bt.d, bt.n, 3, 0), ND_OK);
    size_t stored_dups = 0;
    for (size_t i = 0; i < bt.n; i++) stored_dups += want[i].dup && want[i].match_index == ND_BATCH_STORED;
    assert_true(stored_dups > 100);
    for (size_t c = 0; c < 8; c++) { /* merged, then probed */
        db->batch_probes_max = c < 4 ? 0 : SIZE_MAX;
        set_threads(db, counts[c % 4]);
        assert_int_equal(nd_db_batch(out, keys, db, bt.d, bt.n, 3, 0), ND_OK);
        assert_same_items(out, want, bt.n);
    }
    /* Batches while the writer adds and folds, until it folded 10 times
     * (a bound in time, not in rounds: batches are cheap against the
     * writer's folds, more so on a loaded machine). */
    writer w;
    writer_init(&w, db, NULL, 20);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, writer_main, &w), 0);
    unsigned rounds = 0;
    time_t give_up = time(NULL) + 300;
    for (; rounds < 8 || (atomic_load(&w.folds) < 10 && time(NULL) < give_up); rounds++) {
        set_threads(db, counts[rounds % 4]);
        db->batch_probes_max = rounds % 8 < 4 ? 0 : SIZE_MAX;
        assert_int_equal(nd_db_batch(out, keys, db, bt.d, bt.n, 3, 0), ND_OK);
        assert_same_items(out, want, bt.n);
    }
    atomic_store(&w.stop, 1);
    pthread_join(th, NULL);
    assert_int_equal(w.failures, 0);
    assert_true(atomic_load(&w.folds) >= 10);
    assert_int_equal(nd_db_verify(db), ND_OK);
    set_threads(db, NULL);
    nd_results_free(wkeys);
    free(want);
    free(out);
    docset_free(&bt);
    free(stored);
}

/* A batch finds every document stored before it began, also those whose
 * table keys waited in the mirror when it began and were folded while it
 * walked the tables: the walk's cursors fall back to their snapshots
 * then, which nd_db_batch has made hold those keys (db_mirrored_flush); a
 * probed batch (every other round) reads the mirror as a query does. */
static void test_batch_waiting_during_folds(void **state)
{
    db_fixture *fx = *state;
    oracle_rng r = {5150};
    uint64_t *fps = malloc(WRITER_MAX * sizeof *fps);
    for (size_t i = 0; i < WRITER_MAX; i++) fps[i] = oracle_next(&r);
    uint64_t *base = malloc(THREAD_NS * sizeof *base);
    for (size_t i = 0; i < THREAD_NS; i++) base[i] = oracle_next(&r);
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 8);
    /* single adds (their table keys wait in the mirror: db_mirrored.c),
     * a fold every 500 */
    writer w;
    writer_init(&w, db, fps, 500);
    store_base(db, base, THREAD_NS, 1);
    docset bt;
    docset_init(&bt, WRITER_MAX);
    char key[24];
    for (size_t i = 0; i < WRITER_MAX; i++) {
        sprintf(key, "q%zu", i);
        docset_add(&bt, key, fps[i]);
    }
    nd_batch_item *out = calloc(WRITER_MAX, sizeof *out);
    pthread_t th;
    set_threads(db, "2");
    assert_int_equal(pthread_create(&th, NULL, writer_main, &w), 0);
    time_t give_up = time(NULL) + 120;
    unsigned rounds = 0;
    for (; rounds < 20 || (atomic_load(&w.folds) < 20 && time(NULL) < give_up); rounds++) {
        size_t m = atomic_load(&w.acked);
        db->batch_probes_max = rounds % 2 ? SIZE_MAX : 0; /* probes read the mirror itself */
        assert_int_equal(nd_db_batch(out, fx->res, db, bt.d, m, 0, 0), ND_OK);
        for (size_t i = 0; i < m; i++) {
            if (!out[i].dup) fprintf(stderr, "round %u: stored document w%zu not found\n", rounds, i);
            assert_true(out[i].dup);
            assert_true(out[i].match_index == ND_BATCH_STORED);
        }
    }
    atomic_store(&w.stop, 1);
    pthread_join(th, NULL);
    set_threads(db, NULL);
    assert_int_equal(w.failures, 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    free(out);
    docset_free(&bt);
    free(base);
    free(fps);
}

/* Replace every run of table t by bad bytes (bad != 0), saving them in sv,
 * or put the saved ones back (bad == 0). */
typedef struct saved_runs {
    char (*keys)[TBL_KEY_LEN];
    char **vals;
    size_t *lens, n;
} saved_runs;

static void corrupt_table(nd_db *db, unsigned t, saved_runs *sv, int bad)
{
    st_batch *b;
    assert_int_equal(st_batch_new_plain(&b, db->store), ND_OK);
    if (bad) {
        st_iter *it;
        assert_int_equal(st_iter_new(&it, db->store, ST_CF_TABLE(t), NULL, 1), ND_OK);
        sv->n = 0;
        for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
            size_t klen, vlen;
            const char *k = st_iter_key(it, &klen), *v = st_iter_value(it, &vlen);
            if (klen != TBL_KEY_LEN || k[0] != TBL_RUN) continue;
            sv->keys = realloc(sv->keys, (sv->n + 1) * sizeof *sv->keys);
            sv->vals = realloc(sv->vals, (sv->n + 1) * sizeof *sv->vals);
            sv->lens = realloc(sv->lens, (sv->n + 1) * sizeof *sv->lens);
            memcpy(sv->keys[sv->n], k, TBL_KEY_LEN);
            sv->vals[sv->n] = malloc(vlen ? vlen : 1);
            memcpy(sv->vals[sv->n], v, vlen);
            sv->lens[sv->n++] = vlen;
        }
        assert_int_equal(st_iter_status(it), ND_OK);
        st_iter_free(it);
        assert_true(sv->n > 10);
    }
    for (size_t i = 0; i < sv->n; i++)
        assert_int_equal(st_batch_put(b, ST_CF_TABLE(t), sv->keys[i], TBL_KEY_LEN,
                                      bad ? "\xff\xff\xff" : sv->vals[i], bad ? 3 : sv->lens[i]),
                         ND_OK);
    assert_int_equal(st_write(db->store, b, 0), ND_OK);
    st_batch_free(b);
    if (!bad) {
        for (size_t i = 0; i < sv->n; i++) free(sv->vals[i]);
        free(sv->keys), free(sv->vals), free(sv->lens);
        *sv = (saved_runs){0};
    }
}

/* A corrupt table fails the batch with the same code and message on
 * whichever thread reads it: worker w reads tables w, w + threads, ...,
 * so with 2, 3 and 4 threads tables 1..3 are read by the library's own
 * threads, table 0 by the calling one. */
static void test_batch_thread_errors(void **state)
{
    db_fixture *fx = *state;
    static const char *const counts[] = {"2", "3", "4"};
    char msg1[512];
    uint64_t *stored;
    docset bt;
    nd_db *db = thread_case(fx, 77, 4, 8, 1, &stored, &bt); /* all in runs */
    db->batch_probes_max = 0; /* the merge, but where said */
    nd_batch_item *out = calloc(bt.n, sizeof *out);
    nd_results *keys = fx->res;
    for (unsigned t = 0; t < 4; t++) {
        saved_runs sv = {0};
        corrupt_table(db, t, &sv, 1);
        set_threads(db, "1");
        assert_int_equal(nd_db_batch(out, keys, db, bt.d, bt.n, 3, 0), ND_ECORRUPT);
        snprintf(msg1, sizeof msg1, "%s", nd_errmsg());
        char want[32];
        snprintf(want, sizeof want, "table %u, run ", t);
        assert_non_null(strstr(msg1, want));
        for (size_t c = 0; c < 3; c++) {
            set_threads(db, counts[c]);
            /* another message on this thread first: the worker's must replace it */
            assert_int_equal(nd_db_batch(out, keys, db, bt.d, bt.n, 3, 0x80), ND_EINVAL);
            assert_int_equal(nd_db_batch(out, keys, db, bt.d, bt.n, 3, 0), ND_ECORRUPT);
            assert_string_equal(nd_errmsg(), msg1);
            assert_int_equal(nd_results_count(keys), 0);
        }
        /* Probed: every slice meets the table, each names its run. */
        db->batch_probes_max = SIZE_MAX;
        for (size_t c = 0; c < 4; c++) {
            set_threads(db, c ? counts[c - 1] : "1");
            assert_int_equal(nd_db_batch(out, keys, db, bt.d, bt.n, 3, 0x80), ND_EINVAL);
            assert_int_equal(nd_db_batch(out, keys, db, bt.d, bt.n, 3, 0), ND_ECORRUPT);
            assert_non_null(strstr(nd_errmsg(), want));
            assert_int_equal(nd_results_count(keys), 0);
        }
        db->batch_probes_max = 0;
        corrupt_table(db, t, &sv, 0);
        set_threads(db, "4");
        assert_int_equal(nd_db_batch(out, keys, db, bt.d, bt.n, 3, 0), ND_OK);
    }
    assert_int_equal(nd_db_verify(db), ND_OK);
    set_threads(db, NULL);
    free(out);
    docset_free(&bt);
    free(stored);
}

/* New documents of an added batch: their table entries wait in the mirror
 * (db->mirror.fps) when there are at most DB_MIRRORED_CALL of them, behind
 * those already waiting when probed (a merge writes those first); more
 * are written as table keys. Every one is found after each step. */
static void add_new_batch(nd_db *db, nd_results *res, oracle_rng *r, size_t n, size_t from,
                          size_t want_mirrored)
{
    docset bt;
    docset_init(&bt, n);
    char key[24];
    for (size_t i = 0; i < n; i++) {
        sprintf(key, "n%zu", from + i);
        docset_add(&bt, key, oracle_next(r));
    }
    nd_batch_item *out = calloc(n, sizeof *out);
    assert_int_equal(nd_db_batch(out, res, db, bt.d, n, 3, ND_BATCH_ADD), ND_OK);
    for (size_t i = 0; i < n; i++) assert_false(out[i].dup);
    assert_int_equal(db->mirror.fps.n, want_mirrored);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(nd_db_query(res, db, bt.d[i].fp, 0, NULL), ND_OK);
        assert_int_equal(nd_results_count(res), 1);
        assert_string_equal(nd_results_get(res, 0)->key, (const char *)bt.d[i].key);
    }
    free(out);
    docset_free(&bt);
}

static void test_batch_add_waits(void **state)
{
    db_fixture *fx = *state;
    oracle_rng r = {31337};
    uint64_t base[THREAD_NS];
    for (size_t i = 0; i < THREAD_NS; i++) base[i] = oracle_next(&r);
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 8);
    store_base(db, base, THREAD_NS, 0);
    size_t w = db->mirror.fps.n; /* the single adds of store_base's second half */
    assert_true(w > 0);
    db->batch_probes_max = SIZE_MAX;
    add_new_batch(db, fx->res, &r, 700, 0, w + 700);
    add_new_batch(db, fx->res, &r, DB_MIRRORED_CALL + 1, 700, w + 700);
    db->batch_probes_max = 0;
    add_new_batch(db, fx->res, &r, 500, 10000, 500);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* Probed batches of stored fingerprints, cut into 1 to 4 slices: every
 * document finds itself, whatever the batch's size against the slices. */
static void test_batch_probe_slices(void **state)
{
    db_fixture *fx = *state;
    static const char *const counts[] = {"1", "2", "3", "4"};
    static const size_t sizes[] = {1, 31, 32, 33, 64, 65, 257, 1000};
    oracle_rng r = {4711};
    uint64_t base[THREAD_NS];
    for (size_t i = 0; i < THREAD_NS; i++) base[i] = oracle_next(&r);
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 8);
    store_base(db, base, THREAD_NS, 0);
    db->batch_probes_max = SIZE_MAX;
    nd_doc docs[1000];
    nd_batch_item out[1000];
    for (size_t i = 0; i < 1000; i++) docs[i] = (nd_doc){"q", 1, base[3 * i], 0, 0};
    for (size_t c = 0; c < 4; c++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            set_threads(db, counts[c]);
            assert_int_equal(nd_db_batch(out, fx->res, db, docs, sizes[z], 3, 0), ND_OK);
            for (size_t i = 0; i < sizes[z]; i++) {
                assert_true(out[i].dup);
                assert_true(out[i].match_index == ND_BATCH_STORED);
                assert_int_equal(out[i].dist, 0);
                assert_true(out[i].match_fp == docs[i].fp);
            }
        }
    set_threads(db, NULL);
}

static void test_batch_errors(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 8);
    nd_results *keys = fx->res;
    nd_batch_item item;
    nd_doc d = {"x", 1, 1, 0, 0};
    assert_int_equal(nd_db_batch(&item, keys, db, &d, 1, ND_MAX_K + 1, 0), ND_EINVAL);
    assert_int_equal(nd_db_batch(&item, keys, db, &d, 1, 3, 0x80), ND_EINVAL);
    assert_int_equal(nd_db_batch(&item, NULL, db, &d, 1, 3, 0), ND_EINVAL);
    d.key_len = 0;
    assert_int_equal(nd_db_batch(&item, keys, db, &d, 1, 3, ND_BATCH_ADD), ND_EINVAL);
    assert_int_equal(nd_db_import(db, &d, 1), ND_EINVAL);
    d.key_len = ND_MAX_KEY_LEN + 1;
    assert_int_equal(nd_db_import(db, &d, 1), ND_ELIMIT);
    assert_int_equal(nd_db_import(db, NULL, 0), ND_OK);
}

/* Import calls grow with the store: half of it, from 1M to 8M. */
static void test_import_step(void **state)
{
    (void)state;
    assert_int_equal(nd_db_import_step(0), 1000000);
    assert_int_equal(nd_db_import_step(2100000), 1050000);
    assert_int_equal(nd_db_import_step(10000000), 5000000);
    assert_int_equal(nd_db_import_step(UINT64_MAX), 8000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_import_oracle),
        cmocka_unit_test(test_import_step),
        DB_FIXTURE_TEST(test_batch_k3_runs),
        DB_FIXTURE_TEST(test_batch_k3_fresh),
        DB_FIXTURE_TEST(test_batch_k2),
        DB_FIXTURE_TEST(test_batch_k5_beyond_plan),
        DB_FIXTURE_TEST(test_batch_k3_sparse),
        DB_FIXTURE_TEST(test_batch_k3_runs_probed),
        DB_FIXTURE_TEST(test_batch_k3_fresh_probed),
        DB_FIXTURE_TEST(test_batch_k2_probed),
        DB_FIXTURE_TEST(test_batch_k3_sparse_probed),
        DB_FIXTURE_TEST(test_batch_errors),
        DB_FIXTURE_TEST(test_batch_add_waits),
        DB_FIXTURE_TEST(test_batch_probe_slices),
        DB_FIXTURE_TEST(test_batch_threads),
        DB_FIXTURE_TEST(test_batch_thread_errors),
        DB_FIXTURE_TEST(test_batch_waiting_during_folds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
