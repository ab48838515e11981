/*
 * cmp_kv.cc — the key-value adapter over RocksDB's C API, with cmp_kv_files.cc
 * and cmp_kv_resume.cc, through their cmp_kv_impl.h, the only includer of
 * <rocksdb/c.h> (cmp_kv.h, cmp_kv_files.h, cmp_kv_resume.h: what it offers).
 *
 * Options: one LRU block cache shared by every family; each family's
 * table options come from its profile (kv_profile), made once per
 * database and shared by the families and file writers of that profile.
 * The WAL is always on. Read options are made once per kind of read and
 * shared (point reads filling the cache or not, prefix probes, walks):
 * only bounded iterators and walks of a snapshot carry their own.
 * RocksDB's C API hands back an object to free even when listing or
 * creating families fails; range deletions exist in plain batches only.
 *
 * Under an address space limit (`ulimit -v`) the options follow the
 * memory plan of cmp_kv_mem.h, and a reserve of address space is held
 * while the database is open, for RocksDB's own threads; writes, ingests,
 * flushes and compactions first check that it is still there.
 *
 * C++ only to catch the exceptions RocksDB's C API lets through: each
 * call that can throw runs inside KV_GUARD (cmp_kv_error.h says why). A
 * batch that could not take a change is never written; an iterator whose
 * move threw is invalid and its status says why.
 */
extern "C" {
#include "cmp_kv.h"
#include "cmp_synced.h"
}
#include "cmp_kv_impl.h"
#include "cmp_kv_resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ---------------------------------------------------------- */

/* Read options that ignore the families' prefix extractors (every read
 * but a prefix probe). NULL when out of memory. */
static rocksdb_readoptions_t *ropts_total_order(void)
{
    rocksdb_readoptions_t *r = rocksdb_readoptions_create();
    if (r) rocksdb_readoptions_set_total_order_seek(r, 1);
    return r;
}

/* A family's memtables sized to the memory plan (cmp_kv_mem.h). */
static void mem_fit(rocksdb_options_t *o, const kv_mem *m)
{
    rocksdb_options_set_write_buffer_size(o, (size_t)m->memtable);
    rocksdb_options_set_max_write_buffer_number(o, 2);
    rocksdb_options_set_arena_block_size(o, (size_t)m->arena);
}

static int make_profile(kv_db *db, kv_prof *p, const kv_profile *pr)
{
    p->opts = rocksdb_options_create();
    p->bbt = rocksdb_block_based_options_create();
    ND_RETURN_IF(!p->opts || !p->bbt, ND_ENOMEM, "storage: out of memory creating options");
    p->compress = pr->compress && (!db->mem.limited || db->mem.compress);
    rocksdb_block_based_options_set_block_cache(p->bbt, db->cache);
    if (pr->block_size) rocksdb_block_based_options_set_block_size(p->bbt, pr->block_size);
    if (pr->plain_format) {
        rocksdb_block_based_options_set_format_version(p->bbt, 5);
        rocksdb_block_based_options_set_checksum(p->bbt, 4 /* kXXH3 */);
        rocksdb_block_based_options_set_index_block_restart_interval(p->bbt, 1);
        rocksdb_block_based_options_set_cache_index_and_filter_blocks(p->bbt, 0);
    }
    if (pr->bloom_bits)
        rocksdb_block_based_options_set_filter_policy(
            p->bbt, rocksdb_filterpolicy_create_bloom_full((double)pr->bloom_bits));
    if (pr->prefix_len) {
        rocksdb_options_set_prefix_extractor(
            p->opts, rocksdb_slicetransform_create_fixed_prefix(pr->prefix_len));
        rocksdb_block_based_options_set_whole_key_filtering(p->bbt, 0);
    }
    rocksdb_options_set_block_based_table_factory(p->opts, p->bbt);
    rocksdb_options_set_compression(p->opts, p->compress ? rocksdb_lz4_compression
                                                         : rocksdb_no_compression);
    if (pr->memtable_whole_key) rocksdb_options_set_memtable_whole_key_filtering(p->opts, 1);
    if (pr->memtable_bloom > 0)
        rocksdb_options_set_memtable_prefix_bloom_size_ratio(p->opts, pr->memtable_bloom);
    if (pr->file_size) rocksdb_options_set_target_file_size_base(p->opts, pr->file_size);
    if (pr->universal) rocksdb_options_set_compaction_style(p->opts, rocksdb_universal_compaction);
    if (pr->l0_files) rocksdb_options_set_level0_file_num_compaction_trigger(p->opts, (int)pr->l0_files);
    if (db->mem.limited) {
        mem_fit(p->opts, &db->mem);
        if (!pr->file_size) rocksdb_options_set_target_file_size_base(p->opts, db->mem.file);
    }
    return ND_OK;
}

