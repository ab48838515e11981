/*
 * cmp_table.h — writing runs, shared by cmp_table.c and cmp_fold.c
 * (compaction internal; engine/ never includes this). The key layout of a
 * table family is cmp_layout.h's.
 */
#ifndef CMP_TABLE_H
#define CMP_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_codec.h"
#include "cmp_layout.h"
#include "storage.h"

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
