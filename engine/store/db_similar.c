/*
 * db_similar.c — the checks of a document with its sketch in a
 * resemblance store (neardup.h, "Resemblance stores"): nd_db_query_doc,
 * nd_db_add_doc_if_new, and the batch and import of such a store
 * (db_similar.h). In a fingerprint-only store the public calls are the
 * fingerprint calls.
 *
 * A check gathers candidates from two sources: the band entries (those
 * in memory and a prefix seek of band || band key in the family, per band
 * of the document's sketch, at most ND_DB_BAND_CANDIDATES documents each,
 * in key order: db_bands.c) and the tables
 * (nd_db_query within k). The same document may come from both and from
 * several bands: candidates are made unique by key. Each is read whole
 * (docs for one found by its band, the sketch family for all: point
 * reads) and decided by verify_pair under the store's rule: resemblance
 * at least R, whatever the distance (k 64). So a simhash neighbour of low
 * resemblance is dropped and an edited short text far beyond k is found.
 *
 * A document's stored sketch and its band entries are written and removed
 * with it by the transaction (db_txn.c, db_bands.c). nd_db_add_doc_if_new checks and
 * stores under the writer lock, one transaction, so of two racing
 * near-duplicates the second finds the first; it stores the document in
 * both cases (a store indexes every document). The batch decides its
 * documents one by one in input order: a document's candidates are the
 * stored ones (as above, the store as at the call's start when it adds)
 * and every earlier document of the batch that shares a band key with it
 * or lies within k (band keys in a sorted index of the batch, distances
 * by nd_selfjoin up to k 8, by comparison of all pairs beyond). An import
 * or a loader of a resemblance store writes in bulk (load_sketches.c).
 *
 * Callers: the public API; nd_db_add_doc_if_new (db_write.c), nd_db_batch
 * (db_batch.c) through db_similar.h.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "db_bands.h"
#include "db_core.h"
#include "db_query.h"
#include "db_results.h"
#include "db_similar.h"
#include "db_txn.h"
#include "nd_error.h"
#include "verify_pair.h"

/* The rule of a resemblance store of threshold r: the estimate decides,
 * whatever the distance (a band candidate may lie far away; a candidate
 * of the tables lies within the caller's k by construction). */
static verify_rule store_rule(double r)
{
    return (verify_rule){.k = 64, .k_without_sketch = 0, .min_resemblance = r,
                         .min_containment = 0};
}

static int show_len(size_t klen) { return (int)(klen > 80 ? 80 : klen); }

/* ---- candidates -------------------------------------------------------- */

/* Candidates are gathered in an nd_results (its arena holds their keys);
 * one found by a band only has dist UINT_MAX until its document is read. */
#define DIST_UNKNOWN UINT_MAX

static const char *cand_key(const nd_results *r, size_t i)
{
    return r->arena + r->koff[i];
}

static _Thread_local const nd_results *cand_sort;

/* By key, those of known distance first. */
static int cand_cmp(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const nd_match *x = &cand_sort->m[i], *y = &cand_sort->m[j];
    size_t l = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(cand_key(cand_sort, i), cand_key(cand_sort, j), l);
    if (c) return c;
    if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
    if ((x->dist == DIST_UNKNOWN) != (y->dist == DIST_UNKNOWN)) return x->dist == DIST_UNKNOWN;
    return (i > j) - (i < j);
}

/* Fill in a band candidate's fingerprint, distance, score and time from
 * docs. 0 when the document is gone (deleted since its band was read). */
static int read_doc(nd_db *db, nd_match *m, const char *key, uint64_t fp)
{
    char *v = NULL;
    size_t vlen;
    int rc = st_get(db->store, ST_CF_DOCS, key, m->key_len, &v, &vlen);
    if (rc == ND_ENOTFOUND) return 0;
    ND_FORWARD(rc);
    rc = db_doc_decode(v, vlen, &m->fp, &m->score, &m->time);
    free(v);
    ND_FORWARD(rc);
    m->dist = nd_hamming(m->fp, fp);
    return 1;
}

