/*
 * load_files.h — the bulk loader's chunk files (load_files.c; engine
 * internal): their paths in the loader's directory (db_load_dirs.h). Declares what load_files.c defines.
 */
#ifndef ND_LOAD_FILES_H
#define ND_LOAD_FILES_H

#include <stddef.h>

#include "neardup.h"

/* Path of chunk c's file for family what ("docs", "rev", "t07", ...);
 * malloc'd, NULL when out of memory. */
char *load_chunk_path(const nd_loader *l, size_t c, const char *what);
/* Every chunk's file of one family, for a merge: a malloc'd array of
 * l->nchunks malloc'd paths; free with load_free_paths. */
int load_chunk_paths(const nd_loader *l, const char *what, char ***out);
void load_free_paths(char **p, size_t n);
/* Once a family is merged its chunk files go (a load's peak disk: at
 * 30M texts of a resemblance store 29 GB above the store's, 1 KB a
 * document, when every file stayed to the end): the n paths, or every
 * chunk's file of family what. */
void load_unlink_paths(char *const *p, size_t n);
int load_drop_family(const nd_loader *l, const char *what);

/* Grow *p (elements of size bytes, capacity *cap) to hold need. */
int load_grow(void **p, size_t *cap, size_t need, size_t size);

#endif /* ND_LOAD_FILES_H */
