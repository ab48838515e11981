/*
 * db_open.c — opening, creating and closing a database; its meta records.
 *
 * Meta family records (all written in one batch at creation):
 *   "format"   decimal ND_FORMAT_VERSION
 *   "plan"     nd_plan_encode text
 *   "fp"       nd_fp_config_string of the fingerprint options; it begins
 *              with the fingerprint function's version ("fp2;"), which
 *              the handle computes for every text (versions 1 and 2)
 *   "fpopts"   "features=F n=N flags=X title=W" (to rebuild nd_fp_options;
 *              X without the version bits ND_FP_FUNCTION_MASK, so that a
 *              build of version 1 reads a version-1 store made by a later
 *              build)
 *   "stopwords" the stop words, each followed by a NUL (absent: none)
 *   "run_size" decimal entries per run
 *   "counters" BE64 documents, BE64 distinct fingerprints
 *   "resemblance" a resemblance store's sketch version and threshold R,
 *              "sketch1;r=0.85" (R printed to round-trip); absent in a
 *              fingerprint-only store. The store then has the sketch and
 *              band families (created with it, never added later).
 * Opening checks the format version first (ND_EVERSION), then the caller's
 * expectations (ND_EMISMATCH), so a database is never misread.
 *
 * Format versions: 1 = every run is in run codec version 1; 2 = runs may be
 * in run codec version 2 (cmp_codec.c), which a format-1 build would
 * refuse as corrupt; 3 = rev entries written since carry the document's
 * score and time (DB_REV_VALUE_LEN), so a query needs no docs look-up, and
 * a format-2 build, which writes docs without rev, must not write to it.
 * Entries written before format 3 keep an empty value (read through docs).
 * 4 = a new fingerprint's table entries may wait as a meta record
 * "fresh." || BE64(fp) (db_mirrored.c), which an older build would not
 * see. 5 = a store may verify by resemblance: families "sketch" and
 * "band" and the "resemblance" record, which an older build would not keep
 * in step with the documents (a format-4 build must refuse it). This
 * build reads all five and writes format 5, so an older database opened
 * for writing has its "format" record set to 5 (synced) before anything
 * else is written; a read-only open leaves it as it was, still readable by
 * older builds.
 *
 * nd_db_open builds the handle bottom-up: the store (st_open), the meta
 * records, the mirror's log (db_mirrored_open), the fresh counts
 * (db_fold_open), the sweep of unfinished loads (db_load_sweep), then
 * the background fold; nd_db_close undoes it top-down. Invariant: what the
 * handle holds outside its sub-structs (plan, fingerprint configuration,
 * run size, flags) is set here and fixed until nd_db_close. Callers: the
 * public API only.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_core.h"
#include "db_fold.h"
#include "db_bands.h"
#include "db_mirrored.h"
#include "db_load_dirs.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "nd_options.h"

#define DB_DEFAULT_K 3u
#define DB_DEFAULT_DOCS 100000000ull
#define DB_DEFAULT_RUN_SIZE 128u

/* Bytes of an nd_db_options of a version this build knows (1 ..
 * ND_DB_OPTIONS_VERSION), 0 for any other: a caller built against an
 * older header passes a shorter struct, whose later fields do not exist. */
static size_t db_options_size(unsigned version)
{
    switch (version) {
    case 1: return offsetof(nd_db_options, threads);
    case 2: return offsetof(nd_db_options, min_resemblance);
    case 3:
    case 4: return sizeof(nd_db_options);
    default: return 0;
    }
}

int nd_db_options_init(nd_db_options *opts, unsigned version)
{
    return nd_options_init(opts, db_options_size(version), version, 1, ND_DB_OPTIONS_VERSION, "db");
}

/* ---- meta ------------------------------------------------------------- */

static int meta_get(nd_db *db, const char *name, char **val, size_t *len)
{
    int rc = st_get(db->store, ST_CF_META, name, strlen(name), val, len);
    if (rc == ND_ENOTFOUND)
        return nd_err_set(ND_ECORRUPT, "database %s: meta record '%s' is missing", db->path, name);
    return rc;
}

static int meta_put(st_batch *b, const char *name, const char *val)
{
    return st_batch_put(b, ST_CF_META, name, strlen(name), val, strlen(val));
}

