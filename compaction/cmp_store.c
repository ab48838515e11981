/*
 * cmp_store.c — the store (cmp_store.h): open and close, the current
 * generation, batches and st_write, the mirror of the fresh spaces, the
 * tables' direct readers, whole-database maintenance. Every RocksDB
 * operation goes through the key-value adapter (cmp_kv.h).
 *
 * The mirror (cmp_fresh.c) is loaded at open from each table's fresh
 * space and fed by st_write with the table changes each batch logged as
 * they were staged. A table's direct reader is made when its run space is
 * exactly one file (at open, after an import's switch or a compaction)
 * and dropped by the first write to that run space.
 *
 * Every synced write leaves its sequence number in SYNCED (cmp_synced.c),
 * read at open, before RocksDB's, and checked against what the open
 * recovered (cmp_kv.cc): acknowledged writes never vanish silently.
 */
#include "cmp_store.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmp_carry.h"
#include "cmp_direct.h"
#include "cmp_fresh.h"
#include "cmp_gen.h"
#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "cmp_store_impl.h"
#include "cmp_synced.h"
#include "nd_error.h"


/* An indexed batch (reads its own writes) or, for bulk loads, a plain one. */
struct st_batch {
    kv_batch *kb;
    st_store *store;
    cmp_flog log;      /* its table changes, for the fresh mirror and runs_seq */
    cmp_gen *next;     /* made current by this batch's write, or NULL */
    unsigned carry;    /* next's carried deletions (CMP_CARRY_*, cmp_carry.h) */
    size_t gen_ops;    /* puts and deletes into generational families */
    uint64_t docs;     /* the document counter it records (st_batch_note_docs), or
                        * CMP_SYNCED_NO_DOCS */
    unsigned char touched[ST_CF_MAX]; /* generational families written */
};

#define FIXED(cf) ((cf) == ST_CF_META ? 0 : (cf) - ST_CF_SKETCH + 1)

/* Writes after which st_write decides again whether point reads fill the
 * block cache (fill_refresh). */
#define FILL_REFRESH_WRITES 4096u

/* ---- generations ------------------------------------------------------ */

cmp_gen *st_gen_acquire(st_store *s)
{
    pthread_mutex_lock(&s->gen_mu);
    cmp_gen *g = s->cur;
    g->refs++;
    pthread_mutex_unlock(&s->gen_mu);
    return g;
}

void st_gen_release(st_store *s, cmp_gen *g)
{
    if (!g) return;
    pthread_mutex_lock(&s->gen_mu);
    int last = --g->refs == 0;
    pthread_mutex_unlock(&s->gen_mu);
    if (last) cmp_gen_free(g);
}

kv_cf *st_family(st_store *s, const cmp_gen *g, int cf)
{
    if (!ST_CF_GENERATIONAL(cf)) return s->fixed[FIXED(cf)];
    return (g ? g : s->cur)->cf[cf];
}

int st_has_family(st_store *s, int cf)
{
    return cf >= 0 && cf < ST_CF_ALL && st_family(s, NULL, cf) != NULL;
}

uint64_t st_generation(st_store *s)
{
    pthread_mutex_lock(&s->gen_mu);
    uint64_t gen = s->cur->gen;
    pthread_mutex_unlock(&s->gen_mu);
    return gen;
}

/* Should point reads put the blocks they read into the block cache? Only
 * while the families' files fit it. Past that, random probes rarely find
 * their block there again, and inserting it (evicting another) costs more
 * than the page-cache read it saves. Measured with the k=3 query of
 * bench_db, 64 MiB cache: 100M fingerprints (8.4 GB of files) p50 114 us
 * filling, 76 us not; 4M (235 MB) 25-29 vs 25-26 us; 1M (60 MB, fits)
 * 15.5 us filling, 20-30 us not. Called at open, at a generation switch,
 * after compaction and every FILL_REFRESH_WRITES writes. */
static void fill_refresh(st_store *s)
{
    uint64_t total = 0;
    cmp_gen *g = st_gen_acquire(s);
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)g->n); cf++)
        total += kv_live_bytes(s->kv, st_family(s, g, cf));
    st_gen_release(s, g);
    for (int i = 0; i < 3; i++) total += s->fixed[i] ? kv_live_bytes(s->kv, s->fixed[i]) : 0;
    atomic_store(&s->fill, total <= kv_cache_bytes(s->kv));
}

