/*
 * shards_batch.c — Manku's batch mode over a sharded store: each
 * document's closest stored match over the shards (nd_shards_check), the
 * decision within the batch (nd_shards_decide), storing the new documents
 * in their shards (nd_shards_add), and the three in one call for a handle
 * that opened every shard (nd_shards_batch).
 *
 * The three are apart so that a job of several processes, each holding a
 * part of the shards, runs the same code as one process: every part
 * checks its shards, a coordinator keeps per document the closest of the
 * parts' answers and decides the batch, every part stores the new
 * documents of its shards (neardup-mpi batch does exactly this).
 *
 * The order of matches is nd_db_batch's: distance, then fingerprint, then
 * key, so the answer does not depend on how the shards are spread.
 *
 * A store of resemblance shards (the manifest's resemblance line) checks
 * each document with nd_db_query_doc on every shard (its best: highest
 * resemblance, then nd_match_order), decides the batch as one such store
 * does (db_similar_decide: every earlier document a candidate), and
 * stores every document. nd_shards_decide, which knows no threshold,
 * decides by distance only; nd_shards_decide_similar is its resemblance
 * form (a coordinator of parts, neardup-mpi batch, calls it).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "db_results.h"
#include "db_similar.h"
#include "nd_error.h"

/* nd_match_order of two matches given by their fields. */
static int match_cmp(unsigned da, uint64_t fa, const char *ka, size_t la, unsigned db,
                     uint64_t fb, const char *kb, size_t lb)
{
    return nd_match_order(&(nd_match){.fp = fa, .dist = da, .key = ka, .key_len = la},
                          &(nd_match){.fp = fb, .dist = db, .key = kb, .key_len = lb});
}

/* ---- nd_shards_check ------------------------------------------------------ */

/* The best stored match so far of each document: its index in keys (the
 * arena may move while it fills, so no pointer until the end). */
typedef struct best {
    unsigned dist; /* UINT_MAX: none */
    size_t at;
} best;

static int consider(best *b, nd_results *keys, unsigned d, uint64_t fp, const char *key,
                    size_t len)
{
    if (b->dist != UINT_MAX) {
        const nd_match *m = &keys->m[b->at];
        if (match_cmp(d, fp, key, len, b->dist, m->fp, keys->arena + keys->koff[b->at],
                      m->key_len) >= 0)
            return ND_OK;
    }
    ND_FORWARD(results_push(keys, fp, d, key, len, 0, 0));
    *b = (best){d, keys->n - 1};
    return ND_OK;
}

/* The closest stored match on one shard of every document. nd_db_batch also
 * decides the batch against itself, and where an earlier new document
 * lies closer than anything stored, that batch match is all it reports.
 * Those documents go round again as a smaller batch (the first of them
 * always gets its stored answer, and usually nearly all do); a few left
 * over are probed one by one with nd_db_query. One probe costs about as much
 * as a thousand documents of a merge, hence the rounds. */
enum { CHECK_PROBE_BELOW = 64, CHECK_MAX_ROUNDS = 16 };

