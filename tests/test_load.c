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
 * Another writer storing a spilled key before the commit is overridden by
 * the loader's document, also when the load holds that key again in a
 * later chunk (spilled after the other writer's store, or the last one):
 * then the later document wins, and when the other writer stored the
 * loader's own fingerprint; a key of the unspilled last chunk stored
 * by another writer is replaced too. A key stored before the load,
 * replaced at its spill and stored again by another writer keeps the other
 * writer's document.
 *
 * Temporary files: spills go to an "nd-load-*" directory in the database
 * directory; nd_loader_free (with or without commit) leaves no "nd-load-*"
 * entry; free without commit drops every new document but keeps the
 * replacements written at spills. A stale "nd-load-*" directory is removed
 * by the next writable nd_db_open and left alone by a read-only one.
 *
 * Errors: a chunk file lost before the commit fails it with ND_EIO naming
 * the file, whichever pass (and thread) reads it, and the store keeps what
 * it held; add after commit and a second commit give ND_EINVAL; a read-only
 * handle gives ND_EREADONLY; a key over ND_MAX_KEY_LEN gives ND_ELIMIT and
 * adds nothing of that call (the loader goes on); NULL docs give
 * ND_EINVAL; an empty key is refused as nd_db_import refuses it;
 * nd_loader_free(NULL) is a no-op; an empty load commits nothing.
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
#include "neardup.h"
#include "oracle.h"
#include "tmpdir.h"

enum { K = 3 };

static void key_of(char *buf, size_t i) { sprintf(buf, "d%zu", i); }

/* rc must be ND_OK; otherwise print what failed with nd_errmsg(). */
static void expect_ok(int rc, const char *what)
{
    if (rc) fprintf(stderr, "%s: %s\n", what, nd_errmsg());
    assert_int_equal(rc, ND_OK);
}

/* The run 'load_serial' (tests/meson.build) sets ND_TEST_THREADS=1: the
 * same checks with every loader pass on the calling thread. */
static unsigned test_threads(void)
{
    const char *env = getenv("ND_TEST_THREADS");
    return env ? (unsigned)atoi(env) : 0;
}

static nd_db *open_db(const char *path, unsigned k, unsigned tables, unsigned run_size)
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

static nd_db *open_ro(const char *path)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_READONLY;
    expect_ok(nd_db_open(&db, path, &o), "open read-only");
    return db;
}

/* Entries of dir whose name starts with "nd-load-". */
static int count_load_dirs(const char *dir)
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

static void model_put(model *m, const char *key, uint64_t fp, double score, int64_t time)
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

