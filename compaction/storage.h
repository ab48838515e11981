/*
 * storage.h — the one narrow header through which engine/ uses compaction/.
 *
 * compaction/ is the storage layer: it owns RocksDB (only cmp_store.c
 * includes <rocksdb/c.h>), the run codec (only cmp_codec.c includes
 * <zstd.h>) and the fold that turns fresh table entries into compressed
 * runs. engine/ sees column families by number, write batches, iterators and
 * "table" operations on permuted fingerprints; it never sees a RocksDB type.
 *
 * Layout of one database (a RocksDB directory):
 *   cf "meta"  : small text records (format version, plan, fp config, counters),
 *                and the engine's log of new fingerprints whose table entries
 *                wait in the fresh mirror (st_table_insert_mirrored)
 *   cf "docs"  : key -> 24 bytes: BE64 fp, BE64 bits of double score, BE64 time
 *   cf "rev"   : BE64 fp || key -> "" (which documents hold a fingerprint)
 *   cf "tNN"   : table NN (00..63) of permuted fingerprints, in two key
 *                spaces (cmp_table.h): 'F' || BE64(v) -> "" for a fresh
 *                entry, 'R' || BE64(tail) -> encoded run. Runs cover
 *                disjoint ranges (previous tail, tail]; a fresh value never
 *                equals a value inside a run.
 * Once an import rewrote them (st_regen), docs, rev and the tables are
 * named "docs.gG", "rev.gG", "tNN.gG": generation G, recorded in meta
 * "st.gen" (absent: generation 0, the plain names).
 *
 * Thread-safety: reads (st_get, iterators, st_table_range) from any thread;
 * writes are serialised by the engine (it holds its write mutex around
 * read-modify-write sequences and st_write): the fresh mirror relies on it.
 */
#ifndef ND_STORAGE_H
#define ND_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_layout.h"
#include "cmp_u64s.h"
#include "neardup.h"

typedef struct st_store st_store;
typedef struct st_batch st_batch;
typedef struct st_iter st_iter;
typedef struct st_reader st_reader;
typedef struct st_regen st_regen;

typedef struct st_open_opts {
    int create;           /* create if missing (with ntables tables) */
    int excl;             /* with create: ND_EEXIST if it exists */
    int readonly;         /* open read-only: no lock taken, writes fail */
    unsigned ntables;     /* when creating: t (1..ND_MAX_TABLES) */
    uint64_t cache_bytes; /* block cache shared by all families */
    int map_tables;       /* read the tables' runs files through mappings (cmp_direct.h) */
} st_open_opts;

/* Open or create. Maps RocksDB failures: missing -> ND_ENOTFOUND, LOCK held
 * -> ND_EBUSY, path is a file / not writable -> ND_EIO / ND_EREADONLY,
 * checksum -> ND_ECORRUPT; the message names the path. On open, the number
 * of tables is read from the list of column families. */
int st_open(st_store **out, const char *path, const st_open_opts *o);
int st_close(st_store *s); /* accepts NULL */
unsigned st_ntables(const st_store *s);

/* Translate a RocksDB error string into an nd_error and set the message
 * "<what>: <rocksdb text>". The only place that knows RocksDB's words. */
int st_map_error(const char *rocksdb_err, const char *what);

/* ---- point reads --------------------------------------------------- */
/* Read key from cf. *out_val is malloc'd (free with free()); ND_ENOTFOUND
 * when absent. */
int st_get(st_store *s, int cf, const void *key, size_t klen, char **out_val,
           size_t *out_len);

/* For each of keys[0..n) (lengths lens), whether cf holds it: found[i]
 * 1 or 0. Batched: much cheaper than n calls of st_get. */
int st_exists_many(st_store *s, int cf, const char *const *keys, const size_t *lens, size_t n,
                   unsigned char *found);

/* ---- atomic write batches ----------------------------------------- */
/* A batch indexes its own writes: st_batch_get and the table operations
 * below read through it ("read your own writes"), so several changes to one
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
/* Apply atomically across all families; sync = fsync the WAL first. */
int st_write(st_store *s, st_batch *b, int sync);
/* Number of successful st_write calls so far, counted after each write
 * became visible: an iterator made when it read N still shows everything
 * while it reads N. */
