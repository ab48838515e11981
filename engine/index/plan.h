/*
 * plan.h — table plans and permutations (engine internal).
 *
 * Room: index/. It may call: no other room (common/ only).
 * The room is the permuted-table method in memory, with no storage: table
 * plans and permutations (plan.c), radix sorts (sort.c), the self-join of
 * a batch (join.c). Every other room may use it.
 *
 * A plan for design distance k splits the 64 fingerprint bits into blocks
 * (one level, or two levels as in Manku et al.) and gives each of its t
 * tables a permutation pi_i that moves the chosen blocks to the top, and a
 * prefix length p_i = the bits of those blocks. If popcount(a ^ b) <= k,
 * some table has the top p_i bits of pi_i(a) and pi_i(b) equal.
 *
 * A permutation is a list of segments: bits [src, src+width) of the
 * fingerprint move to bits [dst, dst+width) (bit 0 = least significant).
 * Applying it is one shift-and-mask per segment. Hamming distance is
 * invariant under every permutation, so candidates are compared in
 * permuted space.
 */
#ifndef ND_PLAN_H
#define ND_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "neardup.h"

#define ND_PLAN_MAX_SEGS 64

typedef struct nd_seg {
    uint8_t src, dst, width;
} nd_seg;

typedef struct nd_perm {
    unsigned nsegs;
    nd_seg segs[ND_PLAN_MAX_SEGS];
    unsigned prefix_bits; /* p_i: the top bits probed */
} nd_perm;

typedef struct nd_plan {
    nd_plan_info info;
    nd_perm table[ND_MAX_TABLES];
} nd_plan;

/* Choose a plan for design distance k and n expected documents; force_t
 * != 0 picks the best design with exactly that many tables (ND_EINVAL if
 * none exists). */
int nd_plan_choose(nd_plan *out, unsigned k, uint64_t n, unsigned force_t);

uint64_t nd_perm_apply(const nd_perm *p, uint64_t fp);
uint64_t nd_perm_invert(const nd_perm *p, uint64_t permuted);

/* Text form stored in the meta family: versioned, one line per table.
 * nd_plan_encode writes a NUL-terminated string into out (cap bytes,
 * ND_ELIMIT if too small); nd_plan_decode parses and validates it (every
 * permutation a bijection of the 64 bits; ND_ECORRUPT otherwise). */
int nd_plan_encode(char *out, size_t cap, const nd_plan *plan);
int nd_plan_decode(nd_plan *out, const char *text, size_t len);

/* Flipped prefix bits a query at distance k must try in every table so
 * that some table's probe finds each fingerprint within k: 0 up to the
 * plan's k, beyond it at most k - plan k and usually far fewer (plan.c
 * proves the bound). */
unsigned nd_plan_flip_bound(const nd_plan *plan, unsigned k);

/* Probes a query at distance k costs: sum over tables of
 * sum_{j <= d} C(p_i, j) with d = nd_plan_flip_bound (t when k <= plan k).
 * Every flip of at most d bits inside each table's prefix is probed. */
int nd_plan_probe_count(const nd_plan *plan, unsigned k, uint64_t *out);

#endif /* ND_PLAN_H */
