/*
 * ncl_fleet_batch.c — nd_fleet_batch: a batch over the fleet in the three
 * steps of nd_shards_batch (docs/server.md, "A fleet"):
 *  1. check: POST /v1/batch "stored_only" on every server at once, each
 *     document's best stored match in each shard;
 *  2. decide: the best of those per document (the store's rule), sent
 *     with the documents to one server's POST /v1/decide, which answers
 *     what /v1/batch answers on one store holding every shard (the batch
 *     checked within itself, earlier new documents winning as
 *     nd_db_batch decides);
 *  3. store (ND_BATCH_ADD): each server's own documents and their answers
 *     to its POST /v1/store, at once.
 * In step 3 an answer's "index" (an earlier document of the batch) must
 * name a document of the same request: a match with a document of the
 * same shard is renumbered to its place among that shard's documents;
 * one with a document of another shard has a different key (a key has
 * one shard), so the server's one use of it — refresh a duplicate whose
 * match is its own key — never applies, and it is sent as a stored match.
 * The decider rotates over the servers, so no one answers them all.
 */
#include "ncl_fleet.h"

#include <stdlib.h>
#include <string.h>

/* Step 3: answers (decide's "results", borrowed) of docs to their owners. */
static int store(nd_fleet *f, const nd_client_doc *docs, size_t n, json_t *docs_json,
                 json_t *results, unsigned flags)
{
    size_t *shard = malloc((n ? n : 1) * sizeof *shard);
    size_t *local = malloc((n ? n : 1) * sizeof *local);
    size_t *count = calloc(f->n, sizeof *count);
    json_t **bodies = calloc(f->n, sizeof *bodies), **a = ncl_fleet_answers(f);
    const char **paths = calloc(f->n, sizeof *paths);
    int rc = shard && local && count && bodies && a && paths ? ND_OK
                                                             : ncl_fail(ND_ENOMEM, "out of memory");
    for (size_t i = 0; rc == ND_OK && i < n; i++) {
        shard[i] = nd_fleet_place(docs[i].key, docs[i].key_len, f->n);
        local[i] = count[shard[i]]++;
    }
    for (size_t s = 0; rc == ND_OK && s < f->n; s++) {
        if (!count[s]) continue;
        paths[s] = "/v1/store";
        bodies[s] = json_pack("{s:[],s:[]}", "documents", "results");
        if (!bodies[s] || ((flags & ND_CLIENT_SYNC) &&
                           json_object_set_new(bodies[s], "sync", json_true())))
            rc = ncl_fail(ND_ENOMEM, "out of memory");
    }
    for (size_t i = 0; rc == ND_OK && i < n; i++) {
        json_t *b = bodies[shard[i]], *r = json_array_get(results, i), *idx;
        json_t *ans = json_incref(r);
        size_t j;
        if (json_is_object(r) && json_is_integer(idx = json_object_get(r, "index"))) {
            j = (size_t)json_integer_value(idx);
            json_decref(ans);
            ans = json_copy(r);
            if (ans && j < i && shard[j] == shard[i])
                json_object_set_new(ans, "index", json_integer((json_int_t)local[j]));
            else if (ans)
                json_object_set_new(ans, "index", json_null());
        }
        if (!ans || json_array_append_new(json_object_get(b, "results"), ans) != 0 ||
            json_array_append(json_object_get(b, "documents"), json_array_get(docs_json, i)))
            rc = ncl_fail(ND_ENOMEM, "out of memory");
    }
    if (rc == ND_OK) rc = ncl_parallel_call(f->par, a, f->c, f->n, "POST", paths, bodies);
    for (size_t s = 0; bodies && s < f->n; s++) json_decref(bodies[s]);
    ncl_fleet_answers_free(f, a);
    free(paths);
    free(bodies);
    free(count);
    free(local);
    free(shard);
    return rc;
}

int nd_fleet_batch(nd_batch_item *out, nd_client_results *keys, nd_fleet *f,
                   const nd_client_doc *docs, size_t n, unsigned k, unsigned flags)
{
    ncl_clear_error();
    if (!f || !keys || (n && (!out || !docs)))
        return ncl_fail(ND_EINVAL, "nd_fleet_batch: NULL argument");
    if (flags & ~(ND_BATCH_ADD | ND_CLIENT_SYNC))
        return ncl_fail(ND_EINVAL, "nd_fleet_batch: unknown flags 0x%x", flags);
    nd_client_results_clear(keys);
    if (n == 0) return ND_OK;
    int rc = ND_OK;
    json_t *docs_json = ncl_batch_documents(&rc, docs, n);
    json_t *check = NULL, *decide = NULL, *decided = NULL, *matches = NULL;
    json_t **a = rc == ND_OK ? ncl_fleet_answers(f) : NULL;
    json_t **ms = rc == ND_OK ? ncl_fleet_answers(f) : NULL;
    if (rc == ND_OK && (!a || !ms)) rc = ND_ENOMEM;
    /* 1. every shard's best stored match per document */
    if (rc == ND_OK && (!(check = json_pack("{s:O,s:b}", "documents", docs_json, "stored_only", 1)) ||
                        (rc = ncl_set_k_sync(check, k, 0)) < 0))
        rc = rc < 0 ? rc : ncl_fail(ND_ENOMEM, "out of memory");
    if (rc == ND_OK) rc = ncl_fleet_fan(f, a, "POST", "/v1/batch", check);
    for (size_t s = 0; rc == ND_OK && s < f->n; s++) {
        json_t *r = json_object_get(a[s], "results");
        if (!json_is_array(r) || json_array_size(r) != n)
            rc = ncl_fail(ND_CLIENT_EPROTO, "POST %s/v1/batch: not %zu results",
                          ncl_client_url(f->c[s]), n);
    }
    /* 2. the best of the shards', decided on one server */
    if (rc == ND_OK && !(matches = json_array())) rc = ncl_fail(ND_ENOMEM, "out of memory");
    for (size_t i = 0; rc == ND_OK && i < n; i++) {
        for (size_t s = 0; s < f->n; s++) ms[s] = json_array_get(json_object_get(a[s], "results"), i);
        json_t *best = ncl_fleet_best(f, ms, f->n);
        if (json_array_append(matches, best ? best : json_null()) != 0)
            rc = ncl_fail(ND_ENOMEM, "out of memory");
    }
    for (size_t s = 0; ms && s < f->n; s++) ms[s] = NULL; /* borrowed */
    if (rc == ND_OK && (!(decide = json_pack("{s:O,s:O}", "documents", docs_json, "matches",
                                             matches)) ||
                        (rc = ncl_set_k_sync(decide, k, 0)) < 0))
        rc = rc < 0 ? rc : ncl_fail(ND_ENOMEM, "out of memory");
    if (rc == ND_OK) {
        nd_client *c = f->c[f->next_decider++ % f->n];
        rc = ncl_call(&decided, c, "POST", "/v1/decide", decide);
    }
    if (rc == ND_OK) rc = ncl_batch_read(out, keys, decided, n, "POST /v1/decide");
    /* 3. each shard stores its own */
    if (rc == ND_OK && (flags & ND_BATCH_ADD))
        rc = store(f, docs, n, docs_json, json_object_get(decided, "results"), flags);
    if (rc < 0) nd_client_results_clear(keys);
    ncl_fleet_answers_free(f, a);
    ncl_fleet_answers_free(f, ms);
    json_decref(decided);
    json_decref(decide);
    json_decref(matches);
    json_decref(check);
    json_decref(docs_json);
    return rc;
}
