/*
 * dedupe_band.h — min-hash banding, the candidate source `neardup dedupe`
 * and `neardup-mpi dedupe` use beyond the self-join's reach.
 *
 * The 128 bins of each sketch form DEDUPE_BANDS bands; documents whose
 * sketches agree in a whole band are candidates. A pair of resemblance 0.9
 * shares a band with probability about 1 - (1 - 0.9^8)^16. Both commands
 * call this one function, so they report the same pairs in the same order.
 */
#ifndef ND_DEDUPE_BAND_H
#define ND_DEDUPE_BAND_H

#include <stddef.h>
#include <stdint.h>

#include <neardup.h>

enum { DEDUPE_BANDS = 16, DEDUPE_BAND_BINS = ND_SKETCH_BINS / DEDUPE_BANDS };

/* Called with x < y (positions in 0..m) for each pair found. Nonzero
 * stops the join and is returned. */
typedef int (*dedupe_pair_fn)(size_t x, size_t y, unsigned dist, void *payload);

/* Every pair of the m documents whose sketches agree in some band, reported
 * once (from the first band they agree in), whose fingerprints lie more
 * than join_k bits (the self-join found those) and at most k bits apart,
 * and whose sketches estimate a resemblance of at least min_res. Position
 * x is document ids[x] of fp and sk (x itself when ids is NULL).
 * @return 0, the callback's stop value, or -1 when out of memory. */
int dedupe_band_join(size_t m, const uint32_t *ids, const uint64_t *fp, const nd_sketch *sk,
                     unsigned join_k, unsigned k, double min_res, dedupe_pair_fn cb,
                     void *payload);

#endif
