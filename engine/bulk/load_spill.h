/*
 * load_spill.h — the bulk loader's temporary files (engine internal).
 *
 * A loader (db_load.c) sorts each chunk of documents in memory and writes
 * it out once: per table a file of ascending distinct permuted
 * fingerprints, and the chunk's docs and rev entries as files of records
 * in ascending key order. The commit reads every chunk's file of a family
 * back at once through a k-way merge (a binary heap over the files), so
 * each family is written into the new generation in one pass.
 *
 * Formats (native byte order: the files never leave the process's
 * machine): a table file is raw uint64 values; a record file is records
 * of uint32 key length, uint32 value length, key, value.
 */
#ifndef ND_LOAD_SPILL_H
#define ND_LOAD_SPILL_H

#include <stddef.h>
#include <stdint.h>

/* ---- writing --------------------------------------------------------- */
typedef struct spill_out spill_out;
/* Create (truncate) path for writing. ND_EIO naming path on failure. */
int spill_create(spill_out **out, const char *path);
int spill_put_u64s(spill_out *o, const uint64_t *v, size_t n);
int spill_put_record(spill_out *o, const void *key, size_t klen, const void *val, size_t vlen);
/* Flush and close; a write error (a full disk: ND_ENOSPC) is reported
 * here at the latest. Frees o (also on error); accepts NULL. */
int spill_close(spill_out *o);

/* ---- merging fingerprint files ---------------------------------------- */
typedef struct spill_u64_merge spill_u64_merge;
/* Open the n files (each ascending and distinct). */
int spill_u64_merge_open(spill_u64_merge **out, char *const *paths, size_t n);
/* Up to cap of the next values of all files, ascending, a value held by
 * several files once: *got of them, 0 at the end (st_u64_read_fn). */
int spill_u64_merge_read(void *merge, uint64_t *buf, size_t cap, size_t *got);
void spill_u64_merge_close(spill_u64_merge *m); /* accepts NULL */

/* ---- merging record files --------------------------------------------- */
typedef struct spill_rec_merge spill_rec_merge;
/* Open the n files (each in strictly ascending bytewise key order). */
int spill_rec_merge_open(spill_rec_merge **out, char *const *paths, size_t n);
/* The next record of all files in key order; equal keys come in file
 * order. 1 and the record (valid until the next call) with the index of
 * its file in *src, 0 at the end, or an error code. */
int spill_rec_merge_next(spill_rec_merge *m, const void **key, size_t *klen, const void **val,
                         size_t *vlen, size_t *src);
void spill_rec_merge_close(spill_rec_merge *m); /* accepts NULL */

#endif /* ND_LOAD_SPILL_H */
