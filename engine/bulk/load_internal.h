/*
 * load_internal.h — the bulk loader's state (engine internal), shared by
 * the files of the loader: db_load.c fills and spills chunks,
 * load_commit.c merges them into the store, load_sketches.c spills and
 * merges a resemblance store's sketches and band entries, load_files.c
 * names their files. It declares no function: each of those files has
 * its own header (load_files.h, load_commit.h, load_sketches.h; db_load.c
 * defines only public calls: nd_loader_*, nd_db_import).
 */
#ifndef ND_LOAD_INTERNAL_H
#define ND_LOAD_INTERNAL_H

#include <stddef.h>

#include "neardup.h"
#include "nd_task.h"

/* A chunk's documents: keys as offsets into arena until the chunk is
 * full (the arena moves as it grows), then pointers. Once split, fresh
 * holds the documents new to the store and rep those it replaced. */
typedef struct load_chunk {
    nd_doc *docs;
    nd_sketch *sk; /* a resemblance store's: docs[i]'s sketch, once full */
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

#endif /* ND_LOAD_INTERNAL_H */
