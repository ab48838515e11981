/*
 * ncl_http.c — the transport of libneardup-client: HTTP/1.1 with JSON
 * bodies over libcurl (the library's only owner of <curl/curl.h>).
 *
 * Each nd_client owns one CURL easy handle, kept for its life: libcurl
 * keeps the connection open between requests (keep-alive) and reuses it.
 * A request whose reused connection turns out to have been closed by the
 * server (its --idle-timeout) before any answer arrived is sent once more
 * on a new one, as neardup.Client does. "Expect: 100-continue" is turned
 * off: it would cost a round trip on every body over 1 KiB.
 *
 * A fleet performs requests on several clients at once through an
 * ncl_parallel, a multi handle kept for the fleet's life (a multi handle
 * owns the connection cache of the easy handles it performs, so one made
 * per call would close them all).
 *
 * Answers: 200 with a JSON object, or an error status with the server's
 * {"error":{"status","code","message"}}, mapped here to the codes of
 * neardup_client.h. The detail message of the last failure lives in a
 * thread-local buffer (ncl_fail), never allocated.
 */
#include "ncl.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nd_client {
    CURL *easy;
    char *base; /* the url without a trailing '/' */
    struct curl_slist *headers; /* Content-Type, Expect:, Authorization */
    long timeout_ms, connect_ms;
    /* the request in flight */
    const char *method;
    char *url;
    char *body;
    char *ans;
    size_t ans_len, ans_cap;
    int ans_oom;
    char errbuf[CURL_ERROR_SIZE];
};

struct ncl_parallel {
    CURLM *multi;
};

/* ---- the detail message */

static _Thread_local char msg[512];

int ncl_fail(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rc;
}

int ncl_fail_in(int rc, const char *what)
{
    if (rc >= 0) return rc;
    size_t w = strlen(what), m = strlen(msg);
    if (w + 2 >= sizeof msg) return rc;
    if (w + 2 + m >= sizeof msg) m = sizeof msg - 1 - w - 2;
    memmove(msg + w + 2, msg, m);
    memcpy(msg, what, w);
    memcpy(msg + w, ": ", 2);
    msg[w + 2 + m] = '\0';
    return rc;
}

void ncl_clear_error(void)
{
    msg[0] = '\0';
}

const char *nd_client_errmsg(void)
{
    return msg;
}

const char *nd_client_strerror(int rc)
{
    switch (rc) {
    case ND_OK: return "success";
    case ND_EINVAL: return "invalid argument";
    case ND_ENOTFOUND: return "not found";
    case ND_ECORRUPT: return "corrupt data";
    case ND_EIO: return "I/O error";
    case ND_EBUSY: return "busy";
    case ND_EVERSION: return "incompatible version";
    case ND_ENOMEM: return "out of memory";
    case ND_EEXIST: return "already exists";
    case ND_EMISMATCH: return "settings mismatch";
    case ND_ELIMIT: return "limit exceeded";
    case ND_ENOSPC: return "no space left";
    case ND_EREADONLY: return "read-only";
    case ND_EINTERNAL: return "internal error";
    case ND_ESTOPPED: return "stopped by a callback";
    case ND_CLIENT_ECONNECT: return "cannot connect";
    case ND_CLIENT_ETIMEOUT: return "timed out";
    case ND_CLIENT_EAUTH: return "not authorized";
    case ND_CLIENT_EPROTO: return "protocol error";
    default: return "unknown error";
    }
}

/* ---- opening */

int nd_client_options_init(nd_client_options *opts, unsigned version)
{
    if (!opts || version == 0 || version > ND_CLIENT_OPTIONS_VERSION)
        return ncl_fail(ND_EINVAL, "nd_client_options_init: %s",
                        opts ? "unknown options version" : "NULL options");
    *opts = (nd_client_options)ND_CLIENT_OPTIONS_INIT;
    opts->version = version;
    return ND_OK;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The first line of path, without its line end, into *out (malloc'd). */
static int read_token_file(char **out, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return ncl_fail(ND_ENOTFOUND, "token file %s cannot be read", path);
    char line[4096];
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    if (!got) line[0] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0]) return ncl_fail(ND_EINVAL, "token file %s: the first line is empty", path);
    *out = strdup(line);
    return *out ? ND_OK : ncl_fail(ND_ENOMEM, "out of memory");
}

