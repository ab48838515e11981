/*
 * test_similar.c — resemblance stores (neardup.h, "Resemblance stores";
 * engine/store/db_similar.c, the sketch and band entries of db_txn.c, verify
 * and stats in db_admin.c).
 *
 * The oracle: texts made from a word list (long ones and short ones of
 * 30-60 words), each with planted copies edited at several rates (words
 * replaced, inserted, deleted), signed by nd_db_sign and stored; beside
 * them "simhash twins": documents whose fingerprint lies one bit from a
 * text's but whose sketch is of another text. For every document, and for
 * fresh edited copies not stored, nd_db_query_doc must return exactly the
 * stored documents of estimated resemblance >= R among those sharing a
 * band key or lying within k bits, found by brute force over every stored
 * document, with the same estimates, most resemblant first. Then: the
 * twins are rejected; replacement, deletion and expiry take their bands
 * with them (verify passes; the families are empty once all is deleted);
 * documents without a sketch are refused by every writer; R survives a
 * reopen and another R is refused; batch, import, the loader and backup
 * answer as one-by-one adds do (sharded stores: test_shards.c); verify
 * finds damage to the families; a
 * fingerprint-only store answers as before, resemblance -1 everywhere.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "db_bands.h"
#include "db_core.h"
#include "db_fixture.h"
#include "neardup.h"
#include "similar_corpus.h"
#include "storage.h"

#define R 0.85
#define K SIM_K

/* ---- the oracle ---------------------------------------------------------- */

typedef struct oracle_stats {
    size_t queries, expected, far, rejected_near;
} oracle_stats;

static int shares_band(const nd_sketch *a, const nd_sketch *b)
{
    for (unsigned i = 0; i < ND_SKETCH_BANDS; i++)
        if (a->band[i] == b->band[i]) return 1;
    return 0;
}

/* nd_db_query_doc(q) against the brute force over the n stored docs. */
static void check_query(nd_db *db, nd_results *res, const nd_doc *stored, size_t n,
                        const nd_doc *q, unsigned k, oracle_stats *st)
{
    size_t want = 0;
    assert_int_equal(nd_db_query_doc(res, db, q, k, NULL), ND_OK);
    for (size_t i = 0; i < n; i++) {
        const nd_doc *d = &stored[i];
        unsigned dist = nd_hamming(d->fp, q->fp);
        if (!shares_band(d->sketch, q->sketch) && dist > k) continue;
        double r = nd_sketch_resemblance(q->sketch, d->sketch);
        if (r < R) {
            if (dist <= k) st->rejected_near++;
            continue;
        }
        want++;
        if (dist > k) st->far++;
        size_t j = 0;
        for (; j < nd_results_count(res); j++) {
            const nd_match *m = nd_results_get(res, j);
            if (m->key_len == d->key_len && memcmp(m->key, d->key, d->key_len) == 0) break;
        }
        if (j == nd_results_count(res))
            fail_msg("query fp %016llx: stored '%s' (r %.3f, dist %u) not returned",
                     (unsigned long long)q->fp, (const char *)d->key, r, dist);
        const nd_match *m = nd_results_get(res, j);
        assert_true(m->resemblance == r);
        assert_int_equal(m->dist, dist);
        assert_true(m->fp == d->fp);
        assert_true(m->score == d->score);
        assert_int_equal(m->time, d->time);
    }
    assert_int_equal(nd_results_count(res), want);
    for (size_t j = 1; j < nd_results_count(res); j++) {
        const nd_match *a = nd_results_get(res, j - 1), *b = nd_results_get(res, j);
        assert_true(a->resemblance > b->resemblance ||
                    (a->resemblance == b->resemblance && nd_match_order(a, b) < 0));
    }
    st->queries++;
    st->expected += want;
}

/* No band key is shared by more than ND_DB_BAND_CANDIDATES stored docs
 * (else the cap would choose, which the brute force does not model). */
static void bands_below_cap(const nd_doc *docs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) {
            size_t same = 0;
            for (size_t j = 0; j < n; j++)
                same += docs[j].sketch->band[b] == docs[i].sketch->band[b];
            assert_true(same <= ND_DB_BAND_CANDIDATES);
        }
}

