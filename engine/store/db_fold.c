/*
 * db_fold.c — the fold service: moving the tables' fresh entries into
 * runs, in the caller's thread or in the background thread it owns.
 *
 * Every new fingerprint enters each table as a fresh entry (a key of its
 * own, or an entry of the in-memory mirror waiting for its key:
 * db_mirrored.c). A fold merges them into the compressed runs
 * (st_table_fold, st_table_refold). Writers count what they add
 * (fresh_pending, under the writer lock) and wake the background thread
 * once the backlog passes the threshold (db_fold_kick); nd_db_compact and
 * the bulk paths fold at once. Per table, fresh_live bounds the fresh
 * entries from above, so a query can skip the fresh space when it is 0.
 *
 * Invariants: one fold at a time (fold.mu); fold.mu is taken before the
 * writer lock, never after it; a fold step holds the writer lock from its
 * read to its write, and writers run between steps. Before a fold reads
 * the fresh space from RocksDB the mirror's waiting entries get their
 * keys (db_mirrored_flush).
 *
 * Callers: the write path (db_txn.c wakes it), db_admin.c (nd_db_compact),
 * the bulk paths (db_import.c, db_load.c, load_commit.c fold with both
 * locks held) and db_open.c (starts and stops the thread).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_core.h"
#include "db_fold.h"
#include "db_mirrored.h"
#include "nd_error.h"

static void lock_writer(void *p) { pthread_mutex_lock(&((nd_db *)p)->write.mu); }

/* Between two fold steps: a mutex is not fair, and the fold thread would
 * take it back before a waiting writer wakes up; a short sleep lets the
 * writer in (the fold's thousands of steps lose a few ms in all). */
static void unlock_writer(void *p)
{
    pthread_mutex_unlock(&((nd_db *)p)->write.mu);
    struct timespec ts = {0, 20 * 1000};
    nanosleep(&ts, NULL);
}

/* After a fold moved n fresh entries of table t into runs (written). */
static void fresh_lower(nd_db *db, unsigned t, uint64_t n)
{
    uint64_t cur = atomic_load(&db->fold.fresh_live[t]);
    while (!atomic_compare_exchange_weak(&db->fold.fresh_live[t], &cur, cur > n ? cur - n : 0)) {
    }
}

/* Fold table t. Where its fresh entries fall into most runs (about one
 * per REFOLD_RUNS runs or more) the table is rewritten in one sequential
 * pass (st_table_refold: no seek per run, nothing through the WAL); else,
 * or if a write during that pass deleted or changed runs, run by run
 * (st_table_fold). What writers added during a refold stays fresh unless
 * all (nd_db_compact): folding it run by run would write the run space and
 * so take the table's direct reader away until a compaction.
 * fps: the store's fingerprints, one entry each. */
#define REFOLD_RUNS 4
static int fold_table(nd_db *db, unsigned t, uint64_t fps, int all, st_lock_fn lock,
                      st_lock_fn unlock, uint64_t *folded)
{
    uint64_t fresh = atomic_load(&db->fold.fresh_live[t]), more = 0;
    *folded = 0;
    if (fresh && fresh * db->run_size * REFOLD_RUNS >= fps) {
        ND_FORWARD(st_table_refold(db->store, t, db->run_size, lock, unlock, db, folded));
        if (*folded && !all) return ND_OK;
    }
    int rc = st_table_fold(db->store, t, db->run_size, db->sync, lock, unlock, db, &more);
    *folded += more;
    return rc;
}

int db_fold_all(nd_db *db, int all)
{
    int rc = ND_OK;
    pthread_mutex_lock(&db->fold.mu);
    db_write_lock(db);
    /* The fold reads the fresh space from RocksDB: the entries waiting
     * in the mirror get their keys first. */
    rc = db_mirrored_flush(db);
    if (rc == ND_OK) db->fold.fresh_pending = 0;
    uint64_t fps = db->write.fps;
    db_write_unlock(db);
    unsigned tables = db->plan.info.tables;
    /* nd_db_compact's folds (all) report a table at a time; the
     * background's do not (the callback runs on the caller's thread). */
    if (all && rc == ND_OK) rc = db_progress(db, "folding", "tables", 0, tables);
    for (unsigned t = 0; t < tables && rc == ND_OK; t++) {
        uint64_t folded = 0;
        rc = fold_table(db, t, fps, all, lock_writer, unlock_writer, &folded);
        fresh_lower(db, t, folded);
        if (all && rc == ND_OK) rc = db_progress(db, "folding", "tables", t + 1, tables);
    }
    pthread_mutex_unlock(&db->fold.mu);
    return rc;
}

int db_fold_locked(nd_db *db)
{
    int rc = db_mirrored_flush(db);
    db->fold.fresh_pending = 0;
    for (unsigned t = 0; t < db->plan.info.tables && rc == ND_OK; t++) {
        uint64_t folded;
        rc = fold_table(db, t, db->write.fps, 1, NULL, NULL, &folded);
        /* No writer could run: the fresh space is now empty. */
        if (rc == ND_OK) atomic_store(&db->fold.fresh_live[t], 0);
    }
    return rc;
}

