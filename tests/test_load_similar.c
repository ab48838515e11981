/*
 * test_load_similar.c — the bulk loader (nd_loader_*) in a resemblance
 * store, against the contract of neardup.h ("Bulk loading", "Resemblance
 * stores"): the fingerprint-only loader's semantics (test_load.c), with
 * every document's sketch and band entries written with it.
 *
 * Exactness: the texts of similar_corpus.h (originals, copies edited at
 * several rates, simhash twins) and 1,500 unrelated texts, loaded through
 * chunks of 400 (several spill), into an empty store and into one already
 * holding documents (some imported, some nd_db_add_many'ed, some both)
 * whose keys the load mostly replaces. Keys come two or three times,
 * across chunks and within a chunk, every superseded version (and every
 * replaced stored one) a near copy of a probe text and the last an
 * unrelated text, so a superseded sketch that leaks shows as a wrong hit
 * (a leaked band entry alone only makes its key a candidate, rejected by
 * the key's stored sketch: the band-key count and verify show that). A reference store holds the same final documents (the
 * last of each key), written by nd_db_add_many. Afterwards, and again
 * after close + reopen: every probe (each corpus text, each superseded
 * version, a tenth of the others) gets from nd_db_query_doc the same keys
 * from both stores, with the same fingerprint, distance, resemblance,
 * score and time; no superseded version finds its own key; nd_db_foreach_doc
 * visits exactly the final documents (fingerprint, score, time, sketch);
 * nd_db_stats counts them, a sketch each and ND_SKETCH_BANDS band keys a
 * sketch; nd_db_counts agrees with the reference; nd_db_verify passes;
 * nd_loader_finish's out_new is the number of keys new to the store. The
 * same for a load that never fills a chunk (chunk_docs 0: one
 * nd_db_import) and one whose last add fills a chunk exactly.
 *
 * Visibility: new documents in spilled chunks are neither counted nor
 * found before the commit (the spill directory exists), all are after; a
 * stored key is replaced when its chunk spills, one of the unspilled last
 * chunk at the commit. Other writers: a key another writer stores after
 * its chunk spilled as new (or while it sits in the last chunk) holds the
 * loader's document after the commit, the other writer's text no longer
 * finding it; a key the loader replaced at a spill keeps what another
 * writer stores later. nd_loader_free without a commit stores nothing new,
 * keeps the spill's replacement, and leaves no "nd-load-*" directory.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "db_fixture.h"
#include "neardup.h"
#include "similar_corpus.h"

#define R 0.85
#define K SIM_K

/* ---- texts and document lists -------------------------------------------- */

/* Signatures of the texts a test makes (documents point at their sketch,
 * so the pool never moves). */
typedef struct sig_pool {
    nd_signature *sig;
    size_t n, cap;
} sig_pool;

static void pool_init(sig_pool *p, size_t cap)
{
    p->sig = calloc(cap, sizeof *p->sig);
    assert_non_null(p->sig);
    p->n = 0;
    p->cap = cap;
}

static const nd_signature *pool_sign(sig_pool *p, nd_db *db, const sim_text *t)
{
    assert_true(p->n < p->cap);
    sign(&p->sig[p->n], db, t);
    return &p->sig[p->n++];
}

/* A random text of 60-200 words, unrelated to every other. */
static const nd_signature *unrelated_text(sig_pool *p, nd_db *db)
{
    sim_text t;
    random_text(&t, 60 + rnd() % 141);
    return pool_sign(p, db, &t);
}

/* A near copy of the j-th long original of the corpus (100-400 words): an
 * edit of 1% of its words (edited again until its estimated resemblance
 * to the original is at least R), so a probe of the original finds it. */
static const nd_signature *near_copy(sig_pool *p, nd_db *db, const corpus *c, size_t j)
{
    size_t o = j % ORIGINALS;
    if (o % 3 == 0) o = (o + 1) % ORIGINALS; /* make_corpus: o % 3 == 0 is short */
    const nd_sketch *orig = &c->sig[o * (1 + RATES)].sketch;
    assert_true(p->n < p->cap);
    nd_signature *s = &p->sig[p->n];
    for (int tries = 0;; tries++) {
        sim_text e;
        assert_true(tries < 50);
        edit_text(&e, &c->t[o], 0.01);
        sign(s, db, &e);
        if (nd_sketch_resemblance(&s->sketch, orig) >= R) break;
    }
    p->n++;
    return s;
}