static size_t on_data(char *data, size_t size, size_t n, void *payload)
{
    nd_client *c = payload;
    size_t len = size * n;
    if (c->ans_len + len + 1 > c->ans_cap) {
        size_t cap = c->ans_cap ? c->ans_cap : 4096;
        while (cap < c->ans_len + len + 1) cap *= 2;
        char *p = realloc(c->ans, cap);
        if (!p) {
            c->ans_oom = 1;
            return 0; /* CURLE_WRITE_ERROR */
        }
        c->ans = p;
        c->ans_cap = cap;
    }
    memcpy(c->ans + c->ans_len, data, len);
    c->ans_len += len;
    c->ans[c->ans_len] = '\0';
    return len;
}

int nd_client_open(nd_client **out, const char *url, const nd_client_options *opts)
{
    nd_client_options o = ND_CLIENT_OPTIONS_INIT;
    char *token = NULL, *auth = NULL;
    nd_client *c = NULL;
    int rc = ND_OK;
    if (!out) return ncl_fail(ND_EINVAL, "nd_client_open: NULL out");
    *out = NULL;
    if (opts) {
        if (opts->version == 0 || opts->version > ND_CLIENT_OPTIONS_VERSION)
            return ncl_fail(ND_EINVAL, "nd_client_open: unknown options version %u",
                            opts->version);
        o = *opts;
    }
    if (!url || strncmp(url, "http://", 7) != 0 || !url[7] || url[7] == '/')
        return ncl_fail(ND_EINVAL, "expected an http://HOST:PORT url, got \"%s\"",
                        url ? url : "(null)");
    if (o.token && !o.token[0]) return ncl_fail(ND_EINVAL, "nd_client_open: an empty token");
    if (o.token && strpbrk(o.token, "\r\n"))
        return ncl_fail(ND_EINVAL, "nd_client_open: a token with a line break");
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return ncl_fail(ND_ENOMEM, "curl_global_init: %s", curl_easy_strerror(global_rc));
    if (o.token) {
        token = strdup(o.token);
        if (!token) return ncl_fail(ND_ENOMEM, "out of memory");
    } else if (o.token_file) {
        rc = read_token_file(&token, o.token_file);
        if (rc < 0) return rc;
    }
    c = calloc(1, sizeof *c);
    if (!c || !(c->base = strdup(url)) || !(c->easy = curl_easy_init())) {
        rc = ncl_fail(ND_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t n = strlen(c->base); n > 7 && c->base[n - 1] == '/'; n--) c->base[n - 1] = '\0';
    c->timeout_ms = o.timeout_ms ? (long)o.timeout_ms : 30000;
    c->connect_ms = o.connect_timeout_ms ? (long)o.connect_timeout_ms : 5000;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    c->headers = h;
    if (h) h = curl_slist_append(h, "Expect:");
    if (h && token) {
        size_t n = strlen(token) + 32;
        auth = malloc(n);
        if (auth) snprintf(auth, n, "Authorization: Bearer %s", token);
        h = auth ? curl_slist_append(h, auth) : NULL;
    }
    if (!h) {
        rc = ncl_fail(ND_ENOMEM, "out of memory");
        goto cleanup;
    }
    curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
    curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM */
    curl_easy_setopt(c->easy, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c->easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c->easy, CURLOPT_TCP_KEEPALIVE, 1L);
    *out = c;
    c = NULL;
cleanup:
    if (token) memset(token, 0, strlen(token));
    free(token);
    if (auth) memset(auth, 0, strlen(auth));
    free(auth); /* curl_slist_append copied it */
    nd_client_close(c);
    return rc;
}

void nd_client_close(nd_client *c)
{
    if (!c) return;
    if (c->easy) curl_easy_cleanup(c->easy);
    curl_slist_free_all(c->headers);
    free(c->base);
    free(c->url);
    free(c->body);
    free(c->ans);
    free(c);
}

const char *ncl_client_url(const nd_client *c)
{
    return c->base;
}

char *ncl_key_path(const void *key, size_t key_len)
{
    static const char prefix[] = "/v1/documents/";
    const unsigned char *k = key;
    char *p = malloc(sizeof prefix + 3 * key_len);
    if (!p) {
        ncl_fail(ND_ENOMEM, "out of memory");
        return NULL;
    }
    char *w = p + sizeof prefix - 1;
    memcpy(p, prefix, sizeof prefix - 1);
    for (size_t i = 0; i < key_len; i++) {
        unsigned char ch = k[i];
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            *w++ = (char)ch;
        } else {
            *w++ = '%';
            *w++ = "0123456789ABCDEF"[ch >> 4];
            *w++ = "0123456789ABCDEF"[ch & 15];
        }
    }
    *w = '\0';
    return p;
}

