/*
 * nd_hash.c — the one file that includes <xxhash.h> (see nd_hash.h): the
 * XXH3 of RocksDB's block checksums and the fingerprint's feature hash.
 *
 * XXH_INLINE_ALL compiles XXH3 into this file: each function below is the
 * whole hash, with no call into the shared libxxhash (tokens are short, and
 * its call and length dispatch cost as much as hashing them), and the
 * feature hash's constant seed is folded into XXH3's secret arithmetic.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "nd_hash.h"
#include "neardup.h"

uint64_t nd_xxh3_64(const void *bytes, size_t len) { return XXH3_64bits(bytes, len); }

uint64_t nd_feature_hash(const void *bytes, size_t len)
{
    return XXH3_64bits_withSeed(bytes, len, ND_FEATURE_SEED);
}
