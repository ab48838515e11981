/*
 * cmp_band.h — a resemblance store's band entries written in bulk (the
 * engine's band mirror flushes through it: engine/store/db_bands.c).
 */
#ifndef CMP_BAND_H
#define CMP_BAND_H

#include <stddef.h>

#include "cmp_store.h"

/* The next band entry for st_band_ingest: 1 and its key (valid until the
 * next call), 0 at the end, or an error code. */
typedef int (*st_band_next_fn)(void *payload, const void **key, size_t *klen);

/* Write the keys next gives (strictly ascending, bytewise; empty values)
 * into the band family through one file RocksDB takes in whole, instead
 * of a memtable insert each. Not atomic with any other write: the caller
 * keeps its durable record of the entries until this returned; a key
 * written twice is harmless (the same key, the same empty value). May make
 * RocksDB flush the family's memtable first (it holds deletions). One
 * call at a time (its file has one name, ST_FILE_BAND_INGEST), which may
 * run beside the store's other writes. Keys out of order: the file
 * writer's error, nothing ingested. */
int st_band_ingest(st_store *s, st_band_next_fn next, void *payload);

#endif /* CMP_BAND_H */
