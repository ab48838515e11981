/*
 * db_write.c — the public writers of single documents and small groups:
 * nd_db_add_many (and nd_db_add), nd_db_delete, nd_db_add_if_new,
 * nd_db_add_doc_if_new and nd_db_expire; nd_db_sync, which makes the
 * writes so far durable. Each is one write transaction
 * (db_txn.h) or, nd_db_expire, one per batch of expired keys; a
 * resemblance store's nd_db_add_doc_if_new is db_similar.c's.
 *
 * nd_db_add_if_new checks before it takes the writer lock, so the checks of
 * several threads overlap; every commit counts an epoch and notes the
 * fingerprint add_if_new stored (or, any other commit, that it cannot
 * say: db_txn.c), so that under the lock a check only looks at what was
 * committed since it began (db_txn_check_stands).
 *
 * Callers: the public API (include/neardup.h) only.
 */
#include <stdlib.h>
#include <string.h>

#include "db_core.h"
#include "db_similar.h"
#include "db_txn.h"
#include "nd_error.h"

int nd_db_add_many(nd_db *db, const nd_doc *docs, size_t n)
{
    db_txn t = {0};
    int rc;
    ND_FORWARD(db_check_writable(db));
    ND_RETURN_IF(n && !docs, ND_EINVAL, "nd_db_add_many: NULL documents");
    ND_FORWARD(db_check_docs(docs, n));
    ND_FORWARD(db_check_sketches(db, docs, n, "nd_db_add_many"));
    ND_TRY(db_txn_begin(&t, db, 0));
    for (size_t i = 0; i < n; i++) ND_TRY(db_txn_stage_add(&t, &docs[i], 0));
    ND_TRY(db_txn_commit(&t));
cleanup:
    return db_txn_end(&t, rc);
}

int nd_db_add(nd_db *db, const void *key, size_t key_len, uint64_t fp, double score, int64_t time)
{
    nd_doc d = {key, key_len, fp, score, time, NULL};
    ND_RETURN_IF(!db, ND_EINVAL, "NULL database handle");
    ND_FORWARD(db_check_sketches(db, &d, 1, "nd_db_add (a bare fingerprint)"));
    return nd_db_add_many(db, &d, 1);
}

int nd_db_delete(nd_db *db, const void *key, size_t key_len)
{
    db_txn t = {0};
    int rc;
    ND_FORWARD(db_check_writable(db));
    ND_FORWARD(db_check_key(key, key_len));
    ND_TRY(db_txn_begin(&t, db, 0));
    ND_TRY(db_txn_stage_delete(&t, key, key_len));
    ND_TRY(db_txn_commit(&t));
cleanup:
    return db_txn_end(&t, rc);
}

/* Under the writer lock, so that no write is half-way through st_write
 * (its sequence number published, its counter not yet) when the record
 * of the last synced write is taken. */
int nd_db_sync(nd_db *db)
{
    ND_FORWARD(db_check_writable(db));
    db_write_lock(db);
    int rc = st_sync(db->store);
    db_write_unlock(db);
    return rc;
}

/* Closest stored document within k: fills out with at most one match. */
static int closest(nd_results *out, nd_db *db, uint64_t fp, unsigned k)
{
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.limit = 1;
    return nd_db_query(out, db, fp, k, &qo);
}

static int matched_key(const nd_results *out, const void *key, size_t key_len)
{
    const nd_match *m = nd_results_get(out, 0);
    return m->key_len == key_len && memcmp(m->key, key, key_len) == 0;
}