int st_fills_cache(st_store *s) { return atomic_load(&s->fill); }

/* ---- runs read straight from their file (cmp_direct.h) ----------------- */

cmp_direct *st_direct_open(st_store *s, const char *path, unsigned t, int over)
{
    cmp_direct *d = NULL;
    if (s->direct_ok) (void)cmp_direct_open(&d, path, t, over, s->map_tables);
    return d;
}

/* What direct_make's walk of a table's files found: the one file that
 * holds runs, or (many) that there is not exactly one without deletions. */
typedef struct runs_file {
    char *path;
    int many;
} runs_file;

static int note_runs_file(void *payload, const kv_file *f)
{
    runs_file *r = payload;
    if (f->largest_len && f->largest[0] < TBL_RUN) return 0; /* fresh entries only */
    if (r->path || !f->largest_len || f->deletions || !(r->path = strdup(f->path))) {
        r->many = 1;
        return 1; /* stop */
    }
    return 0;
}

/* The direct reader of table t of generation g when its run space is
 * exactly one file: the memtables hold nothing (or, memtables_checked,
 * the caller knows they hold no run key), one live file of the family
 * holds run keys (and maybe fresh ones) and no deletion, and every other
 * holds fresh keys only. NULL otherwise, or when the reader cannot be
 * made (RocksDB reads the runs then). */
static cmp_direct *direct_make(st_store *s, const cmp_gen *g, unsigned t, int memtables_checked)
{
    char family[32];
    runs_file r = {0};
    cmp_direct *d = NULL;
    kv_cf *cf = g->cf[ST_CF_TABLE(t)];
    if (!cf || !s->direct_ok || (!memtables_checked && !kv_memtables_empty(s->kv, cf)))
        return NULL;
    cmp_family_name(family, ST_CF_TABLE(t), g->gen);
    if (kv_live_files(s->kv, family, note_runs_file, &r) == ND_OK && r.path && !r.many)
        d = st_direct_open(s, r.path, t, 0);
    free(r.path);
    return d;
}

/* Make d table t's direct reader in g, under gen_mu. With if_seq, only
 * while g is current and runs_seq still reads *if_seq (else d is
 * dropped), and then runs_seq moves by 2: readers remake their views of
 * the run space when it moves, and so find d. */
void st_direct_swap(st_store *s, cmp_gen *g, unsigned t, cmp_direct *d, const uint64_t *if_seq)
{
    cmp_direct *old = d;
    pthread_mutex_lock(&s->gen_mu);
    if (!if_seq || (g == s->cur && atomic_load(&s->runs_seq) == *if_seq)) {
        old = g->direct[t];
        g->direct[t] = d;
        if (if_seq) atomic_fetch_add(&s->runs_seq, 2);
    }
    pthread_mutex_unlock(&s->gen_mu);
    cmp_direct_unref(old);
}

void st_direct_remake(st_store *s, cmp_gen *g, uint64_t mask)
{
    for (unsigned t = 0; t < g->n; t++)
        if (mask >> t & 1) st_direct_swap(s, g, t, direct_make(s, g, t, 0), NULL);
}

/* Before a write to the run space of the tables in mask: their files no
 * longer hold all of it. */
void st_direct_drop(st_store *s, uint64_t mask)
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

/* All of a store's tables (bit t). */
static uint64_t all_tables(unsigned n) { return n >= 64 ? UINT64_MAX : (1ull << n) - 1; }

/* Flush family cf's memtables, if they hold anything (best effort). */
static void flush_family(st_store *s, kv_cf *cf)
{
    if (!kv_memtables_empty(s->kv, cf)) (void)kv_flush(s->kv, cf);
}

/* ---- the mirror of the fresh spaces ------------------------------------ */

/* Table t's fresh values into out, ascending: at most FRESH_MIRROR_MAX + 1
 * of them (more than the mirror takes). ND_ECORRUPT for a malformed key. */
