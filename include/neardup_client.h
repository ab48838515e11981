/*
 * neardup_client.h — the C client of `neardup serve` (libneardup-client).
 *
 * The calls of the library's store (nd_db_add_if_new, nd_db_query,
 * nd_db_batch...) over HTTP, against one server (nd_client) or a fleet of
 * shard servers (nd_fleet), with the conventions of neardup.h: names
 * nd_<object>_<verb>, int results (ND_OK or a negative code), the output
 * first, _open/_close and _new/_free pairs, destructors that accept NULL,
 * options structs that start with `unsigned version`.
 *
 * libneardup-client is a companion library: it links libcurl and jansson,
 * never libneardup (a crawler machine needs no RocksDB), and libneardup
 * never links it. It includes <neardup.h> for its types and codes only
 * (nd_error, nd_match, nd_batch_item, ND_BATCH_*, ND_MAX_*): nothing of
 * libneardup is called, so nd_strerror and nd_errmsg are not to be used
 * on its results; nd_client_strerror and nd_client_errmsg are.
 *
 * The protocol is server/openapi.yaml, version 1 (docs/server.md).
 *
 * Errors: the server's statuses become the library's codes (400 and 405
 * ND_EINVAL, 404 ND_ENOTFOUND, 413 ND_ELIMIT, 429 and 503 ND_EBUSY, 500
 * ND_EIO, 507 ND_ENOSPC, 421 wrong_shard ND_EMISMATCH), plus the client's own below (no connection, a
 * timeout, a refused token, an answer that is not the protocol).
 * nd_client_errmsg() then names the call, the status, the server's error
 * code and message ("POST /v1/batch: 413 too_many_documents: ...").
 *
 * Threads: a handle (nd_client, nd_fleet) and the results it fills are
 * used by one thread at a time: give each thread a handle of its own
 * (each keeps its own keep-alive connections). Different handles may be
 * used by different threads at once. The detail message is per thread.
 * The library never prints, never exits and reads no environment
 * variable.
 */
#ifndef NEARDUP_CLIENT_H
#define NEARDUP_CLIENT_H

#include <neardup.h>

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The client's own error codes, beside neardup.h's nd_error (whose
 *  numbers they never take). The numbers never change once released. */
typedef enum nd_client_error {
    ND_CLIENT_ECONNECT = -100, /**< no connection: refused, host unknown,
                                    reset, closed before an answer */
    ND_CLIENT_ETIMEOUT = -101, /**< no answer within the timeout */
    ND_CLIENT_EAUTH = -102,    /**< 401 (no token) or 403 (a wrong one) */
    ND_CLIENT_EPROTO = -103    /**< the answer is not the protocol: not
                                    JSON, a member missing, an unexpected
                                    status */
} nd_client_error;

/** Static name of a code, nd_error's or nd_client_error's ("invalid
 *  argument", "cannot connect"...). Never NULL. */
const char *nd_client_strerror(int rc);

/** Detail message of the last failure of this library on the calling
 *  thread, or "" if none.
 *  @note Thread-local; valid until the next call of this library on this
 *  thread that fails. Works after a failed open; never allocates. */
const char *nd_client_errmsg(void);

/** k of a call: the server's own k (the store's, or serve's --k). */
#define ND_CLIENT_DEFAULT_K (~0u)

/** Flags of the calls that take them. */
#define ND_CLIENT_HTML 0x100u /**< the text is HTML (the server extracts it) */
#define ND_CLIENT_SYNC 0x200u /**< a durable answer ("sync": fsynced before
                                   the answer, on a --no-sync server too) */

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

/** A list of matches (neardup.h's nd_match) and the bytes of their keys,
 *  filled by the calls below. Each match's key is NUL-terminated; score
 *  and time are 0 where the server did not read them, resemblance -1
 *  where it was not estimated (a fingerprint-only store). */
typedef struct nd_client_results nd_client_results;

/** New empty results. @return ND_OK or ND_ENOMEM. */
int nd_client_results_new(nd_client_results **out);
/** Free; accepts NULL. */
void nd_client_results_free(nd_client_results *res);
/** Number of matches. */
size_t nd_client_results_count(const nd_client_results *res);
/** Match i (< count). @note Valid until res is cleared, refilled or freed. */
const nd_match *nd_client_results_get(const nd_client_results *res, size_t i);
/** Remove all matches. */
void nd_client_results_clear(nd_client_results *res);

/* ------------------------------------------------------------------ */
/* One server                                                          */
/* ------------------------------------------------------------------ */

typedef struct nd_client nd_client;

#define ND_CLIENT_OPTIONS_VERSION 1u

