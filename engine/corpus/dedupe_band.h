/*
 * dedupe_band.h — min-hash banding, the candidate source of the corpus
 * dedupe (nd_dedupe) beyond the self-join's reach.
 *
 * Documents whose sketches agree in a whole band are candidates: the
 * sketch's 12 band keys (nd_sketch; a pair of resemblance J shares one
 * with probability about 1 - (1 - J^8)^12: 0.9: 0.9988, 0.8: 0.89, 0.5:
 * 0.04), or, for containment, bands of 6 of its 4-bit bins (42 bands; a
 * bin agrees with probability J + (1 - J) / 16: J 0.67 meets with
 * probability 0.99, two unrelated texts with 42 / 2^24).
 *
 * The sketches are read through a source, so they may stay on disk: each
 * band pass reads them all once in document order (to hash the band),
 * then only the documents of runs of equal band hashes (to compare them).
 * Memory: 16 B a document during a pass, plus the records of the largest
 * run of equal band hashes (180 B each).
 */
#ifndef ND_DEDUPE_BAND_H
#define ND_DEDUPE_BAND_H

#include <stddef.h>
#include <stdint.h>

#include <neardup.h>

/* Bands: the sketch's own band keys by default (ND_SKETCH_BANDS bands of
 * ND_SKETCH_ROWS full bin values: J 0.9 meets with probability 0.9988,
 * 0.8 with 0.89); when containment is asked for, bands of
 * DEDUPE_CONTAINMENT_BAND_BINS 4-bit bins, so that pairs of lower
 * resemblance meet (a page with half as much again appended has J about
 * 0.67). A width of 0 names the sketch's band keys. */
enum { DEDUPE_BAND_BINS = 0, DEDUPE_CONTAINMENT_BAND_BINS = 6 };

/* A document's sketch and the size of its feature set (distinct features;
 * 0 when not counted or empty), or DEDUPE_NO_SKETCH for a document added
 * by its fingerprint (its sketch is then zeros and means nothing). */
typedef struct dedupe_rec {
    nd_sketch sk;
    uint32_t size;
} dedupe_rec;

#define DEDUPE_NO_SKETCH UINT32_MAX

/* Where the band join reads records: out[0..n) = the records of the
 * documents docs[0..n) (increasing). sequential is 1 while a pass reads
 * all documents in order (docs start again from the lowest at each pass),
 * 0 for the scattered runs. @return ND_OK or a negative nd_error. */
typedef struct dedupe_band_src {
    int (*read)(dedupe_rec *out, const uint32_t *docs, size_t n, int sequential, void *payload);
    void *payload;
} dedupe_band_src;

/* Called with x < y (positions in 0..m) for each candidate found, with the
 * two documents' records. A positive value stops the join and is
 * returned; a negative nd_error stops it too. */
typedef int (*dedupe_cand_fn)(size_t x, size_t y, unsigned dist, const dedupe_rec *a,
                              const dedupe_rec *b, void *payload);

/* The bands of a scan with this width (0: the sketch's band keys). */
unsigned dedupe_band_count(unsigned width);

/* Every pair of the m documents whose sketches agree in some band of
 * `width` bins (8 or 4; a document without a sketch agrees with none),
 * reported once (from the first band they agree in), whose fingerprints
 * lie more than join_k bits (the self-join found those) and at most k bits
 * apart. Position x is document ids[x] of fp and
 * of the source (x itself when ids is NULL); ids increase.
 * @return ND_OK, the callback's nonzero value, ND_ENOMEM or the source's
 * error. */
int dedupe_band_scan(size_t m, const uint32_t *ids, const uint64_t *fp, const dedupe_band_src *src,
                     unsigned width, unsigned join_k, unsigned k, dedupe_cand_fn cb, void *payload);

#endif