static int read_fresh_space(st_store *s, unsigned t, st_u64s *out)
{
    uint8_t lo[TBL_KEY_LEN], hi[TBL_KEY_LEN];
    kv_iter *it = NULL;
    int rc = ND_OK;
    tbl_key(lo, TBL_FRESH, 0);
    tbl_key(hi, TBL_FRESH + 1, 0);
    ND_FORWARD(kv_iter_new_bounded(&it, s->kv, st_family(s, NULL, ST_CF_TABLE(t)),
                                   atomic_load(&s->fill), lo, hi, sizeof lo, NULL));
    for (kv_iter_seek(it, lo, sizeof lo); kv_iter_valid(it) && out->n <= FRESH_MIRROR_MAX;
         kv_iter_next(it)) {
        size_t klen;
        uint64_t v;
        const char *k = kv_iter_key(it, &klen);
        if (!tbl_key_in(TBL_FRESH, t, k, klen, &v, &rc)) {
            /* no mirror; readers meet the key in RocksDB */
            rc = nd_err_set(ND_ECORRUPT, "table %u: malformed fresh key (%zu bytes)", t, klen);
            break;
        }
        rc = st_u64s_push(out, v);
        if (rc < 0) break;
    }
    if (rc == ND_OK) rc = kv_iter_status(it);
    kv_iter_free(it);
    return rc;
}

int st_mirror_repair(st_store *s, unsigned t)
{
    st_u64s v = {0};
    if (t >= s->ntables || cmp_fresh_valid(s->fresh, t)) return ND_OK;
    /* No writer runs: read unlocked. A failure leaves the table's
     * readers on RocksDB; damage is reported. */
    int rc = read_fresh_space(s, t, &v);
    if (rc == ND_OK) cmp_fresh_load(s->fresh, t, v.v, v.n);
    st_u64s_dispose(&v);
    return rc == ND_ECORRUPT ? rc : ND_OK;
}

int st_table_mirror_room(st_store *s, unsigned t, uint64_t n)
{
    return t < s->ntables && cmp_fresh_room(s->fresh, t, n);
}

void st_mirror_apply(st_store *s, const st_batch *b) { cmp_fresh_commit(s->fresh, &b->log); }

cmp_fresh *st_store_fresh(st_store *s) { return s->fresh; }

/* ---- open / close ------------------------------------------------------ */

static void free_store(st_store *s)
{
    (void)cmp_synced_close(s->synced, 1); /* a close that did not flush keeps it */
    free(s->synced_failed);
    pthread_mutex_destroy(&s->synced_mu);
    cmp_fresh_free(s->fresh);
    for (int i = 0; i < 3; i++) kv_family_free(s->fixed[i]);
    /* Snapshots hold references; they must be freed before the store. */
    cmp_gen_free(s->cur);
    pthread_mutex_destroy(&s->gen_mu);
    kv_close(s->kv);
    free(s->path);
    free(s);
}

char *st_store_file(const st_store *s, const char *name)
{
    char *p = malloc(strlen(s->path) + strlen(name) + 2);
    if (p) sprintf(p, "%s/%s", s->path, name);
    return p;
}

/* Open the database's families (creating: those of a new store of
 * ntables tables); keep meta and the current generation's, drop
 * (writable) or let go (read-only) the others: what an import left
 * behind when it stopped before or after its switch. */
static int open_db(st_store *s, int create, unsigned ntables, int resemblance,
                   uint64_t cache_bytes, uint64_t synced_seq)
{
    char **names = NULL, (*fnames)[32] = NULL;
    unsigned *profiles = NULL;
    kv_cf **cfs = NULL;
    size_t n = 0;
    uint64_t gen, keyed;
    int rc = ND_OK;
    if (create) {
        /* meta, docs, rev, the tables by number; then sketch and band */
        n = ST_CF_TABLE0 + ntables + (resemblance ? 2 : 0);
        names = calloc(n, sizeof *names);
        fnames = calloc(n, sizeof *fnames);
        if (!names || !fnames) ND_FAIL(ND_ENOMEM, "storage: out of memory");
        names[0] = "meta";
        for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)ntables); cf++) {
            cmp_family_name(fnames[cf], cf, 0);
            names[cf] = fnames[cf];
        }
        if (resemblance) {
            names[n - 2] = (char *)cmp_family_fixed_name(ST_CF_SKETCH);
            names[n - 1] = (char *)cmp_family_fixed_name(ST_CF_BAND);
        }
    } else {
        ND_TRY(kv_list_families(s->path, &names, &n));
    }
    int have_meta = 0;
    profiles = calloc(n + 1, sizeof *profiles);
    cfs = calloc(n + 1, sizeof *cfs);
    if (!profiles || !cfs) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    for (size_t i = 0; i < n; i++) {
        int cf;
        uint64_t g;
        if (!cmp_family_parse(names[i], &cf, &g)) cf = cmp_family_fixed(names[i]);
        profiles[i] = cmp_gen_profile(cf);
        if (cf == ST_CF_META) have_meta = 1;
    }
    if (!have_meta) ND_FAIL(ND_EINVAL, "%s is not a neardup database (no tables)", s->path);
    kv_open_opts ko = {.create = create, .readonly = s->readonly, .cache_bytes = cache_bytes,
                       .profiles = cmp_gen_profiles(), .nprofiles = CMP_PROFILES,
                       .scratch_dir = s->scratch_dir, .synced_seq = synced_seq};
    ND_TRY(kv_open(&s->kv, s->path, &ko, n, (const char *const *)names, profiles, cfs));
    for (size_t i = 0; i < n; i++) {
        int cf = cmp_family_fixed(names[i]);
        if (cf >= 0) {
            s->fixed[FIXED(cf)] = cfs[i];
            cfs[i] = NULL;
        }
    }
    ND_TRY(cmp_gen_read(s->kv, s->fixed[0], s->path, &gen, &keyed));
    ND_TRY(cmp_gen_adopt(&s->cur, s->kv, s->path, gen, keyed, n, names, cfs, s->readonly));
    s->ntables = s->cur->n;
