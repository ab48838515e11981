/*
 * load_sketches.h — a resemblance store's bulk loader: each chunk's
 * sketches and band entries spilled to files, and their merge into the
 * commit's generation (load_sketches.c; engine internal).
 *
 * The sketch and band families are not generational: the commit writes
 * them as files of puts that its switch records and lays over the
 * families right after it (st_regen_begin of ST_CF_SKETCH and
 * ST_CF_BAND, cmp_carry.h), so a load's documents, sketches and band
 * entries become visible by the one write, and a crash before it leaves
 * none of them.
 */
#ifndef ND_LOAD_SKETCHES_H
#define ND_LOAD_SKETCHES_H

#include <stddef.h>

#include "storage.h"
#include "load_internal.h"

/* Chunk c's files "sketch" (its new documents' sketch values, in key
 * order) and "band" (their band entries, in the family's order). */
int load_spill_sketches(const nd_loader *l, const load_chunk *c);

/* Is chunk src's document of key written by the commit? 1 yes, 0 no (its
 * key won in a later chunk, or the store holds it by now), or an error.
 * sketch_val: its sketch value in the sketch pass (the caller may keep
 * the sketch of a document it replaces later), NULL in the band pass.
 * Asked in ascending key order in the sketch pass, in any order in the
 * band pass. */
typedef int (*load_keep_fn)(void *payload, const char *key, size_t klen, size_t src,
                            const char *sketch_val, size_t vlen);

/* Every chunk's sketch file, then band file, merged into g's sketch and
 * band families, without the documents keep refuses; the band prefixes
 * go to the band filter as they are written (between
 * db_bands_load_begin and _end, the caller's). */
int load_commit_sketches(nd_loader *l, st_regen *g, load_keep_fn keep, void *payload);

#endif /* ND_LOAD_SKETCHES_H */
