/*
 * srv_json.h — the JSON helpers srv_api.c defines and srv_fleet.c shares:
 * a request's document (its text signed), member checks, a match as
 * JSON, an answer. Internal to server/ (the two includers of
 * <jansson.h> there).
 */
#ifndef ND_SRV_JSON_H
#define ND_SRV_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include <neardup.h>

#include "srv_api.h"

/** One document of a request, with the signature its text gave. */
typedef struct srv_doc {
    nd_doc doc;
    nd_signature sig;
} srv_doc;

/** A failed parse: status and code, message in why. */
typedef struct srv_fail {
    unsigned status;
    const char *code;
    char why[320];
} srv_fail;

/** The document of object o ("key", needed when need_key; "text" or
 *  "fingerprint"; "html", "score", "time"): a text is signed; a
 *  resemblance store needs one when need_sketch. @return 0 or -1 (f). */
int srv_json_doc(srv_fail *f, srv_doc *d, const srv_ctx *c, json_t *o, int need_key,
                 int need_sketch, const char *where);

/** Members of o among the NULL-terminated names. @return 0 or -1 (f). */
int srv_json_members(srv_fail *f, json_t *o, const char *const *names, const char *where);

/** Optional boolean member name into *out. @return 0 or -1 (f). */
int srv_json_bool(srv_fail *f, json_t *o, const char *name, int *out);

/** Optional "k" (default c->k). @return 0 or -1 (f). */
int srv_json_k(srv_fail *f, const srv_ctx *c, json_t *o, unsigned *k);

/** Optional "sync", refused by a --no-sync server. @return 0 or -1 (f). */
int srv_json_sync(srv_fail *f, const srv_ctx *c, json_t *o);

/** 16 hex digits into *out. @return 0 or -1. */
int srv_json_hex16(const char *s, uint64_t *out);

/** A key as a JSON string (bytes not UTF-8 become '?'). */
json_t *srv_json_key(const char *s, size_t n);

/** A fingerprint as 16 hex digits. */
json_t *srv_json_fp(uint64_t fp);

/** An answer as the protocol's match (null when not dup); with_index
 *  adds "index" (null for a stored match). */
json_t *srv_json_answer(const srv_answer *a, int with_index);

/** The reply of status with body j (taken). */
void srv_json_reply(srv_reply *out, unsigned status, json_t *j);

/** A library failure rc of the step what as an error reply. */
void srv_json_nd_fail(srv_reply *out, int rc, const char *what);

/** Queue job to the writer: 0 when answered well, else -1 with out set
 *  (429 queue full, 503 stopping, the job's failure). */
int srv_json_submit(srv_reply *out, const srv_ctx *c, srv_job *job);

#endif /* ND_SRV_JSON_H */