static int make_options(kv_db *db, const kv_open_opts *o)
{
    uint64_t cache = o->cache_bytes ? o->cache_bytes : (64u << 20);
    ND_FORWARD(kv_mem_plan(&db->mem, cache, o->readonly));
    /* The reserve first: RocksDB's open and the caller use the rest. */
    ND_FORWARD(kv_mem_reserve_take(&db->mem));
    db->mem_held = 1;
    if (db->mem.limited) cache = db->mem.cache;
    db->cache = rocksdb_cache_create_lru((size_t)cache);
    db->opts = rocksdb_options_create();
    for (int fill = 0; fill < 2; fill++) {
        db->point[fill] = ropts_total_order();
        db->prefix[fill] = rocksdb_readoptions_create();
    }
    db->scan = ropts_total_order();
    db->wopts = rocksdb_writeoptions_create();
    db->wopts_sync = rocksdb_writeoptions_create();
    if (!db->cache || !db->opts || !db->point[0] || !db->point[1] || !db->prefix[0] ||
        !db->prefix[1] || !db->scan || !db->wopts || !db->wopts_sync)
        return nd_err_set(ND_ENOMEM, "storage: out of memory creating options");
    ND_FORWARD(kv_no_resume(&db->opts)); /* first, on RocksDB's defaults */
    rocksdb_writeoptions_set_sync(db->wopts_sync, 1);
    /* A walk reads each block once: it keeps the cache for point reads,
     * and reads ahead in large steps. */
    rocksdb_readoptions_set_fill_cache(db->point[0], 0);
    rocksdb_readoptions_set_fill_cache(db->prefix[0], 0);
    rocksdb_readoptions_set_fill_cache(db->scan, 0);
    rocksdb_readoptions_set_readahead_size(db->scan, SCAN_READAHEAD);

    rocksdb_options_set_create_if_missing(db->opts, 1);
    /* Writes are serialised by the engine's writer lock: concurrent
     * memtable inserts would gain nothing. */
    rocksdb_options_set_allow_concurrent_memtable_write(db->opts, 0);
    rocksdb_options_set_create_missing_column_families(db->opts, 1);
    rocksdb_options_set_keep_log_file_num(db->opts, 3);
    /* A WAL file lives until every family that wrote to it has flushed; a
     * family taking a small write now and then would keep every WAL
     * alive, making the next open replay gigabytes. Past this total
     * RocksDB flushes the families holding the oldest WAL. */
    rocksdb_options_set_max_total_wal_size(db->opts, 256u << 20);
    rocksdb_options_set_max_open_files(db->opts, 512);
    /* One: with more, opening starts threads whose failure (`ulimit -v`)
     * RocksDB cannot recover from (std::terminate, not an exception). */
    rocksdb_options_set_max_file_opening_threads(db->opts, 1);
    /* FATAL only: after a full disk, RocksDB 7.8 asserts when its info log
     * (on the same full disk) is appended to again; our errors reach the
     * caller through return codes, not that log. */
    rocksdb_options_set_info_log_level(db->opts, 4 /* FATAL */);
    /* Two compaction threads; one under a memory limit (each thread's
     * stack counts toward it). */
    if (!db->mem.limited) rocksdb_options_increase_parallelism(db->opts, 2);
    /* No statistics dumps: RocksDB's timer thread formats them, and an
     * allocation failing there (`ulimit -v`) aborts the process. */
    rocksdb_options_set_stats_dump_period_sec(db->opts, 0);
    rocksdb_options_set_stats_persist_period_sec(db->opts, 0);
    if (db->mem.limited) {
        mem_fit(db->opts, &db->mem);
        rocksdb_options_set_db_write_buffer_size(db->opts, (size_t)db->mem.memtables);
    }
    /* Damage is reported, not absorbed: the default log recovery stops at
     * the first damaged record and opens without the acknowledged writes
     * after it. This mode accepts only a torn last record (cut by a
     * crash, never acknowledged) and fails the open on other damage
     * (ND_ECORRUPT). Paranoid checks stop writes at damage found later. */
    rocksdb_options_set_wal_recovery_mode(db->opts, o->salvage ? 3 /* kSkipAnyCorruptedRecords */
                                                               : 0 /* kTolerateCorruptedTailRecords */);
    rocksdb_options_set_paranoid_checks(db->opts, !o->salvage);
    /* Files may be ingested below all others (kv_ingest_behind): the
     * last level is kept for them. */
    if (o->ingest_behind) rocksdb_options_set_allow_ingest_behind(db->opts, 1);

    ND_RETURN_IF(o->nprofiles > KV_PROFILES, ND_EINVAL, "storage: %u option profiles",
                 o->nprofiles);
    db->nprof = o->nprofiles;
    for (unsigned i = 0; i < o->nprofiles; i++)
        ND_FORWARD(make_profile(db, &db->prof[i], &o->profiles[i]));
    return ND_OK;
}