uint64_t st_write_seq(st_store *s);
/* Changes only around a write that touches the run space of a table (a
 * fold step, an import's merge, a removal from a run): odd while such a
 * write is being applied, even otherwise. Runs read by an iterator made
 * when it read an even N are current while it still reads N. */
uint64_t st_runs_seq(st_store *s);

/* ---- snapshots ----------------------------------------------------- */
/* A point-in-time view shared by several iterators. */
typedef struct st_snap st_snap;
int st_snap_new(st_snap **out, st_store *s);
void st_snap_free(st_snap *snap); /* accepts NULL; free its iterators first */

/* ---- iterators ----------------------------------------------------- */
/* Iterator over one family. If b is non-NULL it sees the batch's writes
 * over the database; if consistent is nonzero it reads one snapshot. */
int st_iter_new(st_iter **out, st_store *s, int cf, st_batch *b,
                int consistent);
/* Iterator over the keys k of one family with lo <= k < hi (klen bytes
 * each, at most 16), as of snapshot snap (NULL: now). Bounds let RocksDB
 * stop at hi instead of stepping over every deletion tombstone beyond it
 * (a fold leaves many). */
int st_iter_new_bounded(st_iter **out, st_store *s, int cf, const void *lo, const void *hi,
                        size_t klen, const st_snap *snap);
/* Iterator over the run space of table t (now), for probes: seek to a
 * key of the run space and step on within it; it skips the files and
 * memtables that hold no run (their prefix filter says so), and what it
 * shows outside the run space is undefined. */
int st_iter_new_probe(st_iter **out, st_store *s, unsigned t);
/* Iterator for a walk over a whole family (now): it does not fill the
 * block cache and reads ahead. */
int st_iter_new_scan(st_iter **out, st_store *s, int cf);
/* Iterator over one family as of snapshot snap. */
int st_iter_new_at(st_iter **out, st_store *s, int cf, const st_snap *snap);
/* Both: a walk over much of a family as of snapshot snap. */
int st_iter_new_scan_at(st_iter **out, st_store *s, int cf, const st_snap *snap);
void st_iter_free(st_iter *it); /* accepts NULL */
void st_iter_seek(st_iter *it, const void *key, size_t klen);
void st_iter_seek_first(st_iter *it);
void st_iter_next(st_iter *it);
int st_iter_valid(const st_iter *it);
const char *st_iter_key(const st_iter *it, size_t *klen);
const char *st_iter_value(const st_iter *it, size_t *vlen);
/* ND_OK, or the error that ended the iteration (checksum -> ND_ECORRUPT). */
int st_iter_status(const st_iter *it);

/* ---- tables of permuted fingerprints ------------------------------ */
/* A reader caches an iterator per table (reused while the run space did
 * not change since it was made, see st_runs_seq) and a codec context; one
 * thread uses it at a time. The engine keeps a pool of them. */
int st_reader_new(st_reader **out, st_store *s);
void st_reader_free(st_reader *r); /* accepts NULL */


/* Append to out every entry e of table t with lo <= e <= hi, ascending
 * (runs decoded; fresh entries too when with_fresh, else the caller knows
 * the table has none). Fresh entries come from the store's in-memory
 * mirror of the fresh space (cmp_fresh.h), which follows every successful
 * st_write: a read sees every write that returned before it began. */
int st_table_range(st_reader *r, unsigned t, uint64_t lo, uint64_t hi, int with_fresh,
                   st_u64s *out);

/* A hint that st_table_range(r, t, lo, ..., with_fresh, ...) comes soon:
 * a caller about to probe several tables hints each at stage 1, then
 * each at stage 2, then each at stage 3, then probes, and the cache
 * misses of their look-ups overlap: the index of a table r reads
 * directly, its block in a mapped file (cmp_direct_hint), and with
 * with_fresh the fresh mirror's chunk (cmp_fresh_hint). No effect on
 * results. */
