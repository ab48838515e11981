/*
 * srv_api.c — the JSON endpoints of `neardup serve` (server/openapi.yaml).
 *
 * Each handler reads one JSON object (members not in the endpoint's list
 * are refused: a misspelt "fingerprnt" is a 400, not a silent default),
 * turns its documents into nd_doc (a "text" signed here by nd_db_sign on
 * the connection's thread, so that the writer only commits), and answers
 * one JSON object. Reads call the store directly (nd_db_query_doc,
 * nd_db_get, nd_db_batch without ND_BATCH_ADD, nd_db_stats: thread-safe
 * beside the writer); check-and-add, add and batch with "add" go through
 * the writer (srv_writer.h), delete calls nd_db_delete (the library's
 * writer lock orders it with the writer's commits).
 *
 * The server's owner of <jansson.h> (input/in_jsonl.c is the tools').
 */
#include "srv_api.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srv_fleet.h"
#include "srv_json.h"

typedef srv_fail fail; /* srv_doc and srv_fail: srv_json.h */

#define FAIL(f, st, cd, ...)                                  \
    do {                                                      \
        (f)->status = (st);                                   \
        (f)->code = (cd);                                     \
        snprintf((f)->why, sizeof (f)->why, __VA_ARGS__);     \
        return -1;                                            \
    } while (0)

static void set_body(srv_reply *out, unsigned status, json_t *j)
{
    out->status = status;
    out->content_type = "application/json";
    out->body = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(j);
    if (!out->body) {
        out->status = 500;
        out->body = strdup("{\"error\":{\"status\":500,\"code\":\"internal\","
                           "\"message\":\"the answer could not be encoded\"}}");
    }
    out->len = out->body ? strlen(out->body) : 0;
}

void srv_api_error(srv_reply *out, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *m = json_string(msg);
    if (!m) m = json_string("(message not UTF-8)");
    set_body(out, status, json_pack("{s:{s:i,s:s,s:o}}", "error", "status", (int)status, "code",
                                    code, "message", m));
}

/* A library failure as an answer: the caller's input (400, 413), a
 * missing key (404), or the server's trouble (500, 503, 507). */
static void nd_fail(srv_reply *out, int rc, const char *what)
{
    unsigned st = 500;
    const char *code = "internal";
    switch (rc) {
    case ND_EINVAL: st = 400, code = "invalid"; break;
    case ND_ELIMIT: st = 413, code = "too_large"; break;
    case ND_ENOTFOUND: st = 404, code = "not_found"; break;
    case ND_EBUSY: st = 503, code = "busy"; break;
    case ND_ENOSPC: st = 507, code = "no_space"; break;
    case ND_EREADONLY: st = 503, code = "read_only"; break;
    default: break;
    }
    srv_api_error(out, st, code, "%s: %s: %s", what, nd_strerror(rc), nd_errmsg());
}

/* A key or other bytes as a JSON string; bytes that are not UTF-8 (a key
 * stored by another tool) become '?' rather than failing the answer. */
static json_t *jstr(const char *s, size_t n)
{
    json_t *j = json_stringn(s, n);
    if (j) return j;
    char *t = malloc(n + 1);
    if (!t) return NULL;
    for (size_t i = 0; i < n; i++) t[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
    j = json_stringn(t, n);
    free(t);
    return j;
}

static json_t *jhex(uint64_t fp)
{
    char h[17];
    snprintf(h, sizeof h, "%016llx", (unsigned long long)fp);
    return json_string(h);
}

/* Members of o must be among the NULL-terminated names. */
static int check_members(fail *f, json_t *o, const char *const *names, const char *where)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        int ok = 0;
        for (const char *const *n = names; *n; n++) ok |= strcmp(*n, k) == 0;
        if (!ok) FAIL(f, 400, "unknown_member", "%s: unknown member \"%s\"", where, k);
    }
    return 0;
}

