/*
 * db_core.c — the lowest layer of the engine: what every other db_*.c
 * module needs from the handle, and nothing that calls upward.
 *
 * It holds the codecs of a document's records (docs value, rev key and
 * value), the checks of keys and of a writable handle, the writer lock,
 * the counters record, the pool of table readers, the threads a call may
 * use (db_threads) and the mapping of
 * fingerprints to sorted table entries. Invariant: this file calls only
 * compaction/ (storage.h), plan.c and sort.c; it never calls another
 * db_*.c file. Callers: every engine module above it (db_txn.c,
 * db_mirrored.c, db_fold.c, db_query.c, db_admin.c, the bulk paths and
 * db_open.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db_core.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "sort.h"

size_t db_rev_key_encode(uint8_t *out, uint64_t fp, const void *key, size_t klen)
{
    nd_store_be64(out, fp);
    memcpy(out + 8, key, klen);
    return 8 + klen;
}

void db_doc_encode(uint8_t out[DB_DOC_VALUE_LEN], uint64_t fp, double score, int64_t time)
{
    uint64_t bits;
    memcpy(&bits, &score, sizeof bits);
    nd_store_be64(out, fp);
    nd_store_be64(out + 8, bits);
    nd_store_be64(out + 16, (uint64_t)time);
}

/* BE64 score bits, BE64 time: a doc value after its fp, a rev value. */
static void score_time_decode(const char *p, double *score, int64_t *time)
{
    uint64_t bits = nd_load_be64(p);
    if (score) memcpy(score, &bits, sizeof *score);
    if (time) *time = (int64_t)nd_load_be64(p + 8);
}

int db_doc_decode(const char *val, size_t len, uint64_t *fp, double *score, int64_t *time)
{
    ND_RETURN_IF(len != DB_DOC_VALUE_LEN, ND_ECORRUPT, "document record of %zu bytes (want %d)",
                 len, DB_DOC_VALUE_LEN);
    if (fp) *fp = nd_load_be64(val);
    score_time_decode(val + 8, score, time);
    return ND_OK;
}

int db_rev_decode(const char *val, size_t len, double *score, int64_t *time)
{
    if (len == 0) return 0;
    ND_RETURN_IF(len != DB_REV_VALUE_LEN, ND_ECORRUPT, "rev entry value of %zu bytes (want 0 or %d)",
                 len, DB_REV_VALUE_LEN);
    score_time_decode(val, score, time);
    return 1;
}

void db_sketch_encode(uint8_t out[DB_SKETCH_VALUE_LEN], const nd_sketch *sk)
{
    out[0] = ND_SKETCH_VERSION;
    memcpy(out + 1, sk->bin, ND_SKETCH_BYTES);
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++)
        nd_store_be32(out + 1 + ND_SKETCH_BYTES + 4 * b, sk->band[b]);
}

int db_sketch_decode(const char *val, size_t len, nd_sketch *out)
{
    ND_RETURN_IF(len != DB_SKETCH_VALUE_LEN, ND_ECORRUPT, "sketch record of %zu bytes (want %d)",
                 len, (int)DB_SKETCH_VALUE_LEN);
    ND_RETURN_IF((unsigned char)val[0] != ND_SKETCH_VERSION, ND_ECORRUPT,
                 "sketch record of sketch version %u (this build: %u)", (unsigned char)val[0],
                 ND_SKETCH_VERSION);
    memcpy(out->bin, val + 1, ND_SKETCH_BYTES);
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++)
        out->band[b] = nd_load_be32(val + 1 + ND_SKETCH_BYTES + 4 * b);
    return ND_OK;
}

size_t db_band_key_encode(uint8_t *out, unsigned b, uint32_t band, const void *key, size_t klen)
{
    out[0] = (uint8_t)b;
    nd_store_be32(out + 1, band);
    if (klen) memcpy(out + DB_BAND_PREFIX_LEN, key, klen);
    return DB_BAND_PREFIX_LEN + klen;
}

void db_write_lock(nd_db *db)
{
    struct timespec t0, t;
    if (pthread_mutex_trylock(&db->write.mu) == 0) return;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 1;; i++) {
        if (pthread_mutex_trylock(&db->write.mu) == 0) return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (i % 64 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > DB_WRITE_SPIN_NS)
                break;
        }
    }
    pthread_mutex_lock(&db->write.mu);
}

void db_write_unlock(nd_db *db)
{
    pthread_mutex_unlock(&db->write.mu);
}

unsigned db_threads(const nd_db *db)
{
    if (db->threads) return db->threads;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > DB_MAX_THREADS ? DB_MAX_THREADS : (unsigned)cpus;
}

int nd_db_set_progress(nd_db *db, nd_progress_cb cb, void *payload)
{
    ND_RETURN_IF(!db, ND_EINVAL, "nd_db_set_progress: NULL database");
    db->progress = cb;
    db->progress_payload = payload;
    return ND_OK;
}

int db_progress(const nd_db *db, const char *phase, const char *unit, uint64_t done,
                uint64_t total)
{
    if (!db->progress) return 0;
    nd_progress p = {phase, unit, done, total};
    return nd_err_callback(db->progress(&p, db->progress_payload), phase);
}

void db_stop_init(db_stop *st, const nd_db *db, const char *phase, const char *unit,
                  uint64_t total)
{
    st->db = db;
    st->phase = phase;
    st->unit = unit;
    st->total = total;
    atomic_init(&st->done, 0);
    atomic_init(&st->value, 0);
}