void st_table_hint(const st_reader *r, unsigned t, uint64_t lo, int with_fresh, int stage);

/* Number of fresh entries of table t (the mirror's count, or a walk of
 * the fresh space when the mirror is not valid). */
int st_table_fresh_count(st_store *s, unsigned t, uint64_t *out);

/* Add pfp as a fresh entry of table t in batch b. The caller guarantees
 * pfp is not already in the table. */
int st_table_insert(st_store *s, st_batch *b, unsigned t, uint64_t pfp);

/* Add pfp as a fresh entry of table t to the in-memory mirror only: b's
 * write gives it to the mirror (queries and cursors find it at once) but
 * writes no table key. The caller keeps the durable record of such an
 * entry and writes its key with st_table_ingest_keys later, before anything
 * reads table t's fresh space from RocksDB (a fold, a scan, a removal, a
 * cursor that may fall back to its snapshot); until then st_table_scan
 * and those do not see it. Call only after st_table_mirror_room said yes
 * (writes serialised, so it stays true until the write). */
int st_table_insert_mirrored(st_batch *b, unsigned t, uint64_t pfp);
/* Write the keys of pv[0..n) (ascending, distinct), entries the mirror
 * holds already (st_table_insert_mirrored), into table t through a file
 * of their own that RocksDB takes in whole (an ingestion), instead of n
 * memtable inserts: at 100M the inserts of a flush cost about 0.7 us a
 * key, however sorted. Not atomic with any other write: the caller keeps
 * its durable records of the entries until this returned, and writing a
 * key twice is harmless (the same key, the same empty value). Like a
 * write, it may make RocksDB flush the table's memtables first. */
int st_table_ingest_keys(st_store *s, unsigned t, const uint64_t *pv, size_t n);
/* 1 when table t's mirror is valid and can take n more entries, else 0
 * (the caller then inserts with st_table_insert). */
int st_table_mirror_room(st_store *s, unsigned t, uint64_t n);
/* Give b's table changes to the mirror without writing b (a store open
 * read-only too): how entries logged elsewhere re-enter the mirror at
 * open. The caller frees b unwritten. */
void st_mirror_apply(st_store *s, const st_batch *b);

/* If table t's mirror is invalid, reload it from the fresh space (the
 * caller excludes writers): a fold that completed does. */
void st_mirror_repair(st_store *s, unsigned t);
/* The store's mirror of the fresh spaces (compaction internal). */
struct cmp_fresh;
struct cmp_fresh *st_store_fresh(st_store *s);

/* Remove pfp from table t in batch b: deletes its fresh entry, or rewrites
 * the run holding it (re-keyed when the tail goes). ND_ENOTFOUND if absent;
 * ND_ECORRUPT if the run does not decode. */
int st_table_remove(st_store *s, st_batch *b, unsigned t, uint64_t pfp);

/* Fold the fresh entries of table t into runs of about run_size entries, in
 * steps each written atomically by one batch that preserves the table's
 * set. Each step calls lock(payload) before reading and unlock(payload)
 * after writing, so the engine's writers interleave between steps.
 * *out_folded (may be NULL) counts fresh entries folded. */
typedef void (*st_lock_fn)(void *payload);
int st_table_fold(st_store *s, unsigned t, unsigned run_size, int sync,
                  st_lock_fn lock, st_lock_fn unlock, void *payload,
                  uint64_t *out_folded);

/* Stage into b the merge of vals[0..n) (ascending, distinct) into the runs
 * of table t (the bulk path of an import; the table must have no fresh
 * entries: fold first). Reads the database as it is, not b, so call it once
 * per table and batch. With added == NULL a value already in a run is
 * ND_ECORRUPT; else such values are skipped and the others appended to
 * *added (ascending). */
int st_table_merge(st_store *s, st_batch *b, unsigned t, unsigned run_size,
                   const uint64_t *vals, size_t n, st_u64s *added);

