/*
 * db_admin.c — whole-database operations: compaction, counts and
 * statistics, verification, backup and document iteration.
 *
 * Verification never holds a table in memory: for each table it folds the
 * unpermuted fingerprints into a count and two order-independent digests
 * (a sum and a xor of two different 64-bit mixes), compares them across
 * tables and with the distinct fingerprints of the rev family, and checks
 * that docs and rev pair up one to one. In a resemblance store every
 * document must have a well-formed sketch and the ND_SKETCH_BANDS band
 * entries it names; the sketch and band families must hold exactly one
 * and ND_SKETCH_BANDS entries a document, so none belongs to no document.
 *
 * Invariant: nothing here writes documents; stats and verify read the
 * tables through db_mirrored_scan (the mirror's waiting entries flushed
 * first on a writable store), counts under the writer lock. Callers: the
 * public API only.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_bands.h"
#include "db_core.h"
#include "db_fold.h"
#include "db_mirrored.h"
#include "nd_bytes.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "nd_task.h"

/* ---- compaction ------------------------------------------------------- */

/* The compaction of the files is one RocksDB call that reports nothing
 * and takes minutes at 100M (188 s): with a progress callback it runs on
 * a thread of its own while the caller asks the callback every
 * COMPACT_ASK_US, and a stop cancels it (st_stop_compacting: RocksDB ends
 * its manual compactions, each job of which is atomic). */
#define COMPACT_ASK_US 50000

typedef struct compact_job {
    st_store *s;
    atomic_int done;
} compact_job;

static int compact_task(void *arg)
{
    compact_job *j = arg;
    int rc = st_compact_files(j->s);
    atomic_store(&j->done, 1);
    return rc;
}

static int compact_files(nd_db *db)
{
    if (!db->progress) return st_compact_files(db->store);
    compact_job j = {db->store, 0};
    nd_task task;
    int stop = 0;
    nd_task_start(&task, compact_task, &j, 1);
    /* asked at once, then every COMPACT_ASK_US until the files are done
     * (the thread waits for RocksDB's workers: made whatever the handle's
     * thread count) */
    do {
        if ((stop = db_progress(db, "compacting", "files", 0, 1)) != 0) {
            st_stop_compacting(db->store, 1);
            break;
        }
        if (!atomic_load(&j.done)) usleep(COMPACT_ASK_US);
    } while (!atomic_load(&j.done));
    int rc = nd_task_wait(&task, ND_OK);
    if (!stop) return rc;
    st_stop_compacting(db->store, 0);
    /* the cancelled compaction's error is not the answer */
    return stop > 0 ? stop : nd_err_set(ND_ESTOPPED, "compacting: stopped by the progress callback");
}

int nd_db_compact(nd_db *db)
{
    int rc;
    ND_FORWARD(db_check_writable(db));
    if ((rc = db_fold_all(db, 1)) != 0) return rc; /* an error, or stopped */
    ND_FORWARD(db_bands_flush_now(db));
    /* The fold deleted fresh keys and rewritten runs, expire deleted
     * documents: RocksDB keeps their bytes until its files are compacted
     * (one call of RocksDB's, which reports nothing on its way). */
    if ((rc = db_progress(db, "compacting", "files", 0, 1)) != 0) return rc;
    if ((rc = compact_files(db)) != 0) return rc;
    return db_progress(db, "compacting", "files", 1, 1);
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

int nd_db_counts(uint64_t *docs, uint64_t *fingerprints, const nd_db *db)
{
    ND_RETURN_IF(!db, ND_EINVAL, "nd_db_counts: NULL database");
    nd_db *m = (nd_db *)db; /* the lock is not part of the logical state */
    pthread_mutex_lock(&m->write.mu);
    if (docs) *docs = db->write.docs;
    if (fingerprints) *fingerprints = db->write.fps;
    pthread_mutex_unlock(&m->write.mu);
    return ND_OK;
}

/* Entries of family cf and the bytes of their keys and values; with
 * check (the band family), each key is a band entry's and its value empty.
 * The band family's count includes the entries in memory: written first
 * (a writable store), or added (a read-only one). */
static int family_count(nd_db *db, int cf, int check, uint64_t *n, uint64_t *bytes)
{
    st_iter *it;
    int rc = ND_OK;
    *n = 0;
    if (bytes) *bytes = 0;
    if (cf == ST_CF_BAND) {
        uint64_t un, ub;
        ND_FORWARD(db_bands_flush_now(db));
        ND_FORWARD(db_bands_unflushed(db, &un, &ub));
        *n = un;
        if (bytes) *bytes = ub;
    }
    ND_FORWARD(st_iter_new_scan(&it, db->store, cf));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen);
        (void)st_iter_value(it, &vlen);
        if (check && (klen <= DB_BAND_PREFIX_LEN || klen > DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN ||
                      (unsigned char)k[0] >= ND_SKETCH_BANDS || vlen != 0)) {
            rc = nd_err_set(ND_ECORRUPT, "band family: a malformed entry (%zu-byte key, band %u, "
                            "%zu-byte value)", klen, klen ? (unsigned)(unsigned char)k[0] : 0u,
                            vlen);
            break;
        }
        (*n)++;
        if (bytes) *bytes += klen + vlen;
    }
    if (rc == ND_OK) rc = st_iter_status(it);
    st_iter_free(it);
    return rc;
}