static void free_db(kv_db *db)
{
    if (db->default_cf) rocksdb_column_family_handle_destroy(db->default_cf);
    if (db->db) rocksdb_close(db->db);
    if (db->opts) rocksdb_options_destroy(db->opts);
    for (unsigned i = 0; i < KV_PROFILES; i++) {
        if (db->prof[i].opts) rocksdb_options_destroy(db->prof[i].opts);
        if (db->prof[i].bbt) rocksdb_block_based_options_destroy(db->prof[i].bbt);
    }
    if (db->cache) rocksdb_cache_destroy(db->cache);
    if (db->mem_held) kv_mem_reserve_drop(&db->mem);
    for (int fill = 0; fill < 2; fill++) {
        if (db->point[fill]) rocksdb_readoptions_destroy(db->point[fill]);
        if (db->prefix[fill]) rocksdb_readoptions_destroy(db->prefix[fill]);
    }
    if (db->scan) rocksdb_readoptions_destroy(db->scan);
    if (db->wopts) rocksdb_writeoptions_destroy(db->wopts);
    if (db->wopts_sync) rocksdb_writeoptions_destroy(db->wopts_sync);
    free(db->path);
    kvdir_scratch_remove(db->scratch);
    free(db->scratch);
    free(db);
}

/* ---- open / close ------------------------------------------------------ */

int kv_list_families(const char *path, char ***out, size_t *n)
{
    char *err = NULL;
    size_t len = 0;
    *out = NULL;
    *n = 0;
    rocksdb_options_t *o = rocksdb_options_create();
    ND_RETURN_IF(!o, ND_ENOMEM, "storage: out of memory");
    char **list = NULL;
    int rc = ND_OK;
    KV_CAPTURE(rc, list = rocksdb_list_column_families(o, path, &len, &err));
    rocksdb_options_destroy(o);
    if (rc < 0) return rc;
    if (err) {
        /* RocksDB 7.8 hands back a malloc(0) list even on failure. */
        if (list) rocksdb_list_column_families_destroy(list, len);
        return take_error(err, path);
    }
    *out = list;
    *n = len;
    return ND_OK;
}

void kv_names_free(char **names, size_t n)
{
    if (names) rocksdb_list_column_families_destroy(names, n);
}

/* After an open of path whose view is of MANIFEST state view (NULL: the
 * one CURRENT names now), which failed with rc (ND_OK: it did not): a
 * table file that MANIFEST lists missing, or of another size, is damage
 * RocksDB's read-only instances do not report, and which its writable
 * open names poorly ("000076.ldb"). ND_ECORRUPT naming the file, or rc.
 * Beside a writer the check holds only if the MANIFEST did not move
 * during it (before: the state the attempt began with): *moved is then
 * set instead, and the attempt is to be made again. */
static int files_check(const char *path, const char *view, const char *before, int rc,
                       int *moved)
{
    int crc = cmp_manifest_check(path, view);
    if (crc == ND_OK) return rc;
    if (crc == ND_ECORRUPT && before) {
        char now[KVDIR_STATE_MAX];
        if (!kvdir_settled(path, before, now, sizeof now)) {
            *moved = 1;
            return rc;
        }
    }
    return crc;
}

/* Does msg (a failed open's) name a MANIFEST file other than the one of
 * state view ("MANIFEST-000050 1234", kvdir_manifest_state)? */
static int manifest_left(const char *msg, const char *view)
{
    const char *m = strstr(msg, "MANIFEST-");
    if (!m || !view[0]) return 0;
    size_t n = strspn(m + 9, "0123456789") + 9;
    return strncmp(m, view, n) != 0 || view[n] != ' ';
}

/* A reader: a secondary of any writer, holding every file open (files the writer
 * deletes stay readable), opened afresh until its view is whole (cmp_kvdir.h)
 * and every table file of that view is there, whole (files_check). */