int db_stop_report(db_stop *st, uint64_t done)
{
    atomic_store(&st->done, done);
    return st->db ? db_progress(st->db, st->phase, st->unit, done, st->total) : 0;
}

int db_stop_check(db_stop *st, int asks) { return asks ? db_stop_ask(st) : db_stop_seen(st); }

void db_stop_advance(db_stop *st) { atomic_fetch_add(&st->done, 1); }

int db_stop_wait(db_stop *st, const atomic_uint *running)
{
    int rc = ND_OK;
    while (rc == ND_OK && atomic_load(running) > 0) {
        usleep(DB_STOP_WAIT_US);
        rc = db_stop_ask(st);
    }
    return rc;
}

int db_stop_ask(void *stop)
{
    db_stop *st = stop;
    /* done read, not written: another thread may advance it meanwhile */
    uint64_t done = atomic_load(&st->done);
    int rc = st->db ? db_progress(st->db, st->phase, st->unit, done, st->total) : 0;
    if (rc == 0) return ND_OK;
    atomic_store(&st->value, rc);
    /* negative: ND_ESTOPPED with db_progress's message */
    return rc < 0 ? rc : nd_err_set(ND_ESTOPPED, "%s: stopped by the progress callback", st->phase);
}

int db_stop_seen(void *stop)
{
    db_stop *st = stop;
    return atomic_load(&st->value) ? nd_err_set(ND_ESTOPPED, "%s: stopped", st->phase) : ND_OK;
}

int db_stop_result(db_stop *st, int rc)
{
    int answer = atomic_load(&st->value);
    return rc == ND_ESTOPPED && answer > 0 ? answer : rc;
}

int db_check_writable(nd_db *db)
{
    ND_RETURN_IF(!db, ND_EINVAL, "NULL database handle");
    ND_RETURN_IF(db->readonly, ND_EREADONLY, "database %s is open read-only", db->path);
    return ND_OK;
}

int db_check_key(const void *key, size_t klen)
{
    ND_RETURN_IF(!key || klen == 0, ND_EINVAL, "empty document key");
    ND_RETURN_IF(klen > ND_MAX_KEY_LEN, ND_ELIMIT, "document key of %zu bytes (limit %u)", klen,
                 ND_MAX_KEY_LEN);
    return ND_OK;
}

int db_check_docs(const nd_doc *docs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = db_check_key(docs[i].key, docs[i].key_len);
        if (rc < 0) return nd_err_wrap(rc, "document %zu", i);
    }
    return ND_OK;
}

int db_check_sketches(const nd_db *db, const nd_doc *docs, size_t n, const char *what)
{
    if (db->min_resemblance <= 0) return ND_OK;
    for (size_t i = 0; i < n; i++)
        ND_RETURN_IF(!docs[i].sketch, ND_EINVAL,
                     "%s: document %zu ('%.*s') has no sketch; a resemblance store (R=%g) "
                     "needs one with every document (nd_db_sign)",
                     what, i, (int)(docs[i].key_len > 80 ? 80 : docs[i].key_len),
                     docs[i].key ? (const char *)docs[i].key : "", db->min_resemblance);
    return ND_OK;
}

int db_stage_counters(nd_db *db, st_batch *b, uint64_t docs, uint64_t fps)
{
    uint8_t v[16];
    (void)db;
    nd_store_be64(v, docs);
    nd_store_be64(v + 8, fps);
    st_batch_note_docs(b, docs);
    return st_batch_put(b, ST_CF_META, "counters", 8, v, sizeof v);
}

/* ---- readers pool ----------------------------------------------------- */

int db_reader_get(nd_db *db, st_reader **out)
{
    pthread_mutex_lock(&db->readers.mu);
    if (db->readers.n) {
        *out = db->readers.pool[--db->readers.n];
        pthread_mutex_unlock(&db->readers.mu);
        return ND_OK;
    }
    pthread_mutex_unlock(&db->readers.mu);
    return st_reader_new(out, db->store);
}

void db_reader_put(nd_db *db, st_reader *r)
{
    pthread_mutex_lock(&db->readers.mu);
    if (db->readers.n < DB_POOL_MAX) {
        db->readers.pool[db->readers.n++] = r;
        r = NULL;
    }
    pthread_mutex_unlock(&db->readers.mu);
    st_reader_free(r);
}

/* ---- table entries of fingerprints ------------------------------------ */

size_t db_table_sorted(const nd_db *db, unsigned t, const uint64_t *fps, size_t n, uint64_t *pv)
{
    if (n == 0) return 0; /* pv may be NULL then (an empty st_u64s): no pv + 0 */
    for (size_t i = 0; i < n; i++) pv[i] = nd_perm_apply(&db->plan.table[t], fps[i]);
    return sort_u64_unique(pv, pv + n, n);
}

int db_stage_deferred(nd_db *db, st_batch *b, st_u64s *defer)
{
    size_t n = defer->n;
    if (n == 0) return ND_OK;
    uint64_t *pv = malloc(2 * n * sizeof *pv);
    ND_RETURN_IF(!pv, ND_ENOMEM, "out of memory staging %zu fingerprints", n);
    int rc = ND_OK;
    for (unsigned t = 0; t < db->plan.info.tables && rc == ND_OK; t++) {
        size_t m = db_table_sorted(db, t, defer->v, n, pv);
        for (size_t i = 0; i < m && rc == ND_OK; i++) rc = st_table_insert(db->store, b, t, pv[i]);
    }
    free(pv);
    if (rc == ND_OK) defer->n = 0;
    return rc;
}

