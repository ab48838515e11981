/*
 * db_mirrored.c — new fingerprints whose table entries wait in the fresh
 * mirror, logged by one meta record each, before the tables get their keys.
 *
 * Why: a single add used to write a fresh key into every table (13 keys a
 * document at 10 tables), each a random insert into a memtable of up to a
 * million keys; at 100M those inserts were about half of an add's write,
 * and the writer lock is held through the write. An add of up to
 * DB_MIRRORED_CALL new fingerprints (4096: a batch of a few thousand
 * documents too) now writes one meta record per fingerprint,
 * "fresh." || BE64(fp), and gives the table entries to the in-memory
 * mirror only (st_table_insert_mirrored): queries and cursors find them
 * at once. Every DB_MIRRORED_MAX fingerprints, and before anything reads
 * a table's fresh space from RocksDB, the flush gives every table the keys
 * of all of them, sorted, in one file RocksDB takes in whole
 * (st_table_ingest_keys), then deletes the records with one range
 * deletion. Written as memtable inserts, the 163,840 keys of a flush of
 * 16,384 at 100M cost 95-116 ms even in ascending order; ten files cost
 * about 35 ms (bench/results/2026-11-database-notebook.md). A crash loses
 * nothing: the records are written with the documents, atomically, and
 * the next open gives them to the mirror again. The files are not atomic with the records' deletion,
 * so a crash between leaves some keys both written and logged: the next
 * flush writes them again (the same keys, harmless), and a scan meanwhile
 * counts them once (db_mirrored_scan). No fold comes between: it flushes
 * first.
 *
 * A logged fingerprint that loses its last document (a key replaced or
 * deleted soon after it was added: a crawler storing a changed page
 * again) leaves without a flush: the transaction that removes the
 * document deletes its record and its table keys in the same batch
 * (db_mirrored_stage_remove), so a crash leaves both or neither, and the
 * write hands the mirror the deletions. Its keys exist in no table, or in
 * some after a flush a crash cut short: a deletion is right either way.
 * The removal used to flush every logged fingerprint first, one file and
 * ingestion per table, for keys no table held: new keys and replaced ones
 * alternating ran at 24 adds/s against 20,889 for new keys alone; now at
 * 14,805 (bench_fold --replace, smoke database; bench/README.md).
 *
 * Who flushes first (db_mirrored_flush, write.mu held): a fold (it reads
 * the fresh space at a snapshot), a batch before its cursors (one may
 * fall back to its snapshot), stats, verify and a scanning query
 * (db_mirrored_scan), an import (it folds first) and a writable close. A
 * store opened read-only cannot flush: its scans add the logged
 * fingerprints themselves (db_mirrored_scan), and no fold or removal runs
 * there.
 *
 * The list of logged fingerprints (db->mirror.fps) follows the durable
 * records write by write: db_mirrored_stage reserves room for a call's
 * fingerprints before its write, db_mirrored_forget drops those the
 * write removed and db_mirrored_adopt appends the new ones after it.
 *
 * Callers: db_txn.c (stage, forget and adopt at commit; stage_remove
 * when a logged fingerprint loses its last document),
 * db_fold.c (flush before a fold), db_batch.c (flush before its
 * cursors), db_query.c and db_admin.c (scans), db_open.c (open, close).
 */
#include <stdlib.h>
#include <string.h>

#include "db_core.h"
#include "db_mirrored.h"
#include "nd_endian.h"
#include "nd_error.h"

#define REC_PREFIX "fresh."
#define REC_PREFIX_LEN 6
#define REC_LEN (REC_PREFIX_LEN + 8)

static void rec_key(uint8_t out[REC_LEN], uint64_t fp)
{
    memcpy(out, REC_PREFIX, REC_PREFIX_LEN);
    nd_store_be64(out + REC_PREFIX_LEN, fp);
}

/* [lo, hi): every record's key. */
static void rec_range(uint8_t lo[REC_LEN], uint8_t hi[REC_LEN])
{
    rec_key(lo, 0);
    memcpy(hi, lo, REC_LEN);
    hi[REC_PREFIX_LEN - 1]++; /* "fresh/": just past every record */
}

/* Can every table's mirror take n more entries? */
static int mirrors_have_room(nd_db *db, uint64_t n)
{
    for (unsigned t = 0; t < db->plan.info.tables; t++)
        if (!st_table_mirror_room(db->store, t, n)) return 0;
    return 1;
}

/* Where fp is in the list m, or m->n. A linear search: the list holds at
 * most DB_MIRRORED_MAX fingerprints (128 KB, compared in microseconds),
 * and it runs once per fingerprint that loses its last document. */
static size_t list_find(const st_u64s *m, uint64_t fp)
{
    size_t i = 0;
    while (i < m->n && m->v[i] != fp) i++;
    return i;
}

