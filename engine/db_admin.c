/*
 * db_admin.c — compaction (and its background thread), statistics,
 * verification, backup and document iteration.
 *
 * Verification never holds a table in memory: for each table it folds the
 * unpermuted fingerprints into a count and two order-independent digests
 * (a sum and a xor of two different 64-bit mixes), compares them across
 * tables and with the distinct fingerprints of the rev family, and checks
 * that docs and rev pair up one to one.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "nd_endian.h"
#include "nd_error.h"

/* ---- folding ---------------------------------------------------------- */

static void lock_writer(void *p) { pthread_mutex_lock(&((nd_db *)p)->write_mu); }

/* Between two fold steps: a mutex is not fair, and the fold thread would
 * take it back before a waiting writer wakes up; a short sleep lets the
 * writer in (the fold's thousands of steps lose a few ms in all). */
static void unlock_writer(void *p)
{
    pthread_mutex_unlock(&((nd_db *)p)->write_mu);
    struct timespec ts = {0, 20 * 1000};
    nanosleep(&ts, NULL);
}

/* After a fold moved n fresh entries of table t into runs (written). */
static void fresh_lower(nd_db *db, unsigned t, uint64_t n)
{
    uint64_t cur = atomic_load(&db->fresh_live[t]);
    while (!atomic_compare_exchange_weak(&db->fresh_live[t], &cur, cur > n ? cur - n : 0)) {
    }
}

/* Fold table t. Where its fresh entries fall into most runs (about one
 * per REFOLD_RUNS runs or more) the table is rewritten in one sequential
 * pass (st_table_refold: no seek per run, nothing through the WAL); else,
 * or if a write during that pass deleted or changed runs, run by run
 * (st_table_fold). What writers added during a refold stays fresh unless
 * all (nd_compact): folding it run by run would write the run space and
 * so take the table's direct reader away until a compaction.
 * fps: the store's fingerprints, one entry each. */
#define REFOLD_RUNS 4
static int fold_table(nd_db *db, unsigned t, uint64_t fps, int all, st_lock_fn lock,
                      st_lock_fn unlock, uint64_t *folded)
{
    uint64_t fresh = atomic_load(&db->fresh_live[t]), more = 0;
    *folded = 0;
    if (fresh && fresh * db->run_size * REFOLD_RUNS >= fps) {
        ND_FORWARD(st_table_refold(db->store, t, db->run_size, lock, unlock, db, folded));
        if (*folded && !all) return ND_OK;
    }
    int rc = st_table_fold(db->store, t, db->run_size, db->sync, lock, unlock, db, &more);
    *folded += more;
    return rc;
}

int db_fold_all(nd_db *db, int all)
{
    int rc = ND_OK;
    pthread_mutex_lock(&db->fold_mu);
    db_write_lock(db);
    /* The fold reads the fresh space from RocksDB: the entries waiting
     * in the mirror get their keys first. */
    rc = db_mirrored_flush(db);
    if (rc == ND_OK) db->fresh_pending = 0;
    uint64_t fps = db->nfps;
    pthread_mutex_unlock(&db->write_mu);
    for (unsigned t = 0; t < db->plan.info.tables && rc == ND_OK; t++) {
        uint64_t folded = 0;
        rc = fold_table(db, t, fps, all, lock_writer, unlock_writer, &folded);
        fresh_lower(db, t, folded);
    }
    pthread_mutex_unlock(&db->fold_mu);
    return rc;
}

int db_fold_locked(nd_db *db)
{
    int rc = db_mirrored_flush(db);
    db->fresh_pending = 0;
    for (unsigned t = 0; t < db->plan.info.tables && rc == ND_OK; t++) {
        uint64_t folded;
        rc = fold_table(db, t, db->nfps, 1, NULL, NULL, &folded);
        /* No writer could run: the fresh space is now empty. */
        if (rc == ND_OK) atomic_store(&db->fresh_live[t], 0);
    }
    return rc;
}