static void check_all(nd_db *db, nd_results *res, corpus *c, oracle_stats *st)
{
    rng = 0x7654321; /* the same fresh copies every time */
    for (size_t i = 0; i < c->n; i++) check_query(db, res, c->doc, c->n, &c->doc[i], K, st);
    for (int o = 0; o < ORIGINALS; o += 2) { /* copies not stored */
        nd_signature sig;
        sim_text e;
        edit_text(&e, &c->t[o], o % 4 ? 0.05 : 0.3);
        sign(&sig, db, &e);
        nd_doc q = {"q", 1, sig.fp, 0, 0, &sig.sketch};
        check_query(db, res, c->doc, c->n, &q, K, st);
        check_query(db, res, c->doc, c->n, &q, 8, st);
    }
}

/* nd_db_foreach_doc hands every document its stored sketch (none in a
 * fingerprint-only store). */
typedef struct sketch_walk {
    const corpus *c;
    size_t seen, with;
} sketch_walk;

static int walk_cb(const nd_doc *d, void *payload)
{
    sketch_walk *w = payload;
    w->seen++;
    if (!d->sketch) return 0;
    w->with++;
    for (size_t i = 0; i < w->c->n; i++)
        if (strlen(w->c->key[i]) == d->key_len && memcmp(w->c->key[i], d->key, d->key_len) == 0)
            return memcmp(d->sketch, w->c->doc[i].sketch, sizeof *d->sketch) == 0 ? 0 : -1;
    return -1;
}

static void test_oracle(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    bands_below_cap(c->doc, c->n);
    /* Documents added one by one, the band entries written to the family
     * every 16 or so: the checks merge memory and family (db_bands.c). */
    db->bands_max = 16 * ND_SKETCH_BANDS;
    for (size_t i = 0; i < c->n; i++) assert_int_equal(nd_db_add_many(db, &c->doc[i], 1), ND_OK);
    assert_int_equal(nd_db_verify(db), ND_OK);
    oracle_stats st = {0};
    check_all(db, fx->res, c, &st);
    print_message("oracle: %zu queries, %zu matches (%zu beyond k), %zu neighbours within k "
                  "rejected\n", st.queries, st.expected, st.far, st.rejected_near);
    /* the oracle decides something: matches found by bands alone, and
     * simhash neighbours rejected (the twins at least) */
    assert_true(st.far > 0);
    assert_true(st.rejected_near >= 2 * TWINS);
    assert_true(st.expected > c->n);
    sketch_walk w = {c, 0, 0};
    assert_int_equal(nd_db_foreach_doc(db, walk_cb, &w), ND_OK);
    assert_int_equal(w.seen, c->n);
    assert_int_equal(w.with, c->n);
    /* the same after reopening (the families are durable) */
    assert_int_equal(db_fixture_close(fx), ND_OK);
    fx->db = db = open_store(fx->path, 0);
    assert_true(nd_db_min_resemblance(db) == R);
    oracle_stats again = {0};
    check_all(db, fx->res, c, &again);
    assert_int_equal(again.expected, st.expected);
    free(c);
}

/* ---- the checks --------------------------------------------------------- */

