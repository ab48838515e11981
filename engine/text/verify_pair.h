/*
 * verify_pair.h — the one near-duplicate decision of neardup: given what
 * is known of two documents (fingerprint, min-hash sketch, count of
 * distinct features) and a rule (k, R, C), are they near-duplicates, and
 * what are the estimates?
 *
 * Every caller that confirms a candidate pair goes through verify_pair,
 * so that the corpus dedupe (engine/corpus/dedupe_join.c, and through it
 * `neardup dedupe` and `neardup-mpi dedupe`) and a store that verifies by
 * resemblance decide alike: the candidate source differs (a self-join,
 * bands, a table probe), the decision does not. It does no I/O and
 * allocates nothing; thread-safe.
 */
#ifndef ND_VERIFY_PAIR_H
#define ND_VERIFY_PAIR_H

#include <stdint.h>

#include "neardup.h"

/* One side of a pair. */
typedef struct verify_doc {
    uint64_t fp;
    const nd_sketch *sketch; /* NULL: the document has none (fingerprint only) */
    uint32_t distinct;       /* distinct features; 0 when not counted */
} verify_doc;

/* The rule. */
typedef struct verify_rule {
    unsigned k;                /* largest distance in bits */
    unsigned k_without_sketch; /* largest distance when a side has no sketch */
    double min_resemblance;    /* 0: the distance alone decides */
    double min_containment;    /* 0: off; > 0: also estimated */
} verify_rule;

typedef struct verify_result {
    unsigned dist;      /* bits between the fingerprints */
    double resemblance; /* estimated from the sketches; -1 without both */
    double containment; /* estimated when min_containment > 0 and both
                           sketches are there; else -1 */
    int by_containment; /* 1: only the containment made it a pair */
} verify_result;

/* Are a and b near-duplicates under rule? 1 when the distance is within
 * k and the resemblance is at least min_resemblance, or, when
 * min_containment > 0, the containment |A n B| / min(|A|, |B|) is at
 * least min_containment; 1 by distance alone (within k_without_sketch
 * when a side has no sketch, within k when min_resemblance is 0); else 0.
 * out receives the distance and the estimates in every case. */
int verify_pair(verify_result *out, const verify_doc *a, const verify_doc *b,
                const verify_rule *rule);

/* Containment of the smaller set in the larger, |A n B| / min(|A|, |B|),
 * from the resemblance J and the set sizes: |A n B| = J (|A| + |B|) /
 * (1 + J). 0 when a size is 0; at most 1. */
double verify_containment(double j, uint32_t na, uint32_t nb);

#endif