/* ---- one request */

/* Set c's easy handle up for method path with body. */
static int prepare(nd_client *c, const char *method, const char *path, json_t *body)
{
    free(c->url);
    free(c->body);
    c->body = NULL;
    c->ans_len = 0;
    c->ans_oom = 0;
    c->errbuf[0] = '\0';
    c->method = method;
    size_t n = strlen(c->base) + strlen(path) + 1;
    c->url = malloc(n);
    if (!c->url) return ncl_fail(ND_ENOMEM, "out of memory");
    snprintf(c->url, n, "%s%s", c->base, path);
    if (body) {
        c->body = json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(17));
        if (!c->body) return ncl_fail(ND_ENOMEM, "%s %s: the body could not be encoded",
                                      method, c->url);
    }
    curl_easy_setopt(c->easy, CURLOPT_URL, c->url);
    if (c->body) {
        curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, c->body);
        curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(c->body));
    } else {
        curl_easy_setopt(c->easy, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(c->easy, CURLOPT_CUSTOMREQUEST,
                     strcmp(method, "DELETE") == 0 ? "DELETE" : NULL);
    return ND_OK;
}

/* A reused connection the server had closed: worth one more try. */
static int stale(nd_client *c, CURLcode cc)
{
    long connects = 0;
    if (cc != CURLE_SEND_ERROR && cc != CURLE_RECV_ERROR && cc != CURLE_GOT_NOTHING) return 0;
    curl_easy_getinfo(c->easy, CURLINFO_NUM_CONNECTS, &connects);
    return connects == 0;
}

static int status_code(long status)
{
    switch (status) {
    case 400: case 405: return ND_EINVAL;
    case 401: case 403: return ND_CLIENT_EAUTH;
    case 404: return ND_ENOTFOUND;
    case 413: return ND_ELIMIT;
    case 421: return ND_EMISMATCH; /* wrong_shard: a fleet misrouted */
    case 429: case 503: return ND_EBUSY;
    case 500: return ND_EIO;
    case 507: return ND_ENOSPC;
    default: return ND_CLIENT_EPROTO;
    }
}

/* The answer of c's performed request (curl result cc). */
static int finish(json_t **out, nd_client *c, CURLcode cc)
{
    *out = NULL;
    if (cc != CURLE_OK) {
        const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc);
        int rc = ND_CLIENT_ECONNECT;
        if (cc == CURLE_OPERATION_TIMEDOUT) rc = ND_CLIENT_ETIMEOUT;
        else if (cc == CURLE_OUT_OF_MEMORY || (cc == CURLE_WRITE_ERROR && c->ans_oom))
            rc = ND_ENOMEM;
        return ncl_fail(rc, "%s %s: %s", c->method, c->url, why);
    }
    long status = 0;
    curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
    json_error_t jerr;
    json_t *j = c->ans_len ? json_loadb(c->ans, c->ans_len, 0, &jerr) : NULL;
    if (status == 200) {
        if (!json_is_object(j)) {
            json_decref(j);
            return ncl_fail(ND_CLIENT_EPROTO, "%s %s: the answer is not a JSON object",
                            c->method, c->url);
        }
        *out = j;
        return ND_OK;
    }
    json_t *e = json_object_get(j, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *m = json_string_value(json_object_get(e, "message"));
    int rc = ncl_fail(status_code(status), "%s %s: %ld %s: %s", c->method, c->url, status,
                      code ? code : "error", m ? m : (c->ans_len ? c->ans : "no message"));
    json_decref(j);
    return rc;
}

int ncl_call(json_t **out, nd_client *c, const char *method, const char *path, json_t *body)
{
    *out = NULL;
    int rc = prepare(c, method, path, body);
    if (rc < 0) return rc;
    CURLcode cc = curl_easy_perform(c->easy);
    if (stale(c, cc)) {
        c->ans_len = 0;
        cc = curl_easy_perform(c->easy);
    }
    return finish(out, c, cc);
}

/* ---- several at once */

int ncl_parallel_new(ncl_parallel **out)
{
    pthread_once(&global_once, global_init);
    *out = calloc(1, sizeof **out);
    if (!*out || !((*out)->multi = curl_multi_init())) {
        free(*out);
        *out = NULL;
        return ncl_fail(ND_ENOMEM, "out of memory");
    }
    return ND_OK;
}

void ncl_parallel_free(ncl_parallel *p)
{
    if (!p) return;
    curl_multi_cleanup(p->multi);
    free(p);
}

/* Perform the easy handles of cs[i] for which want[i] at once; their
 * curl results into ccs[i]. */
static int perform(ncl_parallel *p, nd_client *const *cs, size_t n, const int *want,
                   CURLcode *ccs)
{
    int running = 0;
    for (size_t i = 0; i < n; i++) {
        if (!want[i]) continue;
        ccs[i] = CURLE_FAILED_INIT;
        if (curl_multi_add_handle(p->multi, cs[i]->easy) != CURLM_OK) {
            for (size_t j = 0; j < i; j++)
                if (want[j]) curl_multi_remove_handle(p->multi, cs[j]->easy);
            return ncl_fail(ND_ENOMEM, "curl_multi_add_handle failed");
        }
    }
    do {
        CURLMcode mc = curl_multi_perform(p->multi, &running);
        if (mc == CURLM_OK && running) mc = curl_multi_poll(p->multi, NULL, 0, 1000, NULL);
        if (mc != CURLM_OK) {
            running = 0; /* the handles not done keep CURLE_FAILED_INIT */
            break;
        }
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(p->multi, &left)))
            for (size_t i = 0; m->msg == CURLMSG_DONE && i < n; i++)
                if (want[i] && cs[i]->easy == m->easy_handle) ccs[i] = m->data.result;
    } while (running);
    for (size_t i = 0; i < n; i++)
        if (want[i]) curl_multi_remove_handle(p->multi, cs[i]->easy);
    return ND_OK;
}

