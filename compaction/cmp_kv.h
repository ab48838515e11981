/*
 * cmp_kv.h — the key-value adapter: the storage layer's only view of
 * RocksDB (its cmp_kv_impl.h alone includes <rocksdb/c.h>).
 *
 * It offers what the layer above needs of an ordered key-value store and
 * nothing of what it stores: a database of named column families
 * ("families"), point reads, atomic write batches across families (indexed
 * ones read their own writes), iterators, snapshots, sorted files written
 * aside and ingested whole, the list of live files, and maintenance
 * (flush, compaction, checkpoint). It knows no key layout, table, mirror
 * or generation: those are the table layer's (cmp_layout.h, cmp_store.h).
 * A family's options come from a profile (kv_profile) its caller chose for
 * it by number.
 *
 * Errors: RocksDB reports failures as strings; kv_map_error (cmp_kv_error.h) turns them
 * into nd_error codes, the one place that knows RocksDB's words, and every
 * function here goes through it.
 *
 * Thread-safety: RocksDB's. A database, its families and snapshots are
 * used from any thread; a batch, an iterator or a file writer by one
 * thread at a time.
 */
#ifndef CMP_KV_H
#define CMP_KV_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_kvdir.h" /* kv_version, kv_probe */

typedef struct kv_db kv_db;
typedef struct kv_cf kv_cf; /* a family of an open database */
typedef struct kv_batch kv_batch;
typedef struct kv_iter kv_iter;
typedef struct kv_snap kv_snap;
typedef struct kv_sst kv_sst;


/* How a family's files are laid out and read. Zero fields: RocksDB's
 * defaults, no filter, no compression. */
typedef struct kv_profile {
    int compress;            /* LZ4 where this RocksDB build has it, else none */
    unsigned bloom_bits;     /* bits per key of the files' bloom filters; 0: none */
    unsigned prefix_len;     /* filters hold the keys' first prefix_len bytes, not
                              * whole keys: kv_iter_new_prefix's probes use them */
    double memtable_bloom;   /* size ratio of the memtables' bloom filter; 0: none */
    int memtable_whole_key;  /* that filter holds whole keys (point reads) */
    unsigned block_size;     /* bytes of a data block; 0: RocksDB's 4 KB */
    int plain_format;        /* pinned layout of the block-based table: format
                              * version 5, XXH3 block checksums, every index
                              * entry a restart point (what cmp_direct.c parses) */
    uint64_t file_size;      /* target size of a compaction's files; 0: RocksDB's */
    unsigned l0_files;       /* level-0 files that start a compaction; 0: RocksDB's 4.
                              * With universal: the sorted runs that start one */
    int universal;           /* universal compaction (merges runs of like size)
                              * instead of leveled */
} kv_profile;

typedef struct kv_open_opts {
    int create;                 /* make the directory and the families named */
    int readonly;               /* no lock taken; writes fail. A reader beside any
                                 * writer: a RocksDB secondary instance whose view
                                 * (files and log) is taken once at open, whole,
                                 * and whose files stay readable while it is open
                                 * (ND_EBUSY when no consistent view could be
                                 * read); its scratch directory lives in
                                 * scratch_dir */
    uint64_t cache_bytes;       /* the block cache every family shares; 0: 64 MiB */
    const kv_profile *profiles; /* profile i of families opened with profile i */
    unsigned nprofiles;
    int salvage; /* replay the log's intact records past damage (repair only);
                  * else damage anywhere but a torn last record fails the open */
    const char *scratch_dir; /* a reader's scratch directory's parent; NULL: /tmp */
    int ingest_behind; /* files may be ingested below every other (kv_ingest_behind;
                        * repair only: the last level is kept for them) */
    uint64_t synced_seq; /* the sequence number of the last synced write
                          * (cmp_synced.h; 0: none to check): a store that
                          * recovers to less lost acknowledged writes, and
                          * the open fails (ND_ECORRUPT) before a writer's
                          * RocksDB open writes anything */
} kv_open_opts;


/* The names of the families of the database at path, malloc'd (free with
 * kv_names_free). */
int kv_list_families(const char *path, char ***out, size_t *n);
void kv_names_free(char **names, size_t n);

/* Open the database at path with families names[0..n), family i with
 * profile profiles[i] (opening must name every family the database holds;
 * creating, the directory and the families are made). cfs[i] receives
 * family i (free each with kv_family_free before kv_close), NULL for
 * RocksDB's "default", which the adapter keeps. A RocksDB built without
 * LZ4 opens with compression off. Errors as kv_map_error's, naming path. */
int kv_open(kv_db **out, const char *path, const kv_open_opts *o, size_t n,
            const char *const *names, const unsigned *profiles, kv_cf **cfs);
/* The sequence number of the database's newest write. */
uint64_t kv_latest_seq(kv_db *db);
/* Close; every family, snapshot, iterator and file writer must be freed
 * first. Accepts NULL. */
void kv_close(kv_db *db);

