/*
 * cmp_store.h — the store: one key-value database (cmp_kv.h) holding a
 * neardup store's families (cmp_layout.h), with its current generation
 * of families (cmp_gen.h), its write batches and the sequence of its
 * writes, the in-memory mirror of the tables' fresh spaces (cmp_fresh.h)
 * and the tables' direct readers (cmp_direct.h).
 *
 * The store is where the table layer keeps its promises about writes: a
 * batch notes every change to a table family as it is staged (the fresh
 * entries it puts or deletes, whether it touches a run), and st_write
 * applies the batch, then gives its fresh changes to the mirror; a write
 * that touches the run space of a table is bracketed by two increments of
 * st_runs_seq (odd in between), drops the table's direct reader first,
 * and hands the mirror its changes inside the bracket: a reader that sees
 * the same even value before and after its read saw runs and mirror from
 * one side of every such write (cmp_table.c).
 *
 * Thread-safety: reads from any thread; writes are serialised by the
 * engine (it holds its write mutex around read-modify-write sequences and
 * st_write): the mirror and the generation switch rely on it.
 */
#ifndef CMP_STORE_H
#define CMP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_layout.h"
#include "cmp_u64s.h"
#include "neardup.h"

typedef struct st_store st_store;
typedef struct st_batch st_batch;
struct cmp_direct;
struct cmp_flog;
struct cmp_fresh;
struct cmp_gen;
struct kv_batch;
struct kv_cf;
struct kv_db;

typedef struct st_open_opts {
    int create;           /* create if missing (with ntables tables) */
    int excl;             /* with create: ND_EEXIST if it exists */
    int readonly;         /* open read-only: no lock taken, writes fail */
    unsigned ntables;     /* when creating: t (1..ND_MAX_TABLES) */
    uint64_t cache_bytes; /* block cache shared by all families */
    int map_tables;       /* read the tables' runs files through mappings (cmp_direct.h) */
    const char *scratch_dir; /* read-only: where a reader's scratch directory goes
                              * (kv_open_opts.scratch_dir); NULL: /tmp */
    int resemblance;      /* when creating: the sketch and band families too */
} st_open_opts;

/* Open or create. Maps RocksDB failures: missing -> ND_ENOTFOUND, LOCK held
 * -> ND_EBUSY, path is a file / not writable -> ND_EIO / ND_EREADONLY,
 * checksum -> ND_ECORRUPT; the message names the path. On open, the number
 * of tables is read from the list of column families. A store that
 * recovers to a sequence below its record of the last synced write
 * (cmp_synced.h: a log deleted or cut) -> ND_ECORRUPT naming the loss,
 * before anything is written; st_close removes the record once every
 * family is flushed. */
int st_open(st_store **out, const char *path, const st_open_opts *o);
int st_close(st_store *s); /* accepts NULL */
unsigned st_ntables(const st_store *s);
/* Does the store have family cf (ST_CF_*)? Sketch and band: only a
 * resemblance store (created with st_open_opts.resemblance); a read or
 * write of a family the store lacks is the caller's bug. */
int st_has_family(st_store *s, int cf);

/* ---- atomic write batches ----------------------------------------- */
/* A batch indexes its own writes: st_batch_get and the table operations
 * read through it ("read your own writes"), so several changes to one
 * run in one batch compose. */
int st_batch_new(st_batch **out, st_store *s);
/* A plain batch: puts and deletes only, no index, so much cheaper for bulk
 * loads; st_batch_get and iterators do not see its writes. */
int st_batch_new_plain(st_batch **out, st_store *s);
void st_batch_free(st_batch *b); /* accepts NULL */
void st_batch_clear(st_batch *b);
/* Number of operations in the batch. */
size_t st_batch_count(const st_batch *b);
int st_batch_put(st_batch *b, int cf, const void *key, size_t klen,
                 const void *val, size_t vlen);
int st_batch_delete(st_batch *b, int cf, const void *key, size_t klen);
/* Delete every key k of family cf with lo <= k < hi, in one range
 * deletion: for a plain batch and a family other than a table
 * (ND_EINVAL otherwise: neither the batch's index nor the mirror could
 * follow it). */
int st_batch_delete_range(st_batch *b, int cf, const void *lo, size_t lolen, const void *hi,
                          size_t hilen);
