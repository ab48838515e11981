/*
 * plan.c — table plans: blocks, permutations and the planner.
 *
 * Manku, Jain, Das Sarma (WWW 2007). A one-level design for distance k
 * splits the 64 bits into b contiguous blocks (sizes as equal as possible,
 * the larger ones first) and has one table per choice of b-k blocks: the
 * chosen blocks move to the top (in their original order), the others
 * follow; the prefix p_i is the bits of the chosen blocks. If popcount(a^b)
 * <= k, at most k blocks hold a difference, so the b-k untouched ones are
 * the prefix of some table: t = C(b, k) tables find every neighbour.
 * A two-level design splits into b1 blocks, chooses b1-k of them, then
 * splits the remaining bits (the k unchosen blocks, concatenated) into b2
 * blocks and chooses b2-k of those to follow: t = C(b1,k) * C(b2,k).
 *
 * Beyond k (query distance k' = k + d): flipping every set of at most d
 * bits inside the top p_i bits of every table still finds every neighbour.
 * Proof: at each level, if at least k blocks hold a difference, the table
 * that leaves out the k blocks with the most differences has at most k'-k
 * differences in its chosen blocks (each left-out block holds >= 1); if
 * fewer than k blocks differ, some choice of blocks holds none. At level 2
 * the same argument applies to the differences left in the unchosen region
 * (D of them): the chosen level-2 blocks hold <= max(0, D - k), and with
 * the level-1 part (k' - D) the prefix holds <= k' - k. tests/test_plan.c
 * checks this on random pairs.
 * A tighter bound (nd_plan_flip_bound): k' differences over b blocks put
 * at most fewest(k', b, m) = m*q + max(0, m - (b - r)) (k' = q*b + r) into
 * the m blocks that hold the fewest, and some table has exactly those m on
 * top. Two levels: the level-1 choice holds a <= A = fewest(k', b1, m1),
 * the level-2 choice at most fewest(k' - a, b2, m2); fewest grows by at
 * most 1 per difference, so a + fewest(k' - a, ...) is largest at a = A.
 * For k=3 with 4 blocks and k'=6 that is 1 flipped bit per probe instead
 * of 3: 17 probes per table instead of 697.
 *
 * Cost model (arbitrary units = decoding one entry): a query does one probe
 * per table; a probe costs a seek (PLAN_SEEK_COST) plus decoding the larger
 * of the expected candidates N / 2^p_i and one run (PLAN_RUN_ENTRIES).
 * Space: each table stores every fingerprint once at about
 * 64 - log2 N + 3 bits. The planner picks the cheapest design with at most
 * PLAN_DEFAULT_MAX_TABLES tables (or the fewest tables k allows, if more):
 * disk is cheap, but each table is written on every insert.
 *
 * Invariant: every permutation is a bijection of the 64 bits
 * (nd_plan_decode checks a stored plan). Callers: db_open.c (choose, encode
 * and decode a store's plan), every module that permutes fingerprints
 * (nd_perm_apply, nd_perm_invert), db_query.c (flip bound, probe count)
 * and join.c (a plan of its own).
 */
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd_error.h"

#define PLAN_SEEK_COST 200.0
#define PLAN_RUN_ENTRIES 128.0
#define PLAN_DEFAULT_MAX_TABLES 32u
#define PLAN_MAX_BLOCKS 64u

/* A design before it becomes permutations. */
typedef struct design {
    unsigned levels, b1, b2, t;
} design;

static uint64_t binom(unsigned n, unsigned k)
{
    if (k > n) return 0;
    uint64_t r = 1;
    for (unsigned i = 1; i <= k; i++) r = r * (n - k + i) / i;
    return r;
}

/* Split `count` items into `b` groups, larger groups first: sizes[j]. */
static void split_sizes(unsigned *sizes, unsigned count, unsigned b)
{
    for (unsigned j = 0; j < b; j++) sizes[j] = count / b + (j < count % b);
}

/* Next combination of r out of n in lexicographic order; 0 when done. */
static int next_comb(unsigned *c, unsigned r, unsigned n)
{
    int i = (int)r - 1;
    while (i >= 0 && c[i] == n - r + (unsigned)i) i--;
    if (i < 0) return 0;
    c[i]++;
    for (unsigned j = (unsigned)i + 1; j < r; j++) c[j] = c[j - 1] + 1;
    return 1;
}

