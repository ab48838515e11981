/*
 * cmp_table.h — the key layout of a table family and helpers shared by
 * cmp_table.c and cmp_fold.c (compaction internal; engine/ never includes
 * this).
 *
 * A table family holds two key spaces, each in numeric order because the
 * value part is big-endian:
 *   'F' || BE64(v)    -> ""      a fresh entry v (one insert, not yet folded)
 *   'R' || BE64(tail) -> bytes   a run of sorted values ending at tail
 * Runs cover disjoint ranges (previous tail, tail]; a fresh value never
 * equals a value stored in a run. Keeping fresh entries in their own space
 * means a reader finds the run that may hold x with one seek, however many
 * fresh entries lie around x (they used to be interleaved with the runs,
 * and every probe stepped back over them: quadratic inserts). Keying runs
 * by their last value makes that a forward seek (the first run whose tail
 * is >= x), and every walk from there goes forward: RocksDB's backward
 * seeks and direction changes cost several times more.
 *
 * A run's bytes are cmp_codec's encoding of the complemented values in
 * reverse order, ~tail < ... < ~head, whose first value ~tail is implied
 * by the key: the gaps between complements are those between the values
 * (~v_i - ~v_{i+1} = v_{i+1} - v_i; the XOR deltas of codec version 1 are
 * equal too), so the encoding is as compact as encoding the values from
 * their head.
 */
#ifndef CMP_TABLE_H
#define CMP_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_codec.h"
#include "storage.h"

#define TBL_KEY_LEN 9
#define TBL_FRESH 'F'
#define TBL_RUN 'R'

/* Key of value v in the space tag. */
void tbl_key(uint8_t out[TBL_KEY_LEN], char tag, uint64_t v);

/* Parse a table key: its tag and value. ND_ECORRUPT naming table t for a
 * key of the wrong length or an unknown tag. */
int tbl_parse_key(char *tag, uint64_t *v, unsigned t, const char *key, size_t klen);

/* Decode the run stored under tail into buf (CMP_RUN_MAX capacity),
 * ascending. With lo > 0 only its values >= lo are sure to be there (as
 * cmp_run_decode_upto: the smaller ones may be left out, unread and
 * unchecked); lo = 0 decodes and checks it whole. ND_ECORRUPT naming table
 * t and the key for anything malformed. */
int tbl_decode_run(cmp_codec *c, uint64_t *buf, size_t *n, unsigned t, uint64_t tail,
                   uint64_t lo, const char *val, size_t vlen);

/* Where the runs of table t go: batch b, or (b NULL) the file of the new
 * generation g, in ascending key order. */
typedef struct tbl_out {
    st_batch *b;
    st_regen *g;
    unsigned t;
} tbl_out;

/* Put vals[0..n) (ascending, 1 <= n <= CMP_RUN_MAX) as one run keyed by
 * vals[n - 1]. */
int tbl_put_run(const tbl_out *o, cmp_codec *c, const uint64_t *vals, size_t n);

/* Put vals[0..n) as consecutive runs of about run_size values each. */
int tbl_put_runs(const tbl_out *o, cmp_codec *c, unsigned run_size, const uint64_t *vals,
                 size_t n);

#endif /* CMP_TABLE_H */
