/*
 * srv_http.c — the HTTP side of `neardup serve`, on libmicrohttpd (the
 * only includer of <microhttpd.h>): the listening socket, one thread per
 * connection, the limits, the bearer token, the drain on stop.
 *
 * Why libmicrohttpd, HTTP/1.1 and JSON: docs/ARCHITECTURE.md ("The
 * server"). We parse no HTTP ourselves: the daemon hands us the method,
 * the decoded path, the headers and the body in pieces.
 *
 * Limits, each a status and a JSON error (srv_api_error):
 *  - a body over max_body: 413, told by Content-Length before the body is
 *    read (the daemon then closes the connection), or once the pieces
 *    pass it (the rest is read and dropped);
 *  - connections: the daemon accepts max_connections + SPARE_CONNECTIONS;
 *    a request on one beyond max_connections is answered 503 and its
 *    connection closed, so a client learns why instead of seeing a reset
 *    (beyond the spares the daemon refuses the connection);
 *  - idle time: the daemon closes a connection idle for idle_timeout
 *    seconds (between requests there is no one to answer);
 *  - documents per batch: srv_api.c (413).
 * Threads: the daemon's connection threads call on_request; reads run
 * there, writes wait for the writer (srv_writer.c). A thread per
 * connection (not a pool of polling threads) is what lets a request
 * block on the writer without stalling other connections.
 *
 * Stop (srv_stop): the listening socket is closed (quiesce), requests
 * that start afterwards are answered 503 "shutting_down", the requests in
 * flight (counted from their first call to their completion) are waited
 * for, then the daemon stops (closing idle connections) and the writer
 * commits what it holds. Every request acknowledged was committed.
 */
#include "srv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "srv_api.h"
#include "srv_fleet.h"
#include "srv_metrics.h"
#include "srv_writer.h"

#define SPARE_CONNECTIONS 16u

struct srv {
    struct MHD_Daemon *d;
    int fd;
    unsigned port;
    srv_ctx ctx;
    srv_metrics metrics;
    char *token;
    size_t token_len, max_body;
    unsigned max_connections;
    _Atomic int draining;
    _Atomic long inflight;
    _Atomic unsigned long conn_seq;
};

/* One request: its endpoint, its body so far, its start. */
typedef struct srv_request {
    double t0;
    size_t len, cap;
    char *body;
    int too_large;
} srv_request;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Constant-time comparison of the presented token with ours. */
static srv_auth check_token(const srv *s, struct MHD_Connection *conn)
{
    if (!s->token) return SRV_AUTH_OK;
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (!h || strncmp(h, "Bearer ", 7) != 0) return SRV_AUTH_MISSING;
    h += 7;
    size_t n = strlen(h);
    unsigned char diff = n != s->token_len;
    for (size_t i = 0; i < s->token_len; i++) diff |= (unsigned char)(s->token[i] ^ (i < n ? h[i] : 0));
    return diff ? SRV_AUTH_WRONG : SRV_AUTH_OK;
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, srv_reply *rep, int close)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(rep->len, rep->body,
                                                             MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(rep->body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", rep->content_type ? rep->content_type
                                                                 : "application/json");
    if (rep->status == 401) MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    if (close) MHD_add_response_header(r, "Connection", "close");
    enum MHD_Result ok = MHD_queue_response(conn, rep->status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result answer(srv *s, struct MHD_Connection *conn, srv_request *rq,
                              srv_endpoint ep, srv_reply *rep, int close)
{
    srv_metrics_request(&s->metrics, ep, rep->status, now() - rq->t0);
    return send_reply(conn, rep, close);
}

/* A connection's number in arrival order, kept in its socket context. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    srv *s = cls;
    (void)conn;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        long open = atomic_fetch_add(&s->metrics.connections, 1) + 1;
        *socket_ctx = (void *)(open > (long)s->max_connections ? (uintptr_t)1 : (uintptr_t)0);
    } else {
        atomic_fetch_sub(&s->metrics.connections, 1);
    }
}

static int over_limit(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci && ci->socket_context == (void *)(uintptr_t)1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    srv *s = cls;
    srv_request *rq = *con_cls;
    srv_reply rep = {0};
    (void)version;
    if (!rq) { /* the headers: refuse early what can be refused */
        rq = calloc(1, sizeof *rq);
        if (!rq) return MHD_NO;
        rq->t0 = now();
        *con_cls = rq;
        atomic_fetch_add(&s->inflight, 1);
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (atomic_load(&s->draining)) {
            srv_api_error(&rep, 503, "shutting_down", "the server is shutting down");
            return answer(s, conn, rq, SRV_EP_OTHER, &rep, 1);
        }
        if (over_limit(conn)) {
            srv_api_error(&rep, 503, "too_many_connections",
                          "more than %u connections are open: retry later", s->max_connections);
            return answer(s, conn, rq, SRV_EP_OTHER, &rep, 1);
        }
        if (cl && strtoull(cl, NULL, 10) > s->max_body) {
            srv_api_error(&rep, 413, "body_too_large", "the body is %s bytes (at most %zu)", cl,
                          s->max_body);
            return answer(s, conn, rq, SRV_EP_OTHER, &rep, 1);
        }
        return MHD_YES;
    }
    if (*upload_size) { /* a piece of the body */
        size_t n = *upload_size;
        *upload_size = 0;
        if (rq->too_large || rq->len + n > s->max_body) {
            rq->too_large = 1;
            return MHD_YES;
        }
        if (rq->len + n + 1 > rq->cap) {
            size_t cap = rq->cap ? rq->cap : 4096;
            while (cap < rq->len + n + 1) cap *= 2;
            char *b = realloc(rq->body, cap);
            if (!b) return MHD_NO;
            rq->body = b;
            rq->cap = cap;
        }
        memcpy(rq->body + rq->len, upload, n);
        rq->len += n;
        rq->body[rq->len] = '\0';
        return MHD_YES;
    }
    /* the whole request */
    const char *key;
    unsigned status;
    srv_endpoint ep = srv_api_route(method, url, &key, &status);
    const char *full = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "full");
    if (ep == SRV_EP_STATS && full && strcmp(full, "0") != 0) key = "full";
    if (rq->too_large) {
        srv_api_error(&rep, 413, "body_too_large", "the body is over %zu bytes", s->max_body);
        return answer(s, conn, rq, ep, &rep, 1);
    }
    if (ep == SRV_EP_OTHER) {
        if (status == 405) srv_api_error(&rep, 405, "method_not_allowed", "%s %s: wrong method", method, url);
        else srv_api_error(&rep, 404, "not_found", "no such endpoint: %s", url);
        return answer(s, conn, rq, ep, &rep, 0);
    }
    if (ep == SRV_EP_METRICS) {
        rep.status = 200;
        rep.content_type = "text/plain; version=0.0.4";
        rep.body = srv_metrics_text(&s->metrics, &rep.len);
        if (!rep.body) srv_api_error(&rep, 503, "no_memory", "out of memory");
        return answer(s, conn, rq, ep, &rep, 0);
    }
    srv_api_handle(&rep, &s->ctx, ep, key, rq->body, rq->len, check_token(s, conn));
    return answer(s, conn, rq, ep, &rep, 0);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    srv *s = cls;
    srv_request *rq = *con_cls;
    (void)conn;
    (void)code;
    if (!rq) return;
    free(rq->body);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&s->inflight, 1);
}

