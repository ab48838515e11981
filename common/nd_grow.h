/*
 * nd_grow.h — room in a growable array: the one doubling rule of the
 * buffers that are appended to (log records, MANIFEST edits, rewritten
 * logs).
 */
#ifndef ND_GROW_H
#define ND_GROW_H

#include <stdlib.h>

/* The array p (*cap elements of elem bytes) grown to hold need elements:
 * p itself when it does, else p reallocated to a capacity doubled from
 * first (*cap updated); NULL when out of memory (p and *cap untouched). */
static inline void *nd_grow(void *p, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : first;
    while (c < need) c *= 2;
    void *q = realloc(p, c * elem);
    if (q) *cap = c;
    return q;
}

#endif /* ND_GROW_H */