/* Documents in write order; keys copied, sketches pointing into a pool. */
typedef struct doc_list {
    nd_doc *d;
    char (*key)[24];
    size_t n, cap;
} doc_list;

static void list_init(doc_list *l, size_t cap)
{
    l->d = calloc(cap, sizeof *l->d);
    l->key = calloc(cap, sizeof *l->key);
    assert_true(l->d && l->key);
    l->n = 0;
    l->cap = cap;
}

static void list_free(doc_list *l)
{
    free(l->d);
    free(l->key);
}

static void list_add(doc_list *l, const char *key, const nd_signature *s, double score,
                     int64_t time)
{
    assert_true(l->n < l->cap);
    snprintf(l->key[l->n], sizeof l->key[l->n], "%s", key);
    l->d[l->n] = (nd_doc){l->key[l->n], strlen(key), s->fp, score, time, &s->sketch};
    l->n++;
}

/* Append a copy of d (its key copied). */
static void list_push(doc_list *l, const nd_doc *d)
{
    assert_true(l->n < l->cap && d->key_len < sizeof l->key[0]);
    memcpy(l->key[l->n], d->key, d->key_len);
    l->key[l->n][d->key_len] = '\0';
    l->d[l->n] = *d;
    l->d[l->n].key = l->key[l->n];
    l->n++;
}

/* Add to l in load order: score and time tell the versions apart. */
static void list_load(doc_list *l, const char *key, const nd_signature *s)
{
    list_add(l, key, s, (double)l->n, 100000 + (int64_t)l->n);
}

static int key_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

typedef struct seq_doc {
    nd_doc d;
    size_t seq;
} seq_doc;

