/*
 * db_query.c — queries: which stored fingerprints lie within k bits.
 *
 * For k up to the plan's k: one probe per table. Table i holds pi_i(F) for
 * every stored F; the probe reads the entries whose top p_i bits equal those
 * of pi_i(q) and keeps those within k (Hamming distance is invariant under
 * the permutation, so the check runs on permuted values).
 * For larger k: every table is probed at every prefix that differs from
 * pi_i(q)'s in at most d = nd_plan_flip_bound(k) bits (plan.c proves this
 * exact; d <= k - plan k),
 * unless the model says one full scan of a table is cheaper: then table 0
 * is scanned.
 * Matches found through several tables are merged (sorted, unique), then
 * expanded to documents through the rev family.
 *
 * Invariants: a query takes no lock; it reads through a pooled reader
 * (db_reader_get) whose views follow every write that returned before it
 * began, fresh entries from the mirror (skipped where db_fold_fresh_maybe
 * says a table has none). Callers: the public API (nd_db_query, nd_db_get),
 * nd_db_add_if_new (through nd_db_query), nd_db_batch (db_match_fps for probes,
 * db_first_keys for its matches' keys).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_core.h"
#include "db_fold.h"
#include "db_mirrored.h"
#include "db_query.h"
#include "db_results.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "nd_options.h"
#include "sort.h"

/* Model units (entries decoded): a probe's seek vs a scan's entry. */
#define QUERY_SEEK_COST 200.0

static uint64_t prefix_mask(unsigned p)
{
    return p == 0 ? 0 : (p >= 64 ? ~0ull : ~0ull << (64 - p));
}

typedef struct probe_ctx {
    nd_db *db;
    st_reader *r;
    st_u64s cand; /* scratch: entries of one probe */
    st_u64s *out; /* unpermuted matches */
    unsigned k;
    int first;
    int found; /* stop signal with first */
    int fresh[ND_MAX_TABLES]; /* table t may hold fresh entries (db_fold_fresh_maybe) */
} probe_ctx;

static int probe(probe_ctx *c, unsigned t, uint64_t q, uint64_t prefix)
{
    const nd_perm *perm = &c->db->plan.table[t];
    uint64_t mask = prefix_mask(perm->prefix_bits);
    uint64_t lo = prefix & mask, hi = lo | ~mask;
    c->cand.n = 0;
    ND_FORWARD(st_table_range(c->r, t, lo, hi, c->fresh[t], &c->cand));
    for (size_t i = 0; i < c->cand.n; i++) {
        if ((unsigned)__builtin_popcountll(c->cand.v[i] ^ q) > c->k) continue;
        ND_FORWARD(st_u64s_push(c->out, nd_perm_invert(perm, c->cand.v[i])));
        if (c->first) {
            c->found = 1;
            return ND_OK;
        }
    }
    return ND_OK;
}

/* Collect every prefix within d flipped bits among the top p bits: flips
 * are chosen from bit positions [from, p) so each set is visited once. */
static int collect_flips(st_u64s *out, uint64_t prefix, unsigned p, unsigned d, unsigned from)
{
    ND_FORWARD(st_u64s_push(out, prefix));
    if (d == 0) return ND_OK;
    for (unsigned b = from; b < p; b++)
        ND_FORWARD(collect_flips(out, prefix ^ (1ull << (63 - b)), p, d - 1, b + 1));
    return ND_OK;
}

/* Beyond the plan's k: probe every prefix within d flipped bits, each as
 * a probe of the plan's k does (the reader's direct reader or iterator),
 * in ascending order. */
static int probe_flips(probe_ctx *c, unsigned t, uint64_t q, unsigned d)
{
    const nd_perm *perm = &c->db->plan.table[t];
    uint64_t mask = prefix_mask(perm->prefix_bits);
    st_u64s prefixes = {0};
    int rc;
    ND_TRY(collect_flips(&prefixes, q & mask, perm->prefix_bits, d, 0));
    qsort(prefixes.v, prefixes.n, sizeof *prefixes.v, sort_cmp_u64);
    for (size_t i = 0; i < prefixes.n && !c->found; i++) ND_TRY(probe(c, t, q, prefixes.v[i]));
    rc = ND_OK;
cleanup:
    st_u64s_dispose(&prefixes);
    return rc;
}

typedef struct scan_ctx {
    probe_ctx *c;
    uint64_t q;
} scan_ctx;

