/*
 * join.c — the self-join of a batch of bare fingerprints.
 *
 * Manku's batch mode applied to one batch: for each table of a plan chosen
 * for (k, n), sort the batch by permuted value (LSD radix sort, 8 passes of
 * 8 bits) and compare every pair inside a run of equal top-p bits. A pair
 * can share prefixes in several tables; it is reported only from the first
 * table where its prefixes are equal, which needs no set of seen pairs:
 * the check re-applies the earlier tables' permutations to the two values
 * (recovered from the permuted ones by inverting the table's permutation).
 * Cost: t sorts of n plus the pairs inside groups (about n^2 / 2^p each).
 *
 * Bounded memory (nd_selfjoin_stream): a table's sort is split into
 * partitions, contiguous ranges of the top h = min(p, 16) permuted bits.
 * A run of equal top-p bits lies inside one range, so every pair the table
 * can report meets in one partition. One pass over the source counts the
 * documents of each of the 2^h values; the ranges are then cut in order,
 * each at about n / P documents for the fewest partitions P the budget
 * allows and never above memory / 32 (a single value holding more is a
 * partition of its own, over the budget); each partition is one more pass
 * that keeps only its documents, then sorts and joins them. Documents
 * enter a partition in index order and the sort is stable, so a partition
 * is exactly its slice of the whole table's sorted order, and the ranges
 * come in increasing order: pairs are reported in the same order as by
 * one sort of everything. When everything fits, a table costs one pass and
 * one sort, as nd_selfjoin always does (it is the stream over an array
 * with no budget).
 *
 * Callers: the public API (nd_selfjoin, nd_selfjoin_stream) and nd_db_batch
 * (the pairs within a batch).
 */
#include <stdlib.h>
#include <string.h>

#include "nd_error.h"
#include "plan.h"
#include "sort.h"

enum { HIST_BITS = 16, READ_CHUNK = 4096 };

typedef struct join_ctx {
    const nd_plan *plan;
    unsigned k;
    size_t n;
    nd_fp_read_cb read;
    void *read_payload;
    nd_pair_cb cb;
    void *payload;
    uint64_t *chunk; /* READ_CHUNK fingerprints from the source */
    sort_item *a, *tmp;
    size_t cap;      /* of a and tmp */
} join_ctx;

static int earlier_table_matches(const nd_plan *plan, unsigned t, uint64_t a, uint64_t b)
{
    for (unsigned e = 0; e < t; e++) {
        const nd_perm *p = &plan->table[e];
        unsigned sh = 64 - p->prefix_bits;
        uint64_t pa = nd_perm_apply(p, a), pb = nd_perm_apply(p, b);
        if (p->prefix_bits == 0 || (sh == 0 ? pa == pb : (pa >> sh) == (pb >> sh))) return 1;
    }
    return 0;
}

/* Every pair within k inside the runs of equal prefixes of a[0..m),
 * sorted under table t. */
static int join_sorted(const join_ctx *j, unsigned t, const sort_item *a, size_t m)
{
    const nd_perm *p = &j->plan->table[t];
    unsigned sh = 64 - p->prefix_bits;
    int rc = 0;
    for (size_t g = 0; g < m && rc == 0;) {
        size_t e = g + 1;
        uint64_t pre = sh >= 64 ? 0 : a[g].key >> sh;
        while (e < m && (sh >= 64 ? 0 : a[e].key >> sh) == pre) e++;
        for (size_t i = g; i < e && rc == 0; i++)
            for (size_t q = i + 1; q < e; q++) {
                unsigned d = (unsigned)__builtin_popcountll(a[i].key ^ a[q].key);
                if (d > j->k) continue;
                uint32_t x = a[i].idx, y = a[q].idx;
                if (t && earlier_table_matches(j->plan, t, nd_perm_invert(p, a[i].key),
                                               nd_perm_invert(p, a[q].key)))
                    continue;
                rc = nd_err_callback(x < y ? j->cb(x, y, d, j->payload)
                                           : j->cb(y, x, d, j->payload), "nd_selfjoin");
                if (rc) break;
            }
        g = e;
    }
    return rc;
}

/* One pass over the source: hist[b] += 1 for each document whose top h
 * permuted bits are b (hist non-NULL), or, with hist NULL, the documents
 * whose top h bits lie in [lo, hi) into j->a; *m gets their number. */
