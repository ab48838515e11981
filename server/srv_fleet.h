/*
 * srv_fleet.h — what a server does as one of a fleet (docs/server.md, "A
 * fleet"): a server started with --shard I holds shard I of S of a
 * sharded store and refuses writes of keys it does not own; any server
 * checks a batch against its store alone (stored_only), decides a batch
 * from the fleet's best stored matches (/v1/decide) and stores a decided
 * batch (/v1/store). Caller: srv_api.c.
 */
#ifndef ND_SRV_FLEET_H
#define ND_SRV_FLEET_H

#include <jansson.h>
#include <stddef.h>

#include <neardup.h>

#include "srv_api.h"

/** The manifest id of a sharded store: FNV-1a-64 of its manifest text,
 *  16 hex digits and a NUL. @return ND_OK or nd_shards_manifest's error. */
int srv_fleet_manifest_id(char out[17], const nd_shards *s);

/** On a shard server, a key of another shard: out answered 421
 *  wrong_shard and 1 returned. Else (the key is this shard's, or a plain
 *  store) 0. */
int srv_fleet_refuse(srv_reply *out, const srv_ctx *c, const char *key, size_t len);

/** Add to the object j the "shard" member of a shard server and, when
 *  health (/healthz) and a shard server, "k" and "min_resemblance". */
void srv_fleet_describe(json_t *j, const srv_ctx *c, int health);

/** /v1/batch with "stored_only": each of the n documents' best stored
 *  match within k on this server's store. */
void srv_fleet_stored(srv_reply *out, const srv_ctx *c, const nd_doc *docs, size_t n,
                      unsigned k);

/** POST /v1/decide {documents, matches, k}. */
void srv_fleet_decide(srv_reply *out, const srv_ctx *c, json_t *root);

/** POST /v1/store {documents, results, sync} (the token was checked). */
void srv_fleet_store(srv_reply *out, const srv_ctx *c, json_t *root);

#endif /* ND_SRV_FLEET_H */
