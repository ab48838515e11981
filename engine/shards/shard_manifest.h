/*
 * shard_manifest.h — the manifest of a sharded neardup store.
 *
 * Room: shards/. It may call: store/, bulk/, index/, text/ (and common/).
 * The room is the sharded store (nd_shards_*): a handle over S ordinary
 * databases (shards.c), their batch and check (shards_batch.c), their
 * loaders (shards_load.c) and this manifest.
 *
 * A sharded store is a directory DIR holding S ordinary neardup databases,
 * DIR/shard-000 .. DIR/shard-(S-1) (three digits at least, more past 999),
 * and one small text file DIR/NEARDUP-SHARDS, the manifest. Each shard is a
 * complete database: it verifies, backs up and compacts alone with the
 * ordinary commands. The manifest is written last (to a temporary name,
 * fsync'ed, then renamed), so a directory without it is an unfinished
 * `shard init` or `shard split` and is refused.
 *
 * Manifest format, version 1: ASCII lines "NAME VALUE", in this order:
 *
 *   neardup-shards 1          format of this file (checked: must be 1)
 *   shards S                  number of shards, 1..SHARD_MAX
 *   assign fnv1a64-mod        the rule placing a document in a shard
 *   k K                       design distance of every shard's plan
 *   tables T                  permuted tables of every shard's plan
 *   docs N                    expected documents of the whole store
 *   fingerprint CONFIG        nd_fp_config_string of every shard
 *   format F                  ND_FORMAT_VERSION the shards were created with
 *   fp-version V              the fingerprint function version the shards
 *                             compute (ND_FP_VERSION_OLDEST..ND_FP_VERSION;
 *                             another is refused, ND_EVERSION)
 *   resemblance sketchV;r=R   only in a store of resemblance shards: the
 *                             sketch version and every shard's threshold
 *                             (R printed to round-trip); absent: the
 *                             shards are fingerprint-only
 *
 * The assignment rule "fnv1a64-mod" is part of the format and never
 * changes under this name: shard(key) = FNV-1a-64(key bytes) mod S, where
 * FNV-1a-64 starts from the offset basis 0xcbf29ce484222325 and, for each
 * byte b, does h ^= b; h *= 0x100000001b3 (mod 2^64). It is not xxHash on
 * purpose: only engine/ may use xxHash, and this rule must stay stable
 * whatever the engine's hash becomes. A future rule gets a new name.
 *
 * Used by the sharded-store handle (shards.c, nd_shards_* in neardup.h).
 * Functions return ND_OK or a negative nd_error with nd_errmsg() naming
 * the file (and line) and the problem.
 */
#ifndef ND_SHARD_MANIFEST_H
#define ND_SHARD_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "neardup.h"

#define SHARD_MANIFEST_NAME ND_SHARDS_MANIFEST_NAME
#define SHARD_MANIFEST_VERSION 1u
#define SHARD_ASSIGN_RULE ND_SHARDS_ASSIGN_RULE
#define SHARD_MAX ND_SHARDS_MAX
/* Largest manifest text. */
#define SHARD_MANIFEST_MAX ND_SHARDS_MANIFEST_MAX

typedef struct shard_manifest {
    unsigned version;    /* SHARD_MANIFEST_VERSION */
    unsigned shards;     /* S */
    unsigned k;          /* design distance of the plan */
    unsigned tables;     /* t of the plan */
    uint64_t docs;       /* expected documents, whole store */
    char fp_config[256]; /* nd_fp_config_string of every shard */
    unsigned format;     /* ND_FORMAT_VERSION at creation */
    unsigned fp_version; /* the version the shards compute */
    double min_resemblance; /* every shard's threshold; 0: fingerprint only */
} shard_manifest;

/* FNV-1a 64 of the key bytes (see above). */
uint64_t shard_hash(const void *key, size_t len);

/* The shard of a key under m's rule: shard_hash(key) % m->shards. */
unsigned shard_of(const shard_manifest *m, const void *key, size_t len);

/* "DIR/shard-NNN" into out; ND_ELIMIT if it does not fit. */
int shard_path(char *out, size_t cap, const char *dir, unsigned s);

/* The manifest's text (NUL-terminated) into out; its length, or
 * ND_ELIMIT if cap is too small. */
int shard_manifest_format(char *out, size_t cap, const shard_manifest *m);

/* Parse manifest text; name is used in messages ("DIR/NEARDUP-SHARDS").
 * ND_OK; ND_EVERSION (another manifest version or assignment rule);
 * ND_ECORRUPT ("NAME:LINE: problem"). */
int shard_manifest_parse(shard_manifest *out, const char *text, size_t len, const char *name);

/* Read DIR's manifest: ND_OK; ND_ENOTFOUND (no manifest: "not a sharded
 * store"); ND_EIO; as shard_manifest_parse. */
int shard_manifest_read(shard_manifest *out, const char *dir);

/* Write DIR's manifest atomically (temporary file, fsync, rename, fsync of
 * the directory): ND_OK, ND_EIO or ND_ENOSPC. */
int shard_manifest_write(const shard_manifest *m, const char *dir);

#endif
