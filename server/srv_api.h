/*
 * srv_api.h — the endpoints of `neardup serve`: route a request, parse
 * its JSON body, call the store (reads directly, writes through the
 * writer) and build the JSON answer. The protocol is server/openapi.yaml
 * (version 1, paths under /v1/). Caller: srv_http.c, which owns the
 * connections, the body limit and the token check (it passes the
 * verdict, and the endpoints that write enforce it).
 */
#ifndef ND_SRV_API_H
#define ND_SRV_API_H

#include <stddef.h>

#include <neardup.h>

#include "srv_metrics.h"
#include "srv_writer.h"

typedef struct srv_ctx {
    nd_db *db;
    srv_writer *writer;
    unsigned k;        /**< default distance */
    int resemblance;   /**< the store verifies by resemblance */
    size_t max_batch;  /**< documents of one /v1/batch */
    int durable;       /**< writes are fsynced (ND_DB_SYNC) */
    const nd_shards *shards; /**< a shard server's store (placement only);
                                  NULL: a plain store (srv_fleet.c) */
    unsigned shard, shard_count; /**< with shards: this server's shard of S */
    char manifest_id[17];        /**< with shards: FNV-1a-64 of the manifest */
} srv_ctx;

/** An answer: status, body (malloc'd) and its media type. */
typedef struct srv_reply {
    unsigned status;
    char *body;
    size_t len;
    const char *content_type;
} srv_reply;

/** The token check's verdict for this request. */
typedef enum srv_auth { SRV_AUTH_OK, SRV_AUTH_MISSING, SRV_AUTH_WRONG } srv_auth;

/** The endpoint of method and url; *key points into url for
 *  /v1/documents/{key}. SRV_EP_OTHER with *status 404 (no such path) or
 *  405 (the path takes another method). */
srv_endpoint srv_api_route(const char *method, const char *url, const char **key,
                           unsigned *status);

/** Whether ep writes (the token is checked for it; /v1/batch writes
 *  only with "add": true, which srv_api_handle checks itself). */
int srv_api_writes(srv_endpoint ep);

/** Answer a routed request. body holds len bytes (NULL when empty); key
 *  is /v1/documents/{key}'s, or for /v1/stats "full" when ?full=1. */
void srv_api_handle(srv_reply *out, const srv_ctx *c, srv_endpoint ep, const char *key,
                    const char *body, size_t len, srv_auth auth);

/** An error answer {"error":{"status","code","message"}}. */
void srv_api_error(srv_reply *out, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* ND_SRV_API_H */
