/*
 * cluster.c — greedy clustering with the representative rule.
 *
 * Near-duplication is not transitive (a~b and b~c do not give a~c), so
 * clusters are not connected components: each cluster is a representative
 * and some of its own neighbours. Taking documents in priority order (the
 * order a caller wants to keep them: first seen, highest authority,
 * longest) makes the kept document of each cluster the best one available
 * when the cluster forms.
 */
#include <stdlib.h>

#include "neardup.h"
#include "nd_error.h"

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