static int scan_cb(const uint64_t *e, size_t n, int is_run, size_t bytes, void *payload)
{
    (void)is_run;
    (void)bytes;
    scan_ctx *s = payload;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned)__builtin_popcountll(e[i] ^ s->q) > s->c->k) continue;
        ND_FORWARD(st_u64s_push(s->c->out, nd_perm_invert(&s->c->db->plan.table[0], e[i])));
        if (s->c->first) return 1; /* stop the scan */
    }
    return 0;
}

int db_match_fps(nd_db *db, uint64_t fp, unsigned k, int first, st_u64s *out)
{
    probe_ctx c = {.db = db, .out = out, .k = k, .first = first};
    const nd_plan *plan = &db->plan;
    int rc;
    out->n = 0;
    ND_RETURN_IF(k > ND_MAX_K, ND_EINVAL, "query distance k=%u (0..%u allowed)", k, ND_MAX_K);
    ND_FORWARD(db_reader_get(db, &c.r));
    unsigned d = nd_plan_flip_bound(plan, k);
    int scan = 0;
    if (d) {
        uint64_t probes;
        nd_plan_probe_count(plan, k, &probes);
        double n = (double)(db->write.fps ? db->write.fps : 1);
        double cand = n / ldexp(1.0, (int)plan->info.prefix_min);
        if (cand < db->run_size) cand = db->run_size;
        double probe_cost = (double)probes * (QUERY_SEEK_COST + cand);
        scan = probe_cost > n + QUERY_SEEK_COST;
    }
    if (scan) {
        scan_ctx s = {&c, nd_perm_apply(&plan->table[0], fp)};
        /* No flush: the caller may hold write.mu (add_if_new's check);
         * an entry seen twice is merged below. */
        rc = db_mirrored_scan(db, 0, scan_cb, &s, 0);
        if (rc == 1) rc = ND_OK;
        if (rc < 0) goto cleanup;
    } else {
        uint64_t q[ND_MAX_TABLES];
        unsigned nt = plan->info.tables;
        for (unsigned t = 0; t < nt; t++) {
            q[t] = nd_perm_apply(&plan->table[t], fp);
            /* Read before the probes open their views: a fold lowers the
             * count only after its runs are written, so 0 here means the
             * runs hold it all. */
            c.fresh[t] = db_fold_fresh_maybe(db, t);
        }
        /* One probe per table: their index look-ups (in mapped files,
         * their blocks; in the fresh mirror, its chunks) miss the CPU
         * cache at once rather than one after another (at 100M, 10
         * tables). */
        for (int stage = 1; !d && stage <= 3; stage++)
            for (unsigned t = 0; t < nt; t++)
                st_table_hint(c.r, t, q[t] & prefix_mask(plan->table[t].prefix_bits),
                              c.fresh[t], stage);
        for (unsigned t = 0; t < nt && !c.found; t++) {
            if (d) ND_TRY(probe_flips(&c, t, q[t], d));
            else ND_TRY(probe(&c, t, q[t], q[t]));
        }
    }
    if (out->n > 1) {
        qsort(out->v, out->n, sizeof *out->v, sort_cmp_u64);
        size_t m = 1;
        for (size_t i = 1; i < out->n; i++)
            if (out->v[i] != out->v[m - 1]) out->v[m++] = out->v[i];
        out->n = m;
    }
    rc = ND_OK;
cleanup:
    st_u64s_dispose(&c.cand);
    db_reader_put(db, c.r);
    return rc;
}

/* Score and time of key's document under fp: from its rev value, or, for
 * an entry written before format 3, from docs (ND_ENOTFOUND when the
 * document was deleted or moved to another fingerprint since rev was read). */
static int doc_of(nd_db *db, uint64_t fp, const char *key, size_t klen, const char *rv,
                  size_t rlen, double *score, int64_t *time)
{
    int rc = db_rev_decode(rv, rlen, score, time);
    if (rc != 0) return rc < 0 ? rc : ND_OK;
    char *v = NULL;
    size_t vlen;
    uint64_t dfp;
    ND_FORWARD(st_get(db->store, ST_CF_DOCS, key, klen, &v, &vlen));
    rc = db_doc_decode(v, vlen, &dfp, score, time);
    free(v);
    ND_FORWARD(rc);
    return dfp == fp ? ND_OK : ND_ENOTFOUND;
}

/* Append the documents of fingerprint fp (via rev) to out, in key order,
 * at most most of them (0: all). One iterator reads rev's keys and
 * values at one snapshot, so they agree with each other. */
