/*
 * cmp_regen.h — rewriting families through sorted files ingested whole:
 * a new generation of docs, rev and every table (a bulk import), or one
 * table rewritten in place (the sequential fold, st_table_refold), and the
 * merge of new entries into docs or rev on their way into a new
 * generation.
 */
#ifndef CMP_REGEN_H
#define CMP_REGEN_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_read.h"
#include "cmp_store.h"

typedef struct st_regen st_regen;

/* ---- generations: rewriting docs, rev and every table at once ------- */
/* A bulk import that touches most runs writes the documents, the reverse
 * family and every table anew, through SST files ingested into a new
 * generation of those families, instead of pushing gigabytes through the
 * WAL, the memtables and compaction. Nothing is visible until st_write of
 * a batch given the generation with st_batch_set_regen: that one synced
 * write records the generation in meta (with whatever else the batch
 * holds, e.g. counters), the store switches to the new families (runs_seq
 * is odd meanwhile) and drops the old ones. A crash before that write
 * leaves the old generation current and the next writable open drops the
 * new families; after it, the old ones. Snapshots and readers that hold
 * the old generation keep reading it. The caller serialises writers
 * around all of it, as for any write. */
int st_regen_new(st_regen **out, st_store *s);
/* A new generation of the tables that carries the current docs and rev
 * (an expiry: most of them stay as they are): their families are begun,
 * given deletions only (st_regen_delete, ascending) and ended as any,
 * into files of deletions that the switch's write records and that are
 * ingested over the current docs and rev right after it, before the
 * switch shows (cmp_carry.h; a crash between: the next writable open
 * ingests them). A resemblance store's sketch and band families may be
 * begun too (not required by the switch), ingested with them. The switch
 * is as atomic as a whole generation's. In any generation (st_regen_new
 * too) a resemblance store's sketch and band families, which are not
 * generational, may be begun and given deletions or puts: their files
 * are recorded by the switch and laid over the store's families right
 * after it, as a carried family's are (a bulk load's sketches). */
int st_regen_new_carried(st_regen **out, st_store *s);
/* Start, fill (keys strictly ascending) and finish family cf's file
 * (ST_CF_DOCS, ST_CF_REV or a table); the finish ingests it into the new
 * family. One family at a time, each once. */
int st_regen_begin(st_regen *g, int cf);
int st_regen_put(st_regen *g, const void *key, size_t klen, const void *val, size_t vlen);
int st_regen_end(st_regen *g);
/* Have st_regen_put ask stop(payload) every ST_REGEN_STOP_EVERY keys of
 * a family: 0 goes on, a negative code is what the put returns (a long
 * rewrite's caller stops it between keys; freeing g then drops what was
 * written). On g's own thread: its forks do not ask. */
typedef int (*st_stop_fn)(void *payload);
#define ST_REGEN_STOP_EVERY 65536u
void st_regen_set_stop(st_regen *g, st_stop_fn stop, void *payload);
/* One step of work that writes no key (an entry a carried family's walk
 * keeps): counted with the puts, asking stop as they do. */
int st_regen_tick(st_regen *g);
/* A second writer of g's new generation, for another thread: it begins,
 * fills and ends families as g does, with files of its own, each family
 * written once by g or by one of its forks. What a fork ends is ingested
 * only when st_regen_join keeps it (after a fork's work turned out
 * not to be needed, it is dropped instead). ND_EINVAL for a table
 * rewritten in place or a fork. */
int st_regen_fork(st_regen **out, st_regen *g);
/* Ingest into g's generation every family that part finished (keep), or
 * drop them (also a family left open by a failure); frees part either
 * way. ND_EINVAL if part is not g's fork, or, to keep, has a family still
 * open or finished one that g wrote too (or is writing); an ingest's
 * failure as st_regen_end's. */
int st_regen_join(st_regen *g, st_regen *part, int keep);
/* Make b's write switch to generation g (g must outlive that write).
 * ND_EINVAL unless every family of g was written (an empty one too). */
int st_batch_set_regen(st_batch *b, st_regen *g);
/* Free; the new families are dropped unless a write made them current.
 * Accepts NULL. */
void st_regen_free(st_regen *g);
/* A table rewritten in place, within the current generation: the
 * sequential fold (st_table_refold). st_regen_new_table (the caller holds
 * the writers off for the call) takes the view *snap (g's) the rewrite
 * reads; then st_regen_begin(g, ST_CF_TABLE(t)), deletes and puts in
 * ascending key order, st_regen_end (writes and closes its files: the
 * deletions of fresh keys, the range deletion and the runs), and
 * st_regen_apply_table with the writers held off again: the files are
 * ingested over the table at once (the deletions of fresh entries reach
 * the mirror, the runs file is read directly) unless a write since the
 * view moved runs or deleted fresh entries, which the files would undo:
 * then *applied = 0 and nothing changed. */
int st_regen_new_table(st_regen **out, st_store *s, unsigned t, const st_snap **snap);
/* A deletion of fresh key key, or of the run keys in [lo, hi) (in place
 * only: a generation's files hold no deletions), or of key in a carried
 * family (st_regen_new_carried; its walk calls st_regen_tick for every
 * entry it reads). */
int st_regen_delete(st_regen *g, const void *key, size_t klen);
int st_regen_delete_range(st_regen *g, const void *lo, size_t lolen, const void *hi,
                          size_t hilen);
int st_regen_apply_table(st_regen *g, int *applied);

/* The i-th new entry of st_family_merge (0 <= i < n, asked in order). */
typedef int (*st_kv_fn)(void *payload, size_t i, const void **key, size_t *klen,
                        const void **val, size_t *vlen);
/* Write into g's family cf (ST_CF_DOCS or ST_CF_REV) the family as it is,
 * merged with n new entries given by kv in strictly ascending key order
 * (bytewise, RocksDB's order); a key already stored is ND_ECORRUPT. */
int st_family_merge(st_regen *g, st_store *s, int cf, size_t n, st_kv_fn kv, void *payload);

/* The next new entry of st_family_merge_stream: 1 and the entry, 0 at the
 * end, or an error code. The pointers stay valid until the next call. */
typedef int (*st_next_fn)(void *payload, const void **key, size_t *klen, const void **val,
                          size_t *vlen);
/* A new entry whose key the family already holds: the stored entry is
 * kept and the new one handed to this (which may copy it), not written. */
typedef int (*st_clash_fn)(void *payload, const void *key, size_t klen, const void *val,
                           size_t vlen);
/* As st_family_merge, with new entries until next says the end; a key
 * already stored goes to clash (NULL: ND_ECORRUPT). */
int st_family_merge_stream(st_regen *g, st_store *s, int cf, st_next_fn next,
                           st_clash_fn clash, void *payload);

#endif /* CMP_REGEN_H */
