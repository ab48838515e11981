/*
 * bdb_gen.c — deterministic synthetic fingerprints for bench_db.
 *
 * Counter-based: element j of stream s is a pure function of (seed, s, j),
 * built from the splitmix64 finaliser. Any element can be computed alone,
 * in any order, from any thread, so a phase can regenerate the stored set
 * chunk by chunk instead of keeping 8 bytes per fingerprint resident (which
 * would pollute the peak-RSS figures of the engine under test), and the
 * FAISS script reads exactly the same values from the files bench_db dumps.
 */
#include "bdb.h"

uint64_t bdb_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t stream_seed(const bdb_gen *g, int stream)
{
    return bdb_mix(bdb_mix(g->seed) ^ (uint64_t)stream * 0xd6e8feb86659fd93ull);
}

uint64_t bdb_stored(const bdb_gen *g, uint64_t i)
{
    return bdb_mix(stream_seed(g, BDB_STORED) + i * 0x9e3779b97f4a7c15ull);
}

/* A small sequential generator seeded per element. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return bdb_mix(r->s);
}

/* Unbiased enough for n << 2^64 (multiply-shift). */
static uint64_t below(rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)next(r) * n) >> 64);
}

static uint64_t flip_mask(rng *r)
{
    unsigned flips = (unsigned)below(r, BDB_MAX_FLIPS + 1);
    uint64_t m = 0;
    while ((unsigned)__builtin_popcountll(m) < flips) m |= 1ull << below(r, 64);
    return m;
}

uint64_t bdb_query(const bdb_gen *g, int stream, uint64_t j, uint64_t *base)
{
    rng r = {bdb_mix(stream_seed(g, stream) ^ j * 0xc2b2ae3d27d4eb4full)};
    if (next(&r) & 1) {
        uint64_t idx = below(&r, g->n);
        if (base) *base = idx;
        return bdb_stored(g, idx) ^ flip_mask(&r);
    }
    if (base) *base = UINT64_MAX;
    return next(&r);
}

uint64_t bdb_join_elem(const bdb_gen *g, uint64_t n, uint64_t i)
{
    uint64_t half = n / 2;
    uint64_t s = stream_seed(g, BDB_JOIN);
    if (i < half) return bdb_mix(s + i * 0x9e3779b97f4a7c15ull);
    uint64_t src = i - half;
    rng r = {bdb_mix(s ^ src * 0xc2b2ae3d27d4eb4full)};
    return bdb_mix(s + src * 0x9e3779b97f4a7c15ull) ^ flip_mask(&r);
}
