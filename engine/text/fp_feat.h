/*
 * fp_feat.h — the features of one document for the corpus dedupe and a
 * resemblance store: its simhash, its min-hash sketch and, when asked,
 * the number of its distinct features (what containment needs), all from
 * one pass of nd_features.
 *
 * Usage: fp_feat_begin, nd_features(..., fp_feat_add, f), then
 * fp_feat_end for the fingerprint, sketch and count. The distinct
 * features are counted in an open-addressing set cleared through the list
 * of the slots it filled, so a long document does not make short ones pay.
 */
#ifndef ND_FP_FEAT_H
#define ND_FP_FEAT_H

#include <stddef.h>
#include <stdint.h>

#include <neardup.h>

typedef struct fp_feat {
    nd_simhash sim;
    nd_sketch_builder sk;
    uint64_t *tab; /* cap slots, 0 = empty (the hash 0 is counted apart) */
    uint32_t *filled;
    size_t cap, distinct;
    int count;     /* set by the caller: count the distinct features */
    int zero, oom; /* oom: the set could not grow (the count is then wrong) */
} fp_feat;

/* Start a document (the set is empty: a new feat or one ended). */
void fp_feat_begin(fp_feat *f);
/* An nd_feature_cb: payload is the fp_feat. */
void fp_feat_add(uint64_t h, int32_t w, void *payload);
/* The document's fingerprint, sketch and distinct features (saturated at
 * 2^32 - 2; 0 unless count); empties the set for the next document, also
 * after a failed or oom pass. */
uint64_t fp_feat_end(fp_feat *f, nd_sketch *sk, uint32_t *distinct);
void fp_feat_dispose(fp_feat *f);

#endif
