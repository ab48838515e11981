/*
 * cmp_read.h — reading a store's families: point reads, snapshots and
 * iterators, each in the current generation (cmp_gen.h) or a snapshot's.
 * Readers may run on any thread beside the writer.
 */
#ifndef CMP_READ_H
#define CMP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_store.h"

struct cmp_gen;
struct kv_iter;
/* An iterator is the key-value adapter's: these functions only choose
 * its family, generation and kind. */
typedef struct kv_iter st_iter;
typedef struct st_snap st_snap;

/* ---- point reads --------------------------------------------------- */
/* Read key from cf. *out_val is malloc'd (free with free()); ND_ENOTFOUND
 * when absent. */
int st_get(st_store *s, int cf, const void *key, size_t klen, char **out_val,
           size_t *out_len);

/* For each of keys[0..n) (lengths lens), whether cf holds it: found[i]
 * 1 or 0. Batched: much cheaper than n calls of st_get. */
int st_exists_many(st_store *s, int cf, const char *const *keys, const size_t *lens, size_t n,
                   unsigned char *found);

/* ---- snapshots ----------------------------------------------------- */
/* A point-in-time view shared by several iterators; it holds the
 * generation current when it was taken. */
int st_snap_new(st_snap **out, st_store *s);
void st_snap_free(st_snap *snap); /* accepts NULL; free its iterators first */
/* The generation snap reads. */
struct cmp_gen *st_snap_gen(const st_snap *snap);

/* ---- iterators ----------------------------------------------------- */
/* Iterator over one family. If b is non-NULL it sees the batch's writes
 * over the database; if consistent is nonzero it reads one snapshot. */
int st_iter_new(st_iter **out, st_store *s, int cf, st_batch *b,
                int consistent);
/* Iterator over the keys k of one family with lo <= k < hi (klen bytes
 * each, at most 16), as of snapshot snap (NULL: now). Bounds let RocksDB
 * stop at hi instead of stepping over every deletion tombstone beyond it
 * (a fold leaves many). */
int st_iter_new_bounded(st_iter **out, st_store *s, int cf, const void *lo, const void *hi,
                        size_t klen, const st_snap *snap);
/* Iterator over the run space of table t (now), for probes: seek to a
 * key of the run space and step on within it; it skips the files and
 * memtables that hold no run (their prefix filter says so), and what it
 * shows outside the run space is undefined. */
int st_iter_new_probe(st_iter **out, st_store *s, unsigned t);
/* Iterator over the band family (now), for seeks to a band prefix
 * (cmp_layout.h's ST_CF_BAND_PREFIX bytes) and steps within it: the
 * files and memtables whose prefix filter lacks the prefix are skipped
 * (what it shows past that prefix is undefined). */
int st_iter_new_band(st_iter **out, st_store *s);
/* Iterator for a walk over a whole family (now): it does not fill the
 * block cache and reads ahead. */
int st_iter_new_scan(st_iter **out, st_store *s, int cf);
/* Iterator over one family as of snapshot snap. */
int st_iter_new_at(st_iter **out, st_store *s, int cf, const st_snap *snap);
/* Both: a walk over much of a family as of snapshot snap. */
int st_iter_new_scan_at(st_iter **out, st_store *s, int cf, const st_snap *snap);
void st_iter_free(st_iter *it); /* accepts NULL */
void st_iter_seek(st_iter *it, const void *key, size_t klen);
void st_iter_seek_first(st_iter *it);
void st_iter_next(st_iter *it);
int st_iter_valid(const st_iter *it);
const char *st_iter_key(const st_iter *it, size_t *klen);
const char *st_iter_value(const st_iter *it, size_t *vlen);
/* ND_OK, or the error that ended the iteration (checksum -> ND_ECORRUPT). */
int st_iter_status(const st_iter *it);
/* Is it on a key of table t's space tag (cmp_layout.h)? 1 with its value
 * in *v; 0 if not valid or on another space's key, or on a malformed key
 * (then *rc is ND_ECORRUPT). */
int st_iter_table_key(const st_iter *it, char tag, unsigned t, uint64_t *v, int *rc);

#endif /* CMP_READ_H */