cleanup:
    for (size_t i = 0; cfs && i < n; i++) kv_family_free(cfs[i]);
    if (create) free(names);
    else kv_names_free(names, n);
    free(fnames);
    free(profiles);
    free(cfs);
    return rc;
}

static int store_open(st_store **out, const char *path, const st_open_opts *o);

int st_open(st_store **out, const char *path, const st_open_opts *o)
{
    int rc = store_open(out, path, o);
    if (rc != 1) return rc;
    /* A read-only open found an expiry's deletions not all in (a crash
     * after its switch, or its writer at work): a writable open finishes
     * them, as any would, unless a writer holds the store. */
    st_open_opts w = *o;
    w.readonly = w.create = w.excl = 0;
    st_store *ws = NULL;
    if ((rc = store_open(&ws, path, &w)) == ND_OK) rc = st_close(ws);
    if (rc == ND_OK) rc = store_open(out, path, o);
    if (rc == 1 || rc == ND_EBUSY)
        return nd_err_set(ND_EBUSY, "database %s: an expiry or a load is finishing in the "
                                    "process that writes it; open it again when that is done", path);
    return rc < 0 ? nd_err_wrap(rc, "database %s: finishing an interrupted expiry or load", path) : rc;
}

/* st_open; 1 when read-only and an expiry's deletions are not all in. */
static int store_open(st_store **out, const char *path, const st_open_opts *o)
{
    int rc;
    unsigned major, minor;
    st_store *s = calloc(1, sizeof *s);
    ND_RETURN_IF(!s, ND_ENOMEM, "storage: out of memory");
    pthread_mutex_init(&s->gen_mu, NULL);
    pthread_mutex_init(&s->synced_mu, NULL);
    s->synced_docs = CMP_SYNCED_NO_DOCS;
    s->readonly = o->readonly;
    s->scratch_dir = o->scratch_dir;
    s->map_tables = o->map_tables;
    kv_version(&major, &minor);
    s->direct_ok = cmp_direct_supports(major, minor);
    atomic_store(&s->fill, 1);
    s->path = strdup(path);
    if (!s->path) ND_FAIL(ND_ENOMEM, "storage: out of memory");

    int exists;
    ND_TRY(kvdir_open_check(path, o->create, o->excl, o->readonly, &exists));
    if (!exists && (o->ntables == 0 || o->ntables > ND_MAX_TABLES))
        ND_FAIL(ND_EINVAL, "storage: %u tables (1..%u allowed)", o->ntables, ND_MAX_TABLES);
    /* Read before the open: a writer beside a reader writes its record
     * after the log's fsync, so what is read here the log holds. */
    cmp_synced_rec synced = {0};
    int have_synced = 0;
    if (exists) ND_TRY(cmp_synced_read(path, &synced, &have_synced));
    ND_TRY(open_db(s, !exists, o->ntables, o->resemblance, o->cache_bytes, synced.seq));
    if (!o->readonly) { /* a crash mid-way left them (the lock is ours now) */
        const char *names[4] = {ST_FILE_REGEN, ST_FILE_REGEN_DEL, ST_FILE_INGEST,
                                ST_FILE_BAND_INGEST};
        for (int i = 0; i < 4 + ST_CF_MAX; i++) {
            char fork[32];
            if (i >= 4) snprintf(fork, sizeof fork, ST_FILE_REGEN_FORK, i - 4);
            char *tmp = st_store_file(s, i < 4 ? names[i] : fork);
            if (!tmp) ND_FAIL(ND_ENOMEM, "storage: out of memory");
            (void)unlink(tmp);
            free(tmp);
        }
    }
    ND_TRY(cmp_fresh_new(&s->fresh, s->ntables));
    /* before anything reads docs or rev, or writes */
    ND_TRY(cmp_carry_recover(s));
    if (rc == 1) {
        free_store(s);
        return 1;
    }
    for (unsigned t = 0; t < s->ntables; t++) ND_TRY(st_mirror_repair(s, t));
    if (!o->readonly) /* what the WAL replayed: judge the run spaces from files alone */
        for (unsigned t = 0; t < s->ntables; t++) flush_family(s, s->cur->cf[ST_CF_TABLE(t)]);
    st_direct_remake(s, s->cur, all_tables(s->ntables));
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
    /* Flushing makes the next open fast (no WAL replay); a failure of it or
     * of a background job loses nothing (the WAL holds it all) but is
     * reported. Every family flushed, the MANIFEST holds the last sequence
     * and the synced record has nothing left to check (cmp_kv.cc). */
    int rc = s->readonly ? ND_OK : st_flush(s);
    if (rc == ND_OK && !s->readonly) rc = kv_background_check(s->kv, "closing");
    if (rc == ND_OK && !s->readonly) {
        (void)cmp_synced_close(s->synced, 0);
        s->synced = NULL;
        (void)cmp_synced_remove(s->path);
    }
    /* The record is best effort (note_synced), but a write of it that
     * failed is a failed write of the store's: said, at the end. */
    if (rc == ND_OK && s->synced_failed)
        rc = nd_err_set(ND_EIO, "%s (every acknowledged write is durable; the check of "
                        "synced writes at the next open was weaker)", s->synced_failed);
    free_store(s);
    return rc;
}