static void *bg_main(void *p)
{
    nd_db *db = p;
    pthread_mutex_lock(&db->fold.bg_mu);
    while (!db->fold.stop) {
        if (!db->fold.kick) {
            pthread_cond_wait(&db->fold.bg_cv, &db->fold.bg_mu);
            continue;
        }
        db->fold.kick = 0;
        pthread_mutex_unlock(&db->fold.bg_mu);
        /* A failed background fold leaves the tables as they were (each
         * step is atomic); the next kick or nd_db_compact tries again. After
         * a fold its rewritten runs are spread over new files, read
         * through RocksDB (10M, 4 tables: k=3 p50 25 -> 110 us) until a
         * compaction makes each table's runs one file again. */
        if (db_fold_all(db, 0) == ND_OK) (void)st_compact_tables(db->store);
        pthread_mutex_lock(&db->fold.bg_mu);
    }
    pthread_mutex_unlock(&db->fold.bg_mu);
    return NULL;
}

int db_bg_start(nd_db *db)
{
    ND_RETURN_IF(pthread_create(&db->fold.thread, NULL, bg_main, db) != 0, ND_ENOMEM,
                 "cannot start the background fold thread");
    db->fold.started = 1;
    return ND_OK;
}

void db_bg_stop(nd_db *db)
{
    if (!db->fold.started) return;
    pthread_mutex_lock(&db->fold.bg_mu);
    db->fold.stop = 1;
    pthread_cond_signal(&db->fold.bg_cv);
    pthread_mutex_unlock(&db->fold.bg_mu);
    /* A compaction after a fold may take minutes at 100M: cut it short
     * (the files stay as they were; the next fold compacts again). */
    st_stop_compacting(db->store, 1);
    pthread_join(db->fold.thread, NULL);
    st_stop_compacting(db->store, 0);
    db->fold.started = 0;
}

/* A fold rewrites every run a fresh entry falls into: with fewer fresh
 * entries than runs each costs a run rewrite (and the compaction after
 * rewrites every table), so by default a fold waits for about one per
 * run, at least DB_DEFAULT_FOLD_THRESHOLD. At 100M with 10 tables that is
 * 7.8M entries (a fold every 780k documents; the mirror holds them in
 * about 16 bytes each) where a fixed 1M folded every 100k. */
uint64_t db_fold_threshold(uint64_t option, uint64_t fps, unsigned tables, unsigned run_size)
{
    if (option) return option;
    uint64_t per_run = fps / (run_size ? run_size : 1) * tables;
    return per_run > DB_DEFAULT_FOLD_THRESHOLD ? per_run : DB_DEFAULT_FOLD_THRESHOLD;
}

void db_fold_kick(nd_db *db)
{
    if (!db->fold.started) return;
    db_write_lock(db);
    int due = db->fold.fresh_pending >=
              db_fold_threshold(db->fold.threshold, db->write.fps, db->plan.info.tables, db->run_size);
    if (due) db->fold.fresh_pending = 0;
    db_write_unlock(db);
    if (!due) return;
    pthread_mutex_lock(&db->fold.bg_mu);
    db->fold.kick = 1;
    pthread_cond_signal(&db->fold.bg_cv);
    pthread_mutex_unlock(&db->fold.bg_mu);
}


int db_fold_open(nd_db *db)
{
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        uint64_t n;
        ND_FORWARD(st_table_fresh_count(db->store, t, &n));
        atomic_store(&db->fold.fresh_live[t], n);
        /* What earlier opens left unfolded counts toward the next fold:
         * else a writer that closes before adding fold_threshold entries
         * (a crawler restarted daily) would never fold, and the fresh
         * space, its mirror and the time to open would grow for ever. */
        db->fold.fresh_pending += n;
    }
    return ND_OK;
}

/* ---- the fresh counts ------------------------------------------------- */

void db_fold_fresh_raise(nd_db *db, uint64_t fresh)
{
    uint64_t per_table = fresh / db->plan.info.tables;
    for (unsigned t = 0; per_table && t < db->plan.info.tables; t++)
        atomic_fetch_add(&db->fold.fresh_live[t], per_table);
}

void db_fold_fresh_unraise(nd_db *db, uint64_t fresh)
{
    uint64_t per_table = fresh / db->plan.info.tables;
    for (unsigned t = 0; per_table && t < db->plan.info.tables; t++)
        atomic_fetch_sub(&db->fold.fresh_live[t], per_table);
}

void db_fold_fresh_written(nd_db *db, uint64_t fresh)
{
    db->fold.fresh_pending += fresh;
}

int db_fold_fresh_maybe(nd_db *db, unsigned t)
{
    return atomic_load(&db->fold.fresh_live[t]) != 0;
}

/* ---- the bulk paths' exclusive section -------------------------------- */

void db_exclusive_lock(nd_db *db)
{
    pthread_mutex_lock(&db->fold.mu);
    db_write_lock(db);
}

void db_exclusive_unlock(nd_db *db)
{
    db_write_unlock(db);
    pthread_mutex_unlock(&db->fold.mu);
}
