/*
 * bdb_ref.c — the in-memory reference of Manku's method, no persistence.
 *
 * The public API does not expose a plan's permutations, so the reference
 * builds its own one-level design: the 64 bits are cut into b blocks
 * (widths 64/b, the first 64 mod b blocks one bit wider, block 0 the most
 * significant); each of the C(b, m) tables, m = b - k, moves one m-subset
 * of blocks to the top in their original order, followed by the other
 * blocks, and its prefix p is the width of the chosen blocks. With at most
 * k differing bits some m blocks are equal (pigeonhole), so some table has
 * equal top p bits.
 *
 * Each table is the sorted array of permuted fingerprints (LSD radix sort,
 * four 16-bit passes) plus a direct index: start[P] is the first entry
 * whose top r bits are P, r = min(p, floor(log2 n)), so a probe is one
 * index load and a short sequential scan — what DESIGN.md measured as the
 * fastest in-memory form. Entries that share the top r bits but not the
 * top p only cost a popcount each.
 *
 * Queries beyond the design distance (qk > k) probe every prefix within d
 * flipped bits among the r index bits, where d is the largest number of
 * differing bits the m least-disturbed blocks can hold when qk bits are
 * spread over b blocks (an even spread maximises it). Matches found
 * through several tables are merged by sorting the (short) result list.
 */
#include <stdlib.h>
#include <string.h>

#include "bdb.h"

#define REF_MAX_TABLES 128
#define REF_MAX_BLOCKS 8
#define REF_MAX_INDEX_BITS 26

typedef struct ref_table {
    unsigned order[REF_MAX_BLOCKS]; /* block indices, top first */
    unsigned prefix;                /* p: bits of the chosen blocks */
    uint64_t *v;                    /* sorted permuted fingerprints */
    uint32_t *start;                /* 2^r + 1 offsets */
} ref_table;

struct bdb_ref {
    unsigned k, b, m, t, r;
    unsigned width[REF_MAX_BLOCKS], shift[REF_MAX_BLOCKS];
    size_t n;
    ref_table tab[REF_MAX_TABLES];
};

static uint64_t low_mask(unsigned w)
{
    return w >= 64 ? ~0ull : (1ull << w) - 1;
}

static uint64_t perm_apply(const bdb_ref *r, const ref_table *t, uint64_t fp)
{
    uint64_t out = 0;
    for (unsigned i = 0; i < r->b; i++) {
        unsigned blk = t->order[i];
        out = (out << r->width[blk]) | ((fp >> r->shift[blk]) & low_mask(r->width[blk]));
    }
    return out;
}

static uint64_t perm_invert(const bdb_ref *r, const ref_table *t, uint64_t pv)
{
    uint64_t fp = 0;
    unsigned pos = 64;
    for (unsigned i = 0; i < r->b; i++) {
        unsigned blk = t->order[i];
        pos -= r->width[blk];
        fp |= ((pv >> pos) & low_mask(r->width[blk])) << r->shift[blk];
    }
    return fp;
}

/* Sort v[0..n) in place through tmp (LSD radix, 16-bit digits). */
static void radix_sort(uint64_t *v, uint64_t *tmp, size_t n, uint32_t *count)
{
    uint64_t *src = v, *dst = tmp;
    for (unsigned pass = 0; pass < 4; pass++) {
        unsigned sh = 16 * pass;
        memset(count, 0, 65536 * sizeof *count);
        for (size_t i = 0; i < n; i++) count[(src[i] >> sh) & 0xffff]++;
        uint32_t sum = 0;
        for (unsigned d = 0; d < 65536; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[(src[i] >> sh) & 0xffff]++] = src[i];
        uint64_t *x = src;
        src = dst;
        dst = x;
    }
    /* four passes: the result is back in v */
}

/* Next m-subset of {0..b-1} in lexicographic order; 0 when done. */
static int next_subset(unsigned *c, unsigned m, unsigned b)
{
    int i = (int)m - 1;
    while (i >= 0 && c[i] == b - m + (unsigned)i) i--;
    if (i < 0) return 0;
    c[i]++;
    for (unsigned j = (unsigned)i + 1; j < m; j++) c[j] = c[j - 1] + 1;
    return 1;
}

