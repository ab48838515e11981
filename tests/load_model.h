/*
 * load_model.h — what the bulk loader's tests share (test_load.c,
 * test_load_races.c): the model of a load (documents in write order, the
 * last of a key winning), the checks of a store against its final
 * document set (every query against the brute-force scan, the walk,
 * counts, verify, after a reopen too), and the stores they open
 * (ND_TEST_THREADS: the loader's threads). Include it after cmocka.h.
 */
#ifndef ND_TEST_LOAD_MODEL_H
#define ND_TEST_LOAD_MODEL_H

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

#include "neardup.h"
#include "oracle.h"
#include "tmpdir.h"

enum { K = 3 };

static inline void key_of(char *buf, size_t i) { sprintf(buf, "d%zu", i); }

/* rc must be ND_OK; otherwise print what failed with nd_errmsg(). */
static inline void expect_ok(int rc, const char *what)
{
    if (rc) fprintf(stderr, "%s: %s\n", what, nd_errmsg());
    assert_int_equal(rc, ND_OK);
}

/* The run 'load_serial' (tests/meson.build) sets ND_TEST_THREADS=1: the
 * same checks with every loader pass on the calling thread. */
static inline unsigned test_threads(void)
{
    const char *env = getenv("ND_TEST_THREADS");
    return env ? (unsigned)atoi(env) : 0;
}

static inline nd_db *open_db(const char *path, unsigned k, unsigned tables, unsigned run_size)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND; /* nd_db_add'ed entries stay fresh */
    o.threads = test_threads();
    o.k = k;
    o.has_k = 1;
    o.tables = tables;
    o.run_size = run_size;
    o.expected_docs = 100000;
    expect_ok(nd_db_open(&db, path, &o), "open");
    return db;
}

static inline nd_db *open_ro(const char *path)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_READONLY;
    expect_ok(nd_db_open(&db, path, &o), "open read-only");
    return db;
}

/* Entries of dir whose name starts with "nd-load-". */
static inline int count_load_dirs(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "nd-load-", 8) == 0) n++;
    closedir(d);
    return n;
}

/* ---- the model: documents in write order; the last of a key wins ------ */

typedef struct mdoc {
    char key[24];
    uint64_t fp;
    double score;
    int64_t time;
    size_t seq; /* write order */
} mdoc;

typedef struct model {
    mdoc *d;
    size_t n, cap;
} model;

static inline void model_put(model *m, const char *key, uint64_t fp, double score, int64_t time)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->d = realloc(m->d, m->cap * sizeof *m->d);
        assert_non_null(m->d);
    }
    mdoc *x = &m->d[m->n];
    snprintf(x->key, sizeof x->key, "%s", key);
    x->fp = fp;
    x->score = score;
    x->time = time;
    x->seq = m->n++;
}

static inline int cmp_mdoc_seq(const void *a, const void *b)
{
    const mdoc *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

static inline int cmp_mdoc_key(const void *a, const void *b)
{
    return strcmp(((const mdoc *)a)->key, ((const mdoc *)b)->key);
}

/* The final document set, sorted by key: the last write of each key. */
static inline mdoc *model_final(const model *m, size_t *out_n)
{
    mdoc *f = malloc((m->n + 1) * sizeof *f);
    assert_non_null(f);
    if (m->n) memcpy(f, m->d, m->n * sizeof *f);
    qsort(f, m->n, sizeof *f, cmp_mdoc_seq);
    size_t w = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (w && strcmp(f[w - 1].key, f[i].key) == 0) f[w - 1] = f[i];
        else f[w++] = f[i];
    }
    *out_n = w;
    return f;
}

static inline const mdoc *final_find(const mdoc *f, size_t n, const char *key, size_t key_len)
{
    mdoc probe;
    if (key_len >= sizeof probe.key) return NULL;
    memcpy(probe.key, key, key_len);
    probe.key[key_len] = 0;
    return bsearch(&probe, f, n, sizeof *f, cmp_mdoc_key);
}

/* ---- checks of a database against a final document set ---------------- */

typedef struct visit {
    const mdoc *f;
    size_t n, seen;
    char last[64];
    int bad;
} visit;

static inline int visit_cb(const nd_doc *d, void *payload)
{
    visit *v = payload;
    const mdoc *m = final_find(v->f, v->n, d->key, d->key_len);
    if (!m) {
        fprintf(stderr, "foreach: unexpected key %.*s\n", (int)d->key_len, (const char *)d->key);
        v->bad = 1;
        return 1;
    }
    if (v->seen && strcmp(v->last, m->key) >= 0) v->bad = 2; /* key order, each once */
    if (m->fp != d->fp || m->score != d->score || m->time != d->time) {
        fprintf(stderr, "foreach: %s has fp %016llx score %g time %lld, want %016llx %g %lld\n",
                m->key, (unsigned long long)d->fp, d->score, (long long)d->time,
                (unsigned long long)m->fp, m->score, (long long)m->time);
        v->bad = 3;
    }
    snprintf(v->last, sizeof v->last, "%s", m->key);
    v->seen++;
    return 0;
}


