/*
 * cmp_table.h — reading one permuted table: range reads (with hints that
 * overlap the cache misses of several tables' look-ups), the count of its
 * fresh entries, inserts, and forward cursors for merge walks.
 *
 * A range read is a seek in the run space (RocksDB, or the table's file
 * read directly, cmp_direct.h) and a look-up in the in-memory mirror of
 * the fresh space (cmp_fresh.h); the two sorted lists are merged.
 */
#ifndef CMP_TABLE_H
#define CMP_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_store.h"
#include "cmp_u64s.h"

typedef struct st_reader st_reader;

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

#endif /* CMP_TABLE_H */
