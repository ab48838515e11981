/*
 * ncl_fleet.c — nd_fleet, the router over S shard servers
 * (docs/server.md, "A fleet"; python/neardup/fleet.py routes the same).
 *
 * The invariant: a fleet's answers are those of one server holding every
 * shard. A near-duplicate may be stored in any shard (documents are
 * placed by key, FNV-1a-64 mod S, not by fingerprint), so every check
 * asks every server at once (an ncl_parallel: one round trip, not S) and
 * keeps the best of their matches: fingerprint-only, nd_match_order's
 * first; resemblance store, the highest resemblance first. A write of a
 * key goes to its owner only, whose server refuses a key of another shard
 * (421 wrong_shard): a misrouted write fails, never lands in the wrong
 * shard.
 *
 * Check-and-add: one store stores the document when nothing is within k,
 * or refreshes its own key's time when the best match is its own key.
 * Here: the checks of every server first; when the best says new or is
 * the document's own key (which lives on the owner), the owner's
 * check-and-add, whose answer replaces the owner's check in the merge. A
 * resemblance store stores every document, so the owner's check-and-add
 * goes out beside the others' checks at once. Batches: ncl_fleet_batch.c.
 */
#include "ncl_fleet.h"

#include <stdlib.h>
#include <string.h>

size_t nd_fleet_place(const void *key, size_t key_len, size_t shards)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *p = key;
    for (size_t i = 0; i < key_len; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return shards ? (size_t)(h % shards) : 0;
}

size_t nd_fleet_shards(const nd_fleet *f)
{
    return f ? f->n : 0;
}

int ncl_fleet_fan(nd_fleet *f, json_t **outs, const char *method, const char *path,
                  json_t *body)
{
    const char **paths = malloc(f->n * sizeof *paths);
    json_t **bodies = malloc(f->n * sizeof *bodies);
    int rc = paths && bodies ? ND_OK : ncl_fail(ND_ENOMEM, "out of memory");
    for (size_t i = 0; rc == ND_OK && i < f->n; i++) paths[i] = path, bodies[i] = body;
    if (rc == ND_OK) rc = ncl_parallel_call(f->par, outs, f->c, f->n, method, paths, bodies);
    free(paths);
    free(bodies);
    return rc;
}

json_t **ncl_fleet_answers(nd_fleet *f)
{
    json_t **a = calloc(f->n, sizeof *a);
    if (!a) ncl_fail(ND_ENOMEM, "out of memory");
    return a;
}

void ncl_fleet_answers_free(nd_fleet *f, json_t **a)
{
    for (size_t i = 0; a && i < f->n; i++) json_decref(a[i]);
    free(a);
}

json_t *ncl_fleet_best(nd_fleet *f, json_t *const *ms, size_t n)
{
    json_t *best = NULL;
    nd_match b, m;
    for (size_t i = 0; i < n; i++) {
        if (!ms[i] || json_is_null(ms[i]) || ncl_match_view(&m, NULL, ms[i]) < 0) continue;
        if (!best || ncl_better(&m, &b, f->resemblance)) best = ms[i], b = m;
    }
    return best;
}

/* ---- opening */