/* Create family name with profile (ND_EINVAL if it exists). */
int kv_family_create(kv_db *db, const char *name, unsigned profile, kv_cf **out);
/* Drop family cf: its files go once cf is freed and no iterator reads
 * them. */
int kv_family_drop(kv_db *db, kv_cf *cf);
void kv_family_free(kv_cf *cf); /* accepts NULL */

/* ---- point reads (fill: the blocks read go into the block cache) ---- */
/* *out_val malloc'd and NUL-terminated (free with free()); ND_ENOTFOUND
 * when absent. */
int kv_get(kv_db *db, kv_cf *cf, int fill, const void *key, size_t klen, char **out_val,
           size_t *out_len);
/* found[i] = whether cf holds keys[i] (lens[i] bytes), for i < n: batched,
 * each file's filter and index probed once per chunk of keys. */
int kv_exists_many(kv_db *db, kv_cf *cf, int fill, const char *const *keys, const size_t *lens,
                   size_t n, unsigned char *found);

/* ---- write batches -------------------------------------------------- */
/* indexed: the batch reads its own writes (kv_batch_get, kv_iter_new);
 * else a plain one, cheaper, whose writes only kv_write sees. */
int kv_batch_new(kv_batch **out, int indexed);
void kv_batch_free(kv_batch *b); /* accepts NULL */
void kv_batch_clear(kv_batch *b);
int kv_batch_indexed(const kv_batch *b);
size_t kv_batch_count(const kv_batch *b);
void kv_batch_put(kv_batch *b, kv_cf *cf, const void *key, size_t klen, const void *val,
                  size_t vlen);
void kv_batch_delete(kv_batch *b, kv_cf *cf, const void *key, size_t klen);
/* Delete the keys k with lo <= k < hi: plain batches only (ND_EINVAL). */
int kv_batch_delete_range(kv_batch *b, kv_cf *cf, const void *lo, size_t lolen,
                          const void *hi, size_t hilen);
/* As kv_get, through an indexed batch's writes first. */
int kv_batch_get(kv_db *db, kv_batch *b, kv_cf *cf, int fill, const void *key, size_t klen,
                 char **out_val, size_t *out_len);
/* Apply b atomically; sync: the WAL is synced first. */
int kv_write(kv_db *db, kv_batch *b, int sync);
/* Make every write applied so far durable: the WAL synced (RocksDB's
 * FlushWAL(sync)), as if each had been written with sync. */
int kv_sync_wal(kv_db *db);

/* ---- snapshots and iterators ----------------------------------------- */
/* A point-in-time view; its reads fill the block cache when fill. */
int kv_snap_new(kv_snap **out, kv_db *db, int fill);
void kv_snap_free(kv_snap *sn); /* accepts NULL; free its iterators first */

/* Iterators over one family, each as of the moment it is made (or of a
 * snapshot). Every kind but the prefix probe reads the whole key order. */
/* Point reads and short walks; over an indexed batch's writes too, if
 * b is one. */
int kv_iter_new(kv_iter **out, kv_db *db, kv_cf *cf, int fill, kv_batch *b);
/* A probe that stays within the prefix (profile prefix_len) of the key it
 * seeks: the files and memtables whose prefix filter lacks it are
 * skipped; what it shows past that prefix is undefined. */
int kv_iter_new_prefix(kv_iter **out, kv_db *db, kv_cf *cf, int fill);
/* A walk over much of a family: large read-ahead, no block cache fill;
 * as of snap (NULL: now). */
int kv_iter_new_scan(kv_iter **out, kv_db *db, kv_cf *cf, const kv_snap *snap);
/* As of snap, filling the cache as snap says. */
int kv_iter_new_at(kv_iter **out, kv_db *db, kv_cf *cf, const kv_snap *snap);
/* Only the keys k with lo <= k < hi (blen bytes each, at most 16): RocksDB
 * stops at hi instead of stepping over the deletions beyond it; as of snap
 * (NULL: now). */
int kv_iter_new_bounded(kv_iter **out, kv_db *db, kv_cf *cf, int fill, const void *lo,
                        const void *hi, size_t blen, const kv_snap *snap);
void kv_iter_free(kv_iter *it); /* accepts NULL */
void kv_iter_seek(kv_iter *it, const void *key, size_t klen);
void kv_iter_seek_first(kv_iter *it);
void kv_iter_next(kv_iter *it);
int kv_iter_valid(const kv_iter *it);
/* Valid until the iterator moves. */
const char *kv_iter_key(const kv_iter *it, size_t *klen);
const char *kv_iter_value(const kv_iter *it, size_t *vlen);
/* ND_OK, or the error that ended the walk. */
int kv_iter_status(const kv_iter *it);

/* A reader's: the writer's MANIFEST state its view is of (cmp_kvdir.h);
 * NULL for a writable or plain read-only database. */
const char *kv_view(const kv_db *db);

#endif /* CMP_KV_H */
