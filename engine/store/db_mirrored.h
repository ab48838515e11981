/*
 * db_mirrored.h — new fingerprints whose table entries wait in the fresh
 * mirror (db_mirrored.c; engine internal). Declares what db_mirrored.c
 * defines.
 */
#ifndef ND_DB_MIRRORED_H
#define ND_DB_MIRRORED_H

#include "neardup.h"
#include "storage.h"

/* Logged fingerprints past which their table keys are written, and the
 * most new fingerprints of one call that are logged (a larger call writes
 * their table keys at once, in order). */
#define DB_MIRRORED_MAX 16384
#define DB_MIRRORED_CALL 4096

/* Stage the new fingerprints of a call (defer, which it empties): up to
 * DB_MIRRORED_CALL of them as meta records and mirror-only table entries,
 * copied to *adopt for db_mirrored_adopt after the write succeeds; more,
 * or when a mirror has no room, as table keys (db_stage_deferred), adopt
 * left empty. May flush first (a write of its own). write.mu held. */
int db_mirrored_stage(nd_db *db, st_batch *b, st_u64s *defer, st_u64s *adopt);
/* After the write of db_mirrored_stage's batch succeeded (cannot fail). */
void db_mirrored_adopt(nd_db *db, const st_u64s *adopt);
/* Is fp logged: do its table entries wait in the mirror? write.mu held. */
int db_mirrored_waits(nd_db *db, uint64_t fp);
/* Stage into b (an indexed batch) the removal of logged fingerprint fp
 * from the tables: its record and its entry of every table go in b's
 * write, with whatever else b holds; fp is appended to *gone for
 * db_mirrored_forget. Writes nothing itself: no flush. write.mu held. */
int db_mirrored_stage_remove(nd_db *db, st_batch *b, uint64_t fp, st_u64s *gone);
/* After the write of the batch db_mirrored_stage_remove staged into
 * succeeded, before db_mirrored_adopt of the same commit: the list drops
 * gone's fingerprints (cannot fail; one a flush wrote meanwhile, or gone
 * twice, is skipped). */
void db_mirrored_forget(nd_db *db, const st_u64s *gone);
/* Write the table keys of every logged fingerprint, a file per table
 * (st_table_ingest_keys), then delete their records with one write of
 * its own (write.mu held; read-write store). Counts db->mirror.flushes
 * when there was any. */
int db_mirrored_flush(nd_db *db);
/* db_mirrored_flush under the writer lock, which it takes (read-write
 * store). */
int db_mirrored_flush_now(nd_db *db);
/* At open: read the records into db->mirror.fps and give their entries to
 * the mirror (or, writable, flush them when a mirror has no room). */
int db_mirrored_open(nd_db *db);
/* st_table_scan of table t, less the fresh keys of logged fingerprints,
 * then each logged fingerprint's entry of t as a fresh entry (cb(&v, 1,
 * 0, 0, payload)), in ascending order: a fresh entry comes once, even
 * when a flush ran during the scan or a crash cut one short. An entry a
 * writable store's fold moved into a run between the copy of the list
 * and the scan's snapshot comes twice (once in a run). flush (write.mu
 * not held): a writable store flushes first. */
int db_mirrored_scan(nd_db *db, unsigned t, st_table_cb cb, void *payload, int flush);

#endif /* ND_DB_MIRRORED_H */