/* A candidate's stored sketch: 1, or 0 when it has none (deleted since). */
static int read_sketch(nd_db *db, const char *key, size_t klen, nd_sketch *out)
{
    char *v = NULL;
    size_t vlen;
    int rc = st_get(db->store, ST_CF_SKETCH, key, klen, &v, &vlen);
    if (rc == ND_ENOTFOUND) return 0;
    ND_FORWARD(rc);
    rc = db_sketch_decode(v, vlen, out);
    free(v);
    if (rc < 0) return nd_err_wrap(rc, "the sketch of document '%.*s'", show_len(klen), key);
    return 1;
}

/* Verify the candidates of c, each key once, into out. */
static int verify_candidates(nd_results *out, nd_db *db, const nd_doc *doc, nd_results *c,
                             int first)
{
    size_t *idx = malloc((c->n ? c->n : 1) * sizeof *idx);
    ND_RETURN_IF(!idx, ND_ENOMEM, "check: out of memory for %zu candidates", c->n);
    for (size_t i = 0; i < c->n; i++) idx[i] = i;
    cand_sort = c;
    qsort(idx, c->n, sizeof *idx, cand_cmp);
    verify_rule rule = store_rule(db->min_resemblance);
    verify_doc me = {doc->fp, doc->sketch, 0};
    int rc = ND_OK;
    for (size_t s = 0; s < c->n && rc == ND_OK; s++) {
        size_t i = idx[s];
        nd_match *m = &c->m[i];
        const char *key = cand_key(c, i);
        if (s && c->m[idx[s - 1]].key_len == m->key_len &&
            memcmp(cand_key(c, idx[s - 1]), key, m->key_len) == 0)
            continue; /* the same document again */
        nd_sketch sk;
        verify_result vr;
        if (m->dist == DIST_UNKNOWN && (rc = read_doc(db, m, key, doc->fp)) <= 0) continue;
        if ((rc = read_sketch(db, key, m->key_len, &sk)) <= 0) continue;
        rc = ND_OK;
        verify_doc other = {m->fp, &sk, 0};
        if (!verify_pair(&vr, &me, &other, &rule)) continue;
        rc = results_push(out, m->fp, m->dist, key, m->key_len, m->score, m->time);
        if (rc == ND_OK) out->m[out->n - 1].resemblance = vr.resemblance;
        if (first) break;
    }
    free(idx);
    return rc < 0 ? rc : ND_OK;
}

/* The stored near-duplicates of doc (doc->sketch set): candidates from
 * the bands and the tables, verified, into out (cleared), most resemblant
 * first, at most limit (0: all); first: the first verified only.
 * fp_stored (may be NULL): whether a stored document has doc's
 * fingerprint (the tables' answer holds them all, at distance 0). */
static int similar_query(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k, int first,
                         size_t limit, int *fp_stored)
{
    nd_results c = {0};
    int rc;
    nd_results_clear(out);
    ND_TRY(db_query_capped(&c, db, doc->fp, k, ND_DB_BAND_CANDIDATES));
    if (fp_stored) {
        *fp_stored = 0;
        for (size_t i = 0; i < c.n; i++) *fp_stored |= c.m[i].dist == 0;
    }
    ND_TRY(db_bands_candidates(db, doc->sketch, &c, DIST_UNKNOWN));
    ND_TRY(verify_candidates(out, db, doc, &c, first));
    ND_TRY(results_finish_resemblance(out, limit));
cleanup:
    free(c.m);
    free(c.koff);
    free(c.arena);
    if (rc < 0) nd_results_clear(out);
    return rc;
}

/* ---- the public checks ------------------------------------------------- */

/* A document a resemblance store can check: a sketch, k in range. */
static int check_doc(const nd_db *db, const nd_doc *doc, unsigned k, const char *what)
{
    ND_RETURN_IF(k > ND_MAX_K, ND_EINVAL, "%s: distance k=%u (0..%u allowed)", what, k, ND_MAX_K);
    ND_RETURN_IF(!doc->sketch, ND_EINVAL,
                 "%s: a resemblance store (R=%g) needs the document's sketch (nd_db_sign)", what,
                 db->min_resemblance);
    return ND_OK;
}