int nd_compact(nd_db *db)
{
    ND_FORWARD(db_check_writable(db));
    ND_FORWARD(db_fold_all(db, 1));
    /* The fold deleted fresh keys and rewritten runs, expire deleted
     * documents: RocksDB keeps their bytes until its files are compacted. */
    return st_compact_files(db->store);
}

static void *bg_main(void *p)
{
    nd_db *db = p;
    pthread_mutex_lock(&db->bg_mu);
    while (!db->bg_stop) {
        if (!db->bg_kick) {
            pthread_cond_wait(&db->bg_cv, &db->bg_mu);
            continue;
        }
        db->bg_kick = 0;
        pthread_mutex_unlock(&db->bg_mu);
        /* A failed background fold leaves the tables as they were (each
         * step is atomic); the next kick or nd_compact tries again. After
         * a fold its rewritten runs are spread over new files, read
         * through RocksDB (10M, 4 tables: k=3 p50 25 -> 110 us) until a
         * compaction makes each table's runs one file again. */
        if (db_fold_all(db, 0) == ND_OK) (void)st_compact_tables(db->store);
        pthread_mutex_lock(&db->bg_mu);
    }
    pthread_mutex_unlock(&db->bg_mu);
    return NULL;
}

int db_bg_start(nd_db *db)
{
    ND_RETURN_IF(pthread_create(&db->bg, NULL, bg_main, db) != 0, ND_ENOMEM,
                 "cannot start the background fold thread");
    db->bg_started = 1;
    return ND_OK;
}

void db_bg_stop(nd_db *db)
{
    if (!db->bg_started) return;
    pthread_mutex_lock(&db->bg_mu);
    db->bg_stop = 1;
    pthread_cond_signal(&db->bg_cv);
    pthread_mutex_unlock(&db->bg_mu);
    /* A compaction after a fold may take minutes at 100M: cut it short
     * (the files stay as they were; the next fold compacts again). */
    st_stop_compacting(db->store, 1);
    pthread_join(db->bg, NULL);
    st_stop_compacting(db->store, 0);
    db->bg_started = 0;
}

/* A fold rewrites every run a fresh entry falls into: with fewer fresh
 * entries than runs each costs a run rewrite (and the compaction after
 * rewrites every table), so by default a fold waits for about one per
 * run, at least DB_DEFAULT_FOLD_THRESHOLD. At 100M with 10 tables that is
 * 7.8M entries (a fold every 780k documents; the mirror holds them in
 * about 16 bytes each) where a fixed 1M folded every 100k. */
uint64_t db_fold_threshold(uint64_t option, uint64_t fps, unsigned tables, unsigned run_size)
{
    if (option) return option;
    uint64_t per_run = fps / (run_size ? run_size : 1) * tables;
    return per_run > DB_DEFAULT_FOLD_THRESHOLD ? per_run : DB_DEFAULT_FOLD_THRESHOLD;
}

void db_fold_kick(nd_db *db)
{
    if (!db->bg_started) return;
    db_write_lock(db);
    int due = db->fresh_pending >=
              db_fold_threshold(db->fold_threshold, db->nfps, db->plan.info.tables, db->run_size);
    if (due) db->fresh_pending = 0;
    pthread_mutex_unlock(&db->write_mu);
    if (!due) return;
    pthread_mutex_lock(&db->bg_mu);
    db->bg_kick = 1;
    pthread_cond_signal(&db->bg_cv);
    pthread_mutex_unlock(&db->bg_mu);
}

/* ---- statistics ------------------------------------------------------- */

static int stats_cb(const uint64_t *e, size_t n, int is_run, size_t bytes, void *payload)
{
    (void)e;
    nd_table_stats *ts = payload;
    ts->entries += n;
    if (is_run) ts->runs++;
    else ts->fresh++;
    ts->bytes += bytes;
    return 0;
}