/* Choose blocks `chosen` (sorted, r of them) out of a sequence of bits
 * `seq` (most significant first) split into b blocks: append the chosen
 * blocks' bits to out, the others to rest. */
static void pick_blocks(const uint8_t *seq, unsigned nbits, unsigned b,
                        const unsigned *chosen, unsigned r, uint8_t *out,
                        unsigned *nout, uint8_t *rest, unsigned *nrest)
{
    unsigned sizes[PLAN_MAX_BLOCKS], start = 0, ci = 0;
    split_sizes(sizes, nbits, b);
    for (unsigned j = 0; j < b; j++) {
        int is_chosen = ci < r && chosen[ci] == j;
        if (is_chosen) ci++;
        for (unsigned i = 0; i < sizes[j]; i++) {
            if (is_chosen) out[(*nout)++] = seq[start + i];
            else rest[(*nrest)++] = seq[start + i];
        }
        start += sizes[j];
    }
}

/* Turn "destination bit 63-j takes source bit order[j]" into segments. */
static int perm_from_order(nd_perm *p, const uint8_t *order, unsigned prefix)
{
    p->nsegs = 0;
    p->prefix_bits = prefix;
    for (unsigned j = 0; j < 64;) {
        unsigned run = 1;
        while (j + run < 64 && order[j + run] + run == order[j]) run++;
        if (p->nsegs == ND_PLAN_MAX_SEGS)
            return nd_err_set(ND_EINTERNAL, "plan: permutation needs more than %d segments",
                              ND_PLAN_MAX_SEGS);
        nd_seg *s = &p->segs[p->nsegs++];
        s->width = (uint8_t)run;
        s->src = (uint8_t)(order[j + run - 1]);
        s->dst = (uint8_t)(63 - (j + run - 1));
        j += run;
    }
    return ND_OK;
}

uint64_t nd_perm_apply(const nd_perm *p, uint64_t fp)
{
    uint64_t out = 0;
    for (unsigned i = 0; i < p->nsegs; i++) {
        const nd_seg *s = &p->segs[i];
        uint64_t mask = s->width == 64 ? ~0ull : ((1ull << s->width) - 1);
        out |= ((fp >> s->src) & mask) << s->dst;
    }
    return out;
}

uint64_t nd_perm_invert(const nd_perm *p, uint64_t permuted)
{
    uint64_t out = 0;
    for (unsigned i = 0; i < p->nsegs; i++) {
        const nd_seg *s = &p->segs[i];
        uint64_t mask = s->width == 64 ? ~0ull : ((1ull << s->width) - 1);
        out |= ((permuted >> s->dst) & mask) << s->src;
    }
    return out;
}

/* Build every table of design d into plan (plan->info filled by caller). */
static int build_tables(nd_plan *plan, const design *d, unsigned k)
{
    uint8_t all[64];
    for (unsigned i = 0; i < 64; i++) all[i] = (uint8_t)(63 - i);
    unsigned t = 0;
    unsigned r1 = d->b1 - k;
    unsigned c1[PLAN_MAX_BLOCKS];
    for (unsigned i = 0; i < r1; i++) c1[i] = i;
    do {
        uint8_t top[64], rest[64];
        unsigned ntop = 0, nrest = 0;
        pick_blocks(all, 64, d->b1, c1, r1, top, &ntop, rest, &nrest);
        if (d->levels == 1) {
            uint8_t order[64];
            memcpy(order, top, ntop);
            memcpy(order + ntop, rest, nrest);
            ND_FORWARD(perm_from_order(&plan->table[t++], order, ntop));
            continue;
        }
        unsigned r2 = d->b2 - k;
        unsigned c2[PLAN_MAX_BLOCKS];
        for (unsigned i = 0; i < r2; i++) c2[i] = i;
        do {
            uint8_t order[64], rest2[64];
            unsigned n2 = ntop, nrest2 = 0;
            memcpy(order, top, ntop);
            pick_blocks(rest, nrest, d->b2, c2, r2, order, &n2, rest2, &nrest2);
            unsigned prefix = n2;
            memcpy(order + n2, rest2, nrest2);
            ND_FORWARD(perm_from_order(&plan->table[t++], order, prefix));
        } while (next_comb(c2, r2, d->b2));
    } while (next_comb(c1, r1, d->b1));
    return ND_OK;
}

