/*
 * cmp_scan.h — a full scan of one table, for verify and stats.
 */
#ifndef CMP_SCAN_H
#define CMP_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_store.h"

/* Visit table t in key order: for every key, cb gets the decoded entries
 * (ascending, head first), whether it is a run, and its stored bytes (key
 * + value). Decoding errors return ND_ECORRUPT naming table and key.
 * Consistent snapshot. cb returns 0 to go on, or a code to stop with. */
typedef int (*st_table_cb)(const uint64_t *entries, size_t n, int is_run,
                           size_t bytes, void *payload);
int st_table_scan(st_store *s, unsigned t, st_table_cb cb, void *payload);

#endif /* CMP_SCAN_H */