static int check_shard(best *bs, nd_results *keys, nd_db *db, const nd_doc *docs, size_t n,
                       unsigned k)
{
    size_t m = n;
    nd_batch_item *items = malloc((n ? n : 1) * sizeof *items);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    nd_doc *sub = NULL;
    nd_results *sk = NULL, *res = NULL;
    int rc = ND_OK;
    if (!items || !idx) ND_FAIL(ND_ENOMEM, "checking a shard: out of memory for %zu documents", n);
    ND_TRY(nd_results_new(&sk));
    ND_TRY(nd_results_new(&res));
    for (size_t i = 0; i < n; i++) idx[i] = i;
    for (unsigned round = 0; m >= CHECK_PROBE_BELOW && round < CHECK_MAX_ROUNDS; round++) {
        const nd_doc *d = docs;
        if (round > 0) {
            if (!sub && !(sub = malloc(m * sizeof *sub)))
                ND_FAIL(ND_ENOMEM, "checking a shard: out of memory");
            for (size_t j = 0; j < m; j++) sub[j] = docs[idx[j]];
            d = sub;
        }
        ND_TRY(nd_db_batch(items, sk, db, d, m, k, 0));
        size_t next = 0;
        for (size_t j = 0; j < m; j++) {
            const nd_batch_item *it = &items[j];
            if (!it->dup) continue;
            if (it->match_index != ND_BATCH_STORED) {
                idx[next++] = idx[j];
                continue;
            }
            ND_TRY(consider(&bs[idx[j]], keys, it->dist, it->match_fp, it->match_key,
                            it->match_key_len));
        }
        m = next;
    }
    for (size_t j = 0; j < m; j++) {
        size_t i = idx[j];
        ND_TRY(nd_db_query(res, db, docs[i].fp, k, NULL));
        if (nd_results_count(res)) {
            const nd_match *mt = nd_results_get(res, 0);
            ND_TRY(consider(&bs[i], keys, mt->dist, mt->fp, mt->key, mt->key_len));
        }
    }
cleanup:
    free(items);
    free(idx);
    free(sub);
    nd_results_free(sk);
    nd_results_free(res);
    return rc;
}

/* The threshold of the store's shards (those this handle opened): 0 for
 * fingerprint-only shards. */
static double shards_resemblance(const nd_shards *s, unsigned shards)
{
    for (unsigned i = 0; i < shards; i++)
        if (nd_shards_db(s, i)) return nd_db_min_resemblance(nd_shards_db(s, i));
    return 0;
}

/* nd_shards_check of resemblance shards: each document's best match over
 * the open shards by nd_db_query_doc, most resemblant first. */
static int check_similar(nd_batch_item *out, nd_results *keys, nd_shards *s, unsigned shards,
                         const nd_doc *docs, size_t n, unsigned k)
{
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    nd_results *res = NULL;
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    int rc = ND_OK;
    qo.limit = 1;
    if (!at) ND_FAIL(ND_ENOMEM, "nd_shards_check: out of memory for %zu documents", n);
    for (size_t i = 0; i < n; i++)
        if (!docs[i].sketch)
            ND_FAIL(ND_EINVAL, "nd_shards_check: document %zu ('%.*s') has no sketch; the "
                    "shards verify by resemblance", i,
                    (int)(docs[i].key_len > 80 ? 80 : docs[i].key_len),
                    docs[i].key ? (const char *)docs[i].key : "");
    ND_TRY(nd_results_new(&res));
    for (size_t i = 0; i < n; i++) at[i] = SIZE_MAX;
    for (unsigned sh = 0; sh < shards; sh++) {
        nd_db *db = nd_shards_db(s, sh);
        for (size_t i = 0; db && i < n; i++) {
            rc = nd_db_query_doc(res, db, &docs[i], k, &qo);
            if (rc < 0) {
                char path[4096];
                if (nd_shards_path(path, sizeof path, s, sh) == ND_OK)
                    rc = nd_err_wrap(rc, "checking shard %u '%s'", sh, path);
                goto cleanup;
            }
            if (!nd_results_count(res)) continue;
            const nd_match *m = nd_results_get(res, 0);
            if (at[i] != SIZE_MAX) {
                nd_match b = keys->m[at[i]];
                b.key = keys->arena + keys->koff[at[i]];
                if (b.resemblance > m->resemblance ||
                    (b.resemblance == m->resemblance && nd_match_order(&b, m) <= 0))
                    continue;
            }
            ND_TRY(results_push(keys, m->fp, m->dist, m->key, m->key_len, m->score, m->time));
            at[i] = keys->n - 1;
            keys->m[at[i]].resemblance = m->resemblance;
        }
    }
    results_resolve(keys);
    for (size_t i = 0; i < n; i++) {
        out[i] = (nd_batch_item){.resemblance = -1};
        if (at[i] == SIZE_MAX) continue;
        const nd_match *m = &keys->m[at[i]];
        out[i] = (nd_batch_item){1, m->dist, m->fp, ND_BATCH_STORED, m->key, m->key_len,
                                 m->resemblance};
    }
cleanup:
    if (rc < 0) nd_results_clear(keys);
    nd_results_free(res);
    free(at);
    return rc;
}