static int get_bool(fail *f, json_t *o, const char *name, int *out)
{
    json_t *v = json_object_get(o, name);
    if (!v) return 0;
    if (!json_is_boolean(v)) FAIL(f, 400, "malformed", "\"%s\" must be true or false", name);
    *out = json_is_true(v);
    return 0;
}

static int get_uint(fail *f, json_t *o, const char *name, unsigned long long max,
                    unsigned long long *out)
{
    json_t *v = json_object_get(o, name);
    if (!v) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (unsigned long long)json_integer_value(v) > max)
        FAIL(f, 400, "malformed", "\"%s\" must be an integer 0..%llu", name, max);
    *out = (unsigned long long)json_integer_value(v);
    return 0;
}

static int get_k(fail *f, const srv_ctx *c, json_t *o, unsigned *k)
{
    unsigned long long v = c->k;
    if (get_uint(f, o, "k", ND_MAX_K, &v)) return -1;
    *k = (unsigned)v;
    return 0;
}

static int parse_hex16(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; s[i]; i++) {
        char ch = s[i];
        unsigned d = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                     : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                     : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10)
                                              : 16u;
        if (d > 15 || i >= 16) return -1;
        v = v << 4 | d;
    }
    if (i != 16) return -1;
    *out = v;
    return 0;
}

/* The document of object o: "key" (needed when need_key), "text" or
 * "fingerprint", "html", "score", "time". A text is signed; a resemblance
 * store needs one when need_sketch. */
static int parse_doc(fail *f, srv_doc *d, const srv_ctx *c, json_t *o, int need_key,
                     int need_sketch, const char *where)
{
    memset(d, 0, sizeof *d);
    if (!json_is_object(o)) FAIL(f, 400, "malformed", "%s: a document must be an object", where);
    json_t *key = json_object_get(o, "key");
    if (key) {
        if (!json_is_string(key) || json_string_length(key) == 0)
            FAIL(f, 400, "malformed", "%s: \"key\" must be a non-empty string", where);
        if (json_string_length(key) > ND_MAX_KEY_LEN)
            FAIL(f, 413, "too_large", "%s: \"key\" is %zu bytes (at most %u)", where,
                 json_string_length(key), ND_MAX_KEY_LEN);
        d->doc.key = json_string_value(key);
        d->doc.key_len = json_string_length(key);
    } else if (need_key) {
        FAIL(f, 400, "malformed", "%s: \"key\" is missing", where);
    }
    json_t *text = json_object_get(o, "text"), *fp = json_object_get(o, "fingerprint");
    if (!!text == !!fp)
        FAIL(f, 400, "malformed", "%s: give either \"text\" or \"fingerprint\"", where);
    int html = 0;
    if (get_bool(f, o, "html", &html)) return -1;
    if (text) {
        if (!json_is_string(text)) FAIL(f, 400, "malformed", "%s: \"text\" must be a string", where);
        int rc = nd_db_sign(&d->sig, c->db, json_string_value(text), json_string_length(text),
                            html ? ND_FP_HTML : 0);
        if (rc == ND_ELIMIT)
            FAIL(f, 413, "too_large", "%s: the text is longer than %u bytes", where,
                 ND_MAX_DOC_BYTES);
        if (rc < 0) FAIL(f, 500, "internal", "%s: signing: %s: %s", where, nd_strerror(rc), nd_errmsg());
        d->doc.fp = d->sig.fp;
        d->doc.sketch = &d->sig.sketch;
    } else {
        if (!json_is_string(fp) || parse_hex16(json_string_value(fp), &d->doc.fp))
            FAIL(f, 400, "malformed", "%s: \"fingerprint\" must be 16 hex digits", where);
        if (need_sketch && c->resemblance)
            FAIL(f, 400, "text_required",
                 "%s: this store verifies by resemblance: send \"text\", not a fingerprint", where);
    }
    json_t *score = json_object_get(o, "score"), *tm = json_object_get(o, "time");
    if (score) {
        if (!json_is_number(score)) FAIL(f, 400, "malformed", "%s: \"score\" must be a number", where);
        d->doc.score = json_number_value(score);
    }
    d->doc.time = (int64_t)time(NULL);
    if (tm) {
        if (!json_is_integer(tm)) FAIL(f, 400, "malformed", "%s: \"time\" must be an integer", where);
        d->doc.time = (int64_t)json_integer_value(tm);
    }
    return 0;
}