int nd_db_stats(nd_stats *out, nd_db *db)
{
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_db_stats: NULL argument");
    memset(out, 0, sizeof *out);
    out->min_resemblance = db->min_resemblance;
    if (db->min_resemblance > 0) {
        uint64_t bytes;
        ND_FORWARD(family_count(db, ST_CF_SKETCH, 0, &out->sketches, &out->sketch_bytes));
        ND_FORWARD(family_count(db, ST_CF_BAND, 0, &out->band_keys, &bytes));
        out->sketch_bytes += bytes;
    }
    db_write_lock(db);
    out->documents = db->write.docs;
    out->fingerprints = db->write.fps;
    db_write_unlock(db);
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

/* A resemblance store's document key: a well-formed sketch, and its band
 * entries. */
static int sketch_check(nd_db *db, const char *k, size_t klen)
{
    char *v = NULL;
    size_t vlen;
    nd_sketch sk;
    int show = (int)(klen > 80 ? 80 : klen);
    int rc = st_get(db->store, ST_CF_SKETCH, k, klen, &v, &vlen);
    if (rc == ND_ENOTFOUND)
        return nd_err_set(ND_ECORRUPT, "document '%.*s' has no sketch", show, k);
    ND_FORWARD(rc);
    rc = db_sketch_decode(v, vlen, &sk);
    free(v);
    if (rc < 0) return nd_err_wrap(rc, "document '%.*s'", show, k);
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) {
        int has;
        ND_FORWARD(db_bands_has(db, b, sk.band[b], k, klen, &has));
        if (!has)
            return nd_err_set(ND_ECORRUPT, "document '%.*s' lacks the entry of its band %u",
                              show, k, b);
    }
    return ND_OK;
}

/* Every document has its rev entry, which holds the same score and time
 * (or, written before format 3, none), and in a resemblance store its
 * sketch and band entries; returns the number of documents. */
static int docs_check(nd_db *db, uint64_t *ndocs)
{
    st_iter *it;
    uint8_t *rk = malloc(8 + ND_MAX_KEY_LEN);
    int rc;
    *ndocs = 0;
    ND_RETURN_IF(!rk, ND_ENOMEM, "verify: out of memory");
    uint64_t total = 0;
    nd_db_counts(&total, NULL, db);
    rc = st_iter_new(&it, db->store, ST_CF_DOCS, NULL, 1);
    if (rc < 0) {
        free(rk);
        return rc;
    }
    if ((rc = db_progress(db, "documents", "documents", 0, total)) != 0) goto cleanup;
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
        if (db->min_resemblance > 0) ND_TRY(sketch_check(db, k, klen));
        (*ndocs)++;
        if ((rc = db_progress_tick(db, "documents", "documents", *ndocs, total)) != 0) goto cleanup;
    }
    rc = st_iter_status(it);
    if (rc == ND_OK) rc = db_progress(db, "documents", "documents", *ndocs, total);
cleanup:
    st_iter_free(it);
    free(rk);
    return rc;
}

int nd_db_verify(nd_db *db)
{
    digest rd = {0};
    uint64_t rev_entries, ndocs;
    ND_RETURN_IF(!db, ND_EINVAL, "nd_db_verify: NULL database");
    unsigned tables = db->plan.info.tables;
    int rc;
    if ((rc = db_progress(db, "tables", "tables", 0, tables)) != 0) return rc;
    ND_FORWARD(rev_digest(db, &rd, &rev_entries));
    for (unsigned t = 0; t < tables; t++) {
        verify_table v = {db, t, {0}};
        ND_FORWARD(db_mirrored_scan(db, t, verify_cb, &v, 1));
        if ((rc = db_progress(db, "tables", "tables", t + 1, tables)) != 0) return rc;
        if (v.d.count != rd.count || v.d.sum != rd.sum || v.d.x != rd.x)
            return nd_err_set(ND_ECORRUPT,
                              "table %u holds %llu fingerprints that differ from the %llu "
                              "the documents reference",
                              t, (unsigned long long)v.d.count, (unsigned long long)rd.count);
    }
    if ((rc = docs_check(db, &ndocs)) != 0) return rc; /* an error, or stopped */
    ND_RETURN_IF(ndocs != rev_entries, ND_ECORRUPT,
                 "%llu documents but %llu rev entries", (unsigned long long)ndocs,
                 (unsigned long long)rev_entries);
    db_write_lock(db);
    uint64_t cd = db->write.docs, cf = db->write.fps;
    db_write_unlock(db);
    ND_RETURN_IF(cd != ndocs || cf != rd.count, ND_ECORRUPT,
                 "counters say %llu documents / %llu fingerprints; found %llu / %llu",
                 (unsigned long long)cd, (unsigned long long)cf, (unsigned long long)ndocs,
                 (unsigned long long)rd.count);
    if (db->min_resemblance > 0) {
        /* Each document has its sketch and band entries (docs_check): any
         * more belong to no document. */
        uint64_t sketches, bands;
        ND_FORWARD(family_count(db, ST_CF_SKETCH, 0, &sketches, NULL));
        ND_FORWARD(family_count(db, ST_CF_BAND, 1, &bands, NULL));
        ND_RETURN_IF(sketches != ndocs, ND_ECORRUPT,
                     "%llu sketches for %llu documents: %llu belong to no document",
                     (unsigned long long)sketches, (unsigned long long)ndocs,
                     (unsigned long long)(sketches - ndocs));
        ND_RETURN_IF(bands != ndocs * ND_SKETCH_BANDS, ND_ECORRUPT,
                     "%llu band entries for %llu documents (%u each): %llu belong to no "
                     "document", (unsigned long long)bands, (unsigned long long)ndocs,
                     ND_SKETCH_BANDS, (unsigned long long)(bands - ndocs * ND_SKETCH_BANDS));
    }
    return ND_OK;
}

