/*
 * cmp_kv_impl.h — the key-value adapter's own insides, shared by its two
 * files (cmp_kv.cc: open, reads, batches, iterators; cmp_kv_files.cc:
 * sorted files, the database's files and state, checkpoint, repair).
 * Included by those two files and cmp_kv_resume.cc only: the one header
 * that includes <rocksdb/c.h>. Declares no function but static inline
 * helpers.
 */
#ifndef CMP_KV_IMPL_H
#define CMP_KV_IMPL_H

extern "C" {
#include "nd_error.h"
}
#include "cmp_kv_error.h"

#include <rocksdb/c.h>

#include "cmp_kv_mem.h"
#include "cmp_kvdir.h"
extern "C" {
#include "cmp_manifest.h"
}

/* Read-ahead of walks over much of a family: one read of this size
 * instead of one per 4 KB block. */
#define SCAN_READAHEAD (2u << 20)
#define KV_PROFILES 8 /* most profiles a database holds */

/* A kv_cf is RocksDB's handle itself, never dereferenced as a kv_cf. */
#define H(cf) ((rocksdb_column_family_handle_t *)(cf))
#define K(bytes) ((const char *)(bytes)) /* RocksDB takes bytes as char */

typedef struct kv_prof {
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *bbt;
    int compress;
} kv_prof;

struct kv_db {
    rocksdb_t *db;
    rocksdb_options_t *opts; /* the database's own, and "default"'s */
    kv_prof prof[KV_PROFILES];
    unsigned nprof;
    rocksdb_cache_t *cache;
    rocksdb_column_family_handle_t *default_cf;
    /* Shared read options: point reads [fill], prefix probes [fill],
     * walks (no fill, read-ahead). */
    rocksdb_readoptions_t *point[2], *prefix[2], *scan;
    rocksdb_writeoptions_t *wopts, *wopts_sync;
    char *path;
    int corrupt; /* a read met damage: never written to again (kv_write) */
    int frozen;  /* a write failed: RocksDB deletes no file from then on */
    char *scratch; /* a secondary instance's own directory, else NULL */
    const char *scratch_parent; /* where to make it (kv_open_opts.scratch_dir), during kv_open */
    char view[KVDIR_STATE_MAX]; /* a secondary's: the MANIFEST's state its view is of */
    kv_mem mem;    /* its memory plan under an address space limit (cmp_kv_mem.h) */
    int mem_held;  /* it holds the reserve */
};

struct kv_batch {
    rocksdb_writebatch_wi_t *wb; /* indexed */
    rocksdb_writebatch_t *plain;
    int failed; /* the code of a change it could not take: kv_write refuses it */
};

struct kv_iter {
    rocksdb_iterator_t *it;
    rocksdb_readoptions_t *ropts; /* its own (bounds, a walk of a snapshot), or NULL */
    char bounds[2][16];
    int failed; /* the code of an exception in a move: invalid from then on */
    struct kv_db *db;  /* marked corrupt when the walk meets damage */
};

struct kv_snap {
    rocksdb_t *db;
    const rocksdb_snapshot_t *snap;
    rocksdb_readoptions_t *ropts;
};

struct kv_sst {
    rocksdb_envoptions_t *env;
    rocksdb_sstfilewriter_t *w;
    char *what; /* names the file in errors */
};

/* ---- errors ----------------------------------------------------------- */

/* Map and free a RocksDB error string; ND_OK if there was none. */
static inline int take_error(char *err, const char *what)
{
    if (!err) return ND_OK;
    int rc = kv_map_error(err, what);
    rocksdb_free(err);
    return rc;
}

/* As take_error, for a call that changes db's files (a write, a flush,
 * an ingestion, a family dropped, a compaction). After a failed write of
 * its MANIFEST, RocksDB 7.8 starts a new one on the next change; when
 * that fails too, it still takes the new one for current and deletes the
 * one CURRENT names, and the store no longer opens (fault_io_import found
 * it: an EIO near the end of an import). So the first failure stops file
 * deletions for the rest of the handle's life: obsolete files stay until
 * the next open, which deletes them. */
static inline int write_error(struct kv_db *db, char *err, const char *what)
{
    int rc = take_error(err, what);
    if (rc < 0 && !__atomic_exchange_n(&db->frozen, 1, __ATOMIC_RELAXED) && !db->scratch) {
        char *e = NULL;
        try {
            rocksdb_disable_file_deletions(db->db, &e);
        } catch (...) { /* nothing more to do: the error is reported */
        }
        if (e) rocksdb_free(e);
    }
    return rc;
}

/* As take_error, for a read of db: damage marks db corrupt. */
static inline int read_error(struct kv_db *db, char *err, const char *what)
{
    int rc = take_error(err, what);
    if (rc == ND_ECORRUPT) __atomic_store_n(&db->corrupt, 1, __ATOMIC_RELAXED);
    return rc;
}

/* The options of profile i (the database's own when there is none). */
static inline rocksdb_options_t *profile_opts(const struct kv_db *db, unsigned i)
{
    return i < db->nprof ? db->prof[i].opts : db->opts;
}

#endif /* CMP_KV_IMPL_H */