int nd_shards_check(nd_batch_item *out, nd_results *keys, nd_shards *s, const nd_doc *docs,
                    size_t n, unsigned k)
{
    nd_shards_info info;
    best *bs = NULL;
    int rc = ND_OK;
    ND_RETURN_IF(!s || !keys || (n && (!out || !docs)), ND_EINVAL,
                 "nd_shards_check: NULL argument");
    ND_RETURN_IF(k > ND_MAX_K, ND_EINVAL, "nd_shards_check: k=%u (at most %u)", k, ND_MAX_K);
    nd_results_clear(keys);
    ND_FORWARD(nd_shards_info_get(&info, s));
    if (shards_resemblance(s, info.shards) > 0)
        return check_similar(out, keys, s, info.shards, docs, n, k);
    bs = malloc((n ? n : 1) * sizeof *bs);
    ND_RETURN_IF(!bs, ND_ENOMEM, "nd_shards_check: out of memory for %zu documents", n);
    for (size_t i = 0; i < n; i++) bs[i].dist = UINT_MAX;
    for (unsigned i = 0; i < info.shards && n; i++) {
        nd_db *db = nd_shards_db(s, i);
        if (!db) continue;
        rc = check_shard(bs, keys, db, docs, n, k);
        if (rc < 0) {
            char path[4096];
            if (nd_shards_path(path, sizeof path, s, i) == ND_OK)
                rc = nd_err_wrap(rc, "checking shard %u '%s'", i, path);
            goto cleanup;
        }
    }
    results_resolve(keys);
    for (size_t i = 0; i < n; i++) {
        out[i] = (nd_batch_item){.resemblance = -1};
        if (bs[i].dist == UINT_MAX) continue;
        const nd_match *m = &keys->m[bs[i].at];
        out[i] = (nd_batch_item){1, bs[i].dist, m->fp, ND_BATCH_STORED, m->key, m->key_len, -1};
    }
cleanup:
    if (rc < 0) nd_results_clear(keys);
    free(bs);
    return rc;
}

/* ---- nd_shards_decide ----------------------------------------------------- */

typedef struct pair {
    uint32_t i, j; /* i < j */
    uint8_t dist;
} pair;

typedef struct pairs {
    pair *p;
    size_t n, cap;
} pairs;

static int pair_cb(size_t i, size_t j, unsigned dist, void *payload)
{
    pairs *ps = payload;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 4096;
        pair *p = realloc(ps->p, cap * sizeof *p);
        if (!p) return 1;
        ps->p = p;
        ps->cap = cap;
    }
    size_t lo = i < j ? i : j;
    ps->p[ps->n++] = (pair){(uint32_t)lo, (uint32_t)(i ^ j ^ lo), (uint8_t)dist};
    return 0;
}

/* Every pair of the batch within k: nd_selfjoin up to its limit, beyond
 * it a plain quadratic scan (exact, meant for small batches at large k). */
static int batch_pairs(pairs *ps, const nd_doc *docs, size_t n, unsigned k)
{
    if (k <= ND_MAX_PLAN_K) {
        uint64_t *fp = malloc((n ? n : 1) * sizeof *fp);
        ND_RETURN_IF(!fp, ND_ENOMEM, "nd_shards_decide: out of memory");
        for (size_t i = 0; i < n; i++) fp[i] = docs[i].fp;
        int rc = nd_selfjoin(fp, n, k, pair_cb, ps);
        free(fp);
        if (rc == 1) return nd_err_set(ND_ENOMEM, "nd_shards_decide: out of memory for pairs");
        return rc;
    }
    for (size_t j = 1; j < n; j++)
        for (size_t i = 0; i < j; i++) {
            unsigned d = nd_hamming(docs[i].fp, docs[j].fp);
            if (d <= k && pair_cb(i, j, d, ps))
                return nd_err_set(ND_ENOMEM, "nd_shards_decide: out of memory for pairs");
        }
    return ND_OK;
}

