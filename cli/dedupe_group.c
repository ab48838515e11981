/*
 * dedupe_group.c — groups of identical documents (see dedupe_group.h).
 *
 * The documents, taken in priority order, are sorted by fingerprint with a
 * stable radix sort, so within a run of equal fingerprints they stay in
 * priority order and the first of each distinct sketch leads its group.
 * Sketches are compared only inside runs of equal fingerprints (read back
 * through the store's cache). Memory: 36 B a document while sorting.
 */
#include "dedupe_group.h"

#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t cap, size_t size)
{
    void *q = realloc(*p, cap * size);
    if (!q) return -1;
    *p = q;
    return 0;
}

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

int dedupe_group(uint32_t **out_g, uint32_t **out_ids, size_t *out_m, dedupe_docs *d,
                 const uint32_t *order)
{
    size_t n = d->n, m = 0, nl = 0, lcap = 0;
    int rc;
    fp_ent *e = malloc((n ? n : 1) * sizeof *e), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint32_t *g = malloc((n ? n : 1) * sizeof *g), *ids = NULL, *local = NULL;
    if (!e || !tmp || !g) goto oom;
    for (size_t p = 0; p < n; p++) e[p] = (fp_ent){d->fp[order[p]], order[p]};
    radix_sort_ent(e, tmp, n); /* stable: priority order within one fingerprint */
    free(tmp);
    tmp = NULL;
    for (size_t s = 0, t; s < n; s = t) {
        for (t = s + 1; t < n && e[t].fp == e[s].fp; t++) {}
        nl = 0; /* leaders of distinct sketches within this fingerprint */
        for (size_t u = s; u < t; u++) {
            uint32_t x = e[u].i;
            size_t l = 0;
            if (d->has_sk && t - s > 1) {
                dedupe_rec rd, rl;
                if ((rc = dedupe_docs_rec(d, x, &rd))) goto fail;
                for (; l < nl; l++) {
                    if ((rc = dedupe_docs_rec(d, local[l], &rl))) goto fail;
                    if (memcmp(&rl.sk, &rd.sk, sizeof rd.sk) == 0) break;
                }
            }
            if (l == nl) {
                if (nl == lcap && grow((void **)&local, lcap = lcap ? 2 * lcap : 16, sizeof *local))
                    goto oom;
                local[nl++] = x;
            }
            g[x] = local[l];
        }
    }
    free(local);
    local = NULL;
    /* Number the groups by their leaders' input order (e is free now). */
    uint32_t *num = (uint32_t *)e;
    for (size_t i = 0; i < n; i++) m += g[i] == i;
    ids = malloc((m ? m : 1) * sizeof *ids);
    if (!ids) goto oom;
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i] == i) {
            num[i] = (uint32_t)m;
            ids[m++] = (uint32_t)i;
        }
    for (size_t i = 0; i < n; i++) g[i] = num[g[i]];
    free(e);
    *out_g = g;
    *out_ids = ids;
    *out_m = m;
    return 0;
oom:
    rc = DEDUPE_DOCS_ENOMEM;
fail:
    free(e);
    free(tmp);
    free(g);
    free(ids);
    free(local);
    return rc;
}