static void test_neighbour_rejected(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    const nd_doc *a = &c->doc[1 + RATES]; /* o01, a long text */
    nd_doc twin = c->doc[ORIGINALS * (1 + RATES) + 1]; /* t01: 1 bit from o01, another text */
    assert_int_equal(nd_hamming(twin.fp, a->fp), 1);
    assert_true(nd_sketch_resemblance(twin.sketch, a->sketch) < 0.3);
    assert_int_equal(nd_db_add_many(db, a, 1), ND_OK);
    /* by distance alone it is a match; by resemblance it is not */
    assert_int_equal(nd_db_query(fx->res, db, twin.fp, K, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 1);
    assert_true(nd_results_get(fx->res, 0)->resemblance == -1);
    assert_int_equal(nd_db_query_doc(fx->res, db, &twin, K, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 0);
    assert_int_equal(nd_db_add_doc_if_new(fx->res, db, &twin, K), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 0);
    /* a near copy is one, and is stored too */
    const nd_doc *copy = NULL; /* the first copy of o01 of resemblance >= R */
    for (int r = 0; r < RATES && !copy; r++)
        if (nd_sketch_resemblance(c->doc[2 + RATES + r].sketch, a->sketch) >= R)
            copy = &c->doc[2 + RATES + r];
    assert_non_null(copy);
    assert_int_equal(nd_db_add_doc_if_new(fx->res, db, copy, K), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 1);
    const nd_match *m = nd_results_get(fx->res, 0);
    assert_string_equal(m->key, "o01");
    assert_true(m->resemblance >= R);
    assert_true(m->resemblance == nd_sketch_resemblance(copy->sketch, a->sketch));
    uint64_t docs;
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, 3);
    /* ND_QUERY_FIRST and limit */
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.flags = ND_QUERY_FIRST;
    assert_int_equal(nd_db_query_doc(fx->res, db, copy, K, &qo), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 1);
    qo.flags = ND_QUERY_FP_ONLY;
    assert_int_equal(nd_db_query_doc(fx->res, db, copy, K, &qo), ND_EINVAL);
    assert_int_equal(nd_db_verify(db), ND_OK);
    free(c);
}

/* Many stored copies of one text (a crawl's boilerplate page): a check
 * reads at most ND_DB_BAND_CANDIDATES of them, the first in key order,
 * from the tables' side as from the bands' (each copy cost a read of
 * every earlier one: 10,000 copies took 97 s); its match is the copy of
 * the smallest key, at resemblance 1, and every copy is stored. */
static void test_many_copies(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    const nd_doc *a = &c->doc[1 + RATES];
    enum { COPIES = 3 * ND_DB_BAND_CANDIDATES };
    char key[16];
    for (int i = COPIES - 1; i >= 0; i--) { /* keys in falling order */
        nd_doc d = *a;
        snprintf(key, sizeof key, "copy%03d", i);
        d.key = key;
        d.key_len = strlen(key);
        assert_int_equal(nd_db_add_doc_if_new(fx->res, db, &d, K), ND_OK);
        if (i == COPIES - 1) {
            assert_int_equal(nd_results_count(fx->res), 0);
            continue;
        }
        assert_int_equal(nd_results_count(fx->res), 1);
        const nd_match *m = nd_results_get(fx->res, 0);
        snprintf(key, sizeof key, "copy%03d", i + 1); /* the smallest stored */
        assert_string_equal(m->key, key);
        assert_true(m->resemblance == 1.0);
        assert_int_equal(m->dist, 0);
    }
    uint64_t docs;
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, COPIES);
    /* a query of the text: every candidate of the tables and the bands is
     * a copy, the first ND_DB_BAND_CANDIDATES in key order */
    nd_doc q = *a;
    q.key = "q";
    q.key_len = 1;
    assert_int_equal(nd_db_query_doc(fx->res, db, &q, K, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), ND_DB_BAND_CANDIDATES);
    assert_string_equal(nd_results_get(fx->res, 0)->key, "copy000");
    assert_int_equal(nd_db_verify(db), ND_OK);
    free(c);
}

static void stats_are(nd_db *db, uint64_t docs)
{
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, docs);
    assert_int_equal(st.sketches, docs);
    assert_int_equal(st.band_keys, docs * ND_SKETCH_BANDS);
    assert_true(st.min_resemblance == R);
    assert_true(docs ? st.sketch_bytes > docs * DB_SKETCH_VALUE_LEN : st.sketch_bytes == 0);
}

