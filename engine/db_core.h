/*
 * db_core.h — the database handle and the engine's lowest layer
 * (db_core.c; engine internal).
 *
 * The engine's modules form layers; each calls only those below it:
 *
 *   db_open.c                open, create, close: starts and stops the rest
 *   db_admin.c               compaction, counts, stats, verify, backup
 *   db_load.c, load_*.c      the bulk loader
 *   db_import.c              nd_import, and the replacement path the loader shares
 *   db_batch.c               nd_batch (check, and with ND_BATCH_ADD store)
 *   db_write.c               nd_add_many, nd_add_if_new, nd_delete, nd_expire
 *   db_txn.c                 the write transaction every writer uses
 *   db_query.c, db_results.c nd_query, nd_get and the probes under them
 *   db_fold.c                the fold service (fresh entries -> runs), its thread
 *   db_mirrored.c            new fingerprints logged for the fresh mirror
 *   db_core.c                this header: record codecs, checks, the writer
 *                            lock, counters record, reader pool, table entries
 *
 * Each module has its own header declaring what its .c defines; db_write.c
 * and db_admin.c define only public functions (include/neardup.h). The
 * handle below is the sum of the modules' state: each group of fields says
 * which module writes it.
 *
 * Concurrency: RocksDB serves reads from any thread. Every write (add,
 * delete, refresh, fold step) is a read-modify-write of docs, rev, the
 * tables and the counters, so writers hold write_mu from their first read
 * to st_write (db_txn.c). Queries take no lock; nor does nd_add_if_new's
 * check, which is made good under write_mu (add_epoch, recent). fold_mu
 * keeps one fold at a time and is taken before write_mu, never after.
 */
#ifndef ND_DB_CORE_H
#define ND_DB_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "neardup.h"
#include "plan.h"
#include "storage.h"

#define DB_POOL_MAX 16
#define DB_DOC_VALUE_LEN 24 /* BE64 fp, BE64 score bits, BE64 time */
/* A rev entry's value (format 3): the doc value without its fp, which the
 * rev key already holds. Format-2 entries have an empty value. */
#define DB_REV_VALUE_LEN (DB_DOC_VALUE_LEN - 8)
#define DB_REV_VALUE(docval) ((const uint8_t *)(docval) + 8)
/* The largest batch nd_batch checks by probes, not the merge (db_batch.c). */
#define DB_BATCH_PROBES_MAX 4096
/* Fingerprints nd_add_if_new remembers it stored (db_recent). */
#define DB_RECENT 1024

/* A fingerprint nd_add_if_new stored, and the epoch of its commit. */
typedef struct db_recent {
    uint64_t epoch, fp;
} db_recent;

struct nd_db {
    st_store *store;
    nd_plan plan;
    char *path;
    int readonly, sync;
    unsigned run_size;
    uint64_t fold_threshold; /* the option; 0: the default, which grows with the store */
    nd_fp_options fp;      /* stopwords point into stop_buf */
    char fp_config[256];
    char *stop_buf;        /* the stop words, each NUL-terminated */
    size_t stop_len;
    const char **stop_ptrs;

    pthread_mutex_t write_mu;
    uint64_t ndocs, nfps;     /* counters (write_mu) */
    uint64_t fresh_pending;   /* table entries since the last fold, or at open (write_mu) */
    /* Per table, at least the number of its fresh entries: raised before a
     * write that inserts them, lowered after a fold moved them into runs.
     * A probe that reads 0 (before it opens its iterator) skips the fresh
     * space. Removals of fresh entries do not lower it (still >= the
     * truth); a fold under both locks resets it to 0. */
    _Atomic uint64_t fresh_live[ND_MAX_TABLES];
    /* nd_add_if_new checks outside write_mu, then under it only what was
     * committed since (db_write.c). add_epoch counts db_commit's writes
     * (raised under write_mu once a write is visible; read without it).
     * The fingerprints add_if_new stored are in recent[] (a ring; slot
     * recent_at next) with their epochs; recent_gap is the newest epoch
     * the ring cannot speak for: another kind of commit, or an entry the
     * ring dropped (all three write_mu). */
    _Atomic uint64_t add_epoch;
    uint64_t recent_gap;
    db_recent recent[DB_RECENT];
    size_t recent_at;