unsigned st_ntables(const st_store *s) { return s->ntables; }
kv_db *st_store_kv(st_store *s) { return s->kv; }

int st_store_writable(const st_store *s)
{
    ND_RETURN_IF(s->readonly, ND_EREADONLY, "database %s is open read-only", s->path);
    ND_RETURN_IF(atomic_load(&s->carry_unapplied), ND_EIO,
                 "database %s: a new generation's carried files are not all applied; close "
                 "and open it again to apply them before another write", s->path);
    return ND_OK;
}

/* ---- batches ---------------------------------------------------------- */

static int batch_new(st_batch **out, st_store *s, int indexed)
{
    st_batch *b = calloc(1, sizeof *b);
    ND_RETURN_IF(!b, ND_ENOMEM, "storage: out of memory");
    b->store = s;
    b->docs = CMP_SYNCED_NO_DOCS;
    int rc = kv_batch_new(&b->kb, indexed);
    if (rc < 0) {
        free(b);
        return rc;
    }
    *out = b;
    return ND_OK;
}

int st_batch_new(st_batch **out, st_store *s) { return batch_new(out, s, 1); }
int st_batch_new_plain(st_batch **out, st_store *s) { return batch_new(out, s, 0); }
kv_batch *st_batch_kv(st_batch *b) { return b->kb; }

void st_batch_free(st_batch *b)
{
    if (!b) return;
    kv_batch_free(b->kb);
    cmp_flog_dispose(&b->log);
    free(b);
}

void st_batch_clear(st_batch *b)
{
    kv_batch_clear(b->kb);
    cmp_flog_clear(&b->log);
    b->next = NULL;
    b->gen_ops = 0;
    b->docs = CMP_SYNCED_NO_DOCS;
    memset(b->touched, 0, sizeof b->touched);
}

size_t st_batch_count(const st_batch *b) { return kv_batch_count(b->kb); }
void st_batch_note_docs(st_batch *b, uint64_t docs) { b->docs = docs; }

/* A batch that switches generations writes only meta: anything else
 * would land in the families it is about to drop. */