static void test_remove_bands(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    assert_int_equal(nd_db_add_many(db, c->doc, 60), ND_OK);
    stats_are(db, 60);
    /* replace: same fingerprint, another sketch; another fingerprint */
    nd_doc d = c->doc[0];
    d.sketch = c->doc[100].sketch;
    assert_int_equal(nd_db_add_many(db, &d, 1), ND_OK);
    d = c->doc[1];
    d.fp ^= 0xff00;
    d.sketch = c->doc[101].sketch;
    assert_int_equal(nd_db_add_many(db, &d, 1), ND_OK);
    /* the same key twice in one write: the last wins, whole */
    nd_doc two[2] = {c->doc[2], c->doc[2]};
    two[1].sketch = c->doc[102].sketch;
    assert_int_equal(nd_db_add_many(db, two, 2), ND_OK);
    assert_int_equal(nd_db_verify(db), ND_OK);
    stats_are(db, 60);
    /* the old sketch of o00 no longer finds it; the new one does */
    assert_int_equal(nd_db_query_doc(fx->res, db, &c->doc[100], K, NULL), ND_OK);
    int found = 0;
    for (size_t i = 0; i < nd_results_count(fx->res); i++)
        found += strcmp(nd_results_get(fx->res, i)->key, "o00") == 0;
    assert_int_equal(found, 1);
    nd_doc old0 = c->doc[0];
    old0.fp ^= 0xffff000000ull; /* far: only bands could find it */
    assert_int_equal(nd_db_query_doc(fx->res, db, &old0, K, NULL), ND_OK);
    for (size_t i = 0; i < nd_results_count(fx->res); i++)
        assert_string_not_equal(nd_results_get(fx->res, i)->key, "o00");
    /* delete */
    assert_int_equal(nd_db_delete(db, "o00", 3), ND_OK);
    assert_int_equal(nd_db_verify(db), ND_OK);
    stats_are(db, 59);
    /* expire: times 1000 + i, so before 1030 takes the first 30 (o00 gone) */
    uint64_t gone = 0;
    assert_int_equal(nd_db_expire(&gone, db, 1030), ND_OK);
    assert_int_equal(gone, 29);
    assert_int_equal(nd_db_verify(db), ND_OK);
    stats_are(db, 30);
    assert_int_equal(nd_db_expire(&gone, db, INT64_MAX), ND_OK);
    assert_int_equal(nd_db_verify(db), ND_OK);
    stats_are(db, 0);
    assert_int_equal(nd_db_query_doc(fx->res, db, &c->doc[5], 16, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 0);
    /* after a compaction too, nothing left in the families */
    assert_int_equal(nd_db_compact(db), ND_OK);
    stats_are(db, 0);
    free(c);
}

static void test_sketchless_refused(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    nd_doc docs[3] = {c->doc[0], c->doc[1], c->doc[2]};
    docs[1].sketch = NULL;
    assert_int_equal(nd_db_add(db, "bare", 4, 1, 0, 0), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "'bare'"));
    assert_int_equal(nd_db_add_if_new(fx->res, db, "bare", 4, 1, 0, 0, K), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "'bare'"));
    assert_int_equal(nd_db_add_many(db, docs, 3), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "'c00.0'"));
    nd_batch_item out[3];
    assert_int_equal(nd_db_batch(out, fx->res, db, docs, 3, K, 0), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "'c00.0'"));
    assert_int_equal(nd_db_batch(out, fx->res, db, docs, 3, K, ND_BATCH_ADD), ND_EINVAL);
    assert_int_equal(nd_db_import(db, docs, 3), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "'c00.0'"));
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 0), ND_OK);
    assert_int_equal(nd_loader_add(l, docs, 3), ND_EINVAL);
    nd_loader_free(l);
    assert_int_equal(nd_db_query_doc(fx->res, db, &docs[1], K, NULL), ND_EINVAL);
    assert_int_equal(nd_db_add_doc_if_new(fx->res, db, &docs[1], K), ND_EINVAL);
    uint64_t n;
    assert_int_equal(nd_db_counts(&n, NULL, db), ND_OK);
    assert_int_equal(n, 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    free(c);
}

