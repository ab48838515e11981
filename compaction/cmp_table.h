/*
 * cmp_table.h — the key layout of a table family and helpers shared by
 * cmp_table.c and cmp_fold.c (compaction internal; engine/ never includes
 * this).
 *
 * A table family holds two key spaces, each in numeric order because the
 * value part is big-endian:
 *   'F' || BE64(v)    -> ""      a fresh entry v (one insert, not yet folded)
 *   'R' || BE64(head) -> bytes   a run of sorted values starting at head,
 *                                encoded by cmp_codec
 * Runs cover disjoint ranges [head, next head); a fresh value never equals
 * a value stored in a run. Keeping fresh entries in their own space means a
 * reader finds the run covering x with one seek_for_prev, however many fresh
 * entries lie around x (they used to be interleaved with the runs, and every
 * probe stepped back over them: quadratic inserts).
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

/* Decode the run stored under head into buf (CMP_RUN_MAX capacity).
 * ND_ECORRUPT naming table t and the head for anything malformed. */
int tbl_decode_run(cmp_codec *c, uint64_t *buf, size_t *n, unsigned t, uint64_t head,
                   const char *val, size_t vlen);

/* Put vals[0..n) (ascending, 1 <= n <= CMP_RUN_MAX) into the batch as one
 * run keyed by vals[0]. */
int tbl_put_run(st_batch *b, unsigned t, cmp_codec *c, const uint64_t *vals, size_t n);

/* Put vals[0..n) as consecutive runs of about run_size values each. */
int tbl_put_runs(st_batch *b, unsigned t, cmp_codec *c, unsigned run_size,
                 const uint64_t *vals, size_t n);

#endif /* CMP_TABLE_H */
