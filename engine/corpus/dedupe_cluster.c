/*
 * dedupe_cluster.c — the clusters of the corpus dedupe: computed once
 * (dedupe_clustered), then walked as clusters (nd_dedupe_clusters) or as
 * every document's role (nd_dedupe_roles).
 *
 * Identical documents (same fingerprint, and same sketch when texts were
 * read) have the same neighbours, so the greedy clustering assigns a group
 * of them as a whole: the documents are grouped first (dedupe_group.c),
 * one leader per group (its first in keep order) is joined with the
 * others' leaders (dedupe_join.c), and the leaders' graph is clustered
 * with the representative rule (nd_cluster_greedy) in keep order. A
 * document stays iff it leads its group and its group stays; every other
 * one drops to the leader of its group's representative, with which it
 * forms a pair (or is identical to a document that does).
 *
 * Memory while computing: 4 B a document for the groups and the sort of
 * grouping (within the budget), 12 B a pair found, then 8 B a pair and
 * 8 a group for the graph; kept afterwards: 4 B a document and 16 a group.
 */
#include <stdlib.h>
#include <string.h>

#include "dedupe_group.h"
#include "dedupe_internal.h"
#include "nd_error.h"

#define LEAD(d, x) ((d)->lead ? (d)->lead[x] : (uint32_t)(x))

typedef struct pair {
    uint32_t a, b;
} pair;

typedef struct pair_list {
    pair *p;
    size_t n, cap;
} pair_list;

static int collect(size_t x, size_t y, const verify_result *f, void *payload)
{
    pair_list *l = payload;
    (void)f;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        ND_FORWARD(dedupe_grow((void **)&l->p, cap, sizeof *l->p, "pairs"));
        l->cap = cap;
    }
    l->p[l->n++] = (pair){(uint32_t)x, (uint32_t)y};
    return 0;
}

/* Sorted by priority, highest first, then input order. qsort has no
 * payload, so the priorities come through a thread-local. */
static _Thread_local const double *sort_prio;