static int gen_op(st_batch *b, int cf)
{
    if (!ST_CF_GENERATIONAL(cf)) return ND_OK;
    ND_RETURN_IF(b->next, ND_EINVAL, "storage: a batch that switches generations writes only meta");
    b->gen_ops++;
    b->touched[cf] = 1;
    return ND_OK;
}

int st_batch_put(st_batch *b, int cf, const void *key, size_t klen, const void *val,
                 size_t vlen)
{
    if (ST_CF_IS_TABLE(cf))
        ND_FORWARD(cmp_flog_note(&b->log, (unsigned)(cf - ST_CF_TABLE0), key, klen, 1));
    ND_FORWARD(gen_op(b, cf));
    kv_batch_put(b->kb, st_family(b->store, NULL, cf), key, klen, val, vlen);
    return ND_OK;
}

int st_batch_delete(st_batch *b, int cf, const void *key, size_t klen)
{
    if (ST_CF_IS_TABLE(cf))
        ND_FORWARD(cmp_flog_note(&b->log, (unsigned)(cf - ST_CF_TABLE0), key, klen, 0));
    ND_FORWARD(gen_op(b, cf));
    kv_batch_delete(b->kb, st_family(b->store, NULL, cf), key, klen);
    return ND_OK;
}

int st_batch_delete_range(st_batch *b, int cf, const void *lo, size_t lolen, const void *hi,
                          size_t hilen)
{
    ND_RETURN_IF(kv_batch_indexed(b->kb) || cf >= ST_CF_TABLE0, ND_EINVAL,
                 "storage: a range deletion needs a plain batch and a family other than a table");
    ND_FORWARD(gen_op(b, cf));
    return kv_batch_delete_range(b->kb, st_family(b->store, NULL, cf), lo, lolen, hi, hilen);
}

int st_batch_get(st_store *s, st_batch *b, int cf, const void *key, size_t klen,
                 char **out_val, size_t *out_len)
{
    /* A writer's indexed batch: the current generation stays current
     * meanwhile. A plain one reads the database alone, as st_get. */
    cmp_gen *g = !kv_batch_indexed(b->kb) && ST_CF_GENERATIONAL(cf) ? st_gen_acquire(s) : NULL;
    int rc = kv_batch_get(s->kv, b->kb, st_family(s, g, cf), atomic_load(&s->fill), key, klen,
                          out_val, out_len);
    st_gen_release(s, g);
    return rc;
}

int st_table_insert_mirrored(st_batch *b, unsigned t, uint64_t pfp)
{
    uint8_t kb[TBL_KEY_LEN];
    tbl_key(kb, TBL_FRESH, pfp);
    return cmp_flog_note(&b->log, t, kb, sizeof kb, 1);
}

int st_batch_switch(st_batch *b, cmp_gen *next, unsigned carry)
{
    char v[48];
    ND_RETURN_IF(b->gen_ops, ND_EINVAL, "storage: a batch that switches generations writes only meta");
    size_t len = cmp_gen_record_format(v, next->gen, next->keyed_gen);
    ND_FORWARD(st_batch_put(b, ST_CF_META, CMP_GEN_KEY, strlen(CMP_GEN_KEY), v, len));
    if (carry) {
        ND_FORWARD(cmp_carry_value(b->store, carry, v, &len));
        ND_FORWARD(st_batch_put(b, ST_CF_META, CMP_CARRY_KEY, strlen(CMP_CARRY_KEY), v, len));
    }
    b->next = next, b->carry = carry;
    return ND_OK;
}

/* After the write of the batch that records it: next becomes current and
 * the old families are dropped (their files go when the last iterator
 * reading them does). */
static void switch_to(st_store *s, cmp_gen *next)
{
    /* (carried docs and rev hold the deletions ingested over them) */
    for (int cf = next->keyed_gen == next->gen ? ST_CF_DOCS : ST_CF_TABLE0;
         cf < ST_CF_TABLE((int)next->n); cf++)
        atomic_store(&next->settled[cf], 1);
    pthread_mutex_lock(&s->gen_mu);
    cmp_gen *old = s->cur;
    next->refs++; /* the store's; the batch's owner keeps its own */
    next->made_current = 1;
    s->cur = next;
    pthread_mutex_unlock(&s->gen_mu);
    /* A failure leaves a stale generation that the next writable open
     * drops; the switch itself is already durable. */
    cmp_gen_drop_families(s->kv, old, next);
    st_gen_release(s, old);
    fill_refresh(s);
}

