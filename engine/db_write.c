/*
 * db_write.c — adding and deleting documents.
 *
 * One document touches up to four families: docs (key -> fp, score, time),
 * rev (fp || key -> score, time), every table (the permuted fp, once per fingerprint) and
 * the counters. All of it is staged into one batch that reads its own
 * writes, so a call that stages many documents (nd_add_many, expire) sees
 * its earlier changes, and st_write applies everything atomically: a crash
 * leaves all of a call or none of it.
 *
 * A fingerprint enters the tables with its first document and leaves with
 * its last; "does fp still have documents?" is a prefix probe of rev.
 *
 * A call that stages many documents may defer the tables' entries of the
 * fingerprints it adds (db_stage_add's defer list) and stage them at the
 * end, table by table in ascending order: RocksDB then inserts each
 * memtable's keys in order, reusing the previous insert's place in its
 * skip list (and its batch index's), instead of one random insert a key.
 * Puts of distinct keys commute, so the batch holds the same changes;
 * only a removal from the tables reads them back, and it stages what is
 * deferred first.
 *
 * A call that adds at most DB_MIRRORED_CALL new fingerprints (a crawler's
 * single adds, a batch of a few thousand documents) does not write their
 * table keys: db_mirrored_stage logs each in one meta
 * record and gives its entries to the fresh mirror, and a later write
 * stages the keys of many at once (db_mirrored.c). A removal from the
 * tables flushes them first, so st_table_remove finds the keys.
 *
 * nd_add_if_new checks before it takes the writer lock; every commit
 * counts an epoch and notes the fingerprint add_if_new stored (or, any
 * other commit, that it cannot say), so that under the lock a check only
 * looks at what was committed since it began.
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "sort.h"

/* Does any rev entry (batch included) start with BE64(fp)? */
static int fp_has_docs(nd_db *db, st_batch *b, uint64_t fp, int *out)
{
    st_iter *it;
    uint8_t kb[8];
    ND_FORWARD(st_iter_new(&it, db->store, ST_CF_REV, b, 1));
    nd_store_be64(kb, fp);
    st_iter_seek(it, kb, 8);
    *out = 0;
    if (st_iter_valid(it)) {
        size_t klen;
        const char *k = st_iter_key(it, &klen);
        *out = klen >= 8 && memcmp(k, kb, 8) == 0;
    }
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

size_t db_table_sorted(const nd_db *db, unsigned t, const uint64_t *fps, size_t n, uint64_t *pv)
{
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

static int tables_remove(nd_db *db, st_batch *b, uint64_t fp)
{
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        int rc = st_table_remove(db->store, b, t, nd_perm_apply(&db->plan.table[t], fp));
        if (rc == ND_ENOTFOUND)
            return nd_err_set(ND_ECORRUPT, "table %u lacks fingerprint %016llx that rev holds", t,
                              (unsigned long long)fp);
        ND_FORWARD(rc);
    }
    return ND_OK;
}

/* Unlink key from fingerprint old (rev entry; the tables if it was the
 * last). Removing old from the tables reads them through the batch, and
 * old may be among the entries deferred so far: they are staged first. */
static int unlink_fp(nd_db *db, st_batch *b, uint64_t old, const void *key, size_t klen,
                     uint64_t *fps, st_u64s *defer)
{
    uint8_t *rk = NULL;
    int has;
    ND_FORWARD(rev_key(&rk, old, key, klen));
    int rc = st_batch_delete(b, ST_CF_REV, rk, 8 + klen);
    free(rk);
    ND_FORWARD(rc);
    ND_FORWARD(fp_has_docs(db, b, old, &has));
    if (!has) {
        if (defer) ND_FORWARD(db_stage_deferred(db, b, defer));
        ND_FORWARD(db_mirrored_flush(db)); /* old's table keys may still wait */
        ND_FORWARD(tables_remove(db, b, old));
        (*fps)--;
    }
    return ND_OK;
}

/* Put key's docs entry and its rev entry under fp, both with score and
 * time: a query reads them from rev alone, so every change of a
 * document's score or time rewrites both. */
static int stage_doc(st_batch *b, const void *key, size_t klen, uint64_t fp, double score,
                     int64_t time)
{
    uint8_t val[DB_DOC_VALUE_LEN];
    uint8_t *rk = NULL;
    db_doc_encode(val, fp, score, time);
    ND_FORWARD(st_batch_put(b, ST_CF_DOCS, key, klen, val, sizeof val));
    ND_FORWARD(rev_key(&rk, fp, key, klen));
    int rc = st_batch_put(b, ST_CF_REV, rk, 8 + klen, DB_REV_VALUE(val), DB_REV_VALUE_LEN);
    free(rk);
    return rc;
}

int db_stage_add(nd_db *db, st_batch *b, const void *key, size_t klen, uint64_t fp,
                 double score, int64_t time, int fp_absent, uint64_t *docs, uint64_t *fps,
                 uint64_t *fresh, st_u64s *defer)
{
    char *old = NULL;
    size_t olen;
    int rc = st_batch_get(db->store, b, ST_CF_DOCS, key, klen, &old, &olen);
    if (rc == ND_OK) {
        uint64_t oldfp;
        rc = db_doc_decode(old, olen, &oldfp, NULL, NULL);
        free(old);
        ND_FORWARD(rc);
        /* Same fingerprint: only score and time change. */
        if (oldfp == fp) return stage_doc(b, key, klen, fp, score, time);
        ND_FORWARD(unlink_fp(db, b, oldfp, key, klen, fps, defer));
    } else if (rc == ND_ENOTFOUND) {
        (*docs)++;
    } else {
        return rc;
    }
    int has = 0;
    if (!fp_absent) ND_FORWARD(fp_has_docs(db, b, fp, &has));
    if (!has) {
        if (defer) ND_FORWARD(st_u64s_push(defer, fp));
        else ND_FORWARD(tables_insert(db, b, fp));
        (*fps)++;
        *fresh += db->plan.info.tables;
    }
    return stage_doc(b, key, klen, fp, score, time);
}

int db_stage_delete(nd_db *db, st_batch *b, const void *key, size_t klen, uint64_t *docs,
                    uint64_t *fps)
{
    char *old = NULL;
    size_t olen;
    uint64_t oldfp;
    int rc = st_batch_get(db->store, b, ST_CF_DOCS, key, klen, &old, &olen);
    if (rc == ND_ENOTFOUND) return nd_err_set(ND_ENOTFOUND, "no document with this key");
    ND_FORWARD(rc);
    rc = db_doc_decode(old, olen, &oldfp, NULL, NULL);
    free(old);
    ND_FORWARD(rc);
    ND_FORWARD(st_batch_delete(b, ST_CF_DOCS, key, klen));
    ND_FORWARD(unlink_fp(db, b, oldfp, key, klen, fps, NULL));
    (*docs)--;
    return ND_OK;
}

/* db_commit; stored (may be NULL): the one fingerprint the batch adds,
 * for add_if_new's check of what was committed since it began. */
static int commit_noting(nd_db *db, st_batch *b, uint64_t docs, uint64_t fps, uint64_t fresh,
                         const uint64_t *stored)
{
    uint64_t per_table = fresh / db->plan.info.tables;
    ND_FORWARD(db_stage_counters(db, b, docs, fps));
    /* Raised before the write, so no probe skips a visible fresh entry. */
    for (unsigned t = 0; per_table && t < db->plan.info.tables; t++)
        atomic_fetch_add(&db->fresh_live[t], per_table);
    int rc = st_write(db->store, b, db->sync);
    if (rc < 0) {
        for (unsigned t = 0; per_table && t < db->plan.info.tables; t++)
            atomic_fetch_sub(&db->fresh_live[t], per_table);
        return rc;
    }
    db->ndocs = docs;
    db->nfps = fps;
    db->fresh_pending += fresh;
    uint64_t epoch = atomic_load(&db->add_epoch) + 1;
    if (stored) {
        db_recent *r = &db->recent[db->recent_at];
        if (r->epoch > db->recent_gap) db->recent_gap = r->epoch;
        *r = (db_recent){epoch, *stored};
        db->recent_at = (db->recent_at + 1) % DB_RECENT;
    } else {
        db->recent_gap = epoch;
    }
    atomic_store(&db->add_epoch, epoch); /* after the write is visible */
    return ND_OK;
}

int db_commit(nd_db *db, st_batch *b, uint64_t docs, uint64_t fps, uint64_t fresh)
{
    return commit_noting(db, b, docs, fps, fresh, NULL);
}

int nd_add_many(nd_db *db, const nd_doc *docs, size_t n)
{
    st_batch *b = NULL;
    int rc;
    ND_FORWARD(db_check_writable(db));
    ND_RETURN_IF(n && !docs, ND_EINVAL, "nd_add_many: NULL documents");
    for (size_t i = 0; i < n; i++) {
        rc = db_check_key(docs[i].key, docs[i].key_len);
        if (rc < 0) return nd_err_wrap(rc, "document %zu", i);
    }
    st_u64s defer = {0}, adopt = {0};
    ND_FORWARD(st_batch_new(&b, db->store));
    db_write_lock(db);
    uint64_t nd = db->ndocs, nf = db->nfps, fresh = 0;
    for (size_t i = 0; i < n; i++)
        ND_TRY(db_stage_add(db, b, docs[i].key, docs[i].key_len, docs[i].fp, docs[i].score,
                            docs[i].time, 0, &nd, &nf, &fresh, &defer));
    ND_TRY(db_mirrored_stage(db, b, &defer, &adopt));
    ND_TRY(db_commit(db, b, nd, nf, fresh));
    db_mirrored_adopt(db, &adopt);
cleanup:
    pthread_mutex_unlock(&db->write_mu);
    st_batch_free(b);
    st_u64s_dispose(&defer);
    st_u64s_dispose(&adopt);
    if (rc == ND_OK) db_fold_kick(db);
    return rc;
}

int nd_add(nd_db *db, const void *key, size_t key_len, uint64_t fp, double score, int64_t time)
{
    nd_doc d = {key, key_len, fp, score, time};
    return nd_add_many(db, &d, 1);
}

int nd_delete(nd_db *db, const void *key, size_t key_len)
{
    st_batch *b = NULL;
    int rc;
    ND_FORWARD(db_check_writable(db));
    ND_FORWARD(db_check_key(key, key_len));
    ND_FORWARD(st_batch_new(&b, db->store));
    db_write_lock(db);
    uint64_t nd = db->ndocs, nf = db->nfps;
    ND_TRY(db_stage_delete(db, b, key, key_len, &nd, &nf));
    ND_TRY(db_commit(db, b, nd, nf, 0));
cleanup:
    pthread_mutex_unlock(&db->write_mu);
    st_batch_free(b);
    return rc;
}

/* Closest stored document within k: fills out with at most one match. */
static int closest(nd_results *out, nd_db *db, uint64_t fp, unsigned k)
{
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.limit = 1;
    return nd_query(out, db, fp, k, &qo);
}

/* With write_mu held: can a check that began at epoch since stand, that
 * is, is every commit after it a fingerprint add_if_new stored (the ring
 * still holds them all) and none of them within k of fp? */
static int check_stands(const nd_db *db, uint64_t since, uint64_t fp, unsigned k)
{
    if (atomic_load(&db->add_epoch) == since) return 1;
    if (db->recent_gap > since) return 0;
    for (size_t n = 0, i = db->recent_at; n < DB_RECENT; n++) {
        i = (i + DB_RECENT - 1) % DB_RECENT;
        const db_recent *r = &db->recent[i];
        if (r->epoch <= since) break; /* the ring is in epoch order */
        if ((unsigned)__builtin_popcountll(r->fp ^ fp) <= k) return 0;
    }
    return 1;
}

static int matched_key(const nd_results *out, const void *key, size_t key_len)
{
    const nd_match *m = nd_results_get(out, 0);
    return m->key_len == key_len && memcmp(m->key, key, key_len) == 0;
}

int nd_add_if_new(nd_results *out, nd_db *db, const void *key, size_t key_len, uint64_t fp,
                  double score, int64_t time, unsigned k)
{
    st_batch *b = NULL;
    st_u64s defer = {0}, adopt = {0};
    int rc = ND_OK;
    ND_RETURN_IF(!out, ND_EINVAL, "nd_add_if_new: NULL results");
    ND_FORWARD(db_check_writable(db));
    ND_FORWARD(db_check_key(key, key_len));
    ND_RETURN_IF(k > ND_MAX_K, ND_EINVAL, "distance k=%u (0..%u allowed)", k, ND_MAX_K);
    /* The check runs outside the writer lock, so the checks of several
     * threads overlap. A near-duplicate of another key found then was
     * stored when the check saw it: the call is done, nothing to write.
     * Else, under the lock, the check stands if what was committed since
     * it began cannot be within k (check_stands), and runs again there
     * if it might: check and insert stay atomic, and a racing
     * near-duplicate still finds this one. */
    uint64_t since = atomic_load(&db->add_epoch);
    ND_FORWARD(closest(out, db, fp, k));
    if (nd_results_count(out) && !matched_key(out, key, key_len)) return ND_OK;
    ND_FORWARD(st_batch_new(&b, db->store));
    db_write_lock(db);
    uint64_t nd = db->ndocs, nf = db->nfps, fresh = 0;
    if (nd_results_count(out) || !check_stands(db, since, fp, k)) ND_TRY(closest(out, db, fp, k));
    if (nd_results_count(out)) {
        const nd_match *m = nd_results_get(out, 0);
        if (matched_key(out, key, key_len)) {
            /* Seen again: refresh its last-seen time, keep the rest. */
            ND_TRY(stage_doc(b, key, key_len, m->fp, m->score, time));
            ND_TRY(st_write(db->store, b, db->sync));
        }
        goto cleanup;
    }
    /* Nothing within k >= 0 was found, so fp itself is not stored. */
    ND_TRY(db_stage_add(db, b, key, key_len, fp, score, time, 1, &nd, &nf, &fresh, &defer));
    ND_TRY(db_mirrored_stage(db, b, &defer, &adopt));
    ND_TRY(commit_noting(db, b, nd, nf, fresh, &fp));
    db_mirrored_adopt(db, &adopt);
cleanup:
    pthread_mutex_unlock(&db->write_mu);
    st_batch_free(b);
    st_u64s_dispose(&defer);
    st_u64s_dispose(&adopt);
    if (rc == ND_OK && fresh) db_fold_kick(db);
    return rc;
}

/* ---- retention -------------------------------------------------------- */

#define EXPIRE_BATCH 10000

typedef struct expire_ctx {
    int64_t before;
    char **keys;
    size_t *lens;
    size_t n;
} expire_ctx;

static int delete_keys(nd_db *db, expire_ctx *e, uint64_t *deleted)
{
    st_batch *b = NULL;
    int rc;
    ND_TRY(st_batch_new(&b, db->store));
    db_write_lock(db);
    uint64_t nd = db->ndocs, nf = db->nfps;
    size_t done = 0;
    rc = ND_OK;
    for (size_t i = 0; i < e->n; i++) {
        rc = db_stage_delete(db, b, e->keys[i], e->lens[i], &nd, &nf);
        if (rc == ND_ENOTFOUND) { /* deleted meanwhile */
            rc = ND_OK;
            continue;
        }
        if (rc < 0) break;
        done++;
    }
    if (rc == ND_OK) rc = db_commit(db, b, nd, nf, 0);
    pthread_mutex_unlock(&db->write_mu);
    if (rc == ND_OK) *deleted += done;
cleanup:
    st_batch_free(b);
    for (size_t i = 0; i < e->n; i++) free(e->keys[i]);
    e->n = 0;
    return rc;
}

int nd_expire(nd_db *db, int64_t before, uint64_t *out_deleted)
{
    st_iter *it = NULL;
    expire_ctx e = {before, NULL, NULL, 0};
    uint64_t deleted = 0;
    int rc;
    ND_FORWARD(db_check_writable(db));
    e.keys = malloc(EXPIRE_BATCH * sizeof *e.keys);
    e.lens = malloc(EXPIRE_BATCH * sizeof *e.lens);
    if (!e.keys || !e.lens) ND_FAIL(ND_ENOMEM, "expire: out of memory");
    /* The iterator reads a snapshot; deletions go in batches beside it. */
    ND_TRY(st_iter_new(&it, db->store, ST_CF_DOCS, NULL, 1));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        int64_t time;
        ND_TRY(db_doc_decode(v, vlen, NULL, NULL, &time));
        if (!db_doc_expired(time, before)) continue;
        e.keys[e.n] = malloc(klen ? klen : 1);
        if (!e.keys[e.n]) ND_FAIL(ND_ENOMEM, "expire: out of memory");
        memcpy(e.keys[e.n], k, klen);
        e.lens[e.n++] = klen;
        if (e.n == EXPIRE_BATCH) ND_TRY(delete_keys(db, &e, &deleted));
    }
    ND_TRY(st_iter_status(it));
    if (e.n) ND_TRY(delete_keys(db, &e, &deleted));
    rc = ND_OK;
cleanup:
    if (e.keys)
        for (size_t i = 0; i < e.n; i++) free(e.keys[i]);
    free(e.keys);
    free(e.lens);
    st_iter_free(it);
    if (out_deleted) *out_deleted = deleted;
    return rc;
}
