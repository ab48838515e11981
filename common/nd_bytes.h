/*
 * nd_bytes.h — the order of byte strings that RocksDB's bytewise
 * comparator keeps (keys of every family): memcmp over the shorter, then
 * the shorter first. Header only.
 */
#ifndef ND_BYTES_H
#define ND_BYTES_H

#include <stddef.h>
#include <string.h>

/* < 0, 0 or > 0 as a[0..alen) sorts before, with or after b[0..blen)
 * (either may be NULL when its length is 0). */
static inline int nd_bytes_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (alen > blen) - (alen < blen);
}

#endif /* ND_BYTES_H */