int nd_shards_decide(nd_batch_item *items, const nd_doc *docs, size_t n, unsigned k)
{
    pairs ps = {0};
    size_t *start = NULL;
    uint32_t *earlier = NULL;
    uint8_t *edist = NULL;
    int rc;
    ND_RETURN_IF(n && (!items || !docs), ND_EINVAL, "nd_shards_decide: NULL argument");
    ND_RETURN_IF(k > ND_MAX_K, ND_EINVAL, "nd_shards_decide: k=%u (at most %u)", k, ND_MAX_K);
    ND_RETURN_IF(n > UINT32_MAX, ND_ELIMIT, "nd_shards_decide: %zu documents", n);
    ND_TRY(batch_pairs(&ps, docs, n, k));
    /* Each document's earlier neighbours, in CSR form. */
    start = calloc(n + 1, sizeof *start);
    earlier = malloc((ps.n ? ps.n : 1) * sizeof *earlier);
    edist = malloc((ps.n ? ps.n : 1) * sizeof *edist);
    if (!start || !earlier || !edist) ND_FAIL(ND_ENOMEM, "nd_shards_decide: out of memory");
    for (size_t e = 0; e < ps.n; e++) start[ps.p[e].j + 1]++;
    for (size_t i = 0; i < n; i++) start[i + 1] += start[i];
    for (size_t e = 0; e < ps.n; e++) {
        size_t at = start[ps.p[e].j]++;
        earlier[at] = ps.p[e].i;
        edist[at] = ps.p[e].dist;
    }
    for (size_t i = n; i > 0; i--) start[i] = start[i - 1];
    start[0] = 0;
    /* In input order: a document is new when nothing stored and no
     * earlier new document lies within k. items[i].dup is final for
     * every i < j when j is decided. */
    for (size_t j = 0; j < n; j++) {
        nd_batch_item *it = &items[j];
        if (it->dup && it->dist > k) /* a part's answer beyond k */
            *it = (nd_batch_item){.resemblance = -1};
        for (size_t e = start[j]; e < start[j + 1]; e++) {
            size_t i = earlier[e];
            if (items[i].dup) continue;
            const nd_doc *d = &docs[i];
            if (it->dup && match_cmp(edist[e], d->fp, d->key, d->key_len, it->dist,
                                     it->match_fp, it->match_key, it->match_key_len) >= 0)
                continue;
            *it = (nd_batch_item){1, edist[e], d->fp, i, d->key, d->key_len, -1};
        }
    }
cleanup:
    free(ps.p);
    free(start);
    free(earlier);
    free(edist);
    return rc;
}

int nd_shards_decide_similar(nd_batch_item *items, const nd_doc *docs, size_t n, unsigned k,
                             double min_resemblance)
{
    ND_RETURN_IF(n && (!items || !docs), ND_EINVAL, "nd_shards_decide_similar: NULL argument");
    ND_RETURN_IF(k > ND_MAX_K, ND_EINVAL, "nd_shards_decide_similar: k=%u (at most %u)", k,
                 ND_MAX_K);
    ND_RETURN_IF(!(min_resemblance > 0 && min_resemblance <= 1), ND_EINVAL,
                 "nd_shards_decide_similar: min_resemblance %g (in (0, 1])", min_resemblance);
    ND_RETURN_IF(n > UINT32_MAX, ND_ELIMIT, "nd_shards_decide_similar: %zu documents", n);
    for (size_t i = 0; i < n; i++)
        ND_RETURN_IF(!docs[i].sketch, ND_EINVAL,
                     "nd_shards_decide_similar: document %zu ('%.*s') has no sketch", i,
                     (int)(docs[i].key_len > 80 ? 80 : docs[i].key_len),
                     docs[i].key ? (const char *)docs[i].key : "");
    return db_similar_decide(items, docs, n, k, min_resemblance);
}

/* ---- nd_shards_add ---------------------------------------------------------- */

/* A duplicate whose closest match is its own key, stored: its time is
 * refreshed, as nd_db_batch with ND_BATCH_ADD does. */
