/*
 * db_write.c — the public writers of single documents and small groups:
 * nd_db_add_many (and nd_db_add), nd_db_delete, nd_db_add_if_new,
 * nd_db_add_doc_if_new; nd_db_sync, which makes the writes so far
 * durable. Each is one write transaction (db_txn.h); a resemblance
 * store's nd_db_add_doc_if_new is db_similar.c's, nd_db_expire is
 * db_expire.c's.
 *
 * nd_db_add_if_new checks before it takes the writer lock, so the checks of
 * several threads overlap; every commit counts an epoch and notes the
 * fingerprint add_if_new stored (or, any other commit, that it cannot
 * say: db_txn.c), so that under the lock a check only looks at what was
 * committed since it began (db_txn_check_stands).
 *
 * Callers: the public API (include/neardup.h) only.
 */
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
