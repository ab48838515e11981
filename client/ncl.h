/*
 * ncl.h — the internals of libneardup-client (include/neardup_client.h),
 * shared by its files:
 *   ncl_http.c     the transport: one CURL easy handle per nd_client (its
 *                  keep-alive connection), a request prepared, performed
 *                  and its answer read as JSON, statuses mapped to codes;
 *                  the thread-local detail message
 *   ncl_json.c     documents to JSON, answers' matches to results
 *   ncl_results.c  nd_client_results
 *   ncl_calls.c    the calls of one server
 *   ncl_batch.c    its batch call
 *   ncl_fleet*.c   the fleet router (several shard servers)
 * The library's owner of <curl/curl.h> is ncl_http.c, of <jansson.h>
 * ncl_json.c, ncl_calls.c and the fleet's files (through this header's
 * json_t). Nothing here calls libneardup: <neardup.h> gives types only.
 */
#ifndef NCL_H
#define NCL_H

#include <neardup_client.h>

#include <jansson.h>
#include <stdarg.h>

/* The detail message: set it, return rc (thread-local, never allocates). */
int ncl_fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failure (rc < 0): prefix the current message with "what: ". Returns rc. */
int ncl_fail_in(int rc, const char *what);
void ncl_clear_error(void);

/* ---- transport (ncl_http.c) */

/* Perform method path with body (NULL: none; borrowed) on c: *out
 * receives the JSON answer of a 200 (a new reference, an object), else
 * the status's code is returned with the message set. */
int ncl_call(json_t **out, nd_client *c, const char *method, const char *path, json_t *body);

/* Several clients' requests at once (the fleet's shards): a multi handle
 * that keeps the connections of the clients it performs for alive. */
typedef struct ncl_parallel ncl_parallel;
int ncl_parallel_new(ncl_parallel **out);
void ncl_parallel_free(ncl_parallel *p);
/* Perform one request on each of the n clients cs[i] at once (method
 * shared, path paths[i], body bodies[i] or none when bodies is NULL;
 * borrowed; a NULL paths[i] skips cs[i], its outs[i] NULL):
 * outs[i] as ncl_call's *out. Returns ND_OK when every one succeeded;
 * else the first failure's code with its message set, and every outs[i]
 * NULL (a fleet's answer needs all of its shards). */
int ncl_parallel_call(ncl_parallel *p, json_t **outs, nd_client *const *cs, size_t n,
                      const char *method, const char *const *paths, json_t *const *bodies);

/* "http://HOST:PORT" of c, for messages. */
const char *ncl_client_url(const nd_client *c);

/* "/v1/documents/" + key percent-encoded. Free with free(). NULL with the
 * message set (ENOMEM). */
char *ncl_key_path(const void *key, size_t key_len);

/* ---- JSON (ncl_json.c) */

/* A JSON string of bytes that must be UTF-8 (what names the member in the
 * message). NULL with the message set (EINVAL or ENOMEM: *rc). */
json_t *ncl_jstr(int *rc, const char *what, const void *s, size_t n);
/* 16 hex digits. */
json_t *ncl_jhex(uint64_t fp);
/* Parse 16 hex digits. Returns 0 or -1. */
int ncl_parse_hex(uint64_t *out, const char *s);
/* A request's document: key (may be NULL), text (NULL: fp), score and
 * time (with_meta), html. NULL on failure (*rc and the message). */
json_t *ncl_doc_json(int *rc, const void *key, size_t key_len, uint64_t fp, const char *text,
                     size_t len, int with_meta, double score, int64_t time, unsigned flags);
/* Add the optional members k (unless ND_CLIENT_DEFAULT_K) and sync. */
int ncl_set_k_sync(json_t *o, unsigned k, unsigned flags);
/* Answer match m (an object) read in place: out->key points into m.
 * Returns 0, or -1 when m is not a match. */
int ncl_match_view(nd_match *out, size_t *index_out, json_t *m);
/* a ranks before b as the best match of a check: fingerprint-only
 * (resemblance 0) nd_match_order's; else higher resemblance first. */
int ncl_better(const nd_match *a, const nd_match *b, int resemblance);
/* Append answer match m (an object) to out. index_out (may be NULL)
 * receives its "index" (ND_BATCH_STORED when null or absent). */
int ncl_add_match(nd_client_results *out, json_t *m, size_t *index_out);

/* ---- calls (ncl_calls.c) */

/* A single document's request (check, check-and-add, add): the document
 * (key NULL: none; text NULL: fp; with_meta: score and time), k and
 * sync. NULL on failure (*rc, which must be ND_OK on entry, and the
 * message). */
json_t *ncl_single(int *rc, const void *key, size_t key_len, uint64_t fp, const char *text,
                   size_t len, int with_meta, double score, int64_t time, unsigned k,
                   unsigned flags);
/* A /v1/stats answer's figures (what names the call in messages). */
int ncl_stats_read(nd_client_stats *out, json_t *a, const char *what);

/* ---- batch (ncl_batch.c) */

/* The "documents" array of a batch's request (NULL on failure: *rc). */
json_t *ncl_batch_documents(int *rc, const nd_client_doc *docs, size_t n);
/* A batch answer a's "results" (n of them) into out and keys (what names
 * the call in messages). */
int ncl_batch_read(nd_batch_item *out, nd_client_results *keys, json_t *a, size_t n,
                   const char *what);

/* ---- results (ncl_results.c) */

int ncl_results_push(nd_client_results *res, const nd_match *m);
/* Sort by nd_match_order's order (distance, fingerprint, key bytes), or
 * with resemblance the highest resemblance first, then that order. */
void ncl_results_sort(nd_client_results *res, int resemblance);
/* Keep the first n matches. */
void ncl_results_truncate(nd_client_results *res, size_t n);
/* nd_match_order without libneardup. */
int ncl_match_order(const nd_match *a, const nd_match *b);

#endif