/* Keep a copy of n stop words (or of the NUL-terminated words packed in
 * buf[0..len)) in the handle, and point db->fp at it: fingerprints of
 * texts added later must drop the same words as those stored. */
static int keep_stopwords(nd_db *db, const char *const *words, size_t n, const char *buf,
                          size_t len)
{
    size_t total = len;
    if (words)
        for (size_t i = 0; i < n; i++) total += strlen(words[i]) + 1;
    db->stop_buf = malloc(total ? total : 1);
    ND_RETURN_IF(!db->stop_buf, ND_ENOMEM, "nd_db_open: out of memory for stop words");
    if (words) {
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            size_t l = strlen(words[i]) + 1;
            memcpy(db->stop_buf + at, words[i], l);
            at += l;
        }
    } else {
        if (len) memcpy(db->stop_buf, buf, len); /* buf may be NULL when len is 0 */
        n = 0;
        for (size_t i = 0; i < len; i++) n += buf[i] == '\0';
        ND_RETURN_IF(len && buf[len - 1] != '\0', ND_ECORRUPT,
                     "database %s: stopwords record is not NUL-terminated", db->path);
    }
    db->stop_ptrs = malloc((n ? n : 1) * sizeof *db->stop_ptrs);
    ND_RETURN_IF(!db->stop_ptrs, ND_ENOMEM, "nd_db_open: out of memory for stop words");
    for (size_t i = 0, at = 0; i < n; i++) {
        db->stop_ptrs[i] = db->stop_buf + at;
        at += strlen(db->stop_buf + at) + 1;
    }
    db->stop_len = total;
    db->fp.stopwords = n ? db->stop_ptrs : NULL;
    db->fp.n_stopwords = n;
    return ND_OK;
}

/* The "resemblance" record of threshold r. */
static void resemblance_record(char *out, size_t cap, double r)
{
    snprintf(out, cap, "sketch%u;r=%.17g", ND_SKETCH_VERSION, r);
}

/* Read the "resemblance" record (absent: a fingerprint-only store) into
 * db->min_resemblance; the store must then have the sketch and band
 * families, and a store without the record must not. */
static int load_resemblance(nd_db *db, unsigned format)
{
    char *v = NULL, text[64];
    size_t len;
    int rc = st_get(db->store, ST_CF_META, "resemblance", 11, &v, &len);
    db->min_resemblance = 0;
    if (rc == ND_ENOTFOUND) {
        ND_RETURN_IF(st_has_family(db->store, ST_CF_SKETCH) || st_has_family(db->store, ST_CF_BAND),
                     ND_ECORRUPT,
                     "database %s has sketch or band families but no 'resemblance' record",
                     db->path);
        return ND_OK;
    }
    ND_FORWARD(rc);
    snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1), v);
    free(v);
    unsigned version;
    double r;
    int end = 0;
    if (len >= sizeof text || sscanf(text, "sketch%u;r=%lf%n", &version, &r, &end) != 2 ||
        (size_t)end != len)
        return nd_err_set(ND_ECORRUPT, "database %s: malformed resemblance record '%s'", db->path,
                          text);
    ND_RETURN_IF(version != ND_SKETCH_VERSION, ND_EVERSION,
                 "database %s records sketch version %u; this build computes version %u",
                 db->path, version, ND_SKETCH_VERSION);
    ND_RETURN_IF(!(r > 0 && r <= 1), ND_ECORRUPT,
                 "database %s: resemblance record '%s' has a threshold outside (0, 1]", db->path,
                 text);
    ND_RETURN_IF(format < 5, ND_ECORRUPT,
                 "database %s of format %u has a resemblance record (format 5 on)", db->path,
                 format);
    ND_RETURN_IF(!st_has_family(db->store, ST_CF_SKETCH) || !st_has_family(db->store, ST_CF_BAND),
                 ND_ECORRUPT, "database %s: a resemblance store without its sketch or band family",
                 db->path);
    db->min_resemblance = r;
    return ND_OK;
}

/* This build's format version into the "format" record. */
static int put_format(st_batch *b)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%u", ND_FORMAT_VERSION);
    return meta_put(b, "format", buf);
}

