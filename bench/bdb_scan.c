/*
 * bdb_scan.c — the brute-force popcount scan: the oracle every figure of
 * bench_db is checked against, and the baseline every index must beat.
 *
 * A plain loop over a dense array; with -march=native (bench/meson.build)
 * the compiler vectorises the popcount where the CPU has it. Matches are
 * rare, so the append path is out of line.
 */
#include <stdlib.h>

#include "bdb.h"

static int push(uint64_t **out, size_t *cap, size_t n, uint64_t v)
{
    if (n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        uint64_t *p = realloc(*out, nc * sizeof *p);
        if (!p) return -1;
        *out = p;
        *cap = nc;
    }
    (*out)[n] = v;
    return 0;
}

size_t bdb_scan(const uint64_t *v, size_t n, uint64_t q, unsigned k, uint64_t **out,
                size_t *cap)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned)__builtin_popcountll(v[i] ^ q) <= k) {
            if (push(out, cap, m, v[i])) return SIZE_MAX;
            m++;
        }
    }
    return m;
}

size_t bdb_scan_count(const uint64_t *v, size_t n, uint64_t q, unsigned k)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) m += (unsigned)__builtin_popcountll(v[i] ^ q) <= k;
    return m;
}