    /* New fingerprints whose table entries the fresh mirror holds and a
     * meta record logs, before the tables get their keys (db_mirrored.c).
     * Changed with write_mu and mirrored_mu both held; read under either. */
    st_u64s mirrored;
    pthread_mutex_t mirrored_mu;

    /* nd_batch probes batches of at most this many documents and merges
     * larger ones: DB_BATCH_PROBES_MAX; tests set it to choose. */
    size_t batch_probes_max;

    pthread_mutex_t pool_mu;  /* readers for queries */
    st_reader *pool[DB_POOL_MAX];
    unsigned npool;

    pthread_mutex_t fold_mu;  /* one fold at a time */
    pthread_mutex_t bg_mu;    /* background fold thread */
    pthread_cond_t bg_cv;
    pthread_t bg;
    int bg_started, bg_stop, bg_kick;
};

/* ---- record codecs ---------------------------------------------------- */

/* Rev key of a document: BE64 fp || key (out holds 8 + ND_MAX_KEY_LEN);
 * returns its length. */
size_t db_rev_key_encode(uint8_t *out, uint64_t fp, const void *key, size_t klen);

/* Doc value codec. */
void db_doc_encode(uint8_t out[DB_DOC_VALUE_LEN], uint64_t fp, double score, int64_t time);
int db_doc_decode(const char *val, size_t len, uint64_t *fp, double *score, int64_t *time);
/* Score and time from a rev entry's value: 1 when it holds them, 0 when it
 * is empty (written before format 3: read the docs family instead), or
 * ND_ECORRUPT. */
int db_rev_decode(const char *val, size_t len, double *score, int64_t *time);

/* ---- checks ----------------------------------------------------------- */

/* Check the handle is writable. */
int db_check_writable(nd_db *db);
/* Validate a key. */
int db_check_key(const void *key, size_t klen);
/* Validate every document's key; the error names the first bad one. */
int db_check_docs(const nd_doc *docs, size_t n);

/* ---- the writer lock and the counters --------------------------------- */

/* Take write_mu; release it with db_write_unlock. A writer that finds it
 * held spins up to DB_WRITE_SPIN_NS before it sleeps: a lock hand-over
 * through sleep and wake-up costs more than a stream's write holds it
 * (100M, two threads of nd_add_if_new: 44k voluntary context switches for
 * 100,000 adds and 127-132% CPU when sleeping at once). */
void db_write_lock(nd_db *db);
void db_write_unlock(nd_db *db);
#define DB_WRITE_SPIN_NS 50000

/* Put the counters record into b. */
int db_stage_counters(nd_db *db, st_batch *b, uint64_t docs, uint64_t fps);

/* ---- readers ---------------------------------------------------------- */

/* A reader from the pool (or a new one); give it back with db_reader_put,
 * which frees it when the pool is full. */
int db_reader_get(nd_db *db, st_reader **out);
void db_reader_put(nd_db *db, st_reader *r);

/* ---- table entries of fingerprints ------------------------------------ */

/* Table t's entries of fps[0..n), ascending and distinct, into pv (room
 * for 2n: the second half is the sort's scratch); returns how many. */
size_t db_table_sorted(const nd_db *db, unsigned t, const uint64_t *fps, size_t n, uint64_t *pv);
/* Stage the tables' entries of the fingerprints in defer (a write
 * transaction's list, which it empties), table by table in ascending
 * order. */
int db_stage_deferred(nd_db *db, st_batch *b, st_u64s *defer);

#endif /* ND_DB_CORE_H */
