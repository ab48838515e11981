/*
 * cmp_store.c — the RocksDB adapter: the only file that includes
 * <rocksdb/c.h>.
 *
 * It opens one RocksDB database with the column families of storage.h
 * ("meta", "docs", "rev", "t00".."tNN"; "default" exists but is unused),
 * wraps write batches (WriteBatchWithIndex, so a batch reads its own
 * writes), iterators, point reads, checkpoints, and translates RocksDB's
 * error strings into nd_error codes in exactly one place (st_map_error).
 *
 * Options: one LRU block cache shared by every family; table families store
 * values that are already compressed (runs), so RocksDB compression is off
 * there; docs and rev use LZ4 when this RocksDB build has it; docs has
 * bloom filters for its point lookups (and a memtable bloom filter, so a
 * look-up of a new key skips the memtable). rev has none: it is read by
 * seeks to a fingerprint and scans, which a whole-key filter cannot
 * serve, and building one was a tenth of a bulk load's commit. The WAL is
 * always on.
 *
 * The store also owns the in-memory mirror of the tables' fresh spaces
 * (cmp_fresh.c): loaded at open, fed by st_write with the table changes
 * each batch logged as they were staged.
 */
#include "storage.h"

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "cmp_direct.h"
#include "cmp_fresh.h"
#include "cmp_layout.h"
#include "nd_error.h"

/* One generation of the families an import rewrites: docs, rev and the
 * tables (indexed by family number; meta is not generational). Readers
 * take a reference while they make an iterator or read (or for a
 * snapshot's life), so a generation replaced by an import (st_regen) is
 * destroyed only when nobody can still be using its handles; RocksDB's
 * iterators keep their own reference to the families they read. */
typedef struct st_gen {
    rocksdb_column_family_handle_t *cf[ST_CF_MAX];
    unsigned n; /* tables */
    uint64_t gen;
    int refs; /* under st_store.gen_mu */
    /* Family cf is the one file its generation ingested, written to by
     * no batch since (set by the switch, cleared by st_write): compacting
     * it would rewrite the file as it is. */
    _Atomic unsigned char settled[ST_CF_MAX];
    /* Table t's runs read straight from their one file (cmp_direct.h),
     * or NULL: set when the generation is made current or opened, dropped
     * by the first write to t's run space (under st_store.gen_mu). */
    cmp_direct *direct[ND_MAX_TABLES];
} st_gen;

struct st_store {
    rocksdb_t *db;
    rocksdb_options_t *opts, *small_opts, *rev_opts, *table_opts;
    rocksdb_block_based_table_options_t *small_bbt, *rev_bbt, *table_bbt;
    rocksdb_cache_t *cache;
    rocksdb_readoptions_t *ropts;        /* point reads that fill the block cache */
    rocksdb_readoptions_t *ropts_nofill; /* point reads that do not (fill_cache) */
    _Atomic int fill;                    /* which of the two point reads use */
    rocksdb_readoptions_t *scan_ropts; /* whole-family scans (st_iter_new_scan) */
    /* Probes of a table's run space (st_iter_new_probe), filling the block
     * cache or not: the only reads that use the tables' prefix filters. */
    rocksdb_readoptions_t *probe_ropts, *probe_ropts_nofill;
    rocksdb_writeoptions_t *wopts, *wopts_sync;
    rocksdb_column_family_handle_t *default_cf;
    rocksdb_column_family_handle_t *meta;
    pthread_mutex_t gen_mu;
    st_gen *cur; /* the current generation; swapped by st_write only */
    unsigned ntables;
    int readonly;
    int map_tables; /* st_open_opts */
    _Atomic int stop_compacting; /* st_stop_compacting */
    char *path;
    _Atomic uint64_t write_seq; /* successful writes so far (st_write_seq) */
    _Atomic uint64_t runs_seq;  /* odd while a run-space write is applied */
    _Atomic uint64_t dels_seq;  /* writes that deleted fresh entries */
    cmp_fresh *fresh;           /* the fresh spaces in memory (cmp_fresh.h) */
};

/* An indexed batch (reads its own writes) or, for bulk loads, a plain one
 * (puts and deletes only: no index to maintain). */
struct st_batch {
    rocksdb_writebatch_wi_t *wb;
    rocksdb_writebatch_t *plain;
    st_store *store;
    cmp_flog log; /* its table changes, for the fresh mirror and runs_seq */
    st_regen *regen; /* made current by this batch's write, or NULL */
    size_t gen_ops;  /* puts and deletes into generational families */
    unsigned char touched[ST_CF_MAX]; /* families written */
};

struct st_iter {
    rocksdb_iterator_t *it;
    rocksdb_readoptions_t *ropts; /* own options (bounded iterators), or NULL */
    char bounds[2][16];
};

struct st_snap {
    st_store *store;
    st_gen *gen; /* the generation current when it was taken */
    const rocksdb_snapshot_t *snap;
    rocksdb_readoptions_t *ropts;
};


/* ---- errors ----------------------------------------------------------- */

int st_map_error(const char *err, const char *what)
{
    int rc = ND_EIO;
    if (!err) err = "unknown RocksDB error";
    if (strstr(err, "Corruption") || strstr(err, "checksum mismatch") ||
        strstr(err, "Bad table magic number"))
        rc = ND_ECORRUPT;
    else if (strstr(err, "No space left") || strstr(err, "NoSpace"))
        rc = ND_ENOSPC;
    else if (strstr(err, "lock") && (strstr(err, "Resource temporarily unavailable") ||
                                     strstr(err, "No locks available") ||
                                     strstr(err, "lock hold by current process")))
        rc = ND_EBUSY;
    else if (strstr(err, "Read-only file system") || strstr(err, "Permission denied"))
        rc = ND_EREADONLY;
    else if (strstr(err, "does not exist") || strstr(err, "No such file"))
        rc = ND_ENOTFOUND;
    else if (strstr(err, "Not a directory"))
        rc = ND_EINVAL;
    else if (strncmp(err, "Invalid argument", 16) == 0)
        rc = ND_EINVAL;
    return nd_err_set(rc, "%s: %s", what, err);
}

/* Map and free a RocksDB error string; ND_OK if there was none. */
static int take_error(char *err, const char *what)
{
    if (!err) return ND_OK;
    int rc = st_map_error(err, what);
    rocksdb_free(err);
    return rc;
}

/* ---- open / close ----------------------------------------------------- */

/* ---- generations ------------------------------------------------------ */

static void gen_destroy(st_gen *ts)
{
    if (!ts) return;
    for (unsigned i = 0; i < ST_CF_MAX; i++)
        if (ts->cf[i]) rocksdb_column_family_handle_destroy(ts->cf[i]);
    for (unsigned t = 0; t < ND_MAX_TABLES; t++) cmp_direct_unref(ts->direct[t]);
    free(ts);
}

/* The current generation, referenced: release it with gen_release. */
static st_gen *gen_acquire(st_store *s)
{
    pthread_mutex_lock(&s->gen_mu);
    st_gen *ts = s->cur;
    ts->refs++;
    pthread_mutex_unlock(&s->gen_mu);
    return ts;
}

static void gen_release(st_store *s, st_gen *ts)
{
    if (!ts) return;
    pthread_mutex_lock(&s->gen_mu);
    int last = --ts->refs == 0;
    pthread_mutex_unlock(&s->gen_mu);
    if (last) gen_destroy(ts);
}

/* Is family cf one of a generation (a reader must hold a reference)? */
#define GENERATIONAL(cf) ((cf) != ST_CF_META)

/* Handle of family cf for a writer or a reader holding ts (NULL: the
 * current generation, which only st_write replaces, and writers are
 * serialised with st_write by the engine). */
static rocksdb_column_family_handle_t *cf_handle(st_store *s, const st_gen *ts, int cf)
{
    if (!GENERATIONAL(cf)) return s->meta;
    return (ts ? ts : s->cur)->cf[cf];
}

static void free_store(st_store *s)
{
    cmp_fresh_free(s->fresh);
    if (s->meta) rocksdb_column_family_handle_destroy(s->meta);
    /* Snapshots hold references; they must be freed before the store. */
    gen_destroy(s->cur);
    pthread_mutex_destroy(&s->gen_mu);
    if (s->default_cf) rocksdb_column_family_handle_destroy(s->default_cf);
    if (s->db) rocksdb_close(s->db);
    if (s->opts) rocksdb_options_destroy(s->opts);
    if (s->small_opts) rocksdb_options_destroy(s->small_opts);
    if (s->rev_opts) rocksdb_options_destroy(s->rev_opts);
    if (s->table_opts) rocksdb_options_destroy(s->table_opts);
    if (s->small_bbt) rocksdb_block_based_options_destroy(s->small_bbt);
    if (s->rev_bbt) rocksdb_block_based_options_destroy(s->rev_bbt);
    if (s->table_bbt) rocksdb_block_based_options_destroy(s->table_bbt);
    if (s->cache) rocksdb_cache_destroy(s->cache);
    if (s->ropts) rocksdb_readoptions_destroy(s->ropts);
    if (s->ropts_nofill) rocksdb_readoptions_destroy(s->ropts_nofill);
    if (s->scan_ropts) rocksdb_readoptions_destroy(s->scan_ropts);
    if (s->probe_ropts) rocksdb_readoptions_destroy(s->probe_ropts);
    if (s->probe_ropts_nofill) rocksdb_readoptions_destroy(s->probe_ropts_nofill);
    if (s->wopts) rocksdb_writeoptions_destroy(s->wopts);
    if (s->wopts_sync) rocksdb_writeoptions_destroy(s->wopts_sync);
    free(s->path);
    free(s);
}