int nd_db_add_if_new(nd_results *out, nd_db *db, const void *key, size_t key_len, uint64_t fp,
                     double score, int64_t time, unsigned k)
{
    db_txn t = {0};
    int rc = ND_OK;
    ND_RETURN_IF(!out, ND_EINVAL, "nd_db_add_if_new: NULL results");
    ND_FORWARD(db_check_writable(db));
    ND_FORWARD(db_check_key(key, key_len));
    ND_RETURN_IF(k > ND_MAX_K, ND_EINVAL, "distance k=%u (0..%u allowed)", k, ND_MAX_K);
    nd_doc bare = {key, key_len, fp, score, time, NULL};
    ND_FORWARD(db_check_sketches(db, &bare, 1,
                                 "nd_db_add_if_new (a bare fingerprint; nd_db_add_doc_if_new "
                                 "takes a sketch)"));
    /* The check runs outside the writer lock, so the checks of several
     * threads overlap. A near-duplicate of another key found then was
     * stored when the check saw it: the call is done, nothing to write.
     * Else, under the lock, the check stands if what was committed since
     * it began cannot be within k (db_txn_check_stands), and runs again there
     * if it might: check and insert stay atomic, and a racing
     * near-duplicate still finds this one. */
    uint64_t since = db_txn_epoch(db);
    ND_FORWARD(closest(out, db, fp, k));
    if (nd_results_count(out) && !matched_key(out, key, key_len)) return ND_OK;
    ND_TRY(db_txn_begin(&t, db, 0));
    if (nd_results_count(out) || !db_txn_check_stands(db, since, fp, k)) ND_TRY(closest(out, db, fp, k));
    if (nd_results_count(out)) {
        const nd_match *m = nd_results_get(out, 0);
        if (matched_key(out, key, key_len)) {
            /* Seen again: refresh its last-seen time, keep the rest. */
            ND_TRY(db_txn_stage_refresh(&t, key, key_len, m->fp, m->score, time));
            ND_TRY(db_txn_write(&t));
        }
        goto cleanup;
    }
    /* Nothing within k >= 0 was found, so fp itself is not stored. */
    nd_doc d = {key, key_len, fp, score, time, NULL};
    ND_TRY(db_txn_stage_add(&t, &d, 1));
    ND_TRY(db_txn_commit_checked(&t, fp));
cleanup:
    return db_txn_end(&t, rc);
}

int nd_db_add_doc_if_new(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k)
{
    ND_RETURN_IF(!out || !db || !doc, ND_EINVAL, "nd_db_add_doc_if_new: NULL argument");
    if (db->min_resemblance > 0) return db_similar_add_if_new(out, db, doc, k);
    return nd_db_add_if_new(out, db, doc->key, doc->key_len, doc->fp, doc->score, doc->time, k);
}

/* ---- retention -------------------------------------------------------- */

#define EXPIRE_BATCH 16384

typedef struct expire_ctx {
    int64_t before;
    char **keys;
    size_t *lens;
    size_t n;
} expire_ctx;

/* Delete the gathered keys in one atomic write, those refreshed since
 * they were read kept (db_txn_stage_delete_many: each table run that
 * loses values is rewritten once, so the larger the group the fewer
 * rewrites; a group of 16384 takes a few tenths of a second, the most a
 * stop waits). */
static int delete_keys(nd_db *db, expire_ctx *e, uint64_t *deleted)
{
    db_txn t = {0};
    size_t done = 0;
    int rc;
    ND_TRY(db_txn_begin(&t, db, 0));
    ND_TRY(db_txn_stage_delete_many(&t, (const char *const *)e->keys, e->lens, e->n, &e->before, &done));
    ND_TRY(db_txn_commit(&t));
    *deleted += done;
cleanup:
    rc = db_txn_end(&t, rc);
    for (size_t i = 0; i < e->n; i++) free(e->keys[i]);
    e->n = 0;
    return rc;
}

int nd_db_expire(uint64_t *out_deleted, nd_db *db, int64_t before)
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
    uint64_t total = 0, seen = 0;
    nd_db_counts(&total, NULL, db);
    ND_TRY(st_iter_new(&it, db->store, ST_CF_DOCS, NULL, 1));
    if ((rc = db_progress(db, "expiring", "documents", 0, total)) != 0) goto cleanup;
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        int64_t time;
        /* stopped: the batch gathered so far is deleted first, so that the
         * count reported is what is gone */
        if ((rc = db_progress_tick(db, "expiring", "documents", ++seen, total)) != 0) {
            int drc = e.n ? delete_keys(db, &e, &deleted) : ND_OK;
            if (drc < 0) rc = drc;
            goto cleanup;
        }
        ND_TRY(db_doc_decode(v, vlen, NULL, NULL, &time));
        if (!db_doc_expired(time, before)) continue;
        e.keys[e.n] = malloc(klen ? klen : 1);
        if (!e.keys[e.n]) ND_FAIL(ND_ENOMEM, "expire: out of memory");
        memcpy(e.keys[e.n], k, klen);
        e.lens[e.n++] = klen;
        if (e.n == EXPIRE_BATCH && (rc = delete_keys(db, &e, &deleted)) != 0)
            goto cleanup;
    }
    ND_TRY(st_iter_status(it));
    if (e.n && (rc = delete_keys(db, &e, &deleted)) != 0) goto cleanup;
    rc = db_progress(db, "expiring", "documents", seen, total);
cleanup:
    if (e.keys)
        for (size_t i = 0; i < e.n; i++) free(e.keys[i]);
    free(e.keys);
    free(e.lens);
    st_iter_free(it);
    if (out_deleted) *out_deleted = deleted;
    return rc;
}