/* Every one- and two-level design for k with at most ND_MAX_TABLES tables. */
static size_t list_designs(design *out, size_t cap, unsigned k)
{
    size_t n = 0;
    if (k == 0) {
        if (cap) out[0] = (design){1, 1, 0, 1};
        return 1;
    }
    for (unsigned b = k + 1; b <= PLAN_MAX_BLOCKS; b++) {
        uint64_t t = binom(b, k);
        if (t > ND_MAX_TABLES) break;
        if (n < cap) out[n] = (design){1, b, 0, (unsigned)t};
        n++;
    }
    for (unsigned b1 = k + 1; b1 <= PLAN_MAX_BLOCKS; b1++) {
        uint64_t t1 = binom(b1, k);
        if (t1 * (k + 1) > ND_MAX_TABLES) break;
        unsigned rest_bits = 64 - (64 / b1) * (b1 - k); /* approx; checked below */
        for (unsigned b2 = k + 1; b2 <= rest_bits && b2 <= PLAN_MAX_BLOCKS; b2++) {
            uint64_t t = t1 * binom(b2, k);
            if (t > ND_MAX_TABLES) break;
            if (n < cap) out[n] = (design){2, b1, b2, (unsigned)t};
            n++;
        }
    }
    return n;
}

/* Fill info (prefix range, model cost) from built tables. */
static void fill_info(nd_plan *plan, const design *d, unsigned k, uint64_t n)
{
    nd_plan_info *in = &plan->info;
    double cand = 0, cost = 0;
    in->k = k;
    in->tables = d->t;
    in->levels = d->levels;
    in->blocks[0] = d->b1;
    in->blocks[1] = d->b2;
    in->prefix_min = 64;
    in->prefix_max = 0;
    for (unsigned i = 0; i < d->t; i++) {
        unsigned p = plan->table[i].prefix_bits;
        double c = (double)n / ldexp(1.0, (int)p);
        if (p < in->prefix_min) in->prefix_min = p;
        if (p > in->prefix_max) in->prefix_max = p;
        cand += c;
        cost += PLAN_SEEK_COST + (c > PLAN_RUN_ENTRIES ? c : PLAN_RUN_ENTRIES);
    }
    in->candidates = cand / d->t;
    in->cost = cost;
    double bits = 64.0 - log2((double)(n > 1 ? n : 2)) + 3.0;
    in->bytes_per_doc = d->t * bits / 8.0;
}

/* Build design d; designs whose blocks would be empty are rejected. */
static int build_design(nd_plan *out, const design *d, unsigned k, uint64_t n)
{
    memset(out, 0, sizeof *out);
    if (d->levels == 2) {
        unsigned sizes[PLAN_MAX_BLOCKS], rest = 0;
        split_sizes(sizes, 64, d->b1);
        for (unsigned j = d->b1 - k; j < d->b1; j++) rest += sizes[j];
        if (d->b2 > rest) return ND_EINVAL; /* a level-2 block would be empty */
    }
    ND_FORWARD(build_tables(out, d, k));
    fill_info(out, d, k, n);
    return ND_OK;
}

static int cmp_info(const nd_plan_info *a, const nd_plan_info *b)
{
    if (a->cost != b->cost) return a->cost < b->cost ? -1 : 1;
    if (a->tables != b->tables) return a->tables < b->tables ? -1 : 1;
    return (int)a->levels - (int)b->levels;
}

static int cmp_info_qsort(const void *a, const void *b) { return cmp_info(a, b); }

int nd_plan_choose(nd_plan *out, unsigned k, uint64_t n, unsigned force_t)
{
    design ds[256];
    ND_RETURN_IF(k > ND_MAX_PLAN_K, ND_EINVAL, "plan: k=%u exceeds the maximum design distance %u",
                 k, ND_MAX_PLAN_K);
    ND_RETURN_IF(n == 0, ND_EINVAL, "plan: expected number of documents must be > 0");
    size_t nd = list_designs(ds, sizeof ds / sizeof ds[0], k);
    if (nd > sizeof ds / sizeof ds[0]) nd = sizeof ds / sizeof ds[0];
    unsigned min_t = ND_MAX_TABLES;
    for (size_t i = 0; i < nd; i++)
        if (ds[i].t < min_t) min_t = ds[i].t;
    unsigned max_t = PLAN_DEFAULT_MAX_TABLES > min_t ? PLAN_DEFAULT_MAX_TABLES : min_t;

    nd_plan *cand = malloc(sizeof *cand);
    ND_RETURN_IF(!cand, ND_ENOMEM, "plan: out of memory");
    int found = 0;
    for (size_t i = 0; i < nd; i++) {
        if (force_t ? ds[i].t != force_t : ds[i].t > max_t) continue;
        if (build_design(cand, &ds[i], k, n) < 0) continue;
        if (!found || cmp_info(&cand->info, &out->info) < 0) {
            *out = *cand;
            found = 1;
        }
    }
    free(cand);
    if (found) return ND_OK;
    char avail[512];
    size_t len = 0;
    avail[0] = '\0';
    for (size_t i = 0; i < nd && len < sizeof avail - 8; i++)
        len += (size_t)snprintf(avail + len, sizeof avail - len, "%s%u", i ? ", " : "", ds[i].t);
    return nd_err_set(ND_EINVAL, "plan: no design for k=%u with %u tables (available: %s)", k,
                      force_t, avail);
}

