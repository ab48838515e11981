/*
 * cmp_layout.h — how a neardup store lies in its key-value database: the
 * families, their names across generations, and the two key spaces of a
 * table family. Everything above the key-value adapter (cmp_kv.h) that
 * reads or writes keys goes through these definitions; the adapter itself
 * knows none of them.
 *
 * Families (numbered ST_CF_*; names as cmp_family_name gives them):
 *   "meta" : small text records (format version, plan, fp config,
 *            counters, the current generation "st.gen"), and the engine's
 *            log of new fingerprints whose table entries wait in the fresh
 *            mirror (st_table_insert_mirrored)
 *   "docs" : key -> 24 bytes: BE64 fp, BE64 bits of double score, BE64 time
 *   "rev"  : BE64 fp || key -> "" (which documents hold a fingerprint)
 *   "tNN"  : table NN (00..63) of permuted fingerprints, below
 *   "sketch", "band": a resemblance store's sketches and band keys (the
 *            engine's records, db_core.h: a sketch value is
 *            CMP_SKETCH_VALUE_LEN bytes); not generational, like meta: an
 *            import's new generation leaves them as they are (a load lays
 *            files over them, cmp_carry.h). A fingerprint-only store has
 *            neither (st_has_family).
 * Once an import rewrote them (cmp_regen.h), docs, rev and the tables are
 * named "docs.gG", "rev.gG", "tNN.gG": generation G, recorded in meta
 * "st.gen" (absent: generation 0, the plain names). An expiry's new
 * generation may leave docs and rev in place, with deletions ingested
 * into them (cmp_regen.h, st_regen_new_carried): its record is then
 * "G,D", the tables of generation G and docs and rev of an earlier D. A
 * build older than that form reads it as malformed and stops before it
 * drops a family.
 *
 * A table family holds two key spaces, each in numeric order because the
 * value part is big-endian:
 *   'F' || BE64(v)    -> ""      a fresh entry v (one insert, not yet folded)
 *   'R' || BE64(tail) -> bytes   a run of sorted values ending at tail
 * Runs cover disjoint ranges (previous tail, tail]; a fresh value never
 * equals a value stored in a run. Keeping fresh entries in their own space
 * means a reader finds the run that may hold x with one seek, however many
 * fresh entries lie around x (they used to be interleaved with the runs,
 * and every probe stepped back over them: quadratic inserts). Keying runs
 * by their last value makes that a forward seek (the first run whose tail
 * is >= x), and every walk from there goes forward: RocksDB's backward
 * seeks and direction changes cost several times more.
 *
 * A run's bytes are cmp_codec's encoding of the complemented values in
 * reverse order, ~tail < ... < ~head, whose first value ~tail is implied
 * by the key: the gaps between complements are those between the values
 * (~v_i - ~v_{i+1} = v_{i+1} - v_i; the XOR deltas of codec version 1 are
 * equal too), so the encoding is as compact as encoding the values from
 * their head.
 */
#ifndef CMP_LAYOUT_H
#define CMP_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "cmp_codec.h"
#include "neardup.h"

enum { ST_CF_META = 0, ST_CF_DOCS = 1, ST_CF_REV = 2, ST_CF_TABLE0 = 3 };
#define ST_CF_TABLE(i) (ST_CF_TABLE0 + (int)(i))
/* Meta and the families of a generation (docs, rev and the most tables). */
#define ST_CF_MAX (ST_CF_TABLE0 + (int)ND_MAX_TABLES)
/* The families of a resemblance store, numbered beyond those of a
 * generation: not generational, made when the store is created. */
#define ST_CF_SKETCH ST_CF_MAX
/* A sketch value's length (the engine's DB_SKETCH_VALUE_LEN, checked
 * there): how a repair without a manifest knows a loaded sketch file. */
#define CMP_SKETCH_VALUE_LEN 177u
#define ST_CF_BAND (ST_CF_MAX + 1)
/* Bytes of a band entry's key that its family's filters hold: the band
 * and its key (the engine's record, db_core.h: u8 band || BE32 key ||
 * document key), what a check seeks. */
#define ST_CF_BAND_PREFIX 5
/* Every family number: meta, a generation's, sketch and band. */
#define ST_CF_ALL (ST_CF_MAX + 2)
/* Is family cf one of a generation (docs, rev, the tables)? */
#define ST_CF_GENERATIONAL(cf) ((cf) != ST_CF_META && (cf) < ST_CF_MAX)
/* Is family cf a table? */
#define ST_CF_IS_TABLE(cf) ((cf) >= ST_CF_TABLE0 && (cf) < ST_CF_MAX)

/* Name of family cf (not meta) in generation gen into out: "docs", "rev",
 * "tNN" for generation 0, else with ".gG" appended. */
void cmp_family_name(char out[32], int cf, uint64_t gen);
/* Parse the name of a family of a generation (not meta); 0 if name is
 * not one. */
int cmp_family_parse(const char *name, int *cf, uint64_t *gen);
/* The number of a family outside the generations ("meta", "sketch",
 * "band"), or -1. Its name: cmp_family_fixed_name. */
int cmp_family_fixed(const char *name);
const char *cmp_family_fixed_name(int cf);
/* Family cf's generation in a store whose record names gen and keyed
 * (the generation of docs and rev). */
#define CMP_FAMILY_GEN(cf, gen, keyed) ((cf) == ST_CF_DOCS || (cf) == ST_CF_REV ? (keyed) : (gen))

/* The generation record's value ("G" or "G,D", above): 1 and *gen, *keyed
 * (D, or G when absent; never above G), or 0 when malformed. */
int cmp_gen_record_parse(const char *v, size_t len, uint64_t *gen, uint64_t *keyed);
/* The value for gen and keyed (keyed <= gen) into out, NUL-terminated;
 * its length. */
size_t cmp_gen_record_format(char out[48], uint64_t gen, uint64_t keyed);

#define TBL_KEY_LEN 9
#define TBL_FRESH 'F'
#define TBL_RUN 'R'

/* Key of value v in the space tag. */
void tbl_key(uint8_t out[TBL_KEY_LEN], char tag, uint64_t v);

/* Parse a table key: its tag and value. ND_ECORRUPT naming table t for a
 * key of the wrong length or an unknown tag. */
int tbl_parse_key(char *tag, uint64_t *v, unsigned t, const char *key, size_t klen);

/* Is key (of table t) in the space tag? 1 with its value in *v; 0 if it
 * is another space's (or empty), or malformed: then *rc is ND_ECORRUPT. */
int tbl_key_in(char tag, unsigned t, const char *key, size_t klen, uint64_t *v, int *rc);

/* Decode the run stored under tail into buf (CMP_RUN_MAX capacity),
 * ascending. With lo > 0 only its values >= lo are sure to be there (as
 * cmp_run_decode_upto: the smaller ones may be left out, unread and
 * unchecked); lo = 0 decodes and checks it whole. ND_ECORRUPT naming table
 * t and the key for anything malformed. */
int tbl_decode_run(cmp_codec *c, uint64_t *buf, size_t *n, unsigned t, uint64_t tail,
                   uint64_t lo, const char *val, size_t vlen);

#endif /* CMP_LAYOUT_H */
