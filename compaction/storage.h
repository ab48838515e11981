/*
 * storage.h — the one header through which engine/ uses compaction/.
 *
 * compaction/ is the storage layer, in two levels: the key-value adapter
 * (cmp_kv.h, the only module that includes <rocksdb/c.h>) and above it
 * the table layer (every other module). engine/ sees the store and its
 * families by number, write batches, iterators and "table" operations on
 * permuted fingerprints (the modules' headers included below); it never
 * sees a RocksDB type or a key layout's internals. cmp_layout.h says how
 * a store lies in its database.
 */
#ifndef ND_STORAGE_H
#define ND_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_layout.h"
#include "cmp_read.h"
#include "cmp_regen.h"
#include "cmp_store.h"
#include "cmp_u64s.h"
#include "neardup.h"

typedef struct st_reader st_reader;

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

#endif /* ND_STORAGE_H */
