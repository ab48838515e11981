/*
 * quality_sketch.h — the resemblance sketches and LSH band keys compared by
 * bench/quality_sim (bench/README.md, "Near-duplicate quality").
 *
 * A sketch summarises a document's set of distinct feature hashes so that
 * the resemblance J = |A n B| / |A u B| of two documents can be estimated
 * from their sketches alone. Designs:
 *   lib        the library's nd_sketch (engine/text/sketch.c): fss256x4, 256
 *              bins filled by rounds, 4 bits kept a bin. 128 bytes. (Until
 *              2026-11-28 it was lib128: 128 bins of 16 bits filled by
 *              rotation.)
 *   ophBxb     the same scheme with B bins keeping b bits (1..16) of each
 *              bin's minimum (its low bits: b-bit min-wise hashing, Li and
 *              König); the estimate corrects for chance equality:
 *              J = (E - 2^-b) / (1 - 2^-b), E the share of equal bins.
 *              B * b / 8 bytes. ophsBxb: empty bins filled by spread
 *              densification instead, fssBxb: by further rounds of
 *              hashing (see quality_sketch.c).
 *   bottomK    the K smallest distinct feature hashes, each cut to its top
 *              32 bits (Broder's bottom-k). J is estimated on the K smallest
 *              of the union of two sketches; a set of fewer than K features
 *              is kept whole, so two short texts compare exactly. 4K bytes.
 * Band keys (candidates by locality-sensitive hashing): bands x rows bins
 * of a one-permutation sketch with full 64-bit minima, each band's rows
 * hashed to one key. Two documents of resemblance J share a band with
 * probability about 1 - (1 - J^rows)^bands if the rows are independent.
 * They are not for a short text whose band is consecutive bins: rotation
 * fills an empty bin from its right neighbour, so a band of 8 bins of a
 * 40-shingle text holds about 3 distinct minima. Interleaved bands (band b
 * takes bins b, b + bands, b + 2 bands, ...) draw their rows from bins far
 * apart, whose sources differ, but a differing feature spoils a run of
 * neighbouring bins, so one row of many bands. Spread densification and
 * rounds (quality_sketch.c) avoid both.
 */
#ifndef QUALITY_SKETCH_H
#define QUALITY_SKETCH_H

#include <stddef.h>
#include <stdint.h>

typedef enum { QS_LIB, QS_OPH, QS_BOTTOM, QS_EXACT } qs_kind;

/* How the bins of a one-permutation sketch no feature reached are filled
 * (quality_sketch.c). */
typedef enum { QS_FILL_ROTATE, QS_FILL_SPREAD, QS_FILL_ROUNDS } qs_fill;

typedef struct qs_design {
    qs_kind kind;
    unsigned size; /* bins, or K */
    unsigned bits; /* bits kept a bin (QS_LIB, QS_OPH) or a value (QS_BOTTOM) */
    qs_fill fill;  /* QS_OPH */
} qs_design;

/* Sketches of n documents under one design. */
typedef struct qs_sketches {
    qs_design d;
    size_t n;
    uint16_t *bins; /* QS_LIB, QS_OPH: size a document */
    uint32_t *vals; /* QS_BOTTOM: up to size a document, ascending */
    uint16_t *len;  /* QS_BOTTOM: values held a document */
    uint64_t *const *feat; /* QS_EXACT: the caller's sets, borrowed */
    const size_t *nfeat;
} qs_sketches;

/* Parse "lib", "ophBxb", "bottomK" or "exact". @return 0, or -1 if
 * malformed. */
int qs_parse(qs_design *out, const char *spec);

/* Bytes a document's sketch takes on disk (0 for exact: the whole set). */
size_t qs_bytes(const qs_design *d);

/* Sketch every document: feat[i][0..nfeat[i]) are the distinct feature
 * hashes of document i, ascending (exact keeps pointers to them: they
 * must outlive the sketches). @return 0, or -1 out of memory. */
int qs_build(qs_sketches *out, const qs_design *d, size_t n, uint64_t *const *feat,
             const size_t *nfeat);

/* Estimated resemblance of documents a and b, in [0, 1]. */
double qs_estimate(const qs_sketches *s, size_t a, size_t b);

void qs_free(qs_sketches *s);

/* The band keys of one document: out[0..bands) (band index mixed in, so
 * keys of different bands never meet), from the first bands x rows bins of
 * a sketch of max(bins, bands x rows) bins whose empty bins are filled as
 * fill says (so a sketch and its bands can be one computation); rows
 * consecutive bins a band, or interleaved (rows <= 64). */
void qs_band_keys(uint64_t *out, unsigned bands, unsigned rows, unsigned bins, int interleaved,
                  qs_fill fill, const uint64_t *feat, size_t nfeat);

/* Probability that a pair of resemblance j shares a band (independent
 * bins assumed). */
double qs_band_catch(double j, unsigned bands, unsigned rows);

#endif
