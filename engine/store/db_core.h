/*
 * db_core.h — the database handle and the engine's lowest layer
 * (db_core.c; engine internal).
 *
 * Room: store/. It may call: index/, text/ (and compaction/storage.h,
 * common/).
 * The room is the database itself: its handle, open and close, the write
 * transaction and the writers, queries, batches, resemblance checks, the
 * fold and the admin calls. bulk/ (import, the loader, repair) and
 * shards/ build on it. Its modules form layers; each calls only those
 * below it:
 *
 *   db_open.c                open, create, close: starts and stops the rest
 *   db_admin.c               compaction, counts, stats, verify, backup
 *   db_batch.c               nd_db_batch (check, and with ND_BATCH_ADD store)
 *   db_write.c               nd_db_add_many, nd_db_add_if_new, nd_db_add_doc_if_new,
 *                            nd_db_delete, nd_db_expire
 *   db_similar.c             a resemblance store's checks, batch and import groups
 *   db_txn.c                 the write transaction every writer uses
 *   db_query.c, db_results.c nd_db_query, nd_db_get and the probes under them
 *   db_fold.c                the fold service (fresh entries -> runs), its thread
 *   db_mirrored.c            new fingerprints logged for the fresh mirror
 *   db_bands.c, db_bands_read.c, db_band_filter.c
 *                            recent band entries, in memory and logged; their
 *                            reads; the band prefix filter
 *   db_sign.c, db_load_dirs.c  a text's signature in the store; the loaders'
 *                            directories
 *   db_core.c                this header: record codecs, checks, the writer
 *                            lock, counters record, reader pool, threads,
 *                            table entries
 *
 * Each module has its own header declaring what its .c defines; db_write.c
 * and db_admin.c define only public functions (include/neardup.h). The
 * handle below is the sum of the modules' state: each group of fields says
 * which module writes it.
 *
 * Concurrency: RocksDB serves reads from any thread. Every write (add,
 * delete, refresh, fold step) is a read-modify-write of docs, rev, the
 * tables and the counters, so writers hold write.mu from their first read
 * to st_write (db_txn.c). Queries take no lock; nor does nd_db_add_if_new's
 * check, which is made good under write.mu (db->commits). fold.mu
 * keeps one fold at a time and is taken before write.mu, never after.
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
/* A resemblance store's sketch value (family "sketch", key the document
 * key): the sketch version (1 byte, ND_SKETCH_VERSION), the bins
 * (ND_SKETCH_BYTES), the band keys (ND_SKETCH_BANDS x BE32): 177 bytes. */
#define DB_SKETCH_VALUE_LEN (1 + ND_SKETCH_BYTES + 4 * ND_SKETCH_BANDS)
_Static_assert(DB_SKETCH_VALUE_LEN == CMP_SKETCH_VALUE_LEN, "the storage layer's sketch length");
/* A band entry's key (family "band", empty value): u8 band || BE32 band
 * key || document key. Its first DB_BAND_PREFIX_LEN bytes are what a
 * check seeks. */
#define DB_BAND_PREFIX_LEN ST_CF_BAND_PREFIX
/* The largest batch nd_db_batch checks by probes, not the merge (db_batch.c). */
#define DB_BATCH_PROBES_MAX 4096
/* Fingerprints nd_db_add_if_new remembers it stored (db_recent). */
#define DB_RECENT 1024

/* A fingerprint nd_db_add_if_new stored, and the epoch of its commit. */
typedef struct db_recent {
    uint64_t epoch, fp;
} db_recent;

/* The writer lock and the counters it guards (db_core.c takes it;
 * db_txn.c's commit writes the counters; read under the lock, or without
 * it where an estimate will do: the query's cost model, the batch's
 * density, the bulk paths, which hold it). */
typedef struct db_writer {
    pthread_mutex_t mu;
    uint64_t docs, fps; /* documents, distinct fingerprints */
} db_writer;

/* What commits tell nd_db_add_if_new's checks, which run outside the writer
 * lock and, under it, look only at what was committed since they began
 * (db_txn.c alone). epoch counts commits (raised under the lock once a
 * write is visible; read without it). The fingerprints add_if_new stored
 * are in ring[] (slot at next) with their epochs; gap is the newest epoch
 * the ring cannot speak for: another kind of commit, or an entry the ring
 * dropped (all three under the writer lock). */