static int open_secondary(kv_db *db, const char *path, size_t m, const char **all,
                          const rocksdb_options_t **cfo, rocksdb_column_family_handle_t **handles)
{
    char before[sizeof db->view], *err = NULL;
    rocksdb_options_set_max_open_files(db->opts, -1);
    for (int i = 0; kvdir_next_try(path, i, before, sizeof before); i++) {
        KV_GUARD(db->db = rocksdb_open_as_secondary_column_families(
                     db->opts, path, db->scratch, (int)m, all, cfo, handles, &err));
        int rc = take_error(err, path);
        err = NULL;
        if (rc != ND_OK && rc != ND_EIO && rc != ND_ENOTFOUND && rc != ND_ECORRUPT)
            return rc; /* not a race */
        int settled = kvdir_settled(path, before, db->view, sizeof db->view), moved = 0;
        /* RocksDB read a MANIFEST that CURRENT no longer names: the
         * writer moved on during the attempt (crash_readers met it beside
         * a restarted writer with CURRENT the same before and after) */
        if (rc != ND_OK && settled && manifest_left(nd_errmsg(), db->view)) moved = 1;
        if (settled && !moved) rc = files_check(path, db->view, before, rc, &moved);
        /* A missing or unreadable file while the writer's MANIFEST stood
         * still is no race: damage (or a store gone), reported as it is. */
        if (rc != ND_OK && settled && !moved) {
            for (size_t j = 0; db->db && j < m; j++) rocksdb_column_family_handle_destroy(handles[j]);
            if (db->db) KV_GUARD(rocksdb_close(db->db));
            db->db = NULL;
            return rc;
        }
        if (rc == ND_OK && settled && !moved) {
            kvdir_scratch_remove(db->scratch); /* its info log stays open */
            return ND_OK;
        }
        for (size_t j = 0; db->db && j < m; j++) rocksdb_column_family_handle_destroy(handles[j]);
        if (db->db) KV_GUARD(rocksdb_close(db->db));
        db->db = NULL;
    }
    return kvdir_busy(path);
}

/* Close the database an attempt opened with handles[0..m). */
static void close_opened(kv_db *db, size_t m, rocksdb_column_family_handle_t **handles)
{
    for (size_t j = 0; db->db && j < m; j++) rocksdb_column_family_handle_destroy(handles[j]);
    if (db->db) rocksdb_close(db->db);
    db->db = NULL;
}

/* Did the open recover every write up to want, the last synced one
 * (cmp_synced.h; 0: nothing to check)? Else the loss, named. */
static int synced_check(kv_db *db, const char *path, uint64_t want)
{
    if (!want || !db->db) return ND_OK;
    uint64_t got = rocksdb_get_latest_sequence_number(db->db);
    return got >= want ? ND_OK : cmp_synced_loss(path, want, got);
}

/* Before a writer's open of a store whose last synced write is want:
 * RocksDB's writable open replays the log into table files and deletes
 * it, so what the log holds is judged first by a read-only open, which
 * writes nothing, and only while the MANIFEST stood still through it
 * (another writer's flush deletes logs). An open that fails here is left
 * to the writable one, which says why. */
static int synced_precheck(kv_db *db, const char *path, uint64_t want, size_t m,
                           const char **all, const rocksdb_options_t **cfo)
{
    char before[KVDIR_STATE_MAX], now[KVDIR_STATE_MAX], *err = NULL;
    rocksdb_column_family_handle_t **h =
        (rocksdb_column_family_handle_t **)calloc(m, sizeof *h);
    ND_RETURN_IF(!h, ND_ENOMEM, "storage: out of memory");
    rocksdb_t *ro = NULL;
    uint64_t got = UINT64_MAX;
    int rc = ND_OK;
    kvdir_manifest_state(path, before, sizeof before);
    KV_CAPTURE(rc, {
        ro = rocksdb_open_for_read_only_column_families(db->opts, path, (int)m, all, cfo, h, 0,
                                                        &err);
        if (ro) got = rocksdb_get_latest_sequence_number(ro);
        for (size_t j = 0; ro && j < m; j++) rocksdb_column_family_handle_destroy(h[j]);
        if (ro) rocksdb_close(ro);
    });
    free(err);
    free(h);
    if (rc < 0) nd_err_clear();
    if (rc < 0 || !ro || got >= want || !kvdir_settled(path, before, now, sizeof now)) return ND_OK;
    return cmp_synced_loss(path, want, got);
}

/* One attempt at opening families all[0..m) into handles. */
static int open_families(kv_db *db, const char *path, int readonly, int salvage,
                         uint64_t synced, size_t m, const char **all,
                         const rocksdb_options_t **cfo, rocksdb_column_family_handle_t **handles)
{
    char *err = NULL;
    if (readonly && !db->scratch) db->scratch = kvdir_scratch_make(db->scratch_parent);
    if (readonly && db->scratch) {
        int rc = open_secondary(db, path, m, all, cfo, handles);
        if (rc == ND_OK) rc = synced_check(db, path, synced);
        if (rc < 0) KV_GUARD(close_opened(db, m, handles));
        return rc;
    }
    if (!readonly && !salvage) {
        /* Before a writer's open: RocksDB opens without a deleted log and
         * then writes past it, and the writes it held are gone for good.
         * Another writer may hold the store (RocksDB then says busy): its
         * compactions delete files, so damage counts only if the MANIFEST
         * stood still through the check. */
        char before[KVDIR_STATE_MAX];
        int moved = 0;
        kvdir_manifest_state(path, before, sizeof before);
        int rc = before[0] ? files_check(path, before, before, ND_OK, &moved) : ND_OK;
        if (rc == ND_OK && synced) rc = synced_precheck(db, path, synced, m, all, cfo);
        if (rc < 0) return rc;
    }
    /* no scratch directory: RocksDB's read-only open, no writer beside */
    KV_GUARD(if (readonly) db->db = rocksdb_open_for_read_only_column_families(
                 db->opts, path, (int)m, all, cfo, handles, 0, &err);
             else db->db = rocksdb_open_column_families(db->opts, path, (int)m, all, cfo,
                                                        handles, &err));
    int rc = take_error(err, path), moved = 0;
    /* After RocksDB found damage (its paranoid open notices a missing or
     * cut file; the check then names it); never while salvaging (a
     * repair opens what it can). */
    if (!salvage && (readonly || rc == ND_ECORRUPT)) rc = files_check(path, NULL, NULL, rc, &moved);
    if (rc == ND_OK && !salvage) rc = synced_check(db, path, synced);
    if (rc != ND_OK && db->db) {
        for (size_t j = 0; j < m; j++) rocksdb_column_family_handle_destroy(handles[j]);
        KV_GUARD(rocksdb_close(db->db));
        db->db = NULL;
    }
    return rc;
}