/* Read-ahead of walks over much of a family: one read of this size
 * instead of one per 4 KB block. */
#define SCAN_READAHEAD (2u << 20)

/* Read options that ignore the table families' prefix extractor: every
 * read but a probe of the run space may cross from one key space of a
 * table to the other, or read the whole family. NULL when out of memory. */
static rocksdb_readoptions_t *ropts_total_order(void)
{
    rocksdb_readoptions_t *r = rocksdb_readoptions_create();
    if (r) rocksdb_readoptions_set_total_order_seek(r, 1);
    return r;
}

/* The options of family cf (-1: a family not of storage.h). */
static rocksdb_options_t *cf_options(const st_store *s, int cf)
{
    return cf >= ST_CF_TABLE0 ? s->table_opts : cf == ST_CF_REV ? s->rev_opts : s->small_opts;
}

static int make_options(st_store *s, uint64_t cache_bytes, int compression)
{
    s->cache = rocksdb_cache_create_lru(cache_bytes ? cache_bytes : (64u << 20));
    s->opts = rocksdb_options_create();
    s->small_opts = rocksdb_options_create();
    s->rev_opts = rocksdb_options_create();
    s->table_opts = rocksdb_options_create();
    s->small_bbt = rocksdb_block_based_options_create();
    s->rev_bbt = rocksdb_block_based_options_create();
    s->table_bbt = rocksdb_block_based_options_create();
    s->ropts = ropts_total_order();
    s->ropts_nofill = ropts_total_order();
    s->scan_ropts = ropts_total_order();
    s->probe_ropts = rocksdb_readoptions_create();
    s->probe_ropts_nofill = rocksdb_readoptions_create();
    s->wopts = rocksdb_writeoptions_create();
    s->wopts_sync = rocksdb_writeoptions_create();
    if (!s->cache || !s->opts || !s->small_opts || !s->rev_opts || !s->table_opts ||
        !s->small_bbt || !s->rev_bbt || !s->table_bbt || !s->ropts || !s->ropts_nofill ||
        !s->scan_ropts || !s->probe_ropts || !s->probe_ropts_nofill || !s->wopts ||
        !s->wopts_sync)
        return nd_err_set(ND_ENOMEM, "storage: out of memory creating options");
    rocksdb_writeoptions_set_sync(s->wopts_sync, 1);
    /* A scan reads each block once: keep the cache for point reads, and
     * read ahead in large steps. */
    rocksdb_readoptions_set_fill_cache(s->scan_ropts, 0);
    rocksdb_readoptions_set_fill_cache(s->ropts_nofill, 0);
    rocksdb_readoptions_set_fill_cache(s->probe_ropts_nofill, 0);
    atomic_store(&s->fill, 1);
    rocksdb_readoptions_set_readahead_size(s->scan_ropts, SCAN_READAHEAD);

    rocksdb_options_set_create_if_missing(s->opts, 1);
    rocksdb_options_set_create_missing_column_families(s->opts, 1);
    rocksdb_options_set_keep_log_file_num(s->opts, 3);
    /* A WAL file lives until every family that wrote to it has flushed;
     * meta takes a small write per step and would keep every WAL alive,
     * making the next open replay gigabytes. Past this total RocksDB
     * flushes the families holding the oldest WAL. */
    rocksdb_options_set_max_total_wal_size(s->opts, 256u << 20);
    rocksdb_options_set_max_open_files(s->opts, 512);
    /* FATAL only: after a full disk, RocksDB 7.8 asserts when its info log
     * (on the same full disk) is appended to again; our errors reach the
     * caller through return codes, not that log. */
    rocksdb_options_set_info_log_level(s->opts, 4 /* FATAL */);
    rocksdb_options_increase_parallelism(s->opts, 2);

    rocksdb_block_based_options_set_block_cache(s->small_bbt, s->cache);
    rocksdb_block_based_options_set_filter_policy(s->small_bbt,
                                                  rocksdb_filterpolicy_create_bloom_full(10));
    rocksdb_options_set_block_based_table_factory(s->small_opts, s->small_bbt);
    rocksdb_options_set_compression(s->small_opts, compression);
    /* A bloom filter over the memtable's keys: a stream's look-up of a new
     * document key (most of them) skips the memtable's skip list. */
    rocksdb_options_set_memtable_whole_key_filtering(s->small_opts, 1);
    rocksdb_options_set_memtable_prefix_bloom_size_ratio(s->small_opts, 0.02);

    rocksdb_block_based_options_set_block_cache(s->rev_bbt, s->cache);
    rocksdb_options_set_block_based_table_factory(s->rev_opts, s->rev_bbt);
    rocksdb_options_set_compression(s->rev_opts, compression);

    rocksdb_block_based_options_set_block_cache(s->table_bbt, s->cache);
    /* 1 KB blocks (1-2 runs each at 100M), not RocksDB's 4 KB: a probe
     * reads and checksums one block, and the pread of a block from the
     * page cache costs 2.6 us at 4 KB against 1.6-1.9 at 1 KB (10 random
     * reads a query over 10 table files of 500 MB). 100M, 10 tables, k=3
     * fingerprint-only p50 of 7 alternated runs: 27.0 -> 24.5 us. Costs
     * 1.6% more table bytes and 4x the block index entries. */
    rocksdb_block_based_options_set_block_size(s->table_bbt, 1024);
    /* What cmp_direct.c reads (this RocksDB's defaults, pinned): table
     * format 5, XXH3 block checksums, index entries one restart each. */
    rocksdb_block_based_options_set_format_version(s->table_bbt, 5);
    rocksdb_block_based_options_set_checksum(s->table_bbt, 4 /* kXXH3 */);
    rocksdb_block_based_options_set_index_block_restart_interval(s->table_bbt, 1);
    rocksdb_block_based_options_set_cache_index_and_filter_blocks(s->table_bbt, 0);
    rocksdb_options_set_block_based_table_factory(s->table_opts, s->table_bbt);
    rocksdb_options_set_compression(s->table_opts, rocksdb_no_compression);
    /* A table's key spaces (fresh 'F', runs 'R') are its key prefixes.
     * Streamed inserts leave fresh entries alone in the memtable and in
     * the files flushed from it; a probe of the run space skips them
     * through a filter of one or two prefixes per file instead of
     * seeking into each (1M stored, then 200k add_if_new and the fold
     * they caused: k=3 query 131-148 us -> 111-119 us; a fold's rewritten
     * runs still cost a second seek until compaction merges them). */
    rocksdb_options_set_prefix_extractor(s->table_opts, rocksdb_slicetransform_create_fixed_prefix(1));
    rocksdb_block_based_options_set_filter_policy(s->table_bbt,
                                                  rocksdb_filterpolicy_create_bloom_full(10));
    rocksdb_block_based_options_set_whole_key_filtering(s->table_bbt, 0);
    rocksdb_options_set_block_based_table_factory(s->table_opts, s->table_bbt);
    rocksdb_options_set_memtable_prefix_bloom_size_ratio(s->table_opts, 0.001);
    /* A compaction writes a table's runs as one file (RocksDB's default
     * would cut them at 64 MB), which the direct reader can read: a table
     * of 100M fingerprints is about 500 MB. */
    rocksdb_options_set_target_file_size_base(s->table_opts, 16ull << 30);
    return ND_OK;
}

/* Is dir an existing RocksDB database (has CURRENT)? -1 if dir is not a
 * directory, 0 absent or empty, 1 database. */
static int probe_dir(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) return -1;
    char *cur = malloc(strlen(path) + 16);
    if (!cur) return 0;
    sprintf(cur, "%s/CURRENT", path);
    int have = stat(cur, &st) == 0;
    free(cur);
    return have ? 1 : 0;
}

/* Meta record of the current generation (decimal; absent: 0). */
#define GEN_KEY "st.gen"
/* The file of the family being written into a new generation, or of a
 * table's runs rewritten in place; the deletions of the latter. */
#define REGEN_FILE "regen.sst.tmp"
#define REGEN_DEL_FILE "regen-del.sst.tmp"
/* The fresh keys of one table on their way in (st_table_ingest_keys). */
#define INGEST_FILE "fresh-keys.sst.tmp"
/* A fork's finished file of family %d (st_regen_fork), until joined. */
#define REGEN_FORK_FILE "regen-%d.sst.tmp"

/* dir/name, malloc'd; NULL when out of memory. */
static char *regen_file_path(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    if (p) sprintf(p, "%s/%s", dir, name);
    return p;
}

/* After open: read the current generation, keep its families in
 * s->cur and drop (writable) or let go (read-only) the others: what an
 * import left behind when it stopped before or after its switch. */
