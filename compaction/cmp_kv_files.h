/*
 * cmp_kv_files.h — the key-value adapter's sorted files, the database's
 * files and state, flush and compaction, checkpoint and repair (defined in
 * cmp_kv_files.cc; the rest of the adapter is cmp_kv.h).
 */
#ifndef CMP_KV_FILES_H
#define CMP_KV_FILES_H

#include "cmp_kv.h"

/* ---- sorted files written aside, ingested whole ------------------------ */
/* A file at path in the layout of profile's families; keys strictly
 * ascending. Errors name what (NULL: the path). */
int kv_sst_new(kv_sst **out, kv_db *db, unsigned profile, const char *path, const char *what);
int kv_sst_put(kv_sst *w, const void *key, size_t klen, const void *val, size_t vlen);
int kv_sst_delete(kv_sst *w, const void *key, size_t klen);
int kv_sst_delete_range(kv_sst *w, const void *lo, size_t lolen, const void *hi, size_t hilen);
/* Complete the file (it must hold at least one entry). */
int kv_sst_finish(kv_sst *w);
/* Free the writer; the file stays where it is. Accepts NULL. */
void kv_sst_free(kv_sst *w);
/* Move files[0..n) (finished, their key ranges apart) into family cf in
 * one step; errors name what. */
int kv_ingest(kv_db *db, kv_cf *cf, const char *const *files, size_t n, const char *what);
/* As kv_ingest, below everything cf holds (sequence number 0, the last
 * level): a database opened with kv_open_opts.ingest_behind, files that
 * fit in cf's last level. */
int kv_ingest_behind(kv_db *db, kv_cf *cf, const char *const *files, size_t n,
                     const char *what);
/* As kv_ingest, from a copy: the files stay as they were (RocksDB writes
 * an ingested file's sequence number into it, and will not ingest such a
 * file again), for an ingest that may have to be made again. */
int kv_ingest_copy(kv_db *db, kv_cf *cf, const char *const *files, size_t n,
                   const char *what);

/* ---- the database's files and state ----------------------------------- */
/* A live table file of a family (valid during the call only). */
typedef struct kv_file {
    const char *path;    /* full path */
    const char *largest; /* its largest key */
    size_t largest_len;
    uint64_t deletions;  /* deletion entries it holds */
} kv_file;
/* Called for each file: 0 to go on, else the code to stop with. */
typedef int (*kv_file_fn)(void *payload, const kv_file *f);
/* Visit the live table files of the family named family. */
int kv_live_files(kv_db *db, const char *family, kv_file_fn fn, void *payload);

/* Do cf's memtables hold nothing? 0 when unknown. */
int kv_memtables_empty(kv_db *db, kv_cf *cf);
/* Bytes of cf's live table files (0 when unknown). */
uint64_t kv_live_bytes(kv_db *db, kv_cf *cf);
/* Capacity of the block cache. */
uint64_t kv_cache_bytes(kv_db *db);

/* Flush cf's memtables into a file and wait. A failure, or one of a
 * background job meanwhile, stops file deletions for the handle's life. */
int kv_flush(kv_db *db, kv_cf *cf);
/* Rewrite all of cf's files, the bottom level too (where deletions meet
 * what they delete and both go). exclusive: RocksDB's own compactions wait
 * meanwhile. ND_OK, ND_ENOMEM, or the error of a background job that
 * failed meanwhile (ND_EIO: "No space left on device", "Input/output
 * error"); a failure stops file deletions as kv_flush's does. */
int kv_compact(kv_db *db, kv_cf *cf, int exclusive);
/* The error of any background flush or compaction of db's that failed
 * since it opened (what names the step: "closing"), else ND_OK. */
int kv_background_check(kv_db *db, const char *what);
/* stop: make running and later kv_compact calls end soon, their work
 * unfinished; else allow them again. */
void kv_compactions_stop(kv_db *db, int stop);
/* A consistent copy of the database in new directory dir (hard links
 * where possible). Of a reader (readonly): the files of its view and the
 * writer's logs as they are now, one consistent state only while the
 * writer's MANIFEST stays as in the view (kv_view; cmp_store.c checks). */
int kv_checkpoint(kv_db *db, const char *dir);
/* RocksDB's repair of the closed database at path, in place: damaged
 * table files move to path/lost/, a new manifest lists what remains. It
 * keeps only families a table file names, and log records of the default
 * family only: salvage the log first (kv_open_opts.salvage, a flush). */
int kv_repair(const char *path);

#endif /* CMP_KV_FILES_H */
