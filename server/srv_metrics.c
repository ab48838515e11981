/*
 * srv_metrics.c — counters of the server, printed as Prometheus text
 * (exposition format 0.0.4): requests by endpoint and status, a latency
 * histogram per endpoint, documents added, commit groups, errors, open
 * connections. Updates are relaxed atomic adds: a counter never goes back,
 * which is all a scraper needs.
 */
#include "srv_metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ep_names[SRV_EP_COUNT] = {
    "check", "check_and_add", "add", "batch", "get", "delete",
    "query", "stats", "healthz", "metrics", "decide", "store", "other"};

/* The statuses the server answers with; anything else counts as "other". */
static const unsigned statuses[SRV_STATUS_SLOTS - 1] = {200, 400, 401, 403, 404, 405,
                                                        409, 413, 421, 429, 500, 503, 507};

/* Upper bounds of the latency buckets, seconds. */
static const double bounds[SRV_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                           0.01,   0.025,   0.05,   0.1,   0.5,    2.5};

const char *srv_endpoint_name(srv_endpoint ep)
{
    return ep < SRV_EP_COUNT ? ep_names[ep] : "other";
}

static size_t status_slot(unsigned status)
{
    for (size_t i = 0; i < SRV_STATUS_SLOTS - 1; i++)
        if (statuses[i] == status) return i;
    return SRV_STATUS_SLOTS - 1;
}

void srv_metrics_request(srv_metrics *m, srv_endpoint ep, unsigned status, double seconds)
{
    if (ep >= SRV_EP_COUNT) ep = SRV_EP_OTHER;
    atomic_fetch_add_explicit(&m->requests[ep][status_slot(status)], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < SRV_BUCKETS && seconds > bounds[b]) b++;
    atomic_fetch_add_explicit(&m->latency[ep][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->latency_us[ep], (uint64_t)(seconds * 1e6),
                              memory_order_relaxed);
    if (status >= 400) atomic_fetch_add_explicit(&m->errors, 1, memory_order_relaxed);
}

void srv_metrics_group(srv_metrics *m, size_t docs, size_t added)
{
    atomic_fetch_add_explicit(&m->groups, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->group_docs, docs, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->added, added, memory_order_relaxed);
}

/* A growing text buffer; a failed allocation makes the whole text NULL. */
typedef struct buf {
    char *p;
    size_t len, cap;
    int failed;
} buf;

static void put(buf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)n;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

static uint64_t get(_Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* A counter neardup_NAME_total with its HELP and TYPE lines. */
static void counter(buf *b, const char *name, const char *help, uint64_t value)
{
    put(b, "# HELP neardup_%s_total %s\n# TYPE neardup_%s_total counter\nneardup_%s_total %llu\n",
        name, help, name, name, (unsigned long long)value);
}

char *srv_metrics_text(srv_metrics *m, size_t *out_len)
{
    buf b = {malloc(8192), 0, 8192, 0};
    if (!b.p) return NULL;
    put(&b, "# HELP neardup_requests_total Requests answered, by endpoint and HTTP status.\n"
            "# TYPE neardup_requests_total counter\n");
    for (int e = 0; e < SRV_EP_COUNT; e++)
        for (int s = 0; s < SRV_STATUS_SLOTS; s++) {
            uint64_t v = get(&m->requests[e][s]);
            if (!v) continue;
            char st[16];
            if (s < SRV_STATUS_SLOTS - 1) snprintf(st, sizeof st, "%u", statuses[s]);
            else strcpy(st, "other");
            put(&b, "neardup_requests_total{endpoint=\"%s\",status=\"%s\"} %llu\n", ep_names[e],
                st, (unsigned long long)v);
        }
    put(&b, "# HELP neardup_request_duration_seconds Time from a request's headers to its "
            "answer.\n# TYPE neardup_request_duration_seconds histogram\n");
    for (int e = 0; e < SRV_EP_COUNT; e++) {
        uint64_t cum = 0;
        for (int i = 0; i <= SRV_BUCKETS; i++) cum += get(&m->latency[e][i]);
        if (!cum) continue;
        uint64_t run = 0;
        for (int i = 0; i < SRV_BUCKETS; i++) {
            run += get(&m->latency[e][i]);
            put(&b, "neardup_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %llu\n",
                ep_names[e], bounds[i], (unsigned long long)run);
        }
        put(&b, "neardup_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n",
            ep_names[e], (unsigned long long)cum);
        put(&b, "neardup_request_duration_seconds_sum{endpoint=\"%s\"} %.6f\n", ep_names[e],
            (double)get(&m->latency_us[e]) / 1e6);
        put(&b, "neardup_request_duration_seconds_count{endpoint=\"%s\"} %llu\n", ep_names[e],
            (unsigned long long)cum);
    }
    counter(&b, "documents_added", "Documents stored by add, check-and-add and batch.",
            get(&m->added));
    counter(&b, "commit_groups", "Shared commits of the writer.", get(&m->groups));
    counter(&b, "commit_group_documents", "Documents of those commits.", get(&m->group_docs));
    counter(&b, "errors", "Requests answered with a 4xx or 5xx status.", get(&m->errors));
    put(&b, "# HELP neardup_connections Open connections.\n# TYPE neardup_connections gauge\n"
            "neardup_connections %lld\n",
        (long long)atomic_load_explicit(&m->connections, memory_order_relaxed));
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    *out_len = b.len;
    return b.p;
}
