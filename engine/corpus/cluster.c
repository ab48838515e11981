/*
 * cluster.c — greedy clustering with the representative rule.
 *
 * Near-duplication is not transitive (a~b and b~c do not give a~c), so
 * clusters are not connected components: each cluster is a representative
 * and some of its own neighbours. Taking documents in priority order (the
 * order a caller wants to keep them: first seen, highest authority,
 * longest) makes the kept document of each cluster the best one available
 * when the cluster forms.
 *
 * nd_cluster is the query-biased variant for search results (Pi et al.):
 * each query's top results are clustered by authority, and a document
 * removed as a near-duplicate while serving a popular query stays removed
 * for every less popular one. Queries are independent except through that
 * removed set, so the work is one small greedy pass per query: O(M^2)
 * distance computations for M results, plus one sort of the document
 * indices to map them to dense slots (the caller's indices may be sparse).
 *
 * Callers: the public API only (nd_cluster*).
 */
#include <math.h>
#include <stdlib.h>

#include "neardup.h"
#include "nd_error.h"
#include "nd_options.h"
#include "sort.h"

int nd_cluster_greedy(uint32_t *out_rep, const uint32_t *order, size_t n,
                      const size_t *adj_start, const uint32_t *adj)
{
    ND_RETURN_IF(n && (!out_rep || !order || !adj_start), ND_EINVAL, "nd_cluster_greedy: NULL argument");
    ND_RETURN_IF(n >= UINT32_MAX, ND_ELIMIT, "nd_cluster_greedy: too many documents");
    for (size_t i = 0; i < n; i++) out_rep[i] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        uint32_t d = order[i];
        ND_RETURN_IF(d >= n, ND_EINVAL, "nd_cluster_greedy: order[%zu] = %u out of range", i, d);
        if (out_rep[d] != UINT32_MAX) continue;
        out_rep[d] = d;
        for (size_t e = adj_start[d]; e < adj_start[d + 1]; e++) {
            uint32_t nb = adj[e];
            ND_RETURN_IF(nb >= n, ND_EINVAL, "nd_cluster_greedy: neighbour %u out of range", nb);
            if (out_rep[nb] == UINT32_MAX) out_rep[nb] = d;
        }
    }
    /* A permutation visits every document; anything left means order
     * repeated some and skipped others. */
    for (size_t i = 0; i < n; i++)
        ND_RETURN_IF(out_rep[i] == UINT32_MAX, ND_EINVAL,
                     "nd_cluster_greedy: order is not a permutation (document %zu missing)", i);
    return ND_OK;
}

/* One result of the query being clustered, with the keys both sorts need
 * copied in (qsort has no context pointer). */
