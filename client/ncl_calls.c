/*
 * ncl_calls.c — the calls of one server (nd_client_*): each builds its
 * request's JSON (ncl_json.c), performs it (ncl_http.c) and reads the
 * answer into the caller's results. As neardup.Client does, a check's
 * answer {"new","match"} fills out with the match unless "new" is true;
 * a match the server sends with "new" true (a resemblance store's
 * check-and-add stores the document either way) is still reported, as
 * nd_db_add_doc_if_new does.
 */
#include "ncl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEED(c, out)                                                           \
    do {                                                                       \
        ncl_clear_error();                                                     \
        if (!(c)) return ncl_fail(ND_EINVAL, "%s: NULL client", __func__);     \
        if (!(out)) return ncl_fail(ND_EINVAL, "%s: NULL results", __func__);  \
    } while (0)

/* POST path with body (stolen); the answer's "match" (or null) into out. */
static int post_check(nd_client_results *out, nd_client *c, const char *path, json_t *body,
                      int rc)
{
    json_t *a = NULL;
    nd_client_results_clear(out);
    if (rc == ND_OK) rc = ncl_call(&a, c, "POST", path, body);
    json_decref(body);
    if (rc < 0) return rc;
    json_t *m = json_object_get(a, "match");
    if (!json_is_boolean(json_object_get(a, "new")) || !m)
        rc = ncl_fail(ND_CLIENT_EPROTO, "POST %s%s: an answer without \"new\" and \"match\"",
                      ncl_client_url(c), path);
    else if (!json_is_null(m))
        rc = ncl_fail_in(ncl_add_match(out, m, NULL), path);
    json_decref(a);
    return rc;
}