int nd_plan_candidates(nd_plan_info *out, size_t cap, size_t *out_n, unsigned k, uint64_t n)
{
    design ds[256];
    ND_RETURN_IF(k > ND_MAX_PLAN_K, ND_EINVAL, "plan: k=%u exceeds the maximum design distance %u",
                 k, ND_MAX_PLAN_K);
    ND_RETURN_IF(n == 0, ND_EINVAL, "plan: expected number of documents must be > 0");
    ND_RETURN_IF(!out_n || (cap && !out), ND_EINVAL, "plan: NULL output");
    size_t nd = list_designs(ds, sizeof ds / sizeof ds[0], k);
    if (nd > sizeof ds / sizeof ds[0]) nd = sizeof ds / sizeof ds[0];
    nd_plan_info *all = malloc((nd ? nd : 1) * sizeof *all);
    nd_plan *tmp = malloc(sizeof *tmp);
    size_t m = 0;
    int rc = ND_OK;
    if (!all || !tmp) {
        rc = nd_err_set(ND_ENOMEM, "plan: out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < nd; i++)
        if (build_design(tmp, &ds[i], k, n) == ND_OK) all[m++] = tmp->info;
    qsort(all, m, sizeof *all, cmp_info_qsort);
    memcpy(out, all, (m < cap ? m : cap) * sizeof *all);
    *out_n = m;
cleanup:
    free(all);
    free(tmp);
    return rc;
}

/* Most differences the m of b blocks holding the fewest can hold, when k
 * differences are spread over the b blocks. */
static unsigned fewest(unsigned k, unsigned b, unsigned m)
{
    unsigned q = k / b, r = k % b;
    return m * q + (m > b - r ? m - (b - r) : 0);
}

unsigned nd_plan_flip_bound(const nd_plan *plan, unsigned k)
{
    const nd_plan_info *in = &plan->info;
    if (k <= in->k) return 0;
    unsigned loose = k - in->k;
    if (in->blocks[0] <= in->k) return loose;
    unsigned a = fewest(k, in->blocks[0], in->blocks[0] - in->k), bound = a;
    if (in->levels == 2) {
        if (in->blocks[1] <= in->k) return loose;
        bound += fewest(k - a, in->blocks[1], in->blocks[1] - in->k);
    }
    return bound < loose ? bound : loose;
}

int nd_plan_probe_count(const nd_plan *plan, unsigned k, uint64_t *out)
{
    unsigned d = nd_plan_flip_bound(plan, k);
    uint64_t total = 0;
    for (unsigned i = 0; i < plan->info.tables; i++) {
        uint64_t sum = 0;
        for (unsigned j = 0; j <= d; j++) sum += binom(plan->table[i].prefix_bits, j);
        total += sum;
    }
    *out = total;
    return ND_OK;
}

/* ---- text form ---------------------------------------------------- */

int nd_plan_encode(char *out, size_t cap, const nd_plan *plan)
{
    const nd_plan_info *in = &plan->info;
    size_t len = 0;
    int w = snprintf(out, cap, "plan1 k=%u t=%u levels=%u b=%u,%u\n", in->k, in->tables,
                     in->levels, in->blocks[0], in->blocks[1]);
    if (w < 0 || (size_t)w >= cap) goto toolong;
    len = (size_t)w;
    for (unsigned i = 0; i < in->tables; i++) {
        const nd_perm *p = &plan->table[i];
        w = snprintf(out + len, cap - len, "p=%u segs=", p->prefix_bits);
        if (w < 0 || (size_t)w >= cap - len) goto toolong;
        len += (size_t)w;
        for (unsigned s = 0; s < p->nsegs; s++) {
            w = snprintf(out + len, cap - len, "%s%u:%u:%u", s ? "," : "", p->segs[s].src,
                         p->segs[s].dst, p->segs[s].width);
            if (w < 0 || (size_t)w >= cap - len) goto toolong;
            len += (size_t)w;
        }
        if (len + 1 >= cap) goto toolong;
        out[len++] = '\n';
        out[len] = '\0';
    }
    return ND_OK;
toolong:
    return nd_err_set(ND_ELIMIT, "plan: encoding needs more than %zu bytes", cap);
}

/* Parse an unsigned decimal at *s (advancing it); -1 on failure. */
static long parse_num(const char **s, const char *end)
{
    long v = 0;
    const char *p = *s;
    if (p >= end || *p < '0' || *p > '9') return -1;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > 1000000) return -1;
        p++;
    }
    *s = p;
    return v;
}