/* ---- backup and iteration --------------------------------------------- */

int nd_db_backup(nd_db *db, const char *dir)
{
    ND_RETURN_IF(!db || !dir || !*dir, ND_EINVAL, "nd_db_backup: NULL or empty argument");
    return st_checkpoint(db->store, dir);
}

/* Where the sketch iterator stands against key: < 0 before it, 0 on it,
 * > 0 past it or at the end. */
static int sketch_cmp(const st_iter *sk, const char *key, size_t klen)
{
    if (!st_iter_valid(sk)) return 1;
    size_t sklen;
    const char *sk_key = st_iter_key(sk, &sklen);
    return nd_bytes_cmp(sk_key, sklen, key, klen);
}

/* The sketch of the document key[0..klen) into *out, from an iterator
 * over the sketch family walking in step with docs (both in key order):
 * 1 if it holds a well-formed one, 0 if not (verify names such damage),
 * or an error. A step reaches the next sketch of a walk over every
 * document; a seek skips those of documents the walk leaves out. */
static int sketch_beside(st_iter *sk, const char *key, size_t klen, nd_sketch *out)
{
    int c = sketch_cmp(sk, key, klen);
    if (c < 0) {
        st_iter_next(sk);
        c = sketch_cmp(sk, key, klen);
    }
    if (c < 0) {
        st_iter_seek(sk, key, klen);
        c = sketch_cmp(sk, key, klen);
    }
    int rc = st_iter_status(sk);
    if (rc != ND_OK || c != 0) return rc;
    size_t vlen;
    const char *v = st_iter_value(sk, &vlen);
    return db_sketch_decode(v, vlen, out) == ND_OK;
}

/* Visit the documents of docs in key order, as of one snapshot; with
 * before non-NULL only those expired before *before. In a resemblance
 * store each visited document's sketch is read from the same snapshot by
 * a second walk beside the first (no point read a document). */
static int walk_docs(nd_db *db, const int64_t *before, nd_doc_cb cb, void *payload)
{
    st_snap *snap = NULL;
    st_iter *it = NULL, *sk = NULL;
    int rc;
    ND_TRY(st_snap_new(&snap, db->store));
    ND_TRY(st_iter_new_scan_at(&it, db->store, ST_CF_DOCS, snap));
    if (db->min_resemblance > 0) {
        ND_TRY(st_iter_new_scan_at(&sk, db->store, ST_CF_SKETCH, snap));
        st_iter_seek_first(sk);
    }
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        nd_doc d = {0};
        nd_sketch sketch;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        ND_TRY(db_doc_decode(v, vlen, &d.fp, &d.score, &d.time));
        if (before && !db_doc_expired(d.time, *before)) continue;
        d.key = k;
        d.key_len = klen;
        if (sk) {
            ND_TRY(sketch_beside(sk, k, klen, &sketch));
            d.sketch = rc == 1 ? &sketch : NULL;
        }
        rc = nd_err_callback(cb(&d, payload), "nd_db_foreach_doc");
        if (rc) goto cleanup;
    }
    rc = st_iter_status(it);
cleanup:
    st_iter_free(sk);
    st_iter_free(it);
    st_snap_free(snap);
    return rc;
}

int nd_db_foreach_expired(nd_db *db, int64_t before, nd_doc_cb cb, void *payload)
{
    ND_RETURN_IF(!db || !cb, ND_EINVAL, "nd_db_foreach_expired: NULL argument");
    return walk_docs(db, &before, cb, payload);
}

int nd_db_foreach_doc(nd_db *db, nd_doc_cb cb, void *payload)
{
    ND_RETURN_IF(!db || !cb, ND_EINVAL, "nd_db_foreach_doc: NULL argument");
    return walk_docs(db, NULL, cb, payload);
}
