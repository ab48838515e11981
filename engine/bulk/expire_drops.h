/*
 * expire_drops.h — the sketch and band entries of a resemblance store's
 * expired documents, as deletion files of an expiry's carried generation
 * (st_regen_new_carried): ingested right after its switch, instead of
 * 13 deletions a document in the switch's batch (engine internal, for
 * db_expire.c).
 */
#ifndef ND_EXPIRE_DROPS_H
#define ND_EXPIRE_DROPS_H

#include <stddef.h>
#include <stdint.h>

#include "db_core.h"
#include "expire_walk.h"

typedef struct expire_drops {
    nd_db *db;
    st_regen *f; /* a fork of the generation: the sketches' file, then the bands' */
    expire_keys keys; /* the expired documents' keys, ascending */
    /* Per band: BE32 band key << 32 | the document's index in keys. The
     * index orders as the key does, so a band's sorted values are its
     * entries in the family's order. */
    st_u64s band[ND_SKETCH_BANDS];
} expire_drops;

/* Start on a fork of g (a carried generation), the sketches' file begun.
 * On failure nothing is held. */
int expire_drops_begin(expire_drops *d, nd_db *db, st_regen *g);
/* Expired document key (keys strictly ascending): its sketch's deletion
 * written, its band entries noted. A document without a sketch is
 * skipped. ND_ECORRUPT for a sketch that does not decode, ND_ELIMIT past
 * 2^32 documents. */
int expire_drops_add(expire_drops *d, const char *key, size_t klen);
/* The sketches' file ended; the band entries sorted and written as the
 * bands' file. */
int expire_drops_end(expire_drops *d);
/* Join the fork into g (keep: its files are the switch's, else dropped),
 * and free everything. */
int expire_drops_finish(expire_drops *d, st_regen *g, int keep);

#endif /* ND_EXPIRE_DROPS_H */