int nd_fleet_open(nd_fleet **out, const char *const *urls, size_t n,
                  const nd_client_options *opts)
{
    ncl_clear_error();
    if (!out) return ncl_fail(ND_EINVAL, "nd_fleet_open: NULL out");
    *out = NULL;
    if (!urls || n == 0) return ncl_fail(ND_EINVAL, "nd_fleet_open: no urls");
    nd_fleet *f = calloc(1, sizeof *f);
    json_t **a = NULL;
    nd_client_stats *st = NULL;
    int rc = f && (f->c = calloc(n, sizeof *f->c)) ? ND_OK : ncl_fail(ND_ENOMEM, "out of memory");
    if (rc == ND_OK) f->n = n;
    for (size_t i = 0; rc == ND_OK && i < n; i++) rc = nd_client_open(&f->c[i], urls[i], opts);
    if (rc == ND_OK) rc = ncl_parallel_new(&f->par);
    if (rc == ND_OK && (!(a = ncl_fleet_answers(f)) || !(st = calloc(n, sizeof *st))))
        rc = ncl_fail(ND_ENOMEM, "out of memory");
    if (rc == ND_OK) rc = ncl_fleet_fan(f, a, "GET", "/v1/stats", NULL);
    for (size_t i = 0; rc == ND_OK && i < n; i++)
        rc = ncl_stats_read(&st[i], a[i], urls[i]);
    /* server i serves shard i of n, all of one store */
    for (size_t i = 0; rc == ND_OK && i < n; i++) {
        if (n == 1 && st[i].shard < 0) break; /* a plain server: a fleet of one */
        if (st[i].shard != (int)i || st[i].shards != (int)n)
            rc = ncl_fail(ND_EMISMATCH, "fleet: %s serves %s%d of %d, not shard %zu of %zu",
                          urls[i], st[i].shard < 0 ? "a plain store, " : "shard ",
                          st[i].shard, st[i].shards, i, n);
        else if (strcmp(st[i].manifest, st[0].manifest) != 0)
            rc = ncl_fail(ND_EMISMATCH, "fleet: %s serves a shard of another store (manifest "
                          "%s, %s's is %s)", urls[i], st[i].manifest, urls[0], st[0].manifest);
        else if (st[i].k != st[0].k || st[i].min_resemblance != st[0].min_resemblance)
            rc = ncl_fail(ND_EMISMATCH, "fleet: %s has k %u and resemblance %g, %s k %u and %g",
                          urls[i], st[i].k, st[i].min_resemblance, urls[0], st[0].k,
                          st[0].min_resemblance);
    }
    if (rc == ND_OK) {
        f->resemblance = st[0].min_resemblance > 0;
        f->k = st[0].k;
        *out = f;
        f = NULL;
    }
    for (size_t i = 0; a && i < n; i++) json_decref(a[i]);
    free(a);
    free(st);
    nd_fleet_close(f);
    return rc;
}

void nd_fleet_close(nd_fleet *f)
{
    if (!f) return;
    for (size_t i = 0; f->c && i < f->n; i++) nd_client_close(f->c[i]);
    free(f->c);
    ncl_parallel_free(f->par);
    free(f);
}

/* ---- checks */

#define NEED(f, out)                                                          \
    do {                                                                      \
        ncl_clear_error();                                                    \
        if (!(f)) return ncl_fail(ND_EINVAL, "%s: NULL fleet", __func__);     \
        if (!(out)) return ncl_fail(ND_EINVAL, "%s: NULL results", __func__); \
    } while (0)

/* The best of answers a's "match" members (those not NULL) into out. */
static int merge_checks(nd_client_results *out, nd_fleet *f, json_t **a)
{
    json_t **ms = ncl_fleet_answers(f);
    if (!ms) return ND_ENOMEM;
    for (size_t i = 0; i < f->n; i++) ms[i] = a[i] ? json_object_get(a[i], "match") : NULL;
    json_t *best = ncl_fleet_best(f, ms, f->n);
    int rc = best ? ncl_fail_in(ncl_add_match(out, best, NULL), "fleet") : ND_OK;
    free(ms); /* borrowed members */
    return rc;
}

/* /v1/check of body (stolen) on every server; the best into out. */
static int check(nd_client_results *out, nd_fleet *f, json_t *body, int rc)
{
    json_t **a = rc == ND_OK ? ncl_fleet_answers(f) : NULL;
    nd_client_results_clear(out);
    if (rc == ND_OK && !a) rc = ND_ENOMEM;
    if (rc == ND_OK) rc = ncl_fleet_fan(f, a, "POST", "/v1/check", body);
    if (rc == ND_OK) rc = merge_checks(out, f, a);
    ncl_fleet_answers_free(f, a);
    json_decref(body);
    return rc;
}

int nd_fleet_check(nd_client_results *out, nd_fleet *f, uint64_t fp, unsigned k)
{
    NEED(f, out);
    int rc = ND_OK;
    json_t *b = ncl_single(&rc, NULL, 0, fp, NULL, 0, 0, 0, 0, k, 0);
    return check(out, f, b, rc);
}

int nd_fleet_check_text(nd_client_results *out, nd_fleet *f, const char *text, size_t len,
                        unsigned k, unsigned flags)
{
    NEED(f, out);
    int rc = text ? ND_OK : ncl_fail(ND_EINVAL, "nd_fleet_check_text: NULL text");
    json_t *b = rc ? NULL : ncl_single(&rc, NULL, 0, 0, text, len, 0, 0, 0, k,
                                       flags & ND_CLIENT_HTML);
    return check(out, f, b, rc);
}

/* Check-and-add of one document: chk the check's body, add the owner's
 * check-and-add body (both stolen). */
