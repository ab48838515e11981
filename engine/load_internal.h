/*
 * load_internal.h — the bulk loader's state, shared by its two halves
 * (engine internal): db_load.c fills and spills chunks, load_commit.c
 * merges them into the store.
 */
#ifndef ND_LOAD_INTERNAL_H
#define ND_LOAD_INTERNAL_H

#include <stddef.h>

#include "db.h"
#include "nd_task.h"

/* A chunk's documents: keys as offsets into arena until the chunk is
 * full (the arena moves as it grows), then pointers. Once split, fresh
 * holds the documents new to the store and rep those it replaced. */
typedef struct load_chunk {
    nd_doc *docs;
    size_t *koff;
    size_t n, dcap;
    char *arena;
    size_t alen, acap;
    size_t *fresh, nfresh, *rep, nrep;
    size_t index; /* its files' number */
} load_chunk;

struct nd_loader {
    nd_db *db;
    char *dir;
    size_t chunk_docs, nchunks;
    int state;
    load_chunk fill; /* the chunk being filled */
    load_chunk out;  /* the chunk whose files the writer task writes */
    nd_task writer;
    int writing;     /* the writer was started and not waited for */
};

/* Path of chunk c's file for family what ("docs", "rev", "t07", ...);
 * malloc'd, NULL when out of memory. */
char *load_chunk_path(const nd_loader *l, size_t c, const char *what);
/* Every chunk's file of one family, for a merge: a malloc'd array of
 * l->nchunks malloc'd paths; free with load_free_paths. */
int load_chunk_paths(const nd_loader *l, const char *what, char ***out);
void load_free_paths(char **p, size_t n);
/* Grow *p (elements of size bytes, capacity *cap) to hold need. */
int load_grow(void **p, size_t *cap, size_t need, size_t size);
/* The commit of a load that spilled every chunk (fold_mu and write_mu
 * held): a new generation, switched to, then the late replacements. */
int load_commit_locked(nd_loader *l, uint64_t *out_new);

#endif /* ND_LOAD_INTERNAL_H */