static int adopt_generation(st_store *s, const char *path, char **names, size_t n,
                            rocksdb_column_family_handle_t **handles, int readonly)
{
    char *err = NULL;
    size_t len = 0;
    uint64_t gen = 0;
    int rc = ND_OK;
    char *v = rocksdb_get_cf(s->db, s->ropts, s->meta, GEN_KEY, strlen(GEN_KEY), &len, &err);
    if (err) return take_error(err, path);
    for (size_t i = 0; v && i < len; i++) {
        if (v[i] < '0' || v[i] > '9' || i >= 19) {
            rocksdb_free(v);
            return nd_err_set(ND_ECORRUPT, "database %s: malformed generation record", path);
        }
        gen = gen * 10 + (uint64_t)(v[i] - '0');
    }
    rocksdb_free(v);
    s->cur = calloc(1, sizeof *s->cur);
    ND_RETURN_IF(!s->cur, ND_ENOMEM, "storage: out of memory");
    s->cur->refs = 1;
    s->cur->gen = gen;
    for (size_t i = 0; i < n; i++) {
        int cf;
        uint64_t g;
        if (!handles[i] || !cmp_family_parse(names[i], &cf, &g)) continue;
        if (g == gen && cf < (int)(ST_CF_MAX)) {
            s->cur->cf[cf] = handles[i];
            if (cf >= ST_CF_TABLE0 && (unsigned)(cf - ST_CF_TABLE0) + 1 > s->cur->n)
                s->cur->n = (unsigned)(cf - ST_CF_TABLE0) + 1;
        } else {
            if (!readonly && rc == ND_OK) {
                rocksdb_drop_column_family(s->db, handles[i], &err);
                rc = take_error(err, "dropping an unfinished generation");
                err = NULL;
            }
            rocksdb_column_family_handle_destroy(handles[i]);
        }
        handles[i] = NULL;
    }
    ND_FORWARD(rc);
    if (s->cur->n == 0 || !s->cur->cf[ST_CF_DOCS] || !s->cur->cf[ST_CF_REV])
        return nd_err_set(ND_EINVAL, "%s is not a neardup database (no tables)", path);
    for (unsigned t = 0; t < s->cur->n; t++)
        if (!s->cur->cf[ST_CF_TABLE(t)])
            return nd_err_set(ND_ECORRUPT, "database %s: table %u of generation %" PRIu64
                              " is missing", path, t, gen);
    s->ntables = s->cur->n;
    return ND_OK;
}

static int open_db(st_store *s, const char *path, int create, unsigned ntables, int readonly)
{
    char **list = NULL, **names = NULL, (*fnames)[32] = NULL;
    const rocksdb_options_t **cfo = NULL;
    rocksdb_column_family_handle_t **handles = NULL;
    char *err = NULL;
    size_t len = 0, n = 0;
    int rc = ND_OK, have_meta = 0;

    if (!create) {
        list = rocksdb_list_column_families(s->opts, path, &len, &err);
        if (err) {
            /* RocksDB 7.8 hands back a malloc(0) list even on failure. */
            if (list) rocksdb_list_column_families_destroy(list, len);
            return take_error(err, path);
        }
    } else {
        len = 1 + ST_CF_TABLE0 + ntables;
    }
    names = calloc(len + 1, sizeof *names);
    fnames = calloc(len + 1, sizeof *fnames);
    cfo = calloc(len + 1, sizeof *cfo);
    handles = calloc(len + 1, sizeof *handles);
    if (!names || !fnames || !cfo || !handles) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    if (create) {
        names[n++] = "default";
        names[n++] = "meta";
        for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)ntables); cf++) {
            cmp_family_name(fnames[cf], cf, 0);
            names[n++] = fnames[cf];
        }
    } else {
        /* Every family must be opened for writing: in RocksDB's order. */
        for (size_t i = 0; i < len; i++) names[n++] = list[i];
    }
    for (size_t i = 0; i < n; i++) {
        int cf;
        uint64_t g;
        int fam = cmp_family_parse(names[i], &cf, &g);
        cfo[i] = cf_options(s, fam ? cf : -1);
        if (strcmp(names[i], "meta") == 0) have_meta = 1;
    }
    if (!have_meta) ND_FAIL(ND_EINVAL, "%s is not a neardup database (no tables)", path);
    if (readonly)
        s->db = rocksdb_open_for_read_only_column_families(s->opts, path, (int)n,
                                                           (const char *const *)names, cfo,
                                                           handles, 0, &err);
    else
        s->db = rocksdb_open_column_families(s->opts, path, (int)n, (const char *const *)names,
                                             cfo, handles, &err);
    if (err) {
        rc = take_error(err, path);
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], "default") == 0) {
            s->default_cf = handles[i];
            handles[i] = NULL;
        } else if (strcmp(names[i], "meta") == 0) {
            s->meta = handles[i];
            handles[i] = NULL;
        }
    }
    rc = adopt_generation(s, path, names, n, handles, readonly);
cleanup:
    for (size_t i = 0; handles && i < n; i++)
        if (handles[i]) rocksdb_column_family_handle_destroy(handles[i]);
    if (list) rocksdb_list_column_families_destroy(list, len);
    free(names);
    free(fnames);
    free(cfo);
    free(handles);
    return rc;
}

/* Should point reads put the blocks they read into the block cache? Only
 * while the families' files fit it. Past that, random probes rarely find
 * their block there again, and inserting it (evicting another) costs more
 * than the page-cache read it saves. Measured with the k=3 query of
 * bench_db, 64 MiB cache: 100M fingerprints (8.4 GB of files) p50 114 us
 * filling, 76 us not; 4M (235 MB) 25-29 vs 25-26 us; 1M (60 MB, fits)
 * 15.5 us filling, 20-30 us not. Called at open, at a generation switch,
 * after compaction and every FILL_REFRESH_WRITES writes. */
#define FILL_REFRESH_WRITES 4096u
static void fill_refresh(st_store *s)
{
    uint64_t total = 0, v;
    st_gen *ts = gen_acquire(s);
    for (int cf = ST_CF_META; cf < ST_CF_TABLE((int)ts->n); cf++)
        if (rocksdb_property_int_cf(s->db, cf_handle(s, ts, cf), "rocksdb.live-sst-files-size",
                                    &v) == 0)
            total += v;
    gen_release(s, ts);
    atomic_store(&s->fill, total <= (uint64_t)rocksdb_cache_get_capacity(s->cache));
}

/* ---- runs read straight from their file (cmp_direct.h) ----------------- */

/* Do family h's memtables hold nothing? */
static int memtables_empty(st_store *s, rocksdb_column_family_handle_t *h)
{
    uint64_t a = 1, b = 1;
    return rocksdb_property_int_cf(s->db, h, "rocksdb.num-entries-active-mem-table", &a) == 0 &&
           rocksdb_property_int_cf(s->db, h, "rocksdb.num-entries-imm-mem-tables", &b) == 0 &&
           a == 0 && b == 0;
}

/* The direct reader of table t of generation ts when its run space is
 * exactly one file: the memtables hold nothing (or, memtables_checked,
 * the caller knows they hold no run key), one live file of the family
 * holds run keys (and maybe fresh ones) and no deletion, and every other
 * holds fresh keys only. NULL otherwise, or when the reader cannot be
 * made (RocksDB reads the runs then). lf: the database's live files. */
static cmp_direct *direct_make(st_store *s, const st_gen *ts, unsigned t,
                               const rocksdb_livefiles_t *lf, int memtables_checked)
{
    char family[32];
    int runs = -1;
    rocksdb_column_family_handle_t *h = ts->cf[ST_CF_TABLE(t)];
    if (!h || (!memtables_checked && !memtables_empty(s, h))) return NULL;
    cmp_family_name(family, ST_CF_TABLE(t), ts->gen);
    for (int i = 0; i < rocksdb_livefiles_count(lf); i++) {
        size_t ll;
        const char *cf = rocksdb_livefiles_column_family_name(lf, i);
        if (!cf || strcmp(cf, family) != 0) continue;
        const char *lk = rocksdb_livefiles_largestkey(lf, i, &ll);
        if (ll && lk[0] < TBL_RUN) continue; /* fresh entries only */
        if (runs >= 0 || !ll || rocksdb_livefiles_deletions(lf, i)) return NULL;
        runs = i;
    }
    if (runs < 0) return NULL;
    const char *name = rocksdb_livefiles_name(lf, runs);
    char *path = malloc(strlen(s->path) + strlen(name) + 2);
    cmp_direct *d = NULL;
    if (path) {
        sprintf(path, "%s%s%s", s->path, name[0] == '/' ? "" : "/", name);
        (void)cmp_direct_open(&d, path, t, 0, s->map_tables);
    }
    free(path);
    return d;
}

/* Make d table t's direct reader in ts, under gen_mu. With if_seq, only
 * while ts is current and runs_seq still reads *if_seq (else d is
 * dropped), and then runs_seq moves by 2: readers remake their views of
 * the run space when it moves, and so find d. */
static void direct_swap(st_store *s, st_gen *ts, unsigned t, cmp_direct *d, const uint64_t *if_seq)
{
    cmp_direct *old = d;
    pthread_mutex_lock(&s->gen_mu);
    if (!if_seq || (ts == s->cur && atomic_load(&s->runs_seq) == *if_seq)) {
        old = ts->direct[t];
        ts->direct[t] = d;
        if (if_seq) atomic_fetch_add(&s->runs_seq, 2);
    }
    pthread_mutex_unlock(&s->gen_mu);
    cmp_direct_unref(old);
}

/* (Re)make the direct readers of ts's tables in mask (bit t): the run
 * space is the same before and after (a compaction rewrites files, not
 * contents). */
static void direct_remake(st_store *s, st_gen *ts, uint64_t mask)
{
    const rocksdb_livefiles_t *lf = rocksdb_livefiles(s->db);
    if (!lf) return;
    for (unsigned t = 0; t < ts->n; t++)
        if (mask >> t & 1) direct_swap(s, ts, t, direct_make(s, ts, t, lf, 0), NULL);
    rocksdb_livefiles_destroy(lf);
}

/* Before a write to the run space of the tables in mask: their files no
 * longer hold all of it. */