int kv_open(kv_db **out, const char *path, const kv_open_opts *o, size_t n,
            const char *const *names, const unsigned *profiles, kv_cf **cfs)
{
    int rc;
    kv_db *db = (kv_db *)calloc(1, sizeof *db);
    ND_RETURN_IF(!db, ND_ENOMEM, "storage: out of memory");
    for (size_t i = 0; i < n; i++) cfs[i] = NULL;
    /* The families to open: RocksDB's "default" first unless named. */
    size_t off = 1;
    for (size_t i = 0; i < n; i++) off &= strcmp(names[i], "default") != 0;
    const char **all = (const char **)calloc(n + 1, sizeof *all);
    const rocksdb_options_t **cfo = (const rocksdb_options_t **)calloc(n + 1, sizeof *cfo);
    rocksdb_column_family_handle_t **handles =
        (rocksdb_column_family_handle_t **)calloc(n + 1, sizeof *handles);
    db->path = strdup(path);
    if (!db->path || !all || !cfo || !handles) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    KV_CAPTURE(rc, rc = make_options(db, o));
    if (rc < 0) goto cleanup;
    all[0] = "default";
    cfo[0] = db->opts;
    for (size_t i = 0; i < n; i++) {
        all[off + i] = names[i];
        cfo[off + i] = strcmp(names[i], "default") == 0 ? db->opts : profile_opts(db, profiles[i]);
    }
    if (o->create) ND_TRY(kvdir_make(path)); /* here, not by RocksDB: a bad parent is named */
    db->scratch_parent = o->scratch_dir;
    rc = open_families(db, path, o->readonly, o->salvage, o->synced_seq, n + off, all, cfo, handles);
    if (rc == ND_EINVAL && strstr(nd_errmsg(), "ompression")) {
        /* This RocksDB build lacks LZ4: open without compression. */
        for (unsigned i = 0; i < db->nprof; i++)
            if (db->prof[i].compress)
                rocksdb_options_set_compression(db->prof[i].opts, rocksdb_no_compression);
        rc = open_families(db, path, o->readonly, o->salvage, o->synced_seq, n + off, all, cfo, handles);
    }
    if (rc < 0) goto cleanup;
    /* An allocation that failed during the open took the reserve (and
     * was retried in its room): the open is whole, but the limit is
     * reached unless the reserve can be mapped again. */
    rc = kv_mem_check();
    if (rc < 0) {
        for (size_t i = 0; i < n + off; i++) rocksdb_column_family_handle_destroy(handles[i]);
        goto cleanup;
    }
    for (size_t i = 0; i < n + off; i++) {
        if (strcmp(all[i], "default") == 0) db->default_cf = handles[i];
        else cfs[i - off] = (kv_cf *)handles[i];
    }
    *out = db;
    db = NULL;
cleanup:
    if (db) free_db(db);
    free(all);
    free(cfo);
    free(handles);
    return rc;
}

uint64_t kv_latest_seq(kv_db *db)
{
    uint64_t seq = 0;
    try {
        seq = rocksdb_get_latest_sequence_number(db->db);
    } catch (...) {
        (void)kv_exception();
    }
    return seq;
}

void kv_close(kv_db *db)
{
    if (db) free_db(db);
}

int kv_family_create(kv_db *db, const char *name, unsigned profile, kv_cf **out)
{
    char *err = NULL;
    rocksdb_column_family_handle_t *h = NULL;
    KV_GUARD(h = rocksdb_create_column_family(db->db, profile_opts(db, profile), name, &err));
    if (err) {
        /* RocksDB's C API hands back an empty handle even on failure. */
        if (h) rocksdb_column_family_handle_destroy(h);
        char what[64];
        snprintf(what, sizeof what, "creating family %s", name);
        return take_error(err, what);
    }
    *out = (kv_cf *)h;
    return ND_OK;
}

