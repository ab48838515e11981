/*
 * db.h — the database handle and helpers shared by engine/db_*.c.
 *
 * Concurrency: RocksDB serves reads from any thread. Every write (add,
 * delete, refresh, fold step) is a read-modify-write of docs, rev, the
 * tables and the counters, so writers hold write_mu from their first read
 * to st_write. Queries take no lock; nor does nd_add_if_new's check, which
 * is made good under write_mu (add_epoch, recent). fold_mu keeps one fold
 * at a time.
 */
#ifndef ND_DB_H
#define ND_DB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "neardup.h"
#include "plan.h"
#include "sort.h"
#include "storage.h"

#define DB_DEFAULT_K 3u
#define DB_DEFAULT_DOCS 100000000ull
#define DB_DEFAULT_RUN_SIZE 128u
/* The default fold threshold: this many table entries, or about one per
 * run when that is more (db_fold_threshold). */
#define DB_DEFAULT_FOLD_THRESHOLD 1000000ull
#define DB_POOL_MAX 16
#define DB_DOC_VALUE_LEN 24 /* BE64 fp, BE64 score bits, BE64 time */
/* A rev entry's value (format 3): the doc value without its fp, which the
 * rev key already holds. Format-2 entries have an empty value. */
#define DB_REV_VALUE_LEN (DB_DOC_VALUE_LEN - 8)
#define DB_REV_VALUE(docval) ((const uint8_t *)(docval) + 8)
/* Logged fingerprints (db_mirrored.c) past which their table keys are
 * written, and the most new fingerprints of one call that are logged
 * (a larger call writes their table keys at once, in order). */
#define DB_MIRRORED_MAX 16384
#define DB_MIRRORED_CALL 4096
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

/* nd_results internals: matches plus an arena holding their keys. */
struct nd_results {
    nd_match *m;
    size_t *koff; /* key offset in arena, or SIZE_MAX for no key */
    size_t n, cap;
    char *arena;
    size_t alen, acap;
};

/* Append a match (key copied, NUL-terminated); pointers are resolved by
 * results_finish. */
int results_push(nd_results *r, uint64_t fp, unsigned dist, const char *key, size_t klen,
                 double score, int64_t time);
/* Sort by (dist, fp, key), keep `limit` (0 = all), resolve key pointers. */
int results_finish(nd_results *r, size_t limit);
/* Resolve key pointers in push order (no sort). */
void results_resolve(nd_results *r);
/* For each of fps[0..n) (ascending, distinct): append its smallest key
 * (from rev; score and time 0) to out and set at[i] to its index there, or
 * SIZE_MAX when it has no document. One iterator over one view of rev,
 * walked forward. */
int db_first_keys(nd_db *db, const uint64_t *fps, size_t n, nd_results *out, size_t *at);

/* Rev key of a document: BE64 fp || key (out holds 8 + ND_MAX_KEY_LEN);
 * returns its length. */
size_t db_rev_key_encode(uint8_t *out, uint64_t fp, const void *key, size_t klen);

/* Doc value codec. */
void db_doc_encode(uint8_t out[DB_DOC_VALUE_LEN], uint64_t fp, double score, int64_t time);
int db_doc_decode(const char *val, size_t len, uint64_t *fp, double *score, int64_t *time);
/* The one rule of retention: a document last seen at time is expired by
 * nd_expire(db, before) (and listed by nd_foreach_expired) when this holds. */
static inline int db_doc_expired(int64_t time, int64_t before) { return time < before; }
/* Score and time from a rev entry's value: 1 when it holds them, 0 when it
 * is empty (written before format 3: read the docs family instead), or
 * ND_ECORRUPT. */
int db_rev_decode(const char *val, size_t len, double *score, int64_t *time);

/* Stage adding / deleting one document into batch b (write_mu held).
 * Counters are updated in *docs / *fps (applied by the caller after a
 * successful write). fp_absent: the caller knows fp has no document (db
 * or batch), which saves a rev probe. */
int db_stage_add(nd_db *db, st_batch *b, const void *key, size_t klen, uint64_t fp,
                 double score, int64_t time, int fp_absent, uint64_t *docs, uint64_t *fps,
                 uint64_t *fresh, st_u64s *defer);
/* Table t's entries of fps[0..n), ascending and distinct, into pv (room
 * for 2n: the second half is the sort's scratch); returns how many. */
size_t db_table_sorted(const nd_db *db, unsigned t, const uint64_t *fps, size_t n, uint64_t *pv);
/* Stage the tables' entries of the fingerprints in defer (db_stage_add's
 * list, which it empties), table by table in ascending order. */
int db_stage_deferred(nd_db *db, st_batch *b, st_u64s *defer);
int db_stage_delete(nd_db *db, st_batch *b, const void *key, size_t klen, uint64_t *docs,
                    uint64_t *fps);
/* Write the staged batch with the new counters (write_mu held); on success
 * adopt them and add fresh to the fold backlog. */
int db_commit(nd_db *db, st_batch *b, uint64_t docs, uint64_t fps, uint64_t fresh);
/* Put the counters record into b. */
int db_stage_counters(nd_db *db, st_batch *b, uint64_t docs, uint64_t fps);

