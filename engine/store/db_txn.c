/*
 * db_txn.c — the write transaction: how every writer changes the store.
 *
 * A transaction is one atomic write under the writer lock:
 *   db_txn_begin   take the writer lock (unless the caller holds it for a
 *                  longer sequence: DB_TXN_HELD) and read the counters;
 *   db_txn_stage_* stage puts and deletes of documents into one batch that
 *                  reads its own writes, so a call that stages many
 *                  documents sees its earlier changes;
 *   db_txn_commit  give the new fingerprints to the mirror or to the
 *                  tables (db_mirrored_stage), stage the counters, write
 *                  (st_write: all or nothing, a crash leaves all of the
 *                  call or none of it), then adopt the counters, the
 *                  mirror's list and the fold backlog;
 *   db_txn_end     release the lock, free the batch and wake the fold when
 *                  the commit added fresh table entries.
 * Writers: nd_db_add_many, nd_db_add_if_new, nd_db_delete and nd_db_expire
 * (db_write.c), nd_db_batch with ND_BATCH_ADD (db_batch.c), the replacements
 * and commits of nd_db_import and the loader (db_import.c, load_commit.c).
 *
 * One document touches up to four families: docs (key -> fp, score, time),
 * rev (fp || key -> score, time), every table (the permuted fp, once per
 * fingerprint) and the counters; in a resemblance store two more: sketch
 * (key -> its sketch and band keys) and band (one entry per band key:
 * band || band key || key). doc_put and doc_drop are the one place
 * where a document's per-family entries are written and removed, and
 * unlink_fps the one where fingerprints leave the tables, so the sketch
 * and band entries join the document's atomic write: a replacement
 * (whatever its fingerprint), a deletion or an expiry first reads the old
 * sketch value and deletes its band entries and the sketch (db_txn_stage_drop_sketch),
 * then a put writes the new ones. A refresh of score and time keeps them.
 * A group deletion (db_txn_stage_delete_many, for nd_db_expire) drops its
 * documents first and then unlinks their fingerprints together: one rev
 * seek a fingerprint, and each table run that loses values rewritten
 * once (st_table_remove_many) instead of once a value (an expiry of 10%
 * of a 1M store: 11.1 s -> 3.7 s, bench/results/2026-12-02-expire.md).
 *
 * A fingerprint enters the tables with its first document and leaves with
 * its last; "does fp still have documents?" is a prefix probe of rev.
 *
 * A transaction that stages many documents defers the tables' entries of
 * the fingerprints it adds (t->defer) and stages them at commit, table by
 * table in ascending order: RocksDB then inserts each memtable's keys in
 * order, reusing the previous insert's place in its skip list (and its
 * batch index's), instead of one random insert a key. Puts of distinct
 * keys commute, so the batch holds the same changes; only a removal from
 * the tables reads them back, and it stages what is deferred first.
 *
 * A commit that adds at most DB_MIRRORED_CALL new fingerprints (a
 * crawler's single adds, a batch of a few thousand documents) does not
 * write their table keys: db_mirrored_stage logs each in one meta record
 * and gives its entries to the fresh mirror, and a later write stages the
 * keys of many at once (db_mirrored.c). A removal from the tables of such
 * a fingerprint deletes its record and its keys in the same batch
 * (db_mirrored_stage_remove); of any other, st_table_remove finds its
 * keys in the tables or the batch.
 *
 * nd_db_add_if_new checks before it takes the writer lock; every commit
 * counts an epoch and notes the fingerprint add_if_new stored (or, any
 * other commit, that it cannot say), so that under the lock a check only
 * looks at what was committed since it began (db_txn_check_stands, for
 * nd_db_add_if_new in db_write.c): db->commits is this file's alone.
 */
#include <stdlib.h>
#include <string.h>

#include "db_core.h"
#include "db_fold.h"
#include "db_mirrored.h"
#include "db_txn.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "sort.h"

/* ---- a document's entries --------------------------------------------- */