/* "sync": true asks for a durable acknowledgement. */
static int check_sync(fail *f, const srv_ctx *c, json_t *o)
{
    int sync = 0;
    if (get_bool(f, o, "sync", &sync)) return -1;
    if (sync && !c->durable)
        FAIL(f, 400, "sync_unavailable",
             "\"sync\": this server was started with --no-sync (acknowledgements survive a "
             "killed server, not a lost machine)");
    return 0;
}

static json_t *match_json(const nd_match *m)
{
    json_t *j = json_pack("{s:o,s:o,s:i,s:f,s:I}", "key", jstr(m->key, m->key_len),
                          "fingerprint", jhex(m->fp), "distance", (int)m->dist, "score", m->score,
                          "time", (json_int_t)m->time);
    if (j && m->resemblance >= 0) json_object_set_new(j, "resemblance", json_real(m->resemblance));
    return j;
}

static json_t *answer_json(const srv_answer *a, int with_index)
{
    if (!a->dup) return json_null();
    json_t *j = json_pack("{s:o,s:o,s:i}", "key", jstr(a->match_key, a->match_key_len),
                          "fingerprint", jhex(a->match_fp), "distance", (int)a->dist);
    if (j && with_index)
        json_object_set_new(j, "index", a->match_index < 0 ? json_null()
                                                           : json_integer(a->match_index));
    if (j && a->resemblance >= 0) json_object_set_new(j, "resemblance", json_real(a->resemblance));
    return j;
}

/* The writer's refusal or the job's failure; 0 when answered well. */
static int submit(srv_reply *out, const srv_ctx *c, srv_job *job)
{
    int s = srv_writer_submit(c->writer, job);
    if (s == 1) {
        srv_api_error(out, 429, "queue_full", "the writer's queue is full: retry later");
        return -1;
    }
    if (s == 2) {
        srv_api_error(out, 503, "shutting_down", "the server is shutting down");
        return -1;
    }
    if (job->rc < 0) {
        nd_fail(out, job->rc, "commit");
        return -1;
    }
    return 0;
}

static const char *const single_members[] = {"key", "text", "fingerprint", "html", "score",
                                             "time", "k", "sync", NULL};

/* POST /v1/check, /v1/check-and-add, /v1/add. */
static void one_doc(srv_reply *out, const srv_ctx *c, srv_endpoint ep, json_t *root)
{
    fail f = {0};
    srv_doc d;
    unsigned k = c->k;
    nd_results *res = NULL;
    if (check_members(&f, root, single_members, "request") ||
        parse_doc(&f, &d, c, root, ep != SRV_EP_CHECK, 1, "request") || get_k(&f, c, root, &k) ||
        check_sync(&f, c, root)) {
        srv_api_error(out, f.status, f.code, "%s", f.why);
        return;
    }
    if (ep != SRV_EP_CHECK && srv_fleet_refuse(out, c, d.doc.key, d.doc.key_len)) return;
    if (ep == SRV_EP_CHECK) {
        nd_query_options qo = ND_QUERY_OPTIONS_INIT;
        qo.limit = 1;
        int rc = nd_results_new(&res);
        if (rc == ND_OK) rc = nd_db_query_doc(res, c->db, &d.doc, k, &qo);
        if (rc < 0) {
            nd_fail(out, rc, "check");
        } else {
            size_t n = nd_results_count(res);
            set_body(out, 200, json_pack("{s:b,s:o}", "new", n == 0, "match",
                                         n ? match_json(nd_results_get(res, 0)) : json_null()));
        }
        nd_results_free(res);
        return;
    }
    srv_answer a = {0};
    srv_job job = {.kind = ep == SRV_EP_ADD ? SRV_JOB_ADD : SRV_JOB_CHECK_ADD,
                   .docs = &d.doc, .n = 1, .k = k, .answers = &a};
    if (submit(out, c, &job)) return;
    if (ep == SRV_EP_ADD) {
        set_body(out, 200, json_pack("{s:b}", "stored", 1));
        return;
    }
    json_t *match = answer_json(&a, 0);
    /* The match's score and time, read here rather than by the writer
     * (a point read on this connection's thread; gone meanwhile: left out). */
    if (a.dup && match && nd_results_new(&res) == ND_OK &&
        nd_db_get(res, c->db, a.match_key, a.match_key_len) == ND_OK) {
        const nd_match *m = nd_results_get(res, 0);
        json_object_set_new(match, "score", json_real(m->score));
        json_object_set_new(match, "time", json_integer((json_int_t)m->time));
    }
    nd_results_free(res);
    set_body(out, 200, json_pack("{s:b,s:b,s:o}", "new", !a.dup, "stored",
                                 !a.dup || c->resemblance, "match", match));
    srv_answers_dispose(&a, 1);
}

