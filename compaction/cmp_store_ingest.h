/*
 * cmp_store_ingest.h — files taken whole into a store's tables
 * (cmp_store_ingest.c): a table's fresh keys through a file of their own,
 * a rewritten table's files as one run-space write.
 */
#ifndef CMP_STORE_INGEST_H
#define CMP_STORE_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_store.h"

/* Write the keys of pv[0..n) (ascending, distinct), entries the mirror
 * holds already (st_table_insert_mirrored), into table t through a file
 * of their own that RocksDB takes in whole (an ingestion), instead of n
 * memtable inserts: at 100M the inserts of a flush cost about 0.7 us a
 * key, however sorted. Not atomic with any other write: the caller keeps
 * its durable records of the entries until this returned, and writing a
 * key twice is harmless (the same key, the same empty value). Like a
 * write, it may make RocksDB flush the table's memtables first. */
int st_table_ingest_keys(st_store *s, unsigned t, const uint64_t *pv, size_t n);
/* Ingest files[0..n) (ascending key ranges) over table t of g, the
 * current generation, as one run-space write, unless a write since
 * runs_seq and dels_seq were read moved runs or deleted fresh entries
 * (*applied 0: nothing done). Then the mirror takes log's changes and d
 * (may be NULL; the store takes a reference of its own) becomes the
 * table's direct reader. */
int st_table_ingest_files(st_store *s, struct cmp_gen *g, unsigned t, const char *const *files,
                          size_t n, const struct cmp_flog *log, struct cmp_direct *d,
                          uint64_t runs_seq, uint64_t dels_seq, int *applied);

#endif /* CMP_STORE_INGEST_H */