static int expect(const char **s, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(end - *s) < n || memcmp(*s, lit, n) != 0) return -1;
    *s += n;
    return 0;
}

int nd_plan_decode(nd_plan *out, const char *text, size_t len)
{
    const char *s = text, *end = text + len;
    long k, t, lv, b1, b2;
    memset(out, 0, sizeof *out);
#define BAD(what) return nd_err_set(ND_ECORRUPT, "plan record: %s", what)
    if (expect(&s, end, "plan1 k=") || (k = parse_num(&s, end)) < 0 || expect(&s, end, " t=") ||
        (t = parse_num(&s, end)) < 0 || expect(&s, end, " levels=") ||
        (lv = parse_num(&s, end)) < 0 || expect(&s, end, " b=") ||
        (b1 = parse_num(&s, end)) < 0 || expect(&s, end, ",") ||
        (b2 = parse_num(&s, end)) < 0 || expect(&s, end, "\n"))
        BAD("bad header line");
    if (k > (long)ND_MAX_PLAN_K || t < 1 || t > (long)ND_MAX_TABLES || lv < 1 || lv > 2 ||
        b1 > (long)PLAN_MAX_BLOCKS || b2 > (long)PLAN_MAX_BLOCKS)
        BAD("header values out of range");
    out->info.k = (unsigned)k;
    out->info.tables = (unsigned)t;
    out->info.levels = (unsigned)lv;
    out->info.blocks[0] = (unsigned)b1;
    out->info.blocks[1] = (unsigned)b2;
    out->info.prefix_min = 64;
    for (long i = 0; i < t; i++) {
        nd_perm *p = &out->table[i];
        long pb;
        uint64_t seen_src = 0, seen_dst = 0;
        unsigned bits = 0;
        if (expect(&s, end, "p=") || (pb = parse_num(&s, end)) < 0 || pb > 64 ||
            expect(&s, end, " segs="))
            BAD("bad table line");
        p->prefix_bits = (unsigned)pb;
        for (;;) {
            long src, dst, w;
            if (p->nsegs == ND_PLAN_MAX_SEGS) BAD("too many segments");
            if ((src = parse_num(&s, end)) < 0 || expect(&s, end, ":") ||
                (dst = parse_num(&s, end)) < 0 || expect(&s, end, ":") ||
                (w = parse_num(&s, end)) < 0)
                BAD("bad segment");
            if (w < 1 || src + w > 64 || dst + w > 64) BAD("segment out of range");
            uint64_t m = w == 64 ? ~0ull : ((1ull << w) - 1);
            if ((seen_src & (m << src)) || (seen_dst & (m << dst)))
                BAD("permutation moves a bit twice");
            seen_src |= m << src;
            seen_dst |= m << dst;
            bits += (unsigned)w;
            p->segs[p->nsegs++] = (nd_seg){(uint8_t)src, (uint8_t)dst, (uint8_t)w};
            if (s < end && *s == ',') {
                s++;
                continue;
            }
            break;
        }
        if (expect(&s, end, "\n")) BAD("table line does not end");
        if (bits != 64) BAD("permutation does not cover 64 bits");
        if (p->prefix_bits < out->info.prefix_min) out->info.prefix_min = p->prefix_bits;
        if (p->prefix_bits > out->info.prefix_max) out->info.prefix_max = p->prefix_bits;
    }
    if (s != end && !(s + 1 == end && *s == '\0')) BAD("trailing bytes");
#undef BAD
    return ND_OK;
}