static int expand_docs(nd_db *db, nd_results *out, uint64_t fp, unsigned dist, size_t most)
{
    size_t taken = 0;
    st_iter *it;
    uint8_t kb[8];
    int rc = ND_OK;
    ND_FORWARD(st_iter_new(&it, db->store, ST_CF_REV, NULL, 1));
    nd_store_be64(kb, fp);
    for (st_iter_seek(it, kb, 8); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen);
        if (klen < 8 || memcmp(k, kb, 8) != 0) break;
        const char *v = st_iter_value(it, &vlen);
        double score;
        int64_t time;
        rc = doc_of(db, fp, k + 8, klen - 8, v, vlen, &score, &time);
        if (rc == ND_ENOTFOUND) {
            rc = ND_OK;
            continue;
        }
        if (rc == ND_OK) rc = results_push(out, fp, dist, k + 8, klen - 8, score, time);
        if (rc < 0 || ++taken == most) break;
    }
    if (rc == ND_OK) rc = st_iter_status(it);
    st_iter_free(it);
    return rc;
}

int db_first_keys(nd_db *db, const uint64_t *fps, size_t n, nd_results *out, size_t *at)
{
    st_iter *it;
    uint8_t kb[8];
    int rc = ND_OK;
    ND_FORWARD(st_iter_new(&it, db->store, ST_CF_REV, NULL, 1));
    for (size_t i = 0; i < n && rc == ND_OK; i++) {
        at[i] = SIZE_MAX;
        nd_store_be64(kb, fps[i]);
        st_iter_seek(it, kb, sizeof kb);
        if (!st_iter_valid(it)) continue;
        size_t klen;
        const char *k = st_iter_key(it, &klen);
        if (klen <= 8 || memcmp(k, kb, 8) != 0) continue;
        rc = results_push(out, fps[i], 0, k + 8, klen - 8, 0, 0);
        at[i] = nd_results_count(out) - 1;
    }
    if (rc == ND_OK) rc = st_iter_status(it);
    st_iter_free(it);
    return rc;
}

int nd_query_options_init(nd_query_options *opts, unsigned version)
{
    return nd_options_init(opts, sizeof *opts, version, ND_QUERY_OPTIONS_VERSION, ND_QUERY_OPTIONS_VERSION, "query");
}

/* nd_db_query's walk: flags ND_QUERY_*, per_fp the documents of one
 * fingerprint at most (0: all; ND_QUERY_FIRST: 1). */
static int query(nd_results *out, nd_db *db, uint64_t fp, unsigned k, unsigned flags,
                 size_t per_fp, size_t limit)
{
    st_u64s fps = {0};
    int rc;
    nd_results_clear(out);
    int first = (flags & ND_QUERY_FIRST) != 0;
    if (first) per_fp = 1;
    ND_TRY(db_match_fps(db, fp, k, first, &fps));
    for (size_t i = 0; i < fps.n; i++) {
        unsigned dist = (unsigned)__builtin_popcountll(fps.v[i] ^ fp);
        if (flags & ND_QUERY_FP_ONLY) ND_TRY(results_push(out, fps.v[i], dist, NULL, 0, 0, 0));
        else ND_TRY(expand_docs(db, out, fps.v[i], dist, per_fp));
        if (first && nd_results_count(out)) break;
    }
    ND_TRY(results_finish(out, limit));
cleanup:
    st_u64s_dispose(&fps);
    if (rc < 0) nd_results_clear(out);
    return rc;
}

int nd_db_query(nd_results *out, nd_db *db, uint64_t fp, unsigned k, const nd_query_options *opts)
{
    nd_query_options def = ND_QUERY_OPTIONS_INIT;
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_db_query: NULL argument");
    if (!opts) opts = &def;
    ND_RETURN_IF(opts->version != ND_QUERY_OPTIONS_VERSION, ND_EINVAL,
                 "query options: version %u unknown", opts->version);
    return query(out, db, fp, k, opts->flags, 0, opts->limit);
}

int db_query_capped(nd_results *out, nd_db *db, uint64_t fp, unsigned k, size_t per_fp)
{
    return query(out, db, fp, k, 0, per_fp, 0);
}

int nd_db_get(nd_results *out, nd_db *db, const void *key, size_t key_len)
{
    char *v = NULL;
    size_t vlen;
    uint64_t fp;
    double score;
    int64_t time;
    int rc;
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_db_get: NULL argument");
    ND_FORWARD(db_check_key(key, key_len));
    nd_results_clear(out);
    rc = st_get(db->store, ST_CF_DOCS, key, key_len, &v, &vlen);
    if (rc == ND_ENOTFOUND) return nd_err_set(ND_ENOTFOUND, "no document with this key");
    ND_FORWARD(rc);
    rc = db_doc_decode(v, vlen, &fp, &score, &time);
    free(v);
    ND_FORWARD(rc);
    ND_FORWARD(results_push(out, fp, 0, key, key_len, score, time));
    return results_finish(out, 0);
}