typedef struct db_commits {
    _Atomic uint64_t epoch;
    uint64_t gap;
    db_recent ring[DB_RECENT];
    size_t at;
} db_commits;

/* New fingerprints whose table entries the fresh mirror holds and a meta
 * record logs, before the tables get their keys (db_mirrored.c alone).
 * fps (in no order) changes with the writer lock and mu both held, its
 * buffer too; read under either. flushes counts the flushes that wrote
 * table keys (under both; tests and benches read it). */
typedef struct db_mirror {
    st_u64s fps;
    uint64_t flushes;
    pthread_mutex_t mu;
} db_mirror;

/* The fold service (db_fold.c; the write path raises the fresh counts
 * through db_fold.h). */
typedef struct db_folder {
    pthread_mutex_t mu;     /* one fold at a time; taken before the writer lock */
    uint64_t threshold;     /* the option; 0: the default, which grows with the store */
    uint64_t fresh_pending; /* table entries since the last fold, or at open (writer lock) */
    /* Per table, at least the number of its fresh entries: raised before a
     * write that inserts them, lowered after a fold moved them into runs.
     * A probe that reads 0 (before it opens its iterator) skips the fresh
     * space. Removals of fresh entries do not lower it (still >= the
     * truth); a fold under both locks resets it to 0. */
    _Atomic uint64_t fresh_live[ND_MAX_TABLES];
    /* The background thread: woken by kick, ended by stop (bg_mu). */
    pthread_mutex_t bg_mu;
    pthread_cond_t bg_cv;
    pthread_t thread;
    int started, stop, kick;
} db_folder;

/* Table readers for queries, kept for reuse (db_core.c). */
typedef struct db_readers {
    pthread_mutex_t mu;
    st_reader *pool[DB_POOL_MAX];
    unsigned n;
} db_readers;

struct nd_db {
    /* Set by nd_db_open (db_open.c) and fixed until nd_db_close: read anywhere
     * without a lock. */
    st_store *store;
    nd_plan plan;
    char *path;
    int readonly, sync;
    unsigned run_size;
    nd_fp_options fp;      /* stopwords point into stop_buf */
    char fp_config[256];
    double min_resemblance;/* 0: fingerprint only; else a resemblance store */
    char *stop_buf;        /* the stop words, each NUL-terminated */
    size_t stop_len;
    const char **stop_ptrs;
    /* nd_db_batch probes batches of at most this many documents and merges
     * larger ones: DB_BATCH_PROBES_MAX; tests set it to choose. */
    size_t batch_probes_max;
    /* Band entries a resemblance store keeps in memory before it writes
     * them (db_bands.c); 0: DB_BANDS_MAX. Tests set it to choose. */
    size_t bands_max;
    /* nd_db_options.threads (0: one a CPU, at most 8): nd_db_batch's workers
     * and whether a loader's passes overlap (db_threads). */
    unsigned threads;
    /* nd_db_set_progress: the long whole-store calls' reports (db_progress). */
    nd_progress_cb progress;
    void *progress_payload;

    db_writer write;
    db_commits commits;
    db_mirror mirror;
    struct db_bands *bands; /* a resemblance store's recent band entries (db_bands.c) */
    db_folder fold;
    db_readers readers;
};

/* ---- record codecs ---------------------------------------------------- */

/* Rev key of a document: BE64 fp || key (out holds 8 + ND_MAX_KEY_LEN);
 * returns its length. */
size_t db_rev_key_encode(uint8_t *out, uint64_t fp, const void *key, size_t klen);

/* Doc value codec. */
void db_doc_encode(uint8_t out[DB_DOC_VALUE_LEN], uint64_t fp, double score, int64_t time);
int db_doc_decode(const char *val, size_t len, uint64_t *fp, double *score, int64_t *time);
/* The one rule of retention: a document last seen at time is expired by
 * nd_db_expire(db, before) (and listed by nd_db_foreach_expired) when this
 * holds. */
static inline int db_doc_expired(int64_t time, int64_t before) { return time < before; }
/* Score and time from a rev entry's value: 1 when it holds them, 0 when it
 * is empty (written before format 3: read the docs family instead), or
 * ND_ECORRUPT. */
int db_rev_decode(const char *val, size_t len, double *score, int64_t *time);