/* Does the rev iterator it hold an entry starting with BE64(fp)? (It is
 * left there: ascending fingerprints step forward.) */
static int rev_holds(st_iter *it, uint64_t fp)
{
    uint8_t kb[8];
    size_t klen = 0;
    nd_store_be64(kb, fp);
    st_iter_seek(it, kb, 8);
    const char *k = st_iter_valid(it) ? st_iter_key(it, &klen) : NULL;
    return k && klen >= 8 && memcmp(k, kb, 8) == 0;
}

/* Does any rev entry (batch included) start with BE64(fp)? */
static int fp_has_docs(nd_db *db, st_batch *b, uint64_t fp, int *out)
{
    st_iter *it;
    ND_FORWARD(st_iter_new(&it, db->store, ST_CF_REV, b, 1));
    *out = rev_holds(it, fp);
    int rc = st_iter_status(it);
    st_iter_free(it);
    return rc;
}

static int rev_key(uint8_t **out, uint64_t fp, const void *key, size_t klen)
{
    uint8_t *k = malloc(8 + klen);
    ND_RETURN_IF(!k, ND_ENOMEM, "out of memory");
    db_rev_key_encode(k, fp, key, klen);
    *out = k;
    return ND_OK;
}

static int tables_insert(nd_db *db, st_batch *b, uint64_t fp)
{
    for (unsigned t = 0; t < db->plan.info.tables; t++)
        ND_FORWARD(st_table_insert(db->store, b, t, nd_perm_apply(&db->plan.table[t], fp)));
    return ND_OK;
}

/* Stage the deletion of key's sketch and its band entries (a resemblance
 * store), read through the batch: a key staged twice in one transaction
 * drops the first staging's. A document without a sketch (a damaged
 * store: verify names it) leaves nothing to delete. */
int db_txn_stage_drop_sketch(db_txn *t, const void *key, size_t klen)
{
    st_batch *b = t->b;
    char *v = NULL;
    size_t vlen;
    nd_sketch sk;
    int rc = st_batch_get(t->db->store, b, ST_CF_SKETCH, key, klen, &v, &vlen);
    if (rc == ND_ENOTFOUND) return ND_OK;
    ND_FORWARD(rc);
    rc = db_sketch_decode(v, vlen, &sk);
    free(v);
    if (rc < 0)
        return nd_err_wrap(rc, "the sketch of document '%.*s'", (int)(klen > 80 ? 80 : klen),
                           (const char *)key);
    db_band_ops *ops = t->flags & DB_TXN_BANDS_FLUSHED ? NULL : &t->bands;
    ND_FORWARD(db_bands_stage_drop(b, ops, key, klen, &sk));
    return st_batch_delete(b, ST_CF_SKETCH, key, klen);
}

/* Stage key's sketch and its band entries (logged for the band memory:
 * db_bands.c). */
static int sketch_put(db_txn *t, const void *key, size_t klen, const nd_sketch *sk)
{
    st_batch *b = t->b;
    uint8_t val[DB_SKETCH_VALUE_LEN];
    db_sketch_encode(val, sk);
    ND_FORWARD(st_batch_put(b, ST_CF_SKETCH, key, klen, val, sizeof val));
    return db_bands_stage_put(t->db, b, &t->bands, key, klen, sk);
}

/* Stage the deletion of key's rev entry under fp and, in a resemblance
 * store, of its sketch and band entries: what a document leaves behind
 * but its docs entry and its fingerprint's table entries (unlink_fps). */
static int doc_drop(db_txn *t, uint64_t fp, const void *key, size_t klen)
{
    uint8_t *rk = NULL;
    if (t->db->min_resemblance > 0) ND_FORWARD(db_txn_stage_drop_sketch(t, key, klen));
    ND_FORWARD(rev_key(&rk, fp, key, klen));
    int rc = st_batch_delete(t->b, ST_CF_REV, rk, 8 + klen);
    free(rk);
    return rc;
}

