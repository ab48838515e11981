/*
 * sort.h — radix sorts of 64-bit keys (engine internal).
 *
 * Batch mode, the self-join and bulk import sort millions of permuted
 * fingerprints once per table; a radix sort (from 64k keys on, a split
 * by the top 9 bits and then 8 passes of 8 bits within each bucket, a
 * pass skipped when every key has the same byte there; sort.c says why)
 * does it in a few milliseconds per million, several times faster than
 * qsort. Both sorts are stable.
 */
#ifndef ND_SORT_H
#define ND_SORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct sort_item {
    uint64_t key;
    uint32_t idx;
} sort_item;

/* Sort a[0..n) by key, stably, using tmp[0..n) as scratch. */
void sort_items(sort_item *a, sort_item *tmp, size_t n);

/* Sort a[0..n) ascending using tmp[0..n) as scratch. */
void sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

/* Sort ascending and drop repeats; returns the new length. */
size_t sort_u64_unique(uint64_t *a, uint64_t *tmp, size_t n);

/* Order n byte strings by memcmp (a string before every longer one it
 * begins): string j is base[off[j] + skip .. off[j + 1]), and order[i]
 * becomes the index of the i-th smallest. items and tmp are scratch of n
 * each. The strings' common prefix is skipped, then a radix sort of 7
 * bytes and a length at a time, recursing only into ties (expiry sorts
 * 10M document keys this way in a few tenths of a second). */
void sort_strings(const char *base, const uint64_t *off, size_t skip, size_t n,
                  uint32_t *order, sort_item *items, sort_item *tmp);

/* qsort's comparator of uint64_t, ascending: for the small arrays where a
 * radix sort's passes and scratch do not pay. */
int sort_cmp_u64(const void *a, const void *b);

#endif /* ND_SORT_H */