/* ---- generations: rewriting docs, rev and every table at once ------- */
/* A bulk import that touches most runs writes the documents, the reverse
 * family and every table anew, through SST files ingested into a new
 * generation of those families, instead of pushing gigabytes through the
 * WAL, the memtables and compaction. Nothing is visible until st_write of
 * a batch given the generation with st_batch_set_regen: that one synced
 * write records the generation in meta (with whatever else the batch
 * holds, e.g. counters), the store switches to the new families (runs_seq
 * is odd meanwhile) and drops the old ones. A crash before that write
 * leaves the old generation current and the next writable open drops the
 * new families; after it, the old ones. Snapshots and readers that hold
 * the old generation keep reading it. The caller serialises writers
 * around all of it, as for any write. */
int st_regen_new(st_regen **out, st_store *s);
/* Start, fill (keys strictly ascending) and finish family cf's file
 * (ST_CF_DOCS, ST_CF_REV or a table); the finish ingests it into the new
 * family. One family at a time, each once. */
int st_regen_begin(st_regen *g, int cf);
int st_regen_put(st_regen *g, const void *key, size_t klen, const void *val, size_t vlen);
int st_regen_end(st_regen *g);
/* A second writer of g's new generation, for another thread: it begins,
 * fills and ends families as g does, with files of its own, each family
 * written once by g or by one of its forks. What a fork ends is ingested
 * only when st_regen_join keeps it (after a fork's work turned out
 * not to be needed, it is dropped instead). ND_EINVAL for a table
 * rewritten in place or a fork. */
int st_regen_fork(st_regen **out, st_regen *g);
/* Ingest into g's generation every family that part finished (keep), or
 * drop them (also a family left open by a failure); frees part either
 * way. ND_EINVAL if part is not g's fork, or, to keep, has a family still
 * open or finished one that g wrote too (or is writing); an ingest's
 * failure as st_regen_end's. */
int st_regen_join(st_regen *g, st_regen *part, int keep);
/* Make b's write switch to generation g (g must outlive that write).
 * ND_EINVAL unless every family of g was written (an empty one too). */
int st_batch_set_regen(st_batch *b, st_regen *g);
/* Free; the new families are dropped unless a write made them current.
 * Accepts NULL. */
void st_regen_free(st_regen *g);
/* The current generation number (0 until the first switch). */
uint64_t st_generation(st_store *s);

/* A table rewritten in place, within the current generation: the
 * sequential fold (st_table_refold). st_regen_new_table (the caller holds
 * the writers off for the call) takes the view *snap (g's) the rewrite
 * reads; then st_regen_begin(g, ST_CF_TABLE(t)), deletes and puts in
 * ascending key order, st_regen_end (writes and closes its files: the
 * deletions of fresh keys, the range deletion and the runs), and
 * st_regen_apply_table with the writers held off again: the files are
 * ingested over the table at once (the deletions of fresh entries reach
 * the mirror, the runs file is read directly) unless a write since the
 * view moved runs or deleted fresh entries, which the files would undo:
 * then *applied = 0 and nothing changed. */
int st_regen_new_table(st_regen **out, st_store *s, unsigned t, const st_snap **snap);
/* A deletion of fresh key key, or of the run keys in [lo, hi) (in place
 * only: a generation's files hold no deletions). */
int st_regen_delete(st_regen *g, const void *key, size_t klen);
int st_regen_delete_range(st_regen *g, const void *lo, size_t lolen, const void *hi,
                          size_t hilen);
int st_regen_apply_table(st_regen *g, int *applied);

/* The i-th new entry of st_family_merge (0 <= i < n, asked in order). */
typedef int (*st_kv_fn)(void *payload, size_t i, const void **key, size_t *klen,
                        const void **val, size_t *vlen);
/* Write into g's family cf (ST_CF_DOCS or ST_CF_REV) the family as it is,
 * merged with n new entries given by kv in strictly ascending key order
 * (bytewise, RocksDB's order); a key already stored is ND_ECORRUPT. */
int st_family_merge(st_regen *g, st_store *s, int cf, size_t n, st_kv_fn kv, void *payload);

/* The next new entry of st_family_merge_stream: 1 and the entry, 0 at the
 * end, or an error code. The pointers stay valid until the next call. */
