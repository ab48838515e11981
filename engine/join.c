/*
 * join.c — the self-join of a batch of bare fingerprints.
 *
 * Manku's batch mode applied to one batch: for each table of a plan chosen
 * for (k, n), sort the batch by permuted value (LSD radix sort, 8 passes of
 * 8 bits) and compare every pair inside a run of equal top-p bits. A pair
 * can share prefixes in several tables; it is reported only from the first
 * table where its prefixes are equal, which needs no set of seen pairs:
 * the check re-applies the earlier tables' permutations to the two values.
 * Cost: t sorts of n plus the pairs inside groups (about n^2 / 2^p each).
 */
#include <stdlib.h>
#include <string.h>

#include "nd_error.h"
#include "plan.h"
#include "sort.h"

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

int nd_selfjoin(const uint64_t *fps, size_t n, unsigned k, nd_pair_cb cb, void *payload)
{
    nd_plan plan;
    int rc = ND_OK;
    ND_RETURN_IF(!cb || (n && !fps), ND_EINVAL, "nd_selfjoin: NULL argument");
    ND_RETURN_IF(n > UINT32_MAX, ND_ELIMIT, "nd_selfjoin: %zu fingerprints (limit 2^32-1)", n);
    if (n < 2) return ND_OK;
    ND_FORWARD(nd_plan_choose(&plan, k, n, 0));
    sort_item *a = malloc(n * sizeof *a), *tmp = malloc(n * sizeof *tmp);
    if (!a || !tmp) ND_FAIL(ND_ENOMEM, "nd_selfjoin: out of memory for %zu fingerprints", n);
    for (unsigned t = 0; t < plan.info.tables && rc == ND_OK; t++) {
        const nd_perm *p = &plan.table[t];
        unsigned sh = 64 - p->prefix_bits;
        for (size_t i = 0; i < n; i++) a[i] = (sort_item){nd_perm_apply(p, fps[i]), (uint32_t)i};
        sort_items(a, tmp, n);
        for (size_t g = 0; g < n && rc == ND_OK;) {
            size_t e = g + 1;
            uint64_t pre = sh >= 64 ? 0 : a[g].key >> sh;
            while (e < n && (sh >= 64 ? 0 : a[e].key >> sh) == pre) e++;
            for (size_t i = g; i < e && rc == ND_OK; i++)
                for (size_t j = i + 1; j < e; j++) {
                    unsigned d = (unsigned)__builtin_popcountll(a[i].key ^ a[j].key);
                    if (d > k) continue;
                    uint32_t x = a[i].idx, y = a[j].idx;
                    if (t && earlier_table_matches(&plan, t, fps[x], fps[y])) continue;
                    rc = x < y ? cb(x, y, d, payload) : cb(y, x, d, payload);
                    if (rc) break;
                }
            g = e;
        }
    }
cleanup:
    free(a);
    free(tmp);
    return rc;
}