int nd_db_query_doc(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k,
                    const nd_query_options *opts)
{
    nd_query_options def = ND_QUERY_OPTIONS_INIT;
    ND_RETURN_IF(!out || !db || !doc, ND_EINVAL, "nd_db_query_doc: NULL argument");
    if (db->min_resemblance <= 0) return nd_db_query(out, db, doc->fp, k, opts);
    if (!opts) opts = &def;
    ND_RETURN_IF(opts->version != ND_QUERY_OPTIONS_VERSION, ND_EINVAL,
                 "query options: version %u unknown", opts->version);
    ND_RETURN_IF(opts->flags & ND_QUERY_FP_ONLY, ND_EINVAL,
                 "nd_db_query_doc: ND_QUERY_FP_ONLY in a resemblance store (documents are "
                 "verified by their sketches)");
    ND_FORWARD(check_doc(db, doc, k, "nd_db_query_doc"));
    return similar_query(out, db, doc, k, (opts->flags & ND_QUERY_FIRST) != 0, opts->limit, NULL);
}

int db_similar_add_if_new(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k)
{
    db_txn t = {0};
    int rc;
    ND_FORWARD(db_check_writable(db));
    ND_FORWARD(db_check_key(doc->key, doc->key_len));
    ND_FORWARD(check_doc(db, doc, k, "nd_db_add_doc_if_new"));
    /* Check and store under the writer lock: a racing near-duplicate
     * stored by another thread is either seen here or sees this one. */
    int fp_stored;
    ND_TRY(db_txn_begin(&t, db, 0));
    ND_TRY(similar_query(out, db, doc, k, 0, 1, &fp_stored));
    ND_TRY(db_txn_stage_add(&t, doc, !fp_stored));
    ND_TRY(db_txn_commit(&t));
cleanup:
    rc = db_txn_end(&t, rc);
    if (rc < 0) nd_results_clear(out);
    return rc;
}

/* ---- import ------------------------------------------------------------ */

/* ---- batch --------------------------------------------------------------- */

/* A band key of a batch document: (band << 32 | key) and the document. */
typedef struct band_item {
    uint64_t band;
    size_t doc;
} band_item;

static int band_item_cmp(const void *a, const void *b)
{
    const band_item *x = a, *y = b;
    if (x->band != y->band) return x->band < y->band ? -1 : 1;
    return (x->doc > y->doc) - (x->doc < y->doc);
}

/* Earlier documents within k of a later one: pairs (i, j), i < j. */
typedef struct fp_pairs {
    size_t (*p)[2];
    size_t n, cap;
} fp_pairs;

static int fp_pair_cb(size_t i, size_t j, unsigned dist, void *payload)
{
    (void)dist;
    fp_pairs *ps = payload;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 256;
        size_t(*p)[2] = realloc(ps->p, cap * sizeof *p);
        if (!p) return nd_err_set(ND_ENOMEM, "batch: out of memory for %zu pairs", cap);
        ps->p = p;
        ps->cap = cap;
    }
    ps->p[ps->n][0] = i < j ? i : j;
    ps->p[ps->n++][1] = i < j ? j : i;
    return 0;
}

static int pair_cmp(const void *a, const void *b)
{
    const size_t *x = a, *y = b;
    if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Every pair of the batch within k, ordered by the later document. */
static int batch_fp_pairs(const nd_doc *docs, size_t n, unsigned k, fp_pairs *ps)
{
    if (k <= ND_MAX_PLAN_K) {
        uint64_t *fps = malloc((n ? n : 1) * sizeof *fps);
        ND_RETURN_IF(!fps, ND_ENOMEM, "batch: out of memory for %zu documents", n);
        for (size_t i = 0; i < n; i++) fps[i] = docs[i].fp;
        int rc = nd_selfjoin(fps, n, k, fp_pair_cb, ps);
        free(fps);
        if (rc == ND_ESTOPPED) return nd_err_set(ND_ENOMEM, "batch: out of memory for pairs");
        ND_FORWARD(rc);
    } else { /* beyond every plan: all pairs (rare) */
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++)
                if (nd_hamming(docs[i].fp, docs[j].fp) <= k) ND_FORWARD(fp_pair_cb(i, j, 0, ps));
    }
    if (ps->n > 1) qsort(ps->p, ps->n, sizeof *ps->p, pair_cmp);
    return ND_OK;
}