int nd_db_count(const nd_db *db, uint64_t *docs, uint64_t *fingerprints)
{
    ND_RETURN_IF(!db, ND_EINVAL, "nd_db_count: NULL database");
    nd_db *m = (nd_db *)db; /* the lock is not part of the logical state */
    pthread_mutex_lock(&m->write_mu);
    if (docs) *docs = db->ndocs;
    if (fingerprints) *fingerprints = db->nfps;
    pthread_mutex_unlock(&m->write_mu);
    return ND_OK;
}

int nd_stats_get(nd_stats *out, nd_db *db)
{
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_stats_get: NULL argument");
    memset(out, 0, sizeof *out);
    db_write_lock(db);
    out->documents = db->ndocs;
    out->fingerprints = db->nfps;
    pthread_mutex_unlock(&db->write_mu);
    out->tables = db->plan.info.tables;
    for (unsigned t = 0; t < out->tables; t++) {
        nd_table_stats *ts = &out->table[t];
        ts->prefix_bits = db->plan.table[t].prefix_bits;
        ND_FORWARD(db_mirrored_scan(db, t, stats_cb, ts, 1));
        ts->bits_per_entry = ts->entries ? 8.0 * (double)ts->bytes / (double)ts->entries : 0;
    }
    return st_disk_bytes(db->store, &out->disk_bytes);
}

/* ---- verification ----------------------------------------------------- */

typedef struct digest {
    uint64_t count, sum, x;
} digest;

static uint64_t mix1(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t mix2(uint64_t z)
{
    z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
    z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return z ^ (z >> 33);
}

static void digest_add(digest *d, uint64_t fp)
{
    d->count++;
    d->sum += mix1(fp);
    d->x ^= mix2(fp);
}

typedef struct verify_table {
    nd_db *db;
    unsigned t;
    digest d;
} verify_table;

static int verify_cb(const uint64_t *e, size_t n, int is_run, size_t bytes, void *payload)
{
    (void)is_run;
    (void)bytes;
    verify_table *v = payload;
    for (size_t i = 0; i < n; i++) digest_add(&v->d, nd_perm_invert(&v->db->plan.table[v->t], e[i]));
    return 0;
}

/* Distinct fingerprints of rev and its entry count. */
static int rev_digest(nd_db *db, digest *d, uint64_t *entries)
{
    st_iter *it;
    int rc, have = 0;
    uint64_t last = 0;
    *entries = 0;
    ND_FORWARD(st_iter_new(&it, db->store, ST_CF_REV, NULL, 1));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen;
        const char *k = st_iter_key(it, &klen);
        if (klen <= 8) ND_FAIL(ND_ECORRUPT, "rev family: key of %zu bytes", klen);
        uint64_t fp = nd_load_be64(k);
        (*entries)++;
        if (!have || fp != last) digest_add(d, fp);
        have = 1;
        last = fp;
    }
    rc = st_iter_status(it);
cleanup:
    st_iter_free(it);
    return rc;
}

/* Every document has its rev entry, which holds the same score and time
 * (or, written before format 3, none); returns the number of documents. */
static int docs_check(nd_db *db, uint64_t *ndocs)
{
    st_iter *it;
    uint8_t *rk = malloc(8 + ND_MAX_KEY_LEN);
    int rc;
    *ndocs = 0;
    ND_RETURN_IF(!rk, ND_ENOMEM, "verify: out of memory");
    rc = st_iter_new(&it, db->store, ST_CF_DOCS, NULL, 1);
    if (rc < 0) {
        free(rk);
        return rc;
    }
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen, rlen;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        uint64_t fp;
        char *rv;
        if (klen == 0 || klen > ND_MAX_KEY_LEN) ND_FAIL(ND_ECORRUPT, "docs family: key of %zu bytes", klen);
        ND_TRY(db_doc_decode(v, vlen, &fp, NULL, NULL));
        rc = st_get(db->store, ST_CF_REV, rk, db_rev_key_encode(rk, fp, k, klen), &rv, &rlen);
        if (rc == ND_ENOTFOUND)
            ND_FAIL(ND_ECORRUPT, "document '%.*s' has no rev entry for %016llx",
                    (int)(klen > 80 ? 80 : klen), k, (unsigned long long)fp);
        if (rc < 0) goto cleanup;
        /* The bytes compared: a rev value is the doc value after its fp. */
        int same = rlen == 0 ||
                   (rlen == DB_REV_VALUE_LEN && memcmp(rv, DB_REV_VALUE(v), rlen) == 0);
        free(rv);
        if (!same)
            ND_FAIL(ND_ECORRUPT, "document '%.*s': its rev entry holds another score or time",
                    (int)(klen > 80 ? 80 : klen), k);
        (*ndocs)++;
    }
    rc = st_iter_status(it);