static int create_meta(nd_db *db, const nd_db_options *o)
{
    char buf[16384];
    st_batch *b = NULL;
    int rc;
    ND_TRY(st_batch_new(&b, db->store));
    ND_TRY(put_format(b));
    ND_TRY(nd_plan_encode(buf, sizeof buf, &db->plan));
    ND_TRY(meta_put(b, "plan", buf));
    ND_TRY(meta_put(b, "fp", db->fp_config));
    snprintf(buf, sizeof buf, "features=%u n=%u flags=%u title=%u", (unsigned)db->fp.features,
             db->fp.n, db->fp.flags & ~ND_FP_FUNCTION_MASK, db->fp.title_weight);
    ND_TRY(meta_put(b, "fpopts", buf));
    if (db->fp.n_stopwords)
        ND_TRY(st_batch_put(b, ST_CF_META, "stopwords", 9, db->stop_buf, db->stop_len));
    snprintf(buf, sizeof buf, "%u", db->run_size);
    ND_TRY(meta_put(b, "run_size", buf));
    if (db->min_resemblance > 0) {
        resemblance_record(buf, sizeof buf, db->min_resemblance);
        ND_TRY(meta_put(b, "resemblance", buf));
    }
    ND_TRY(db_stage_counters(db, b, 0, 0));
    ND_TRY(st_write(db->store, b, 1));
    (void)o;
cleanup:
    st_batch_free(b);
    return rc;
}

/* Oldest format version this build reads (see the top of this file). */
#define DB_FORMAT_OLDEST 1u

