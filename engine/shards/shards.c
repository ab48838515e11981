/*
 * shards.c — the sharded-store handle (nd_shards_* in neardup.h): create
 * a store, open it (or a part of its shards), place keys, and the manifest
 * (shard_manifest.c) that makes S databases one store.
 *
 * Creation makes DIR and each shard in turn, shard 0 first: its plan (k,
 * t, chosen by the planner for the store's N / S when t is not given) and
 * fingerprint configuration, read back from it, are what every later
 * shard is created with and what the manifest records, so every shard
 * holds the same tables. The manifest is written last (at once, or by
 * nd_shards_finish once a loader filled the shards), so an interrupted
 * creation leaves a directory no open accepts.
 *
 * Opening reads (or is given) the manifest, opens the shards of its part
 * and checks each against it: a shard of another plan or fingerprint
 * configuration would answer other questions than its siblings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nd_error.h"
#include "nd_options.h"
#include "shard_manifest.h"

struct nd_shards {
    char *dir;
    shard_manifest m;
    nd_db **dbs;     /* m.shards entries; NULL where not open */
    int unfinished;  /* created with ND_SHARDS_NO_MANIFEST, not yet finished */
};

enum { PATH_CAP = 4096 };
#define DEFAULT_EXPECTED_DOCS 100000000ull
#define DEFAULT_K 3u

int nd_shards_options_init(nd_shards_options *opts, unsigned version)
{
    size_t size = version == 1 ? offsetof(nd_shards_options, min_resemblance) : sizeof *opts;
    return nd_options_init(opts, size, version, 1, ND_SHARDS_OPTIONS_VERSION, "shards");
}

static int check_options(const nd_shards_options *o)
{
    const unsigned known = ND_SHARDS_CREATE | ND_SHARDS_NO_MANIFEST | ND_SHARDS_MANIFEST_ONLY;
    const unsigned db_known = ND_DB_READONLY | ND_DB_SYNC | ND_DB_NO_BACKGROUND | ND_DB_MMAP;
    int create = (o->flags & ND_SHARDS_CREATE) != 0;
    ND_RETURN_IF(o->version < 1 || o->version > ND_SHARDS_OPTIONS_VERSION, ND_EINVAL,
                 "shards options: version %u unknown (this build knows 1 to %u)", o->version,
                 ND_SHARDS_OPTIONS_VERSION);
    ND_RETURN_IF(o->flags & ~known, ND_EINVAL, "shards options: unknown flags 0x%x", o->flags);
    ND_RETURN_IF(o->db_flags & ~db_known, ND_EINVAL,
                 "shards options: db_flags 0x%x (READONLY, SYNC, NO_BACKGROUND, MMAP only)",
                 o->db_flags);
    ND_RETURN_IF(o->parts && o->part >= o->parts, ND_EINVAL,
                 "shards options: part %u of %u", o->part, o->parts);
    ND_RETURN_IF((o->flags & ND_SHARDS_NO_MANIFEST) && !create, ND_EINVAL,
                 "shards options: NO_MANIFEST without CREATE");
    if (!create) return ND_OK;
    ND_RETURN_IF(o->shards < 1 || o->shards > ND_SHARDS_MAX, ND_EINVAL,
                 "shards options: shards must be 1..%u, got %u", ND_SHARDS_MAX, o->shards);
    ND_RETURN_IF(o->has_k && o->k > ND_MAX_PLAN_K, ND_EINVAL, "shards options: k must be 0..%u, got %u",
                 ND_MAX_PLAN_K, o->k);
    ND_RETURN_IF(o->tables > ND_MAX_TABLES, ND_EINVAL,
                 "shards options: tables must be 0..%u, got %u", ND_MAX_TABLES, o->tables);
    ND_RETURN_IF(o->parts > 1 || o->manifest, ND_EINVAL,
                 "shards options: a store is created whole, from no manifest");
    ND_RETURN_IF(o->db_flags & ND_DB_READONLY, ND_EINVAL,
                 "shards options: CREATE with ND_DB_READONLY");
    double r = o->version >= 2 ? o->min_resemblance : 0;
    ND_RETURN_IF(!(r == 0 || (r > 0 && r <= 1)), ND_EINVAL,
                 "shards options: min_resemblance %g (0, or in (0, 1])", r);
    return ND_OK;
}