/* The best match so far of a batch document. */
typedef struct best_match {
    int found;
    nd_match m;      /* its key: in docs[], or (stored) in keys' arena */
    size_t index;    /* ND_BATCH_STORED or the batch document */
} best_match;

/* Is (res, m) better than the best so far? Higher resemblance, then
 * nd_match_order. */
static int better(const best_match *b, double res, const nd_match *m)
{
    if (!b->found) return 1;
    if (res != b->m.resemblance) return res > b->m.resemblance;
    return nd_match_order(m, &b->m) < 0;
}

/* Document j's best earlier batch document: those sharing a band key
 * (ND_DB_BAND_CANDIDATES a band key at most, the earliest) and those
 * within k (pairs[from..to)). seen: n marks, seen[i] == j + 1 when i was
 * tried for j. */
static void batch_best(best_match *best, const nd_doc *docs, size_t j, const band_item *bands,
                       size_t nb, const fp_pairs *ps, size_t from, size_t to, size_t *seen,
                       const verify_rule *rule)
{
    const nd_doc *d = &docs[j];
    verify_doc me = {d->fp, d->sketch, 0};
    for (unsigned b = 0; b <= ND_SKETCH_BANDS; b++) {
        size_t lo = 0, hi = 0, taken = 0;
        if (b < ND_SKETCH_BANDS) { /* the band's earlier documents */
            band_item key = {(uint64_t)b << 32 | d->sketch->band[b], 0};
            size_t l = 0, h = nb;
            while (l < h) {
                size_t mid = l + (h - l) / 2;
                if (band_item_cmp(&bands[mid], &key) < 0) l = mid + 1;
                else h = mid;
            }
            lo = l;
            for (hi = lo; hi < nb && bands[hi].band == key.band && bands[hi].doc < j; hi++) {}
        } else {
            lo = from;
            hi = to;
        }
        for (size_t e = lo; e < hi; e++) {
            size_t i = b < ND_SKETCH_BANDS ? bands[e].doc : ps->p[e][0];
            if (b < ND_SKETCH_BANDS && taken++ == ND_DB_BAND_CANDIDATES) break;
            if (seen[i] == j + 1) continue;
            seen[i] = j + 1;
            verify_doc other = {docs[i].fp, docs[i].sketch, 0};
            verify_result vr;
            if (!verify_pair(&vr, &me, &other, rule)) continue;
            nd_match m = {.fp = docs[i].fp, .dist = vr.dist, .key = docs[i].key,
                          .key_len = docs[i].key_len, .resemblance = vr.resemblance};
            if (!better(best, vr.resemblance, &m)) continue;
            *best = (best_match){1, m, i};
        }
    }
}

/* A document's best stored match into keys (appended, resemblance set):
 * its place there, or SIZE_MAX when it has none. */
static int stored_best(size_t *at, nd_results *keys, nd_results *tmp, nd_db *db,
                       const nd_doc *doc, unsigned k)
{
    *at = SIZE_MAX;
    ND_FORWARD(similar_query(tmp, db, doc, k, 0, 1, NULL));
    if (!nd_results_count(tmp)) return ND_OK;
    const nd_match *m = nd_results_get(tmp, 0);
    ND_FORWARD(results_push(keys, m->fp, m->dist, m->key, m->key_len, m->score, m->time));
    *at = keys->n - 1;
    keys->m[*at].resemblance = m->resemblance;
    return ND_OK;
}

