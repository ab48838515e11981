/*
 * cmp_gen.c — the families' options and generations (cmp_gen.h).
 *
 * Options: table families store values that are already compressed
 * (runs), so compression is off there; docs and rev use LZ4 when this
 * RocksDB build has it; meta and docs have bloom filters for their point
 * look-ups (and a memtable bloom filter, so a look-up of a new key skips
 * the memtable). rev has none: it is read by seeks to a fingerprint and
 * scans, which a whole-key filter cannot serve, and building one was a
 * tenth of a bulk load's commit.
 */
#include "cmp_gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nd_error.h"

static const kv_profile profiles[CMP_PROFILES] = {
    [CMP_PROFILE_SMALL] =
        {
            .compress = 1,
            .bloom_bits = 10,
            /* A bloom filter over the memtable's keys: a stream's look-up
             * of a new document key (most of them) skips the memtable's
             * skip list. */
            .memtable_whole_key = 1,
            .memtable_bloom = 0.02,
        },
    [CMP_PROFILE_REV] = {.compress = 1},
    [CMP_PROFILE_TABLE] =
        {
            /* 1 KB blocks (1-2 runs each at 100M), not RocksDB's 4 KB: a
             * probe reads and checksums one block, and the pread of a block
             * from the page cache costs 2.6 us at 4 KB against 1.6-1.9 at
             * 1 KB (10 random reads a query over 10 table files of 500 MB).
             * 100M, 10 tables, k=3 fingerprint-only p50 of 7 alternated
             * runs: 27.0 -> 24.5 us. Costs 1.6% more table bytes and 4x the
             * block index entries. */
            .block_size = 1024,
            /* What cmp_direct.c reads (RocksDB 7.8's defaults, pinned):
             * table format 5, XXH3 block checksums, index entries one
             * restart each. */
            .plain_format = 1,
            /* A table's key spaces (fresh 'F', runs 'R') are its key
             * prefixes. Streamed inserts leave fresh entries alone in the
             * memtable and in the files flushed from it; a probe of the run
             * space skips them through a filter of one or two prefixes per
             * file instead of seeking into each (1M stored, then 200k
             * add_if_new and the fold they caused: k=3 query 131-148 us ->
             * 111-119 us; a fold's rewritten runs still cost a second seek
             * until compaction merges them). */
            .prefix_len = 1,
            .bloom_bits = 10,
            .memtable_bloom = 0.001,
            /* A compaction writes a table's runs as one file (RocksDB's
             * default would cut them at 64 MB), which the direct reader can
             * read: a table of 100M fingerprints is about 500 MB. */
            .file_size = 16ull << 30,
        },
    [CMP_PROFILE_BAND] =
        {
            /* A check seeks 12 band prefixes (band || key) and nearly
             * always finds none: prefix filters in the files and the
             * memtables skip them without reading a block. */
            .compress = 1,
            .prefix_len = ST_CF_BAND_PREFIX,
            .bloom_bits = 10,
            .memtable_bloom = 0.02,
            /* No memtable inserts but deletions: the engine writes band
             * entries in sorted files of 4M hashed keys (st_band_ingest,
             * db_bands.c), each spanning the whole key range. Leveled
             * compaction merged each into all of level 1 and on down
             * (a quarter of the process's CPU at 2-4M texts); universal
             * merges runs of like size, fewer times, and leaves fewer
             * runs for a check to seek: the band filter
             * (db_band_filter.h) spares most seeks anyway (4M texts:
             * 12,212 -> 14,280 docs/s, an add 61 -> 51 us). */
            .l0_files = 8,
            .universal = 1,
        },
};

const kv_profile *cmp_gen_profiles(void) { return profiles; }

unsigned cmp_gen_profile(int cf)
{
    /* sketch: point reads by document key, as docs */
    return ST_CF_IS_TABLE(cf)   ? CMP_PROFILE_TABLE
           : cf == ST_CF_REV  ? CMP_PROFILE_REV
           : cf == ST_CF_BAND ? CMP_PROFILE_BAND
                              : CMP_PROFILE_SMALL;
}

int cmp_gen_new(cmp_gen **out, uint64_t gen, unsigned ntables)
{
    cmp_gen *g = calloc(1, sizeof *g);
    ND_RETURN_IF(!g, ND_ENOMEM, "storage: out of memory");
    g->refs = 1;
    g->gen = gen;
    g->keyed_gen = gen;
    g->n = ntables;
    *out = g;
    return ND_OK;
}

/* g's docs and rev handles into a holder of their own. */
static int keyed_hold(cmp_gen *g)
{
    g->keyed = calloc(1, sizeof *g->keyed);
    ND_RETURN_IF(!g->keyed, ND_ENOMEM, "storage: out of memory");
    g->keyed->docs = g->cf[ST_CF_DOCS];
    g->keyed->rev = g->cf[ST_CF_REV];
    atomic_init(&g->keyed->refs, 1);
    return ND_OK;
}