static int pass(join_ctx *j, const nd_perm *p, unsigned h, uint32_t *hist, uint64_t lo,
                uint64_t hi, size_t *m)
{
    size_t got = 0;
    for (size_t s = 0; s < j->n; s += READ_CHUNK) {
        size_t c = j->n - s < READ_CHUNK ? j->n - s : READ_CHUNK;
        int rc = nd_err_callback(j->read(j->chunk, s, c, j->read_payload),
                                 "nd_selfjoin_stream: read");
        if (rc) return rc;
        for (size_t i = 0; i < c; i++) {
            uint64_t v = nd_perm_apply(p, j->chunk[i]), b = h ? v >> (64 - h) : 0;
            if (hist) hist[b]++;
            else if (b >= lo && b < hi) j->a[got++] = (sort_item){v, (uint32_t)(s + i)};
        }
    }
    if (m) *m = got;
    return 0;
}

static int reserve(join_ctx *j, size_t m)
{
    if (m <= j->cap) return ND_OK;
    free(j->a);
    free(j->tmp);
    j->a = malloc(m * sizeof *j->a);
    j->tmp = malloc(m * sizeof *j->tmp);
    j->cap = j->a && j->tmp ? m : 0;
    ND_RETURN_IF(!j->cap, ND_ENOMEM, "nd_selfjoin: out of memory sorting %zu fingerprints", m);
    return ND_OK;
}

static int join_range(join_ctx *j, unsigned t, unsigned h, uint64_t lo, uint64_t hi, size_t count)
{
    size_t m;
    ND_FORWARD(reserve(j, count));
    int rc = pass(j, &j->plan->table[t], h, NULL, lo, hi, &m);
    if (rc) return rc;
    sort_items(j->a, j->tmp, m);
    return join_sorted(j, t, j->a, m);
}

/* Table t within at most per documents a partition (0: no limit). */
static int join_table(join_ctx *j, unsigned t, size_t per, uint32_t *hist)
{
    const nd_perm *p = &j->plan->table[t];
    unsigned h = p->prefix_bits < HIST_BITS ? p->prefix_bits : HIST_BITS;
    if (per == 0 || per >= j->n || h == 0) return join_range(j, t, 0, 0, 1, j->n);
    uint64_t nb = 1ull << h;
    memset(hist, 0, nb * sizeof *hist);
    int rc = pass(j, p, h, hist, 0, 0, NULL);
    if (rc) return rc;
    /* As few partitions as the budget allows, of even size: cut at about
     * n / parts, never above per. */
    size_t parts = (j->n + per - 1) / per, even = (j->n + parts - 1) / parts;
    for (uint64_t lo = 0, hi; lo < nb; lo = hi) {
        size_t count = hist[lo];
        for (hi = lo + 1; hi < nb && count < even && count + hist[hi] <= per; hi++)
            count += hist[hi];
        if (count < 2) continue; /* no pair: no pass */
        rc = join_range(j, t, h, lo, hi, count);
        if (rc) return rc;
    }
    return 0;
}

int nd_selfjoin_stream(size_t n, unsigned k, size_t memory, nd_fp_read_cb read,
                       void *read_payload, nd_pair_cb cb, void *payload)
{
    nd_plan plan;
    int rc = ND_OK;
    uint32_t *hist = NULL;
    ND_RETURN_IF(!cb || (n && !read), ND_EINVAL, "nd_selfjoin: NULL argument");
    ND_RETURN_IF(n > UINT32_MAX, ND_ELIMIT, "nd_selfjoin: %zu fingerprints (limit 2^32-1)", n);
    if (n < 2) return ND_OK;
    ND_FORWARD(nd_plan_choose(&plan, k, n, 0));
    join_ctx j = {&plan, k, n, read, read_payload, cb, payload, NULL, NULL, NULL, 0};
    size_t per = memory / (2 * sizeof(sort_item));
    if (memory && per < 1) per = 1;
    j.chunk = malloc(READ_CHUNK * sizeof *j.chunk);
    if (per && per < n) hist = malloc(((size_t)1 << HIST_BITS) * sizeof *hist);
    if (!j.chunk || (per && per < n && !hist))
        ND_FAIL(ND_ENOMEM, "nd_selfjoin: out of memory for the read buffer");
    for (unsigned t = 0; t < plan.info.tables && rc == ND_OK; t++) rc = join_table(&j, t, per, hist);
cleanup:
    free(j.chunk);
    free(j.a);
    free(j.tmp);
    free(hist);
    return rc;
}

static int read_array(uint64_t *out, size_t start, size_t count, void *payload)
{
    memcpy(out, (const uint64_t *)payload + start, count * sizeof *out);
    return 0;
}

int nd_selfjoin(const uint64_t *fps, size_t n, unsigned k, nd_pair_cb cb, void *payload)
{
    ND_RETURN_IF(!cb || (n && !fps), ND_EINVAL, "nd_selfjoin: NULL argument");
    return nd_selfjoin_stream(n, k, 0, read_array, (void *)fps, cb, payload);
}