static void direct_drop(st_store *s, uint64_t mask)
{
    pthread_mutex_lock(&s->gen_mu);
    for (unsigned t = 0; t < s->cur->n; t++)
        if (mask >> t & 1) {
            cmp_direct_unref(s->cur->direct[t]);
            s->cur->direct[t] = NULL;
        }
    pthread_mutex_unlock(&s->gen_mu);
}

cmp_direct *st_table_direct(st_store *s, unsigned t)
{
    pthread_mutex_lock(&s->gen_mu);
    cmp_direct *d = t < s->cur->n ? cmp_direct_ref(s->cur->direct[t]) : NULL;
    pthread_mutex_unlock(&s->gen_mu);
    return d;
}

/* Flush family h's memtables into a file, if they hold anything (best
 * effort: a failure leaves them where they are). */
static void flush_family(st_store *s, rocksdb_column_family_handle_t *h)
{
    char *err = NULL;
    if (memtables_empty(s, h)) return;
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    if (!fo) return;
    rocksdb_flushoptions_set_wait(fo, 1);
    rocksdb_flush_cf(s->db, fo, h, &err);
    if (err) rocksdb_free(err);
    rocksdb_flushoptions_destroy(fo);
}

/* At a writable open: flush the tables whose memtables hold what the WAL
 * replayed, so that their run spaces can be judged from files alone. A
 * failure only leaves those tables read through RocksDB. */
static void flush_table_memtables(st_store *s)
{
    for (unsigned t = 0; t < s->cur->n; t++) flush_family(s, s->cur->cf[ST_CF_TABLE(t)]);
}

/* All of a store's tables (bit t). */
static uint64_t all_tables(unsigned n) { return n >= 64 ? UINT64_MAX : (1ull << n) - 1; }

/* Read options of point reads (gets and the iterators of probes). */
static const rocksdb_readoptions_t *point_ropts(st_store *s)
{
    return atomic_load(&s->fill) ? s->ropts : s->ropts_nofill;
}

int st_fills_cache(st_store *s) { return atomic_load(&s->fill); }

/* Table t's fresh values into out, ascending: at most FRESH_MIRROR_MAX + 1
 * of them (more than the mirror takes). ND_ECORRUPT for a malformed key. */
static int read_fresh_space(st_store *s, unsigned t, st_u64s *out)
{
    uint8_t lo[TBL_KEY_LEN], hi[TBL_KEY_LEN];
    st_iter *it = NULL;
    int rc = ND_OK;
    tbl_key(lo, TBL_FRESH, 0);
    tbl_key(hi, TBL_FRESH + 1, 0);
    ND_FORWARD(st_iter_new_bounded(&it, s, ST_CF_TABLE(t), lo, hi, sizeof lo, NULL));
    for (st_iter_seek(it, lo, sizeof lo); st_iter_valid(it) && out->n <= FRESH_MIRROR_MAX;
         st_iter_next(it)) {
        size_t klen;
        uint64_t v;
        const char *k = st_iter_key(it, &klen);
        if (!tbl_key_in(TBL_FRESH, t, k, klen, &v, &rc)) {
            rc = ND_ECORRUPT; /* no mirror; readers meet the key in RocksDB */
            break;
        }
        rc = st_u64s_push(out, v);
        if (rc < 0) break;
    }
    if (rc == ND_OK) rc = st_iter_status(it);
    st_iter_free(it);
    return rc;
}

void st_mirror_repair(st_store *s, unsigned t)
{
    st_u64s v = {0};
    if (t >= s->ntables || cmp_fresh_valid(s->fresh, t)) return;
    /* No writer runs: read unlocked. A failure leaves the table's
     * readers on RocksDB. */
    if (read_fresh_space(s, t, &v) == ND_OK) cmp_fresh_load(s->fresh, t, v.v, v.n);
    st_u64s_dispose(&v);
}

int st_open(st_store **out, const char *path, const st_open_opts *o)
{
    int rc;
    st_store *s = calloc(1, sizeof *s);
    ND_RETURN_IF(!s, ND_ENOMEM, "storage: out of memory");
    pthread_mutex_init(&s->gen_mu, NULL);
    s->readonly = o->readonly;
    s->map_tables = o->map_tables;
    s->path = strdup(path);
    if (!s->path) ND_FAIL(ND_ENOMEM, "storage: out of memory");

    int state = probe_dir(path);
    if (state < 0) ND_FAIL(ND_EINVAL, "%s exists and is not a directory", path);
    if (state == 1 && o->create && o->excl) ND_FAIL(ND_EEXIST, "database %s already exists", path);
    if (state == 0 && !o->create) ND_FAIL(ND_ENOTFOUND, "no database at %s", path);
    if (state == 0 && o->readonly) ND_FAIL(ND_ENOTFOUND, "no database at %s", path);
    if (state == 0 && (o->ntables == 0 || o->ntables > ND_MAX_TABLES))
        ND_FAIL(ND_EINVAL, "storage: %u tables (1..%u allowed)", o->ntables, ND_MAX_TABLES);

    ND_TRY(make_options(s, o->cache_bytes, rocksdb_lz4_compression));
    if (state == 0) {
        /* Creating: make the directory ourselves so a bad parent is named. */
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            ND_FAIL(errno == EACCES || errno == EROFS ? ND_EREADONLY
                    : errno == ENOSPC                 ? ND_ENOSPC
                    : errno == ENOENT                 ? ND_ENOTFOUND
                                                      : ND_EIO,
                    "cannot create database directory %s: %s", path, strerror(errno));
    }
    rc = open_db(s, path, state == 0, o->ntables, o->readonly);
    if (rc == ND_EINVAL && strstr(nd_errmsg(), "ompression")) {
        /* This RocksDB build lacks LZ4: fall back to no compression. */
        rocksdb_options_set_compression(s->small_opts, rocksdb_no_compression);
        rocksdb_options_set_compression(s->rev_opts, rocksdb_no_compression);
        rc = open_db(s, path, state == 0, o->ntables, o->readonly);
    }
    if (rc < 0) goto cleanup;
    if (!o->readonly) { /* a crash mid-way left them (the lock is ours now) */
        const char *names[3] = {REGEN_FILE, REGEN_DEL_FILE, INGEST_FILE};
        for (int i = 0; i < (int)(3 + ST_CF_MAX); i++) {
            char fork[32];
            if (i >= 3) snprintf(fork, sizeof fork, REGEN_FORK_FILE, i - 3);
            char *tmp = regen_file_path(path, i < 3 ? names[i] : fork);
            if (!tmp) ND_FAIL(ND_ENOMEM, "storage: out of memory");
            (void)unlink(tmp);
            free(tmp);
        }
    }
    ND_TRY(cmp_fresh_new(&s->fresh, s->ntables));
    for (unsigned t = 0; t < s->ntables; t++) st_mirror_repair(s, t);
    if (!o->readonly) flush_table_memtables(s);
    direct_remake(s, s->cur, all_tables(s->ntables));
    fill_refresh(s);
    *out = s;
    return ND_OK;
cleanup:
    free_store(s);
    return rc;
}

int st_close(st_store *s)
{
    if (!s) return ND_OK;
    /* Flushing the memtables now makes the next open fast (no WAL replay).
     * A failure (a full disk) loses nothing: the WAL still holds it all. */
    if (!s->readonly) (void)st_flush(s);
    free_store(s);
    return ND_OK;
}

unsigned st_ntables(const st_store *s) { return s->ntables; }

/* ---- reads ------------------------------------------------------------ */

static int copy_value(char *val, size_t len, char **out_val, size_t *out_len)
{
    char *copy = malloc(len + 1);
    if (!copy) {
        rocksdb_free(val);
        return nd_err_set(ND_ENOMEM, "storage: out of memory");
    }
    memcpy(copy, val, len);
    copy[len] = '\0';
    rocksdb_free(val);
    *out_val = copy;
    *out_len = len;
    return ND_OK;
}

int st_get(st_store *s, int cf, const void *key, size_t klen, char **out_val, size_t *out_len)
{
    char *err = NULL;
    size_t len = 0;
    st_gen *ts = GENERATIONAL(cf) ? gen_acquire(s) : NULL;
    char *val =
        rocksdb_get_cf(s->db, point_ropts(s), cf_handle(s, ts, cf), key, klen, &len, &err);
    gen_release(s, ts);
    if (err) return take_error(err, "read");
    if (!val) return ND_ENOTFOUND;
    return copy_value(val, len, out_val, out_len);
}

int st_exists_many(st_store *s, int cf, const char *const *keys, const size_t *lens, size_t n,
                   unsigned char *found)
{
    /* RocksDB's batched MultiGet sorts each chunk and probes each file's
     * filter and index once per chunk, instead of once per key. */
    enum { CHUNK = 256 };
    rocksdb_pinnableslice_t *vals[CHUNK];
    char *errs[CHUNK];
    int rc = ND_OK;
    st_gen *ts = GENERATIONAL(cf) ? gen_acquire(s) : NULL;
    for (size_t at = 0; at < n && rc == ND_OK; at += CHUNK) {
        size_t m = n - at < CHUNK ? n - at : CHUNK;
        rocksdb_batched_multi_get_cf(s->db, point_ropts(s), cf_handle(s, ts, cf), m, keys + at,
                                     lens + at, vals, errs, 0);
        for (size_t i = 0; i < m; i++) {
            found[at + i] = vals[i] != NULL;
            if (vals[i]) rocksdb_pinnableslice_destroy(vals[i]);
            if (!errs[i]) continue;
            if (rc == ND_OK) rc = take_error(errs[i], "read");
            else rocksdb_free(errs[i]);
        }
    }
    gen_release(s, ts);
    return rc;
}

