/*
 * cmp_fresh.h — the in-memory mirror of every table's fresh space and the
 * log of fresh-space changes a write batch carries (compaction internal;
 * engine/ never includes this).
 *
 * The fresh space of a table ('F' || BE64(v) keys, cmp_layout.h) holds the
 * entries inserted since the last fold: at most about the fold threshold.
 * A probe used to read it through a RocksDB iterator over the memtable and
 * every level; the mirror answers the same range from a sorted in-memory
 * set. The durable copy stays in RocksDB: snapshot readers (cursors,
 * scans, folds) still read it there, and the mirror is rebuilt from it at
 * open (by the store, cmp_store.c, which hands the values to
 * cmp_fresh_load: the mirror itself reads nothing).
 *
 * Consistency: every put or delete of a table key staged in a batch is
 * noted in the batch's log; st_write applies the net change of a batch to
 * the mirror after RocksDB accepted the write, and never after a failed
 * one (writes are serialised by the engine, so the mirror follows the
 * durable state write by write). Readers take a per-table read lock.
 * A table whose mirror cannot be trusted (out of memory while applying,
 * more entries than FRESH_MIRROR_MAX, a malformed fresh key) is marked
 * invalid: its readers go back to RocksDB until a fold that completes
 * rebuilds it from the fresh space.
 */
#ifndef CMP_FRESH_H
#define CMP_FRESH_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_u64s.h"

/* Most entries one table's mirror holds before it gives up (invalid). */
#define FRESH_MIRROR_MAX (1u << 21)

typedef struct cmp_fresh cmp_fresh;

/* One staged change: value v of table t put (1) or deleted (0). */
typedef struct cmp_fop {
    uint64_t v;
    uint32_t t;
    uint32_t put;
} cmp_fop;

/* What a batch does to the table families. */
typedef struct cmp_flog {
    cmp_fop *op;
    size_t n, cap;
    uint64_t runs;      /* tables whose run space it writes, or given an unknown key (bit t) */
    uint64_t bad;       /* tables given a malformed fresh key (bit t) */
    uint64_t dels;      /* tables whose fresh entries it deletes (bit t) */
} cmp_flog;

/* Note a put (put = 1) or delete of key in table t. ND_ENOMEM if the log
 * cannot grow. */
int cmp_flog_note(cmp_flog *l, unsigned t, const void *key, size_t klen, int put);
void cmp_flog_clear(cmp_flog *l);
void cmp_flog_dispose(cmp_flog *l);

/* A mirror of ntables tables, each invalid until loaded. */
int cmp_fresh_new(cmp_fresh **out, unsigned ntables);
void cmp_fresh_free(cmp_fresh *f); /* accepts NULL */

/* Is table t's mirror valid? */
int cmp_fresh_valid(cmp_fresh *f, unsigned t);
/* Make table t's mirror the set v[0..n) (ascending, distinct): its fresh
 * space as read with writers excluded (at open, after a fold). It stays
 * invalid when n > FRESH_MIRROR_MAX or memory runs out. */
void cmp_fresh_load(cmp_fresh *f, unsigned t, const uint64_t *v, size_t n);

/* Apply the net change of a written batch (writes serialised). */
void cmp_fresh_commit(cmp_fresh *f, const cmp_flog *l);

/* Append the entries v of table t with lo <= v <= hi to out, ascending.
 * 1 when done, 0 when the table's mirror is invalid (out untouched), or
 * ND_ENOMEM. Any thread. */
int cmp_fresh_range(cmp_fresh *f, unsigned t, uint64_t lo, uint64_t hi, st_u64s *out);

/* A hint that cmp_fresh_range(f, t, x, ...) comes soon, in stages as
 * cmp_direct_hint's: stage 1 asks for the chunk heads near x, stage 2
 * (after stage 1 of every table) for x's chunk, stage 3 for the line of
 * it where the search starts, so the misses of ten tables' look-ups
 * overlap. Any thread; no effect on results. */
void cmp_fresh_hint(cmp_fresh *f, unsigned t, uint64_t x, int stage);

/* Entries of table t; 0 when invalid (then *count is untouched). */
int cmp_fresh_count(cmp_fresh *f, unsigned t, uint64_t *count);

/* 1 when table t's mirror is valid and holds at most FRESH_MIRROR_MAX - n
 * entries, else 0. */
int cmp_fresh_room(cmp_fresh *f, unsigned t, uint64_t n);

#endif /* CMP_FRESH_H */
