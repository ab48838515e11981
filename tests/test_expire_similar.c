/*
 * test_expire_similar.c — nd_db_expire in a resemblance store, against a
 * store that never held the expired documents.
 *
 * The shared corpus (originals, copies edited at several rates, simhash
 * twins) and many random texts besides, a third of them last seen long
 * ago, some sharing a fingerprint with a text that stays: after an
 * expiry by a generation (and in groups), every document's check
 * (nd_db_query_doc) and every fingerprint query at every distance answer
 * exactly what the same checks answer in a reference store made of the
 * surviving documents alone; the counters,
 * the sketch and band counts and verify agree; the band memory's log,
 * flushed first, brings nothing back after a reopen; and so it stays after
 * a compaction. As nd_db_expire chooses, past a group: a generation.
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
#include "neardup.h"
#include "oracle.h"
#include "similar_corpus.h"

#define OLD 100  /* last-seen time of the documents that expire */
#define BEFORE 1000
#define R 0.8
/* Random texts besides the corpus, a third of them expiring (four in five
 * where the library chooses the path: enough for its choice to be a
 * generation, more than a group of 16384, in fewer documents; time under
 * the sanitizers). */
#define EXTRA_AUTO 22000
#define EXTRA_FIXED 12000

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct docset {
    nd_doc *doc;
    nd_signature *sig;
    char (*key)[16];
    size_t n;
} docset;

/* The corpus, then extra random texts of 20-60 words; every third
 * document last seen at OLD (the corpus keeps its own times, >= 1000, but
 * for every third original and its copies), every seventh extra text
 * taking the fingerprint of the corpus document before it in the list. */
static docset make_docs(nd_db *db, size_t extra)
{
    corpus *c = make_corpus(db);
    docset s = {calloc(CORPUS + extra, sizeof *s.doc), calloc(CORPUS + extra, sizeof *s.sig),
                calloc(CORPUS + extra, sizeof *s.key), 0};
    assert_non_null(s.doc);
    assert_non_null(s.sig);
    assert_non_null(s.key);
    for (size_t i = 0; i < c->n; i++, s.n++) {
        s.sig[s.n] = c->sig[i];
        memcpy(s.key[s.n], c->key[i], sizeof s.key[s.n]);
        s.doc[s.n] = c->doc[i];
        if ((i / (1 + RATES)) % 3 == 0) s.doc[s.n].time = OLD;
    }
    for (size_t e = 0; e < extra; e++, s.n++) {
        sim_text t;
        random_text(&t, 20 + rnd() % 41);
        sign(&s.sig[s.n], db, &t);
        if (e % 7 == 0) s.sig[s.n].fp = s.sig[e % c->n].fp; /* shared */
        snprintf(s.key[s.n], sizeof s.key[s.n], "x%05zu", e);
        s.doc[s.n] = (nd_doc){NULL, 0, s.sig[s.n].fp, 1.0, e % 3 ? 5000 : OLD, NULL};
    }
    for (size_t i = 0; i < s.n; i++) { /* pointers into s, now that it is whole */
        s.doc[i].key = s.key[i];
        s.doc[i].key_len = strlen(s.key[i]);
        s.doc[i].sketch = &s.sig[i].sketch;
    }
    free(c);
    return s;
}

static void docset_free(docset *s)
{
    free(s->doc);
    free(s->sig);
    free(s->key);
}

/* docs[from..to) added to db in calls of 4000. */
static void add_range(nd_db *db, const nd_doc *docs, size_t from, size_t to)
{
    for (size_t at = from; at < to; at += 4000)
        assert_int_equal(nd_db_add_many(db, docs + at, at + 4000 < to ? 4000 : to - at), ND_OK);
}

/* The documents of s last seen at or after BEFORE, added to db. */
static size_t add_recent(nd_db *db, const docset *s)
{
    nd_doc *recent = malloc(s->n * sizeof *recent);
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->doc[i].time >= BEFORE) recent[n++] = s->doc[i];
    add_range(db, recent, 0, n);
    free(recent);
    return n;
}

/* Results as "key resemblance distance" lines, sorted, for comparison. */
static char *results_text(const nd_results *res)
{
    size_t n = nd_results_count(res), len = 0;
    char **lines = calloc(n ? n : 1, sizeof *lines), *out;
    for (size_t i = 0; i < n; i++) {
        const nd_match *m = nd_results_get(res, i);
        char buf[128];
        int l = snprintf(buf, sizeof buf, "%.*s %.6f %u\n", (int)m->key_len, (const char *)m->key,
                         m->resemblance, m->dist);
        lines[i] = strdup(buf);
        len += (size_t)l;
    }
    qsort(lines, n, sizeof *lines, cmp_line);
    out = calloc(len + 1, 1);
    for (size_t i = 0; i < n; i++) {
        strcat(out, lines[i]);
        free(lines[i]);
    }
    free(lines);
    return out;
}

