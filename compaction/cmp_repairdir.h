/*
 * cmp_repairdir.h — a repair's reading of a damaged store's directory as
 * plain files (cmp_repairdir.c): CURRENT written again, the families the
 * OPTIONS files name. Called by st_repair (cmp_repair.c) only; no RocksDB
 * call.
 */
#ifndef CMP_REPAIRDIR_H
#define CMP_REPAIRDIR_H

#include <stddef.h>

/* When CURRENT is missing or names no MANIFEST in path, write it naming
 * the newest MANIFEST-N there (*mended 1). ND_OK also when there is no
 * MANIFEST (left to RocksDB's repair); ND_EIO when CURRENT cannot be
 * written. */
int cmp_current_mend(const char *path, int *mended);

/* The families the newest OPTIONS-N file in path names (malloc'd names,
 * in its order; none when there is no such file or it cannot be read):
 * ND_OK, ND_ENOMEM, ND_EIO. Free with cmp_options_families_free. */
int cmp_options_families(const char *path, char ***out, size_t *n);
void cmp_options_families_free(char **names, size_t n);

#endif