typedef int (*st_next_fn)(void *payload, const void **key, size_t *klen, const void **val,
                          size_t *vlen);
/* A new entry whose key the family already holds: the stored entry is
 * kept and the new one handed to this (which may copy it), not written. */
typedef int (*st_clash_fn)(void *payload, const void *key, size_t klen, const void *val,
                           size_t vlen);
/* As st_family_merge, with new entries until next says the end; a key
 * already stored goes to clash (NULL: ND_ECORRUPT). */
int st_family_merge_stream(st_regen *g, st_store *s, int cf, st_next_fn next,
                           st_clash_fn clash, void *payload);

/* Write into g's table t the table as it is (no fresh entries allowed:
 * fold first) merged with vals[0..n) (ascending, distinct), in one forward
 * walk: runs that receive no value are copied as stored. added as for
 * st_table_merge. */
int st_table_rewrite(st_regen *g, st_store *s, unsigned t, unsigned run_size,
                     const uint64_t *vals, size_t n, st_u64s *added);

/* Up to cap of a source's next values (ascending, distinct across calls)
 * into buf: *got of them, 0 at the end. */
typedef int (*st_u64_read_fn)(void *payload, uint64_t *buf, size_t cap, size_t *got);
/* As st_table_rewrite, with the values read from a source in blocks, so
 * they need not fit in memory; values already stored are skipped.
 * *put = how many values were new to the table. */
int st_table_rewrite_stream(st_regen *g, st_store *s, unsigned t, unsigned run_size,
                            st_u64_read_fn read, void *payload, uint64_t *put);

/* Fold table t's fresh entries into its runs by rewriting the whole table
 * in one forward walk (st_regen_new_table) into a file that replaces its
 * run space, ingested with one that deletes the fresh entries it placed. Cheaper than
 * st_table_fold when fresh entries touch most runs: no seek per run, no
 * rewritten run through the WAL and the memtables. lock and unlock (may be
 * NULL) hold the writers off at the start and at the end only; writers go
 * on in between. *folded = fresh entries moved (0 when a write during
 * the walk deleted some or changed runs: nothing is changed then, and
 * st_table_fold does the fold). */
int st_table_refold(st_store *s, unsigned t, unsigned run_size, st_lock_fn lock,
                    st_lock_fn unlock, void *payload, uint64_t *folded);

/* A cursor reads ranges of one table in ascending order of lo (a merge
 * walk, as batch mode does): it keeps its iterators and the last decoded
 * run, stepping forward instead of seeking where that is cheaper. One
 * snapshot for its whole life, for the runs; fresh entries come from the
 * in-memory mirror (no seeks through memtables and files) while no
 * run-space write began since the snapshot, so a range also shows a
 * fresh entry inserted since and hides one deleted since, as a query
 * would; after such a write, from the snapshot. Every value stored from
 * the snapshot until the range is read is seen. One thread at a time. */
typedef struct st_cursor st_cursor;
/* scan: the caller will visit much of the table (a batch with a query for
 * every few runs): its runs are read ahead in large steps, not a block at
 * a time, and not put in the block cache. */
int st_cursor_new(st_cursor **out, st_store *s, unsigned t, int scan);
void st_cursor_free(st_cursor *c); /* accepts NULL */
/* As st_table_range; the ranges ascend and do not overlap: lo above the
 * previous call's hi. */
int st_cursor_range(st_cursor *c, uint64_t lo, uint64_t hi, st_u64s *out);

/* Visit table t in key order: for every key, cb gets the decoded entries
 * (ascending, head first), whether it is a run, and its stored bytes (key
 * + value). Decoding errors return ND_ECORRUPT naming table and key.
 * Consistent snapshot. cb returns 0 to go on, or a code to stop with. */
typedef int (*st_table_cb)(const uint64_t *entries, size_t n, int is_run,
                           size_t bytes, void *payload);
int st_table_scan(st_store *s, unsigned t, st_table_cb cb, void *payload);

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

#endif /* ND_STORAGE_H */