static void test_reopen_and_mismatch(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE;
    o.min_resemblance = NAN;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EINVAL);
    o.min_resemblance = 1.5;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EINVAL);
    o.min_resemblance = -0.1;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EINVAL);
    fx->db = open_store(fx->path, 0.8);
    assert_true(nd_db_min_resemblance(fx->db) == 0.8);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.flags = 0;
    o.min_resemblance = 0;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == 0.8);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.min_resemblance = 0.8;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.min_resemblance = 0.9;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EMISMATCH);
    /* read-only too; an options struct of version 2 has no such field */
    o.flags = ND_DB_READONLY;
    o.min_resemblance = 0.8;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == 0.8);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    nd_db_options v2;
    assert_int_equal(nd_db_options_init(&v2, 2), ND_OK);
    assert_int_equal(nd_db_open(&fx->db, fx->path, &v2), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == 0.8);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    /* a fingerprint-only store asked for resemblance */
    char other[160];
    snprintf(other, sizeof other, "%s/fp", fx->dir);
    fx->db = open_fp_store(other);
    assert_true(nd_db_min_resemblance(fx->db) == 0);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.flags = 0;
    o.min_resemblance = 0.8;
    assert_int_equal(nd_db_open(&db, other, &o), ND_EMISMATCH);
    /* the record and the format */
    fx->db = open_store(fx->path, 0);
    char *v = NULL;
    size_t len;
    assert_int_equal(st_get(fx->db->store, ST_CF_META, "resemblance", 11, &v, &len), ND_OK);
    assert_int_equal(len, strlen("sketch1;r=0.80000000000000004"));
    assert_memory_equal(v, "sketch1;r=0.80000000000000004", len);
    free(v);
    assert_int_equal(st_get(fx->db->store, ST_CF_META, "format", 6, &v, &len), ND_OK);
    assert_int_equal(len, 1);
    assert_int_equal(v[0], '5');
    free(v);
}

/* ---- batch, import, loader, backup --------------------------------------- */

static void same_answers(nd_db *a, nd_db *b, nd_results *ra, nd_results *rb, corpus *c)
{
    for (size_t i = 0; i < c->n; i += 3) {
        assert_int_equal(nd_db_query_doc(ra, a, &c->doc[i], K, NULL), ND_OK);
        assert_int_equal(nd_db_query_doc(rb, b, &c->doc[i], K, NULL), ND_OK);
        assert_int_equal(nd_results_count(ra), nd_results_count(rb));
        for (size_t j = 0; j < nd_results_count(ra); j++) {
            const nd_match *x = nd_results_get(ra, j), *y = nd_results_get(rb, j);
            assert_string_equal(x->key, y->key);
            assert_true(x->resemblance == y->resemblance && x->fp == y->fp);
        }
    }
}

static void test_batch_as_one_by_one(void **state)
{
    db_fixture *fx = *state;
    char p1[160], p2[160];
    snprintf(p1, sizeof p1, "%s/one", fx->dir);
    snprintf(p2, sizeof p2, "%s/batch", fx->dir);
    nd_db *one = open_store(p1, R), *bat = NULL;
    corpus *c = make_corpus(one);
    /* stored first: every third document of the corpus; then the rest
     * in a batch, and one by one into the other store */
    nd_doc *all = malloc(c->n * sizeof *all);
    size_t first = 0, rest;
    for (size_t i = 0; i < c->n; i += 3) all[first++] = c->doc[i];
    rest = first;
    for (size_t i = 0; i < c->n; i++)
        if (i % 3) all[rest++] = c->doc[i];
    rest = c->n - first;
    nd_batch_item *out = calloc(rest, sizeof *out);
    nd_results *r1 = NULL;
    assert_int_equal(nd_results_new(&r1), ND_OK);
    assert_int_equal(nd_db_add_many(one, all, first), ND_OK);
    assert_int_equal(nd_db_backup(one, p2), ND_OK);
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&bat, p2, &o), ND_OK);
    fx->db = bat;
    /* check-only first: nothing written */
    assert_int_equal(nd_db_batch(out, fx->res, bat, all + first, rest, K, 0), ND_OK);
    uint64_t n;
    assert_int_equal(nd_db_counts(&n, NULL, bat), ND_OK);
    assert_int_equal(n, first);
    nd_batch_item *again = calloc(rest, sizeof *again);
    nd_results *keys2 = NULL;
    assert_int_equal(nd_results_new(&keys2), ND_OK);
    assert_int_equal(nd_db_batch(again, keys2, bat, all + first, rest, K, ND_BATCH_ADD), ND_OK);
    size_t dups = 0, in_batch = 0;
    for (size_t j = 0; j < rest; j++) {
        const nd_doc *d = &all[first + j];
        assert_int_equal(nd_db_add_doc_if_new(r1, one, d, K), ND_OK);
        assert_int_equal(again[j].dup, out[j].dup);
        assert_int_equal(again[j].dup, nd_results_count(r1) == 1);
        if (!again[j].dup) {
            assert_true(again[j].resemblance == -1);
            continue;
        }
        const nd_match *m = nd_results_get(r1, 0);
        dups++;
        in_batch += again[j].match_index != ND_BATCH_STORED;
        assert_int_equal(again[j].match_key_len, m->key_len);
        assert_memory_equal(again[j].match_key, m->key, m->key_len);
        assert_true(again[j].resemblance == m->resemblance);
        assert_true(out[j].resemblance == m->resemblance);
        assert_int_equal(again[j].dist, m->dist);
        assert_true(again[j].match_fp == m->fp);
        if (again[j].match_index != ND_BATCH_STORED) {
            const nd_doc *e = &all[first + again[j].match_index];
            assert_true(again[j].match_index < j);
            assert_int_equal(e->key_len, m->key_len);
            assert_memory_equal(e->key, m->key, m->key_len);
        }
    }
    print_message("batch: %zu documents, %zu near-duplicates (%zu of a batch document)\n", rest,
                  dups, in_batch);
    assert_true(dups > rest / 4 && in_batch > 0 && in_batch < dups);
    assert_int_equal(nd_db_counts(&n, NULL, bat), ND_OK);
    assert_int_equal(n, c->n);
    assert_int_equal(nd_db_verify(bat), ND_OK);
    assert_int_equal(nd_db_verify(one), ND_OK);
    same_answers(one, bat, r1, fx->res, c);
    nd_results_free(r1);
    nd_results_free(keys2);
    nd_db_close(one);
    free(out);
    free(again);
    free(all);
    free(c);
}