static int load_meta(nd_db *db, const nd_db_options *o, double want_r, unsigned *format)
{
    char *v = NULL;
    size_t len;
    int rc;
    rc = st_get(db->store, ST_CF_META, "format", 6, &v, &len);
    if (rc == ND_ENOTFOUND)
        ND_FAIL(ND_EINVAL, "%s is not a neardup database (no format record)", db->path);
    if (rc < 0) goto cleanup;
    unsigned long fmt = strtoul(v, NULL, 10);
    if (fmt < DB_FORMAT_OLDEST || fmt > ND_FORMAT_VERSION)
        ND_FAIL(ND_EVERSION, "database at %s has format version %s; this build reads %u to %u",
                db->path, v, DB_FORMAT_OLDEST, ND_FORMAT_VERSION);
    *format = (unsigned)fmt;
    free(v);
    v = NULL;

    ND_TRY(meta_get(db, "plan", &v, &len));
    ND_TRY(nd_plan_decode(&db->plan, v, len));
    if (db->plan.info.tables != st_ntables(db->store))
        ND_FAIL(ND_ECORRUPT, "database %s: plan has %u tables, storage %u", db->path,
                db->plan.info.tables, st_ntables(db->store));
    free(v);
    v = NULL;

    ND_TRY(meta_get(db, "fp", &v, &len));
    if (len >= sizeof db->fp_config) ND_FAIL(ND_ECORRUPT, "database %s: fp record too long", db->path);
    memcpy(db->fp_config, v, len);
    db->fp_config[len] = '\0';
    free(v);
    v = NULL;

    /* The recorded fingerprint function must be one this build computes:
     * fingerprints of another version would silently never match the
     * stored ones. An older version it computes is the store's for good:
     * db->fp selects it, so every text added or asked is fingerprinted
     * as the stored ones were. */
    unsigned fpv = 0;
    if (sscanf(db->fp_config, "fp%u;", &fpv) != 1 || fpv == 0)
        ND_FAIL(ND_ECORRUPT, "database %s: fp record '%s' names no fingerprint function version",
                db->path, db->fp_config);
    if (fpv < ND_FP_VERSION_OLDEST || fpv > ND_FP_VERSION)
        ND_FAIL(ND_EVERSION, "database %s records fingerprint function '%s'; this build computes "
                "versions %u to %u", db->path, db->fp_config, ND_FP_VERSION_OLDEST, ND_FP_VERSION);

    ND_TRY(meta_get(db, "fpopts", &v, &len));
    unsigned feat, n, flags, title;
    if (sscanf(v, "features=%u n=%u flags=%u title=%u", &feat, &n, &flags, &title) != 4 ||
        (flags & ND_FP_FUNCTION_MASK))
        ND_FAIL(ND_ECORRUPT, "database %s: bad fpopts record", db->path);
    nd_fp_options_init(&db->fp, ND_FP_OPTIONS_VERSION);
    db->fp.features = (nd_feature_kind)feat;
    db->fp.n = n;
    db->fp.flags = flags | ND_FP_FUNCTION(fpv);
    db->fp.title_weight = title;
    char fpopts[128];
    snprintf(fpopts, sizeof fpopts, "%s", v);
    free(v);
    v = NULL;
    rc = st_get(db->store, ST_CF_META, "stopwords", 9, &v, &len);
    if (rc == ND_OK) ND_TRY(keep_stopwords(db, NULL, 0, v, len));
    else if (rc != ND_ENOTFOUND) goto cleanup;
    /* Options this build does not know would not give the recorded
     * configuration. */
    char mine[256];
    if (nd_fp_config_string(mine, sizeof mine, &db->fp) < 0)
        ND_FAIL(ND_ECORRUPT, "database %s: fpopts record '%s' is not a fingerprint configuration "
                "this build knows", db->path, fpopts);
    if (strcmp(mine, db->fp_config) != 0)
        ND_FAIL(ND_ECORRUPT, "database %s records fingerprint configuration '%s' but its options "
                "give '%s'", db->path, db->fp_config, mine);
    free(v);
    v = NULL;

    ND_TRY(meta_get(db, "run_size", &v, &len));
    db->run_size = (unsigned)strtoul(v, NULL, 10);
    if (db->run_size < 2) ND_FAIL(ND_ECORRUPT, "database %s: bad run_size", db->path);
    free(v);
    v = NULL;
    if (o->run_size) db->run_size = o->run_size; /* folding may change it */

    ND_TRY(meta_get(db, "counters", &v, &len));
    if (len != 16) ND_FAIL(ND_ECORRUPT, "database %s: bad counters record", db->path);
    db->write.docs = nd_load_be64(v);
    db->write.fps = nd_load_be64(v + 8);

    if (o->fp) {
        /* A caller's options naming no function version take the
         * store's: opening an older store needs no new options. */
        char want[256];
        nd_fp_options asked = *o->fp;
        if (ND_FP_FUNCTION_OF(asked.flags) == 0) asked.flags |= ND_FP_FUNCTION(fpv);
        ND_TRY(nd_fp_config_string(want, sizeof want, &asked));
        if (strcmp(want, db->fp_config) != 0)
            ND_FAIL(ND_EMISMATCH, "database %s fingerprints with '%s', caller asked for '%s'",
                    db->path, db->fp_config, want);
    }
    if (o->has_k && o->k != db->plan.info.k)
        ND_FAIL(ND_EMISMATCH, "database %s has design distance k=%u, caller asked for k=%u",
                db->path, db->plan.info.k, o->k);
    ND_TRY(load_resemblance(db, *format));
    if ((o->flags & ND_DB_FINGERPRINT_ONLY) && db->min_resemblance > 0)
        ND_FAIL(ND_EMISMATCH, "database %s verifies by resemblance %.17g, caller asked for a "
                "fingerprint-only store", db->path, db->min_resemblance);
    if (want_r > 0 && want_r != db->min_resemblance) {
        if (db->min_resemblance > 0)
            ND_FAIL(ND_EMISMATCH,
                    "database %s verifies by resemblance %.17g, caller asked for %.17g", db->path,
                    db->min_resemblance, want_r);
        ND_FAIL(ND_EMISMATCH, "database %s is a fingerprint-only store, caller asked for "
                "resemblance %.17g", db->path, want_r);
    }
    rc = ND_OK;
cleanup:
    free(v);
    return rc;
}

/* Record ND_FORMAT_VERSION in an older database about to be written to
 * (synced, before any run of the newer codec can reach it). */
static int upgrade_format(nd_db *db)
{
    st_batch *b = NULL;
    int rc;
    ND_TRY(st_batch_new(&b, db->store));
    ND_TRY(put_format(b));
    rc = st_write(db->store, b, 1);
    if (rc < 0)
        rc = nd_err_wrap(rc, "database %s: upgrading the format record to %u", db->path,
                         ND_FORMAT_VERSION);
cleanup:
    st_batch_free(b);
    return rc;
}

