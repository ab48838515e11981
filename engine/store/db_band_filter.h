/*
 * db_band_filter.h — which band prefixes (band || band key) a resemblance
 * store's band family may hold: two bits of one word a hashed prefix, in
 * memory (db_band_filter.c; engine internal, owned by db_bands.c).
 *
 * Why: a check seeks each of its 12 band prefixes in the family, and a
 * new document's are nearly all absent. RocksDB answers an absent
 * prefix from its files' bloom filters, but only after building an
 * iterator's view of every level: at 2.5-3.7M texts (bench_resemble
 * under perf) those seeks took 30% of the writer's time, and more as
 * levels are added. A clear bit (of two) here answers the same question
 * for one cache miss.
 *
 * The rule: once ready, every prefix the family holds has its bits set
 * (set before the file holding it is ingested; removals clear nothing).
 * A filter is ready at once for a family that is empty when the store is
 * opened for writing, else after a walk over the family (db_band_filter_scan,
 * on the band flush thread) that sets the bits of what it finds.
 *
 * Size: from the documents stored at open (32 bits a prefix), at least
 * 2^26 bits (8 MB); once a sixteenth of its bits are set the band thread
 * builds one four times larger by the same walk while this one serves,
 * up to 2^30 bits (128 MB: 20% of them set at 10M documents, where 4-5%
 * of absent prefixes still cost their seek; 91% at 100M, where most do).
 * So a small store keeps a small filter, and a growing one stays useful.
 */
#ifndef ND_DB_BAND_FILTER_H
#define ND_DB_BAND_FILTER_H

#include <stdatomic.h>
#include <stdint.h>

#include "storage.h"

typedef struct db_band_filter {
    _Atomic uint64_t *words; /* NULL: no filter (every prefix may be held) */
    unsigned bits_log2;
    atomic_int ready;
    _Atomic uint64_t set; /* bits set */
} db_band_filter;

#define DB_BAND_FILTER_MIN_LOG2 26u
#define DB_BAND_FILTER_MAX_LOG2 30u

/* The size for a store of docs documents: log2 of its bits. */
unsigned db_band_filter_size(uint64_t docs);
/* A filter of 2^bits_log2 bits, not ready. Out of memory, or under an
 * address-space limit (RLIMIT_AS, where RocksDB's memory is planned and
 * the filter would crowd it): no filter, and ND_OK. */
int db_band_filter_init(db_band_filter *f, unsigned bits_log2);
/* Whether f is ready, full enough to be replaced by a larger one, and
 * not yet at the largest size: then its successor's log2 size, else 0. */
unsigned db_band_filter_grow_to(const db_band_filter *f);
void db_band_filter_free(db_band_filter *f);

/* Note that the family will hold prefix (b, bkey) (before it does). */
void db_band_filter_add(db_band_filter *f, unsigned b, uint32_t bkey);
/* 0 when the family certainly holds no entry of prefix (b, bkey); 1 when
 * it may (a set bit, or a filter not ready or absent). */
int db_band_filter_may_hold(const db_band_filter *f, unsigned b, uint32_t bkey);

/* Walk the band family and add every prefix it holds, then make f ready.
 * Every SCAN_STEP entries it calls pause(arg), which may do other work
 * (a flush: its prefixes are added as it writes them) and returns
 * nonzero to give up (f stays not ready). ND_OK, or the walk's error. */
int db_band_filter_scan(db_band_filter *f, st_store *s, int (*pause)(void *arg), void *arg);

#endif /* ND_DB_BAND_FILTER_H */
