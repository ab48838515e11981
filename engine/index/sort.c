/*
 * sort.c — radix sorts (see sort.h).
 *
 * A large array is first split by the top MSD_BITS bits of its keys (one
 * counting pass and one scatter, both stable); each bucket, about 16k
 * keys at a load chunk's 8M and so in the CPU's L2 cache, is then sorted
 * by an LSD radix sort of its bytes and copied back. Eight LSD passes
 * over the whole array move it through memory sixteen times; this moves
 * it about three times. 8M random keys, one core: 0.151 -> 0.115 s
 * (sort_items 0.214 -> 0.133 s); 11 bits scatter to too many pages at
 * once (0.147 s), 8 bits leave buckets past L2 for items (0.147 s). Keys
 * already grouped by their top bits (sorted fingerprints under a
 * permutation that keeps their top block on top, as 4 of the 10 tables
 * of the k=3 design do) skip the scatter (0.151 -> 0.097 s).
 *
 * Callers: db_core.c, db_batch.c, db_import.c, db_load.c, join.c,
 * expire_walk.c (sort_strings) (and
 * through sort_cmp_u64 qsort in fp_text.c, resemble.c, cluster.c).
 */
#include "sort.h"

#include <string.h>

#include "nd_bytes.h"

#define MSD_BITS 9
/* Below this many keys, LSD over the whole array (in cache anyway). */
#define MSD_MIN (1u << 16)

/* LSD, one body for both element types: KEY(x) reads the key of an
 * element. The eight byte histograms are counted in one read of the keys,
 * not one read a pass; a pass whose byte is the same in every key moves
 * nothing (the top byte within a bucket). The result ends in a. */
#define LSD_BODY(T, KEY)                                                       \
    size_t count[8][256];                                                      \
    int moved = 0;                                                             \
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

/* MSD split, then LSD per bucket (LSD: the LSD sort of the type). */
#define MSD_BODY(T, KEY, LSD)                                                  \
    size_t start[(1u << MSD_BITS) + 1], pos[1u << MSD_BITS];                   \
    if (n < MSD_MIN) {                                                         \
        LSD(a, tmp, n);                                                        \
        return;                                                                \
    }                                                                          \
    memset(pos, 0, sizeof pos);                                                \
    size_t grouped = 1, prev = 0;                                              \
    for (size_t i = 0; i < n; i++) {                                           \
        size_t b = (size_t)(KEY(a[i]) >> (64 - MSD_BITS));                     \
        pos[b]++;                                                              \
        grouped &= b >= prev;                                                  \
        prev = b;                                                              \
    }                                                                          \
    size_t sum = 0;                                                            \
    for (size_t b = 0; b < (1u << MSD_BITS); b++) {                            \
        start[b] = sum;                                                        \
        sum += pos[b];                                                         \
        pos[b] = start[b];                                                     \
    }                                                                          \
    start[1u << MSD_BITS] = n;                                                 \
    if (grouped) {                                                             \
        for (size_t b = 0; b < (1u << MSD_BITS); b++)                          \
            LSD(a + start[b], tmp + start[b], start[b + 1] - start[b]);        \
        return;                                                                \
    }                                                                          \
    for (size_t i = 0; i < n; i++) tmp[pos[KEY(a[i]) >> (64 - MSD_BITS)]++] = a[i]; \
    for (size_t b = 0; b < (1u << MSD_BITS); b++) {                            \
        size_t m = start[b + 1] - start[b];                                    \
        LSD(tmp + start[b], a + start[b], m);                                  \
        memcpy(a + start[b], tmp + start[b], m * sizeof *a);                   \
    }

#define ITEM_KEY(x) ((x).key)
#define U64_KEY(x) (x)

static void lsd_items(sort_item *a, sort_item *tmp, size_t n) { LSD_BODY(sort_item, ITEM_KEY) }
static void lsd_u64(uint64_t *a, uint64_t *tmp, size_t n) { LSD_BODY(uint64_t, U64_KEY) }

void sort_items(sort_item *a, sort_item *tmp, size_t n) { MSD_BODY(sort_item, ITEM_KEY, lsd_items) }

void sort_u64(uint64_t *a, uint64_t *tmp, size_t n) { MSD_BODY(uint64_t, U64_KEY, lsd_u64) }

size_t sort_u64_unique(uint64_t *a, uint64_t *tmp, size_t n)
{
    sort_u64(a, tmp, n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || a[i] != a[m - 1]) a[m++] = a[i];
    return m;
}

/* ---- byte strings ------------------------------------------------------ */

typedef struct strings {
    const char *base;
    const uint64_t *off;
    size_t skip;
} strings;

static size_t str_len(const strings *s, uint32_t j) { return s->off[j + 1] - s->off[j] - s->skip; }
static const char *str_at(const strings *s, uint32_t j) { return s->base + s->off[j] + s->skip; }

/* String j's bytes [d, d + 7), zero-padded, then how many of its bytes
 * lie past d (at most 8): keys order as the strings do, and two strings
 * whose keys are equal and whose count is 8 are equal up to d + 7. */
static uint64_t str_key(const strings *s, uint32_t j, size_t d)
{
    size_t len = str_len(s, j), left = len > d ? len - d : 0;
    const unsigned char *p = (const unsigned char *)str_at(s, j) + d;
    uint64_t k = 0;
    for (size_t i = 0; i < 7; i++) k = k << 8 | (i < left ? p[i] : 0);
    return k << 8 | (left < 8 ? left : 8);
}

static int str_less(const strings *s, uint32_t a, uint32_t b, size_t d)
{
    return nd_bytes_cmp(str_at(s, a) + d, str_len(s, a) - d, str_at(s, b) + d,
                        str_len(s, b) - d) < 0;
}

/* Sort items[0..n), each string equal to the others before byte d. */
static void sort_strings_from(const strings *s, sort_item *items, sort_item *tmp, size_t n,
                              size_t d)
{
    if (n <= 16) { /* insertion: ties are mostly pairs */
        for (size_t i = 1; i < n; i++) {
            sort_item x = items[i];
            size_t j = i;
            for (; j > 0 && str_less(s, x.idx, items[j - 1].idx, d); j--) items[j] = items[j - 1];
            items[j] = x;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) items[i].key = str_key(s, items[i].idx, d);
    sort_items(items, tmp, n);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && items[j].key == items[i].key; j++) {}
        if (j - i > 1 && (items[i].key & 0xff) == 8)
            sort_strings_from(s, items + i, tmp, j - i, d + 7);
    }
}

void sort_strings(const char *base, const uint64_t *off, size_t skip, size_t n,
                  uint32_t *order, sort_item *items, sort_item *tmp)
{
    strings s = {base, off, skip};
    size_t common = n ? str_len(&s, 0) : 0;
    for (uint32_t j = 1; j < n && common; j++) {
        size_t len = str_len(&s, j), c = 0;
        const char *a = str_at(&s, 0), *b = str_at(&s, j);
        while (c < common && c < len && a[c] == b[c]) c++;
        common = c;
    }
    for (size_t i = 0; i < n; i++) items[i].idx = (uint32_t)i;
    sort_strings_from(&s, items, tmp, n, common);
    for (size_t i = 0; i < n; i++) order[i] = items[i].idx;
}

int sort_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
