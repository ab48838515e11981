/*
 * nd_hash.h — XXH3 for the layers that need a hash but must not include
 * <xxhash.h>: one file owns that dependency, the fingerprint module
 * (engine/fp_simhash.c), which defines what this header declares. It sits
 * in common/ so that compaction/ needs no header from engine/.
 */
#ifndef ND_HASH_H
#define ND_HASH_H

#include <stddef.h>
#include <stdint.h>

/* XXH3-64 of bytes[0..len), without a seed: what RocksDB's XXH3 block
 * checksums hold the lower 32 bits of (compaction/cmp_direct.c). */
uint64_t nd_xxh3_64(const void *bytes, size_t len);

#endif /* ND_HASH_H */
