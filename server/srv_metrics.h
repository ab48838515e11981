/*
 * srv_metrics.h — the server's counters and their Prometheus text form.
 *
 * Every counter is an atomic: connection threads and the writer update
 * them without a lock, /metrics reads them (each value on its own; the
 * page is not one snapshot). Callers: srv_http.c (requests, latency,
 * connections), srv_writer.c (commit groups, documents added).
 */
#ifndef ND_SRV_METRICS_H
#define ND_SRV_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum srv_endpoint {
    SRV_EP_CHECK,
    SRV_EP_CHECK_ADD,
    SRV_EP_ADD,
    SRV_EP_BATCH,
    SRV_EP_GET,
    SRV_EP_DELETE,
    SRV_EP_QUERY,
    SRV_EP_STATS,
    SRV_EP_HEALTH,
    SRV_EP_METRICS,
    SRV_EP_DECIDE,
    SRV_EP_STORE,
    SRV_EP_OTHER, /* no such endpoint (404, 405) */
    SRV_EP_COUNT
} srv_endpoint;

#define SRV_STATUS_SLOTS 14 /* srv_metrics.c's status table, "other" last */
#define SRV_BUCKETS 12      /* latency buckets below +Inf */

typedef struct srv_metrics {
    _Atomic uint64_t requests[SRV_EP_COUNT][SRV_STATUS_SLOTS];
    _Atomic uint64_t latency[SRV_EP_COUNT][SRV_BUCKETS + 1]; /* not cumulative */
    _Atomic uint64_t latency_us[SRV_EP_COUNT];
    _Atomic uint64_t added, dups, groups, group_docs, errors;
    _Atomic int64_t connections;
} srv_metrics;

/** The endpoint's label ("check_and_add"). */
const char *srv_endpoint_name(srv_endpoint ep);
/** One request answered with status after seconds. */
void srv_metrics_request(srv_metrics *m, srv_endpoint ep, unsigned status, double seconds);
/** One commit group of docs documents, of which added were new. */
void srv_metrics_group(srv_metrics *m, size_t docs, size_t added);
/** The exposition text (malloc'd, NUL-terminated), or NULL (no memory). */
char *srv_metrics_text(srv_metrics *m, size_t *out_len);

#endif /* ND_SRV_METRICS_H */