static inline int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static inline uint64_t distinct_fps(const mdoc *f, size_t n)
{
    uint64_t *a = malloc((n + 1) * sizeof *a), d = 0;
    for (size_t i = 0; i < n; i++) a[i] = f[i].fp;
    qsort(a, n, sizeof *a, cmp_u64);
    for (size_t i = 0; i < n; i++) d += i == 0 || a[i] != a[i - 1];
    free(a);
    return d;
}

static inline int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The documents nd_db_query returns equal those of a popcount scan of the
 * final set, with their distances. */
static inline void check_query(nd_db *db, const mdoc *f, const uint64_t *fps, size_t n, uint64_t q,
                               unsigned k, size_t *scratch, nd_results *res)
{
    size_t m = oracle_scan(fps, n, q, k, scratch);
    assert_int_equal(nd_db_query(res, db, q, k, NULL), ND_OK);
    if (nd_results_count(res) != m)
        fprintf(stderr, "query %016llx k=%u: got %zu, oracle %zu\n", (unsigned long long)q, k,
                nd_results_count(res), m);
    assert_int_equal(nd_results_count(res), m);
    const char **want = malloc((m + 1) * sizeof *want), **got = malloc((m + 1) * sizeof *got);
    for (size_t i = 0; i < m; i++) {
        const nd_match *mt = nd_results_get(res, i);
        want[i] = f[scratch[i]].key;
        got[i] = mt->key;
        assert_int_equal(mt->dist, nd_hamming(mt->fp, q));
        assert_true(mt->dist <= k);
        if (i) assert_true(nd_results_get(res, i - 1)->dist <= mt->dist);
    }
    qsort(want, m, sizeof *want, cmp_cstr);
    qsort(got, m, sizeof *got, cmp_cstr);
    for (size_t i = 0; i < m; i++) assert_string_equal(want[i], got[i]);
    free(want);
    free(got);
}

/* The database holds exactly the documents f[0..n) (sorted by key):
 * nd_db_foreach_doc, the counters, nd_db_stats, every query at distance
 * 0..kmax around each of qs[0..nq) and some random ones, nd_db_verify. */
static inline void check_db(nd_db *db, const mdoc *f, size_t n, const uint64_t *qs, size_t nq,
                            unsigned kmax)
{
    visit v = {f, n, 0, "", 0};
    assert_int_equal(nd_db_foreach_doc(db, visit_cb, &v), ND_OK);
    assert_int_equal(v.bad, 0);
    assert_int_equal(v.seen, n);

    uint64_t want_fps = distinct_fps(f, n), ndocs = 0, nfps = 0;
    assert_int_equal(nd_db_counts(&ndocs, &nfps, db), ND_OK);
    assert_int_equal(ndocs, n);
    assert_int_equal(nfps, want_fps);
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, n);
    assert_int_equal(st.fingerprints, want_fps);
    for (unsigned t = 0; t < st.tables; t++) assert_int_equal(st.table[t].entries, want_fps);

    uint64_t *fps = malloc((n + 1) * sizeof *fps);
    size_t *scratch = malloc((n + 1) * sizeof *scratch);
    for (size_t i = 0; i < n; i++) fps[i] = f[i].fp;
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    for (size_t q = 0; q < nq; q++)
        for (unsigned k = 0; k <= kmax; k++) check_query(db, f, fps, n, qs[q], k, scratch, res);
    oracle_rng r = {n * 7919u + 1};
    for (int i = 0; i < 10; i++) check_query(db, f, fps, n, oracle_next(&r), kmax, scratch, res);
    nd_results_free(res);
    free(scratch);
    free(fps);

    expect_ok(nd_db_verify(db), "verify");
}

/* The same checks after close + reopen. fx->db is closed on return. */
static inline void check_reopened(db_fixture *fx, const mdoc *f, size_t n, const uint64_t *qs,
                                  size_t nq, unsigned kmax)
{
    assert_int_equal(db_fixture_close(fx), ND_OK);
    fx->db = open_db(fx->path, K, 0, 0);
    check_db(fx->db, f, n, qs, nq, kmax);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    assert_int_equal(count_load_dirs(fx->path), 0);
}

