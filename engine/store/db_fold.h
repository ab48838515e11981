/*
 * db_fold.h — the fold service (db_fold.c; engine internal). Declares
 * what db_fold.c defines.
 */
#ifndef ND_DB_FOLD_H
#define ND_DB_FOLD_H

#include <stdint.h>

#include "neardup.h"

/* The default fold threshold: this many table entries, or about one per
 * run when that is more (db_fold_threshold). */
#define DB_DEFAULT_FOLD_THRESHOLD 1000000ull

/* Background fold: wake it if the fresh backlog passed the threshold. */
void db_fold_kick(nd_db *db);
/* Fresh entries (all tables) past which a background fold starts: the
 * option if set, else about one per run (fps x tables / run_size), at
 * least DB_DEFAULT_FOLD_THRESHOLD. */
uint64_t db_fold_threshold(uint64_t option, uint64_t fps, unsigned tables, unsigned run_size);
/* Fold every table (takes fold.mu; writers go on between steps). With
 * all, also what writers add meanwhile; without (the background fold),
 * what they add during a table's sequential refold waits for the next. */
int db_fold_all(nd_db *db, int all);
/* Fold every table now; the caller holds fold.mu and write.mu. */
int db_fold_locked(nd_db *db);
int db_bg_start(nd_db *db);
void db_bg_stop(nd_db *db);
/* Hold the fold and every writer off (fold.mu, then the writer lock), and
 * let them go: the exclusive section of the bulk paths. */
void db_exclusive_lock(nd_db *db);
void db_exclusive_unlock(nd_db *db);

/* At open: each table's fresh entries (st_table_fresh_count, the
 * mirror's waiting entries included: after db_mirrored_open) into its
 * fresh count, and all of them into the backlog of the next fold. */
int db_fold_open(nd_db *db);

/* The fresh counts. A write that adds fresh entries (fresh in all, the
 * same number in every table) raises each table's count before it is
 * written, so that no probe skips a visible entry (db_fold_fresh_raise),
 * takes the raise back if the write failed (db_fold_fresh_unraise), and
 * once written adds them to the fold's backlog (db_fold_fresh_written;
 * writer lock held). A query asks, before it opens its views, whether
 * table t may hold fresh entries at all (db_fold_fresh_maybe). */
void db_fold_fresh_raise(nd_db *db, uint64_t fresh);
void db_fold_fresh_unraise(nd_db *db, uint64_t fresh);
void db_fold_fresh_written(nd_db *db, uint64_t fresh);
int db_fold_fresh_maybe(nd_db *db, unsigned t);

#endif /* ND_DB_FOLD_H */
