/*
 * db_load_dirs.h — the directories a store keeps for its bulk loaders
 * (db_load_dirs.c; engine internal). Declares what db_load_dirs.c
 * defines.
 */
#ifndef ND_DB_LOAD_DIRS_H
#define ND_DB_LOAD_DIRS_H

#include "neardup.h"

/* Create the loader's directory "nd-load-XXXXXX" in the database
 * directory: *out malloc'd (ND_ENOMEM, ND_ENOSPC, ND_EIO). */
int db_load_dir_create(const nd_db *db, char **out);
/* Remove a loader's directory and its files (best effort). */
void db_load_dir_remove(const char *dir);
/* Remove the directories of loaders that did not finish (a crash): best
 * effort, at a writable open (the store's lock is held). */
void db_load_sweep(nd_db *db);

#endif /* ND_DB_LOAD_DIRS_H */