/* Unlink the fingerprints fps[0..n) (ascending, repeats allowed) whose
 * rev entries the batch deletes: each one left with none (one seek of
 * rev through the batch a fingerprint) leaves the tables, each run
 * rewritten once a table (st_table_remove_many, reading through the
 * batch: the entries deferred so far are staged first), or, logged (its
 * entries wait in the mirror, perhaps staged since), the log in the same
 * batch (db_mirrored_stage_remove): no flush. tmp: 2n scratch values. */
static int unlink_fps(db_txn *t, uint64_t *fps, uint64_t *tmp, size_t n)
{
    nd_db *db = t->db;
    st_iter *it = NULL;
    size_t gone = 0, tabled = 0;
    int rc;
    ND_TRY(st_iter_new(&it, db->store, ST_CF_REV, t->b, 1));
    for (size_t i = 0; i < n; i++)
        if ((i == 0 || fps[i] != fps[i - 1]) && !rev_holds(it, fps[i])) fps[gone++] = fps[i];
    ND_TRY(st_iter_status(it));
    t->fps -= gone;
    if (gone) ND_TRY(db_stage_deferred(db, t->b, &t->defer));
    for (size_t i = 0; i < gone; i++) {
        if (db_mirrored_waits(db, fps[i])) ND_TRY(db_mirrored_stage_remove(db, t->b, fps[i], &t->gone));
        else fps[tabled++] = fps[i];
    }
    for (unsigned tb = 0; tabled && tb < db->plan.info.tables; tb++) {
        for (size_t i = 0; i < tabled; i++) tmp[i] = nd_perm_apply(&db->plan.table[tb], fps[i]);
        sort_u64(tmp, tmp + tabled, tabled);
        rc = st_table_remove_many(db->store, t->b, tb, tmp, tabled);
        if (rc == ND_ENOTFOUND)
            rc = nd_err_wrap(ND_ECORRUPT, "table %u lacks a fingerprint that rev holds", tb);
        ND_TRY(rc);
    }
cleanup:
    st_iter_free(it);
    return rc;
}

/* Unlink key from fingerprint old (rev entry; the tables if it was the
 * last) and, in a resemblance store, drop its sketch and band entries. */
static int doc_unlink(db_txn *t, uint64_t old, const void *key, size_t klen)
{
    uint64_t fp = old, tmp[2];
    ND_FORWARD(doc_drop(t, old, key, klen));
    return unlink_fps(t, &fp, tmp, 1);
}

/* Put key's docs entry and its rev entry under fp, both with score and
 * time: a query reads them from rev alone, so every change of a
 * document's score or time rewrites both. With sk (a resemblance store),
 * its sketch and band entries too; the caller dropped any old ones. */
static int doc_put(db_txn *t, const void *key, size_t klen, uint64_t fp, double score,
                   int64_t time, const nd_sketch *sk)
{
    st_batch *b = t->b;
    if (sk && t->db->min_resemblance > 0) ND_FORWARD(sketch_put(t, key, klen, sk));
    uint8_t val[DB_DOC_VALUE_LEN];
    uint8_t *rk = NULL;
    db_doc_encode(val, fp, score, time);
    ND_FORWARD(st_batch_put(b, ST_CF_DOCS, key, klen, val, sizeof val));
    ND_FORWARD(rev_key(&rk, fp, key, klen));
    int rc = st_batch_put(b, ST_CF_REV, rk, 8 + klen, DB_REV_VALUE(val), DB_REV_VALUE_LEN);
    free(rk);
    return rc;
}

/* ---- the transaction -------------------------------------------------- */

int db_txn_begin(db_txn *t, nd_db *db, unsigned flags)
{
    *t = (db_txn){.db = db, .flags = flags};
    if (flags & DB_TXN_PLAIN) ND_FORWARD(st_batch_new_plain(&t->b, db->store));
    else ND_FORWARD(st_batch_new(&t->b, db->store));
    if (!(flags & DB_TXN_HELD)) {
        db_write_lock(db);
        t->locked = 1;
    }
    t->docs = db->write.docs;
    t->fps = db->write.fps;
    return ND_OK;
}