/* After a synced write: its sequence number and document counter into
 * the record (cmp_synced.h). Best effort: the write is durable already,
 * and a record not written leaves the older one, a weaker check, never a
 * false one. Writers are serialised (the engine's writer lock; the fold
 * takes it too), so the latest sequence number is this write's. */
static void note_synced(st_store *s, const cmp_synced_rec *r)
{
    pthread_mutex_lock(&s->synced_mu);
    int rc = s->synced ? ND_OK : cmp_synced_open(&s->synced, s->path);
    if (rc == ND_OK) rc = cmp_synced_put(s->synced, r);
    /* (a write that failed, not an allocation: the record stays as it was) */
    if (rc == ND_EIO && !s->synced_failed) s->synced_failed = strdup(nd_errmsg());
    pthread_mutex_unlock(&s->synced_mu);
    if (rc < 0) nd_err_clear();
}

int st_write(st_store *s, st_batch *b, int sync)
{
    ND_FORWARD(st_store_writable(s));
    int runs = b->log.runs || b->next;
    /* A batch that switches generations is always synced: the old
     * families are dropped right after, and that drop is durable at once. */
    if (b->next) sync = 1;
    if (runs) atomic_fetch_add(&s->runs_seq, 1);
    if (b->log.dels) atomic_fetch_add(&s->dels_seq, 1);
    if (b->log.runs) st_direct_drop(s, b->log.runs);
    int rc = kv_write(s->kv, b->kb, sync);
    if (rc == ND_OK && b->gen_ops) {
        /* writes go to the current generation's families (the writer is
         * serialised, so it is still current) */
        for (size_t cf = 0; cf < sizeof b->touched; cf++)
            if (b->touched[cf]) atomic_store(&s->cur->settled[cf], 0);
    }
    if (rc == ND_OK && b->docs != CMP_SYNCED_NO_DOCS) s->synced_docs = b->docs;
    if (rc == ND_OK && sync) {
        cmp_synced_rec r = {kv_latest_seq(s->kv), s->synced_docs};
        note_synced(s, &r);
    }
    if (rc == ND_OK) cmp_fresh_commit(s->fresh, &b->log);
    /* carried deletions in before the switch shows (cmp_carry.h) */
    if (rc == ND_OK && b->next && b->carry) rc = cmp_carry_apply(s, b->next, b->carry);
    if (rc == ND_OK && b->next) switch_to(s, b->next);
    if (rc == ND_OK && b->next && b->carry) rc = cmp_carry_done(s);
    if (runs) atomic_fetch_add(&s->runs_seq, 1);
    if (rc == ND_OK && (atomic_fetch_add(&s->write_seq, 1) + 1) % FILL_REFRESH_WRITES == 0)
        fill_refresh(s);
    return rc;
}

/* The sequence number is read before the log's sync: every write up to
 * it is in the log the sync makes durable (a write that races in after
 * is not claimed). The caller holds the writer lock, so the document
 * counter is that sequence's. */
int st_sync(st_store *s)
{
    ND_FORWARD(st_store_writable(s));
    cmp_synced_rec r = {kv_latest_seq(s->kv), s->synced_docs};
    ND_FORWARD(kv_sync_wal(s->kv));
    note_synced(s, &r);
    return ND_OK;
}

uint64_t st_write_seq(st_store *s) { return atomic_load(&s->write_seq); }
uint64_t st_runs_seq(st_store *s) { return atomic_load(&s->runs_seq); }
uint64_t st_latest_seq(st_store *s) { return kv_latest_seq(s->kv); }
uint64_t st_dels_seq(st_store *s) { return atomic_load(&s->dels_seq); }

/* ---- whole database --------------------------------------------------- */

/* Has the writer moved its MANIFEST since this reader's view was read? */
static int view_moved(const st_store *s, const char *view)
{
    char now[KVDIR_STATE_MAX];
    kvdir_manifest_state(s->path, now, sizeof now);
    return strcmp(now, view) != 0;
}