static void test_import_loader_backup(void **state)
{
    db_fixture *fx = *state;
    char p[4][160];
    for (int i = 0; i < 4; i++) snprintf(p[i], sizeof p[i], "%s/s%d", fx->dir, i);
    nd_db *ref = open_store(p[0], R), *imp = open_store(p[1], R), *ld = open_store(p[2], R);
    corpus *c = make_corpus(ref);
    /* a corpus of more than ND_DB_IMPORT_GROUP documents: the corpus
     * under many keys (the same texts) */
    size_t n = ND_DB_IMPORT_GROUP + 500;
    nd_doc *docs = calloc(n, sizeof *docs);
    char (*keys)[24] = calloc(n, sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        docs[i] = c->doc[i % c->n];
        snprintf(keys[i], sizeof keys[i], "%s/%zu", c->key[i % c->n], i / c->n);
        docs[i].key = keys[i];
        docs[i].key_len = strlen(keys[i]);
    }
    assert_int_equal(nd_db_add_many(ref, docs, n), ND_OK);
    assert_int_equal(nd_db_import(imp, docs, n), ND_OK);
    nd_loader *l = NULL;
    uint64_t added = 0;
    assert_int_equal(nd_loader_new(&l, ld, 1000), ND_OK);
    assert_int_equal(nd_loader_add(l, docs, n / 2), ND_OK);
    assert_int_equal(nd_loader_add(l, docs + n / 2, n - n / 2), ND_OK);
    assert_int_equal(nd_loader_finish(&added, l), ND_OK);
    nd_loader_free(l);
    assert_int_equal(added, n);
    nd_results *r = NULL;
    assert_int_equal(nd_results_new(&r), ND_OK);
    nd_db *all[2] = {imp, ld};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(nd_db_verify(all[i]), ND_OK);
        nd_stats st;
        assert_int_equal(nd_db_stats(&st, all[i]), ND_OK);
        assert_int_equal(st.documents, n);
        assert_int_equal(st.band_keys, n * ND_SKETCH_BANDS);
        same_answers(ref, all[i], fx->res, r, c);
    }
    /* a backup opens as the same resemblance store */
    assert_int_equal(nd_db_backup(imp, p[3]), ND_OK);
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_NO_BACKGROUND;
    nd_db *bk = NULL;
    assert_int_equal(nd_db_open(&bk, p[3], &o), ND_OK);
    assert_true(nd_db_min_resemblance(bk) == R);
    assert_int_equal(nd_db_verify(bk), ND_OK);
    same_answers(ref, bk, fx->res, r, c);
    nd_db_close(bk);
    nd_results_free(r);
    nd_db_close(ref);
    nd_db_close(imp);
    nd_db_close(ld);
    free(docs);
    free(keys);
    free(c);
}

