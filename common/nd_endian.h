/*
 * nd_endian.h — big-endian load/store of 64- and 32-bit values.
 *
 * Keys of the table and reverse families are big-endian so that RocksDB's
 * bytewise order is numeric order. memcpy + byte swap compiles to a single
 * load and bswap on every compiler we use.
 */
#ifndef ND_ENDIAN_H
#define ND_ENDIAN_H

#include <stdint.h>
#include <string.h>

static inline void nd_store_be64(void *dst, uint64_t v)
{
    unsigned char *p = dst;
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

static inline uint64_t nd_load_be64(const void *src)
{
    const unsigned char *p = src;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}

static inline void nd_store_be32(void *dst, uint32_t v)
{
    unsigned char *p = dst;
    for (int i = 3; i >= 0; i--) {
        p[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
}

static inline uint32_t nd_load_be32(const void *src)
{
    const unsigned char *p = src;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v = (v << 8) | p[i];
    return v;
}

#endif /* ND_ENDIAN_H */