int kv_family_drop(kv_db *db, kv_cf *cf)
{
    char *err = NULL;
    KV_GUARD(rocksdb_drop_column_family(db->db, H(cf), &err));
    return write_error(db, err, "dropping a family");
}

void kv_family_free(kv_cf *cf)
{
    if (cf) rocksdb_column_family_handle_destroy(H(cf));
}

/* ---- point reads --------------------------------------------------------- */

/* A copy of RocksDB's value, NUL-terminated, that free() releases. */
static int copy_value(char *val, size_t len, char **out_val, size_t *out_len)
{
    char *copy = (char *)malloc(len + 1);
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

int kv_get(kv_db *db, kv_cf *cf, int fill, const void *key, size_t klen, char **out_val,
           size_t *out_len)
{
    char *err = NULL;
    size_t len = 0;
    char *val = NULL;
    KV_GUARD(val = rocksdb_get_cf(db->db, db->point[fill != 0], H(cf), K(key), klen, &len, &err));
    if (err) return read_error(db, err, "read");
    if (!val) return ND_ENOTFOUND;
    return copy_value(val, len, out_val, out_len);
}

int kv_exists_many(kv_db *db, kv_cf *cf, int fill, const char *const *keys, const size_t *lens,
                   size_t n, unsigned char *found)
{
    /* RocksDB's batched MultiGet sorts each chunk and probes each file's
     * filter and index once per chunk, instead of once per key. */
    enum { CHUNK = 256 };
    rocksdb_pinnableslice_t *vals[CHUNK];
    char *errs[CHUNK];
    int rc = ND_OK;
    for (size_t at = 0; at < n && rc == ND_OK; at += CHUNK) {
        size_t m = n - at < (size_t)CHUNK ? n - at : (size_t)CHUNK;
        KV_GUARD(rocksdb_batched_multi_get_cf(db->db, db->point[fill != 0], H(cf), m, keys + at,
                                              lens + at, vals, errs, 0));
        for (size_t i = 0; i < m; i++) {
            found[at + i] = vals[i] != NULL;
            if (vals[i]) rocksdb_pinnableslice_destroy(vals[i]);
            if (!errs[i]) continue;
            if (rc == ND_OK) rc = read_error(db, errs[i], "read");
            else rocksdb_free(errs[i]);
        }
    }
    return rc;
}

/* ---- write batches ------------------------------------------------------- */

int kv_batch_new(kv_batch **out, int indexed)
{
    kv_batch *b = (kv_batch *)calloc(1, sizeof *b);
    ND_RETURN_IF(!b, ND_ENOMEM, "storage: out of memory");
    int rc = ND_OK;
    KV_CAPTURE(rc, if (indexed) b->wb = rocksdb_writebatch_wi_create(0, 1);
               else b->plain = rocksdb_writebatch_create());
    if (rc < 0 || (!b->plain && !b->wb)) {
        free(b);
        return rc < 0 ? rc : nd_err_set(ND_ENOMEM, "storage: out of memory");
    }
    *out = b;
    return ND_OK;
}

void kv_batch_free(kv_batch *b)
{
    if (!b) return;
    if (b->wb) rocksdb_writebatch_wi_destroy(b->wb);
    if (b->plain) rocksdb_writebatch_destroy(b->plain);
    free(b);
}

void kv_batch_clear(kv_batch *b)
{
    b->failed = 0;
    if (b->wb) rocksdb_writebatch_wi_clear(b->wb);
    else rocksdb_writebatch_clear(b->plain);
}

int kv_batch_indexed(const kv_batch *b) { return b->wb != NULL; }

size_t kv_batch_count(const kv_batch *b)
{
    return (size_t)(b->wb ? rocksdb_writebatch_wi_count(b->wb) : rocksdb_writebatch_count(b->plain));
}

void kv_batch_put(kv_batch *b, kv_cf *cf, const void *key, size_t klen, const void *val,
                  size_t vlen)
{
    KV_CAPTURE(b->failed, if (b->wb) rocksdb_writebatch_wi_put_cf(b->wb, H(cf), K(key), klen,
                                                                   K(val), vlen);
               else rocksdb_writebatch_put_cf(b->plain, H(cf), K(key), klen, K(val), vlen));
}

void kv_batch_delete(kv_batch *b, kv_cf *cf, const void *key, size_t klen)
{
    KV_CAPTURE(b->failed, if (b->wb) rocksdb_writebatch_wi_delete_cf(b->wb, H(cf), K(key), klen);
               else rocksdb_writebatch_delete_cf(b->plain, H(cf), K(key), klen));
}

int kv_batch_delete_range(kv_batch *b, kv_cf *cf, const void *lo, size_t lolen,
                          const void *hi, size_t hilen)
{
    ND_RETURN_IF(b->wb, ND_EINVAL, "storage: a range deletion needs a plain batch");
    KV_GUARD(rocksdb_writebatch_delete_range_cf(b->plain, H(cf), K(lo), lolen, K(hi), hilen));
    return ND_OK;
}

int kv_batch_get(kv_db *db, kv_batch *b, kv_cf *cf, int fill, const void *key, size_t klen,
                 char **out_val, size_t *out_len)
{
    char *err = NULL;
    size_t len = 0;
    if (!b->wb) return kv_get(db, cf, fill, key, klen, out_val, out_len); /* no own reads */
    char *val = NULL;
    KV_GUARD(val = rocksdb_writebatch_wi_get_from_batch_and_db_cf(
                 b->wb, db->db, db->point[fill != 0], H(cf), K(key), klen, &len, &err));
    if (err) return read_error(db, err, "read");
    if (!val) return ND_ENOTFOUND;
    return copy_value(val, len, out_val, out_len);
}

int kv_write(kv_db *db, kv_batch *b, int sync)
{
    char *err = NULL;
    rocksdb_writeoptions_t *wo = sync ? db->wopts_sync : db->wopts;
    /* A batch that could not take one of its changes is never written,
     * nor is a database a read found damaged. */
    ND_RETURN_IF(__atomic_load_n(&db->corrupt, __ATOMIC_RELAXED), ND_ECORRUPT,
                 "write: refused, a read found the database damaged (neardup repair)");
    if (b->failed)
        return nd_err_set(b->failed, "write: the batch lost a change (out of memory)");
    ND_FORWARD(kv_mem_check()); /* the background work spent the reserve */
    KV_GUARD(if (b->wb) rocksdb_write_writebatch_wi(db->db, wo, b->wb, &err);
             else rocksdb_write(db->db, wo, b->plain, &err));
    return write_error(db, err, "write");
}

/* Without manual_wal_flush every write is in the log file already (in the
 * page cache): FlushWAL(true) is then SyncWAL, an fsync of every live
 * log, the one a synced write makes. */
int kv_sync_wal(kv_db *db)
{
    char *err = NULL;
    ND_RETURN_IF(__atomic_load_n(&db->corrupt, __ATOMIC_RELAXED), ND_ECORRUPT,
                 "sync: refused, a read found the database damaged (neardup repair)");
    KV_GUARD(rocksdb_flush_wal(db->db, 1, &err));
    return write_error(db, err, "syncing the write-ahead log");
}

/* ---- snapshots and iterators ---------------------------------------------- */

int kv_snap_new(kv_snap **out, kv_db *db, int fill)
{
    kv_snap *sn = (kv_snap *)calloc(1, sizeof *sn);
    ND_RETURN_IF(!sn, ND_ENOMEM, "storage: out of memory");
    sn->db = db->db;
    int rc = ND_OK;
    /* A secondary has no snapshots and needs none: its view is fixed at open. */
    KV_CAPTURE(rc, sn->ropts = ropts_total_order();
               if (!db->scratch) sn->snap = rocksdb_create_snapshot(db->db));
    if (rc < 0 || !sn->ropts || (!sn->snap && !db->scratch)) {
        kv_snap_free(sn);
        return rc < 0 ? rc : nd_err_set(ND_ENOMEM, "storage: cannot take a snapshot");
    }
    if (sn->snap) rocksdb_readoptions_set_snapshot(sn->ropts, sn->snap);
    rocksdb_readoptions_set_fill_cache(sn->ropts, (unsigned char)(fill != 0));
    *out = sn;
    return ND_OK;
}

void kv_snap_free(kv_snap *sn)
{
    if (!sn) return;
    if (sn->snap) rocksdb_release_snapshot(sn->db, sn->snap);
    if (sn->ropts) rocksdb_readoptions_destroy(sn->ropts);
    free(sn);
}

/* Make it's RocksDB iterator over cf with read options ro, over an
 * indexed batch b's writes too. Takes it (and its own read options):
 * freed on failure. */
static int iter_open(kv_iter **out, kv_iter *it, kv_db *db, kv_cf *cf,
                     const rocksdb_readoptions_t *ro, kv_batch *b)
{
    int rc = ND_OK;
    rocksdb_iterator_t *base = NULL;
    it->db = db;
    KV_CAPTURE(rc, base = rocksdb_create_iterator_cf(db->db, ro, H(cf));
               it->it = b && b->wb ? rocksdb_writebatch_wi_create_iterator_with_base_cf(
                                         b->wb, base, H(cf))
                                   : base);
    if (rc < 0 || !it->it) {
        if (it->ropts) rocksdb_readoptions_destroy(it->ropts);
        free(it);
        return rc < 0 ? rc : nd_err_set(ND_ENOMEM, "storage: cannot create iterator");
    }
    *out = it;
    return ND_OK;
}

/* A new iterator, with read options of its own when own (for the caller
 * to set before iter_open). */
static int iter_alloc(kv_iter **out, int own)
{
    /* A walk reads many blocks: not begun once the reserve is spent (a
     * reader's too: RocksDB's read path does not survive a failed
     * allocation better than its writes). */
    ND_FORWARD(kv_mem_check());
    kv_iter *it = (kv_iter *)calloc(1, sizeof *it);
    ND_RETURN_IF(!it, ND_ENOMEM, "storage: out of memory");
    if (own && !(it->ropts = ropts_total_order())) {
        free(it);
        return nd_err_set(ND_ENOMEM, "storage: out of memory");
    }
    *out = it;
    return ND_OK;
}

int kv_iter_new(kv_iter **out, kv_db *db, kv_cf *cf, int fill, kv_batch *b)
{
    kv_iter *it = NULL;
    ND_FORWARD(iter_alloc(&it, 0));
    return iter_open(out, it, db, cf, db->point[fill != 0], b);
}

int kv_iter_new_prefix(kv_iter **out, kv_db *db, kv_cf *cf, int fill)
{
    kv_iter *it = NULL;
    ND_FORWARD(iter_alloc(&it, 0));
    return iter_open(out, it, db, cf, db->prefix[fill != 0], NULL);
}

int kv_iter_new_scan(kv_iter **out, kv_db *db, kv_cf *cf, const kv_snap *snap)
{
    kv_iter *it = NULL;
    ND_FORWARD(iter_alloc(&it, snap != NULL));
    if (!snap) return iter_open(out, it, db, cf, db->scan, NULL);
    rocksdb_readoptions_set_snapshot(it->ropts, snap->snap);
    rocksdb_readoptions_set_fill_cache(it->ropts, 0);
    rocksdb_readoptions_set_readahead_size(it->ropts, SCAN_READAHEAD);
    return iter_open(out, it, db, cf, it->ropts, NULL);
}

int kv_iter_new_at(kv_iter **out, kv_db *db, kv_cf *cf, const kv_snap *snap)
{
    kv_iter *it = NULL;
    ND_FORWARD(iter_alloc(&it, 0));
    return iter_open(out, it, db, cf, snap->ropts, NULL);
}

int kv_iter_new_bounded(kv_iter **out, kv_db *db, kv_cf *cf, int fill, const void *lo,
                        const void *hi, size_t blen, const kv_snap *snap)
{
    ND_RETURN_IF(blen > sizeof((kv_iter *)0)->bounds[0], ND_EINVAL,
                 "storage: bound of %zu bytes", blen);
    kv_iter *it = NULL;
    ND_FORWARD(iter_alloc(&it, 1));
    /* RocksDB keeps pointers to the bound bytes: they live in the iterator. */
    memcpy(it->bounds[0], lo, blen);
    memcpy(it->bounds[1], hi, blen);
    rocksdb_readoptions_set_iterate_lower_bound(it->ropts, it->bounds[0], blen);
    rocksdb_readoptions_set_iterate_upper_bound(it->ropts, it->bounds[1], blen);
    if (snap) rocksdb_readoptions_set_snapshot(it->ropts, snap->snap);
    rocksdb_readoptions_set_fill_cache(it->ropts, (unsigned char)(fill != 0));
    return iter_open(out, it, db, cf, it->ropts, NULL);
}

void kv_iter_free(kv_iter *it)
{
    if (!it) return;
    rocksdb_iter_destroy(it->it);
    if (it->ropts) rocksdb_readoptions_destroy(it->ropts);
    free(it);
}

/* An exception in a move leaves the iterator invalid, its status the error. */
void kv_iter_seek(kv_iter *it, const void *key, size_t klen)
{
    KV_GUARD_MOVE(it, rocksdb_iter_seek(it->it, K(key), klen));
}
void kv_iter_seek_first(kv_iter *it) { KV_GUARD_MOVE(it, rocksdb_iter_seek_to_first(it->it)); }
void kv_iter_next(kv_iter *it) { KV_GUARD_MOVE(it, rocksdb_iter_next(it->it)); }
int kv_iter_valid(const kv_iter *it) { return !it->failed && rocksdb_iter_valid(it->it); }
const char *kv_iter_key(const kv_iter *it, size_t *klen) { return rocksdb_iter_key(it->it, klen); }
const char *kv_iter_value(const kv_iter *it, size_t *vlen)
{
    return rocksdb_iter_value(it->it, vlen);
}

int kv_iter_status(const kv_iter *it)
{
    char *err = NULL;
    if (it->failed)
        return nd_err_set(it->failed, "iterate: %s",
                          it->failed == ND_ENOMEM ? "out of memory" : "RocksDB failed");
    KV_GUARD(rocksdb_iter_get_error(it->it, &err));
    return read_error(it->db, err, "iterate");
}

const char *kv_view(const kv_db *db) { return db->scratch ? db->view : NULL; }
