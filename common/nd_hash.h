/*
 * nd_hash.h — XXH3 for every layer, without <xxhash.h>: common/nd_hash.c
 * is the one file that includes it (STYLE.md: one owner per dependency).
 * It sits in common/ because both the fingerprint module (engine/, the
 * feature hash) and the storage layer (compaction/cmp_direct.c, RocksDB's
 * block checksums) hash with XXH3, and common/ is below both.
 *
 * nd_hash.c also defines the public nd_feature_hash (neardup.h): XXH3
 * with the constant seed ND_FEATURE_SEED, compiled inline into it, so the
 * fingerprint's tokenizer pays one call a token and XXH3 is specialised
 * for that seed. A wrapper taking the seed as an argument cost 3% of the
 * shingle features' throughput (bench_fingerprint, text default: 248-250
 * against 253-258 MB/s).
 */
#ifndef ND_HASH_H
#define ND_HASH_H

#include <stddef.h>
#include <stdint.h>

/* XXH3-64 of bytes[0..len), without a seed: what RocksDB's XXH3 block
 * checksums hold the lower 32 bits of (compaction/cmp_direct.c). */
uint64_t nd_xxh3_64(const void *bytes, size_t len);

#endif /* ND_HASH_H */