/* ---- damage and repair --------------------------------------------------- */

static void damage(nd_db *db, int cf, const void *key, size_t klen, const void *val, size_t vlen)
{
    st_batch *b = NULL;
    assert_int_equal(st_batch_new(&b, db->store), ND_OK);
    if (val) assert_int_equal(st_batch_put(b, cf, key, klen, val, vlen), ND_OK);
    else assert_int_equal(st_batch_delete(b, cf, key, klen), ND_OK);
    assert_int_equal(st_write(db->store, b, 0), ND_OK);
    st_batch_free(b);
}

static void test_verify_finds_damage(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    assert_int_equal(nd_db_add_many(db, c->doc, 20), ND_OK);
    /* The band entries from memory to the family, where damage reaches. */
    assert_int_equal(db_bands_flush_now(db), ND_OK);
    uint8_t bk[DB_BAND_PREFIX_LEN + 16], val[DB_SKETCH_VALUE_LEN];
    const nd_sketch *sk = c->doc[3].sketch;
    size_t bl = db_band_key_encode(bk, 5, sk->band[5], c->doc[3].key, c->doc[3].key_len);
    /* a band entry missing */
    damage(db, ST_CF_BAND, bk, bl, NULL, 0);
    assert_int_equal(nd_db_verify(db), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "band 5"));
    damage(db, ST_CF_BAND, bk, bl, "", 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    /* a band entry of no document */
    bl = db_band_key_encode(bk, 2, 77, "nobody", 6);
    damage(db, ST_CF_BAND, bk, bl, "", 0);
    assert_int_equal(nd_db_verify(db), ND_ECORRUPT);
    damage(db, ST_CF_BAND, bk, bl, NULL, 0);
    /* a sketch of no document, a malformed one, a missing one */
    db_sketch_encode(val, sk);
    damage(db, ST_CF_SKETCH, "nobody", 6, val, sizeof val);
    assert_int_equal(nd_db_verify(db), ND_ECORRUPT);
    damage(db, ST_CF_SKETCH, "nobody", 6, NULL, 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    damage(db, ST_CF_SKETCH, c->doc[3].key, c->doc[3].key_len, val, 10);
    assert_int_equal(nd_db_verify(db), ND_ECORRUPT);
    damage(db, ST_CF_SKETCH, c->doc[3].key, c->doc[3].key_len, NULL, 0);
    assert_int_equal(nd_db_verify(db), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "has no sketch"));
    /* The walk reads the sketches beside docs: a sketch of no document
     * (before every key, after every key) is stepped over, the missing
     * one is NULL, every other document gets its own. */
    damage(db, ST_CF_SKETCH, "nobody", 6, val, sizeof val);
    damage(db, ST_CF_SKETCH, "~last", 5, val, sizeof val);
    sketch_walk w = {c, 0, 0};
    assert_int_equal(nd_db_foreach_doc(db, walk_cb, &w), ND_OK);
    assert_int_equal(w.seen, 20);
    assert_int_equal(w.with, 19);
    damage(db, ST_CF_SKETCH, "nobody", 6, NULL, 0);
    damage(db, ST_CF_SKETCH, "~last", 5, NULL, 0);
    damage(db, ST_CF_SKETCH, c->doc[3].key, c->doc[3].key_len, val, sizeof val);
    assert_int_equal(nd_db_verify(db), ND_OK);
    /* repair keeps the sketches */
    assert_int_equal(db_fixture_close(fx), ND_OK);
    nd_repair_report rep;
    assert_int_equal(nd_db_repair(fx->path, &rep), ND_OK);
    assert_int_equal(rep.docs_kept, 20);
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == R);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    stats_are(fx->db, 20);
    oracle_stats st = {0};
    for (size_t i = 0; i < 20; i++) check_query(fx->db, fx->res, c->doc, 20, &c->doc[i], K, &st);
    free(c);
}