int db_txn_stage_add(db_txn *t, const nd_doc *d, int fp_absent)
{
    nd_db *db = t->db;
    st_batch *b = t->b;
    const void *key = d->key;
    size_t klen = d->key_len;
    uint64_t fp = d->fp;
    char *old = NULL;
    size_t olen;
    ND_FORWARD(db_check_sketches(db, d, 1, "writing a document"));
    int rc = st_batch_get(db->store, b, ST_CF_DOCS, key, klen, &old, &olen);
    if (rc == ND_OK) {
        uint64_t oldfp;
        rc = db_doc_decode(old, olen, &oldfp, NULL, NULL);
        free(old);
        ND_FORWARD(rc);
        /* Same fingerprint: only score, time and the sketch change. */
        if (oldfp == fp) {
            if (db->min_resemblance > 0) ND_FORWARD(db_txn_stage_drop_sketch(t, key, klen));
            return doc_put(t, key, klen, fp, d->score, d->time, d->sketch);
        }
        ND_FORWARD(doc_unlink(t, oldfp, key, klen));
    } else if (rc == ND_ENOTFOUND) {
        t->docs++;
    } else {
        return rc;
    }
    int has = 0;
    if (!fp_absent) ND_FORWARD(fp_has_docs(db, b, fp, &has));
    if (!has) {
        if (t->flags & DB_TXN_TABLES_NOW) ND_FORWARD(tables_insert(db, b, fp));
        else ND_FORWARD(st_u64s_push(&t->defer, fp));
        t->fps++;
        t->fresh += db->plan.info.tables;
    }
    return doc_put(t, key, klen, fp, d->score, d->time, d->sketch);
}

int db_txn_stage_refresh(db_txn *t, const void *key, size_t klen, uint64_t fp, double score,
                         int64_t time)
{
    return doc_put(t, key, klen, fp, score, time, NULL);
}

int db_txn_stage_delete(db_txn *t, const void *key, size_t klen)
{
    const char *k = key;
    size_t got;
    ND_FORWARD(db_txn_stage_delete_many(t, &k, &klen, 1, NULL, &got));
    return got ? ND_OK : nd_err_set(ND_ENOTFOUND, "no document with this key");
}

int db_txn_stage_delete_many(db_txn *t, const char *const *keys, const size_t *lens, size_t n,
                             const int64_t *before, size_t *deleted)
{
    nd_db *db = t->db;
    st_batch *b = t->b;
    uint64_t *fps = malloc((3 * n + 1) * sizeof *fps); /* fps, then scratch of 2n */
    char *old = NULL;
    size_t olen, m = 0;
    int rc = fps ? ND_OK : nd_err_set(ND_ENOMEM, "out of memory deleting %zu documents", n);
    *deleted = 0;
    ND_TRY(rc);
    for (size_t i = 0; i < n; i++) {
        uint64_t fp;
        int64_t time;
        rc = st_batch_get(db->store, b, ST_CF_DOCS, keys[i], lens[i], &old, &olen);
        if (rc == ND_ENOTFOUND) { /* deleted meanwhile */
            nd_err_clear();
            continue;
        }
        if (rc == ND_OK) rc = db_doc_decode(old, olen, &fp, NULL, &time);
        free(old);
        old = NULL;
        ND_TRY(rc);
        if (before && !db_doc_expired(time, *before)) continue; /* refreshed since */
        ND_TRY(st_batch_delete(b, ST_CF_DOCS, keys[i], lens[i]));
        ND_TRY(doc_drop(t, fp, keys[i], lens[i]));
        fps[m++] = fp;
    }
    sort_u64(fps, fps + m, m);
    ND_TRY(unlink_fps(t, fps, fps + m, m));
    t->docs -= m;
    *deleted = m;
cleanup:
    free(fps);
    return rc;
}

void db_txn_count(db_txn *t, uint64_t docs, uint64_t fps)
{
    t->docs += docs;
    t->fps += fps;
}

