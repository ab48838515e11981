/*
 * db_bands.h — a resemblance store's recent band entries: in memory,
 * logged in meta, written to the band family in bulk (db_bands.c; engine
 * internal). Declares what db_bands.c defines.
 *
 * A transaction stages a document's sketch with db_bands_stage_put (its
 * log record joins the batch) and an old sketch's removal with
 * db_bands_stage_drop (deletions of its band entries join the batch);
 * both note the change in the transaction's db_band_ops. Before the write
 * db_bands_prepare makes room (it may freeze the memory and start its
 * flush on the flush thread, and waits for the flush in flight before a
 * removal); after it db_bands_apply gives the changes to the memory,
 * where checks find them at once.
 */
#ifndef ND_DB_BANDS_H
#define ND_DB_BANDS_H

#include <stddef.h>
#include <stdint.h>

#include "neardup.h"
#include "storage.h"

typedef struct db_bands db_bands; /* the memory (nd_db.bands) */

/* A transaction's changes to the band entries, in staging order. */
typedef struct db_band_ops {
    unsigned char *buf;
    size_t len, cap;
    size_t entries; /* band entries the puts add */
    size_t bytes;   /* key bytes the puts add */
    size_t drops;   /* removals */
} db_band_ops;

/* Load the log into memory (a resemblance store's open, after meta; a
 * read-only store too). ND_ECORRUPT for a malformed record. */
int db_bands_open(nd_db *db);
/* Free the memory (a no-op without one), after the flush thread's
 * flush in flight. Does not flush what remains. */
void db_bands_free(nd_db *db);

/* Stage document key's sketch sk as new (writer lock held): its log
 * record into b, the change into ops. */
int db_bands_stage_put(nd_db *db, st_batch *b, db_band_ops *ops, const void *key, size_t klen,
                       const nd_sketch *sk);
/* Stage the removal of key's band entries of sketch sk (a replacement,
 * a deletion or an expiry): their deletions into b, the change into ops
 * (NULL: none, the memory holding no entry, as right after a flush). */
int db_bands_stage_drop(st_batch *b, db_band_ops *ops, const void *key, size_t klen,
                        const nd_sketch *sk);
/* Before the write of ops (writer lock held): start a flush when the
 * memory would pass its bound, and make room for ops so that
 * db_bands_apply cannot fail. On failure nothing was written but perhaps
 * a flush. */
int db_bands_prepare(nd_db *db, const db_band_ops *ops);
/* After the write of ops (writer lock held): the memory follows it. */
void db_bands_apply(nd_db *db, const db_band_ops *ops);
void db_band_ops_dispose(db_band_ops *ops);

/* Write every band entry in memory to the band family and drop the log,
 * the flush in flight first (writer lock held; a no-op when none or in a
 * fingerprint-only store). db_bands_flush_now takes the lock. */
int db_bands_flush(nd_db *db);
int db_bands_flush_now(nd_db *db);

/* A bulk load's band entries, written as a file that its generation's
 * switch lays over the family (not through the memory). Between
 * db_bands_load_begin and db_bands_load_end (once the file is in, or
 * dropped) no growth of the filter starts: its walk would miss the
 * file's entries; one asked for meanwhile starts at the end.
 * db_bands_load_note sets the filter's bits of n prefixes (band << 32 |
 * band key), before the file is ingested, as the filter's rule asks.
 * No-ops in a fingerprint-only store. */
void db_bands_load_begin(nd_db *db);
void db_bands_load_note(nd_db *db, const uint64_t *prefixes, size_t n);
void db_bands_load_end(nd_db *db);

/* The documents sharing a band key with sk, at most ND_DB_BAND_CANDIDATES
 * a band key (the first in key order, memory and family together),
 * appended to c with distance dist_unknown. */
int db_bands_candidates(nd_db *db, const nd_sketch *sk, nd_results *c, unsigned dist_unknown);

/* Is band entry (b, band, key) in the memory or the family? *out 1 or 0. */
int db_bands_has(nd_db *db, unsigned b, uint32_t band, const void *key, size_t klen, int *out);
/* Entries in memory that the family lacks (0 after a flush), and their
 * key bytes: what a count of the family misses in a store that cannot
 * flush (read-only). */
int db_bands_unflushed(nd_db *db, uint64_t *n, uint64_t *bytes);

/* For tests. The log2 size of a writable store's filter once ready
 * (checks skip the seek of a prefix whose bit is clear: db_band_filter.h),
 * else 0. */
unsigned db_bands_filter_log2(nd_db *db);
/* Replace the filter by one of 2^bits_log2 bits that the band thread
 * walks the family to fill (ND_EINVAL without the thread). */
int db_bands_filter_reset(nd_db *db, unsigned bits_log2);

#endif /* ND_DB_BANDS_H */