static int refreshes(const nd_batch_item *it, const nd_doc *d)
{
    return it->dup && it->match_index == ND_BATCH_STORED && it->match_key_len == d->key_len &&
           memcmp(it->match_key, d->key, d->key_len) == 0;
}

/* One shard's part of the batch: new documents in one atomic write (a
 * bulk import where it pays), refreshed ones by their own write. */
static int add_shard(nd_db *db, const nd_shards *s, unsigned shard, const nd_doc *docs,
                     const nd_batch_item *items, size_t n, nd_doc *buf, nd_results *res)
{
    size_t nd = 0;
    int all = nd_db_min_resemblance(db) > 0; /* a resemblance store indexes every document */
    for (size_t i = 0; all && i < n; i++)
        if (nd_shards_place(s, docs[i].key, docs[i].key_len) == shard) buf[nd++] = docs[i];
    for (size_t i = 0; !all && i < n; i++) {
        const nd_doc *d = &docs[i];
        if (!(items[i].dup == 0 || refreshes(&items[i], d))) continue;
        if (nd_shards_place(s, d->key, d->key_len) != shard) continue;
        if (!items[i].dup) {
            buf[nd++] = *d;
            continue;
        }
        ND_FORWARD(nd_db_get(res, db, d->key, d->key_len));
        const nd_match *m = nd_results_get(res, 0);
        ND_FORWARD(nd_db_add(db, d->key, d->key_len, m->fp, m->score, d->time));
    }
    if (nd == 0) return ND_OK;
    return nd >= 100000 ? nd_db_import(db, buf, nd) : nd_db_add_many(db, buf, nd);
}

int nd_shards_add(nd_shards *s, const nd_doc *docs, const nd_batch_item *items, size_t n)
{
    nd_shards_info info;
    nd_results *res = NULL;
    nd_doc *buf = NULL;
    int rc = ND_OK;
    ND_RETURN_IF(!s || (n && (!docs || !items)), ND_EINVAL, "nd_shards_add: NULL argument");
    ND_FORWARD(nd_shards_info_get(&info, s));
    buf = malloc((n ? n : 1) * sizeof *buf);
    if (!buf) ND_FAIL(ND_ENOMEM, "nd_shards_add: out of memory for %zu documents", n);
    ND_TRY(nd_results_new(&res));
    for (unsigned i = 0; i < info.shards; i++) {
        nd_db *db = nd_shards_db(s, i);
        if (!db) continue;
        rc = add_shard(db, s, i, docs, items, n, buf, res);
        if (rc < 0) {
            char path[4096];
            if (nd_shards_path(path, sizeof path, s, i) == ND_OK)
                rc = nd_err_wrap(rc, "adding to shard %u '%s'", i, path);
            goto cleanup;
        }
    }
cleanup:
    free(buf);
    nd_results_free(res);
    return rc;
}

int nd_shards_batch(nd_batch_item *out, nd_results *keys, nd_shards *s, const nd_doc *docs,
                    size_t n, unsigned k, unsigned flags)
{
    nd_shards_info info;
    ND_RETURN_IF(!s, ND_EINVAL, "nd_shards_batch: NULL store");
    ND_RETURN_IF(flags & ~ND_BATCH_ADD, ND_EINVAL, "nd_shards_batch: unknown flags 0x%x", flags);
    ND_FORWARD(nd_shards_info_get(&info, s));
    for (unsigned i = 0; i < info.shards; i++)
        ND_RETURN_IF(!nd_shards_db(s, i), ND_EINVAL,
                     "nd_shards_batch: shard %u is not open here (a part, or the manifest only)",
                     i);
    ND_FORWARD(nd_shards_check(out, keys, s, docs, n, k));
    double r = shards_resemblance(s, info.shards);
    if (r > 0) ND_FORWARD(nd_shards_decide_similar(out, docs, n, k, r));
    else ND_FORWARD(nd_shards_decide(out, docs, n, k));
    if (flags & ND_BATCH_ADD) ND_FORWARD(nd_shards_add(s, docs, out, n));
    return ND_OK;
}