/** Options of nd_client_open and nd_fleet_open. Zero fields mean the
 *  default; a NULL options pointer means all defaults. */
typedef struct nd_client_options {
    unsigned version;       /**< ND_CLIENT_OPTIONS_VERSION */
    const char *token;      /**< the bearer token for writes (serve's
                                 --token-file); NULL: none, or token_file's */
    const char *token_file; /**< read the token from this file's first
                                 line (used when token is NULL) */
    unsigned timeout_ms;    /**< a whole request; 0 = 30000 */
    unsigned connect_timeout_ms; /**< connecting; 0 = 5000 */
} nd_client_options;
#define ND_CLIENT_OPTIONS_INIT { ND_CLIENT_OPTIONS_VERSION, NULL, NULL, 0, 0 }

/** Initialise options to defaults. @return ND_OK or ND_EINVAL (NULL,
 *  unknown version). */
int nd_client_options_init(nd_client_options *opts, unsigned version);

/** A client of the server at url ("http://HOST:PORT", a trailing "/" or a
 *  path prefix allowed). Connects lazily: the first call connects, and
 *  later calls reuse the connection (keep-alive), reconnecting once when
 *  the server closed it meanwhile.
 *  @return ND_OK; ND_EINVAL (not an http:// url, unknown options
 *          version, an empty token); ND_ENOTFOUND (token_file cannot be
 *          read); ND_ENOMEM. */
int nd_client_open(nd_client **out, const char *url, const nd_client_options *opts);

/** Close the connection and free the handle; accepts NULL. */
void nd_client_close(nd_client *c);

/** The store's verdict on a fingerprint, storing nothing (POST
 *  /v1/check): out receives the match nd_client_add_if_new would report,
 *  or is left empty when the document would be new.
 *  @param k  ND_CLIENT_DEFAULT_K or 0..ND_MAX_K
 *  @return ND_OK in both cases; ND_EINVAL (a resemblance store needs a
 *          text: 400 text_required); the transport's codes (see the top). */
int nd_client_check(nd_client_results *out, nd_client *c, uint64_t fp, unsigned k);

/** nd_client_check for a text, signed by the server under the store's
 *  fingerprint options (and sketched, in a resemblance store).
 *  @param flags  ND_CLIENT_HTML
 *  @return as nd_client_check; ND_EINVAL (text not UTF-8). */
int nd_client_check_text(nd_client_results *out, nd_client *c, const char *text, size_t len,
                         unsigned k, unsigned flags);

/** The crawler's check-and-add (POST /v1/check-and-add): store the
 *  document unless a near-duplicate is stored; out receives that match
 *  or is left empty (stored). Race-free across the server's clients. A
 *  resemblance store refuses a bare fingerprint (ND_EINVAL).
 *  @param key    1..ND_MAX_KEY_LEN bytes of UTF-8
 *  @param time   last seen, seconds since the epoch (sent as given)
 *  @param flags  ND_CLIENT_SYNC
 *  @return ND_OK in both cases; ND_EINVAL; ND_ELIMIT; ND_CLIENT_EAUTH;
 *          the transport's codes. */
int nd_client_add_if_new(nd_client_results *out, nd_client *c, const void *key, size_t key_len,
                         uint64_t fp, double score, int64_t time, unsigned k, unsigned flags);

/** nd_client_add_if_new for a text. A resemblance store stores the
 *  document either way and reports its best near-duplicate.
 *  @param flags  ND_CLIENT_HTML, ND_CLIENT_SYNC
 *  @return as nd_client_add_if_new. */
int nd_client_add_if_new_text(nd_client_results *out, nd_client *c, const void *key,
                              size_t key_len, const char *text, size_t len, double score,
                              int64_t time, unsigned k, unsigned flags);

/** Store (or replace) a document without the check (POST /v1/add).
 *  @param flags  ND_CLIENT_SYNC
 *  @return ND_OK; as nd_client_add_if_new. */
int nd_client_add(nd_client *c, const void *key, size_t key_len, uint64_t fp, double score,
                  int64_t time, unsigned flags);

/** nd_client_add for a text. @param flags ND_CLIENT_HTML, ND_CLIENT_SYNC */
int nd_client_add_text(nd_client *c, const void *key, size_t key_len, const char *text,
                       size_t len, double score, int64_t time, unsigned flags);

/** Look a document up (GET /v1/documents/KEY): out receives one match,
 *  distance 0, its fingerprint, score and time.
 *  @return ND_OK; ND_ENOTFOUND (out left empty); the transport's codes. */
int nd_client_get(nd_client_results *out, nd_client *c, const void *key, size_t key_len);