void cmp_gen_free(cmp_gen *g)
{
    if (!g) return;
    if (g->keyed) { /* docs and rev are the holder's */
        g->cf[ST_CF_DOCS] = g->cf[ST_CF_REV] = NULL;
        if (atomic_fetch_sub(&g->keyed->refs, 1) == 1) {
            kv_family_free(g->keyed->docs);
            kv_family_free(g->keyed->rev);
            free(g->keyed);
        }
    }
    for (int cf = 0; cf < ST_CF_MAX; cf++) kv_family_free(g->cf[cf]);
    for (unsigned t = 0; t < ND_MAX_TABLES; t++) cmp_direct_unref(g->direct[t]);
    free(g);
}

int cmp_gen_adopt(cmp_gen **out, kv_db *db, const char *path, uint64_t gen, uint64_t keyed,
                  size_t n, char *const *names, kv_cf **cfs, int readonly)
{
    cmp_gen *g = NULL; /* set by cmp_gen_new; gcc 12 cannot tell */
    int rc = ND_OK;
    ND_FORWARD(cmp_gen_new(&g, gen, 0));
    g->keyed_gen = keyed;
    for (size_t i = 0; i < n; i++) {
        int cf;
        uint64_t fam_gen;
        if (!cfs[i] || !cmp_family_parse(names[i], &cf, &fam_gen)) continue;
        if (cf < ST_CF_MAX && fam_gen == CMP_FAMILY_GEN(cf, gen, keyed)) {
            g->cf[cf] = cfs[i];
            if (cf >= ST_CF_TABLE0 && (unsigned)(cf - ST_CF_TABLE0) + 1 > g->n)
                g->n = (unsigned)(cf - ST_CF_TABLE0) + 1;
        } else {
            if (!readonly && rc == ND_OK) {
                rc = kv_family_drop(db, cfs[i]);
                if (rc < 0) nd_err_wrap(rc, "dropping an unfinished generation");
            }
            kv_family_free(cfs[i]);
        }
        cfs[i] = NULL;
    }
    if (rc == ND_OK && (g->n == 0 || !g->cf[ST_CF_DOCS] || !g->cf[ST_CF_REV]))
        rc = nd_err_set(ND_EINVAL, "%s is not a neardup database (no tables)", path);
    for (unsigned t = 0; rc == ND_OK && t < g->n; t++)
        if (!g->cf[ST_CF_TABLE(t)])
            rc = nd_err_set(ND_ECORRUPT,
                            "database %s: table %u of generation %" PRIu64 " is missing", path,
                            t, gen);
    if (rc == ND_OK) rc = keyed_hold(g);
    if (rc < 0) {
        cmp_gen_free(g);
        return rc;
    }
    *out = g;
    return ND_OK;
}

int cmp_gen_read(kv_db *db, kv_cf *meta, const char *path, uint64_t *gen, uint64_t *keyed)
{
    char *v = NULL;
    size_t len = 0;
    *gen = *keyed = 0;
    int rc = kv_get(db, meta, 1, CMP_GEN_KEY, strlen(CMP_GEN_KEY), &v, &len);
    if (rc == ND_ENOTFOUND) {
        nd_err_clear();
        return ND_OK;
    }
    if (rc < 0) return nd_err_wrap(rc, "%s", path);
    if (!cmp_gen_record_parse(v, len, gen, keyed))
        rc = nd_err_set(ND_ECORRUPT, "database %s: malformed generation record", path);
    free(v);
    return rc;
}

int cmp_gen_create_families(kv_db *db, cmp_gen *g, const cmp_gen *carry)
{
    char name[32];
    if (carry) {
        g->keyed = carry->keyed;
        atomic_fetch_add(&g->keyed->refs, 1);
        g->cf[ST_CF_DOCS] = carry->cf[ST_CF_DOCS];
        g->cf[ST_CF_REV] = carry->cf[ST_CF_REV];
        g->keyed_gen = carry->keyed_gen;
    }
    for (int cf = carry ? ST_CF_TABLE0 : ST_CF_DOCS; cf < ST_CF_TABLE((int)g->n); cf++) {
        cmp_family_name(name, cf, g->gen);
        int rc = kv_family_create(db, name, cmp_gen_profile(cf), &g->cf[cf]);
        if (rc < 0) return nd_err_wrap(rc, "creating a generation");
    }
    return carry ? ND_OK : keyed_hold(g);
}

void cmp_gen_drop_families(kv_db *db, const cmp_gen *g, const cmp_gen *keep)
{
    for (int cf = ST_CF_DOCS; cf < ST_CF_MAX; cf++)
        if (g->cf[cf] && !(keep && keep->cf[cf] == g->cf[cf])) (void)kv_family_drop(db, g->cf[cf]);
}