int db_similar_decide(nd_batch_item *items, const nd_doc *docs, size_t n, unsigned k, double r)
{
    band_item *bands = NULL;
    fp_pairs ps = {0};
    size_t *seen = NULL;
    int rc;
    ND_RETURN_IF(n && !items, ND_EINVAL, "deciding a batch: NULL items");
    bands = malloc((n ? n : 1) * ND_SKETCH_BANDS * sizeof *bands);
    seen = calloc(n ? n : 1, sizeof *seen);
    if (!bands || !seen) ND_FAIL(ND_ENOMEM, "batch: out of memory for %zu documents", n);
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < ND_SKETCH_BANDS; b++)
            bands[i * ND_SKETCH_BANDS + b] =
                (band_item){(uint64_t)b << 32 | docs[i].sketch->band[b], i};
    qsort(bands, n * ND_SKETCH_BANDS, sizeof *bands, band_item_cmp);
    ND_TRY(batch_fp_pairs(docs, n, k, &ps));
    verify_rule rule = store_rule(r);
    for (size_t j = 0, e = 0; j < n; j++) {
        nd_batch_item *it = &items[j];
        best_match bt = {0}, st = {0};
        size_t from = e;
        while (e < ps.n && ps.p[e][1] == j) e++;
        if (it->dup)
            st = (best_match){1,
                              {.fp = it->match_fp, .dist = it->dist, .key = it->match_key,
                               .key_len = it->match_key_len, .resemblance = it->resemblance},
                              it->match_index};
        else *it = (nd_batch_item){.resemblance = -1};
        batch_best(&bt, docs, j, bands, n * ND_SKETCH_BANDS, &ps, from, e, seen, &rule);
        if (bt.found && (!st.found || better(&st, bt.m.resemblance, &bt.m)))
            *it = (nd_batch_item){1, bt.m.dist, bt.m.fp, bt.index, bt.m.key, bt.m.key_len,
                                  bt.m.resemblance};
    }
    rc = ND_OK;
cleanup:
    free(bands);
    free(ps.p);
    free(seen);
    return rc;
}

int db_similar_batch(nd_batch_item *out, nd_results *keys, nd_db *db, const nd_doc *docs,
                     size_t n, unsigned k, unsigned flags)
{
    size_t *stored_at = NULL;
    nd_results *tmp = NULL;
    db_txn t = {0};
    int add = (flags & ND_BATCH_ADD) != 0, rc;
    ND_FORWARD(db_check_sketches(db, docs, n, "nd_db_batch"));
    ND_TRY(nd_results_new(&tmp));
    stored_at = malloc((n ? n : 1) * sizeof *stored_at);
    if (!stored_at) ND_FAIL(ND_ENOMEM, "batch: out of memory for %zu documents", n);
    /* With ND_BATCH_ADD the writer lock is held from the first check to
     * the write: the stored set is the one at the start. */
    if (add) ND_TRY(db_txn_begin(&t, db, 0));
    for (size_t j = 0; j < n; j++) ND_TRY(stored_best(&stored_at[j], keys, tmp, db, &docs[j], k));
    results_resolve(keys); /* the arena stays where it is from here on */
    for (size_t j = 0; j < n; j++) {
        out[j] = (nd_batch_item){.resemblance = -1};
        if (stored_at[j] == SIZE_MAX) continue;
        const nd_match *m = &keys->m[stored_at[j]];
        out[j] = (nd_batch_item){1, m->dist, m->fp, ND_BATCH_STORED, m->key, m->key_len,
                                 m->resemblance};
    }
    ND_TRY(db_similar_decide(out, docs, n, k, db->min_resemblance));
    if (add) {
        for (size_t i = 0; i < n; i++) ND_TRY(db_txn_stage_add(&t, &docs[i], 0));
        if (n) ND_TRY(db_txn_commit(&t));
    }
cleanup:
    rc = db_txn_end(&t, rc);
    if (rc < 0) nd_results_clear(keys);
    nd_results_free(tmp);
    free(stored_at);
    return rc;
}
