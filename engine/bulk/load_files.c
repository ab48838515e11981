/*
 * load_files.c — the bulk loader's chunk files: a file per chunk and
 * family in the loader's directory.
 *
 * A loader spills each chunk as files named c<chunk>.<family> ("docs",
 * "rev", "t07", ...) in a directory "nd-load-XXXXXX" of the database
 * (load_spill.h writes and merges them); the commit reads every chunk's
 * file of a family at once. The directory itself is the store's
 * (db_load_dirs.c), which removes those of loads that did not finish.
 * Callers: db_load.c (nd_loader_*) and load_commit.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_core.h"
#include "load_files.h"
#include "load_internal.h"
#include "nd_error.h"

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

void load_unlink_paths(char *const *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) (void)unlink(p[i]);
}

int load_drop_family(const nd_loader *l, const char *what)
{
    char **p = NULL;
    ND_FORWARD(load_chunk_paths(l, what, &p));
    load_unlink_paths(p, l->nchunks);
    load_free_paths(p, l->nchunks);
    return ND_OK;
}

void load_free_paths(char **p, size_t n)
{
    if (!p) return;
    for (size_t i = 0; i < n; i++) free(p[i]);
    free(p);
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