/* POST /v1/batch: {"documents":[...],"add":bool,"k":K,"sync":bool}. */
static void batch(srv_reply *out, const srv_ctx *c, json_t *root, srv_auth auth)
{
    static const char *const members[] = {"documents", "add", "k", "sync", "stored_only", NULL};
    static const char *const doc_members[] = {"key", "text", "fingerprint", "html", "score",
                                              "time", NULL};
    fail f = {0};
    int add = 0, stored_only = 0;
    unsigned k = c->k;
    if (check_members(&f, root, members, "request") || get_bool(&f, root, "add", &add) ||
        get_k(&f, c, root, &k) || check_sync(&f, c, root) ||
        get_bool(&f, root, "stored_only", &stored_only)) {
        srv_api_error(out, f.status, f.code, "%s", f.why);
        return;
    }
    if (add && stored_only) {
        srv_api_error(out, 400, "malformed", "\"stored_only\" checks, it does not store: not with \"add\"");
        return;
    }
    if (add && auth != SRV_AUTH_OK) {
        srv_api_error(out, auth == SRV_AUTH_MISSING ? 401 : 403,
                      auth == SRV_AUTH_MISSING ? "unauthorized" : "forbidden",
                      auth == SRV_AUTH_MISSING ? "a bearer token is required for writes"
                                               : "the bearer token is wrong");
        return;
    }
    json_t *docs = json_object_get(root, "documents");
    if (!json_is_array(docs)) {
        srv_api_error(out, 400, "malformed", "\"documents\" must be an array");
        return;
    }
    size_t n = json_array_size(docs);
    if (n > c->max_batch) {
        srv_api_error(out, 413, "too_many_documents", "%zu documents in one batch (at most %zu)",
                      n, c->max_batch);
        return;
    }
    srv_doc *d = calloc(n ? n : 1, sizeof *d);
    nd_doc *nd = calloc(n ? n : 1, sizeof *nd);
    srv_answer *ans = calloc(n ? n : 1, sizeof *ans);
    nd_batch_item *items = calloc(n ? n : 1, sizeof *items);
    nd_results *keys = NULL;
    json_t *results = NULL;
    size_t fresh = 0;
    if (!d || !nd || !ans || !items || nd_results_new(&keys) < 0) {
        srv_api_error(out, 503, "no_memory", "out of memory for %zu documents", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        char where[48];
        snprintf(where, sizeof where, "documents[%zu]", i);
        json_t *o = json_array_get(docs, i);
        if ((json_is_object(o) && check_members(&f, o, doc_members, where)) ||
            parse_doc(&f, &d[i], c, o, 1, 1, where)) {
            srv_api_error(out, f.status, f.code, "%s", f.why);
            goto done;
        }
        nd[i] = d[i].doc;
        if (add && srv_fleet_refuse(out, c, nd[i].key, nd[i].key_len)) goto done;
    }
    if (stored_only) {
        srv_fleet_stored(out, c, nd, n, k);
        goto done;
    }
    if (add) {
        srv_job job = {.kind = SRV_JOB_CHECK_ADD, .docs = nd, .n = n, .k = k, .answers = ans};
        if (n && submit(out, c, &job)) goto done;
    } else if (n) {
        int rc = nd_db_batch(items, keys, c->db, nd, n, k, 0);
        if (rc < 0) {
            nd_fail(out, rc, "batch");
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            ans[i] = (srv_answer){items[i].dup, items[i].dist, items[i].match_fp,
                                  items[i].match_index == ND_BATCH_STORED
                                      ? -1 : (long)items[i].match_index,
                                  items[i].resemblance, NULL, 0};
            if (items[i].dup) {
                /* borrowed, not freed: ans[i].match_key of a check stays NULL below */
                ans[i].match_key = (char *)items[i].match_key;
                ans[i].match_key_len = items[i].match_key_len;
            }
        }
    }
    results = json_array();
    for (size_t i = 0; results && i < n; i++) {
        fresh += !ans[i].dup;
        json_array_append_new(results, answer_json(&ans[i], 1));
    }
    set_body(out, 200, json_pack("{s:o,s:I}", "results", results, "new", (json_int_t)fresh));
done:
    if (add) srv_answers_dispose(ans, n);
    free(ans);
    free(items);
    nd_results_free(keys);
    free(nd);
    free(d);
}

/* POST /v1/query: {"fingerprint"|"text","html","k","limit"}. */
static void query(srv_reply *out, const srv_ctx *c, json_t *root)
{
    static const char *const members[] = {"text", "fingerprint", "html", "k", "limit", NULL};
    fail f = {0};
    srv_doc d;
    unsigned k = c->k;
    unsigned long long limit = 0;
    if (check_members(&f, root, members, "request") || parse_doc(&f, &d, c, root, 0, 0, "request") ||
        get_k(&f, c, root, &k) || get_uint(&f, root, "limit", 1000000000, &limit)) {
        srv_api_error(out, f.status, f.code, "%s", f.why);
        return;
    }
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.limit = (size_t)limit;
    nd_results *res = NULL;
    int rc = nd_results_new(&res);
    if (rc == ND_OK)
        rc = d.doc.sketch ? nd_db_query_doc(res, c->db, &d.doc, k, &qo)
                          : nd_db_query(res, c->db, d.doc.fp, k, &qo);
    if (rc < 0) {
        nd_fail(out, rc, "query");
    } else {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < nd_results_count(res); i++)
            json_array_append_new(arr, match_json(nd_results_get(res, i)));
        set_body(out, 200, json_pack("{s:o}", "matches", arr));
    }
    nd_results_free(res);
}