/* Every stored fingerprint within k of fp (no document expansion), sorted
 * ascending and unique, into out (cleared). first = stop at one. */
int db_match_fps(nd_db *db, uint64_t fp, unsigned k, int first, st_u64s *out);

/* ---- fingerprints waiting in the mirror (db_mirrored.c) ------------ */
/* Stage the new fingerprints of a call (defer, which it empties): up to
 * DB_MIRRORED_CALL of them as meta records and mirror-only table entries,
 * copied to *adopt for db_mirrored_adopt after the write succeeds; more,
 * or when a mirror has no room, as table keys (db_stage_deferred), adopt
 * left empty. May flush first (a write of its own). write_mu held. */
int db_mirrored_stage(nd_db *db, st_batch *b, st_u64s *defer, st_u64s *adopt);
/* After the write of db_mirrored_stage's batch succeeded (cannot fail). */
void db_mirrored_adopt(nd_db *db, const st_u64s *adopt);
/* Write the table keys of every logged fingerprint, a file per table
 * (st_table_ingest_keys), then delete their records with one write of
 * its own (write_mu held; read-write store). */
int db_mirrored_flush(nd_db *db);
/* At open: read the records into db->mirrored and give their entries to
 * the mirror (or, writable, flush them when a mirror has no room). */
int db_mirrored_open(nd_db *db);
/* st_table_scan of table t, less the fresh keys of logged fingerprints,
 * then each logged fingerprint's entry of t as a fresh entry (cb(&v, 1,
 * 0, 0, payload)), in ascending order: a fresh entry comes once, even
 * when a flush ran during the scan or a crash cut one short. An entry a
 * writable store's fold moved into a run between the copy of the list
 * and the scan's snapshot comes twice (once in a run). flush (write_mu
 * not held): a writable store flushes first. */
int db_mirrored_scan(nd_db *db, unsigned t, st_table_cb cb, void *payload, int flush);

/* Readers from the pool. */
int db_reader_get(nd_db *db, st_reader **out);
void db_reader_put(nd_db *db, st_reader *r);

/* Background fold: wake it if the fresh backlog passed the threshold. */
void db_fold_kick(nd_db *db);
/* Fresh entries (all tables) past which a background fold starts: the
 * option if set, else about one per run (fps x tables / run_size), at
 * least DB_DEFAULT_FOLD_THRESHOLD. */
uint64_t db_fold_threshold(uint64_t option, uint64_t fps, unsigned tables, unsigned run_size);
/* Fold every table (takes fold_mu; writers go on between steps). With
 * all, also what writers add meanwhile; without (the background fold),
 * what they add during a table's sequential refold waits for the next. */
int db_fold_all(nd_db *db, int all);
/* Fold every table now; the caller holds fold_mu and write_mu. */
int db_fold_locked(nd_db *db);
int db_bg_start(nd_db *db);
void db_bg_stop(nd_db *db);

/* ---- shared by nd_import and the loader (db_import.c) --------------- */
/* The last document of each key of docs[0..n): indexes of those whose key
 * is stored into *rep, of the others into *fresh (both malloc'd, both in
 * key order). */
int db_import_split(nd_db *db, const nd_doc *docs, size_t n, size_t **rep, size_t *nrep,
                    size_t **fresh, size_t *nfresh);
/* nd_import with fold_mu and write_mu held; *out_new (may be NULL) gets
 * the number of documents new to the store. */
int db_import_locked(nd_db *db, const nd_doc *docs, size_t n, uint64_t *out_new);
/* Replace the stored documents docs[idx[0..n)] through the staged path,
 * one atomic write, then fold (fold_mu and write_mu held). */
int db_import_replace(nd_db *db, const nd_doc *docs, const size_t *idx, size_t n);
/* How db_import_order orders: by key; by fingerprint, then key (rev's
 * order); or as given (idx is in key order already). */
enum { DB_ORDER_KEY, DB_ORDER_FP, DB_ORDER_GIVEN };
/* docs[idx[0..n)] (idx NULL: docs[0..n)) ordered as how says, as a
 * malloc'd array of n items (indexes fit in 32 bits). Equal keys come in
 * the order of their indexes. */
int db_import_order(const nd_doc *docs, const size_t *idx, size_t n, int how, sort_item **out);

/* Remove the temporary directories of loaders that did not finish (a
 * crash): best effort, at a writable open (the store's lock is held). */
void db_load_sweep(nd_db *db);

/* Take write_mu (release it with pthread_mutex_unlock). A writer that
 * finds it held spins up to DB_WRITE_SPIN_NS before it sleeps: a lock
 * hand-over through sleep and wake-up costs more than a stream's write
 * holds it (100M, two threads of nd_add_if_new: 44k voluntary context
 * switches for 100,000 adds and 127-132% CPU when sleeping at once). */
void db_write_lock(nd_db *db);
#define DB_WRITE_SPIN_NS 50000

/* Check the handle is writable. */
int db_check_writable(nd_db *db);
/* Validate a key. */
int db_check_key(const void *key, size_t klen);
/* Validate every document's key; the error names the first bad one. */
int db_check_docs(const nd_doc *docs, size_t n);

#endif
