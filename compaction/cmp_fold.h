/*
 * cmp_fold.h — changing a table's runs: the fold of fresh entries into
 * runs (step by step, or as one sequential rewrite), the merge of an
 * import's values into the runs (in a batch, or into a new generation's
 * file), and the removal of one value.
 */
#ifndef CMP_FOLD_H
#define CMP_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_regen.h"
#include "cmp_store.h"
#include "cmp_u64s.h"

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

/* Write into g's table t the table as it is (no fresh entries allowed:
 * fold first) less vals[0..n) (ascending, distinct), in one forward walk:
 * runs that lose no value are copied as stored. ND_ECORRUPT if a value is
 * not stored; ND_EINVAL for values out of order. */
int st_table_rewrite_without(st_regen *g, st_store *s, unsigned t, unsigned run_size,
                             const uint64_t *vals, size_t n);

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

/* Remove pfp from table t in batch b: deletes its fresh entry, or rewrites
 * the run holding it (re-keyed when the tail goes). ND_ENOTFOUND if absent;
 * ND_ECORRUPT if the run does not decode. */
int st_table_remove(st_store *s, st_batch *b, unsigned t, uint64_t pfp);
/* Remove vals[0..n) (ascending, distinct; the array is overwritten) from
 * table t in batch b, as st_table_remove does each, with each run that
 * holds some read and rewritten once. ND_ENOTFOUND if one is absent (the
 * batch then holds part of the removal: the caller drops it). */
int st_table_remove_many(st_store *s, st_batch *b, unsigned t, uint64_t *vals, size_t n);

#endif /* CMP_FOLD_H */
