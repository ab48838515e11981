/*
 * cmp_gen.h — a store's families in the key-value database: their
 * options (the profile each family number gets) and their generations
 * (compaction internal; engine/ never includes this).
 *
 * A generation is one set of the families an import rewrites: docs, rev
 * and the tables (meta is not generational). The store (cmp_store.c)
 * keeps the current one and counts references to it under its lock:
 * readers hold one while they make an iterator or read (a snapshot for
 * its whole life), so a generation replaced by an import (cmp_regen.h) is
 * freed only when nobody can still use its families; RocksDB's own
 * iterators keep what they read alive by themselves.
 */
#ifndef CMP_GEN_H
#define CMP_GEN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cmp_direct.h"
#include "cmp_kv.h"
#include "cmp_layout.h"

/* Options profiles of the key-value adapter, by family number
 * (cmp_gen_profile): meta, docs and sketch; rev; the tables; band. */
enum { CMP_PROFILE_SMALL, CMP_PROFILE_REV, CMP_PROFILE_TABLE, CMP_PROFILE_BAND, CMP_PROFILES };

/* The profiles, indexed by CMP_PROFILE_* (kv_open_opts.profiles). */
const kv_profile *cmp_gen_profiles(void);
/* The profile of family cf (-1: a family that is not a store's). */
unsigned cmp_gen_profile(int cf);

/* The handles of docs and rev, shared by the generations that hold them:
 * an expiry's new generation may carry the current one's (cmp_regen.h).
 * Freed with the last generation that holds it. */
typedef struct cmp_keyed {
    kv_cf *docs, *rev;
    atomic_uint refs;
} cmp_keyed;

typedef struct cmp_gen {
    kv_cf *cf[ST_CF_MAX]; /* docs, rev, the tables (meta's slot unused) */
    unsigned n;           /* tables */
    uint64_t gen;
    uint64_t keyed_gen;   /* the generation docs and rev were made in (<= gen) */
    cmp_keyed *keyed;     /* cf[ST_CF_DOCS] and cf[ST_CF_REV], counted */
    int refs;             /* under the store's lock */
    int made_current;     /* a write made it the store's current generation */
    /* Family cf is the one file its generation ingested, written to by
     * no batch since (set by the switch, cleared by writes): compacting
     * it would rewrite the file as it is. */
    _Atomic unsigned char settled[ST_CF_MAX];
    /* Table t's runs read straight from their one file (cmp_direct.h),
     * or NULL: set when the generation is opened or made current,
     * dropped by the first write to t's run space (under the store's
     * lock). */
    cmp_direct *direct[ND_MAX_TABLES];
} cmp_gen;

/* Generation gen of ntables tables, holding no family yet (keyed_gen
 * gen), one reference. */
int cmp_gen_new(cmp_gen **out, uint64_t gen, unsigned ntables);
/* Free the families' handles and direct readers (the families stay in
 * the database unless dropped). Accepts NULL. */
void cmp_gen_free(cmp_gen *g);

/* From the families an open found (names[0..n), cfs[i] for names[i]):
 * take the tables of generation gen and docs and rev of generation keyed
 * (<= gen) into a new generation (their cfs[i] set to NULL) and drop the
 * others from the database unless readonly (what an import left when it
 * stopped before or after its switch). ND_EINVAL when it would have no
 * docs, rev or table; ND_ECORRUPT when a table below the last is
 * missing; each names path. */
int cmp_gen_adopt(cmp_gen **out, kv_db *db, const char *path, uint64_t gen, uint64_t keyed,
                  size_t n, char *const *names, kv_cf **cfs, int readonly);

/* Meta record of the current generation (cmp_layout.h: "G" or "G,D"). */
#define CMP_GEN_KEY "st.gen"
/* Read it from family meta of db: *gen (the tables') and *keyed (docs'
 * and rev's); both 0 when absent. ND_ECORRUPT naming path when
 * malformed. */
int cmp_gen_read(kv_db *db, kv_cf *meta, const char *path, uint64_t *gen, uint64_t *keyed);

/* Create in db the families of g (its number, its n tables); with carry
 * not NULL, the tables only: g holds carry's docs and rev (and their
 * generation). */
int cmp_gen_create_families(kv_db *db, cmp_gen *g, const cmp_gen *carry);
/* Drop g's families from db but those keep (NULL: none) holds too (best
 * effort: a failure leaves them to the next writable open, which drops
 * what is not current). */
void cmp_gen_drop_families(kv_db *db, const cmp_gen *g, const cmp_gen *keep);

#endif /* CMP_GEN_H */