cleanup:
    st_iter_free(it);
    free(rk);
    return rc;
}

int nd_verify(nd_db *db)
{
    digest rd = {0};
    uint64_t rev_entries, ndocs;
    ND_RETURN_IF(!db, ND_EINVAL, "nd_verify: NULL database");
    ND_FORWARD(rev_digest(db, &rd, &rev_entries));
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        verify_table v = {db, t, {0}};
        ND_FORWARD(db_mirrored_scan(db, t, verify_cb, &v, 1));
        if (v.d.count != rd.count || v.d.sum != rd.sum || v.d.x != rd.x)
            return nd_err_set(ND_ECORRUPT,
                              "table %u holds %llu fingerprints that differ from the %llu "
                              "the documents reference",
                              t, (unsigned long long)v.d.count, (unsigned long long)rd.count);
    }
    ND_FORWARD(docs_check(db, &ndocs));
    ND_RETURN_IF(ndocs != rev_entries, ND_ECORRUPT,
                 "%llu documents but %llu rev entries", (unsigned long long)ndocs,
                 (unsigned long long)rev_entries);
    db_write_lock(db);
    uint64_t cd = db->ndocs, cf = db->nfps;
    pthread_mutex_unlock(&db->write_mu);
    ND_RETURN_IF(cd != ndocs || cf != rd.count, ND_ECORRUPT,
                 "counters say %llu documents / %llu fingerprints; found %llu / %llu",
                 (unsigned long long)cd, (unsigned long long)cf, (unsigned long long)ndocs,
                 (unsigned long long)rd.count);
    return ND_OK;
}

/* ---- backup and iteration --------------------------------------------- */

int nd_backup(nd_db *db, const char *dir)
{
    ND_RETURN_IF(!db || !dir || !*dir, ND_EINVAL, "nd_backup: NULL or empty argument");
    return st_checkpoint(db->store, dir);
}

typedef struct expired_filter {
    int64_t before;
    nd_doc_cb cb;
    void *payload;
} expired_filter;

static int visit_if_expired(const nd_doc *doc, void *payload)
{
    expired_filter *f = payload;
    return db_doc_expired(doc->time, f->before) ? f->cb(doc, f->payload) : 0;
}

int nd_foreach_expired(nd_db *db, int64_t before, nd_doc_cb cb, void *payload)
{
    ND_RETURN_IF(!db || !cb, ND_EINVAL, "nd_foreach_expired: NULL argument");
    expired_filter f = {before, cb, payload};
    return nd_foreach_doc(db, visit_if_expired, &f);
}

int nd_foreach_doc(nd_db *db, nd_doc_cb cb, void *payload)
{
    st_iter *it;
    int rc;
    ND_RETURN_IF(!db || !cb, ND_EINVAL, "nd_foreach_doc: NULL argument");
    ND_FORWARD(st_iter_new(&it, db->store, ST_CF_DOCS, NULL, 1));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        nd_doc d;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        ND_TRY(db_doc_decode(v, vlen, &d.fp, &d.score, &d.time));
        d.key = k;
        d.key_len = klen;
        rc = cb(&d, payload);
        if (rc) goto cleanup;
    }
    rc = st_iter_status(it);
cleanup:
    st_iter_free(it);
    return rc;
}
