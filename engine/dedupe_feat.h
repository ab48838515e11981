/*
 * dedupe_feat.h — the features of one document for the corpus dedupe:
 * its simhash, its min-hash sketch and, when asked, the number of its
 * distinct features (what containment needs), all from one pass of
 * nd_features.
 *
 * Usage: dedupe_feat_begin, nd_features(..., dedupe_feat_add, f), then
 * dedupe_feat_end for the fingerprint, sketch and count. The distinct
 * features are counted in an open-addressing set cleared through the list
 * of the slots it filled, so a long document does not make short ones pay.
 */
#ifndef ND_DEDUPE_FEAT_H
#define ND_DEDUPE_FEAT_H

#include <stddef.h>
#include <stdint.h>

#include <neardup.h>

typedef struct dedupe_feat {
    nd_simhash sim;
    nd_sketch_builder sk;
    uint64_t *tab; /* cap slots, 0 = empty (the hash 0 is counted apart) */
    uint32_t *filled;
    size_t cap, distinct;
    int count;     /* set by the caller: count the distinct features */
    int zero, oom; /* oom: the set could not grow (the count is then wrong) */
} dedupe_feat;

/* Start a document (the set is empty: a new feat or one ended). */
void dedupe_feat_begin(dedupe_feat *f);
/* An nd_feature_cb: payload is the dedupe_feat. */
void dedupe_feat_add(uint64_t h, int32_t w, void *payload);
/* The document's fingerprint, sketch and distinct features (saturated at
 * 2^32 - 2; 0 unless count); empties the set for the next document, also
 * after a failed or oom pass. */
uint64_t dedupe_feat_end(dedupe_feat *f, nd_sketch *sk, uint32_t *distinct);
void dedupe_feat_dispose(dedupe_feat *f);

#endif