/* Stage fp's entry of every table into b for the mirror only. */
static int stage_mirror_only(nd_db *db, st_batch *b, uint64_t fp)
{
    for (unsigned t = 0; t < db->plan.info.tables; t++)
        ND_FORWARD(st_table_insert_mirrored(b, t, nd_perm_apply(&db->plan.table[t], fp)));
    return ND_OK;
}

int db_mirrored_flush(nd_db *db)
{
    st_u64s *m = &db->mirror.fps;
    if (m->n == 0) return ND_OK;
    st_batch *b = NULL;
    uint8_t lo[REC_LEN], hi[REC_LEN];
    int rc = ND_OK;
    uint64_t *pv = malloc(2 * m->n * sizeof *pv);
    ND_RETURN_IF(!pv, ND_ENOMEM, "out of memory flushing %zu new fingerprints", m->n);
    /* Table by table, each key written once through a file (the mirror
     * holds them all already); the records go only after every table
     * has its keys, so after a crash in between the next open gives them
     * to the mirror again and a later flush writes them again. */
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        size_t n = db_table_sorted(db, t, m->v, m->n, pv);
        ND_TRY(st_table_ingest_keys(db->store, t, pv, n));
    }
    /* Writes are serialised: the records are those of m, no more. */
    ND_TRY(st_batch_new_plain(&b, db->store));
    rec_range(lo, hi);
    ND_TRY(st_batch_delete_range(b, ST_CF_META, lo, sizeof lo, hi, sizeof hi));
    rc = st_write(db->store, b, db->sync);
    if (rc < 0) goto cleanup;
    pthread_mutex_lock(&db->mirror.mu);
    m->n = 0;
    db->mirror.flushes++;
    pthread_mutex_unlock(&db->mirror.mu);
cleanup:
    if (rc < 0) rc = nd_err_wrap(rc, "writing the table keys of %zu new fingerprints", m->n);
    st_batch_free(b);
    free(pv);
    return rc;
}

int db_mirrored_flush_now(nd_db *db)
{
    db_write_lock(db);
    int rc = db_mirrored_flush(db);
    db_write_unlock(db);
    return rc;
}

int db_mirrored_stage(nd_db *db, st_batch *b, st_u64s *defer, st_u64s *adopt)
{
    size_t n = defer->n;
    adopt->n = 0;
    if (n == 0) return ND_OK;
    if (n > DB_MIRRORED_CALL) return db_stage_deferred(db, b, defer);
    if (db->mirror.fps.n + n > DB_MIRRORED_MAX) ND_FORWARD(db_mirrored_flush(db));
    /* Room in the list now, so the adoption after the write cannot fail;
     * under mu, as a scan copies the list under mu alone. */
    pthread_mutex_lock(&db->mirror.mu);
    int rc = st_u64s_reserve(&db->mirror.fps, n);
    pthread_mutex_unlock(&db->mirror.mu);
    ND_FORWARD(rc);
    ND_FORWARD(st_u64s_reserve(adopt, n));
    if (!mirrors_have_room(db, n)) { /* a mirror gave up: the tables */
        ND_FORWARD(db_mirrored_flush(db));
        return db_stage_deferred(db, b, defer);
    }
    uint8_t rk[REC_LEN];
    for (size_t i = 0; i < n; i++) {
        rec_key(rk, defer->v[i]);
        ND_FORWARD(st_batch_put(b, ST_CF_META, rk, sizeof rk, "", 0));
        ND_FORWARD(stage_mirror_only(db, b, defer->v[i]));
        adopt->v[adopt->n++] = defer->v[i];
    }
    defer->n = 0;
    return ND_OK;
}

void db_mirrored_adopt(nd_db *db, const st_u64s *adopt)
{
    if (adopt->n == 0) return;
    /* db_mirrored_stage reserved the room: this append cannot fail. */
    pthread_mutex_lock(&db->mirror.mu);
    memcpy(db->mirror.fps.v + db->mirror.fps.n, adopt->v, adopt->n * sizeof *adopt->v);
    db->mirror.fps.n += adopt->n;
    pthread_mutex_unlock(&db->mirror.mu);
}

int db_mirrored_waits(nd_db *db, uint64_t fp)
{
    return list_find(&db->mirror.fps, fp) < db->mirror.fps.n;
}

int db_mirrored_stage_remove(nd_db *db, st_batch *b, uint64_t fp, st_u64s *gone)
{
    uint8_t rk[REC_LEN];
    rec_key(rk, fp);
    ND_FORWARD(st_batch_delete(b, ST_CF_META, rk, sizeof rk));
    /* st_table_remove removes what a read through the batch finds, and
     * fp's entry may be in the mirror alone. Staged as a key first, it is
     * found in the batch and deleted there: the batch's net change is the
     * key's deletion, whatever the table holds (nothing, or the key a
     * flush cut short wrote), and its write has the mirror drop the entry. */
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        uint64_t pv = nd_perm_apply(&db->plan.table[t], fp);
        ND_FORWARD(st_table_insert(db->store, b, t, pv));
        ND_FORWARD(st_table_remove(db->store, b, t, pv));
    }
    return st_u64s_push(gone, fp);
}

