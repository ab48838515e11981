/*
 * cmp_table.h — helpers shared by cmp_table.c and cmp_fold.c (compaction
 * internal; engine/ never includes this).
 */
#ifndef CMP_TABLE_H
#define CMP_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_codec.h"
#include "storage.h"

/* Decode a table value stored under key into buf (CMP_RUN_MAX capacity):
 * 'F' gives the key itself, 'R' the run. ND_ECORRUPT naming table t and
 * the key for anything else. */
int tbl_decode_value(cmp_codec *c, uint64_t *buf, size_t *n, unsigned t, uint64_t key,
                     const char *val, size_t vlen);

/* Put vals[0..n) (ascending, n >= 1) into the batch as one run keyed by
 * vals[0] (a single value is stored as a fresh entry). */
int tbl_put_run(st_batch *b, unsigned t, cmp_codec *c, const uint64_t *vals, size_t n);

#endif /* CMP_TABLE_H */