/* ---- documents to load ------------------------------------------------ */

typedef struct docs {
    nd_doc *d;
    char (*keys)[24];
    size_t n, cap;
} docs;

static inline void docs_add(docs *s, const char *key, uint64_t fp, double score, int64_t time)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->d = realloc(s->d, s->cap * sizeof *s->d);
        s->keys = realloc(s->keys, s->cap * sizeof *s->keys);
        assert_true(s->d && s->keys);
    }
    snprintf(s->keys[s->n], sizeof s->keys[s->n], "%s", key);
    s->d[s->n] = (nd_doc){NULL, strlen(key), fp, score, time};
    s->n++;
}

/* Point the documents at their keys (the arrays may have moved). */
static inline nd_doc *docs_fix(docs *s)
{
    for (size_t i = 0; i < s->n; i++) s->d[i].key = s->keys[i];
    return s->d;
}

static inline void docs_free(docs *s)
{
    free(s->d);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

/* One document through the loader, recorded in the model. */
static inline void ladd(nd_loader *l, model *m, const char *key, uint64_t fp, double score,
                        int64_t time)
{
    nd_doc d = {key, strlen(key), fp, score, time};
    int rc = nd_loader_add(l, &d, 1);
    if (rc) fprintf(stderr, "nd_loader_add(%s): %s\n", key, nd_errmsg());
    assert_int_equal(rc, ND_OK);
    if (m) model_put(m, key, fp, score, time);
}

/* nd_db_add, recorded in the model. */
static inline void dadd(nd_db *db, model *m, const char *key, uint64_t fp, double score, int64_t time)
{
    assert_int_equal(nd_db_add(db, key, strlen(key), fp, score, time), ND_OK);
    if (m) model_put(m, key, fp, score, time);
}

/* The stored fingerprint of key (asserting it is stored). */
static inline uint64_t get_fp(nd_db *db, const char *key)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    int rc = nd_db_get(res, db, key, strlen(key));
    if (rc) fprintf(stderr, "nd_db_get(%s): %s\n", key, nd_strerror(rc));
    assert_int_equal(rc, ND_OK);
    assert_int_equal(nd_results_count(res), 1);
    uint64_t fp = nd_results_get(res, 0)->fp;
    nd_results_free(res);
    return fp;
}

static inline void assert_absent(nd_db *db, const char *key)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    int rc = nd_db_get(res, db, key, strlen(key));
    if (rc != ND_ENOTFOUND) fprintf(stderr, "%s: want ENOTFOUND, got %d\n", key, rc);
    assert_int_equal(rc, ND_ENOTFOUND);
    nd_results_free(res);
}

/* Documents whose fingerprint is fp exactly. */
static inline size_t count_at(nd_db *db, uint64_t fp)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    assert_int_equal(nd_db_query(res, db, fp, 0, NULL), ND_OK);
    size_t n = nd_results_count(res);
    nd_results_free(res);
    return n;
}

/* The model takes docs[0..n) in order (later ones win). */
static inline void model_put_docs(model *m, const nd_doc *docs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        model_put(m, docs[i].key, docs[i].fp, docs[i].score, docs[i].time);
}

/* No document holds any of fp[gone[0..n)]. */
static inline void assert_gone(nd_db *db, const uint64_t *fp, const int *gone, size_t n)
{
    for (size_t i = 0; i < n; i++) assert_int_equal(count_at(db, fp[gone[i]]), 0);
}

/* ---- hand-made cases ---------------------------------------------------- */

/* Distinct random fingerprints for hand-made cases. */
static inline void random_fps(uint64_t *out, size_t n, uint64_t seed)
{
    oracle_rng r = {seed};
    for (size_t i = 0; i < n; i++) out[i] = oracle_next(&r);
}

/* Score and time of a stored key. */
static inline void get_score_time(nd_db *db, const char *key, double *score, int64_t *time)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    assert_int_equal(nd_db_get(res, db, key, strlen(key)), ND_OK);
    *score = nd_results_get(res, 0)->score;
    *time = nd_results_get(res, 0)->time;
    nd_results_free(res);
}

/* Every final document and every fingerprint ever written (superseded
 * ones included) as query centres, distances 0..2; with reopen, again
 * after close + reopen (fx->db is closed on return). */
static inline void check_hand(db_fixture *fx, model *m, const uint64_t *all, size_t nall,
                              int reopen)
{
    size_t nf;
    mdoc *f = model_final(m, &nf);
    check_db(fx->db, f, nf, all, nall, 2);
    if (reopen) check_reopened(fx, f, nf, all, nall, 2);
    free(f);
}

#endif /* ND_TEST_LOAD_MODEL_H */
