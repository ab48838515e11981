/*
 * dedupe_group.c — groups of identical documents (see dedupe_group.h).
 *
 * The documents, taken in priority order, are sorted by fingerprint with a
 * stable radix sort, so within a run of equal fingerprints they stay in
 * priority order and the first of each distinct sketch leads its group.
 * Sketches are compared only inside runs of equal fingerprints (read back
 * through the store's cache).
 *
 * Memory: 4 B a document (the groups) and the sort, 32 B for each
 * document sorted at once. Within a budget the sort is split into ranges
 * of the top 16 fingerprint bits (a run of equal fingerprints lies in one
 * range), each holding about n / P documents for the fewest ranges P the
 * budget allows, at most budget / 32 (a single 16-bit value may hold
 * more): one pass over the documents counts each value,
 * then one pass per range, in priority order, collects its documents.
 * The result does not depend on the ranges.
 */
#include "dedupe_group.h"

#include <stdlib.h>
#include <string.h>

#include "nd_error.h"

enum { HIST_BITS = 16, HIST_BUCKETS = 1 << HIST_BITS };

typedef struct fp_ent {
    uint64_t fp;
    uint32_t i;
} fp_ent;

/* Stable LSD radix sort by fp. */
static void radix_sort_ent(fp_ent *a, fp_ent *tmp, size_t n)
{
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[((a[i].fp >> shift) & 0xff) + 1]++;
        for (unsigned b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) tmp[count[(a[i].fp >> shift) & 0xff]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

/* The groups inside runs of equal fingerprints of e[0..m) (sorted, in
 * priority order within a run): g[x] = the leader of x's group. */
static int group_runs(uint32_t *g, const fp_ent *e, size_t m, dedupe_docs *d, uint32_t **local,
                      size_t *lcap)
{
    for (size_t s = 0, t; s < m; s = t) {
        for (t = s + 1; t < m && e[t].fp == e[s].fp; t++) {}
        size_t nl = 0; /* leaders of distinct sketches within this fingerprint */
        for (size_t u = s; u < t; u++) {
            uint32_t x = e[u].i;
            size_t l = 0;
            if (d->has_sk && t - s > 1) {
                dedupe_rec rd, rl;
                int rc = dedupe_docs_rec(d, x, &rd);
                for (; rc == 0 && l < nl; l++) {
                    rc = dedupe_docs_rec(d, (*local)[l], &rl);
                    if (rc == 0 && memcmp(&rl.sk, &rd.sk, sizeof rd.sk) == 0 &&
                        (rl.size == DEDUPE_NO_SKETCH) == (rd.size == DEDUPE_NO_SKETCH))
                        break;
                }
                if (rc < 0) return rc;
            }
            if (l == nl) {
                if (nl == *lcap) {
                    size_t cap = *lcap ? 2 * *lcap : 16;
                    ND_FORWARD(dedupe_grow((void **)local, cap, sizeof **local, "group leaders"));
                    *lcap = cap;
                }
                (*local)[nl++] = x;
            }
            g[x] = (*local)[l];
        }
    }
    return ND_OK;
}

int dedupe_group(uint32_t **out_g, uint32_t **out_ids, size_t *out_m, dedupe_docs *d,
                 const uint32_t *order, size_t memory)
{
    size_t n = d->n, m = 0, lcap = 0, cap = 0;
    size_t per = memory ? memory / (2 * sizeof(fp_ent)) : SIZE_MAX;
    int rc = ND_OK;
    fp_ent *e = NULL, *tmp = NULL;
    uint32_t *g = malloc((n ? n : 1) * sizeof *g), *ids = NULL, *local = NULL, *hist = NULL;
    if (!g) goto oom;
    if (per == 0) per = 1;
    if (per >= n) { /* one range: every fingerprint */
        e = malloc((n ? n : 1) * sizeof *e);
        tmp = malloc((n ? n : 1) * sizeof *tmp);
        if (!e || !tmp) goto oom;
        for (size_t p = 0; p < n; p++) e[p] = (fp_ent){d->fp[order[p]], order[p]};
        radix_sort_ent(e, tmp, n); /* stable: priority order within one fingerprint */
        if ((rc = group_runs(g, e, n, d, &local, &lcap)) < 0) goto fail;
    } else {
        hist = calloc(HIST_BUCKETS, sizeof *hist);
        if (!hist) goto oom;
        for (size_t i = 0; i < n; i++) hist[d->fp[i] >> (64 - HIST_BITS)]++;
        size_t parts = (n + per - 1) / per, even = (n + parts - 1) / parts;
        for (size_t lo = 0, hi; lo < HIST_BUCKETS; lo = hi) { /* about n / parts each */
            size_t count = hist[lo];
            for (hi = lo + 1; hi < HIST_BUCKETS && count < even && count + hist[hi] <= per; hi++)
                count += hist[hi];
            if (count == 0) continue;
            if (count > cap) {
                free(e);
                free(tmp);
                e = malloc(count * sizeof *e);
                tmp = malloc(count * sizeof *tmp);
                if (!e || !tmp) goto oom;
                cap = count;
            }
            size_t c = 0;
            for (size_t p = 0; p < n; p++) {
                size_t b = (size_t)(d->fp[order[p]] >> (64 - HIST_BITS));
                if (b >= lo && b < hi) e[c++] = (fp_ent){d->fp[order[p]], order[p]};
            }
            radix_sort_ent(e, tmp, c);
            if ((rc = group_runs(g, e, c, d, &local, &lcap)) < 0) goto fail;
        }
    }
    free(e);
    free(tmp);
    free(hist);
    free(local);
    e = tmp = NULL;
    hist = local = NULL;
    /* Number the groups by their leaders' input order: leaders are the
     * documents with g[i] == i, ids lists them in order; a walk along ids
     * tells leaders from the others, which then read their leader's
     * number from g. */
    for (size_t i = 0; i < n; i++) m += g[i] == i;
    ids = malloc((m ? m : 1) * sizeof *ids);
    if (!ids) goto oom;
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i] == i) ids[m++] = (uint32_t)i;
    for (size_t x = 0; x < m; x++) g[ids[x]] = (uint32_t)x;
    for (size_t i = 0, x = 0; i < n; i++) {
        if (x < m && ids[x] == i) x++;
        else g[i] = g[g[i]];
    }
    *out_g = g;
    *out_ids = ids;
    *out_m = m;
    return ND_OK;
oom:
    rc = nd_err_set(ND_ENOMEM, "dedupe: out of memory grouping identical documents");
fail:
    free(e);
    free(tmp);
    free(g);
    free(ids);
    free(local);
    free(hist);
    return rc;
}