static void get_doc(srv_reply *out, const srv_ctx *c, const char *key)
{
    if (srv_fleet_refuse(out, c, key, strlen(key))) return;
    nd_results *res = NULL;
    int rc = nd_results_new(&res);
    if (rc == ND_OK) rc = nd_db_get(res, c->db, key, strlen(key));
    if (rc == ND_ENOTFOUND) {
        srv_api_error(out, 404, "not_found", "no document has this key");
    } else if (rc < 0) {
        nd_fail(out, rc, "get");
    } else {
        const nd_match *m = nd_results_get(res, 0);
        set_body(out, 200, json_pack("{s:o,s:o,s:f,s:I}", "key", jstr(m->key, m->key_len),
                                     "fingerprint", jhex(m->fp), "score", m->score, "time",
                                     (json_int_t)m->time));
    }
    nd_results_free(res);
}

static void delete_doc(srv_reply *out, const srv_ctx *c, const char *key)
{
    if (srv_fleet_refuse(out, c, key, strlen(key))) return;
    int rc = nd_db_delete(c->db, key, strlen(key));
    if (rc == ND_ENOTFOUND) srv_api_error(out, 404, "not_found", "no document has this key");
    else if (rc < 0) nd_fail(out, rc, "delete");
    else set_body(out, 200, json_pack("{s:b}", "deleted", 1));
}