void db_mirrored_forget(nd_db *db, const st_u64s *gone)
{
    st_u64s *m = &db->mirror.fps;
    if (gone->n == 0) return;
    pthread_mutex_lock(&db->mirror.mu);
    for (size_t i = 0; i < gone->n; i++) {
        size_t at = list_find(m, gone->v[i]);
        if (at < m->n) m->v[at] = m->v[--m->n]; /* the list has no order */
    }
    pthread_mutex_unlock(&db->mirror.mu);
}

int db_mirrored_open(nd_db *db)
{
    uint8_t lo[REC_LEN], hi[REC_LEN];
    st_iter *it = NULL;
    st_batch *b = NULL;
    int rc;
    rec_range(lo, hi);
    ND_TRY(st_iter_new_bounded(&it, db->store, ST_CF_META, lo, hi, sizeof lo, NULL));
    for (st_iter_seek(it, lo, sizeof lo); st_iter_valid(it); st_iter_next(it)) {
        size_t klen;
        const char *k = st_iter_key(it, &klen);
        if (klen != REC_LEN || memcmp(k, REC_PREFIX, REC_PREFIX_LEN) != 0)
            ND_FAIL(ND_ECORRUPT, "database %s: malformed fresh record in meta (%zu bytes)",
                    db->path, klen);
        ND_TRY(st_u64s_push(&db->mirror.fps, nd_load_be64(k + REC_PREFIX_LEN))); /* not shared yet */
    }
    ND_TRY(st_iter_status(it));
    if (db->mirror.fps.n == 0) goto cleanup;
    if (!mirrors_have_room(db, db->mirror.fps.n)) {
        /* The mirror of some table gave up (too many fresh entries, or
         * out of memory): the records must become table keys. */
        if (db->readonly)
            ND_FAIL(ND_ELIMIT,
                    "database %s: %zu new fingerprints wait for their table entries and the "
                    "fresh mirror cannot hold them; open it writable once",
                    db->path, db->mirror.fps.n);
        rc = db_mirrored_flush(db);
        goto cleanup;
    }
    ND_TRY(st_batch_new_plain(&b, db->store));
    for (size_t i = 0; i < db->mirror.fps.n; i++) ND_TRY(stage_mirror_only(db, b, db->mirror.fps.v[i]));
    st_mirror_apply(db->store, b);
    rc = ND_OK;
cleanup:
    st_iter_free(it);
    st_batch_free(b);
    return rc;
}

/* A scan's fresh keys, less those among the waiting entries: a flush
 * between the copy of the list and the scan's snapshot, or one that a
 * crash cut after some tables took their keys, puts an entry in both. */
typedef struct scan_filter {
    const uint64_t *waiting; /* table t's values, ascending */
    size_t n;
    st_table_cb cb;
    void *payload;
} scan_filter;

static int filter_cb(const uint64_t *e, size_t n, int is_run, size_t bytes, void *payload)
{
    scan_filter *f = payload;
    /* Runs pass whole: a value reaches a run only by a fold, which
     * flushes first, so only a fold after the list's copy puts a copied
     * value there (db_mirrored.h). */
    if (is_run || f->n == 0) return f->cb(e, n, is_run, bytes, f->payload);
    for (size_t i = 0; i < n; i++) {
        size_t at = st_u64_lower_bound(f->waiting, f->n, e[i]);
        if (at < f->n && f->waiting[at] == e[i]) continue;
        int rc = f->cb(e + i, 1, 0, bytes, f->payload);
        if (rc) return rc;
    }
    return 0;
}

int db_mirrored_scan(nd_db *db, unsigned t, st_table_cb cb, void *payload, int flush)
{
    st_u64s waiting = {0};
    int rc = ND_OK;
    if (flush && !db->readonly) ND_FORWARD(db_mirrored_flush_now(db));
    /* Copied before the scan's snapshot: an entry flushed in between is
     * in both (filter_cb drops the scan's copy), none is in neither. */
    pthread_mutex_lock(&db->mirror.mu);
    rc = st_u64s_reserve(&waiting, 2 * db->mirror.fps.n);
    if (rc == ND_OK) rc = st_u64s_append(&waiting, db->mirror.fps.v, db->mirror.fps.n);
    pthread_mutex_unlock(&db->mirror.mu);
    ND_TRY(rc);
    waiting.n = db_table_sorted(db, t, waiting.v, waiting.n, waiting.v);
    scan_filter f = {waiting.v, waiting.n, cb, payload};
    ND_TRY(st_table_scan(db->store, t, filter_cb, &f));
    for (size_t i = 0; i < waiting.n && rc == ND_OK; i++) rc = cb(&waiting.v[i], 1, 0, 0, payload);
cleanup:
    st_u64s_dispose(&waiting);
    return rc;
}
