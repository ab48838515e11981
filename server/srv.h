/*
 * srv.h — `neardup serve`: an HTTP/1.1 + JSON server over one store.
 *
 * Room: server/. It may call: the public API <neardup.h> only (no
 * header of engine/, compaction/, common/, input/, tool/ or cli/). The
 * CLI's cmd_serve.c parses the options, opens the store and calls
 * srv_start and srv_stop; everything between is this room's:
 *  - srv_http.c   the libmicrohttpd daemon (the only includer of
 *                 <microhttpd.h>): connections, body limits, the token,
 *                 drain on stop;
 *  - srv_api.c    the endpoints, JSON in and out (the server's includer
 *                 of <jansson.h>), described by server/openapi.yaml;
 *  - srv_fleet.c  a server as one shard of a fleet: placement, the
 *                 stored-only check, /v1/decide, /v1/store;
 *  - srv_writer.c the single writer: check-and-add and add requests of
 *                 every connection committed in shared groups;
 *  - srv_metrics.c the counters behind /metrics (Prometheus text).
 * Threads: one per connection (libmicrohttpd's) plus the writer. Reads
 * (check, get, query, stats) run on the connection threads at once.
 */
#ifndef ND_SRV_H
#define ND_SRV_H

#include <stddef.h>

#include <neardup.h>

/** What cmd_serve decided. Zero fields take the defaults below. */
typedef struct srv_config {
    const char *host;         /**< numeric IPv4 or IPv6 address to bind */
    unsigned port;            /**< 0: any free port (srv_port tells) */
    const char *token;        /**< bearer token for writes; NULL: none */
    size_t max_body;          /**< bytes of one request body */
    size_t max_batch;         /**< documents of one /v1/batch */
    unsigned max_connections; /**< open connections answered */
    unsigned idle_timeout;    /**< seconds a connection may stay idle */
    unsigned k;               /**< default distance (the store's k) */
    int durable;              /**< the store is opened with ND_DB_SYNC */
    const nd_shards *shards;  /**< --shard: the sharded store db is shard
                                   `shard` of (placement, manifest); NULL:
                                   db is a plain store */
    unsigned shard;
} srv_config;

#define SRV_DEFAULT_MAX_BODY (16u << 20)
#define SRV_DEFAULT_MAX_BATCH 10000u
#define SRV_DEFAULT_MAX_CONNECTIONS 256u
#define SRV_DEFAULT_IDLE_TIMEOUT 60u

typedef struct srv srv;

/** Bind cfg->host:cfg->port and start answering requests on db.
 *  @return 0, or -1 with a one-line reason in err (bind failed, out of
 *          memory, the daemon did not start, the manifest unreadable).
 *  @note cfg->shards stays the caller's, open until srv_stop returned. */
int srv_start(srv **out, nd_db *db, const srv_config *cfg, char *err, size_t errlen);

/** The port bound (the one chosen when cfg->port was 0). */
unsigned srv_port(const srv *s);

/** Drain and stop: stop accepting, answer 503 to new requests on open
 *  connections, wait up to drain_seconds for requests in flight, commit
 *  what the writer holds, close every connection. db stays open (the
 *  caller closes it). Accepts NULL. */
void srv_stop(srv *s, unsigned drain_seconds);

#endif /* ND_SRV_H */
