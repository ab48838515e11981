/*
 * fp_feat.c — simhash, sketch and distinct-feature count of one
 * document (see fp_feat.h).
 *
 * The set keeps its load at or below 1/2 (linear probing stays short);
 * filled[] lists the slots in use, so emptying it costs the document's own
 * distinct features, not the table's size, which grows to the longest
 * document seen.
 */
#include "fp_feat.h"

#include <stdlib.h>

static void distinct_add(fp_feat *a, uint64_t h)
{
    if (h == 0) {
        a->zero = 1;
        return;
    }
    if (2 * (a->distinct + 1) > a->cap) { /* grow: load stays <= 1/2 */
        size_t cap = a->cap ? 2 * a->cap : 4096;
        uint64_t *tab = calloc(cap, sizeof *tab);
        uint32_t *filled = malloc(cap / 2 * sizeof *filled);
        if (!tab || !filled || cap > UINT32_MAX) {
            free(tab);
            free(filled);
            a->oom = 1;
            return;
        }
        for (size_t i = 0; i < a->distinct; i++) {
            uint64_t v = a->tab[a->filled[i]];
            size_t s = v & (cap - 1);
            while (tab[s]) s = (s + 1) & (cap - 1);
            tab[s] = v;
            filled[i] = (uint32_t)s;
        }
        free(a->tab);
        free(a->filled);
        a->tab = tab;
        a->filled = filled;
        a->cap = cap;
    }
    size_t s = h & (a->cap - 1);
    while (a->tab[s]) {
        if (a->tab[s] == h) return;
        s = (s + 1) & (a->cap - 1);
    }
    a->tab[s] = h;
    a->filled[a->distinct++] = (uint32_t)s;
}

void fp_feat_begin(fp_feat *f)
{
    f->oom = 0;
    nd_simhash_init(&f->sim);
    nd_sketch_begin(&f->sk);
}

void fp_feat_add(uint64_t h, int32_t w, void *payload)
{
    fp_feat *a = payload;
    nd_simhash_add_hash(&a->sim, h, w);
    nd_sketch_add(&a->sk, h);
    if (a->count && !a->oom) distinct_add(a, h);
}

uint64_t fp_feat_end(fp_feat *f, nd_sketch *sk, uint32_t *distinct)
{
    uint64_t n = f->distinct + (uint64_t)f->zero;
    for (size_t i = 0; i < f->distinct; i++) f->tab[f->filled[i]] = 0;
    f->distinct = 0;
    f->zero = 0;
    *distinct = n < UINT32_MAX - 1 ? (uint32_t)n : UINT32_MAX - 1; /* below DEDUPE_NO_SKETCH */
    if (nd_sketch_finish(sk, &f->sk) < 0) f->oom = 1;
    return nd_simhash_final(&f->sim);
}

void fp_feat_dispose(fp_feat *f)
{
    free(f->tab);
    free(f->filled);
    f->tab = NULL;
    f->filled = NULL;
    nd_sketch_dispose(&f->sk);
}
