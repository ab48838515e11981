/*
 * nd_varint.h — unsigned LEB128 varints (7 bits a byte, low bits first,
 * the top bit set on every byte but the last): the run codec's counts and
 * lengths, and the handles and lengths of RocksDB's table format that
 * compaction/cmp_direct.c reads.
 */
#ifndef ND_VARINT_H
#define ND_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* Write v at p (room for 10 bytes); returns the bytes written. */
static inline size_t nd_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Read a varint at p (before end) into *v: the byte after it, or NULL
 * when it runs past end or past 10 bytes (*v untouched). */
static inline const uint8_t *nd_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
        uint8_t b = *p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return p;
        }
    }
    return NULL;
}

#endif /* ND_VARINT_H */