/* a and b hold the same matches. */
static void same_results(const nd_results *a, const nd_results *b)
{
    assert_int_equal(nd_results_count(a), nd_results_count(b));
    char *x = results_text(a), *y = results_text(b);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

/* Every document's check, and fingerprint queries at every distance
 * 0..SIM_K+2 from a sample: the same answers in db as in ref. */
static void same_answers(nd_db *db, nd_db *ref, const docset *s, nd_results *a, nd_results *b)
{
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.limit = 0;
    for (size_t i = 0; i < s->n; i += i < CORPUS ? 1 : 37) {
        assert_int_equal(nd_db_query_doc(a, db, &s->doc[i], SIM_K, &qo), ND_OK);
        assert_int_equal(nd_db_query_doc(b, ref, &s->doc[i], SIM_K, &qo), ND_OK);
        same_results(a, b);
    }
    for (size_t i = 0; i < s->n; i += 211)
        for (unsigned k = 0; k <= SIM_K + 2; k++) {
            assert_int_equal(nd_db_query(a, db, s->doc[i].fp, k, &qo), ND_OK);
            assert_int_equal(nd_db_query(b, ref, s->doc[i].fp, k, &qo), ND_OK);
            same_results(a, b);
        }
}

static void same_counts(nd_db *db, nd_db *ref)
{
    nd_stats x, y;
    assert_int_equal(nd_db_stats(&x, db), ND_OK);
    assert_int_equal(nd_db_stats(&y, ref), ND_OK);
    assert_int_equal(x.documents, y.documents);
    assert_int_equal(x.fingerprints, y.fingerprints);
    assert_int_equal(x.sketches, y.sketches);
    assert_int_equal(x.band_keys, y.band_keys);
    assert_int_equal(x.sketches, x.documents);
    assert_int_equal(x.band_keys, x.documents * ND_SKETCH_BANDS);
}

static void expire_vs_reference(void **state, int how, size_t extra)
{
    db_fixture *fx = *state;
    char refpath[160];
    snprintf(refpath, sizeof refpath, "%s/ref", fx->dir);
    nd_db *db = fx->db = open_store(fx->path, R), *ref = open_store(refpath, R);
    docset s = make_docs(db, extra);
    size_t kept = add_recent(ref, &s);
    /* Half of the documents flushed to the band family, the rest left in
     * the band memory (logged), for the expiry to meet both. */
    add_range(db, s.doc, 0, s.n / 2);
    assert_int_equal(nd_db_compact(db), ND_OK);
    add_range(db, s.doc, s.n / 2, s.n - 3000);
    for (size_t i = s.n - 3000; i < s.n; i++) assert_int_equal(nd_db_add_many(db, &s.doc[i], 1), ND_OK);

    uint64_t gone = 0, gen = st_generation(db->store);
    assert_int_equal(db_expire(&gone, db, BEFORE, how), ND_OK);
    assert_int_equal(gone, s.n - kept);
    assert_true(how == DB_EXPIRE_GROUPS ? st_generation(db->store) == gen
                                        : st_generation(db->store) > gen);
    assert_int_equal(nd_db_verify(db), ND_OK);
    same_counts(db, ref);
    nd_results *b = NULL;
    assert_int_equal(nd_results_new(&b), ND_OK);
    same_answers(db, ref, &s, fx->res, b);
    /* Reopened: the band log replayed brings back none of them. */
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = open_store(fx->path, 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    same_counts(db, ref);
    same_answers(db, ref, &s, fx->res, b);
    assert_int_equal(nd_db_compact(db), ND_OK);
    assert_int_equal(nd_db_verify(db), ND_OK);
    same_answers(db, ref, &s, fx->res, b);
    assert_int_equal(nd_db_expire(&gone, db, BEFORE), ND_OK);
    assert_int_equal(gone, 0);
    nd_results_free(b);
    assert_int_equal(nd_db_close(ref), ND_OK);
    docset_free(&s);
}

static void test_expire_rewrite(void **state)
{
    expire_vs_reference(state, DB_EXPIRE_REWRITE, EXTRA_FIXED);
}
static void test_expire_groups(void **state)
{
    expire_vs_reference(state, DB_EXPIRE_GROUPS, EXTRA_FIXED);
}
/* nd_db_expire's own choice: past a group and 1/128 of the store, a
 * generation (the answers of that path: test_expire_rewrite), and the
 * counts as a reference would hold them. */
static void test_expire_auto(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    docset s = make_docs(db, EXTRA_AUTO);
    for (size_t i = s.n - EXTRA_AUTO; i < s.n; i++)
        if (i % 5) s.doc[i].time = OLD;
    size_t old = 0;
    for (size_t i = 0; i < s.n; i++) old += s.doc[i].time < BEFORE;
    add_range(db, s.doc, 0, s.n);
    uint64_t gone = 0, gen = st_generation(db->store);
    assert_int_equal(nd_db_expire(&gone, db, BEFORE), ND_OK);
    assert_int_equal(gone, old);
    assert_true(gone > 16384);
    assert_true(st_generation(db->store) > gen);
    assert_int_equal(nd_db_verify(db), ND_OK);
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, s.n - old);
    assert_int_equal(st.sketches, st.documents);
    assert_int_equal(st.band_keys, st.documents * ND_SKETCH_BANDS);
    docset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_expire_rewrite),
        DB_FIXTURE_TEST(test_expire_groups),
        DB_FIXTURE_TEST(test_expire_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