static int cmp_priority(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (sort_prio[a] != sort_prio[b]) return sort_prio[a] > sort_prio[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The pairs' graph in CSR form, clustered greedily in keep order:
 * d->rep. */
static int cluster_graph(nd_dedupe *d, const pair_list *l)
{
    size_t m = d->m, *start = calloc(m + 1, sizeof *start);
    uint32_t *adj = malloc((2 * l->n + 1) * sizeof *adj);
    int rc = ND_OK;
    if (!start || !adj) ND_FAIL(ND_ENOMEM, "dedupe: out of memory for the graph of %zu pairs", l->n);
    /* start[x] is first x's fill cursor, which ends at x + 1's start:
     * shifted back by one after. */
    for (size_t e = 0; e < l->n; e++) {
        start[l->p[e].a + 1]++;
        start[l->p[e].b + 1]++;
    }
    for (size_t x = 0; x < m; x++) start[x + 1] += start[x];
    for (size_t e = 0; e < l->n; e++) {
        adj[start[l->p[e].a]++] = l->p[e].b;
        adj[start[l->p[e].b]++] = l->p[e].a;
    }
    memmove(start + 1, start, m * sizeof *start);
    start[0] = 0;
    rc = nd_cluster_greedy(d->rep, d->lorder, m, start, adj);
cleanup:
    free(start);
    free(adj);
    return rc;
}

/* The clustering, computed on the first call. */
static int dedupe_clustered(nd_dedupe *d)
{
    ND_FORWARD(dedupe_close(d));
    if (d->clustered) return ND_OK;
    size_t n = d->docs.n, m = 0;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    pair_list l = {0};
    int rc = ND_OK;
    if (!order) ND_FAIL(ND_ENOMEM, "dedupe: out of memory for %zu documents", n);
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    if (d->docs.prio) { /* else: input order */
        sort_prio = d->docs.prio;
        qsort(order, n, sizeof *order, cmp_priority);
    }
    dedupe_progress(d, "grouping", "documents", 0, n);
    ND_TRY(dedupe_group(&d->group, &d->lead, &m, &d->docs, order, d->memory));
    dedupe_progress(d, "grouping", "documents", n, n);
    d->m = m;
    if (m == n) { /* no two identical: join the documents themselves */
        free(d->lead);
        d->lead = NULL;
    }
    /* The leaders' keep order; the documents' is not needed after. */
    d->lorder = malloc((m ? m : 1) * sizeof *d->lorder);
    d->rep = malloc((m ? m : 1) * sizeof *d->rep);
    d->cluster = calloc(m ? m : 1, sizeof *d->cluster);
    if (!d->lorder || !d->rep || !d->cluster)
        ND_FAIL(ND_ENOMEM, "dedupe: out of memory for %zu groups", m);
    size_t q = 0;
    for (size_t p = 0; p < n; p++)
        if (LEAD(d, d->group[order[p]]) == order[p]) d->lorder[q++] = d->group[order[p]];
    free(order);
    order = NULL;
    ND_TRY(dedupe_join(d, d->lead, m, 0, collect, &l));
    dedupe_progress(d, "clustering", "groups", 0, m);
    ND_TRY(cluster_graph(d, &l));
    dedupe_progress(d, "clustering", "groups", m, m);
    /* Cluster numbers: the kept groups with a dropped document, in keep
     * order. cluster[x] first counts the documents dropped to group x. */
    for (size_t i = 0; i < n; i++) {
        uint32_t r = d->rep[d->group[i]];
        if (LEAD(d, r) != i) d->cluster[r]++;
    }
    uint32_t number = 0;
    for (size_t p = 0; p < m; p++) {
        uint32_t x = d->lorder[p];
        if (d->cluster[x]) d->cluster[x] = ++number;
    }
    d->clustered = 1;
cleanup:
    free(order);
    free(l.p);
    if (!d->clustered) { /* a later call starts again */
        free(d->group);
        free(d->lead);
        free(d->lorder);
        free(d->rep);
        free(d->cluster);
        d->group = d->lead = d->lorder = d->rep = d->cluster = NULL;
    }
    return rc;
}

static nd_dedupe_member member_of(const nd_dedupe *d, size_t i)
{
    uint32_t r = d->rep[d->group[i]], kept = LEAD(d, r);
    return (nd_dedupe_member){d->cluster[r],
                              kept == i ? ND_DEDUPE_ROLE_KEEP : ND_DEDUPE_ROLE_DROP,
                              i,
                              NULL,
                              0,
                              kept,
                              nd_hamming(d->docs.fp[i], d->docs.fp[kept])};
}

static int put_member(nd_dedupe *d, size_t i, nd_dedupe_member_cb cb, void *payload)
{
    nd_dedupe_member mb = member_of(d, i);
    ND_FORWARD(dedupe_docs_key(&d->key_a, &d->docs, i));
    mb.key = d->key_a.p;
    mb.key_len = d->key_a.len;
    return dedupe_stop(cb(&mb, payload));
}

int nd_dedupe_clusters(nd_dedupe *d, nd_dedupe_member_cb cb, void *payload)
{
    ND_RETURN_IF(!d || !cb, ND_EINVAL, "nd_dedupe_clusters: NULL argument");
    ND_FORWARD(dedupe_clustered(d));
    size_t n = d->docs.n, m = d->m, *start = calloc(m + 1, sizeof *start);
    uint32_t *drops = NULL;
    int rc = ND_OK;
    if (!start) ND_FAIL(ND_ENOMEM, "dedupe: out of memory for %zu groups", m);
    /* The dropped documents in input order, bucketed by kept group;
     * start[x] serves as x's cursor while filling, as in cluster_graph. */
    for (size_t i = 0; i < n; i++) {
        uint32_t r = d->rep[d->group[i]];
        if (LEAD(d, r) != i) start[r + 1]++;
    }
    for (size_t x = 0; x < m; x++) start[x + 1] += start[x];
    drops = malloc((start[m] ? start[m] : 1) * sizeof *drops);
    if (!drops) ND_FAIL(ND_ENOMEM, "dedupe: out of memory for %zu dropped documents", start[m]);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = d->rep[d->group[i]];
        if (LEAD(d, r) != i) drops[start[r]++] = (uint32_t)i;
    }
    memmove(start + 1, start, m * sizeof *start);
    start[0] = 0;
    for (size_t p = 0; p < m && rc == ND_OK; p++) {
        uint32_t x = d->lorder[p];
        if (d->rep[x] != x || d->cluster[x] == 0) continue;
        rc = put_member(d, LEAD(d, x), cb, payload);
        for (size_t e = start[x]; e < start[x + 1] && rc == ND_OK; e++)
            rc = put_member(d, drops[e], cb, payload);
    }
cleanup:
    free(start);
    free(drops);
    return rc;
}

int nd_dedupe_roles(nd_dedupe *d, nd_dedupe_member_cb cb, void *payload)
{
    ND_RETURN_IF(!d || !cb, ND_EINVAL, "nd_dedupe_roles: NULL argument");
    ND_FORWARD(dedupe_clustered(d));
    dedupe_docs_walk w;
    int rc = ND_OK;
    dedupe_docs_walk_init(&w, &d->docs);
    for (size_t i = 0; i < d->docs.n && rc == ND_OK; i++) {
        nd_dedupe_member mb = member_of(d, i);
        const char *key;
        size_t len;
        rc = dedupe_docs_walk_key(&key, &len, &w, i);
        if (rc == ND_OK) rc = dedupe_key_set(&d->key_a, key, len); /* a NUL follows */
        if (rc < 0) break;
        mb.key = d->key_a.p;
        mb.key_len = len;
        rc = dedupe_stop(cb(&mb, payload));
    }
    dedupe_docs_walk_dispose(&w);
    return rc;
}