/* ---- batches ---------------------------------------------------------- */

/* An indexed (WriteBatchWithIndex) or a plain batch. */
static int batch_new(st_batch **out, st_store *s, int plain)
{
    st_batch *b = calloc(1, sizeof *b);
    ND_RETURN_IF(!b, ND_ENOMEM, "storage: out of memory");
    b->store = s;
    if (plain) b->plain = rocksdb_writebatch_create();
    else b->wb = rocksdb_writebatch_wi_create(0, 1);
    if (!b->plain && !b->wb) {
        free(b);
        return nd_err_set(ND_ENOMEM, "storage: out of memory");
    }
    *out = b;
    return ND_OK;
}

int st_batch_new(st_batch **out, st_store *s) { return batch_new(out, s, 0); }
int st_batch_new_plain(st_batch **out, st_store *s) { return batch_new(out, s, 1); }

void st_batch_free(st_batch *b)
{
    if (!b) return;
    if (b->wb) rocksdb_writebatch_wi_destroy(b->wb);
    if (b->plain) rocksdb_writebatch_destroy(b->plain);
    cmp_flog_dispose(&b->log);
    free(b);
}

void st_batch_clear(st_batch *b)
{
    if (b->wb) rocksdb_writebatch_wi_clear(b->wb);
    else rocksdb_writebatch_clear(b->plain);
    cmp_flog_clear(&b->log);
    b->regen = NULL;
    b->gen_ops = 0;
    memset(b->touched, 0, sizeof b->touched);
}

/* A batch that switches generations writes only meta: anything else
 * would land in the families it is about to drop. */
static int gen_op(st_batch *b, int cf)
{
    if (!GENERATIONAL(cf)) return ND_OK;
    ND_RETURN_IF(b->regen, ND_EINVAL,
                 "storage: a batch that switches generations writes only meta");
    b->gen_ops++;
    b->touched[cf] = 1;
    return ND_OK;
}

int st_batch_put(st_batch *b, int cf, const void *key, size_t klen, const void *val,
                 size_t vlen)
{
    if (cf >= ST_CF_TABLE0)
        ND_FORWARD(cmp_flog_note(&b->log, (unsigned)(cf - ST_CF_TABLE0), key, klen, 1));
    ND_FORWARD(gen_op(b, cf));
    rocksdb_column_family_handle_t *h = cf_handle(b->store, NULL, cf);
    if (b->wb) rocksdb_writebatch_wi_put_cf(b->wb, h, key, klen, val, vlen);
    else rocksdb_writebatch_put_cf(b->plain, h, key, klen, val, vlen);
    return ND_OK;
}

int st_table_insert_mirrored(st_batch *b, unsigned t, uint64_t pfp)
{
    uint8_t kb[TBL_KEY_LEN];
    tbl_key(kb, TBL_FRESH, pfp);
    return cmp_flog_note(&b->log, t, kb, sizeof kb, 1);
}

int st_table_ingest_keys(st_store *s, unsigned t, const uint64_t *pv, size_t n)
{
    ND_RETURN_IF(s->readonly, ND_EREADONLY, "database %s is open read-only", s->path);
    ND_RETURN_IF(t >= s->ntables, ND_EINVAL, "storage: no table %u", t);
    if (n == 0) return ND_OK;
    int cf = ST_CF_TABLE(t), rc = ND_OK;
    char *err = NULL;
    uint8_t kb[TBL_KEY_LEN];
    char *path = regen_file_path(s->path, INGEST_FILE);
    rocksdb_envoptions_t *env = rocksdb_envoptions_create();
    rocksdb_ingestexternalfileoptions_t *io = rocksdb_ingestexternalfileoptions_create();
    rocksdb_sstfilewriter_t *w = env ? rocksdb_sstfilewriter_create(env, cf_options(s, cf)) : NULL;
    if (!path || !io || !w) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    rocksdb_sstfilewriter_open(w, path, &err);
    ND_TRY(take_error(err, "writing the fresh keys of a table to a file"));
    for (size_t i = 0; i < n; i++) {
        if (i && pv[i] <= pv[i - 1])
            ND_FAIL(ND_EINVAL, "storage: fresh keys of table %u not ascending and distinct", t);
        tbl_key(kb, TBL_FRESH, pv[i]);
        rocksdb_sstfilewriter_put(w, (const char *)kb, sizeof kb, "", 0, &err);
        ND_TRY(take_error(err, "writing the fresh keys of a table to a file"));
    }
    rocksdb_sstfilewriter_finish(w, &err);
    ND_TRY(take_error(err, "writing the fresh keys of a table to a file"));
    rocksdb_ingestexternalfileoptions_set_move_files(io, 1);
    const char *files[1] = {path};
    st_gen *ts = gen_acquire(s);
    rocksdb_ingest_external_file_cf(s->db, ts->cf[cf], files, 1, io, &err);
    rc = take_error(err, "ingesting the fresh keys of a table");
    if (rc == ND_OK) atomic_store(&ts->settled[cf], 0);
    gen_release(s, ts);
cleanup:
    if (w) rocksdb_sstfilewriter_destroy(w);
    if (io) rocksdb_ingestexternalfileoptions_destroy(io);
    if (env) rocksdb_envoptions_destroy(env);
    if (path) (void)unlink(path); /* moved in, or not to be */
    free(path);
    return rc;
}

int st_table_mirror_room(st_store *s, unsigned t, uint64_t n)
{
    return t < s->ntables && cmp_fresh_room(s->fresh, t, n);
}

void st_mirror_apply(st_store *s, const st_batch *b) { cmp_fresh_commit(s->fresh, &b->log); }

int st_batch_delete(st_batch *b, int cf, const void *key, size_t klen)
{
    if (cf >= ST_CF_TABLE0)
        ND_FORWARD(cmp_flog_note(&b->log, (unsigned)(cf - ST_CF_TABLE0), key, klen, 0));
    ND_FORWARD(gen_op(b, cf));
    rocksdb_column_family_handle_t *h = cf_handle(b->store, NULL, cf);
    if (b->wb) rocksdb_writebatch_wi_delete_cf(b->wb, h, key, klen);
    else rocksdb_writebatch_delete_cf(b->plain, h, key, klen);
    return ND_OK;
}

int st_batch_delete_range(st_batch *b, int cf, const void *lo, size_t lolen, const void *hi,
                          size_t hilen)
{
    ND_RETURN_IF(b->wb || cf >= ST_CF_TABLE0, ND_EINVAL,
                 "storage: a range deletion needs a plain batch and a family other than a table");
    ND_FORWARD(gen_op(b, cf));
    rocksdb_writebatch_delete_range_cf(b->plain, cf_handle(b->store, NULL, cf), lo, lolen, hi,
                                       hilen);
    return ND_OK;
}

int st_batch_get(st_store *s, st_batch *b, int cf, const void *key, size_t klen,
                 char **out_val, size_t *out_len)
{
    char *err = NULL;
    size_t len = 0;
    if (!b->wb) return st_get(s, cf, key, klen, out_val, out_len); /* plain: no own reads */
    char *val = rocksdb_writebatch_wi_get_from_batch_and_db_cf(
        b->wb, s->db, point_ropts(s), cf_handle(s, NULL, cf), key, klen, &len, &err);
    if (err) return take_error(err, "read");
    if (!val) return ND_ENOTFOUND;
    return copy_value(val, len, out_val, out_len);
}

/* A write that touches the run space is bracketed by two increments of
 * runs_seq, odd in between, and its fresh-space changes reach the mirror
 * inside the bracket: a reader that sees the same even value before and
 * after its read saw runs and mirror from one side of every such write
 * (cmp_table.c, st_table_range). Other writes change only the mirror,
 * one value at a time, after RocksDB took them. */
/* ---- generations: bulk rewrite through SST files ---------------------- */

struct st_regen {
    st_store *s;
    st_gen *next;              /* the new families, until made current */
    /* Or a table rewritten in place (st_regen_new_table): which, the view
     * it is read from, the sequences then, and the fresh entries its file
     * deletes (for the mirror). */
    int table;
    st_snap *snap;
    uint64_t runs_seq, dels_seq;
    cmp_flog log;
    cmp_direct *direct; /* its runs read from the file, once ingested */
    /* The deletions of its fresh keys go to a file of their own: a file
     * holding them and the runs would span the fresh keys flushed since
     * the view, and RocksDB would ingest it into level 0 and compact it
     * down level by level, where the runs alone go just above the
     * table's runs. */
    rocksdb_sstfilewriter_t *dw;
    char *dfile;
    uint64_t dkeys;
    rocksdb_envoptions_t *env;
    rocksdb_sstfilewriter_t *w;   /* the family being written, or NULL */
    rocksdb_ingestexternalfileoptions_t *ingest;
    int cf;                       /* the family being written */
    uint64_t keys;                /* keys put into its file */
    unsigned char written[ST_CF_MAX]; /* families finished */
    char *file;                   /* the file's path */
    /* A fork (st_regen_fork) writes into its parent's next, and keeps the
     * files it finished for st_regen_join to ingest. */
    st_regen *parent;
    char *done[ST_CF_MAX];
};

/* What both kinds of rewrite need: the file's writer options and path,
 * and how it is ingested. */