/* GET /v1/stats: the counters by default (nd_db_counts, no table read);
 * with ?full=1 also nd_db_stats' figures, which read every table. */
static void stats(srv_reply *out, const srv_ctx *c, int full)
{
    uint64_t docs = 0, fps = 0;
    int rc = nd_db_counts(&docs, &fps, c->db);
    json_t *j = rc < 0 ? NULL
                       : json_pack("{s:I,s:I,s:f,s:i,s:b}", "documents", (json_int_t)docs,
                                   "fingerprints", (json_int_t)fps, "min_resemblance",
                                   nd_db_min_resemblance(c->db), "k", (int)c->k, "durable",
                                   c->durable);
    nd_stats st;
    if (rc == ND_OK && full) rc = nd_db_stats(&st, c->db);
    if (rc < 0) {
        json_decref(j);
        nd_fail(out, rc, "stats");
        return;
    }
    if (j && full) {
        json_t *tables = json_array();
        for (unsigned i = 0; tables && i < st.tables; i++)
            json_array_append_new(tables,
                json_pack("{s:i,s:I,s:I,s:I,s:I,s:f}", "prefix_bits", (int)st.table[i].prefix_bits,
                          "entries", (json_int_t)st.table[i].entries, "runs",
                          (json_int_t)st.table[i].runs, "fresh", (json_int_t)st.table[i].fresh,
                          "bytes", (json_int_t)st.table[i].bytes, "bits_per_entry",
                          st.table[i].bits_per_entry));
        json_object_set_new(j, "documents", json_integer((json_int_t)st.documents));
        json_object_set_new(j, "fingerprints", json_integer((json_int_t)st.fingerprints));
        json_object_set_new(j, "disk_bytes", json_integer((json_int_t)st.disk_bytes));
        json_object_set_new(j, "tables", tables);
        json_object_set_new(j, "sketches", json_integer((json_int_t)st.sketches));
        json_object_set_new(j, "band_keys", json_integer((json_int_t)st.band_keys));
    }
    if (j) srv_fleet_describe(j, c, 0);
    set_body(out, 200, j);
}

int srv_api_writes(srv_endpoint ep)
{
    return ep == SRV_EP_CHECK_ADD || ep == SRV_EP_ADD || ep == SRV_EP_DELETE || ep == SRV_EP_STORE;
}

srv_endpoint srv_api_route(const char *method, const char *url, const char **key,
                           unsigned *status)
{
    static const struct {
        const char *path, *method;
        srv_endpoint ep;
    } routes[] = {
        {"/v1/check", "POST", SRV_EP_CHECK},     {"/v1/check-and-add", "POST", SRV_EP_CHECK_ADD},
        {"/v1/add", "POST", SRV_EP_ADD},         {"/v1/batch", "POST", SRV_EP_BATCH},
        {"/v1/query", "POST", SRV_EP_QUERY},     {"/v1/stats", "GET", SRV_EP_STATS},
        {"/healthz", "GET", SRV_EP_HEALTH},      {"/metrics", "GET", SRV_EP_METRICS},
        {"/v1/decide", "POST", SRV_EP_DECIDE},   {"/v1/store", "POST", SRV_EP_STORE},
    };
    static const char docs[] = "/v1/documents/";
    *key = NULL;
    *status = 404;
    if (strncmp(url, docs, sizeof docs - 1) == 0 && url[sizeof docs - 1]) {
        *key = url + sizeof docs - 1;
        if (strcmp(method, "GET") == 0) return SRV_EP_GET;
        if (strcmp(method, "DELETE") == 0) return SRV_EP_DELETE;
        *status = 405;
        return SRV_EP_OTHER;
    }
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(url, routes[i].path) != 0) continue;
        if (strcmp(method, routes[i].method) == 0) return routes[i].ep;
        *status = 405;
        return SRV_EP_OTHER;
    }
    return SRV_EP_OTHER;
}

