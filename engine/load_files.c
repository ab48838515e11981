/*
 * load_files.c — the bulk loader's temporary files: one directory per
 * loader inside the database directory, a file per chunk and family.
 *
 * A loader spills each chunk as files named c<chunk>.<family> ("docs",
 * "rev", "t07", ...) in a directory "nd-load-XXXXXX" of the database
 * (load_spill.h writes and merges them); the commit reads every chunk's
 * file of a family at once. A load that did not finish (a crash) leaves
 * its directory behind: the next writable open removes it
 * (db_load_sweep), while it holds the store's lock, so no loader is
 * running then. Callers: db_load.c (nd_loader_*), load_commit.c and
 * db_open.c (the sweep).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_core.h"
#include "load_files.h"
#include "load_internal.h"
#include "nd_error.h"

/* Prefix of a loader's temporary directory in the database directory. */
#define LOAD_DIR_PREFIX "nd-load-"

/* ---- files ------------------------------------------------------------- */

/* Path of chunk c's file for family what ("docs", "rev", "t07", ...);
 * malloc'd. */
char *load_chunk_path(const nd_loader *l, size_t c, const char *what)
{
    size_t len = strlen(l->dir) + strlen(what) + 32;
    char *p = malloc(len);
    if (p) snprintf(p, len, "%s/c%06zu.%s", l->dir, c, what);
    return p;
}

/* Every chunk's file of one family, for a merge; malloc'd array of
 * malloc'd paths. */
int load_chunk_paths(const nd_loader *l, const char *what, char ***out)
{
    char **p = calloc(l->nchunks ? l->nchunks : 1, sizeof *p);
    ND_RETURN_IF(!p, ND_ENOMEM, "load: out of memory");
    for (size_t c = 0; c < l->nchunks; c++) {
        p[c] = load_chunk_path(l, c, what);
        if (!p[c]) {
            for (size_t i = 0; i < c; i++) free(p[i]);
            free(p);
            return nd_err_set(ND_ENOMEM, "load: out of memory");
        }
    }
    *out = p;
    return ND_OK;
}

void load_free_paths(char **p, size_t n)
{
    if (!p) return;
    for (size_t i = 0; i < n; i++) free(p[i]);
    free(p);
}

int load_dir_create(const nd_db *db, char **out)
{
    char *dir = malloc(strlen(db->path) + sizeof "/" LOAD_DIR_PREFIX "XXXXXX");
    ND_RETURN_IF(!dir, ND_ENOMEM, "nd_loader_new: out of memory");
    sprintf(dir, "%s/" LOAD_DIR_PREFIX "XXXXXX", db->path);
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
void load_dir_remove(const char *dir)
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
        if (strncmp(e->d_name, LOAD_DIR_PREFIX, strlen(LOAD_DIR_PREFIX)) != 0) continue;
        char *p = join(db->path, e->d_name);
        struct stat st;
        if (p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) load_dir_remove(p);
        free(p);
    }
    closedir(d);
}

int load_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return ND_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    ND_RETURN_IF(!q, ND_ENOMEM, "load: out of memory for %zu documents", need);
    *p = q;
    *cap = c;
    return ND_OK;
}

/* Room for one more document in chunk c: doubling up to chunk_docs. */
