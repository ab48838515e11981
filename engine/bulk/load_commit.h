/*
 * load_commit.h — the bulk loader's commit (load_commit.c; engine
 * internal). Declares what load_commit.c defines.
 */
#ifndef ND_LOAD_COMMIT_H
#define ND_LOAD_COMMIT_H

#include <stdint.h>

#include "neardup.h"

/* The commit of a load that spilled every chunk (fold.mu and the writer
 * lock held: db_exclusive_lock): a new generation, switched to, then the
 * late replacements. *out_new (may be NULL): documents new to the store. */
int load_commit_locked(nd_loader *l, uint64_t *out_new);

#endif /* ND_LOAD_COMMIT_H */