/* The code of closing its store (a failed flush or background job). */
static int free_db(nd_db *db)
{
    db_bands_free(db); /* joins its thread, which reads the store */
    for (unsigned i = 0; i < db->readers.n; i++) st_reader_free(db->readers.pool[i]);
    int rc = st_close(db->store);
    pthread_mutex_destroy(&db->write.mu);
    pthread_mutex_destroy(&db->mirror.mu);
    st_u64s_dispose(&db->mirror.fps);
    pthread_mutex_destroy(&db->readers.mu);
    pthread_mutex_destroy(&db->fold.mu);
    pthread_mutex_destroy(&db->fold.bg_mu);
    pthread_cond_destroy(&db->fold.bg_cv);
    free(db->stop_buf);
    free(db->stop_ptrs);
    free(db->path);
    free(db);
    return rc;
}

int nd_db_open(nd_db **out, const char *path, const nd_db_options *opts)
{
    nd_db_options def;
    nd_db *db = NULL;
    int rc;
    ND_RETURN_IF(!out || !path || !*path, ND_EINVAL, "nd_db_open: NULL or empty argument");
    *out = NULL;
    if (!opts) {
        nd_db_options_init(&def, ND_DB_OPTIONS_VERSION);
        opts = &def;
    }
    ND_RETURN_IF(!db_options_size(opts->version), ND_EINVAL,
                 "db options: version %u unknown (this build knows 1 to %u)", opts->version,
                 ND_DB_OPTIONS_VERSION);
    unsigned threads = opts->version >= 2 ? opts->threads : 0;
    ND_RETURN_IF(threads > ND_MAX_TABLES, ND_EINVAL, "db options: threads=%u (0..%u allowed)",
                 threads, ND_MAX_TABLES);
    ND_RETURN_IF(opts->flags & ~(ND_DB_CREATE | ND_DB_EXCL | ND_DB_READONLY | ND_DB_SYNC |
                                 ND_DB_NO_BACKGROUND | ND_DB_MMAP | ND_DB_FINGERPRINT_ONLY),
                 ND_EINVAL, "db options: unknown flags 0x%x", opts->flags);
    ND_RETURN_IF((opts->flags & ND_DB_READONLY) && (opts->flags & ND_DB_CREATE), ND_EINVAL,
                 "db options: READONLY and CREATE exclude each other");
    ND_RETURN_IF(opts->k > ND_MAX_PLAN_K, ND_EINVAL, "db options: k=%u (0..%u allowed)", opts->k,
                 ND_MAX_PLAN_K);
    ND_RETURN_IF(opts->run_size == 1 || opts->run_size > 65536, ND_EINVAL,
                 "db options: run_size %u (2..65536 allowed)", opts->run_size);
    double want_r = opts->version >= 3 ? opts->min_resemblance : 0;
    ND_RETURN_IF(!(want_r == 0 || (want_r > 0 && want_r <= 1)), ND_EINVAL,
                 "db options: min_resemblance %g (0, or in (0, 1])", want_r);
    int fp_only = (opts->flags & ND_DB_FINGERPRINT_ONLY) != 0;
    ND_RETURN_IF(fp_only && want_r > 0, ND_EINVAL,
                 "db options: FINGERPRINT_ONLY and min_resemblance %g exclude each other", want_r);
    /* What a store created now verifies by: the caller's threshold, else
     * (options of version 4) the default unless fingerprint-only. */
    double create_r = want_r > 0 || fp_only || opts->version < 4 ? want_r
                                                                  : ND_DB_DEFAULT_MIN_RESEMBLANCE;

    db = calloc(1, sizeof *db);
    ND_RETURN_IF(!db, ND_ENOMEM, "nd_db_open: out of memory");
    pthread_mutex_init(&db->write.mu, NULL);
    pthread_mutex_init(&db->mirror.mu, NULL);
    pthread_mutex_init(&db->readers.mu, NULL);
    pthread_mutex_init(&db->fold.mu, NULL);
    pthread_mutex_init(&db->fold.bg_mu, NULL);
    pthread_cond_init(&db->fold.bg_cv, NULL);
    db->path = strdup(path);
    if (!db->path) ND_FAIL(ND_ENOMEM, "nd_db_open: out of memory");
    db->readonly = (opts->flags & ND_DB_READONLY) != 0;
    db->sync = (opts->flags & ND_DB_SYNC) != 0;
    db->fold.threshold = opts->fold_threshold;
    db->batch_probes_max = DB_BATCH_PROBES_MAX;
    db->threads = threads;

    /* Plan and fingerprint config first: a bad request creates nothing. */
    nd_plan *plan = &db->plan;
    if (opts->flags & ND_DB_CREATE) {
        ND_TRY(nd_plan_choose(plan, opts->has_k || opts->k ? opts->k : DB_DEFAULT_K,
                              opts->expected_docs ? opts->expected_docs : DB_DEFAULT_DOCS,
                              opts->tables));
        if (opts->fp) db->fp = *opts->fp;
        else nd_fp_options_init(&db->fp, ND_FP_OPTIONS_VERSION);
        db->fp.flags &= ~ND_FP_HTML;
        ND_TRY(keep_stopwords(db, db->fp.stopwords, db->fp.n_stopwords, NULL, 0));
        ND_TRY(nd_fp_config_string(db->fp_config, sizeof db->fp_config,
                                   opts->fp ? opts->fp : &db->fp));
        /* The handle names its function version explicitly (the record
         * "fp" has it; "fpopts" keeps only the other flags). */
        unsigned fpv = 0;
        sscanf(db->fp_config, "fp%u;", &fpv);
        db->fp.flags = (db->fp.flags & ~ND_FP_FUNCTION_MASK) | ND_FP_FUNCTION(fpv);
        db->run_size = opts->run_size ? opts->run_size : DB_DEFAULT_RUN_SIZE;
        db->min_resemblance = create_r;
    }
    st_open_opts so = {.create = (opts->flags & ND_DB_CREATE) != 0,
                       .excl = (opts->flags & ND_DB_EXCL) != 0,
                       .readonly = db->readonly,
                       .ntables = plan->info.tables,
                       .cache_bytes = opts->cache_bytes,
                       .map_tables = (opts->flags & ND_DB_MMAP) != 0,
                       .scratch_dir = opts->scratch_dir,
                       .resemblance = create_r > 0};
    ND_TRY(st_open(&db->store, path, &so));
    /* A store that already existed keeps its own meta; a new one gets ours. */
    char *probe = NULL;
    size_t plen;
    rc = st_get(db->store, ST_CF_META, "format", 6, &probe, &plen);
    free(probe);
    if (rc == ND_ENOTFOUND && (opts->flags & ND_DB_CREATE)) {
        ND_TRY(create_meta(db, opts));
    } else if (rc == ND_ENOTFOUND) {
        /* The store exists (st_open found it) but its format record cannot
         * be read: a damaged meta family (a flipped filter block reads as
         * "absent"), never a missing database. */
        ND_FAIL(ND_ECORRUPT, "database %s: its meta record 'format' cannot be read", path);
    } else if (rc < 0) {
        goto cleanup;
    } else {
        unsigned format = 0;
        db->min_resemblance = 0; /* the store's, not the request's */
        ND_TRY(load_meta(db, opts, want_r, &format));
        if (format < ND_FORMAT_VERSION && !db->readonly) ND_TRY(upgrade_format(db));
    }
    ND_TRY(db_mirrored_open(db)); /* before the counts: they include its entries */
    ND_TRY(db_bands_open(db));
    ND_TRY(db_fold_open(db));
    if (!db->readonly) db_load_sweep(db);
    if (!db->readonly && !(opts->flags & ND_DB_NO_BACKGROUND)) {
        ND_TRY(db_bg_start(db));
        db_fold_kick(db);
    }
    *out = db;
    nd_err_clear();
    return ND_OK;
cleanup:
    free_db(db);
    return rc;
}

int nd_db_close(nd_db *db)
{
    if (!db) return ND_OK;
    db_bg_stop(db);
    int rc = ND_OK;
    if (!db->readonly) {
        /* Not needed for durability (the records are written), but the
         * next open then has nothing to replay. */
        rc = db_mirrored_flush_now(db);
        int brc = db_bands_flush_now(db);
        if (rc == ND_OK) rc = brc;
    }
    int crc = free_db(db); /* the path is gone with it: the CLI names it */
    return rc == ND_OK ? crc : rc;
}

int nd_db_plan(nd_plan_info *out, const nd_db *db)
{
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_db_plan: NULL argument");
    *out = db->plan.info;
    return ND_OK;
}

int nd_db_fp_options(nd_fp_options *out, const nd_db *db)
{
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_db_fp_options: NULL argument");
    *out = db->fp;
    return ND_OK;
}