int ncl_parallel_call(ncl_parallel *p, json_t **outs, nd_client *const *cs, size_t n,
                      const char *method, const char *const *paths, json_t *const *bodies)
{
    int rc = ND_OK;
    int *want = calloc(n ? n : 1, sizeof *want);
    CURLcode *ccs = calloc(n ? n : 1, sizeof *ccs);
    for (size_t i = 0; i < n; i++) outs[i] = NULL;
    if (!want || !ccs) {
        rc = ncl_fail(ND_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        if (!paths[i]) continue;
        rc = prepare(cs[i], method, paths[i], bodies ? bodies[i] : NULL);
        if (rc < 0) goto cleanup;
        want[i] = 1;
    }
    rc = perform(p, cs, n, want, ccs);
    if (rc < 0) goto cleanup;
    int again = 0, *retry = want + 0;
    for (size_t i = 0; i < n; i++) {
        if (!paths[i]) continue;
        retry[i] = stale(cs[i], ccs[i]);
        if (retry[i]) cs[i]->ans_len = 0;
        again |= retry[i];
    }
    if (again && (rc = perform(p, cs, n, retry, ccs)) < 0) goto cleanup;
    /* the first failure's message is the one kept */
    char first[sizeof msg] = "";
    for (size_t i = 0; i < n; i++) {
        if (!paths[i]) continue;
        int r = finish(&outs[i], cs[i], ccs[i]);
        if (r < 0 && rc == ND_OK) {
            rc = r;
            memcpy(first, msg, sizeof msg);
        }
    }
    if (rc < 0) memcpy(msg, first, sizeof msg);
cleanup:
    if (rc < 0)
        for (size_t i = 0; i < n; i++) {
            json_decref(outs[i]);
            outs[i] = NULL;
        }
    free(want);
    free(ccs);
    return rc;
}