/* Open shard i with flags (and, creating, the store's settings). */
static int open_shard(nd_db **out, nd_shards *s, unsigned i, unsigned flags,
                      unsigned threads, const nd_shards_options *create)
{
    char path[PATH_CAP];
    nd_db_options o;
    ND_FORWARD(shard_path(path, sizeof path, s->dir, i));
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    o.flags = flags;
    o.threads = threads;
    if (create) {
        uint64_t docs = create->expected_docs ? create->expected_docs : DEFAULT_EXPECTED_DOCS;
        o.k = create->has_k ? create->k : DEFAULT_K;
        o.has_k = 1;
        o.expected_docs = (docs + s->m.shards - 1) / s->m.shards;
        o.tables = i == 0 ? create->tables : s->m.tables; /* shard 0's plan is every shard's */
        o.fp = create->fp;
        o.min_resemblance = s->m.min_resemblance;
        /* A sharded store's threshold 0 is a fingerprint-only store (its
         * manifest says which), not the default of a single store. */
        if (o.min_resemblance == 0) o.flags |= ND_DB_FINGERPRINT_ONLY;
    }
    int rc = nd_db_open(out, path, &o);
    if (rc < 0)
        return nd_err_wrap(rc, "%s shard %u '%s'", create ? "creating" : "opening", i, path);
    return ND_OK;
}

/* The plan and fingerprint configuration of an open shard. */
static int shard_settings(unsigned *k, unsigned *tables, char *cfg, size_t cap, nd_db *db)
{
    nd_plan_info p;
    nd_fp_options fo;
    ND_FORWARD(nd_db_plan(&p, db));
    ND_FORWARD(nd_db_fp_options(&fo, db));
    ND_FORWARD(nd_fp_config_string(cfg, cap, &fo));
    *k = p.k;
    *tables = p.tables;
    return ND_OK;
}

static int create_store(nd_shards *s, const nd_shards_options *o)
{
    int keep_open = !(o->flags & ND_SHARDS_MANIFEST_ONLY);
    if (mkdir(s->dir, 0755) != 0) {
        int e = errno;
        return nd_err_set(e == EEXIST ? ND_EEXIST : e == ENOENT ? ND_ENOTFOUND : ND_EIO,
                          "cannot create '%s': %s", s->dir, strerror(e));
    }
    memset(&s->m, 0, sizeof s->m);
    s->m.version = SHARD_MANIFEST_VERSION;
    s->m.shards = o->shards;
    s->m.docs = o->expected_docs ? o->expected_docs : DEFAULT_EXPECTED_DOCS;
    s->m.format = ND_FORMAT_VERSION;
    s->m.fp_version = ND_FP_VERSION; /* then the version shard 0 computes */
    s->m.min_resemblance = o->version >= 2 ? o->min_resemblance : 0;
    for (unsigned i = 0; i < o->shards; i++) {
        nd_db *db = NULL;
        ND_FORWARD(open_shard(&db, s, i,
                              ND_DB_CREATE | ND_DB_EXCL | ND_DB_NO_BACKGROUND | o->db_flags,
                              o->threads, o));
        if (i == 0) { /* recorded as read back from the shard: what readers compare */
            int rc = shard_settings(&s->m.k, &s->m.tables, s->m.fp_config, sizeof s->m.fp_config,
                                    db);
            if (rc < 0) {
                nd_db_close(db);
                return rc;
            }
            sscanf(s->m.fp_config, "fp%u;", &s->m.fp_version);
        }
        if (keep_open) {
            s->dbs[i] = db;
        } else {
            char path[PATH_CAP];
            int rc = nd_db_close(db);
            if (rc < 0 && shard_path(path, sizeof path, s->dir, i) == ND_OK)
                return nd_err_wrap(rc, "closing shard %u '%s'", i, path);
            if (rc < 0) return rc;
        }
    }
    if (o->flags & ND_SHARDS_NO_MANIFEST) {
        s->unfinished = 1;
        return ND_OK;
    }
    return shard_manifest_write(&s->m, s->dir);
}

/* Open the shards of the part and check each against the manifest. */
static int open_part(nd_shards *s, const nd_shards_options *o)
{
    unsigned part = o->parts ? o->part : 0, step = o->parts ? o->parts : 1;
    for (unsigned i = part; i < s->m.shards; i += step) {
        char cfg[256], path[PATH_CAP];
        unsigned k, tables;
        ND_FORWARD(open_shard(&s->dbs[i], s, i, o->db_flags, o->threads, NULL));
        ND_FORWARD(shard_settings(&k, &tables, cfg, sizeof cfg, s->dbs[i]));
        ND_FORWARD(shard_path(path, sizeof path, s->dir, i));
        ND_RETURN_IF(k != s->m.k || tables != s->m.tables || strcmp(cfg, s->m.fp_config) != 0,
                     ND_EMISMATCH,
                     "shard %u '%s' does not match the manifest: k=%u tables=%u fingerprint %s "
                     "(manifest: k=%u tables=%u fingerprint %s)",
                     i, path, k, tables, cfg, s->m.k, s->m.tables, s->m.fp_config);
        ND_RETURN_IF(nd_db_min_resemblance(s->dbs[i]) != s->m.min_resemblance, ND_EMISMATCH,
                     "shard %u '%s' verifies by resemblance %g, the manifest says %g", i, path,
                     nd_db_min_resemblance(s->dbs[i]), s->m.min_resemblance);
    }
    return ND_OK;
}