typedef struct cl_entry {
    double score;
    uint64_t fp;
    uint32_t rank;
    uint32_t idx;  /* position in items: the final tie-break */
    uint32_t slot; /* dense index of the document */
} cl_entry;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_by_rank(const void *a, const void *b)
{
    const cl_entry *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int cmp_by_score(const void *a, const void *b)
{
    const cl_entry *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return cmp_by_rank(a, b);
}

int nd_cluster_options_init(nd_cluster_options *opts, unsigned version)
{
    return nd_options_init(opts, sizeof *opts, version, ND_CLUSTER_OPTIONS_VERSION, ND_CLUSTER_OPTIONS_VERSION, "cluster");
}

int nd_cluster(const nd_cluster_item *items, size_t n, const nd_cluster_options *o,
               nd_cluster_cb cb, void *payload)
{
    static const nd_cluster_tier default_tier = {UINT32_MAX, 3};
    const nd_cluster_tier *tiers = &default_tier;
    size_t n_tiers = 1, top = 0;
    uint64_t *pairs = NULL;
    uint32_t *slot = NULL, *group_ids = NULL, *stamp = NULL;
    unsigned char *removed = NULL, *assigned = NULL;
    cl_entry *cur = NULL;
    int rc = ND_OK;

    ND_RETURN_IF(n && !items, ND_EINVAL, "nd_cluster: NULL items");
    ND_RETURN_IF(!cb, ND_EINVAL, "nd_cluster: NULL callback");
    ND_RETURN_IF(n >= UINT32_MAX, ND_ELIMIT, "nd_cluster: %zu items (limit 2^32 - 1)", n);
    if (o) {
        ND_RETURN_IF(o->version != ND_CLUSTER_OPTIONS_VERSION, ND_EINVAL,
                     "nd_cluster: unknown options version %u", o->version);
        ND_RETURN_IF(o->n_tiers && !o->tiers, ND_EINVAL, "nd_cluster: NULL tiers");
        top = o->top;
        if (o->n_tiers) {
            tiers = o->tiers;
            n_tiers = o->n_tiers;
        }
    }
    for (size_t t = 0; t < n_tiers; t++) {
        ND_RETURN_IF(tiers[t].k > 64, ND_EINVAL, "nd_cluster: tier %zu: k %u > 64", t, tiers[t].k);
        ND_RETURN_IF(tiers[t].last_query == 0 || (t && tiers[t].last_query <= tiers[t - 1].last_query),
                     ND_EINVAL, "nd_cluster: tier %zu: last query %u not ascending from 1", t,
                     tiers[t].last_query);
    }
    for (size_t i = 0; i < n; i++)
        ND_RETURN_IF(isnan(items[i].score), ND_EINVAL, "nd_cluster: item %zu: score is NaN", i);
    if (n == 0) return ND_OK;

    /* Dense document slots: sort (doc, item) pairs, number distinct docs. */
    pairs = malloc(n * sizeof *pairs);
    slot = malloc(n * sizeof *slot);
    group_ids = malloc(n * sizeof *group_ids);
    cur = malloc(n * sizeof *cur);
    assigned = malloc(n);
    if (!pairs || !slot || !group_ids || !cur || !assigned) ND_FAIL(ND_ENOMEM, "nd_cluster: out of memory");
    for (size_t i = 0; i < n; i++) pairs[i] = (uint64_t)items[i].doc << 32 | i;
    qsort(pairs, n, sizeof *pairs, sort_cmp_u64);
    uint32_t n_slots = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && pairs[i] >> 32 != pairs[i - 1] >> 32) n_slots++;
        slot[(uint32_t)pairs[i]] = n_slots;
    }
    n_slots++;
    free(pairs);
    pairs = NULL;

    /* Contiguity: each query id starts exactly one run of items. */
    size_t n_groups = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || items[i].query != items[i - 1].query) group_ids[n_groups++] = items[i].query;
    qsort(group_ids, n_groups, sizeof *group_ids, cmp_u32);
    for (size_t g = 1; g < n_groups; g++)
        if (group_ids[g] == group_ids[g - 1])
            ND_FAIL(ND_EINVAL, "nd_cluster: the items of query %u are not contiguous", group_ids[g]);

    removed = calloc(n_slots, 1);
    stamp = malloc((size_t)n_slots * sizeof *stamp);
    if (!removed || !stamp) ND_FAIL(ND_ENOMEM, "nd_cluster: out of memory");
    for (uint32_t s = 0; s < n_slots; s++) stamp[s] = UINT32_MAX;

    size_t tier = 0;
    uint32_t qrank = 0;
    for (size_t begin = 0, end; begin < n; begin = end) {
        uint32_t q = items[begin].query;
        for (end = begin; end < n && items[end].query == q; end++) {}
        qrank++;
        while (tier + 1 < n_tiers && qrank > tiers[tier].last_query) tier++;
        unsigned k = tiers[tier].k;

        size_t m = 0;
        for (size_t i = begin; i < end; i++) {
            uint32_t s = slot[i];
            if (stamp[s] == qrank)
                ND_FAIL(ND_EINVAL, "nd_cluster: document %u twice in query %u (item %zu)",
                        items[i].doc, q, i);
            stamp[s] = qrank;
            if (removed[s]) continue;
            cur[m++] = (cl_entry){items[i].score, items[i].fp, items[i].rank, (uint32_t)i, s};
        }
        qsort(cur, m, sizeof *cur, cmp_by_rank);
        if (top && m > top) m = top;
        qsort(cur, m, sizeof *cur, cmp_by_score);

        /* Greedy with the representative rule: a removed document joins
         * the kept one it is near, never a document it is only near
         * through another (near-duplication is not transitive). */
        for (size_t i = 0; i < m; i++) assigned[i] = 0;
        for (size_t i = 0; i < m; i++) {
            if (assigned[i]) continue;
            assigned[i] = 1;
            for (size_t j = i + 1; j < m; j++) {
                if (assigned[j]) continue;
                unsigned d = nd_hamming(cur[i].fp, cur[j].fp);
                if (d > k) continue;
                assigned[j] = 1;
                removed[cur[j].slot] = 1;
                rc = cb(q, items[cur[j].idx].doc, items[cur[i].idx].doc, d, payload);
                rc = nd_err_callback(rc, "nd_cluster");
                if (rc) goto cleanup;
            }
        }
    }

cleanup:
    free(pairs);
    free(slot);
    free(group_ids);
    free(stamp);
    free(removed);
    free(assigned);
    free(cur);
    return rc;
}