bdb_ref *bdb_ref_new(const uint64_t *v, size_t n, unsigned k, unsigned blocks)
{
    if (blocks < 2 || blocks > REF_MAX_BLOCKS || k >= blocks || n == 0 || n >= UINT32_MAX)
        return NULL;
    bdb_ref *r = calloc(1, sizeof *r);
    uint64_t *tmp = malloc(n * sizeof *tmp);
    uint32_t *count = malloc(65536 * sizeof *count);
    if (!r || !tmp || !count) goto fail;
    r->k = k;
    r->b = blocks;
    r->m = blocks - k;
    r->n = n;
    unsigned shift = 64;
    for (unsigned i = 0; i < blocks; i++) {
        r->width[i] = 64 / blocks + (i < 64 % blocks);
        shift -= r->width[i];
        r->shift[i] = shift;
    }
    unsigned lg = 0;
    while (lg < 63 && (2ull << lg) <= n) lg++;
    unsigned c[REF_MAX_BLOCKS];
    for (unsigned i = 0; i < r->m; i++) c[i] = i;
    unsigned pmin = 64;
    do {
        if (r->t == REF_MAX_TABLES) goto fail;
        ref_table *t = &r->tab[r->t++];
        unsigned used[REF_MAX_BLOCKS] = {0}, o = 0;
        for (unsigned i = 0; i < r->m; i++) {
            t->order[o++] = c[i];
            used[c[i]] = 1;
            t->prefix += r->width[c[i]];
        }
        for (unsigned i = 0; i < blocks; i++)
            if (!used[i]) t->order[o++] = i;
        if (t->prefix < pmin) pmin = t->prefix;
    } while (next_subset(c, r->m, blocks));
    r->r = pmin < lg ? pmin : lg;
    if (r->r > REF_MAX_INDEX_BITS) r->r = REF_MAX_INDEX_BITS;
    if (r->r < 1) r->r = 1;
    size_t nb = (size_t)1 << r->r;
    for (unsigned ti = 0; ti < r->t; ti++) {
        ref_table *t = &r->tab[ti];
        t->v = malloc(n * sizeof *t->v);
        t->start = malloc((nb + 1) * sizeof *t->start);
        if (!t->v || !t->start) goto fail;
        for (size_t i = 0; i < n; i++) t->v[i] = perm_apply(r, t, v[i]);
        radix_sort(t->v, tmp, n, count);
        size_t j = 0;
        for (size_t bkt = 0; bkt < nb; bkt++) {
            t->start[bkt] = (uint32_t)j;
            while (j < n && (t->v[j] >> (64 - r->r)) == bkt) j++;
        }
        t->start[nb] = (uint32_t)n;
    }
    free(tmp);
    free(count);
    return r;
fail:
    free(tmp);
    free(count);
    bdb_ref_free(r);
    return NULL;
}

void bdb_ref_free(bdb_ref *r)
{
    if (!r) return;
    for (unsigned i = 0; i < r->t; i++) {
        free(r->tab[i].v);
        free(r->tab[i].start);
    }
    free(r);
}

unsigned bdb_ref_tables(const bdb_ref *r)
{
    return r->t;
}

unsigned bdb_ref_prefix_min(const bdb_ref *r)
{
    unsigned p = 64;
    for (unsigned i = 0; i < r->t; i++)
        if (r->tab[i].prefix < p) p = r->tab[i].prefix;
    return p;
}

size_t bdb_ref_bytes(const bdb_ref *r)
{
    return r->t * (r->n * sizeof(uint64_t) + (((size_t)1 << r->r) + 1) * sizeof(uint32_t));
}

static int push(bdb_ref_scratch *s, uint64_t v)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        uint64_t *p = realloc(s->v, nc * sizeof *p);
        if (!p) return -1;
        s->v = p;
        s->cap = nc;
    }
    s->v[s->n++] = v;
    return 0;
}

typedef struct probe_ctx {
    const bdb_ref *r;
    const ref_table *t;
    uint64_t pq; /* permuted query */
    unsigned qk;
    bdb_ref_scratch *s;
} probe_ctx;

static int probe(const probe_ctx *c, uint64_t bucket)
{
    const uint64_t *v = c->t->v;
    for (uint32_t i = c->t->start[bucket], e = c->t->start[bucket + 1]; i < e; i++)
        if ((unsigned)__builtin_popcountll(v[i] ^ c->pq) <= c->qk)
            if (push(c->s, perm_invert(c->r, c->t, v[i]))) return -1;
    return 0;
}

/* Every bucket within d flips of `bucket`, each flip set once. */
static int probe_flips(const probe_ctx *c, uint64_t bucket, unsigned d, unsigned from)
{
    if (probe(c, bucket)) return -1;
    if (d == 0) return 0;
    for (unsigned bit = from; bit < c->r->r; bit++)
        if (probe_flips(c, bucket ^ (1ull << bit), d - 1, bit + 1)) return -1;
    return 0;
}

size_t bdb_ref_query(const bdb_ref *r, uint64_t q, unsigned qk, bdb_ref_scratch *s)
{
    unsigned d = 0;
    if (qk > r->k) {
        unsigned fl = qk / r->b, rem = qk % r->b;
        d = r->m * fl + (r->m > r->b - rem ? r->m - (r->b - rem) : 0);
    }
    s->n = 0;
    for (unsigned ti = 0; ti < r->t; ti++) {
        probe_ctx c = {r, &r->tab[ti], perm_apply(r, &r->tab[ti], q), qk, s};
        if (probe_flips(&c, c.pq >> (64 - r->r), d, 0)) return SIZE_MAX;
    }
    if (s->n > 1) {
        qsort(s->v, s->n, sizeof *s->v, bdb_cmp_u64);
        size_t w = 1;
        for (size_t i = 1; i < s->n; i++)
            if (s->v[i] != s->v[w - 1]) s->v[w++] = s->v[i];
        s->n = w;
    }
    return s->n;
}