/* Get through the batch, then the database. As st_get. */
int st_batch_get(st_store *s, st_batch *b, int cf, const void *key,
                 size_t klen, char **out_val, size_t *out_len);
/* Apply atomically across all families; sync = fsync the WAL first, and
 * then record the write's sequence number (cmp_synced.h; best effort:
 * the write stands even when the record cannot be written). */
int st_write(st_store *s, st_batch *b, int sync);
/* Make every write so far durable, as if each had been synced: fsync the
 * WAL, then record the sequence number reached (cmp_synced.h; best
 * effort, as st_write's). The caller serialises it with the writers.
 * @return ND_OK; ND_EREADONLY; ND_EIO, ND_ENOSPC (the fsync failed);
 * ND_ECORRUPT (the database was found damaged). */
int st_sync(st_store *s);
/* b records the document counter docs: a synced write of it puts docs in
 * the record of the last synced write (cmp_synced.h), for repair's count
 * of the acknowledged documents a damaged log lost. */
void st_batch_note_docs(st_batch *b, uint64_t docs);
/* Number of successful st_write calls so far, counted after each write
 * became visible: an iterator made when it read N still shows everything
 * while it reads N. */
uint64_t st_write_seq(st_store *s);
/* Changes only around a write that touches the run space of a table (a
 * fold step, an import's merge, a removal from a run): odd while such a
 * write is being applied, even otherwise. Runs read by an iterator made
 * when it read an even N are current while it still reads N. */
uint64_t st_runs_seq(st_store *s);

/* The store's sequence number: its newest write's (RocksDB's), the
 * same scale as the synced record's (cmp_synced.h). */
uint64_t st_latest_seq(st_store *s);

/* ---- table entries the mirror holds ---------------------------------- */
/* Add pfp as a fresh entry of table t to the in-memory mirror only: b's
 * write gives it to the mirror (queries and cursors find it at once) but
 * writes no table key. The caller keeps the durable record of such an
 * entry and writes its key with st_table_ingest_keys later, before anything
 * reads table t's fresh space from RocksDB (a fold, a scan, a removal, a
 * cursor that may fall back to its snapshot); until then st_table_scan
 * and those do not see it. Call only after st_table_mirror_room said yes
 * (writes serialised, so it stays true until the write). */
int st_table_insert_mirrored(st_batch *b, unsigned t, uint64_t pfp);
/* 1 when table t's mirror is valid and can take n more entries, else 0
 * (the caller then inserts with st_table_insert). */
int st_table_mirror_room(st_store *s, unsigned t, uint64_t n);
/* Give b's table changes to the mirror without writing b (a store open
 * read-only too): how entries logged elsewhere re-enter the mirror at
 * open. The caller frees b unwritten. */
void st_mirror_apply(st_store *s, const st_batch *b);
/* If table t's mirror is invalid, reload it from the fresh space (the
 * caller excludes writers): a fold that completed does. ND_ECORRUPT when
 * the fresh space is damaged; other failures leave the mirror invalid
 * (readers go to RocksDB) and return ND_OK. */
int st_mirror_repair(st_store *s, unsigned t);

/* Table t's direct reader in the current generation, referenced (drop
 * with cmp_direct_unref), or NULL when RocksDB must read its runs: the
 * run space is not one file, a write changed it since, or the file is
 * in a format (or of a RocksDB version) the reader does not know. */
struct cmp_direct *st_table_direct(st_store *s, unsigned t);

/* The current generation number (0 until the first switch). */
uint64_t st_generation(st_store *s);

/* ---- whole database ------------------------------------------------ */
/* Consistent RocksDB checkpoint into new directory dir. */
int st_checkpoint(st_store *s, const char *dir);
/* Total bytes of the files in the database directory. */
int st_disk_bytes(st_store *s, uint64_t *out);
/* Flush memtables to SST files (used before stats/backup). */
int st_flush(st_store *s);
/* Flush, then rewrite every family's files: deleted entries and their
 * tombstones are dropped, so their disk space comes back. Costs a full
 * rewrite of the database, less the settled families. */
int st_compact_files(st_store *s);
/* Rewrite the tables' files alone (after a fold: its rewritten runs are
 * merged into the one file of each table), then read each table's runs
 * straight from that file again if no run-space write came meanwhile. */
