/*
 * fp_simhash.c — the simhash accumulator, the feature hash and the Hamming
 * distance. The only file that includes <xxhash.h>.
 *
 * Charikar's simhash keeps 64 counters; a feature with hash h and weight w
 * adds w to counter i where bit i of h is 1 and subtracts it where it is 0.
 * Equivalently counter_i = 2 * pos_i - total, with pos_i the weight of the
 * features whose bit i is set: that is what we keep, because adding "w
 * where the bit is set" is a branch-free masked add that compilers turn
 * into vector code. Features are buffered 32 at a time so the inner loop
 * runs over bit positions with the hashes in registers.
 */
#include <string.h>

#include <xxhash.h>

#include "neardup.h"

unsigned nd_hamming(uint64_t a, uint64_t b) { return (unsigned)__builtin_popcountll(a ^ b); }

uint64_t nd_feature_hash(const void *bytes, size_t len)
{
    return XXH3_64bits_withSeed(bytes, len, ND_FEATURE_SEED);
}

void nd_simhash_init(nd_simhash *acc) { memset(acc, 0, sizeof *acc); }

/* Fold the buffered features into the counters. For each bit position the
 * loop over the (at most 32) features is a masked sum the compiler
 * vectorises; 64-bit sums cannot overflow for any int32 weights within
 * 2^31 features. */
static void flush(nd_simhash *acc)
{
    uint32_t n = acc->pend_n;
    for (unsigned bit = 0; bit < 64; bit++) {
        int64_t s = 0;
        for (uint32_t j = 0; j < n; j++)
            s += (int64_t)acc->pend_w[j] & -(int64_t)((acc->pend_h[j] >> bit) & 1);
        acc->pos[bit] += s;
    }
    for (uint32_t j = 0; j < n; j++) acc->total += acc->pend_w[j];
    acc->pend_n = 0;
}

void nd_simhash_add_hash(nd_simhash *acc, uint64_t hash, int32_t weight)
{
    acc->pend_h[acc->pend_n] = hash;
    acc->pend_w[acc->pend_n] = weight;
    if (++acc->pend_n == 32) flush(acc);
}

void nd_simhash_add_feature(nd_simhash *acc, const void *bytes, size_t len, int32_t weight)
{
    nd_simhash_add_hash(acc, nd_feature_hash(bytes, len), weight);
}

uint64_t nd_simhash_final(nd_simhash *acc)
{
    uint64_t fp = 0;
    flush(acc);
    for (unsigned bit = 0; bit < 64; bit++)
        if (2 * acc->pos[bit] - acc->total > 0) fp |= 1ull << bit;
    return fp;
}
