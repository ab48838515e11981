/*
 * fp_simhash.c — the simhash accumulator, the feature hash and the Hamming
 * distance. The feature hash itself (nd_feature_hash) is defined in
 * common/nd_hash.c, the one file that includes <xxhash.h>.
 *
 * Charikar's simhash keeps 64 counters; a feature with hash h and weight w
 * adds w to counter i where bit i of h is 1 and subtracts it where it is 0.
 * Equivalently counter_i = 2 * pos_i - total, with pos_i the weight of the
 * features whose bit i is set: that is what we keep, because adding "w
 * where the bit is set" needs only, per bit, a count of the hashes that
 * have it. Features are buffered 32 at a time and counted per bit with
 * byte-lane arithmetic (see flush), the hot loop of fingerprinting.
 */
#include <string.h>

#include "neardup.h"

unsigned nd_hamming(uint64_t a, uint64_t b) { return (unsigned)__builtin_popcountll(a ^ b); }

void nd_simhash_init(nd_simhash *acc) { memset(acc, 0, sizeof *acc); }

/* spread[b]: byte i is bit i of b, so adding spread[] of a hash's bytes
 * counts, in eight byte lanes per 64-bit word, how many hashes have each
 * bit set (SWAR: no SIMD intrinsics, no overflow below 256 hashes). */
#define SP1(b)                                                                         \
    ((uint64_t)((b) & 1) | (uint64_t)(((b) >> 1) & 1) << 8 |                           \
     (uint64_t)(((b) >> 2) & 1) << 16 | (uint64_t)(((b) >> 3) & 1) << 24 |             \
     (uint64_t)(((b) >> 4) & 1) << 32 | (uint64_t)(((b) >> 5) & 1) << 40 |             \
     (uint64_t)(((b) >> 6) & 1) << 48 | (uint64_t)(((b) >> 7) & 1) << 56)
#define SP4(b) SP1(b), SP1((b) + 1), SP1((b) + 2), SP1((b) + 3)
#define SP16(b) SP4(b), SP4((b) + 4), SP4((b) + 8), SP4((b) + 12)
#define SP64(b) SP16(b), SP16((b) + 16), SP16((b) + 32), SP16((b) + 48)
static const uint64_t spread[256] = {SP64(0), SP64(64), SP64(128), SP64(192)};

/* Fold the buffered features into the counters. Features come in runs of
 * equal weight (all of a plain text weigh 1): for each run, count per bit
 * how many hashes have it set — eight table lookups and adds per feature —
 * then add weight * count to each counter. The sums are exact in 64 bits
 * (at most 32 features of |weight| < 2^31 per flush), so the counters are
 * the same as adding feature by feature, whatever the order. */
static void flush(nd_simhash *acc)
{
    uint32_t n = acc->pend_n;
    for (uint32_t j = 0; j < n;) {
        int32_t w = acc->pend_w[j];
        /* Eight named lanes, so they stay in registers. */
        uint64_t l0 = 0, l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0;
        uint32_t k = j;
        for (; k < n && acc->pend_w[k] == w; k++) {
            uint64_t h = acc->pend_h[k];
            l0 += spread[h & 0xff];
            l1 += spread[(h >> 8) & 0xff];
            l2 += spread[(h >> 16) & 0xff];
            l3 += spread[(h >> 24) & 0xff];
            l4 += spread[(h >> 32) & 0xff];
            l5 += spread[(h >> 40) & 0xff];
            l6 += spread[(h >> 48) & 0xff];
            l7 += spread[h >> 56];
        }
        const uint64_t lanes[8] = {l0, l1, l2, l3, l4, l5, l6, l7};
        for (unsigned bit = 0; bit < 64; bit++)
            acc->pos[bit] += (int64_t)w * (int64_t)((lanes[bit / 8] >> (8 * (bit % 8))) & 0xff);
        acc->total += (int64_t)w * (int64_t)(k - j);
        j = k;
    }
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
