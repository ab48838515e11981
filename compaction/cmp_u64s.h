/*
 * cmp_u64s.h — growable arrays of uint64 (st_u64s), the currency of the
 * storage layer's table reads: a range read appends the permuted
 * fingerprints it finds, the engine collects them. Used by every layer
 * above common/; nothing here knows of storage.
 */
#ifndef CMP_U64S_H
#define CMP_U64S_H

#include <stddef.h>
#include <stdint.h>

#include "neardup.h"

/* Growable array of uint64 (permuted fingerprints). Zeroed: empty. */
typedef struct st_u64s {
    uint64_t *v;
    size_t n, cap;
} st_u64s;

/* Make room for extra more entries (ND_OK or ND_ENOMEM). */
int st_u64s_reserve(st_u64s *a, size_t extra);
/* Append x; inline, as a probe appends every entry of its range. */
static inline int st_u64s_push(st_u64s *a, uint64_t x)
{
    if (a->n == a->cap) {
        int rc = st_u64s_reserve(a, 1);
        if (rc) return rc;
    }
    a->v[a->n++] = x;
    return ND_OK;
}
/* Append v[0..n). */
int st_u64s_append(st_u64s *a, const uint64_t *v, size_t n);
/* Free the entries; a is empty again. */
void st_u64s_dispose(st_u64s *a);
/* Index of the first of a[0..n) (ascending) that is >= x; n if none. */
size_t st_u64_lower_bound(const uint64_t *a, size_t n, uint64_t x);

#endif /* CMP_U64S_H */