json_t *ncl_single(int *rc, const void *key, size_t key_len, uint64_t fp, const char *text,
                      size_t len, int with_meta, double score, int64_t time, unsigned k,
                      unsigned flags)
{
    if (key && !key_len) key = NULL, *rc = ncl_fail(ND_EINVAL, "an empty key");
    if (text == NULL && len) {
        *rc = ncl_fail(ND_EINVAL, "a NULL text of %zu bytes", len);
        return NULL;
    }
    if (*rc < 0) return NULL;
    json_t *o = ncl_doc_json(rc, key, key_len, fp, text, len, with_meta, score, time, flags);
    if (o && (*rc = ncl_set_k_sync(o, k, flags)) < 0) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

int nd_client_check(nd_client_results *out, nd_client *c, uint64_t fp, unsigned k)
{
    NEED(c, out);
    int rc = ND_OK;
    json_t *b = ncl_single(&rc, NULL, 0, fp, NULL, 0, 0, 0, 0, k, 0);
    return post_check(out, c, "/v1/check", b, rc);
}

int nd_client_check_text(nd_client_results *out, nd_client *c, const char *text, size_t len,
                         unsigned k, unsigned flags)
{
    NEED(c, out);
    int rc = text ? ND_OK : ncl_fail(ND_EINVAL, "nd_client_check_text: NULL text");
    json_t *b = rc ? NULL : ncl_single(&rc, NULL, 0, 0, text, len, 0, 0, 0, k,
                                   flags & ND_CLIENT_HTML);
    return post_check(out, c, "/v1/check", b, rc);
}

int nd_client_add_if_new(nd_client_results *out, nd_client *c, const void *key, size_t key_len,
                         uint64_t fp, double score, int64_t time, unsigned k, unsigned flags)
{
    NEED(c, out);
    int rc = key ? ND_OK : ncl_fail(ND_EINVAL, "nd_client_add_if_new: NULL key");
    json_t *b = rc ? NULL : ncl_single(&rc, key, key_len, fp, NULL, 0, 1, score, time, k,
                                   flags & ND_CLIENT_SYNC);
    return post_check(out, c, "/v1/check-and-add", b, rc);
}

int nd_client_add_if_new_text(nd_client_results *out, nd_client *c, const void *key,
                              size_t key_len, const char *text, size_t len, double score,
                              int64_t time, unsigned k, unsigned flags)
{
    NEED(c, out);
    int rc = key && text ? ND_OK : ncl_fail(ND_EINVAL, "nd_client_add_if_new_text: NULL %s",
                                            key ? "text" : "key");
    json_t *b = rc ? NULL : ncl_single(&rc, key, key_len, 0, text, len, 1, score, time, k, flags);
    return post_check(out, c, "/v1/check-and-add", b, rc);
}

/* POST /v1/add with body (stolen). */
static int post_add(nd_client *c, json_t *body, int rc)
{
    json_t *a = NULL;
    if (rc == ND_OK) rc = ncl_call(&a, c, "POST", "/v1/add", body);
    json_decref(body);
    json_decref(a);
    return rc;
}

int nd_client_add(nd_client *c, const void *key, size_t key_len, uint64_t fp, double score,
                  int64_t time, unsigned flags)
{
    ncl_clear_error();
    if (!c || !key) return ncl_fail(ND_EINVAL, "nd_client_add: NULL %s", c ? "key" : "client");
    int rc = ND_OK;
    json_t *b = ncl_single(&rc, key, key_len, fp, NULL, 0, 1, score, time, ND_CLIENT_DEFAULT_K,
                       flags & ND_CLIENT_SYNC);
    return post_add(c, b, rc);
}

int nd_client_add_text(nd_client *c, const void *key, size_t key_len, const char *text,
                       size_t len, double score, int64_t time, unsigned flags)
{
    ncl_clear_error();
    if (!c || !key || !text)
        return ncl_fail(ND_EINVAL, "nd_client_add_text: NULL %s",
                        !c ? "client" : !key ? "key" : "text");
    int rc = ND_OK;
    json_t *b = ncl_single(&rc, key, key_len, 0, text, len, 1, score, time, ND_CLIENT_DEFAULT_K,
                       flags);
    return post_add(c, b, rc);
}

/* GET or DELETE /v1/documents/KEY. */
static int document(json_t **a, nd_client *c, const char *method, const void *key,
                    size_t key_len)
{
    *a = NULL;
    if (!key || key_len == 0 || key_len > ND_MAX_KEY_LEN)
        return ncl_fail(ND_EINVAL, "a key of %zu bytes (1..%u)", key ? key_len : 0,
                        ND_MAX_KEY_LEN);
    char *path = ncl_key_path(key, key_len);
    if (!path) return ND_ENOMEM;
    int rc = ncl_call(a, c, method, path, NULL);
    free(path);
    return rc;
}

int nd_client_get(nd_client_results *out, nd_client *c, const void *key, size_t key_len)
{
    NEED(c, out);
    json_t *a;
    nd_client_results_clear(out);
    int rc = document(&a, c, "GET", key, key_len);
    if (rc == ND_OK) rc = ncl_fail_in(ncl_add_match(out, a, NULL), "GET /v1/documents");
    json_decref(a);
    return rc;
}

int nd_client_delete(nd_client *c, const void *key, size_t key_len)
{
    ncl_clear_error();
    if (!c) return ncl_fail(ND_EINVAL, "nd_client_delete: NULL client");
    json_t *a;
    int rc = document(&a, c, "DELETE", key, key_len);
    json_decref(a);
    return rc;
}

/* POST /v1/query with body (stolen) plus k and limit. */
static int post_query(nd_client_results *out, nd_client *c, json_t *body, int rc, unsigned k,
                      size_t limit)
{
    json_t *a = NULL;
    nd_client_results_clear(out);
    if (rc == ND_OK) rc = ncl_set_k_sync(body, k, 0);
    if (rc == ND_OK && limit && json_object_set_new(body, "limit", json_integer((json_int_t)limit)))
        rc = ncl_fail(ND_ENOMEM, "out of memory");
    if (rc == ND_OK) rc = ncl_call(&a, c, "POST", "/v1/query", body);
    json_decref(body);
    if (rc < 0) return rc;
    json_t *ms = json_object_get(a, "matches"), *m;
    size_t i;
    if (!json_is_array(ms))
        rc = ncl_fail(ND_CLIENT_EPROTO, "POST /v1/query: an answer without \"matches\"");
    json_array_foreach(ms, i, m) {
        if (rc == ND_OK) rc = ncl_fail_in(ncl_add_match(out, m, NULL), "POST /v1/query");
    }
    if (rc < 0) nd_client_results_clear(out);
    json_decref(a);
    return rc;
}

int nd_client_query(nd_client_results *out, nd_client *c, uint64_t fp, unsigned k, size_t limit)
{
    NEED(c, out);
    int rc = ND_OK;
    json_t *b = ncl_doc_json(&rc, NULL, 0, fp, NULL, 0, 0, 0, 0, 0);
    return post_query(out, c, b, rc, k, limit);
}

int nd_client_query_text(nd_client_results *out, nd_client *c, const char *text, size_t len,
                         unsigned k, size_t limit, unsigned flags)
{
    NEED(c, out);
    int rc = text ? ND_OK : ncl_fail(ND_EINVAL, "nd_client_query_text: NULL text");
    json_t *b = rc ? NULL : ncl_doc_json(&rc, NULL, 0, 0, text, len, 0, 0, 0,
                                         flags & ND_CLIENT_HTML);
    return post_query(out, c, b, rc, k, limit);
}

int nd_client_stats_json(char **out, nd_client *c)
{
    ncl_clear_error();
    if (!out || !c) return ncl_fail(ND_EINVAL, "nd_client_stats_json: NULL argument");
    *out = NULL;
    json_t *a;
    int rc = ncl_call(&a, c, "GET", "/v1/stats?full=1", NULL);
    if (rc < 0) return rc;
    *out = json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(a);
    return *out ? ND_OK : ncl_fail(ND_ENOMEM, "out of memory");
}

static uint64_t u64_of(json_t *o, const char *name)
{
    json_t *v = json_object_get(o, name);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

int ncl_stats_read(nd_client_stats *out, json_t *a, const char *what)
{
    memset(out, 0, sizeof *out);
    out->shard = -1;
    if (!json_is_integer(json_object_get(a, "documents")))
        return ncl_fail(ND_CLIENT_EPROTO, "%s: an answer without \"documents\"", what);
    out->documents = u64_of(a, "documents");
    out->fingerprints = u64_of(a, "fingerprints");
    out->k = (unsigned)u64_of(a, "k");
    out->min_resemblance = json_number_value(json_object_get(a, "min_resemblance"));
    out->durable = json_is_true(json_object_get(a, "durable"));
    json_t *shard = json_object_get(a, "shard");
    if (json_is_object(shard)) { /* {"index","count","manifest","placement"} */
        json_t *i = json_object_get(shard, "index");
        const char *m = json_string_value(json_object_get(shard, "manifest"));
        out->shard = json_is_integer(i) ? (int)json_integer_value(i) : -1;
        out->shards = (int)u64_of(shard, "count");
        snprintf(out->manifest, sizeof out->manifest, "%s", m ? m : "");
    }
    return ND_OK;
}

int nd_client_stats_get(nd_client_stats *out, nd_client *c)
{
    ncl_clear_error();
    if (!out || !c) return ncl_fail(ND_EINVAL, "nd_client_stats_get: NULL argument");
    json_t *a;
    int rc = ncl_call(&a, c, "GET", "/v1/stats", NULL);
    if (rc == ND_OK) rc = ncl_stats_read(out, a, "GET /v1/stats");
    json_decref(a);
    return rc;
}

int nd_client_healthy(nd_client *c)
{
    ncl_clear_error();
    if (!c) return ncl_fail(ND_EINVAL, "nd_client_healthy: NULL client");
    json_t *a;
    int rc = ncl_call(&a, c, "GET", "/healthz", NULL);
    json_decref(a);
    return rc;
}