static int check_and_add(nd_client_results *out, nd_fleet *f, const void *key, size_t key_len,
                         json_t *chk, json_t *add, int rc)
{
    size_t owner = nd_fleet_place(key, key_len, f->n);
    json_t **a = rc == ND_OK ? ncl_fleet_answers(f) : NULL;
    const char **paths = rc == ND_OK ? malloc(f->n * sizeof *paths) : NULL;
    json_t **bodies = rc == ND_OK ? malloc(f->n * sizeof *bodies) : NULL;
    nd_client_results_clear(out);
    if (rc == ND_OK && (!a || !paths || !bodies)) rc = ncl_fail(ND_ENOMEM, "out of memory");
    for (size_t i = 0; rc == ND_OK && i < f->n; i++) {
        int owner_adds = i == owner && f->resemblance; /* stored either way: at once */
        paths[i] = owner_adds ? "/v1/check-and-add" : "/v1/check";
        bodies[i] = owner_adds ? add : chk;
    }
    if (rc == ND_OK) rc = ncl_parallel_call(f->par, a, f->c, f->n, "POST", paths, bodies);
    if (rc == ND_OK && !f->resemblance) {
        json_t *best = NULL;
        json_t **ms = ncl_fleet_answers(f);
        if (!ms) rc = ND_ENOMEM;
        for (size_t i = 0; ms && i < f->n; i++) ms[i] = json_object_get(a[i], "match");
        if (ms) best = ncl_fleet_best(f, ms, f->n);
        free(ms);
        nd_match m;
        if (rc == ND_OK && (!best || (ncl_match_view(&m, NULL, best) == 0 &&
                                      m.key_len == key_len && memcmp(m.key, key, key_len) == 0))) {
            json_decref(a[owner]);
            a[owner] = NULL;
            rc = ncl_call(&a[owner], f->c[owner], "POST", "/v1/check-and-add", add);
        }
    }
    if (rc == ND_OK) rc = merge_checks(out, f, a);
    ncl_fleet_answers_free(f, a);
    free(paths);
    free(bodies);
    json_decref(chk);
    json_decref(add);
    return rc;
}

int nd_fleet_add_if_new(nd_client_results *out, nd_fleet *f, const void *key, size_t key_len,
                        uint64_t fp, double score, int64_t time, unsigned k, unsigned flags)
{
    NEED(f, out);
    int rc = key ? ND_OK : ncl_fail(ND_EINVAL, "nd_fleet_add_if_new: NULL key");
    json_t *chk = rc ? NULL : ncl_single(&rc, NULL, 0, fp, NULL, 0, 0, 0, 0, k, 0);
    json_t *add = rc ? NULL : ncl_single(&rc, key, key_len, fp, NULL, 0, 1, score, time, k,
                                         flags & ND_CLIENT_SYNC);
    return check_and_add(out, f, key, key_len, chk, add, rc);
}

int nd_fleet_add_if_new_text(nd_client_results *out, nd_fleet *f, const void *key,
                             size_t key_len, const char *text, size_t len, double score,
                             int64_t time, unsigned k, unsigned flags)
{
    NEED(f, out);
    int rc = key && text ? ND_OK : ncl_fail(ND_EINVAL, "nd_fleet_add_if_new_text: NULL %s",
                                            key ? "text" : "key");
    json_t *chk = rc ? NULL : ncl_single(&rc, NULL, 0, 0, text, len, 0, 0, 0, k,
                                         flags & ND_CLIENT_HTML);
    json_t *add = rc ? NULL : ncl_single(&rc, key, key_len, 0, text, len, 1, score, time, k,
                                         flags);
    return check_and_add(out, f, key, key_len, chk, add, rc);
}

/* ---- by key: the owner alone */

static nd_client *owner(nd_fleet *f, const void *key, size_t key_len)
{
    return f->c[key ? nd_fleet_place(key, key_len, f->n) : 0];
}

int nd_fleet_add(nd_fleet *f, const void *key, size_t key_len, uint64_t fp, double score,
                 int64_t time, unsigned flags)
{
    if (!f) return ncl_fail(ND_EINVAL, "nd_fleet_add: NULL fleet");
    return nd_client_add(owner(f, key, key_len), key, key_len, fp, score, time, flags);
}

int nd_fleet_add_text(nd_fleet *f, const void *key, size_t key_len, const char *text,
                      size_t len, double score, int64_t time, unsigned flags)
{
    if (!f) return ncl_fail(ND_EINVAL, "nd_fleet_add_text: NULL fleet");
    return nd_client_add_text(owner(f, key, key_len), key, key_len, text, len, score, time,
                              flags);
}