void srv_api_handle(srv_reply *out, const srv_ctx *c, srv_endpoint ep, const char *key,
                    const char *body, size_t len, srv_auth auth)
{
    memset(out, 0, sizeof *out);
    if (srv_api_writes(ep) && auth != SRV_AUTH_OK) {
        if (auth == SRV_AUTH_MISSING)
            srv_api_error(out, 401, "unauthorized", "a bearer token is required for writes");
        else srv_api_error(out, 403, "forbidden", "the bearer token is wrong");
        return;
    }
    switch (ep) {
    case SRV_EP_GET: get_doc(out, c, key); return;
    case SRV_EP_DELETE: delete_doc(out, c, key); return;
    case SRV_EP_STATS: stats(out, c, key && strcmp(key, "full") == 0); return;
    case SRV_EP_HEALTH: {
        json_t *j = json_pack("{s:s}", "status", "ok");
        if (j) srv_fleet_describe(j, c, 1);
        set_body(out, 200, j);
        return;
    }
    case SRV_EP_CHECK: case SRV_EP_CHECK_ADD: case SRV_EP_ADD: case SRV_EP_BATCH:
    case SRV_EP_QUERY: case SRV_EP_DECIDE: case SRV_EP_STORE: break;
    default: srv_api_error(out, 404, "not_found", "no such endpoint"); return;
    }
    json_error_t err;
    json_t *root = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &err) : NULL;
    if (!root) {
        srv_api_error(out, 400, "malformed", "the body is not JSON: %s",
                      len ? err.text : "it is empty");
        return;
    }
    if (!json_is_object(root)) srv_api_error(out, 400, "malformed", "the body must be a JSON object");
    else if (ep == SRV_EP_BATCH) batch(out, c, root, auth);
    else if (ep == SRV_EP_QUERY) query(out, c, root);
    else if (ep == SRV_EP_DECIDE) srv_fleet_decide(out, c, root);
    else if (ep == SRV_EP_STORE) srv_fleet_store(out, c, root);
    else one_doc(out, c, ep, root);
    json_decref(root);
}

/* ---- shared with srv_fleet.c (srv_json.h) ---- */

int srv_json_doc(srv_fail *f, srv_doc *d, const srv_ctx *c, json_t *o, int need_key,
                 int need_sketch, const char *where)
{
    return parse_doc(f, d, c, o, need_key, need_sketch, where);
}

int srv_json_members(srv_fail *f, json_t *o, const char *const *names, const char *where)
{
    return check_members(f, o, names, where);
}

int srv_json_bool(srv_fail *f, json_t *o, const char *name, int *out)
{
    return get_bool(f, o, name, out);
}

int srv_json_k(srv_fail *f, const srv_ctx *c, json_t *o, unsigned *k) { return get_k(f, c, o, k); }
int srv_json_sync(srv_fail *f, const srv_ctx *c, json_t *o) { return check_sync(f, c, o); }
int srv_json_hex16(const char *s, uint64_t *out) { return parse_hex16(s, out); }
json_t *srv_json_key(const char *s, size_t n) { return jstr(s, n); }
json_t *srv_json_fp(uint64_t fp) { return jhex(fp); }
json_t *srv_json_answer(const srv_answer *a, int with_index) { return answer_json(a, with_index); }
void srv_json_reply(srv_reply *out, unsigned status, json_t *j) { set_body(out, status, j); }
void srv_json_nd_fail(srv_reply *out, int rc, const char *what) { nd_fail(out, rc, what); }
int srv_json_submit(srv_reply *out, const srv_ctx *c, srv_job *job) { return submit(out, c, job); }