/* Write the staged batch with the new counters; on success adopt them and
 * add fresh to the fold backlog. stored (may be NULL): the one fingerprint
 * the batch adds, for add_if_new's check of what was committed since it
 * began. */
static int write_counted(nd_db *db, st_batch *b, uint64_t docs, uint64_t fps, uint64_t fresh,
                         const uint64_t *stored)
{
    ND_FORWARD(db_stage_counters(db, b, docs, fps));
    /* Raised before the write, so no probe skips a visible fresh entry. */
    db_fold_fresh_raise(db, fresh);
    int rc = st_write(db->store, b, db->sync);
    if (rc < 0) {
        db_fold_fresh_unraise(db, fresh);
        return rc;
    }
    db->write.docs = docs;
    db->write.fps = fps;
    db_fold_fresh_written(db, fresh);
    uint64_t epoch = atomic_load(&db->commits.epoch) + 1;
    if (stored) {
        db_recent *r = &db->commits.ring[db->commits.at];
        if (r->epoch > db->commits.gap) db->commits.gap = r->epoch;
        *r = (db_recent){epoch, *stored};
        db->commits.at = (db->commits.at + 1) % DB_RECENT;
    } else {
        db->commits.gap = epoch;
    }
    atomic_store(&db->commits.epoch, epoch); /* after the write is visible */
    return ND_OK;
}

/* The commit: the new fingerprints to the mirror (or the tables), the
 * counted write, then the mirror's list. */
static int commit(db_txn *t, const uint64_t *stored)
{
    nd_db *db = t->db;
    ND_FORWARD(db_mirrored_stage(db, t->b, &t->defer, &t->adopt));
    ND_FORWARD(db_bands_prepare(db, &t->bands));
    ND_FORWARD(write_counted(db, t->b, t->docs, t->fps, t->fresh, stored));
    db_bands_apply(db, &t->bands);
    /* Forget first: after a flush at this commit, a fingerprint gone
     * and logged again is in adopt alone. */
    db_mirrored_forget(db, &t->gone);
    db_mirrored_adopt(db, &t->adopt);
    t->committed = 1;
    return ND_OK;
}

int db_txn_commit(db_txn *t)
{
    return commit(t, NULL);
}

int db_txn_commit_checked(db_txn *t, uint64_t fp)
{
    return commit(t, &fp);
}

int db_txn_write(db_txn *t)
{
    return st_write(t->db->store, t->b, t->db->sync);
}

int db_txn_end(db_txn *t, int rc)
{
    nd_db *db = t->db;
    if (!db) return rc; /* never begun */
    if (t->locked) db_write_unlock(db);
    st_batch_free(t->b);
    st_u64s_dispose(&t->defer);
    st_u64s_dispose(&t->adopt);
    st_u64s_dispose(&t->gone);
    db_band_ops_dispose(&t->bands);
    if (rc == ND_OK && t->locked && t->committed && t->fresh) db_fold_kick(db);
    *t = (db_txn){0};
    return rc;
}

/* ---- nd_db_add_if_new's checks ------------------------------------------- */

uint64_t db_txn_epoch(const nd_db *db)
{
    return atomic_load(&db->commits.epoch);
}

/* With the writer lock held: can a check that began at epoch since
 * stand, that is, is every commit after it a fingerprint add_if_new
 * stored (the ring still holds them all) and none of them within k of
 * fp? The ring is read from its newest entry back. */
int db_txn_check_stands(const nd_db *db, uint64_t since, uint64_t fp, unsigned k)
{
    if (atomic_load(&db->commits.epoch) == since) return 1;
    if (db->commits.gap > since) return 0;
    for (size_t n = 0, i = db->commits.at; n < DB_RECENT; n++) {
        i = (i + DB_RECENT - 1) % DB_RECENT;
        const db_recent *r = &db->commits.ring[i];
        if (r->epoch <= since) break; /* the ring is in epoch order */
        if ((unsigned)__builtin_popcountll(r->fp ^ fp) <= k) return 0;
    }
    return 1;
}
