/*
 * cmp_kv_files.cc — the key-value adapter's second file: sorted files
 * written aside and ingested whole, the database's live files and state,
 * flush and compaction, checkpoints and RocksDB's repair (cmp_kv_files.h
 * says what it offers; cmp_kv.cc holds the rest of the adapter, and
 * cmp_kv_impl.h what the two share). C++ only to catch RocksDB's
 * exceptions (KV_GUARD, cmp_kv_error.h).
 */
#include "cmp_kv_impl.h"

extern "C" {
#include "cmp_kv_files.h"
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- sorted files ---------------------------------------------------------- */

int kv_sst_new(kv_sst **out, kv_db *db, unsigned profile, const char *path, const char *what)
{
    char *err = NULL;
    kv_sst *w = (kv_sst *)calloc(1, sizeof *w);
    ND_RETURN_IF(!w, ND_ENOMEM, "storage: out of memory");
    int rc = ND_OK;
    KV_CAPTURE(rc, w->env = rocksdb_envoptions_create(); w->what = strdup(what ? what : path);
               w->w = w->env ? rocksdb_sstfilewriter_create(w->env, profile_opts(db, profile))
                             : NULL;
               if (!w->w || !w->what) rc = nd_err_set(ND_ENOMEM, "storage: out of memory");
               else rocksdb_sstfilewriter_open(w->w, path, &err));
    if (rc == ND_OK) rc = take_error(err, w->what);
    if (rc < 0) {
        kv_sst_free(w);
        return rc;
    }
    *out = w;
    return ND_OK;
}

int kv_sst_put(kv_sst *w, const void *key, size_t klen, const void *val, size_t vlen)
{
    char *err = NULL;
    KV_GUARD(rocksdb_sstfilewriter_put(w->w, K(key), klen, K(val), vlen, &err));
    return take_error(err, w->what);
}

int kv_sst_delete(kv_sst *w, const void *key, size_t klen)
{
    char *err = NULL;
    KV_GUARD(rocksdb_sstfilewriter_delete(w->w, K(key), klen, &err));
    return take_error(err, w->what);
}

int kv_sst_delete_range(kv_sst *w, const void *lo, size_t lolen, const void *hi, size_t hilen)
{
    char *err = NULL;
    KV_GUARD(rocksdb_sstfilewriter_delete_range(w->w, K(lo), lolen, K(hi), hilen, &err));
    return take_error(err, w->what);
}

int kv_sst_finish(kv_sst *w)
{
    char *err = NULL;
    KV_GUARD(rocksdb_sstfilewriter_finish(w->w, &err));
    return take_error(err, w->what);
}

void kv_sst_free(kv_sst *w)
{
    if (!w) return;
    if (w->w) rocksdb_sstfilewriter_destroy(w->w);
    if (w->env) rocksdb_envoptions_destroy(w->env);
    free(w->what);
    free(w);
}

/* Attempts of an ingest RocksDB asks to retry (about 0.7 s in all). */
#define KV_INGEST_TRIES 16

static int guard_begin(kv_db *db, uint64_t *errors);
static int guard_end(kv_db *db, uint64_t errors, int rc, const char *what);

enum { INGEST_MOVE, INGEST_BEHIND, INGEST_COPY };

static int ingest(kv_db *db, kv_cf *cf, const char *const *files, size_t n, int how,
                  const char *what)
{
    ND_FORWARD(kv_mem_check());
    char *err = NULL;
    rocksdb_ingestexternalfileoptions_t *io = rocksdb_ingestexternalfileoptions_create();
    ND_RETURN_IF(!io, ND_ENOMEM, "storage: out of memory");
    /* The files are linked into the database, not copied (but to keep them). */
    rocksdb_ingestexternalfileoptions_set_move_files(io, how != INGEST_COPY);
    if (how == INGEST_BEHIND) rocksdb_ingestexternalfileoptions_set_ingest_behind(io, 1);
    uint64_t errors;
    char **saved = (char **)calloc(n ? n : 1, sizeof *saved);
    int rc = saved ? guard_begin(db, &errors) : nd_err_set(ND_ENOMEM, "storage: out of memory");
    if (rc < 0) {
        free(saved);
        rocksdb_ingestexternalfileoptions_destroy(io);
        return rc;
    }
    /* A second link to each file: cmp_manifest_restore's copy, should a
     * failed ingestion delete one its MANIFEST record names. */
    for (size_t i = 0; i < n; i++)
        if ((saved[i] = (char *)malloc(strlen(files[i]) + 8)) != NULL) {
            sprintf(saved[i], "%s.ingest", files[i]);
            (void)unlink(saved[i]);
            if (link(files[i], saved[i]) != 0) {
                free(saved[i]);
                saved[i] = NULL;
            }
        }
    /* RocksDB (built with assertions, as Debian's is) refuses an ingest
     * with TryAgain when a write reached the family's memtable between
     * the flush the ingest made and the ingest itself (a fold's run
     * beside a mirror flush): transient, so the ingest flushes and tries
     * again; the files are still the caller's after such a refusal. */
    for (int attempt = 0;; attempt++) {
        KV_CAPTURE(rc, rocksdb_ingest_external_file_cf(db->db, H(cf), files, n, io, &err));
        if (rc != ND_OK || !err || !strstr(err, "Try again") || attempt == KV_INGEST_TRIES - 1)
            break;
        rocksdb_free(err);
        err = NULL;
        usleep(1000u << (attempt < 6 ? attempt : 6)); /* 1 ms, 2 ms, ... 64 ms */
    }
    rocksdb_ingestexternalfileoptions_destroy(io);
    if (rc == ND_OK) rc = write_error(db, err, what);
    rc = guard_end(db, errors, rc, what);
    if (rc < 0 && !db->scratch) {
        char msg[1024]; /* the restore's reading must not replace the message */
        snprintf(msg, sizeof msg, "%s", nd_errmsg());
        (void)cmp_manifest_restore(db->path, saved, n);
        nd_err_set(rc, "%s", msg);
    }
    for (size_t i = 0; i < n; i++) {
        if (saved[i]) (void)unlink(saved[i]);
        free(saved[i]);
    }
    free(saved);
    return rc;
}

int kv_ingest(kv_db *db, kv_cf *cf, const char *const *files, size_t n, const char *what)
{
    return ingest(db, cf, files, n, INGEST_MOVE, what);
}

int kv_ingest_behind(kv_db *db, kv_cf *cf, const char *const *files, size_t n, const char *what)
{
    return ingest(db, cf, files, n, INGEST_BEHIND, what);
}

int kv_ingest_copy(kv_db *db, kv_cf *cf, const char *const *files, size_t n, const char *what)
{
    return ingest(db, cf, files, n, INGEST_COPY, what);
}

/* ---- the database's files and state ----------------------------------------- */

int kv_live_files(kv_db *db, const char *family, kv_file_fn fn, void *payload)
{
    const rocksdb_livefiles_t *lf = NULL;
    KV_GUARD(lf = rocksdb_livefiles(db->db));
    ND_RETURN_IF(!lf, ND_ENOMEM, "storage: cannot list the live files");
    char *path = NULL;
    int rc = ND_OK;
    for (int i = 0; rc == ND_OK && i < rocksdb_livefiles_count(lf); i++) {
        const char *fam = rocksdb_livefiles_column_family_name(lf, i);
        if (!fam || strcmp(fam, family) != 0) continue;
        /* RocksDB names a file by its path within the database
         * ("/000012.sst"). */
        const char *name = rocksdb_livefiles_name(lf, i);
        char *p = (char *)realloc(path, strlen(db->path) + strlen(name) + 2);
        if (!p) {
            rc = nd_err_set(ND_ENOMEM, "storage: out of memory listing the live files");
            break;
        }
        path = p;
        sprintf(path, "%s%s%s", db->path, name[0] == '/' ? "" : "/", name);
        kv_file f = {path, NULL, 0, rocksdb_livefiles_deletions(lf, i)};
        f.largest = rocksdb_livefiles_largestkey(lf, i, &f.largest_len);
        rc = fn(payload, &f);
    }
    free(path);
    rocksdb_livefiles_destroy(lf);
    return rc;
}

int kv_memtables_empty(kv_db *db, kv_cf *cf)
{
    uint64_t a = 1, b = 1;
    /* Integer properties allocate nothing: these calls do not throw. */
    return rocksdb_property_int_cf(db->db, H(cf), "rocksdb.num-entries-active-mem-table", &a) ==
               0 &&
           rocksdb_property_int_cf(db->db, H(cf), "rocksdb.num-entries-imm-mem-tables", &b) == 0 &&
           a == 0 && b == 0;
}

uint64_t kv_live_bytes(kv_db *db, kv_cf *cf)
{
    uint64_t v = 0;
    return rocksdb_property_int_cf(db->db, H(cf), "rocksdb.live-sst-files-size", &v) == 0 ? v : 0;
}

uint64_t kv_cache_bytes(kv_db *db) { return (uint64_t)rocksdb_cache_get_capacity(db->cache); }

/* RocksDB's count of its background jobs (flushes, compactions) that
 * failed since the handle opened; 0 if it cannot say. */
static uint64_t bg_errors(kv_db *db)
{
    uint64_t n = 0;
    try {
        if (rocksdb_property_int(db->db, "rocksdb.background-errors", &n) != 0) n = 0;
    } catch (...) {
        n = 0;
    }
    return n;
}

/* The error of a background job of db's that failed, for what (a step):
 * RocksDB, stopped by it, hands it to the next write, so an empty batch
 * reads it; a job that failed without stopping it is reported as an I/O
 * error. Either way file deletions stop (write_error). */
static int bg_error(kv_db *db, const char *what)
{
    char *err = NULL;
    rocksdb_writebatch_t *wb = NULL;
    try {
        if ((wb = rocksdb_writebatch_create()) != NULL) rocksdb_write(db->db, db->wopts, wb, &err);
    } catch (...) { /* reported below as a failed job */
    }
    if (wb) rocksdb_writebatch_destroy(wb);
    if (!err) err = strdup("IO error: a background flush or compaction failed (the database's LOG says why)");
    if (!err) return nd_err_set(ND_ENOMEM, "storage: out of memory");
    return write_error(db, err, what);
}

/* Has a background error stopped db? RocksDB then refuses every write,
 * and resumes by itself from none (cmp_kv_resume.h): a flush it was to
 * make never comes. An empty batch written without the log, which puts
 * nothing on the disk, reads it. */
static int stopped(kv_db *db)
{
    char *err = NULL;
    rocksdb_writeoptions_t *wo = NULL;
    rocksdb_writebatch_t *wb = NULL;
    try {
        wo = rocksdb_writeoptions_create();
        wb = rocksdb_writebatch_create();
        if (wo && wb) {
            rocksdb_writeoptions_disable_WAL(wo, 1);
            rocksdb_write(db->db, wo, wb, &err);
        }
    } catch (...) { /* not known to be stopped */
    }
    if (wb) rocksdb_writebatch_destroy(wb);
    if (wo) rocksdb_writeoptions_destroy(wo);
    if (!err) return 0;
    rocksdb_free(err);
    return 1;
}

/* Around a flush, compaction or ingestion: RocksDB 7.8 deletes the files
 * of a job that failed on writing its MANIFEST although the record may
 * have reached the file (the next open then finds a table file missing,
 * "table file 000101.sst, listed in MANIFEST-000095, is missing"), so
 * deletions stop for the job and resume only if it and every background
 * job meanwhile succeeded (write_error keeps them stopped otherwise, until
 * the next open, which deletes what is obsolete). */
static int guard_begin(kv_db *db, uint64_t *errors)
{
    char *err = NULL;
    *errors = bg_errors(db);
    if (db->scratch || __atomic_load_n(&db->frozen, __ATOMIC_RELAXED)) return ND_OK;
    KV_GUARD(rocksdb_disable_file_deletions(db->db, &err));
    return take_error(err, "stopping file deletions");
}

static int guard_end(kv_db *db, uint64_t errors, int rc, const char *what)
{
    if (rc == ND_OK && bg_errors(db) != errors) rc = bg_error(db, what);
    if (rc < 0) {
        /* stay stopped: mark the handle so (write_error did, or does now) */
        __atomic_store_n(&db->frozen, 1, __ATOMIC_RELAXED);
        return rc;
    }
    if (db->scratch || __atomic_load_n(&db->frozen, __ATOMIC_RELAXED)) return rc;
    char *err = NULL;
    KV_GUARD(rocksdb_enable_file_deletions(db->db, 0, &err));
    if (err) rocksdb_free(err); /* deletions stay stopped: files stay, nothing is lost */
    return rc;
}

int kv_flush(kv_db *db, kv_cf *cf)
{
    ND_FORWARD(kv_mem_check());
    char *err = NULL;
    uint64_t errors;
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    ND_RETURN_IF(!fo, ND_ENOMEM, "storage: out of memory");
    int rc = guard_begin(db, &errors);
    if (rc < 0) {
        rocksdb_flushoptions_destroy(fo);
        return rc;
    }
    /* Not RocksDB's wait: after a failed background job that did not
     * stop the database (an ENOSPC of a flush), RocksDB 7.8 waits for the
     * flush for ever (fault_sweep: repair, call 102). The flush switches
     * the memtable at once; it is done when no immutable one is left. */
    rocksdb_flushoptions_set_wait(fo, 0);
    KV_CAPTURE(rc, rocksdb_flush_cf(db->db, fo, H(cf), &err));
    rocksdb_flushoptions_destroy(fo);
    if (rc == ND_OK) rc = write_error(db, err, "flush");
    for (unsigned us = 50; rc == ND_OK; us = us < 20000 ? 2 * us : us) {
        uint64_t left = 0;
        if (rocksdb_property_int_cf(db->db, H(cf), "rocksdb.num-immutable-mem-table", &left) != 0)
            left = 0;
        if (left == 0) break;
        if (bg_errors(db) != errors) break; /* reported by guard_end */
        /* after a failure before this flush (fault_sweep: import, call 58) */
        if ((errors || __atomic_load_n(&db->frozen, __ATOMIC_RELAXED)) && stopped(db)) {
            rc = bg_error(db, "flush");
            break;
        }
        usleep(us);
    }
    return guard_end(db, errors, rc, "flush");
}

int kv_compact(kv_db *db, kv_cf *cf, int exclusive)
{
    ND_FORWARD(kv_mem_check());
    uint64_t errors;
    rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
    ND_RETURN_IF(!co, ND_ENOMEM, "storage: out of memory");
    int rc = guard_begin(db, &errors);
    rocksdb_compactoptions_set_bottommost_level_compaction(co, 2 /* kForce */);
    rocksdb_compactoptions_set_exclusive_manual_compaction(co, (unsigned char)(exclusive != 0));
    /* RocksDB's C API reports no error of a compaction: the count of
     * failed background jobs does (guard_end). */
    if (rc == ND_OK)
        KV_CAPTURE(rc, rocksdb_compact_range_cf_opt(db->db, H(cf), co, NULL, 0, NULL, 0));
    rocksdb_compactoptions_destroy(co);
    return guard_end(db, errors, rc, "compaction");
}

int kv_background_check(kv_db *db, const char *what)
{
    if (!db || !db->db || bg_errors(db) == 0) return ND_OK;
    return bg_error(db, what);
}

void kv_compactions_stop(kv_db *db, int stop)
{
    if (stop) rocksdb_disable_manual_compaction(db->db);
    else rocksdb_enable_manual_compaction(db->db);
}

int kv_checkpoint(kv_db *db, const char *dir)
{
    char *err = NULL;
    rocksdb_checkpoint_t *cp = NULL;
    KV_GUARD(cp = rocksdb_checkpoint_object_create(db->db, &err));
    if (err) return take_error(err, "checkpoint");
    int rc = ND_OK;
    KV_CAPTURE(rc, rocksdb_checkpoint_create(cp, dir, db->scratch ? UINT64_MAX : 0, &err)); /* no flush: logs */
    rocksdb_checkpoint_object_destroy(cp);
    return rc < 0 ? rc : take_error(err, dir);
}

int kv_repair(const char *path)
{
    char *err = NULL;
    rocksdb_options_t *o = rocksdb_options_create();
    ND_RETURN_IF(!o, ND_ENOMEM, "storage: out of memory");
    rocksdb_options_set_info_log_level(o, 4 /* FATAL */);
    rocksdb_options_set_max_file_opening_threads(o, 1);
    rocksdb_options_set_stats_dump_period_sec(o, 0);
    rocksdb_options_set_stats_persist_period_sec(o, 0);
    int rc = ND_OK;
    KV_CAPTURE(rc, rocksdb_repair_db(o, path, &err));
    rocksdb_options_destroy(o);
    return rc < 0 ? rc : take_error(err, path);
}
