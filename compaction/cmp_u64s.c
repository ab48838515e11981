/*
 * cmp_u64s.c — growable arrays of uint64 (cmp_u64s.h): capacity doubles,
 * so n appends cost O(n) moves in all.
 */
#include "cmp_u64s.h"

#include <stdlib.h>
#include <string.h>

#include "nd_error.h"

int st_u64s_reserve(st_u64s *a, size_t extra)
{
    if (a->cap - a->n >= extra) return ND_OK;
    size_t cap = a->cap ? a->cap : 64;
    while (cap - a->n < extra) {
        ND_RETURN_IF(cap > SIZE_MAX / 2 / sizeof *a->v, ND_ENOMEM,
                     "out of memory growing an array of %zu entries by %zu", a->n, extra);
        cap *= 2;
    }
    uint64_t *v = realloc(a->v, cap * sizeof *v);
    ND_RETURN_IF(!v, ND_ENOMEM, "out of memory growing an array to %zu entries", cap);
    a->v = v;
    a->cap = cap;
    return ND_OK;
}

int st_u64s_append(st_u64s *a, const uint64_t *v, size_t n)
{
    if (n == 0) return ND_OK;
    ND_FORWARD(st_u64s_reserve(a, n));
    memcpy(a->v + a->n, v, n * sizeof *v);
    a->n += n;
    return ND_OK;
}

void st_u64s_dispose(st_u64s *a)
{
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

size_t st_u64_lower_bound(const uint64_t *a, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