int st_compact_tables(st_store *s);
/* With stop, make a running st_compact_tables (or st_compact_files) end
 * soon, its work unfinished; without, allow them again. */
void st_stop_compacting(st_store *s, int stop);
/* Is family cf (not ST_CF_META) settled: the single file a generation
 * switch of this handle ingested, untouched by any write since? Such a
 * family holds no deletions and st_compact_files leaves it alone. A
 * reopened store starts with none settled. */
int st_family_settled(st_store *s, int cf);
/* Do point reads (st_get, st_iter_new: the probes of queries) fill the
 * block cache? Only while the families' files fit in it; decided again at
 * open, generation switches, compaction and every few thousand writes. */
int st_fills_cache(st_store *s);

/* ---- for the storage layer's own modules ------------------------------ */
/* Files of the store's directory that a crash may leave behind (removed
 * at a writable open): a family written into a new generation (or a
 * table's runs rewritten in place) and its deletions, a fork's family
 * (%d: its number), the fresh keys and the band entries on their way in
 * (two names: a band flush runs beside the writer, cmp_band.c). */
#define ST_FILE_REGEN "regen.sst.tmp"
#define ST_FILE_REGEN_DEL "regen-del.sst.tmp"
#define ST_FILE_REGEN_FORK "regen-%d.sst.tmp"
#define ST_FILE_INGEST "fresh-keys.sst.tmp"
#define ST_FILE_BAND_INGEST "band-entries.sst.tmp"

/* The store's key-value database, and its mirror of the fresh spaces. */
struct kv_db *st_store_kv(st_store *s);
struct cmp_fresh *st_store_fresh(st_store *s);
/* ND_OK, or ND_EREADONLY naming the database when it is open read-only. */
int st_store_writable(const st_store *s);
/* The path of file name in the store's directory, malloc'd; NULL when
 * out of memory. */
char *st_store_file(const st_store *s, const char *name);
/* The current generation, referenced: release it with st_gen_release. */
struct cmp_gen *st_gen_acquire(st_store *s);
void st_gen_release(st_store *s, struct cmp_gen *g); /* accepts NULL */
/* Family cf for a reader holding g (NULL: the current generation, which
 * only st_write replaces, for writers). */
struct kv_cf *st_family(st_store *s, const struct cmp_gen *g, int cf);
/* Writes so far that deleted fresh entries. */
uint64_t st_dels_seq(st_store *s);
/* The key-value batch under b. */
struct kv_batch *st_batch_kv(st_batch *b);
/* Make b's write record generation next in meta and switch the store to
 * it (next's families all written; the batch writes nothing else into
 * generational families: ND_EINVAL). The write is synced, the old
 * families dropped after it (their files go when the last reader
 * does), next->made_current set. carry (CMP_CARRY_*, cmp_carry.h): the
 * docs and rev next carries have deletion files to ingest at the switch;
 * 0 for none. */
int st_batch_switch(st_batch *b, struct cmp_gen *next, unsigned carry);
/* A direct reader of file path, which holds table t's runs (over: that of
 * a refold, cmp_direct_open), or NULL when it cannot be read directly:
 * mapped when the store maps its tables, never for a RocksDB version the
 * reader was not tested with. */
struct cmp_direct *st_direct_open(st_store *s, const char *path, unsigned t, int over);
/* (Re)make the direct readers of g's tables in mask (bit t), whose run
 * spaces are what they were (a compaction or an ingest into a new
 * generation changes files, not contents). */
void st_direct_remake(st_store *s, struct cmp_gen *g, uint64_t mask);
/* Make d table t's direct reader in g (the store takes d's reference;
 * the old reader is let go). With if_seq, only while g is current and
 * runs_seq still reads *if_seq (else d is let go), and then runs_seq
 * moves by 2. For the store's own files (cmp_store_ingest.c). */
void st_direct_swap(st_store *s, struct cmp_gen *g, unsigned t, struct cmp_direct *d,
                    const uint64_t *if_seq);
/* Drop the direct readers of the current generation's tables in mask
 * (bit t): before a write to their run spaces. */
void st_direct_drop(st_store *s, uint64_t mask);

#endif /* CMP_STORE_H */