/* Sketch value codec (DB_SKETCH_VALUE_LEN). decode: ND_ECORRUPT for a
 * value of another length or sketch version. */
void db_sketch_encode(uint8_t out[DB_SKETCH_VALUE_LEN], const nd_sketch *sk);
int db_sketch_decode(const char *val, size_t len, nd_sketch *out);
/* Band entry key of band b of sketch key band for document key (out holds
 * DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN); returns its length. */
size_t db_band_key_encode(uint8_t *out, unsigned b, uint32_t band, const void *key, size_t klen);

/* ---- progress --------------------------------------------------------- */

/* Report to the handle's nd_db_set_progress callback, if any: 0 to go on,
 * else the stop the call returns (the callback's positive value, or
 * ND_ESTOPPED with a message naming phase). */
int db_progress(const nd_db *db, const char *phase, const char *unit, uint64_t done,
                uint64_t total);
/* db_progress every ND_PROGRESS_EVERY units: done a multiple of it. */
static inline int db_progress_tick(const nd_db *db, const char *phase, const char *unit,
                                   uint64_t done, uint64_t total)
{
    return db->progress && done % ND_PROGRESS_EVERY == 0 ? db_progress(db, phase, unit, done, total)
                                                         : 0;
}

/* A long rewrite's stop from within st_regen_put (st_regen_set_stop): the
 * caller's thread asks the callback (db_stop_ask, every
 * ST_REGEN_STOP_EVERY keys, with the phase's done so far), a fork on
 * another thread reads its answer (db_stop_seen); either makes the put
 * return ND_ESTOPPED, which db_stop_result turns back into the answer.
 * db NULL: a call that may not be stopped, asking nothing. */
typedef struct db_stop {
    const nd_db *db;
    const char *phase, *unit;
    _Atomic uint64_t done; /* what the asks report */
    uint64_t total;
    atomic_int value; /* the callback's answer, once nonzero */
} db_stop;
void db_stop_init(db_stop *st, const nd_db *db, const char *phase, const char *unit,
                  uint64_t total);
/* db_progress at done (kept for the asks between keys). */
int db_stop_report(db_stop *st, uint64_t done);
int db_stop_ask(void *stop);
int db_stop_seen(void *stop);
/* db_stop_ask when asks (the caller's thread), else db_stop_seen. */
int db_stop_check(db_stop *st, int asks);
/* One more unit done, from any thread: the next ask reports it. */
void db_stop_advance(db_stop *st);
/* On the caller's thread, its own share of the work done while other
 * threads go on (*running of them, each counting itself out): ask every
 * DB_STOP_WAIT_US until none is left. ND_OK, or db_stop_ask's ND_ESTOPPED
 * (the others read it by db_stop_seen). */
#define DB_STOP_WAIT_US 50000
int db_stop_wait(db_stop *st, const atomic_uint *running);
/* rc as it is, or for ND_ESTOPPED the callback's positive answer. */
int db_stop_result(db_stop *st, int rc);

/* ---- checks ----------------------------------------------------------- */

/* Check the handle is writable. */
int db_check_writable(nd_db *db);
/* Validate a key. */
int db_check_key(const void *key, size_t klen);
/* Validate every document's key; the error names the first bad one. */
int db_check_docs(const nd_doc *docs, size_t n);
/* In a resemblance store every document written carries a sketch: else
 * ND_EINVAL naming the first document without one (what, the call). */
int db_check_sketches(const nd_db *db, const nd_doc *docs, size_t n, const char *what);

/* ---- the writer lock and the counters --------------------------------- */

/* Take write.mu; release it with db_write_unlock. A writer that finds it
 * held spins up to DB_WRITE_SPIN_NS before it sleeps: a lock hand-over
 * through sleep and wake-up costs more than a stream's write holds it
 * (100M, two threads of nd_db_add_if_new: 44k voluntary context switches for
 * 100,000 adds and 127-132% CPU when sleeping at once). */
void db_write_lock(nd_db *db);
void db_write_unlock(nd_db *db);
#define DB_WRITE_SPIN_NS 50000

/* Threads a call may use: db->threads, or when 0 min(online CPUs,
 * DB_MAX_THREADS); at least 1. Batches, the loader and the band thread
 * ask. */
#define DB_MAX_THREADS 8
unsigned db_threads(const nd_db *db);

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