/** Delete a document (DELETE /v1/documents/KEY).
 *  @return ND_OK; ND_ENOTFOUND; ND_CLIENT_EAUTH; the transport's codes. */
int nd_client_delete(nd_client *c, const void *key, size_t key_len);

/** Every stored document within k bits of fp (POST /v1/query), closest
 *  first (distance, then fingerprint, then key: nd_match_order).
 *  @param limit  at most this many (the closest); 0 = all
 *  @return ND_OK (also when nothing matched); ND_EINVAL; the transport's. */
int nd_client_query(nd_client_results *out, nd_client *c, uint64_t fp, unsigned k,
                    size_t limit);

/** The stored near-duplicates of a text (nd_db_query_doc): in a
 *  resemblance store the most resemblant first, else as nd_client_query
 *  on its fingerprint. @param flags ND_CLIENT_HTML
 *  @return as nd_client_query. */
int nd_client_query_text(nd_client_results *out, nd_client *c, const char *text, size_t len,
                         unsigned k, size_t limit, unsigned flags);

/** One document of a batch: a text (signed by the server) or, when text
 *  is NULL, a fingerprint. */
typedef struct nd_client_doc {
    const void *key;   /**< 1..ND_MAX_KEY_LEN bytes of UTF-8 */
    size_t key_len;
    uint64_t fp;       /**< with text NULL */
    const char *text;  /**< UTF-8; NULL: send fp */
    size_t text_len;
    double score;
    int64_t time;      /**< sent as given */
    unsigned flags;    /**< ND_CLIENT_HTML */
} nd_client_doc;

/** Check n documents against the store and each other, in order, as
 *  nd_db_batch does (POST /v1/batch: one request, one commit group);
 *  ND_BATCH_ADD stores them.
 *  @param out    n items, filled: dup, dist, match_fp, match_index (the
 *                earlier document of the batch, or ND_BATCH_STORED),
 *                match_key, resemblance
 *  @param keys   receives the matches' keys: out[i].match_key points into
 *                it until keys is cleared, refilled or freed
 *  @param flags  ND_BATCH_ADD, ND_CLIENT_SYNC
 *  @return ND_OK; ND_ELIMIT (over serve's --max-batch or --max-body: 413);
 *          ND_EINVAL; ND_CLIENT_EAUTH (with ND_BATCH_ADD); the transport's. */
int nd_client_batch(nd_batch_item *out, nd_client_results *keys, nd_client *c,
                    const nd_client_doc *docs, size_t n, unsigned k, unsigned flags);

/** A few figures of GET /v1/stats. */
typedef struct nd_client_stats {
    uint64_t documents;     /**< stored documents */
    uint64_t fingerprints;  /**< distinct stored fingerprints */
    unsigned k;             /**< the server's k */
    double min_resemblance; /**< 0: a fingerprint-only store */
    int durable;            /**< 1: writes are fsynced before answers */
    int shard;              /**< the server's shard (serve --shard I), -1 none */
    int shards;             /**< shards of its store, 0 a plain store */
    char manifest[17];      /**< with a shard: the manifest's id, 16 hex
                                 digits, the same on every server of one
                                 sharded store; else "" */
} nd_client_stats;

/** The server's cheap figures (its counters: GET /v1/stats).
 *  @return ND_OK; the transport's codes. */
int nd_client_stats_get(nd_client_stats *out, nd_client *c);

/** GET /v1/stats?full=1's answer as it came (a JSON object: every figure
 *  of `neardup stats`, which reads every table).
 *  @param out  receives a NUL-terminated string: free it with free()
 *  @return ND_OK; ND_ENOMEM; the transport's codes. */
int nd_client_stats_json(char **out, nd_client *c);

/** Whether the server is up (GET /healthz answered 200).
 *  @return ND_OK when up; else the code that says why not
 *          (ND_CLIENT_ECONNECT, ND_CLIENT_ETIMEOUT, ND_EBUSY...). */
int nd_client_healthy(nd_client *c);

/* ------------------------------------------------------------------ */
/* A fleet: S servers, server i serving shard i of a sharded store      */
/* ------------------------------------------------------------------ */

/** A router over the servers of a fleet (docs/server.md, "A fleet"):
 *  given the S urls in shard order, its calls give the answers one server
 *  holding the whole store would give, as Python's neardup.Fleet does.
 *  A check goes to every server at once (a near-duplicate may live in any
 *  shard) and the best of their matches wins (fingerprint-only store:
 *  nd_match_order's; resemblance store: the highest resemblance, then
 *  that order); a write, get or delete goes to the key's owner, shard
 *  FNV-1a-64(key) mod S. Check-and-add is atomic within a shard, not
 *  across shards: two clients sending near-duplicates whose keys live in
 *  different shards at the same moment may both be told new. Calls fail
 *  as a whole when any server they need fails (the first failure's code
 *  and message). */
