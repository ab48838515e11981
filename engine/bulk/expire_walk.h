/*
 * expire_walk.h — what an expiry by a new generation removes, found by
 * one walk of rev (engine internal, for db_expire.c and expire_drops.c).
 *
 * rev holds every document once, keyed by its fingerprint, with its time:
 * walked in parts by fingerprint (on two threads when the database may
 * use them), it gives each expired document's key and every fingerprint
 * none of whose documents stays, where a walk of docs beside it read
 * every document a second time (at 100M documents, half the expiry).
 * The deletion files of rev and docs then come from the keys gathered:
 * rev's in the walk's order, docs' from the parts' keys sorted (by the
 * walkers, each part once walked) and merged.
 */
#ifndef ND_EXPIRE_WALK_H
#define ND_EXPIRE_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "db_core.h"

/* Keys back to back: key i is bytes [off[i], off[i + 1]) of keys. */
typedef struct expire_keys {
    char *keys;
    size_t len, cap;
    st_u64s off; /* off[0] = 0 once expire_keys_push ran */
} expire_keys;

/* Append key (klen bytes). ND_ENOMEM. */
int expire_keys_push(expire_keys *k, const char *key, size_t klen);
size_t expire_keys_count(const expire_keys *k);
void expire_keys_dispose(expire_keys *k);

/* The time of rev entry k/v: its own, or (written before format 3, an
 * empty value) its document's in docs. ND_ECORRUPT. */
int expire_rev_time(nd_db *db, const char *k, size_t klen, const char *v, size_t vlen,
                    int64_t *time);

#define EXPIRE_WALK_PARTS 8

/* The fingerprints whose top 3 bits are a part's number. While walked,
 * keys holds its expired rev keys in rev's order; once sorted, their
 * document keys in docs' order (laid out so, the merge of the parts reads
 * each part in sequence: reading them through an order, each step's
 * cache misses waited on the last's), with fp and rank giving rev's. */
typedef struct expire_part {
    expire_keys keys;
    st_u64s fp;     /* rev's i-th expired entry's fingerprint */
    uint32_t *rank; /* and its document key's place in keys */
    st_u64s dead;   /* its fingerprints none of whose documents stays, ascending */
} expire_part;

typedef struct expire_walk {
    expire_part part[EXPIRE_WALK_PARTS];
} expire_walk;

/* Walk rev for the documents expired before `before`, in parts by
 * fingerprint, each part's document keys sorted once walked: on the
 * caller's thread and, when two is nonzero, on a second thread beside it.
 * The caller's thread asks stop (db_stop_ask) at each part, every 65,536
 * entries and, its parts done, every 50 ms while the other walks; the
 * other reads its answer (db_stop_seen): ND_ESTOPPED. On failure w holds
 * what it gathered: expire_walk_dispose frees it either way. ND_ELIMIT
 * past 2^32 documents in a part. */
int expire_walk_rev(expire_walk *w, nd_db *db, db_stop *stop, int two, int64_t before);

/* The expired documents, all parts. */
uint64_t expire_walk_count(const expire_walk *w);

/* Every dead fingerprint, ascending, moved to the end of dead (the parts'
 * lists freed). ND_ENOMEM. */
int expire_walk_dead(expire_walk *w, st_u64s *dead);

/* fn(arg, key, klen) for every expired rev key in rev's order, or for
 * every expired document key in docs' order (the parts' sorted keys
 * merged); the first failure is returned. */
typedef int (*expire_key_fn)(void *arg, const char *key, size_t klen);
int expire_walk_each_rev(const expire_walk *w, expire_key_fn fn, void *arg);
int expire_walk_each_doc(const expire_walk *w, expire_key_fn fn, void *arg);

void expire_walk_dispose(expire_walk *w);

/* A sample for the choice of how to expire: *seen rev entries, up to
 * 1024 from each of 64 fingerprints spread evenly, *expired of them
 * expired before `before` (a fingerprint's documents sit together, so
 * this reads a few dozen blocks of any store). */
int expire_walk_sample(nd_db *db, int64_t before, uint64_t *seen, uint64_t *expired);

#endif /* ND_EXPIRE_WALK_H */