/* nd_db_foreach_expired hands each expired document its own sketch when
 * they lie apart in key order (one in five): the walk beside the sketch
 * family seeks past the sketches of those it leaves out. */
static void test_expired_walk_sketches(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_store(fx->path, R);
    corpus *c = make_corpus(db);
    size_t n = 60, expired = 0;
    for (size_t i = 0; i < n; i++) {
        nd_doc d = c->doc[i];
        d.time = i % 5 == 2 ? 100 : 5000;
        expired += i % 5 == 2;
        assert_int_equal(nd_db_add_many(db, &d, 1), ND_OK);
    }
    sketch_walk w = {c, 0, 0};
    assert_int_equal(nd_db_foreach_expired(db, 1000, walk_cb, &w), ND_OK);
    assert_int_equal(w.seen, expired);
    assert_int_equal(w.with, expired);
    free(c);
}

/* ---- a fingerprint-only store -------------------------------------------- */

static void test_fingerprint_only(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_fp_store(fx->path);
    corpus *c = make_corpus(db);
    nd_results *r = NULL;
    assert_int_equal(nd_results_new(&r), ND_OK);
    assert_int_equal(nd_db_add_many(db, c->doc, c->n), ND_OK);
    assert_false(st_has_family(db->store, ST_CF_SKETCH) || st_has_family(db->store, ST_CF_BAND));
    for (size_t i = 0; i < c->n; i += 7) {
        assert_int_equal(nd_db_query_doc(fx->res, db, &c->doc[i], K, NULL), ND_OK);
        assert_int_equal(nd_db_query(r, db, c->doc[i].fp, K, NULL), ND_OK);
        assert_int_equal(nd_results_count(fx->res), nd_results_count(r));
        for (size_t j = 0; j < nd_results_count(r); j++) {
            assert_string_equal(nd_results_get(fx->res, j)->key, nd_results_get(r, j)->key);
            assert_true(nd_results_get(fx->res, j)->resemblance == -1);
            assert_true(nd_results_get(r, j)->resemblance == -1);
        }
    }
    assert_int_equal(nd_db_get(r, db, "o00", 3), ND_OK);
    assert_true(nd_results_get(r, 0)->resemblance == -1);
    /* a sketchless document is fine here; add_doc_if_new is add_if_new */
    assert_int_equal(nd_db_add(db, "bare", 4, 0x5555, 0, 0), ND_OK);
    nd_doc twin = c->doc[ORIGINALS * (1 + RATES)];
    twin.key = "t99"; /* not stored: its closest by distance is o00, 1 bit away */
    assert_int_equal(nd_db_add_doc_if_new(r, db, &twin, K), ND_OK);
    assert_int_equal(nd_results_count(r), 1);
    assert_int_equal(nd_results_get(r, 0)->dist, 0); /* t00, the same fingerprint */
    assert_string_equal(nd_results_get(r, 0)->key, "t00");
    assert_true(nd_results_get(r, 0)->resemblance == -1);
    nd_batch_item out[4];
    assert_int_equal(nd_db_batch(out, r, db, c->doc, 4, K, 0), ND_OK);
    for (int i = 0; i < 4; i++) assert_true(out[i].resemblance == -1);
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_true(st.min_resemblance == 0 && st.sketches == 0 && st.band_keys == 0);
    sketch_walk w = {c, 0, 0};
    assert_int_equal(nd_db_foreach_doc(db, walk_cb, &w), ND_OK);
    assert_true(w.seen > c->n && w.with == 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    nd_results_free(r);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_oracle),
        DB_FIXTURE_TEST(test_neighbour_rejected),
        DB_FIXTURE_TEST(test_expired_walk_sketches),
        DB_FIXTURE_TEST(test_remove_bands),
        DB_FIXTURE_TEST(test_sketchless_refused),
        DB_FIXTURE_TEST(test_reopen_and_mismatch),
        DB_FIXTURE_TEST(test_batch_as_one_by_one),
        DB_FIXTURE_TEST(test_import_loader_backup),
        DB_FIXTURE_TEST(test_verify_finds_damage),
        DB_FIXTURE_TEST(test_fingerprint_only),
        DB_FIXTURE_TEST(test_many_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