static int regen_alloc(st_regen **out, st_store *s)
{
    ND_RETURN_IF(s->readonly, ND_EREADONLY, "database %s is open read-only", s->path);
    st_regen *g = calloc(1, sizeof *g);
    ND_RETURN_IF(!g, ND_ENOMEM, "storage: out of memory");
    g->s = s;
    g->table = -1;
    g->env = rocksdb_envoptions_create();
    g->ingest = rocksdb_ingestexternalfileoptions_create();
    g->file = regen_file_path(s->path, REGEN_FILE);
    if (!g->env || !g->ingest || !g->file) {
        st_regen_free(g);
        return nd_err_set(ND_ENOMEM, "storage: out of memory");
    }
    /* The file is linked into the database, not copied. */
    rocksdb_ingestexternalfileoptions_set_move_files(g->ingest, 1);
    *out = g;
    return ND_OK;
}

int st_regen_new(st_regen **out, st_store *s)
{
    char *err = NULL, name[32];
    int rc = ND_OK;
    st_regen *g;
    ND_FORWARD(regen_alloc(&g, s));
    g->next = calloc(1, sizeof *g->next);
    if (!g->next) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    g->next->refs = 1;
    g->next->gen = s->cur->gen + 1;
    g->next->n = s->ntables;
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)s->ntables); cf++) {
        cmp_family_name(name, cf, g->next->gen);
        g->next->cf[cf] = rocksdb_create_column_family(s->db, cf_options(s, cf), name, &err);
        if (err) {
            /* RocksDB's C API hands back an empty handle even on failure. */
            if (g->next->cf[cf]) rocksdb_column_family_handle_destroy(g->next->cf[cf]);
            g->next->cf[cf] = NULL;
            rc = take_error(err, "creating a generation");
            goto cleanup;
        }
    }
    *out = g;
    return ND_OK;
cleanup:
    st_regen_free(g);
    return rc;
}

int st_regen_new_table(st_regen **out, st_store *s, unsigned t, const st_snap **snap)
{
    st_regen *g;
    int rc;
    ND_RETURN_IF(t >= s->ntables, ND_EINVAL, "storage: no table %u", t);
    ND_FORWARD(regen_alloc(&g, s));
    g->table = (int)t;
    g->dfile = regen_file_path(s->path, REGEN_DEL_FILE);
    if (!g->dfile) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    g->runs_seq = atomic_load(&s->runs_seq);
    g->dels_seq = atomic_load(&s->dels_seq);
    ND_TRY(st_snap_new(&g->snap, s));
    *snap = g->snap;
    *out = g;
    return ND_OK;
cleanup:
    st_regen_free(g);
    return rc;
}

int st_regen_fork(st_regen **out, st_regen *g)
{
    st_regen *f;
    ND_RETURN_IF(!g->next || g->parent, ND_EINVAL,
                 "storage: only the writer of a new generation forks");
    ND_FORWARD(regen_alloc(&f, g->s));
    f->parent = g;
    f->next = g->next;
    *out = f;
    return ND_OK;
}

int st_regen_begin(st_regen *g, int cf)
{
    char *err = NULL;
    int in_place = g->table >= 0;
    ND_RETURN_IF(g->w || cf < ST_CF_DOCS ||
                     (in_place ? cf != ST_CF_TABLE(g->table) : cf >= ST_CF_TABLE((int)g->next->n)) ||
                     g->written[cf],
                 ND_EINVAL, "storage: family %d cannot be begun here", cf);
    if (g->parent) { /* a file of its own for each family, kept until joined */
        char name[32];
        snprintf(name, sizeof name, REGEN_FORK_FILE, cf);
        char *path = regen_file_path(g->s->path, name);
        ND_RETURN_IF(!path, ND_ENOMEM, "storage: out of memory");
        free(g->file);
        g->file = path;
    }
    g->w = rocksdb_sstfilewriter_create(g->env, cf_options(g->s, cf));
    ND_RETURN_IF(!g->w, ND_ENOMEM, "storage: out of memory");
    g->cf = cf;
    g->keys = 0;
    rocksdb_sstfilewriter_open(g->w, g->file, &err);
    return take_error(err, g->file);
}

int st_regen_put(st_regen *g, const void *key, size_t klen, const void *val, size_t vlen)
{
    char *err = NULL;
    rocksdb_sstfilewriter_put(g->w, key, klen, val, vlen, &err);
    g->keys++;
    return take_error(err, g->file);
}

int st_regen_delete(st_regen *g, const void *key, size_t klen)
{
    char *err = NULL;
    ND_RETURN_IF(g->table < 0 || !g->w, ND_EINVAL,
                 "storage: only a table rewritten in place deletes");
    if (!g->dw) {
        g->dw = rocksdb_sstfilewriter_create(g->env, g->s->table_opts);
        ND_RETURN_IF(!g->dw, ND_ENOMEM, "storage: out of memory");
        rocksdb_sstfilewriter_open(g->dw, g->dfile, &err);
        ND_FORWARD(take_error(err, g->dfile));
    }
    rocksdb_sstfilewriter_delete(g->dw, key, klen, &err);
    ND_FORWARD(take_error(err, g->dfile));
    g->dkeys++;
    return cmp_flog_note(&g->log, (unsigned)g->table, key, klen, 0);
}

int st_regen_delete_range(st_regen *g, const void *lo, size_t lolen, const void *hi,
                          size_t hilen)
{
    char *err = NULL;
    ND_RETURN_IF(g->table < 0 || !g->w, ND_EINVAL,
                 "storage: only a table rewritten in place deletes");
    rocksdb_sstfilewriter_delete_range(g->w, lo, lolen, hi, hilen, &err);
    g->keys++;
    return take_error(err, g->file);
}

static void regen_drop_writer(st_regen *g)
{
    if (g->dw) {
        rocksdb_sstfilewriter_destroy(g->dw);
        g->dw = NULL;
        (void)unlink(g->dfile);
    }
    if (!g->w) return;
    rocksdb_sstfilewriter_destroy(g->w);
    g->w = NULL;
    if (g->file) (void)unlink(g->file);
}

/* st_regen_end in place: the files are ingested later
 * (st_regen_apply_table), with the writers held off. */
static int regen_end_table(st_regen *g)
{
    char *err = NULL;
    if (g->keys) rocksdb_sstfilewriter_finish(g->w, &err);
    ND_FORWARD(take_error(err, g->file));
    if (g->dkeys) rocksdb_sstfilewriter_finish(g->dw, &err);
    ND_FORWARD(take_error(err, g->dfile));
    rocksdb_sstfilewriter_destroy(g->w);
    g->w = NULL;
    if (g->dw) rocksdb_sstfilewriter_destroy(g->dw);
    g->dw = NULL;
    g->written[g->cf] = 1;
    /* Flushing the memtables now leaves that ingest less to flush first
     * (a file overlapping them waits for their flush). */
    flush_family(g->s, g->snap->gen->cf[g->cf]);
    /* Opened now, read once ingested: the ingest links the file into the
     * database (the same inode) and unlinks this name. If it cannot be
     * read directly, RocksDB reads it. */
    if (g->keys) (void)cmp_direct_open(&g->direct, g->file, (unsigned)g->table, 1, g->s->map_tables);
    if (g->direct) cmp_direct_prefetch(g->direct);
    return ND_OK;
}

/* Ingest file into family cf of g's new generation. */
static int regen_ingest(st_regen *g, int cf, const char *file)
{
    char *err = NULL;
    const char *files[1] = {file};
    rocksdb_ingest_external_file_cf(g->s->db, g->next->cf[cf], files, 1, g->ingest, &err);
    int rc = take_error(err, "ingesting a rewritten family");
    if (rc == ND_OK && cf >= ST_CF_TABLE0)
        direct_remake(g->s, g->next, 1ull << (cf - ST_CF_TABLE0));
    return rc;
}

int st_regen_end(st_regen *g)
{
    char *err = NULL;
    int rc = ND_OK;
    ND_RETURN_IF(!g->w, ND_EINVAL, "storage: no family is being written");
    if (g->table >= 0) return regen_end_table(g);
    if (g->keys) { /* an empty family needs no file (RocksDB refuses one) */
        rocksdb_sstfilewriter_finish(g->w, &err);
        rc = take_error(err, g->file);
        if (rc == ND_OK && g->parent) { /* st_regen_join ingests it */
            g->done[g->cf] = g->file;
            g->file = NULL;
        } else if (rc == ND_OK) {
            rc = regen_ingest(g, g->cf, g->file);
        }
    }
    regen_drop_writer(g);
    if (rc == ND_OK) g->written[g->cf] = 1;
    return rc;
}

int st_regen_join(st_regen *g, st_regen *part, int keep)
{
    int rc = ND_OK;
    if (part->parent != g)
        rc = nd_err_set(ND_EINVAL, "storage: a fork joined to another writer");
    else if (keep && part->w)
        rc = nd_err_set(ND_EINVAL, "storage: family %d of a fork is still being written", part->cf);
    for (int cf = ST_CF_DOCS; rc == ND_OK && keep && cf < ST_CF_TABLE((int)g->next->n); cf++) {
        if (!part->written[cf]) continue;
        if (g->written[cf] || (g->w && g->cf == cf)) {
            rc = nd_err_set(ND_EINVAL, "storage: family %d of the new generation written twice",
                            cf);
            break;
        }
        if (part->done[cf]) rc = regen_ingest(g, cf, part->done[cf]);
        if (rc == ND_OK) g->written[cf] = 1;
    }
    st_regen_free(part);
    return rc;
}