int nd_fleet_get(nd_client_results *out, nd_fleet *f, const void *key, size_t key_len)
{
    if (!f) return ncl_fail(ND_EINVAL, "nd_fleet_get: NULL fleet");
    return nd_client_get(out, owner(f, key, key_len), key, key_len);
}

int nd_fleet_delete(nd_fleet *f, const void *key, size_t key_len)
{
    if (!f) return ncl_fail(ND_EINVAL, "nd_fleet_delete: NULL fleet");
    return nd_client_delete(owner(f, key, key_len), key, key_len);
}

/* ---- queries, stats, health */

/* /v1/query of body (stolen) on every server: the matches merged. */
static int query(nd_client_results *out, nd_fleet *f, json_t *body, int rc, unsigned k,
                 size_t limit, int by_resemblance)
{
    json_t **a = rc == ND_OK ? ncl_fleet_answers(f) : NULL;
    nd_client_results_clear(out);
    if (rc == ND_OK && !a) rc = ND_ENOMEM;
    if (rc == ND_OK) rc = ncl_set_k_sync(body, k, 0);
    if (rc == ND_OK && limit && json_object_set_new(body, "limit", json_integer((json_int_t)limit)))
        rc = ncl_fail(ND_ENOMEM, "out of memory");
    if (rc == ND_OK) rc = ncl_fleet_fan(f, a, "POST", "/v1/query", body);
    for (size_t s = 0; rc == ND_OK && s < f->n; s++) {
        json_t *ms = json_object_get(a[s], "matches"), *m;
        size_t i;
        if (!json_is_array(ms))
            rc = ncl_fail(ND_CLIENT_EPROTO, "POST %s/v1/query: an answer without \"matches\"",
                          ncl_client_url(f->c[s]));
        json_array_foreach(ms, i, m) {
            if (rc == ND_OK) rc = ncl_fail_in(ncl_add_match(out, m, NULL), "POST /v1/query");
        }
    }
    if (rc == ND_OK) {
        ncl_results_sort(out, by_resemblance);
        if (limit) ncl_results_truncate(out, limit);
    } else {
        nd_client_results_clear(out);
    }
    ncl_fleet_answers_free(f, a);
    json_decref(body);
    return rc;
}

int nd_fleet_query(nd_client_results *out, nd_fleet *f, uint64_t fp, unsigned k, size_t limit)
{
    NEED(f, out);
    int rc = ND_OK;
    json_t *b = ncl_doc_json(&rc, NULL, 0, fp, NULL, 0, 0, 0, 0, 0);
    return query(out, f, b, rc, k, limit, 0);
}

int nd_fleet_query_text(nd_client_results *out, nd_fleet *f, const char *text, size_t len,
                        unsigned k, size_t limit, unsigned flags)
{
    NEED(f, out);
    int rc = text ? ND_OK : ncl_fail(ND_EINVAL, "nd_fleet_query_text: NULL text");
    json_t *b = rc ? NULL : ncl_doc_json(&rc, NULL, 0, 0, text, len, 0, 0, 0,
                                         flags & ND_CLIENT_HTML);
    return query(out, f, b, rc, k, limit, f->resemblance);
}

int nd_fleet_stats_get(nd_client_stats *out, nd_fleet *f)
{
    ncl_clear_error();
    if (!out || !f) return ncl_fail(ND_EINVAL, "nd_fleet_stats_get: NULL argument");
    memset(out, 0, sizeof *out);
    json_t **a = ncl_fleet_answers(f);
    int rc = a ? ncl_fleet_fan(f, a, "GET", "/v1/stats", NULL) : ND_ENOMEM;
    nd_client_stats st;
    for (size_t i = 0; rc == ND_OK && i < f->n; i++) {
        rc = ncl_stats_read(&st, a[i], ncl_client_url(f->c[i]));
        if (rc < 0) break;
        if (i == 0) *out = st, out->documents = out->fingerprints = 0, out->durable = 1;
        out->documents += st.documents;
        out->fingerprints += st.fingerprints;
        out->durable &= st.durable;
    }
    out->shard = -1;
    out->shards = (int)f->n;
    ncl_fleet_answers_free(f, a);
    return rc;
}

int nd_fleet_healthy(nd_fleet *f)
{
    ncl_clear_error();
    if (!f) return ncl_fail(ND_EINVAL, "nd_fleet_healthy: NULL fleet");
    json_t **a = ncl_fleet_answers(f);
    int rc = a ? ncl_fleet_fan(f, a, "GET", "/healthz", NULL) : ND_ENOMEM;
    ncl_fleet_answers_free(f, a);
    return rc;
}
