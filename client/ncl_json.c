/*
 * ncl_json.c — the protocol's JSON (server/openapi.yaml) on the client's
 * side: a document as a request's object, an answer's match as an
 * nd_match. Keys and texts must be UTF-8 (JSON strings): bytes that are
 * not are refused here with ND_EINVAL rather than sent mangled.
 * Fingerprints travel as 16 hex digits.
 */
#include "ncl.h"

#include <stdio.h>
#include <string.h>

json_t *ncl_jstr(int *rc, const char *what, const void *s, size_t n)
{
    json_t *j = json_stringn(s ? s : "", n);
    if (!j) *rc = ncl_fail(ND_EINVAL, "%s is not UTF-8 (or out of memory)", what);
    return j;
}

json_t *ncl_jhex(uint64_t fp)
{
    char h[17];
    snprintf(h, sizeof h, "%016llx", (unsigned long long)fp);
    return json_string(h);
}

int ncl_parse_hex(uint64_t *out, const char *s)
{
    uint64_t v = 0;
    if (!s || strlen(s) != 16) return -1;
    for (int i = 0; i < 16; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15) return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

/* o[name] = v (stolen); ENOMEM when either failed. */
static int set(json_t *o, const char *name, json_t *v)
{
    if (!v || json_object_set_new(o, name, v) != 0)
        return ncl_fail(ND_ENOMEM, "out of memory");
    return ND_OK;
}

json_t *ncl_doc_json(int *rc, const void *key, size_t key_len, uint64_t fp, const char *text,
                     size_t len, int with_meta, double score, int64_t time, unsigned flags)
{
    json_t *o = json_object();
    *rc = o ? ND_OK : ncl_fail(ND_ENOMEM, "out of memory");
    if (*rc == ND_OK && key) {
        if (key_len == 0 || key_len > ND_MAX_KEY_LEN)
            *rc = ncl_fail(ND_EINVAL, "a key of %zu bytes (1..%u)", key_len, ND_MAX_KEY_LEN);
        else {
            json_t *k = ncl_jstr(rc, "the key", key, key_len);
            if (k) *rc = set(o, "key", k);
        }
    }
    if (*rc == ND_OK && text) {
        json_t *t = ncl_jstr(rc, "the text", text, len);
        if (t) *rc = set(o, "text", t);
        if (*rc == ND_OK && (flags & ND_CLIENT_HTML)) *rc = set(o, "html", json_true());
    } else if (*rc == ND_OK) {
        *rc = set(o, "fingerprint", ncl_jhex(fp));
    }
    if (*rc == ND_OK && with_meta) *rc = set(o, "score", json_real(score));
    if (*rc == ND_OK && with_meta) *rc = set(o, "time", json_integer((json_int_t)time));
    if (*rc < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int ncl_set_k_sync(json_t *o, unsigned k, unsigned flags)
{
    if (k != ND_CLIENT_DEFAULT_K) {
        if (k > ND_MAX_K) return ncl_fail(ND_EINVAL, "k = %u (at most %u)", k, ND_MAX_K);
        int rc = set(o, "k", json_integer(k));
        if (rc < 0) return rc;
    }
    if (flags & ND_CLIENT_SYNC) return set(o, "sync", json_true());
    return ND_OK;
}

int ncl_match_view(nd_match *out, size_t *index_out, json_t *m)
{
    nd_match r = {0};
    json_t *key = json_object_get(m, "key");
    json_t *dist = json_object_get(m, "distance");
    json_t *score = json_object_get(m, "score");
    json_t *time = json_object_get(m, "time");
    json_t *res = json_object_get(m, "resemblance");
    json_t *index = json_object_get(m, "index");
    if (!json_is_object(m) || !json_is_string(key) ||
        ncl_parse_hex(&r.fp, json_string_value(json_object_get(m, "fingerprint"))) < 0 ||
        (dist && (!json_is_integer(dist) || json_integer_value(dist) < 0 ||
                  json_integer_value(dist) > 64)))
        return -1;
    r.key = json_string_value(key);
    r.key_len = json_string_length(key);
    r.dist = dist ? (unsigned)json_integer_value(dist) : 0;
    r.score = json_is_number(score) ? json_number_value(score) : 0.0;
    r.time = json_is_integer(time) ? (int64_t)json_integer_value(time) : 0;
    r.resemblance = json_is_number(res) ? json_number_value(res) : -1.0;
    if (index_out)
        *index_out = json_is_integer(index) && json_integer_value(index) >= 0
                   ? (size_t)json_integer_value(index) : ND_BATCH_STORED;
    *out = r;
    return 0;
}

int ncl_better(const nd_match *a, const nd_match *b, int resemblance)
{
    if (resemblance && a->resemblance != b->resemblance) return a->resemblance > b->resemblance;
    return ncl_match_order(a, b) < 0;
}

int ncl_add_match(nd_client_results *out, json_t *m, size_t *index_out)
{
    nd_match r;
    if (ncl_match_view(&r, index_out, m) < 0)
        return ncl_fail(ND_CLIENT_EPROTO, "a match without its key, fingerprint or distance");
    return ncl_results_push(out, &r);
}