int st_regen_apply_table(st_regen *g, int *applied)
{
    st_store *s = g->s;
    char *err = NULL;
    int cf = ST_CF_TABLE(g->table);
    *applied = 0;
    ND_RETURN_IF(g->table < 0 || !g->written[cf], ND_EINVAL,
                 "storage: no table rewritten in place to apply");
    if (atomic_load(&s->runs_seq) != g->runs_seq || atomic_load(&s->dels_seq) != g->dels_seq)
        return ND_OK; /* the file no longer says what the table holds */
    /* Key order: the fresh space ('F') below the runs ('R'). */
    const char *files[2];
    size_t n = 0;
    if (g->dkeys) files[n++] = g->dfile;
    if (g->keys) files[n++] = g->file;
    if (n == 0) { /* an empty table without fresh entries */
        *applied = 1;
        return ND_OK;
    }
    /* A run-space write (cmp_store.c, st_write): readers meanwhile read
     * one snapshot; the table's file no longer holds its runs. The runs_seq
     * above (the same generation: a switch moves it) names the family. */
    atomic_fetch_add(&s->runs_seq, 1);
    direct_drop(s, 1ull << g->table);
    rocksdb_ingest_external_file_cf(s->db, g->snap->gen->cf[cf], files, n, g->ingest, &err);
    int rc = take_error(err, "ingesting a rewritten table");
    if (rc == ND_OK) {
        atomic_store(&g->snap->gen->settled[cf], 0);
        cmp_fresh_commit(s->fresh, &g->log);
        /* The file holds every run (its range deletion hides the older
         * ones), so queries read it directly without waiting for a
         * compaction; the next run-space write drops the reader. */
        direct_swap(s, g->snap->gen, (unsigned)g->table, g->direct, NULL);
        g->direct = NULL;
        *applied = 1;
    }
    atomic_fetch_add(&s->runs_seq, 1);
    return rc;
}

int st_batch_set_regen(st_batch *b, st_regen *g)
{
    char v[24];
    ND_RETURN_IF(!g->next, ND_EINVAL, "storage: a table rewritten in place switches nothing");
    ND_RETURN_IF(g->w, ND_EINVAL, "storage: family %d is still being written", g->cf);
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)g->next->n); cf++)
        ND_RETURN_IF(!g->written[cf], ND_EINVAL,
                     "storage: family %d of the new generation was not written", cf);
    ND_RETURN_IF(b->gen_ops, ND_EINVAL,
                 "storage: a batch that switches generations writes only meta");
    snprintf(v, sizeof v, "%" PRIu64, g->next->gen);
    ND_FORWARD(st_batch_put(b, ST_CF_META, GEN_KEY, strlen(GEN_KEY), v, strlen(v)));
    b->regen = g;
    return ND_OK;
}

/* After the write of the batch that records it: the new generation
 * becomes current and the old families are dropped (their files go when
 * the last iterator reading them does). */
static void regen_switch(st_regen *g)
{
    st_store *s = g->s;
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)g->next->n); cf++)
        atomic_store(&g->next->settled[cf], 1);
    pthread_mutex_lock(&s->gen_mu);
    st_gen *old = s->cur;
    s->cur = g->next;
    pthread_mutex_unlock(&s->gen_mu);
    g->next = NULL;
    for (int cf = ST_CF_DOCS; cf < (int)(ST_CF_MAX); cf++) {
        char *err = NULL;
        if (!old->cf[cf]) continue;
        /* A failure leaves a stale generation that the next writable open
         * drops; the switch itself is already durable. */
        rocksdb_drop_column_family(s->db, old->cf[cf], &err);
        if (err) rocksdb_free(err);
    }
    gen_release(s, old);
    fill_refresh(s);
}

void st_regen_free(st_regen *g)
{
    if (!g) return;
    regen_drop_writer(g);
    for (int cf = 0; cf < (int)(ST_CF_MAX); cf++) {
        if (g->done[cf]) (void)unlink(g->done[cf]); /* a fork's, not ingested */
        free(g->done[cf]);
    }
    if (g->next && !g->parent) { /* never made current: its families go */
        for (int cf = ST_CF_DOCS; cf < (int)(ST_CF_MAX); cf++) {
            char *err = NULL;
            if (!g->next->cf[cf]) continue;
            rocksdb_drop_column_family(g->s->db, g->next->cf[cf], &err);
            if (err) rocksdb_free(err);
        }
        gen_destroy(g->next);
    }
    if (g->table >= 0) { /* not ingested */
        if (g->file) (void)unlink(g->file);
        if (g->dfile) (void)unlink(g->dfile);
    }
    st_snap_free(g->snap);
    cmp_flog_dispose(&g->log);
    cmp_direct_unref(g->direct);
    if (g->env) rocksdb_envoptions_destroy(g->env);
    if (g->ingest) rocksdb_ingestexternalfileoptions_destroy(g->ingest);
    free(g->file);
    free(g->dfile);
    free(g);
}

uint64_t st_generation(st_store *s)
{
    pthread_mutex_lock(&s->gen_mu);
    uint64_t gen = s->cur->gen;
    pthread_mutex_unlock(&s->gen_mu);
    return gen;
}

int st_write(st_store *s, st_batch *b, int sync)
{
    char *err = NULL;
    ND_RETURN_IF(s->readonly, ND_EREADONLY, "database %s is open read-only", s->path);
    int runs = b->log.runs || b->regen;
    /* A batch that switches generations is always synced: the old
     * families are dropped right after, and that drop is durable at once. */
    if (b->regen) sync = 1;
    if (runs) atomic_fetch_add(&s->runs_seq, 1);
    if (b->log.dels) atomic_fetch_add(&s->dels_seq, 1);
    if (b->log.runs) direct_drop(s, b->log.runs);
    if (b->wb) rocksdb_write_writebatch_wi(s->db, sync ? s->wopts_sync : s->wopts, b->wb, &err);
    else rocksdb_write(s->db, sync ? s->wopts_sync : s->wopts, b->plain, &err);
    int rc = take_error(err, "write");
    if (rc == ND_OK && b->gen_ops) {
        /* writes go to the current generation's families (the writer is
         * serialised, so it is still current) */
        st_gen *ts = gen_acquire(s);
        for (size_t cf = 0; cf < sizeof b->touched; cf++)
            if (b->touched[cf]) atomic_store(&ts->settled[cf], 0);
        gen_release(s, ts);
    }
    if (rc == ND_OK) cmp_fresh_commit(s->fresh, &b->log);
    if (rc == ND_OK && b->regen) regen_switch(b->regen);
    if (runs) atomic_fetch_add(&s->runs_seq, 1);
    if (rc == ND_OK && (atomic_fetch_add(&s->write_seq, 1) + 1) % FILL_REFRESH_WRITES == 0)
        fill_refresh(s);
    return rc;
}

uint64_t st_write_seq(st_store *s) { return atomic_load(&s->write_seq); }
uint64_t st_runs_seq(st_store *s) { return atomic_load(&s->runs_seq); }
cmp_fresh *st_store_fresh(st_store *s) { return s->fresh; }

/* ---- iterators -------------------------------------------------------- */

/* Make it's RocksDB iterator over family cf with read options ro: over
 * batch b too when b indexes its writes; in snap's generation, or (snap
 * NULL) the current one, referenced while the iterator is made. Takes
 * it (and its own read options): freed on failure. */
static int iter_open(st_iter **out, st_iter *it, st_store *s, int cf,
                     const rocksdb_readoptions_t *ro, const st_snap *snap, st_batch *b)
{
    st_gen *ts = !snap && GENERATIONAL(cf) ? gen_acquire(s) : NULL;
    rocksdb_column_family_handle_t *h = cf_handle(s, snap ? snap->gen : ts, cf);
    rocksdb_iterator_t *base = rocksdb_create_iterator_cf(s->db, ro, h);
    it->it = b && b->wb ? rocksdb_writebatch_wi_create_iterator_with_base_cf(b->wb, base, h) : base;
    gen_release(s, ts);
    if (!it->it) {
        if (it->ropts) rocksdb_readoptions_destroy(it->ropts);
        free(it);
        return nd_err_set(ND_ENOMEM, "storage: cannot create iterator");
    }
    *out = it;
    return ND_OK;
}

int st_iter_new(st_iter **out, st_store *s, int cf, st_batch *b, int consistent)
{
    /* A RocksDB iterator already reads one implicit snapshot taken when it
     * is created, so `consistent` needs nothing more. */
    (void)consistent;
    st_iter *it = calloc(1, sizeof *it);
    ND_RETURN_IF(!it, ND_ENOMEM, "storage: out of memory");
    return iter_open(out, it, s, cf, point_ropts(s), NULL, b);
}

int st_iter_new_probe(st_iter **out, st_store *s, unsigned t)
{
    st_iter *it = calloc(1, sizeof *it);
    ND_RETURN_IF(!it, ND_ENOMEM, "storage: out of memory");
    const rocksdb_readoptions_t *ro = atomic_load(&s->fill) ? s->probe_ropts : s->probe_ropts_nofill;
    return iter_open(out, it, s, ST_CF_TABLE(t), ro, NULL, NULL);
}

int st_iter_new_scan(st_iter **out, st_store *s, int cf)
{
    st_iter *it = calloc(1, sizeof *it);
    ND_RETURN_IF(!it, ND_ENOMEM, "storage: out of memory");
    return iter_open(out, it, s, cf, s->scan_ropts, NULL, NULL);
}