static int cmp_seq_doc(const void *a, const void *b)
{
    const seq_doc *x = a, *y = b;
    int c = key_cmp(x->d.key, x->d.key_len, y->d.key, y->d.key_len);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The documents stored after writing first's and then then's (either
 * NULL): the last of each key, sorted by key. */
static nd_doc *final_docs(const doc_list *first, const doc_list *then, size_t *out_n)
{
    size_t n = (first ? first->n : 0) + (then ? then->n : 0), m = 0, out = 0;
    seq_doc *all = malloc((n ? n : 1) * sizeof *all);
    nd_doc *f = malloc((n ? n : 1) * sizeof *f);
    assert_true(all && f);
    for (size_t i = 0; first && i < first->n; i++, m++) all[m] = (seq_doc){first->d[i], m};
    for (size_t i = 0; then && i < then->n; i++, m++) all[m] = (seq_doc){then->d[i], m};
    qsort(all, n, sizeof *all, cmp_seq_doc);
    for (size_t i = 0; i < n; i++)
        if (i + 1 == n || key_cmp(all[i].d.key, all[i].d.key_len, all[i + 1].d.key,
                                  all[i + 1].d.key_len) != 0)
            f[out++] = all[i].d;
    free(all);
    *out_n = out;
    return f;
}

static const nd_doc *find_doc(const nd_doc *f, size_t n, const void *key, size_t key_len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = key_cmp(f[mid].key, f[mid].key_len, key, key_len);
        if (c == 0) return &f[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* ---- the checks ----------------------------------------------------------- */

static int count_load_dirs(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strncmp(e->d_name, "nd-load-", 8) == 0;
    closedir(d);
    return n;
}

static void expect_ok(int rc, const char *what)
{
    if (rc) fprintf(stderr, "%s: %s\n", what, nd_errmsg());
    assert_int_equal(rc, ND_OK);
}

static int cmp_match_key(const void *a, const void *b)
{
    const nd_match *x = a, *y = b;
    return key_cmp(x->key, x->key_len, y->key, y->key_len);
}

/* The matches of q in db, sorted by key, into out (at most cap); the
 * keys point into res. */
static size_t sorted_answer(nd_match *out, size_t cap, nd_results *res, nd_db *db,
                            const nd_doc *q)
{
    expect_ok(nd_db_query_doc(res, db, q, K, NULL), "nd_db_query_doc");
    size_t n = nd_results_count(res);
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++) out[i] = *nd_results_get(res, i);
    qsort(out, n, sizeof *out, cmp_match_key);
    return n;
}

static int same_match(const nd_match *a, const nd_match *b)
{
    return cmp_match_key(a, b) == 0 && a->fp == b->fp && a->dist == b->dist &&
           a->resemblance == b->resemblance && a->score == b->score && a->time == b->time;
}

/* Probe q gets the same answer from got as from want (keys, fingerprint,
 * distance, resemblance, score, time); the differences are printed
 * before the assertion fails. Returns the number of matches. */
static size_t same_answer(nd_db *got, nd_db *want, nd_results *rg, nd_results *rw,
                          const nd_doc *q, const char *probe)
{
    enum { CAP = 4 * ND_SKETCH_BANDS * ND_DB_BAND_CANDIDATES };
    static nd_match g[CAP], w[CAP];
    size_t ng = sorted_answer(g, CAP, rg, got, q), nw = sorted_answer(w, CAP, rw, want, q);
    int bad = ng != nw;
    for (size_t i = 0; i < ng && i < nw; i++) bad |= !same_match(&g[i], &w[i]);
    if (bad) fprintf(stderr, "probe %s: %zu matches, want %zu\n", probe, ng, nw);
    for (size_t i = 0; bad && i < ng + nw; i++) {
        const nd_match *m = i < ng ? &g[i] : &w[i - ng];
        fprintf(stderr, "  %s %s r %.3f dist %u score %g\n", i < ng ? "got " : "want", m->key,
                m->resemblance, m->dist, m->score);
    }
    assert_false(bad);
    return nw;
}

/* nd_db_foreach_doc visits exactly the final documents, sketches and all. */
typedef struct walk_check {
    const nd_doc *final;
    size_t n, seen, bad;
} walk_check;

static int walk_cb(const nd_doc *d, void *payload)
{
    walk_check *w = payload;
    const nd_doc *f = find_doc(w->final, w->n, d->key, d->key_len);
    w->seen++;
    if (!f || f->fp != d->fp || f->score != d->score || f->time != d->time || !d->sketch ||
        memcmp(f->sketch, d->sketch, sizeof *d->sketch) != 0) {
        if (w->bad++ < 5)
            fprintf(stderr, "walk: '%.*s' %s\n", (int)d->key_len, (const char *)d->key,
                    f ? "differs from its last loaded version" : "is not a final document");
    }
    return 0;
}

static void stats_are(nd_db *db, uint64_t docs)
{
    nd_stats st;
    expect_ok(nd_db_stats(&st, db), "nd_db_stats");
    assert_int_equal(st.documents, docs);
    assert_int_equal(st.sketches, docs);
    assert_int_equal(st.band_keys, docs * ND_SKETCH_BANDS);
}

/* db (loaded) against ref (the same final documents written online). */
static void check_store(nd_db *db, nd_db *ref, const nd_doc *final, size_t nfinal,
                        const doc_list *probes)
{
    expect_ok(nd_db_verify(db), "nd_db_verify");
    stats_are(db, nfinal);
    uint64_t docs = 0, fps = 0, ref_docs = 1, ref_fps = 1;
    assert_int_equal(nd_db_counts(&docs, &fps, db), ND_OK);
    assert_int_equal(nd_db_counts(&ref_docs, &ref_fps, ref), ND_OK);
    assert_true(docs == nfinal && ref_docs == nfinal);
    assert_int_equal(fps, ref_fps);
    walk_check w = {final, nfinal, 0, 0};
    assert_int_equal(nd_db_foreach_doc(db, walk_cb, &w), ND_OK);
    assert_int_equal(w.bad, 0);
    assert_int_equal(w.seen, nfinal);
    nd_results *rg = NULL, *rw = NULL;
    assert_int_equal(nd_results_new(&rg), ND_OK);
    assert_int_equal(nd_results_new(&rw), ND_OK);
    size_t matches = 0;
    for (size_t i = 0; i < probes->n; i++)
        matches += same_answer(db, ref, rg, rw, &probes->d[i], probes->key[i]);
    /* the probes decide something: near copies are found */
    assert_true(matches > probes->n);
    nd_results_free(rg);
    nd_results_free(rw);
}

/* Does a query of q's text find key (its resemblance into *resemblance)? */
static int text_finds(nd_db *db, nd_results *res, const nd_doc *q, const char *key,
                      double *resemblance)
{
    expect_ok(nd_db_query_doc(res, db, q, K, NULL), "nd_db_query_doc");
    for (size_t j = 0; j < nd_results_count(res); j++) {
        const nd_match *m = nd_results_get(res, j);
        if (key_cmp(m->key, m->key_len, key, strlen(key)) == 0) {
            if (resemblance) *resemblance = m->resemblance;
            return 1;
        }
    }
    return 0;
}

/* No superseded version finds its own key (its final text is unrelated). */
static void superseded_not_found(nd_db *db, nd_results *res, const doc_list *old)
{
    double r = 0;
    for (size_t i = 0; i < old->n; i++)
        if (text_finds(db, res, &old->d[i], old->key[i], &r))
            fail_msg("a superseded version of '%s' is still found (resemblance %.3f)",
                     old->key[i], r);
}

/* A probe of s's text. */
static nd_doc probe_of(const nd_signature *s)
{
    return (nd_doc){"q", 1, s->fp, 0, 0, &s->sketch};
}

/* key is stored with s's fingerprint and sketch: a probe of s's text finds
 * it at resemblance 1 (every bin of the stored sketch equal to s's). */
static void assert_holds(nd_db *db, nd_results *res, const char *key, const nd_signature *s)
{
    expect_ok(nd_db_get(res, db, key, strlen(key)), key);
    if (nd_results_get(res, 0)->fp != s->fp) fail_msg("'%s' does not hold its expected text", key);
    double r = 0;
    nd_doc q = probe_of(s);
    if (!text_finds(db, res, &q, key, &r)) fail_msg("the text '%s' holds does not find it", key);
    if (r != 1.0) fail_msg("'%s' holds another sketch (resemblance %.3f)", key, r);
}

static void assert_absent(nd_db *db, nd_results *res, const char *key)
{
    int rc = nd_db_get(res, db, key, strlen(key));
    if (rc != ND_ENOTFOUND) fail_msg("'%s' is stored (rc %d), want absent", key, rc);
}

/* ---- exactness against the reference store -------------------------------- */

enum { FILLERS = 1500, REPEATED = 120, POOL = 6000, LIST = 4000 };

/* Calls of assorted sizes: single documents, calls within a chunk, calls
 * spanning several chunks (test_load.c's). */
static void feed(nd_loader *l, const doc_list *ld)
{
    static const size_t sizes[] = {1, 7, 333, 64, 1500, 2, 250, 999};
    for (size_t at = 0, c = 0; at < ld->n; c++) {
        size_t take = sizes[c % (sizeof sizes / sizeof *sizes)];
        if (take > ld->n - at) take = ld->n - at;
        expect_ok(nd_loader_add(l, ld->d + at, take), "nd_loader_add");
        at += take;
    }
}

/* Load into a store (with prefill, one already holding documents, most of
 * whose keys the load replaces) through chunks of chunk_docs (0: the
 * default, never filled); with exact_fill the load is padded to a
 * multiple of chunk_docs, so that its last add fills a chunk. The stores
 * are made in fx->dir under names beginning with tag. */
static void load_case(db_fixture *fx, const char *tag, size_t chunk_docs, int prefill,
                      int exact_fill)
{
    char ldp[192], refp[192], key[24];
    snprintf(ldp, sizeof ldp, "%s/%s.load", fx->dir, tag);
    snprintf(refp, sizeof refp, "%s/%s.ref", fx->dir, tag);
    nd_db *db = fx->db = open_store(ldp, R), *ref = open_store(refp, R);
    corpus *c = make_corpus(db);
    rng = 0xfeed + chunk_docs * 7 + (uint64_t)prefill * 3 + (uint64_t)exact_fill;
    sig_pool pool;
    pool_init(&pool, POOL);
    const nd_signature *filler[FILLERS], *rep_final[REPEATED];
    for (size_t i = 0; i < FILLERS; i++) filler[i] = unrelated_text(&pool, db);
    for (size_t j = 0; j < REPEATED; j++) rep_final[j] = unrelated_text(&pool, db);
    doc_list pre, ld, old; /* stored before; the load; superseded versions */
    list_init(&pre, LIST);
    list_init(&ld, LIST);
    list_init(&old, LIST);

    if (prefill) {
        /* Replaced by the load: every fifth filler key and every fourth
         * repeated one, some imported, the others added, every fifteenth
         * both (imported, then added); left alone: near copies of probes
         * and unrelated texts. */
        doc_list imp, add;
        list_init(&imp, LIST);
        list_init(&add, LIST);
        for (size_t i = 0; i < FILLERS; i += 5) {
            sprintf(key, "f%04zu", i);
            const nd_signature *s = near_copy(&pool, db, c, i);
            list_add(i % 10 == 0 ? &imp : &add, key, s, -1.0, 1);
            list_add(&old, key, s, -1.0, 1);
            if (i % 15 == 0) {
                const nd_signature *s2 = near_copy(&pool, db, c, i + 7);
                list_add(i % 10 == 0 ? &add : &imp, key, s2, -2.0, 2);
                list_add(&old, key, s2, -2.0, 2);
            }
        }
        for (size_t j = 0; j < REPEATED; j += 4) {
            sprintf(key, "r%03zu", j);
            const nd_signature *s = near_copy(&pool, db, c, j + 3);
            list_add(j % 8 == 0 ? &imp : &add, key, s, -3.0, 3);
            list_add(&old, key, s, -3.0, 3);
        }
        for (size_t j = 0; j < 80; j++) {
            sprintf(key, "s%03zu", j);
            if (j % 2) list_add(&add, key, near_copy(&pool, db, c, j + 11), 0.5, 4);
            else list_add(&imp, key, unrelated_text(&pool, db), 0.5, 5);
        }
        expect_ok(nd_db_import(db, imp.d, imp.n), "nd_db_import");
        expect_ok(nd_db_add_many(db, add.d, add.n), "nd_db_add_many");
        for (size_t i = 0; i < imp.n; i++) list_push(&pre, &imp.d[i]);
        for (size_t i = 0; i < add.n; i++) list_push(&pre, &add.d[i]);
        list_free(&imp);
        list_free(&add);
    }

    /* The load: first, versions superseded by later chunks (of two thirds
     * of the repeated keys and a tenth of the corpus keys); then everything
     * in a shuffled order, two thirds of the repeated keys right after
     * another version of their own (within a chunk; a third of them thus
     * come three times). Each superseded version is a near copy of a probe. */
    for (size_t j = 0; j < REPEATED; j++) {
        if (j % 3 == 1) continue;
        sprintf(key, "r%03zu", j);
        list_load(&ld, key, near_copy(&pool, db, c, j));
        list_push(&old, &ld.d[ld.n - 1]);
    }
    for (size_t i = 0; i < c->n; i += 10) {
        list_load(&ld, c->key[i], near_copy(&pool, db, c, i / (1 + RATES) + 5));
        list_push(&old, &ld.d[ld.n - 1]);
    }
    size_t nbase = c->n + FILLERS + REPEATED;
    size_t *perm = malloc(nbase * sizeof *perm);
    assert_non_null(perm);
    for (size_t i = 0; i < nbase; i++) perm[i] = i;
    for (size_t i = nbase; i > 1; i--) {
        size_t j = rnd() % i, t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t x = 0; x < nbase; x++) {
        size_t i = perm[x];
        if (i < c->n) {
            list_load(&ld, c->key[i], &c->sig[i]);
        } else if (i < c->n + FILLERS) {
            sprintf(key, "f%04zu", i - c->n);
            list_load(&ld, key, filler[i - c->n]);
        } else {
            size_t j = i - c->n - FILLERS;
            sprintf(key, "r%03zu", j);
            if (j % 3) { /* a version right before the last, within a chunk */
                list_load(&ld, key, near_copy(&pool, db, c, j + 17));
                list_push(&old, &ld.d[ld.n - 1]);
            }
            list_load(&ld, key, rep_final[j]);
        }
    }
    free(perm);
    for (size_t j = 0; exact_fill && ld.n % chunk_docs; j++) {
        sprintf(key, "p%04zu", j);
        list_load(&ld, key, unrelated_text(&pool, db));
    }
    if (chunk_docs) assert_true(ld.n > 3 * chunk_docs); /* several chunks spill */
    if (exact_fill) assert_int_equal(ld.n % chunk_docs, 0);

    size_t nfinal, nload, npre;
    nd_doc *final = final_docs(&pre, &ld, &nfinal);
    nd_doc *load_keys = final_docs(NULL, &ld, &nload);
    nd_doc *pre_keys = final_docs(&pre, NULL, &npre);
    uint64_t want_new = 0;
    for (size_t i = 0; i < nload; i++)
        want_new += !find_doc(pre_keys, npre, load_keys[i].key, load_keys[i].key_len);
    assert_int_equal(nfinal, npre + want_new);
    if (prefill) assert_true(want_new < nload); /* the load replaces stored keys */
    for (size_t i = 0; i < nfinal; i += 97) /* the reference: online writes */
        expect_ok(nd_db_add_many(ref, final + i, nfinal - i < 97 ? nfinal - i : 97),
                  "nd_db_add_many (reference)");

    nd_loader *l = NULL;
    expect_ok(nd_loader_new(&l, db, chunk_docs), "nd_loader_new");
    feed(l, &ld);
    uint64_t got_new = UINT64_MAX;
    expect_ok(nd_loader_finish(&got_new, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(got_new, want_new);
    assert_int_equal(count_load_dirs(ldp), 0);

    /* The probes: every corpus text, every superseded version, a tenth of
     * the unrelated texts. */
    doc_list probes;
    list_init(&probes, LIST);
    for (size_t i = 0; i < c->n; i++) list_add(&probes, c->key[i], &c->sig[i], 0, 0);
    for (size_t i = 0; i < old.n; i++) list_push(&probes, &old.d[i]);
    for (size_t i = 0; i < FILLERS; i += 10) list_add(&probes, "filler", filler[i], 0, 0);

    check_store(db, ref, final, nfinal, &probes);
    superseded_not_found(db, fx->res, &old);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    fx->db = db = open_store(ldp, 0);
    check_store(db, ref, final, nfinal, &probes);
    superseded_not_found(db, fx->res, &old);

    assert_int_equal(db_fixture_close(fx), ND_OK);
    assert_int_equal(nd_db_close(ref), ND_OK);
    list_free(&probes);
    list_free(&pre);
    list_free(&ld);
    list_free(&old);
    free(final);
    free(load_keys);
    free(pre_keys);
    free(pool.sig);
    free(c);
}

static void test_exact_empty(void **s) { load_case(*s, "empty", 400, 0, 0); }

static void test_exact_prefilled(void **s) { load_case(*s, "prefilled", 400, 1, 0); }

/* A load that never fills a chunk (one nd_db_import), and one whose last
 * add fills a chunk exactly (the commit finds the last chunk empty). */
static void test_exact_unspilled_and_full_last_chunk(void **s)
{
    load_case(*s, "unspilled", 0, 1, 0);
    load_case(*s, "full", 300, 0, 1);
}

/* ---- visibility ------------------------------------------------------------ */

/* Chunks of only new documents spilled: none of them is counted or found
 * before the commit; after it, all of them. */
static void test_new_documents_invisible_until_commit(void **state)
{
    db_fixture *fx = *state;
    enum { N = 1000, CHUNK = 300, CALL = 250 };
    char key[24];
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    sig_pool pool;
    pool_init(&pool, N);
    doc_list ld;
    list_init(&ld, N);
    for (size_t i = 0; i < c->n; i++) list_load(&ld, c->key[i], &c->sig[i]);
    for (size_t i = 0; ld.n < N; i++) {
        sprintf(key, "u%04zu", i);
        list_load(&ld, key, unrelated_text(&pool, db));
    }
    nd_loader *l = NULL;
    expect_ok(nd_loader_new(&l, db, CHUNK), "nd_loader_new");
    for (size_t at = 0; at < N; at += CALL) expect_ok(nd_loader_add(l, ld.d + at, CALL), "add");
    /* three chunks spilled, 100 documents in the last */
    assert_int_equal(count_load_dirs(fx->path), 1);
    uint64_t docs = 1, fps = 1;
    assert_int_equal(nd_db_counts(&docs, &fps, db), ND_OK);
    if (docs || fps)
        fail_msg("%llu documents, %llu fingerprints visible before the commit",
                 (unsigned long long)docs, (unsigned long long)fps);
    stats_are(db, 0);
    expect_ok(nd_db_verify(db), "nd_db_verify before the commit");
    for (size_t i = 0; i < 3 * CHUNK; i += 7) {
        expect_ok(nd_db_query_doc(fx->res, db, &ld.d[i], K, NULL), "nd_db_query_doc");
        if (nd_results_count(fx->res))
            fail_msg("before the commit, the text of '%s' finds '%s'", ld.key[i],
                     nd_results_get(fx->res, 0)->key);
        assert_absent(db, fx->res, ld.key[i]);
    }
    uint64_t got_new = 0;
    expect_ok(nd_loader_finish(&got_new, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(got_new, N);
    assert_int_equal(count_load_dirs(fx->path), 0);
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, N);
    stats_are(db, N);
    expect_ok(nd_db_verify(db), "nd_db_verify");
    for (size_t i = 0; i < N; i++) {
        double r = 0;
        if (!text_finds(db, fx->res, &ld.d[i], ld.key[i], &r))
            fail_msg("after the commit, the text of '%s' does not find it", ld.key[i]);
        assert_true(r == 1.0);
    }
    list_free(&ld);
    free(pool.sig);
    free(c);
}

/* A stored key is replaced when its chunk spills, before the commit; one
 * in the unspilled last chunk at the commit. */
static void test_stored_keys_replaced_at_spill(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    sig_pool pool;
    pool_init(&pool, 16);
    const nd_signature *old1 = near_copy(&pool, db, c, 1), *old2 = near_copy(&pool, db, c, 2);
    const nd_signature *new1 = unrelated_text(&pool, db), *new2 = unrelated_text(&pool, db);
    nd_doc pre[2] = {{"S1", 2, old1->fp, 0, 0, &old1->sketch},
                     {"S2", 2, old2->fp, 0, 0, &old2->sketch}};
    expect_ok(nd_db_add_many(db, pre, 2), "nd_db_add_many");
    doc_list ld;
    list_init(&ld, 8);
    list_load(&ld, "S1", new1);
    list_load(&ld, "n0", unrelated_text(&pool, db));
    list_load(&ld, "n1", unrelated_text(&pool, db));
    list_load(&ld, "n2", unrelated_text(&pool, db));
    list_load(&ld, "S2", new2); /* the last chunk */
    list_load(&ld, "n3", unrelated_text(&pool, db));
    nd_loader *l = NULL;
    expect_ok(nd_loader_new(&l, db, 4), "nd_loader_new");
    expect_ok(nd_loader_add(l, ld.d, 4), "nd_loader_add"); /* spills */
    assert_holds(db, fx->res, "S1", new1);
    nd_doc q1 = probe_of(old1), q2 = probe_of(old2);
    assert_false(text_finds(db, fx->res, &q1, "S1", NULL));
    assert_absent(db, fx->res, "n0");
    expect_ok(nd_loader_add(l, ld.d + 4, 2), "nd_loader_add");
    assert_holds(db, fx->res, "S2", old2); /* replaced at the commit */
    assert_absent(db, fx->res, "n3");
    uint64_t docs = 0, got_new = 0;
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, 2);
    expect_ok(nd_loader_finish(&got_new, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(got_new, 4);
    assert_holds(db, fx->res, "S1", new1);
    assert_holds(db, fx->res, "S2", new2);
    assert_false(text_finds(db, fx->res, &q2, "S2", NULL));
    expect_ok(nd_db_verify(db), "nd_db_verify");
    stats_are(db, 6);
    list_free(&ld);
    free(pool.sig);
    free(c);
}

/* ---- other writers ---------------------------------------------------------- */

/* K spills as a new key, then another writer stores K with another text;
 * L sits in the last chunk when the other writer stores it: after the
 * commit both hold the loader's text, and the other writer's text finds
 * neither. S, stored before, is replaced at its spill and then stored by
 * the other writer, whose text it keeps. */
static void test_late_key_of_another_writer(void **state)
{
    db_fixture *fx = *state;
    char key[8];
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    sig_pool pool;
    pool_init(&pool, 32);
    /* each key's texts: the loader's, the other writer's, the stored one */
    const nd_signature *k_loader = near_copy(&pool, db, c, 4);
    const nd_signature *k_other = near_copy(&pool, db, c, 5);
    const nd_signature *l_loader = near_copy(&pool, db, c, 7);
    const nd_signature *l_other = near_copy(&pool, db, c, 8);
    const nd_signature *s_before = unrelated_text(&pool, db);
    const nd_signature *s_loader = unrelated_text(&pool, db);
    const nd_signature *s_other = unrelated_text(&pool, db);
    nd_doc pre = {"S", 1, s_before->fp, 0, 0, &s_before->sketch};
    expect_ok(nd_db_add_many(db, &pre, 1), "nd_db_add_many");
    doc_list ld;
    list_init(&ld, 16);
    list_load(&ld, "K", k_loader);
    list_load(&ld, "S", s_loader);
    for (int i = 0; i < 8; i++) { /* a0-a2 in chunk 1, b3-b7 in chunk 2 */
        sprintf(key, i < 3 ? "a%d" : "b%d", i);
        list_load(&ld, key, unrelated_text(&pool, db));
    }
    list_load(&ld, "L", l_loader);
    list_load(&ld, "c1", unrelated_text(&pool, db));
    nd_loader *l = NULL;
    expect_ok(nd_loader_new(&l, db, 5), "nd_loader_new");
    expect_ok(nd_loader_add(l, ld.d, 5), "nd_loader_add"); /* chunk 1 spills */
    assert_absent(db, fx->res, "K");
    assert_holds(db, fx->res, "S", s_loader);
    nd_doc other_docs[2] = {{"K", 1, k_other->fp, 7, 7, &k_other->sketch},
                            {"S", 1, s_other->fp, 7, 7, &s_other->sketch}};
    expect_ok(nd_db_add_many(db, other_docs, 2), "the other writer");
    expect_ok(nd_loader_add(l, ld.d + 5, 5), "nd_loader_add"); /* chunk 2 spills */
    expect_ok(nd_loader_add(l, ld.d + 10, 2), "nd_loader_add"); /* the last chunk */
    nd_doc other_l_doc = {"L", 1, l_other->fp, 8, 8, &l_other->sketch};
    expect_ok(nd_db_add_many(db, &other_l_doc, 1), "the other writer");
    uint64_t got_new = 0;
    expect_ok(nd_loader_finish(&got_new, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    expect_ok(nd_db_verify(db), "nd_db_verify");
    assert_holds(db, fx->res, "K", k_loader);
    assert_holds(db, fx->res, "L", l_loader);
    assert_holds(db, fx->res, "S", s_other);
    nd_doc q_k_other = probe_of(k_other), q_l_other = probe_of(l_other);
    nd_doc q_s_loader = probe_of(s_loader);
    if (text_finds(db, fx->res, &q_k_other, "K", NULL))
        fail_msg("the other writer's text of K still finds K");
    if (text_finds(db, fx->res, &q_l_other, "L", NULL))
        fail_msg("the other writer's text of L still finds L");
    assert_false(text_finds(db, fx->res, &q_s_loader, "S", NULL));
    expect_ok(nd_db_get(fx->res, db, "K", 1), "get K");
    assert_true(nd_results_get(fx->res, 0)->score == 0); /* the loader's */
    stats_are(db, 12);
    list_free(&ld);
    free(pool.sig);
    free(c);
}

/* nd_loader_free without nd_loader_finish: nothing new is stored, the
 * replacement written at a spill stays, no "nd-load-*" entry is left. */
static void test_free_without_finish(void **state)
{
    db_fixture *fx = *state;
    enum { N = 700, CHUNK = 300, CALL = 100 };
    char key[24];
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    sig_pool pool;
    pool_init(&pool, N + 8);
    const nd_signature *x = near_copy(&pool, db, c, 1), *y = near_copy(&pool, db, c, 2),
                       *z = unrelated_text(&pool, db);
    nd_doc p1 = {"P1", 2, x->fp, 0, 0, &x->sketch}, p2 = {"P2", 2, y->fp, 0, 0, &y->sketch};
    expect_ok(nd_db_add_many(db, &p1, 1), "nd_db_add_many");
    expect_ok(nd_db_import(db, &p2, 1), "nd_db_import");
    doc_list ld;
    list_init(&ld, N + 1);
    list_load(&ld, "P1", z);
    for (size_t i = 0; ld.n <= N; i++) {
        sprintf(key, "u%04zu", i);
        list_load(&ld, key, unrelated_text(&pool, db));
    }
    nd_loader *l = NULL;
    expect_ok(nd_loader_new(&l, db, CHUNK), "nd_loader_new");
    for (size_t at = 0; at < ld.n; at += CALL)
        expect_ok(nd_loader_add(l, ld.d + at, ld.n - at < CALL ? ld.n - at : CALL), "add");
    assert_int_equal(count_load_dirs(fx->path), 1); /* two chunks spilled */
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    for (int round = 0; round < 2; round++) { /* and after a reopen */
        uint64_t docs = 0;
        assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
        if (docs != 2) fail_msg("%llu documents after a free without finish, want 2",
                                (unsigned long long)docs);
        stats_are(db, 2);
        expect_ok(nd_db_verify(db), "nd_db_verify");
        assert_holds(db, fx->res, "P1", z); /* replaced at its spill */
        assert_holds(db, fx->res, "P2", y);
        for (size_t i = 1; i < ld.n; i += 7) {
            assert_absent(db, fx->res, ld.key[i]);
            assert_false(text_finds(db, fx->res, &ld.d[i], ld.key[i], NULL));
        }
        assert_int_equal(db_fixture_close(fx), ND_OK);
        fx->db = db = open_store(fx->path, 0);
        assert_int_equal(count_load_dirs(fx->path), 0);
    }
    list_free(&ld);
    free(pool.sig);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_exact_empty),
        DB_FIXTURE_TEST(test_exact_prefilled),
        DB_FIXTURE_TEST(test_exact_unspilled_and_full_last_chunk),
        DB_FIXTURE_TEST(test_new_documents_invisible_until_commit),
        DB_FIXTURE_TEST(test_stored_keys_replaced_at_spill),
        DB_FIXTURE_TEST(test_late_key_of_another_writer),
        DB_FIXTURE_TEST(test_free_without_finish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
