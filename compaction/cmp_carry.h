/*
 * cmp_carry.h — the files a new generation lays over families it does
 * not write anew: an expiry's deletions over the docs and rev it carries
 * (st_regen_new_carried, cmp_regen.h), and a resemblance store's sketch
 * and band files (not generational): an expiry's deletions, a bulk
 * load's new entries. They are written as sorted files beside the new
 * tables; the generation's switch write records them (meta
 * CMP_CARRY_KEY) with the new generation, and they are ingested right
 * after that write, before the store shows the new generation or takes
 * another write; the record goes once they are in. A crash between
 * leaves the record: the next writable open ingests the files again
 * (deleting a key twice, or putting the same entry twice, changes
 * nothing, and no write came between) before anything reads or writes.
 * Compaction internal, below cmp_store (through cmp_store_impl.h).
 */
#ifndef CMP_CARRY_H
#define CMP_CARRY_H

#include <stddef.h>

#include "cmp_gen.h"

struct st_store;

/* Meta record: which families have files waiting, the decimal sum of
 * their CMP_CARRY_* bits: docs and rev (carried by the new generation),
 * a resemblance store's sketch and band (not generational). Files
 * carried-docs.sst, carried-rev.sst, carried-sketch.sst,
 * carried-band.sst in the store's directory. */
#define CMP_CARRY_KEY "st.carry"
#define CMP_CARRY_DOCS 1u
#define CMP_CARRY_REV 2u
#define CMP_CARRY_SKETCH 4u
#define CMP_CARRY_BAND 8u
#define CMP_CARRY_ALL 15u

/* Family cf's bit, or 0 for a family deletions are not carried into. */
unsigned cmp_carry_bit(int cf);
/* The path of family cf's deletion file (cmp_carry_bit(cf) != 0),
 * malloc'd; NULL when out of memory. */
char *cmp_carry_file(const struct st_store *s, int cf);
/* Unlink the files of the families in bits. */
void cmp_carry_unlink(const struct st_store *s, unsigned bits);
/* The record's value for bits into out (NUL-terminated); its length.
 * Before it is written, the files' names are made durable: an fsync of
 * the store's directory (ND_EIO naming it). */
int cmp_carry_value(const struct st_store *s, unsigned bits, char out[4], size_t *len);
/* Right after the switch's write to next: the deletions of which
 * ingested into next's docs and rev and the store's sketch and band,
 * from copies (the files stay as written until cmp_carry_done). On
 * failure the store takes no more writes until opened again, and next's
 * families stay (the write made them current on disk). ND_ECORRUPT when
 * a recorded file is missing; an ingest's error. */
int cmp_carry_apply(struct st_store *s, cmp_gen *next, unsigned which);
/* The record deleted by a synced write, then the files unlinked; on
 * failure the store takes no more writes until opened again (the
 * deletions would be ingested again then, and could undo a write). */
int cmp_carry_done(struct st_store *s);
/* At open, with the current generation adopted: a record left by a
 * crash is applied and done (writable: ND_OK), or 1 (read-only: a
 * writable open must finish it first, st_open); without one, ND_OK, and
 * files left by an expiry stopped before its switch are unlinked
 * (writable). */
int cmp_carry_recover(struct st_store *s);

#endif /* CMP_CARRY_H */
