/*
 * db_load_dirs.c — the directories a store keeps for its bulk loaders:
 * one "nd-load-XXXXXX" per running loader inside the database directory.
 *
 * The loader (db_load.c, load_files.c) fills its directory with spilled
 * chunk files; a load that did not finish (a crash) leaves it behind, and
 * the next writable open removes it (db_load_sweep) while it holds the
 * store's lock, so no loader is running then. The store owns the name and
 * the sweep, so that opening a store needs nothing of the loader.
 * Callers: db_open.c (the sweep), db_load.c (create, remove).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_core.h"
#include "db_load_dirs.h"
#include "nd_error.h"

/* Prefix of a loader's directory in the database directory. */
#define DB_LOAD_DIR_PREFIX "nd-load-"

int db_load_dir_create(const nd_db *db, char **out)
{
    char *dir = malloc(strlen(db->path) + sizeof "/" DB_LOAD_DIR_PREFIX "XXXXXX");
    ND_RETURN_IF(!dir, ND_ENOMEM, "nd_loader_new: out of memory");
    sprintf(dir, "%s/" DB_LOAD_DIR_PREFIX "XXXXXX", db->path);
    if (!mkdtemp(dir)) {
        int err = errno;
        int rc = nd_err_set(err == ENOSPC ? ND_ENOSPC : ND_EIO,
                            "nd_loader_new: cannot create a directory in %s: %s", db->path,
                            strerror(err));
        free(dir);
        return rc;
    }
    *out = dir;
    return ND_OK;
}

/* dir/name, malloc'd; NULL when out of memory. */
static char *join(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    if (p) sprintf(p, "%s/%s", dir, name);
    return p;
}

/* Remove a loader's directory and the files in it (and an empty
 * directory in it, which the loader never makes itself): best effort. */
void db_load_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char *p = join(dir, e->d_name);
            if (p && unlink(p) != 0 && errno == EISDIR) rmdir(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

void db_load_sweep(nd_db *db)
{
    DIR *d = opendir(db->path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, DB_LOAD_DIR_PREFIX, strlen(DB_LOAD_DIR_PREFIX)) != 0) continue;
        char *p = join(db->path, e->d_name);
        struct stat st;
        if (p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) db_load_dir_remove(p);
        free(p);
    }
    closedir(d);
}