int st_snap_new(st_snap **out, st_store *s)
{
    st_snap *sn = calloc(1, sizeof *sn);
    ND_RETURN_IF(!sn, ND_ENOMEM, "storage: out of memory");
    sn->store = s;
    sn->gen = gen_acquire(s);
    sn->ropts = ropts_total_order();
    sn->snap = rocksdb_create_snapshot(s->db);
    if (!sn->ropts || !sn->snap) {
        st_snap_free(sn);
        return nd_err_set(ND_ENOMEM, "storage: cannot take a snapshot");
    }
    rocksdb_readoptions_set_snapshot(sn->ropts, sn->snap);
    rocksdb_readoptions_set_fill_cache(sn->ropts, (unsigned char)atomic_load(&s->fill));
    *out = sn;
    return ND_OK;
}

void st_snap_free(st_snap *sn)
{
    if (!sn) return;
    if (sn->snap) rocksdb_release_snapshot(sn->store->db, sn->snap);
    if (sn->ropts) rocksdb_readoptions_destroy(sn->ropts);
    gen_release(sn->store, sn->gen);
    free(sn);
}

int st_iter_new_at(st_iter **out, st_store *s, int cf, const st_snap *snap)
{
    st_iter *it = calloc(1, sizeof *it);
    ND_RETURN_IF(!it, ND_ENOMEM, "storage: out of memory");
    return iter_open(out, it, s, cf, snap->ropts, snap, NULL);
}

/* A new iterator with read options of its own, for the caller to set
 * before iter_open. */
static int iter_own_ropts(st_iter **out)
{
    st_iter *it = calloc(1, sizeof *it);
    ND_RETURN_IF(!it, ND_ENOMEM, "storage: out of memory");
    it->ropts = ropts_total_order();
    if (!it->ropts) {
        free(it);
        return nd_err_set(ND_ENOMEM, "storage: out of memory");
    }
    *out = it;
    return ND_OK;
}

int st_iter_new_scan_at(st_iter **out, st_store *s, int cf, const st_snap *snap)
{
    st_iter *it = NULL;
    ND_FORWARD(iter_own_ropts(&it));
    rocksdb_readoptions_set_snapshot(it->ropts, snap->snap);
    rocksdb_readoptions_set_fill_cache(it->ropts, 0);
    rocksdb_readoptions_set_readahead_size(it->ropts, SCAN_READAHEAD);
    return iter_open(out, it, s, cf, it->ropts, snap, NULL);
}

int st_iter_new_bounded(st_iter **out, st_store *s, int cf, const void *lo, const void *hi,
                        size_t klen, const st_snap *snap)
{
    ND_RETURN_IF(klen > sizeof((st_iter *)0)->bounds[0], ND_EINVAL,
                 "storage: bound of %zu bytes", klen);
    st_iter *it = NULL;
    ND_FORWARD(iter_own_ropts(&it));
    /* RocksDB keeps pointers to the bound bytes: they live in the iterator. */
    memcpy(it->bounds[0], lo, klen);
    memcpy(it->bounds[1], hi, klen);
    rocksdb_readoptions_set_iterate_lower_bound(it->ropts, it->bounds[0], klen);
    rocksdb_readoptions_set_iterate_upper_bound(it->ropts, it->bounds[1], klen);
    if (snap) rocksdb_readoptions_set_snapshot(it->ropts, snap->snap);
    rocksdb_readoptions_set_fill_cache(it->ropts, (unsigned char)atomic_load(&s->fill));
    return iter_open(out, it, s, cf, it->ropts, snap, NULL);
}

void st_iter_free(st_iter *it)
{
    if (!it) return;
    rocksdb_iter_destroy(it->it);
    if (it->ropts) rocksdb_readoptions_destroy(it->ropts);
    free(it);
}

void st_iter_seek(st_iter *it, const void *key, size_t klen) { rocksdb_iter_seek(it->it, key, klen); }
void st_iter_seek_first(st_iter *it) { rocksdb_iter_seek_to_first(it->it); }
void st_iter_next(st_iter *it) { rocksdb_iter_next(it->it); }
int st_iter_valid(const st_iter *it) { return rocksdb_iter_valid(it->it); }
const char *st_iter_key(const st_iter *it, size_t *klen) { return rocksdb_iter_key(it->it, klen); }
const char *st_iter_value(const st_iter *it, size_t *vlen)
{
    return rocksdb_iter_value(it->it, vlen);
}

int st_iter_status(const st_iter *it)
{
    char *err = NULL;
    rocksdb_iter_get_error(it->it, &err);
    return take_error(err, "iterate");
}

/* ---- whole database --------------------------------------------------- */

int st_checkpoint(st_store *s, const char *dir)
{
    struct stat st;
    char *err = NULL;
    ND_RETURN_IF(stat(dir, &st) == 0, ND_EEXIST, "backup target %s already exists", dir);
    rocksdb_checkpoint_t *cp = rocksdb_checkpoint_object_create(s->db, &err);
    if (err) return take_error(err, "checkpoint");
    rocksdb_checkpoint_create(cp, dir, 0, &err);
    rocksdb_checkpoint_object_destroy(cp);
    return take_error(err, dir);
}

static int dir_bytes(const char *path, uint64_t *total)
{
    DIR *d = opendir(path);
    ND_RETURN_IF(!d, ND_EIO, "cannot list %s: %s", path, strerror(errno));
    struct dirent *e;
    char buf[4096];
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.') continue;
        snprintf(buf, sizeof buf, "%s/%s", path, e->d_name);
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) *total += (uint64_t)st.st_size;
    }
    closedir(d);
    return ND_OK;
}

int st_disk_bytes(st_store *s, uint64_t *out)
{
    *out = 0;
    return dir_bytes(s->path, out);
}

int st_flush(st_store *s)
{
    if (s->readonly) return ND_OK;
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    ND_RETURN_IF(!fo, ND_ENOMEM, "storage: out of memory");
    rocksdb_flushoptions_set_wait(fo, 1);
    int rc = ND_OK;
    st_gen *ts = gen_acquire(s);
    for (unsigned i = 0; i < ST_CF_TABLE0 + ts->n && rc == ND_OK; i++) {
        char *err = NULL;
        rocksdb_flush_cf(s->db, fo, cf_handle(s, ts, (int)i), &err);
        rc = take_error(err, "flush");
    }
    gen_release(s, ts);
    rocksdb_flushoptions_destroy(fo);
    return rc;
}

int st_family_settled(st_store *s, int cf)
{
    if (!GENERATIONAL(cf)) return 0;
    st_gen *ts = gen_acquire(s);
    int settled = atomic_load(&ts->settled[cf]);
    gen_release(s, ts);
    return settled;
}

/* Compaction options that rewrite the bottom level too: that is where
 * deleted entries and their tombstones meet and are dropped. */
static rocksdb_compactoptions_t *compact_all_levels(void)
{
    rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
    if (co) rocksdb_compactoptions_set_bottommost_level_compaction(co, 2 /* kForce */);
    return co;
}

int st_compact_tables(st_store *s)
{
    if (s->readonly) return ND_OK;
    rocksdb_compactoptions_t *co = compact_all_levels();
    ND_RETURN_IF(!co, ND_ENOMEM, "storage: out of memory");
    /* RocksDB's own compactions (of flushed fresh entries, docs, rev) go
     * on beside it. */
    rocksdb_compactoptions_set_exclusive_manual_compaction(co, 0);
    st_gen *ts = gen_acquire(s);
    for (unsigned t = 0; t < ts->n && !atomic_load(&s->stop_compacting); t++) {
        /* Writers go on meanwhile: fresh entries may reach the memtables,
         * but a run key only with a run-space write, which moves runs_seq
         * (and drops the direct reader). So if runs_seq is where it was
         * before the compaction (which flushes the memtables first), the
         * files alone hold the run space. */
        uint64_t seq = atomic_load(&s->runs_seq);
        if (seq & 1) continue; /* a run-space write is being applied */
        rocksdb_compact_range_cf_opt(s->db, ts->cf[ST_CF_TABLE(t)], co, NULL, 0, NULL, 0);
        const rocksdb_livefiles_t *lf = rocksdb_livefiles(s->db);
        cmp_direct *d = lf ? direct_make(s, ts, t, lf, 1) : NULL;
        if (lf) rocksdb_livefiles_destroy(lf);
        if (d) direct_swap(s, ts, t, d, &seq);
    }
    gen_release(s, ts);
    rocksdb_compactoptions_destroy(co);
    return ND_OK;
}

void st_stop_compacting(st_store *s, int stop)
{
    atomic_store(&s->stop_compacting, stop);
    if (stop) rocksdb_disable_manual_compaction(s->db);
    else rocksdb_enable_manual_compaction(s->db);
}

int st_compact_files(st_store *s)
{
    if (s->readonly) return ND_OK;
    ND_FORWARD(st_flush(s));
    rocksdb_compactoptions_t *co = compact_all_levels();
    ND_RETURN_IF(!co, ND_ENOMEM, "storage: out of memory");
    st_gen *ts = gen_acquire(s);
    for (unsigned i = 0; i < ST_CF_TABLE0 + ts->n; i++)
        if (!st_family_settled(s, (int)i))
            rocksdb_compact_range_cf_opt(s->db, cf_handle(s, ts, (int)i), co, NULL, 0, NULL, 0);
    direct_remake(s, ts, all_tables(ts->n));
    gen_release(s, ts);
    rocksdb_compactoptions_destroy(co);
    fill_refresh(s);
    return ND_OK;
}

size_t st_batch_count(const st_batch *b)
{
    return (size_t)(b->wb ? rocksdb_writebatch_wi_count(b->wb) : rocksdb_writebatch_count(b->plain));
}
