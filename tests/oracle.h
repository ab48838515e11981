/*
 * oracle.h — the brute-force reference every index answer is checked
 * against, and a deterministic generator of stores with planted
 * neighbours at every distance.
 */
#ifndef ND_TEST_ORACLE_H
#define ND_TEST_ORACLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct oracle_rng {
    uint64_t s;
} oracle_rng;

static inline uint64_t oracle_next(oracle_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* x with exactly d distinct random bits flipped. */
static inline uint64_t oracle_flip(oracle_rng *r, uint64_t x, unsigned d)
{
    uint64_t mask = 0;
    while ((unsigned)__builtin_popcountll(mask) < d) mask |= 1ull << (oracle_next(r) % 64);
    return x ^ mask;
}

/* Stored set: nbase random fingerprints, and for each of the nq query
 * centres (also random), one planted neighbour at every distance
 * 0..maxd. Returns the number written into fps (cap >= nbase +
 * nq * (maxd + 1)); centres go to queries[0..nq). */
static inline size_t oracle_make(oracle_rng *r, uint64_t *fps, size_t nbase, uint64_t *queries,
                                 size_t nq, unsigned maxd)
{
    size_t n = 0;
    for (size_t i = 0; i < nbase; i++) fps[n++] = oracle_next(r);
    for (size_t q = 0; q < nq; q++) {
        queries[q] = oracle_next(r);
        for (unsigned d = 0; d <= maxd; d++) fps[n++] = oracle_flip(r, queries[q], d);
    }
    return n;
}

/* Brute force: indexes i of fps with popcount(fps[i] ^ q) <= k. */
static inline size_t oracle_scan(const uint64_t *fps, size_t n, uint64_t q, unsigned k,
                                 size_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned)__builtin_popcountll(fps[i] ^ q) <= k) out[m++] = i;
    return m;
}

#endif