static int cmp_mdoc_seq(const void *a, const void *b)
{
    const mdoc *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

static int cmp_mdoc_key(const void *a, const void *b)
{
    return strcmp(((const mdoc *)a)->key, ((const mdoc *)b)->key);
}

/* The final document set, sorted by key: the last write of each key. */
static mdoc *model_final(const model *m, size_t *out_n)
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

static const mdoc *final_find(const mdoc *f, size_t n, const char *key, size_t key_len)
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

static int visit_cb(const nd_doc *d, void *payload)
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


static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t distinct_fps(const mdoc *f, size_t n)
{
    uint64_t *a = malloc((n + 1) * sizeof *a), d = 0;
    for (size_t i = 0; i < n; i++) a[i] = f[i].fp;
    qsort(a, n, sizeof *a, cmp_u64);
    for (size_t i = 0; i < n; i++) d += i == 0 || a[i] != a[i - 1];
    free(a);
    return d;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The documents nd_db_query returns equal those of a popcount scan of the
 * final set, with their distances. */
static void check_query(nd_db *db, const mdoc *f, const uint64_t *fps, size_t n, uint64_t q,
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
static void check_db(nd_db *db, const mdoc *f, size_t n, const uint64_t *qs, size_t nq,
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
static void check_reopened(db_fixture *fx, const mdoc *f, size_t n, const uint64_t *qs, size_t nq,
                           unsigned kmax)
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

static void docs_add(docs *s, const char *key, uint64_t fp, double score, int64_t time)
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
static nd_doc *docs_fix(docs *s)
{
    for (size_t i = 0; i < s->n; i++) s->d[i].key = s->keys[i];
    return s->d;
}

static void docs_free(docs *s)
{
    free(s->d);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

/* One document through the loader, recorded in the model. */
static void ladd(nd_loader *l, model *m, const char *key, uint64_t fp, double score,
                 int64_t time)
{
    nd_doc d = {key, strlen(key), fp, score, time};
    int rc = nd_loader_add(l, &d, 1);
    if (rc) fprintf(stderr, "nd_loader_add(%s): %s\n", key, nd_errmsg());
    assert_int_equal(rc, ND_OK);
    if (m) model_put(m, key, fp, score, time);
}

/* nd_db_add, recorded in the model. */
static void dadd(nd_db *db, model *m, const char *key, uint64_t fp, double score, int64_t time)
{
    assert_int_equal(nd_db_add(db, key, strlen(key), fp, score, time), ND_OK);
    if (m) model_put(m, key, fp, score, time);
}

/* The stored fingerprint of key (asserting it is stored). */
static uint64_t get_fp(nd_db *db, const char *key)
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

static void assert_absent(nd_db *db, const char *key)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    int rc = nd_db_get(res, db, key, strlen(key));
    if (rc != ND_ENOTFOUND) fprintf(stderr, "%s: want ENOTFOUND, got %d\n", key, rc);
    assert_int_equal(rc, ND_ENOTFOUND);
    nd_results_free(res);
}

/* Documents whose fingerprint is fp exactly. */
static size_t count_at(nd_db *db, uint64_t fp)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    assert_int_equal(nd_db_query(res, db, fp, 0, NULL), ND_OK);
    size_t n = nd_results_count(res);
    nd_results_free(res);
    return n;
}

/* The model takes docs[0..n) in order (later ones win). */
static void model_put_docs(model *m, const nd_doc *docs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        model_put(m, docs[i].key, docs[i].fp, docs[i].score, docs[i].time);
}

/* No document holds any of fp[gone[0..n)]. */
static void assert_gone(nd_db *db, const uint64_t *fp, const int *gone, size_t n)
{
    for (size_t i = 0; i < n; i++) assert_int_equal(count_at(db, fp[gone[i]]), 0);
}

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

/* Distinct random fingerprints for hand-made cases. */
static void random_fps(uint64_t *out, size_t n, uint64_t seed)
{
    oracle_rng r = {seed};
    for (size_t i = 0; i < n; i++) out[i] = oracle_next(&r);
}

/* Score and time of a stored key. */
static void get_score_time(nd_db *db, const char *key, double *score, int64_t *time)
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
static void check_hand(db_fixture *fx, model *m, const uint64_t *all, size_t nall, int reopen)
{
    size_t nf;
    mdoc *f = model_final(m, &nf);
    check_db(fx->db, f, nf, all, nall, 2);
    if (reopen) check_reopened(fx, f, nf, all, nall, 2);
    free(f);
}

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

/* ---- another writer between the spill and the commit ------------------ */

/* Name of x among fp[0..n) for a message. */
static const char *fp_name(const uint64_t *fp, const char *const *names, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (fp[i] == x) return names[i];
    return "?";
}

/* Each key's stored fingerprint is fp[want]; every mismatch is printed
 * before the assertion fails. */
typedef struct want_fp {
    const char *key;
    int want;
} want_fp;

static void assert_wins(nd_db *db, const want_fp *w, size_t n, const uint64_t *fp,
                        const char *const *names, size_t nf)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t got = get_fp(db, w[i].key);
        if (got != fp[w[i].want]) {
            fprintf(stderr, "racing writer: %s holds %s, want %s\n", w[i].key,
                    fp_name(fp, names, nf, got), names[w[i].want]);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* K is spilled (written to the loader's files, not stored), then another
 * writer stores K; c1 is added to the loader (last chunk, unspilled), then
 * another writer stores it: after the commit both hold the loader's
 * document. S, stored before the load, is replaced when its chunk spills
 * and stored again by the other writer afterwards. */
static void test_racing_writer(void **state)
{
    db_fixture *fx = *state;
    enum { L, S0, S1, X, Y, W, CC, O1, A1, A2, B1, B2, B3, B4, C2, NF };
    static const char *const names[NF] = {"L",  "S0", "S1", "X",  "Y",  "W",  "CC", "O1",
                                          "A1", "A2", "B1", "B2", "B3", "B4", "C2"};
    uint64_t fp[NF];
    random_fps(fp, NF, 33);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 16);
    model m = {0};
    dadd(db, &m, "S", fp[S0], 0, 0);
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    /* chunk 1 spills: K new (to the files), S stored (replaced now) */
    nd_doc c1[4] = {{"K", 1, fp[L], 1, 1}, {"S", 1, fp[S1], 1, 1}, {"a1", 2, fp[A1], 1, 1},
                    {"a2", 2, fp[A2], 1, 1}};
    assert_int_equal(nd_loader_add(l, c1, 4), ND_OK);
    assert_true(get_fp(db, "S") == fp[S1]);
    assert_absent(db, "K");
    /* the other writer, after the spill */
    assert_int_equal(nd_db_add(db, "K", 1, fp[X], 2, 2), ND_OK);
    assert_int_equal(nd_db_add(db, "S", 1, fp[Y], 2, 2), ND_OK);
    dadd(db, &m, "o1", fp[O1], 2, 2); /* unrelated: stays */
    /* chunk 2 spills */
    nd_doc c2[4] = {{"b1", 2, fp[B1], 3, 3}, {"b2", 2, fp[B2], 3, 3}, {"b3", 2, fp[B3], 3, 3},
                    {"b4", 2, fp[B4], 3, 3}};
    assert_int_equal(nd_loader_add(l, c2, 4), ND_OK);
    /* the last chunk (unspilled); the other writer stores c1 meanwhile */
    nd_doc c3[2] = {{"c1", 2, fp[CC], 4, 4}, {"c2", 2, fp[C2], 4, 4}};
    assert_int_equal(nd_loader_add(l, c3, 2), ND_OK);
    assert_int_equal(nd_db_add(db, "c1", 2, fp[W], 5, 5), ND_OK);
    uint64_t nw = 0;
    expect_ok(nd_loader_finish(&nw, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    expect_ok(nd_db_verify(db), "verify");

    const want_fp wins[] = {{"K", L}, {"c1", CC}, {"c2", C2}, {"a1", A1}, {"b1", B1}};
    assert_wins(db, wins, sizeof wins / sizeof *wins, fp, names, NF);
    double sc;
    int64_t tm;
    get_score_time(db, "K", &sc, &tm);
    assert_true(sc == 1);
    assert_int_equal(tm, 1);
    get_score_time(db, "c1", &sc, &tm);
    assert_true(sc == 4);
    assert_int_equal(tm, 4);
    /* S: the loader replaced it in the store at its spill; the other
     * writer's later store of it stands (the contract's "a key the loader
     * replaced in the store keeps whatever another writer stores after
     * that replacement"). */
    uint64_t s_fp = get_fp(db, "S");
    assert_true(s_fp == fp[Y]);
    model_put_docs(&m, c1, 4);
    model_put_docs(&m, c2, 4);
    model_put_docs(&m, c3, 2);
    model_put(&m, "S", fp[Y], 2, 2);
    const int gone[] = {S0, X, W};
    assert_gone(db, fp, gone, sizeof gone / sizeof *gone);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* As above, but the spilled key comes again later in the load, after the
 * other writer stored it: the later document must win. K2: in chunk 1,
 * and in chunk 2, which spills after the other writer stored K2 (so chunk
 * 2's document replaces it then). K3: in chunk 1, and in the unspilled
 * last chunk (stored by then, so replaced at the commit). */
static void test_racing_writer_superseded(void **state)
{
    db_fixture *fx = *state;
    enum { Z1, Z2, Z, T1, T2, T, A1, A2, B1, B2, B3, C1, NF };
    static const char *const names[NF] = {"Z1", "Z2", "Z",  "T1", "T2", "T",
                                          "A1", "A2", "B1", "B2", "B3", "C1"};
    uint64_t fp[NF];
    random_fps(fp, NF, 34);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 16);
    model m = {0};
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    /* chunk 1 spills: K2, K3 new (to the files) */
    nd_doc c1[4] = {{"K2", 2, fp[Z1], 1, 1}, {"K3", 2, fp[T1], 1, 1}, {"a1", 2, fp[A1], 1, 1},
                    {"a2", 2, fp[A2], 1, 1}};
    assert_int_equal(nd_loader_add(l, c1, 4), ND_OK);
    /* the other writer */
    assert_int_equal(nd_db_add(db, "K2", 2, fp[Z], 2, 2), ND_OK);
    assert_int_equal(nd_db_add(db, "K3", 2, fp[T], 2, 2), ND_OK);
    /* chunk 2 spills: K2 is stored by now, so it is replaced now */
    nd_doc c2[4] = {{"K2", 2, fp[Z2], 3, 3}, {"b1", 2, fp[B1], 3, 3}, {"b2", 2, fp[B2], 3, 3},
                    {"b3", 2, fp[B3], 3, 3}};
    assert_int_equal(nd_loader_add(l, c2, 4), ND_OK);
    assert_true(get_fp(db, "K2") == fp[Z2]);
    /* the last chunk (unspilled): K3 again */
    nd_doc c3[2] = {{"K3", 2, fp[T2], 4, 4}, {"c1", 2, fp[C1], 4, 4}};
    assert_int_equal(nd_loader_add(l, c3, 2), ND_OK);
    uint64_t nw = 0;
    expect_ok(nd_loader_finish(&nw, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    expect_ok(nd_db_verify(db), "verify");

    const want_fp wins[] = {{"K2", Z2}, {"K3", T2}, {"a1", A1}, {"b1", B1}, {"c1", C1}};
    assert_wins(db, wins, sizeof wins / sizeof *wins, fp, names, NF);
    model_put_docs(&m, c1, 4);
    model_put_docs(&m, c2, 4);
    model_put_docs(&m, c3, 2);
    const int gone[] = {Z1, Z, T1, T};
    assert_gone(db, fp, gone, sizeof gone / sizeof *gone);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* The other writer stores a spilled key with the loader's own fingerprint:
 * its rev entry is the one the loader's document would write. rev after
 * docs leaves the loader's entry out (the key is replaced after the
 * switch); a rev written beside docs as if nothing were left out meets
 * the stored entry, which must not fail the commit. The loader's score
 * and time win. */
static void test_racing_writer_same_fp(void **state)
{
    db_fixture *fx = *state;
    enum { L, A1, A2, B1, NF };
    uint64_t fp[NF];
    random_fps(fp, NF, 35);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 16);
    model m = {0};
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 2), ND_OK);
    nd_doc c1[2] = {{"K", 1, fp[L], 1, 1}, {"a1", 2, fp[A1], 1, 1}};
    assert_int_equal(nd_loader_add(l, c1, 2), ND_OK); /* spilled */
    assert_int_equal(nd_db_add(db, "K", 1, fp[L], 2, 2), ND_OK);
    nd_doc c2[2] = {{"a2", 2, fp[A2], 3, 3}, {"b1", 2, fp[B1], 3, 3}};
    assert_int_equal(nd_loader_add(l, c2, 2), ND_OK);
    uint64_t nw = 0;
    expect_ok(nd_loader_finish(&nw, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(nw, 3); /* K was stored by the commit */
    expect_ok(nd_db_verify(db), "verify");
    double sc;
    int64_t tm;
    get_score_time(db, "K", &sc, &tm);
    assert_true(sc == 1);
    assert_int_equal(tm, 1);
    model_put_docs(&m, c1, 2);
    model_put_docs(&m, c2, 2);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* ---- free without commit; temporary files ----------------------------- */

static void test_free_without_commit(void **state)
{
    db_fixture *fx = *state;
    char key[16];
    enum { S1, S2, S3, A, B, NEW0, NF = NEW0 + 9 };
    uint64_t fp[NF];
    random_fps(fp, NF, 44);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 0);
    model m = {0};
    nd_doc pre[2] = {{"S1", 2, fp[S1], 0, 0}, {"S2", 2, fp[S2], 0, 0}};
    assert_int_equal(nd_db_import(db, pre, 2), ND_OK);
    model_put(&m, "S1", fp[S1], 0, 0);
    model_put(&m, "S2", fp[S2], 0, 0);
    dadd(db, &m, "S3", fp[S3], 0, 0);

    /* A loader freed at once leaves nothing behind. */
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);

    /* One spill (S1 replaced then), an unspilled rest (S2), no commit. */
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    ladd(l, NULL, "S1", fp[A], 1, 1);
    model_put(&m, "S1", fp[A], 1, 1); /* the replacement stays */
    for (int i = 0; i < 3; i++) {
        sprintf(key, "n%d", i);
        ladd(l, NULL, key, fp[NEW0 + i], 1, 1);
    }
    assert_int_equal(count_load_dirs(fx->path), 1);
    ladd(l, NULL, "S2", fp[B], 1, 1);
    ladd(l, NULL, "n3", fp[NEW0 + 3], 1, 1);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    for (int i = 0; i < 4; i++) {
        sprintf(key, "n%d", i);
        assert_absent(db, key);
        assert_int_equal(count_at(db, fp[NEW0 + i]), 0);
    }
    assert_true(get_fp(db, "S1") == fp[A]);
    assert_true(get_fp(db, "S2") == fp[S2]);
    assert_true(get_fp(db, "S3") == fp[S3]);
    assert_int_equal(count_at(db, fp[B]), 0);
    check_hand(fx, &m, fp, NF, 0);

    /* Commit, then free: nothing left either. */
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    for (int i = 4; i < 9; i++) {
        sprintf(key, "n%d", i);
        ladd(l, &m, key, fp[NEW0 + i], 2, 2);
    }
    uint64_t nw = 0;
    assert_int_equal(nd_loader_finish(&nw, l), ND_OK);
    assert_int_equal(nw, 5);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* The loader's directory into out ("" when there is none). */
static void load_dir_of(const char *db_path, char *out, size_t cap)
{
    DIR *d = opendir(db_path);
    assert_non_null(d);
    out[0] = '\0';
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "nd-load-", 8) == 0) snprintf(out, cap, "%s/%s", db_path, e->d_name);
    closedir(d);
}

/* A load set up to fail: a database at fx->path holding one document
 * ("x"), a loader into it of chunks of 4, and n documents "k0".. with
 * random fingerprints. */
typedef struct failing_load {
    db_fixture *fx;
    char ld[512];
    nd_loader *l;
    nd_doc docs[16];
    char keys[16][8];
    size_t n;
} failing_load;

static void failing_load_start(failing_load *f, db_fixture *fx, size_t n, uint64_t seed)
{
    uint64_t fp[16];
    assert_true(n <= 16);
    f->fx = fx;
    f->n = n;
    fx->db = open_db(fx->path, K, 4, 16);
    assert_int_equal(nd_db_add(fx->db, "x", 1, 42, 0, 0), ND_OK);
    f->l = NULL;
    assert_int_equal(nd_loader_new(&f->l, fx->db, 4), ND_OK);
    load_dir_of(fx->path, f->ld, sizeof f->ld);
    assert_true(f->ld[0] != '\0');
    random_fps(fp, n, seed);
    for (size_t i = 0; i < n; i++) {
        snprintf(f->keys[i], sizeof f->keys[i], "k%zu", i);
        f->docs[i] = (nd_doc){f->keys[i], strlen(f->keys[i]), fp[i], 1, 1};
    }
}

/* The failed load freed: nothing of it on disk, the store as it was. The
 * database is deleted, so that the test's next case starts empty. */
static void failing_load_end(failing_load *f)
{
    db_fixture *fx = f->fx;
    nd_loader_free(f->l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    uint64_t ndocs = 0;
    assert_int_equal(nd_db_counts(&ndocs, NULL, fx->db), ND_OK);
    assert_int_equal(ndocs, 1);
    for (size_t i = 0; i < f->n; i++) assert_absent(fx->db, f->keys[i]);
    expect_ok(nd_db_verify(fx->db), "verify");
    assert_int_equal(db_fixture_close(fx), ND_OK);
    tmpdir_remove(fx->path);
}

/* A chunk file lost before the commit: the commit fails with ND_EIO
 * naming it, whichever pass reads it (docs; rev, written beside docs
 * where cores allow; an even table and an odd one, which go to a second
 * thread there), and the store keeps what it held. */
static void test_lost_chunk_file(void **state)
{
    const char *lost[] = {"c000000.docs", "c000001.rev", "c000000.t00", "c000001.t01"};
    for (size_t i = 0; i < sizeof lost / sizeof *lost; i++) {
        failing_load f;
        char file[600];
        failing_load_start(&f, *state, 14, 36 + i);
        /* 3 chunks spill; the files of the first two are written before
         * the call returns (the third's writer may still run) */
        assert_int_equal(nd_loader_add(f.l, f.docs, 14), ND_OK);
        snprintf(file, sizeof file, "%s/%s", f.ld, lost[i]);
        assert_int_equal(unlink(file), 0);
        assert_int_equal(nd_loader_finish(NULL, f.l), ND_EIO);
        if (!strstr(nd_errmsg(), lost[i])) fail_msg("%s: %s", lost[i], nd_errmsg());
        failing_load_end(&f);
    }
}

/* A chunk's files are written by a task while the caller fills the next
 * chunk, so a failure to write them comes back from the next call that
 * waits for that task: the add that fills the next chunk (then the loader
 * takes nothing more) or the commit. Either way the store keeps what it
 * held and nothing of the load is left on disk. The failure: a directory
 * where chunk 1's docs file goes (fopen fails on it even for root). */
static void test_writer_failure(void **state)
{
    for (int at_commit = 0; at_commit < 2; at_commit++) {
        failing_load f;
        char block[600];
        failing_load_start(&f, *state, 12, 61 + (uint64_t)at_commit);
        snprintf(block, sizeof block, "%s/c000001.docs", f.ld);
        assert_int_equal(mkdir(block, 0700), 0);
        assert_int_equal(nd_loader_add(f.l, f.docs, 4), ND_OK);     /* chunk 0 */
        assert_int_equal(nd_loader_add(f.l, f.docs + 4, 4), ND_OK); /* chunk 1: its writer fails */
        if (at_commit) {
            assert_int_equal(nd_loader_add(f.l, f.docs + 8, 2), ND_OK); /* no chunk filled */
            assert_int_equal(nd_loader_finish(NULL, f.l), ND_EIO);
        } else {
            assert_int_equal(nd_loader_add(f.l, f.docs + 8, 4), ND_EIO); /* chunk 2 filled */
        }
        if (!strstr(nd_errmsg(), "c000001.docs")) fail_msg("%s", nd_errmsg());
        assert_int_equal(nd_loader_add(f.l, f.docs, 1), ND_EINVAL);
        assert_int_equal(nd_loader_finish(NULL, f.l), ND_EINVAL);
        failing_load_end(&f);
    }
}

/* A stale "nd-load-*" directory (a crashed load's) goes at the next
 * writable open; a read-only open leaves it. */
static void test_stale_dir_removed(void **state)
{
    db_fixture *fx = *state;
    char sub[256], file[320];
    fx->db = open_db(fx->path, K, 0, 0);
    assert_int_equal(nd_db_add(fx->db, "x", 1, 42, 0, 0), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    const char *stale[] = {"nd-load-Ab12Cd", "nd-load-7"};
    for (int i = 0; i < 2; i++) {
        snprintf(sub, sizeof sub, "%s/%s", fx->path, stale[i]);
        assert_int_equal(mkdir(sub, 0755), 0);
        snprintf(file, sizeof file, "%s/chunk-000000", sub);
        FILE *fh = fopen(file, "w");
        assert_non_null(fh);
        fputs("half-written spill\n", fh);
        fclose(fh);
    }
    assert_int_equal(count_load_dirs(fx->path), 2);
    fx->db = open_ro(fx->path);
    assert_true(get_fp(fx->db, "x") == 42);
    assert_int_equal(count_load_dirs(fx->path), 2);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    assert_int_equal(count_load_dirs(fx->path), 2);
    fx->db = open_db(fx->path, K, 0, 0);
    assert_int_equal(count_load_dirs(fx->path), 0);
    assert_true(get_fp(fx->db, "x") == 42);
    expect_ok(nd_db_verify(fx->db), "verify");
    assert_int_equal(db_fixture_close(fx), ND_OK);
}

/* ---- errors ----------------------------------------------------------- */

static void test_errors(void **state)
{
    db_fixture *fx = *state;
    fx->db = open_db(fx->path, K, 0, 0);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    nd_loader_free(NULL);

    /* Read-only handle. */
    fx->db = open_ro(fx->path);
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, fx->db, 4), ND_EREADONLY);
    assert_int_equal(db_fixture_close(fx), ND_OK);

    fx->db = open_db(fx->path, K, 0, 0);
    model m = {0};
    uint64_t fp[16];
    random_fps(fp, 16, 55);
    char *big = calloc(1, ND_MAX_KEY_LEN + 2);
    memset(big, 'k', ND_MAX_KEY_LEN + 1);

    /* An empty load commits nothing. */
    uint64_t nw = 99;
    assert_int_equal(nd_loader_new(&l, fx->db, 4), ND_OK);
    assert_int_equal(nd_loader_finish(&nw, l), ND_OK);
    assert_int_equal(nw, 0);
    nd_loader_free(l);

    assert_int_equal(nd_loader_new(&l, fx->db, 4), ND_OK);
    nd_doc one = {"a0", 2, fp[0], 0, 0};
    assert_int_equal(nd_loader_add(l, NULL, 1), ND_EINVAL);
    /* A key too long: nothing of the call is added, wherever it is. */
    nd_doc bad1[3] = {{"g1", 2, fp[1], 0, 0}, {big, ND_MAX_KEY_LEN + 1, fp[2], 0, 0},
                      {"g2", 2, fp[3], 0, 0}};
    assert_int_equal(nd_loader_add(l, bad1, 3), ND_ELIMIT);
    ladd(l, &m, "a1", fp[4], 0, 0);
    ladd(l, &m, "a2", fp[5], 0, 0);
    ladd(l, &m, "a3", fp[6], 0, 0);
    /* g3 and g4 would fill the chunk (and spill) if added before the check */
    nd_doc bad2[3] = {{"g3", 2, fp[7], 0, 0}, {"g4", 2, fp[8], 0, 0},
                      {big, ND_MAX_KEY_LEN + 1, fp[9], 0, 0}};
    assert_int_equal(nd_loader_add(l, bad2, 3), ND_ELIMIT);
    /* An empty key is refused as nd_db_import refuses it. */
    nd_doc empty = {"", 0, fp[10], 0, 0};
    assert_int_equal(nd_loader_add(l, &empty, 1), ND_EINVAL);
    /* The loader goes on. */
    ladd(l, &m, "a4", fp[11], 0, 0); /* fills the chunk: spill */
    nd_doc maxkey = {big, ND_MAX_KEY_LEN, fp[12], 0, 0};
    assert_int_equal(nd_loader_add(l, &maxkey, 1), ND_OK);
    ladd(l, &m, "a5", fp[13], 0, 0);
    assert_int_equal(nd_loader_finish(&nw, l), ND_OK);
    assert_int_equal(nw, 6); /* a1..a5 and the longest key */
    /* Committed: adds and a second commit are refused. */
    assert_int_equal(nd_loader_add(l, &one, 1), ND_EINVAL);
    assert_int_equal(nd_loader_finish(&nw, l), ND_EINVAL);
    assert_int_equal(nd_loader_finish(NULL, l), ND_EINVAL);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    const char *gone[] = {"g1", "g2", "g3", "g4", "a0"};
    for (size_t i = 0; i < 5; i++) assert_absent(fx->db, gone[i]);
    for (int i = 1; i <= 3; i++) assert_int_equal(count_at(fx->db, fp[i]), 0);
    for (int i = 7; i <= 10; i++) assert_int_equal(count_at(fx->db, fp[i]), 0);
    assert_true(get_fp(fx->db, "a1") == fp[4]);
    assert_int_equal(nd_db_get(fx->res, fx->db, big, ND_MAX_KEY_LEN), ND_OK);
    assert_true(nd_results_get(fx->res, 0)->fp == fp[12]);

    /* out_new may be NULL. */
    assert_int_equal(nd_loader_new(&l, fx->db, 0), ND_OK);
    ladd(l, &m, "b1", fp[14], 0, 0);
    assert_int_equal(nd_loader_finish(NULL, l), ND_OK);
    nd_loader_free(l);
    assert_true(get_fp(fx->db, "b1") == fp[14]);

    uint64_t ndocs = 0;
    assert_int_equal(nd_db_counts(&ndocs, NULL, fx->db), ND_OK);
    assert_int_equal(ndocs, 7);
    expect_ok(nd_db_verify(fx->db), "verify");
    assert_int_equal(db_fixture_close(fx), ND_OK);
    free(big);
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
        DB_FIXTURE_TEST(test_racing_writer),
        DB_FIXTURE_TEST(test_writer_failure),
        DB_FIXTURE_TEST(test_racing_writer_superseded),
        DB_FIXTURE_TEST(test_racing_writer_same_fp),
        DB_FIXTURE_TEST(test_free_without_commit),
        DB_FIXTURE_TEST(test_stale_dir_removed),
        DB_FIXTURE_TEST(test_lost_chunk_file),
        DB_FIXTURE_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
