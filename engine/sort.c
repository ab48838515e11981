/*
 * sort.c — LSD radix sorts (see sort.h).
 */
#include "sort.h"

#include <string.h>

/* One body for both element types: KEY(x) reads the key of an element.
 * The eight byte histograms are counted in one read of the keys, not one
 * read a pass (8M keys of a load chunk, per table: about a third of the
 * memory traffic of the sort); a pass whose byte is the same in every key
 * moves nothing. */
#define RADIX_SORT_BODY(T, KEY)                                                \
    size_t count[8][256];                                                      \
    if (n < 2) return;                                                         \
    memset(count, 0, sizeof count);                                            \
    for (size_t i = 0; i < n; i++) {                                           \
        uint64_t k = KEY(a[i]);                                                \
        for (unsigned pass = 0; pass < 8; pass++) count[pass][(k >> (pass * 8)) & 0xff]++; \
    }                                                                          \
    for (unsigned pass = 0; pass < 8; pass++) {                                \
        unsigned shift = pass * 8;                                             \
        size_t *c = count[pass];                                               \
        if (c[(KEY(a[0]) >> shift) & 0xff] == n) continue;                     \
        size_t sum = 0;                                                        \
        for (unsigned b = 0; b < 256; b++) {                                   \
            size_t x = c[b];                                                   \
            c[b] = sum;                                                        \
            sum += x;                                                          \
        }                                                                      \
        for (size_t i = 0; i < n; i++) tmp[c[(KEY(a[i]) >> shift) & 0xff]++] = a[i]; \
        T *swap = a;                                                           \
        a = tmp;                                                               \
        tmp = swap;                                                            \
        moved ^= 1;                                                            \
    }                                                                          \
    if (moved) memcpy(tmp, a, n * sizeof *a); /* result back into the caller's a */

#define ITEM_KEY(x) ((x).key)
#define U64_KEY(x) (x)

void sort_items(sort_item *a, sort_item *tmp, size_t n)
{
    int moved = 0;
    RADIX_SORT_BODY(sort_item, ITEM_KEY)
}

void sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
    int moved = 0;
    RADIX_SORT_BODY(uint64_t, U64_KEY)
}

size_t sort_u64_unique(uint64_t *a, uint64_t *tmp, size_t n)
{
    sort_u64(a, tmp, n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || a[i] != a[m - 1]) a[m++] = a[i];
    return m;
}

int sort_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
