/*
 * db_query.h — the query path's internal calls (db_query.c; engine
 * internal), which nd_db_batch and nd_db_add_if_new share with nd_db_query.
 */
#ifndef ND_DB_QUERY_H
#define ND_DB_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "neardup.h"
#include "storage.h"

/* Every stored fingerprint within k of fp (no document expansion), sorted
 * ascending and unique, into out (cleared). first = stop at one. */
int db_match_fps(nd_db *db, uint64_t fp, unsigned k, int first, st_u64s *out);

/* For each of fps[0..n) (ascending, distinct): append its smallest key
 * (from rev; score and time 0) to out and set at[i] to its index there, or
 * SIZE_MAX when it has no document. One iterator over one view of rev,
 * walked forward. */
int db_first_keys(nd_db *db, const uint64_t *fps, size_t n, nd_results *out, size_t *at);

/* nd_db_query's answer (no options) with at most per_fp documents of each
 * fingerprint, the first in key order (0: all): a resemblance check's
 * candidates, bounded as the bands' are (ND_DB_BAND_CANDIDATES), so that
 * m stored copies of one text cost each check per_fp reads, not m. */
int db_query_capped(nd_results *out, nd_db *db, uint64_t fp, unsigned k, size_t per_fp);

#endif /* ND_DB_QUERY_H */