/* Bind and listen on host:port ourselves, to say why it failed and which
 * port was chosen; the daemon takes the socket. */
static int listen_on(srv *s, const srv_config *cfg, char *err, size_t errlen)
{
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, cfg->host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)cfg->port);
        sl = sizeof *a4;
    } else if (inet_pton(AF_INET6, cfg->host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)cfg->port);
        sl = sizeof *a6;
    } else {
        snprintf(err, errlen, "'%s' is not a numeric IPv4 or IPv6 address", cfg->host);
        return -1;
    }
    s->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(s->fd, (struct sockaddr *)&ss, sl) || listen(s->fd, 512)) {
        snprintf(err, errlen, "cannot listen on %s:%u: %s", cfg->host, cfg->port, strerror(errno));
        return -1;
    }
    sl = sizeof ss;
    getsockname(s->fd, (struct sockaddr *)&ss, &sl);
    s->port = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
    return 0;
}

int srv_start(srv **out, nd_db *db, const srv_config *cfg, char *err, size_t errlen)
{
    *out = NULL;
    srv *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->fd = -1;
    s->max_body = cfg->max_body ? cfg->max_body : SRV_DEFAULT_MAX_BODY;
    s->max_connections = cfg->max_connections ? cfg->max_connections : SRV_DEFAULT_MAX_CONNECTIONS;
    s->ctx = (srv_ctx){db, NULL, cfg->k, nd_db_min_resemblance(db) > 0,
                       cfg->max_batch ? cfg->max_batch : SRV_DEFAULT_MAX_BATCH, cfg->durable};
    if (cfg->shards) {
        nd_shards_info info;
        nd_shards_info_get(&info, cfg->shards);
        s->ctx.shards = cfg->shards;
        s->ctx.shard = cfg->shard;
        s->ctx.shard_count = info.shards;
        if (srv_fleet_manifest_id(s->ctx.manifest_id, cfg->shards) != ND_OK) {
            snprintf(err, errlen, "the manifest: %s", nd_errmsg());
            goto fail;
        }
    }
    if (cfg->token && !(s->token = strdup(cfg->token))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    s->token_len = s->token ? strlen(s->token) : 0;
    if (listen_on(s, cfg, err, errlen)) goto fail;
    /* the queue holds what every connection may send at once */
    if (srv_writer_new(&s->ctx.writer, db, &s->metrics, 4096,
                       (size_t)s->max_connections * s->ctx.max_batch) != ND_OK) {
        snprintf(err, errlen, "cannot start the writer thread");
        goto fail;
    }
    unsigned idle = cfg->idle_timeout ? cfg->idle_timeout : SRV_DEFAULT_IDLE_TIMEOUT;
    s->d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
            MHD_USE_POLL,
        0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)(s->max_connections + SPARE_CONNECTIONS),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0u, MHD_OPTION_CONNECTION_TIMEOUT, idle,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 512u, MHD_OPTION_END);
    if (!s->d) {
        snprintf(err, errlen, "the HTTP daemon (libmicrohttpd) did not start");
        goto fail;
    }
    *out = s;
    return 0;
fail:
    srv_writer_free(s->ctx.writer);
    if (s->fd >= 0) close(s->fd);
    free(s->token);
    free(s);
    return -1;
}

unsigned srv_port(const srv *s)
{
    return s->port;
}

void srv_stop(srv *s, unsigned drain_seconds)
{
    if (!s) return;
    atomic_store(&s->draining, 1);
    MHD_socket fd = MHD_quiesce_daemon(s->d);
    if (fd != MHD_INVALID_SOCKET) close(fd);
    double until = now() + drain_seconds;
    while (atomic_load(&s->inflight) > 0 && now() < until) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(s->d);
    srv_writer_free(s->ctx.writer);
    free(s->token);
    free(s);
}
