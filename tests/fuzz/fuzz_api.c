/*
 * fuzz_api.c — libFuzzer target for the endpoints of `neardup serve`
 * (server/srv_api.h): any method, path, body and token verdict is routed
 * (srv_api_route) and answered (srv_api_handle) as srv_http.c would,
 * against small stores opened once — a fingerprint-only one and a
 * resemblance one, each with a writer thread as srv_start starts it, so
 * writes really go through the group commit. Every answer must be a
 * status of the documented set (docs/server.md: 200, 400, 401, 403, 404,
 * 405, 413, 429, 503; a 500 or 507 would be the store failing, which
 * these stores never do, so it is a finding too) with a JSON object body,
 * {"error":{"status","code","message"}} for any status but 200; never a
 * crash, a leak or a sanitizer report.
 *
 * Input: one byte of flags (bits 0-1: the token verdict, 3 = ok; bit 2:
 * the resemblance store; bit 3: a server without ND_DB_SYNC, where
 * "sync": true costs an nd_db_sync), then the method up to '\n', the
 * (decoded) path up to '\n', and the body. A NUL ends the method or the
 * path as it would end libmicrohttpd's C strings. Seeds: one valid
 * request per endpoint (corpus/api/).
 *
 * The stores live in /dev/shm when there is one (fsync is free there)
 * and are closed and removed at exit.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <neardup.h>

#include "srv_api.h"
#include "srv_metrics.h"
#include "srv_writer.h"

static char dir[64];
static srv_ctx ctx[2]; /* fingerprint-only, resemblance */
static srv_metrics metrics;

static void teardown(void)
{
    for (int i = 0; i < 2; i++) {
        srv_writer_free(ctx[i].writer);
        nd_db_close(ctx[i].db);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "fuzz_api: could not remove %s\n", dir);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s/fuzz_api.XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(dir)) abort();
    static const char *const texts[] = {
        "Rain is expected over the northern hills on Tuesday, with snow above eight hundred "
        "metres. Strong winds will blow along the coast until the evening.",
        "one page about trains and timetables in the valley, and the buses that meet them",
    };
    for (int i = 0; i < 2; i++) {
        char path[96];
        snprintf(path, sizeof path, "%s/%s.nd", dir, i ? "similar" : "fp");
        nd_db_options o = ND_DB_OPTIONS_INIT;
        o.flags = ND_DB_CREATE | (i ? 0u : ND_DB_FINGERPRINT_ONLY);
        o.expected_docs = 10000;
        nd_db *db;
        if (nd_db_open(&db, path, &o) != ND_OK) abort();
        for (int t = 0; t < 2; t++) {
            nd_signature sig;
            if (nd_db_sign(&sig, db, texts[t], strlen(texts[t]), 0) != ND_OK) abort();
            nd_doc d = {.key = t ? "b" : "a", .key_len = 1, .fp = sig.fp, .sketch = &sig.sketch};
            if (nd_db_add_many(db, &d, 1) != ND_OK) abort();
        }
        nd_plan_info p;
        nd_db_plan(&p, db);
        ctx[i] = (srv_ctx){db, NULL, p.k, nd_db_min_resemblance(db) > 0, 64, 1};
        if (srv_writer_new(&ctx[i].writer, db, &metrics, 4096, 64 * 16) != ND_OK) abort();
    }
    atexit(teardown);
}

/* The next '\n'-ended field of [*p, end), NUL-terminated into out. */
static void field(const uint8_t **p, const uint8_t *end, char *out, size_t cap)
{
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    size_t n = (size_t)((nl ? nl : end) - *p);
    size_t m = n < cap - 1 ? n : cap - 1;
    memcpy(out, *p, m);
    out[m] = '\0'; /* a NUL inside ends it earlier, as in a C string */
    *p += n + (nl != NULL);
}

static int documented(unsigned status)
{
    static const unsigned ok[] = {200, 400, 401, 403, 404, 405, 413, 429, 503};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (status == ok[i]) return 1;
    return 0;
}

static void check_reply(const srv_reply *r)
{
    if (!documented(r->status)) {
        fprintf(stderr, "status %u: %.*s\n", r->status, (int)r->len, r->body ? r->body : "");
        abort();
    }
    if (!r->body || r->len != strlen(r->body)) abort();
    if (!r->content_type || strcmp(r->content_type, "application/json") != 0) abort();
    json_error_t e;
    json_t *j = json_loadb(r->body, r->len, JSON_REJECT_DUPLICATES, &e);
    if (!json_is_object(j)) {
        fprintf(stderr, "not a JSON object (%s): %.*s\n", e.text, (int)r->len, r->body);
        abort();
    }
    json_t *err = json_object_get(j, "error");
    if (r->status == 200) {
        if (err) abort();
    } else {
        json_t *st = json_object_get(err, "status");
        if (!json_is_integer(st) || json_integer_value(st) != (json_int_t)r->status ||
            !json_is_string(json_object_get(err, "code")) ||
            !json_is_string(json_object_get(err, "message")))
            abort();
    }
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx[0].db) setup();
    if (size < 1) return 0;
    const uint8_t *p = data + 1, *end = data + size;
    unsigned flags = data[0];
    char method[16], url[4200];
    field(&p, end, method, sizeof method);
    field(&p, end, url, sizeof url);
    /* the body in a buffer of its own size: ASan sees a read past it */
    size_t len = (size_t)(end - p);
    char *body = len ? malloc(len) : NULL;
    if (len && !body) return 0;
    if (len) memcpy(body, p, len);
    static const srv_auth auths[] = {SRV_AUTH_OK, SRV_AUTH_MISSING, SRV_AUTH_WRONG, SRV_AUTH_OK};
    srv_ctx c = ctx[(flags >> 2) & 1];
    c.durable = !(flags & 8);

    const char *key;
    unsigned status;
    srv_reply rep = {0};
    srv_endpoint ep = srv_api_route(method, url, &key, &status);
    if (ep == SRV_EP_OTHER) { /* answered by srv_http.c, as here */
        if (status != 404 && status != 405) abort();
        if (status == 405) srv_api_error(&rep, 405, "method_not_allowed", "%s %s: wrong method", method, url);
        else srv_api_error(&rep, 404, "not_found", "no such endpoint: %s", url);
    } else if (ep == SRV_EP_METRICS) {
        size_t n;
        char *text = srv_metrics_text(&metrics, &n);
        if (!text || n != strlen(text)) abort();
        free(text);
        free(body);
        return 0;
    } else {
        if ((ep == SRV_EP_GET || ep == SRV_EP_DELETE) != (key != NULL) || (key && !*key)) abort();
        srv_api_handle(&rep, &c, ep, key, body, len, auths[flags & 3]);
    }
    check_reply(&rep);
    free(rep.body);
    free(body);
    return 0;
}