int st_checkpoint(st_store *s, const char *dir)
{
    struct stat st;
    const char *view = kv_view(s->kv);
    ND_RETURN_IF(stat(dir, &st) == 0, ND_EEXIST, "backup target %s already exists", dir);
    /* A killed checkpoint leaves its work in dir.tmp: RocksDB empties and
     * reuses it. */
    /* A reader's checkpoint is its view's files and the writer's logs as
     * they are: one state only while the writer's MANIFEST stays as in
     * the view (a flush or a fold moves it, then deletes logs or files). */
    ND_RETURN_IF(view && view_moved(s, view), ND_EBUSY,
                 "%s: a writer changed the database since this reader opened it; a new "
                 "reader can take the backup",
                 s->path);
    int rc = kv_checkpoint(s->kv, dir);
    if (view && (rc == ND_OK || rc == ND_EIO || rc == ND_ENOTFOUND) && view_moved(s, view)) {
        if (rc == ND_OK) (void)kvdir_remove_checkpoint(dir);
        rc = nd_err_set(ND_EBUSY, "%s: a writer changed the database during the backup; try again",
                        s->path);
    }
    /* A checkpoint that failed at its end (the fsync of the directory it
     * renamed into place) leaves a whole directory that a retry would
     * refuse as existing: a failed backup leaves none. */
    if (rc < 0 && stat(dir, &st) == 0) (void)kvdir_remove_checkpoint(dir);
    return rc;
}

int st_disk_bytes(st_store *s, uint64_t *out)
{
    *out = 0;
    DIR *d = opendir(s->path);
    ND_RETURN_IF(!d, ND_EIO, "cannot list %s: %s", s->path, strerror(errno));
    struct dirent *e;
    char buf[4096];
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.') continue;
        snprintf(buf, sizeof buf, "%s/%s", s->path, e->d_name);
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) *out += (uint64_t)st.st_size;
    }
    closedir(d);
    return ND_OK;
}

int st_flush(st_store *s)
{
    if (s->readonly) return ND_OK;
    int rc = ND_OK;
    cmp_gen *g = st_gen_acquire(s);
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)g->n) && rc == ND_OK; cf++)
        rc = kv_flush(s->kv, st_family(s, g, cf));
    st_gen_release(s, g);
    for (int i = 0; i < 3 && rc == ND_OK; i++)
        rc = s->fixed[i] ? kv_flush(s->kv, s->fixed[i]) : ND_OK;
    return rc;
}

int st_family_settled(st_store *s, int cf)
{
    if (!ST_CF_GENERATIONAL(cf)) return 0;
    cmp_gen *g = st_gen_acquire(s);
    int settled = atomic_load(&g->settled[cf]);
    st_gen_release(s, g);
    return settled;
}

int st_compact_tables(st_store *s)
{
    if (s->readonly) return ND_OK;
    int rc = ND_OK;
    cmp_gen *g = st_gen_acquire(s);
    for (unsigned t = 0; t < g->n && rc == ND_OK && !atomic_load(&s->stop_compacting); t++) {
        /* Writers go on meanwhile: fresh entries may reach the memtables,
         * but a run key only with a run-space write, which moves runs_seq
         * (and drops the direct reader). So if runs_seq is where it was
         * before the compaction (which flushes the memtables first), the
         * files alone hold the run space. RocksDB's own compactions (of
         * flushed fresh entries, docs, rev) go on beside it. */
        uint64_t seq = atomic_load(&s->runs_seq);
        if (seq & 1) continue; /* a run-space write is being applied */
        rc = kv_compact(s->kv, g->cf[ST_CF_TABLE(t)], 0);
        cmp_direct *d = rc == ND_OK ? direct_make(s, g, t, 1) : NULL;
        if (d) st_direct_swap(s, g, t, d, &seq);
    }
    st_gen_release(s, g);
    return rc;
}

void st_stop_compacting(st_store *s, int stop)
{
    atomic_store(&s->stop_compacting, stop);
    kv_compactions_stop(s->kv, stop);
}

int st_compact_files(st_store *s)
{
    if (s->readonly) return ND_OK;
    ND_FORWARD(st_flush(s));
    int rc = ND_OK;
    cmp_gen *g = st_gen_acquire(s);
    for (int i = 0; i < 3 && rc == ND_OK; i++)
        rc = s->fixed[i] ? kv_compact(s->kv, s->fixed[i], 1) : ND_OK;
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)g->n) && rc == ND_OK; cf++)
        if (!st_family_settled(s, cf)) rc = kv_compact(s->kv, st_family(s, g, cf), 1);
    st_direct_remake(s, g, all_tables(g->n));
    st_gen_release(s, g);
    fill_refresh(s);
    return rc;
}
