/*
 * ncl_batch.c — nd_client_batch: many documents in one POST /v1/batch,
 * checked by the server as nd_db_batch does, the answer's "results" (one
 * per document: null or a match with its "index") read into the caller's
 * nd_batch_item array and the matches' keys into a results list.
 */
#include "ncl.h"

#include <stdio.h>
#include <string.h>

json_t *ncl_batch_documents(int *rc, const nd_client_doc *docs, size_t n)
{
    json_t *arr = json_array();
    if (!arr) *rc = ncl_fail(ND_ENOMEM, "out of memory");
    for (size_t i = 0; arr && i < n; i++) {
        const nd_client_doc *d = &docs[i];
        json_t *o = NULL;
        if (!d->key || d->key_len == 0 || (!d->text && d->text_len))
            *rc = ncl_fail(ND_EINVAL, "documents[%zu]: %s", i,
                           d->key && d->key_len ? "a NULL text with a length" : "no key");
        else
            o = ncl_doc_json(rc, d->key, d->key_len, d->fp, d->text, d->text_len, 1, d->score,
                             d->time, d->flags & ND_CLIENT_HTML);
        if (o && json_array_append_new(arr, o) != 0) *rc = ncl_fail(ND_ENOMEM, "out of memory");
        if (*rc < 0) {
            char what[32];
            snprintf(what, sizeof what, "documents[%zu]", i);
            if (!strstr(nd_client_errmsg(), "documents[")) ncl_fail_in(*rc, what);
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

/* Answer a's results into out (n items) and keys. */
int ncl_batch_read(nd_batch_item *out, nd_client_results *keys, json_t *a, size_t n,
                   const char *what)
{
    json_t *rs = json_object_get(a, "results"), *r;
    if (!json_is_array(rs) || json_array_size(rs) != n)
        return ncl_fail(ND_CLIENT_EPROTO, "%s: \"results\" is not an array of %zu answers",
                        what, n);
    size_t i;
    int rc = ND_OK;
    json_array_foreach(rs, i, r) {
        out[i] = (nd_batch_item){.resemblance = -1}; /* as nd_db_batch leaves it */
        if (json_is_null(r)) continue;
        size_t index;
        rc = ncl_fail_in(ncl_add_match(keys, r, &index), what);
        if (rc < 0) return rc;
        const nd_match *m = nd_client_results_get(keys, nd_client_results_count(keys) - 1);
        if (index != ND_BATCH_STORED && index >= i)
            return ncl_fail(ND_CLIENT_EPROTO, "%s: results[%zu] matches a later document", what,
                            i);
        out[i] = (nd_batch_item){1, m->dist, m->fp, index, m->key, m->key_len, m->resemblance};
    }
    return rc;
}

int nd_client_batch(nd_batch_item *out, nd_client_results *keys, nd_client *c,
                    const nd_client_doc *docs, size_t n, unsigned k, unsigned flags)
{
    ncl_clear_error();
    if (!c || !keys || (n && (!out || !docs)))
        return ncl_fail(ND_EINVAL, "nd_client_batch: NULL argument");
    if (flags & ~(ND_BATCH_ADD | ND_CLIENT_SYNC))
        return ncl_fail(ND_EINVAL, "nd_client_batch: unknown flags 0x%x", flags);
    nd_client_results_clear(keys);
    int rc = ND_OK;
    json_t *a = NULL, *body = json_object();
    json_t *arr = body ? ncl_batch_documents(&rc, docs, n) : NULL;
    if (!body) rc = ncl_fail(ND_ENOMEM, "out of memory");
    if (rc == ND_OK && (json_object_set_new(body, "documents", arr) != 0 ||
                        json_object_set_new(body, "add", json_boolean(flags & ND_BATCH_ADD))))
        rc = ncl_fail(ND_ENOMEM, "out of memory");
    if (rc == ND_OK) rc = ncl_set_k_sync(body, k, flags);
    if (rc == ND_OK) rc = ncl_call(&a, c, "POST", "/v1/batch", body);
    if (rc == ND_OK) rc = ncl_batch_read(out, keys, a, n, "POST /v1/batch");
    if (rc < 0) nd_client_results_clear(keys);
    json_decref(a);
    json_decref(body);
    return rc;
}