typedef struct nd_fleet nd_fleet;

/** Open a fleet: one nd_client per url (opts as nd_client_open's), then
 *  GET /v1/stats of every server at once: server i must serve shard i of
 *  n, all of the same manifest, k and resemblance threshold. One url of
 *  a plain (unsharded) server is a fleet of one.
 *  @return ND_OK; ND_EINVAL (n 0, a bad url or options); ND_EMISMATCH
 *          (the servers are not shards 0..n-1 of one store: nd_client_errmsg
 *          says which differs); ND_ENOTFOUND (token_file); ND_ENOMEM; the
 *          transport's codes (a server down). */
int nd_fleet_open(nd_fleet **out, const char *const *urls, size_t n,
                  const nd_client_options *opts);

/** Close every connection and free the router; accepts NULL. */
void nd_fleet_close(nd_fleet *f);

/** Number of shards (servers). */
size_t nd_fleet_shards(const nd_fleet *f);

/** The shard that holds key: FNV-1a-64 of its bytes mod shards (as
 *  nd_shards_place). @note Pure arithmetic. */
size_t nd_fleet_place(const void *key, size_t key_len, size_t shards);

/** As nd_client_check over the fleet. */
int nd_fleet_check(nd_client_results *out, nd_fleet *f, uint64_t fp, unsigned k);
/** As nd_client_check_text over the fleet. */
int nd_fleet_check_text(nd_client_results *out, nd_fleet *f, const char *text, size_t len,
                        unsigned k, unsigned flags);
/** As nd_client_add_if_new over the fleet: a check on every server, then
 *  the check-and-add on the key's owner when the document is new there
 *  (or its best match is its own key). */
int nd_fleet_add_if_new(nd_client_results *out, nd_fleet *f, const void *key, size_t key_len,
                        uint64_t fp, double score, int64_t time, unsigned k, unsigned flags);
/** As nd_client_add_if_new_text over the fleet (a resemblance store: the
 *  owner's check-and-add beside the other servers' checks, at once). */
int nd_fleet_add_if_new_text(nd_client_results *out, nd_fleet *f, const void *key,
                             size_t key_len, const char *text, size_t len, double score,
                             int64_t time, unsigned k, unsigned flags);
/** As nd_client_add, on the key's owner. */
int nd_fleet_add(nd_fleet *f, const void *key, size_t key_len, uint64_t fp, double score,
                 int64_t time, unsigned flags);
/** As nd_client_add_text, on the key's owner. */
int nd_fleet_add_text(nd_fleet *f, const void *key, size_t key_len, const char *text,
                      size_t len, double score, int64_t time, unsigned flags);
/** As nd_client_get, on the key's owner. */
int nd_fleet_get(nd_client_results *out, nd_fleet *f, const void *key, size_t key_len);
/** As nd_client_delete, on the key's owner. */
int nd_fleet_delete(nd_fleet *f, const void *key, size_t key_len);
/** As nd_client_query over the fleet: every server's matches merged,
 *  closest first, cut to limit. */
int nd_fleet_query(nd_client_results *out, nd_fleet *f, uint64_t fp, unsigned k, size_t limit);
/** As nd_client_query_text over the fleet (a resemblance store: most
 *  resemblant first). */
int nd_fleet_query_text(nd_client_results *out, nd_fleet *f, const char *text, size_t len,
                        unsigned k, size_t limit, unsigned flags);
/** As nd_client_batch over the fleet: a stored-only check on every server
 *  at once, the best match per document, the decision on one server
 *  (POST /v1/decide); with ND_BATCH_ADD each server then stores its own
 *  documents (POST /v1/store), at once. Each request carries the whole
 *  batch, so serve's --max-batch bounds n. */
int nd_fleet_batch(nd_batch_item *out, nd_client_results *keys, nd_fleet *f,
                   const nd_client_doc *docs, size_t n, unsigned k, unsigned flags);
/** The fleet's figures: documents and fingerprints summed, k and
 *  min_resemblance the servers' (equal), durable when every server is;
 *  shard -1, shards S, manifest the servers'. */
int nd_fleet_stats_get(nd_client_stats *out, nd_fleet *f);
/** ND_OK when every server answers GET /healthz; else the first
 *  failure's code. */
int nd_fleet_healthy(nd_fleet *f);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#endif /* NEARDUP_CLIENT_H */