int nd_shards_open(nd_shards **out, const char *dir, const nd_shards_options *opts)
{
    nd_shards_options def = ND_SHARDS_OPTIONS_INIT;
    nd_shards *s = NULL;
    int rc;
    ND_RETURN_IF(!out || !dir, ND_EINVAL, "nd_shards_open: NULL argument");
    *out = NULL;
    if (!opts) opts = &def;
    ND_FORWARD(check_options(opts));
    s = calloc(1, sizeof *s);
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        return nd_err_set(ND_ENOMEM, "nd_shards_open: out of memory");
    }
    if (opts->flags & ND_SHARDS_CREATE) {
        s->dbs = calloc(opts->shards, sizeof *s->dbs);
        if (!s->dbs) ND_FAIL(ND_ENOMEM, "nd_shards_open: out of memory");
        ND_TRY(create_store(s, opts));
    } else {
        if (opts->manifest) {
            char name[PATH_CAP];
            snprintf(name, sizeof name, "%s/%s", dir, SHARD_MANIFEST_NAME);
            ND_TRY(shard_manifest_parse(&s->m, opts->manifest, strlen(opts->manifest), name));
        } else {
            ND_TRY(shard_manifest_read(&s->m, dir));
        }
        s->dbs = calloc(s->m.shards, sizeof *s->dbs);
        if (!s->dbs) ND_FAIL(ND_ENOMEM, "nd_shards_open: out of memory");
        if (!(opts->flags & ND_SHARDS_MANIFEST_ONLY)) ND_TRY(open_part(s, opts));
    }
    *out = s;
    return ND_OK;
cleanup:
    nd_shards_close(s);
    return rc;
}

/* Close every open shard; the first failure is returned (with its shard
 * named), the others are closed anyway. */
static int close_shards(nd_shards *s)
{
    int rc = ND_OK;
    for (unsigned i = 0; s->dbs && i < s->m.shards; i++) {
        if (!s->dbs[i]) continue;
        int crc = nd_db_close(s->dbs[i]);
        s->dbs[i] = NULL;
        if (crc < 0 && rc == ND_OK) {
            char path[PATH_CAP];
            rc = shard_path(path, sizeof path, s->dir, i) == ND_OK
                     ? nd_err_wrap(crc, "closing shard %u '%s'", i, path)
                     : crc;
        }
    }
    return rc;
}

int nd_shards_finish(nd_shards *s)
{
    ND_RETURN_IF(!s || !s->unfinished, ND_EINVAL,
                 "nd_shards_finish: not a store created with ND_SHARDS_NO_MANIFEST, or finished");
    s->unfinished = 0;
    ND_FORWARD(close_shards(s));
    return shard_manifest_write(&s->m, s->dir);
}

int nd_shards_close(nd_shards *s)
{
    if (!s) return ND_OK;
    int rc = close_shards(s);
    free(s->dbs);
    free(s->dir);
    free(s);
    return rc;
}

int nd_shards_info_get(nd_shards_info *out, const nd_shards *s)
{
    ND_RETURN_IF(!out || !s, ND_EINVAL, "nd_shards_info_get: NULL argument");
    memset(out, 0, sizeof *out);
    out->shards = s->m.shards;
    out->k = s->m.k;
    out->tables = s->m.tables;
    out->expected_docs = s->m.docs;
    memcpy(out->fingerprint, s->m.fp_config, sizeof out->fingerprint);
    out->format = s->m.format;
    out->fp_version = s->m.fp_version;
    return ND_OK;
}

unsigned nd_shards_place(const nd_shards *s, const void *key, size_t key_len)
{
    return shard_of(&s->m, key, key_len);
}

int nd_shards_path(char *out, size_t cap, const nd_shards *s, unsigned shard)
{
    ND_RETURN_IF(!out || !s || shard >= s->m.shards, ND_EINVAL,
                 "nd_shards_path: shard %u of %u", shard, s ? s->m.shards : 0);
    return shard_path(out, cap, s->dir, shard);
}

nd_db *nd_shards_db(const nd_shards *s, unsigned shard)
{
    return s && shard < s->m.shards ? s->dbs[shard] : NULL;
}

int nd_shards_manifest(char *out, size_t cap, const nd_shards *s)
{
    ND_RETURN_IF(!out || !s, ND_EINVAL, "nd_shards_manifest: NULL argument");
    int n = shard_manifest_format(out, cap, &s->m);
    return n < 0 ? n : ND_OK;
}
