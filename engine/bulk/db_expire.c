/*
 * db_expire.c — retention: nd_db_expire deletes every document last seen
 * before a time, in one of two ways.
 *
 *   - In groups. A walk of docs (a snapshot) gathers the expired keys and
 *     deletes them in atomic groups of EXPIRE_GROUP
 *     (db_txn_stage_delete_many: each table run that loses values is
 *     rewritten once a group); writers go on between groups, and a
 *     document refreshed after the walk chose it is kept. Its cost per
 *     document grows with the store: a group meets ever more runs for
 *     fewer values each (10% of 1M: 27K documents/s; of 10M: 13.6K).
 *   - By a new generation (once the walk has found more than
 *     1/EXPIRE_REWRITE_SHARE of the store expired). Every table is written
 *     anew as SST files without the fingerprints the expired documents
 *     held last (st_regen, as a bulk import writes one); docs and rev are
 *     carried as they are, with a file of the expired entries' deletions
 *     each (st_regen_new_carried: at 100M documents, copying them was two
 *     thirds of the time, 90% of it unchanged), and one synced write
 *     switches to the new generation with the counters; the deletions are
 *     ingested right after it (cmp_carry.h; after a crash, at the next
 *     open): the whole expiry is atomic (a crash before that write leaves
 *     the old generation, after it the new one), and costs one sequential
 *     read of the store and a rewrite of its tables whatever the share
 *     expired. Writers wait meanwhile (db_exclusive_lock); queries read
 *     the old generation until the switch. The sketch and band families
 *     of a resemblance store are not generational: the walk of docs
 *     writes the expired documents' sketch deletions to a file of their
 *     own and notes their band entries, sorted then into a file of
 *     deletions too (expire_drops.c: about 100 bytes and the key a
 *     document in memory), ingested with docs' and rev's after the
 *     switch, after a flush of the band memory, so that the deletions
 *     meet every entry in the family and the memory holds none to drop.
 *
 * Callers: nd_db_expire (public) and tests (db_expire).
 */
#include "db_expire.h"

#include <stdlib.h>
#include <string.h>

#include "db_bands.h"
#include "db_core.h"
#include "db_fold.h"
#include "db_txn.h"
#include "expire_drops.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "nd_task.h"
#include "sort.h"

#define EXPIRE_GROUP 16384
/* The generation is written once the expired documents pass this share
 * of the store (and EXPIRE_GROUP): at 10M documents a rewrite takes about
 * as long as groups deleting 1/128 of them. */
#define EXPIRE_REWRITE_SHARE 128

/* ---- in groups ---------------------------------------------------------- */

typedef struct gathered {
    char **keys;
    size_t *lens;
    size_t n, cap;
} gathered;

static void gathered_clear(gathered *e)
{
    for (size_t i = 0; i < e->n; i++) free(e->keys[i]);
    e->n = 0;
}

static int gathered_push(gathered *e, const char *k, size_t klen)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : EXPIRE_GROUP;
        char **keys = realloc(e->keys, cap * sizeof *keys);
        if (keys) e->keys = keys;
        size_t *lens = keys ? realloc(e->lens, cap * sizeof *lens) : NULL;
        if (lens) e->lens = lens;
        ND_RETURN_IF(!keys || !lens, ND_ENOMEM, "expire: out of memory for %zu keys", cap);
        e->cap = cap;
    }
    char *copy = malloc(klen ? klen : 1);
    ND_RETURN_IF(!copy, ND_ENOMEM, "expire: out of memory");
    memcpy(copy, k, klen);
    e->keys[e->n] = copy;
    e->lens[e->n++] = klen;
    return ND_OK;
}

/* Delete keys[0..n) in one atomic write, those refreshed since they
 * were read kept (db_txn_stage_delete_many); *deleted counts them. */
static int delete_group(nd_db *db, char *const *keys, const size_t *lens, size_t n,
                        int64_t before, uint64_t *deleted)
{
    db_txn t = {0};
    size_t done = 0;
    int rc;
    ND_TRY(db_txn_begin(&t, db, 0));
    ND_TRY(db_txn_stage_delete_many(&t, (const char *const *)keys, lens, n, &before, &done));
    ND_TRY(db_txn_commit(&t));
    *deleted += done;
cleanup:
    return db_txn_end(&t, rc);
}

/* Delete the gathered keys in groups of EXPIRE_GROUP (a group takes a
 * few tenths of a second, the most a stop waits); the keys are dropped
 * either way. */
static int delete_gathered(nd_db *db, gathered *e, int64_t before, uint64_t *deleted)
{
    int rc = ND_OK;
    for (size_t at = 0; at < e->n && rc == ND_OK; at += EXPIRE_GROUP) {
        size_t n = e->n - at < EXPIRE_GROUP ? e->n - at : EXPIRE_GROUP;
        rc = delete_group(db, e->keys + at, e->lens + at, n, before, deleted);
    }
    gathered_clear(e);
    return rc;
}

/* ---- by a new generation ------------------------------------------------- */

/* The expired documents' deletions into g's carried docs (the others
 * stay as they are): *gone of them. In a resemblance store (drops
 * non-NULL) their sketches' and band entries' deletions go to drops'
 * files. */
static int docs_without(nd_db *db, st_regen *g, expire_drops *drops, int64_t before,
                        uint64_t *gone)
{
    st_iter *it = NULL;
    int rc;
    ND_TRY(st_regen_begin(g, ST_CF_DOCS));
    ND_TRY(st_iter_new_scan(&it, db->store, ST_CF_DOCS));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen), *v = st_iter_value(it, &vlen);
        int64_t time;
        ND_TRY(st_regen_tick(g));
        ND_TRY(db_doc_decode(v, vlen, NULL, NULL, &time));
        if (!db_doc_expired(time, before)) continue;
        ++*gone;
        ND_TRY(st_regen_delete(g, k, klen));
        if (drops) ND_TRY(expire_drops_add(drops, k, klen));
    }
    ND_TRY(st_iter_status(it));
    ND_TRY(st_regen_end(g));
    if (drops) ND_TRY(expire_drops_end(drops));
cleanup:
    st_iter_free(it);
    return rc;
}

/* The time of rev entry key/v: its own, or (written before format 3, an
 * empty value) its document's. */
static int rev_time(nd_db *db, const char *k, size_t klen, const char *v, size_t vlen,
                    int64_t *time)
{
    char *dv = NULL;
    size_t dlen;
    int rc = db_rev_decode(v, vlen, NULL, time);
    if (rc != 0) return rc < 0 ? rc : ND_OK;
    ND_RETURN_IF(klen <= 8, ND_ECORRUPT, "rev entry of %zu bytes has no document key", klen);
    rc = st_get(db->store, ST_CF_DOCS, k + 8, klen - 8, &dv, &dlen);
    if (rc == ND_ENOTFOUND)
        return nd_err_set(ND_ECORRUPT, "rev entry names a document docs does not hold");
    if (rc == ND_OK) rc = db_doc_decode(dv, dlen, NULL, NULL, time);
    free(dv);
    return rc;
}

/* The expired documents' deletions into g's carried rev (*gone of them);
 * dead gets, ascending, each fingerprint none of whose documents stays. */
static int rev_without(nd_db *db, st_regen *g, int64_t before, uint64_t *gone, st_u64s *dead)
{
    st_iter *it = NULL;
    uint64_t cur = 0;
    int have = 0, kept = 0, rc;
    ND_TRY(st_regen_begin(g, ST_CF_REV));
    ND_TRY(st_iter_new_scan(&it, db->store, ST_CF_REV));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen), *v = st_iter_value(it, &vlen);
        int64_t time;
        if (klen < 8) ND_FAIL(ND_ECORRUPT, "rev key of %zu bytes", klen);
        uint64_t fp = nd_load_be64(k);
        if (!have || fp != cur) {
            if (have && !kept) ND_TRY(st_u64s_push(dead, cur));
            cur = fp;
            have = 1;
            kept = 0;
        }
        ND_TRY(st_regen_tick(g));
        ND_TRY(rev_time(db, k, klen, v, vlen, &time));
        if (!db_doc_expired(time, before)) {
            kept = 1;
            continue;
        }
        ++*gone;
        ND_TRY(st_regen_delete(g, k, klen));
    }
    ND_TRY(st_iter_status(it));
    if (have && !kept) ND_TRY(st_u64s_push(dead, cur));
    ND_TRY(st_regen_end(g));
cleanup:
    st_iter_free(it);
    return rc;
}

/* Tables first, first + step, ... into g without the dead fingerprints. */
typedef struct tables_job {
    nd_db *db;
    st_regen *g;
    const st_u64s *dead;
    unsigned first, step;
} tables_job;

static int tables_without(void *arg)
{
    tables_job *j = arg;
    nd_db *db = j->db;
    size_t n = j->dead->n;
    uint64_t *perm = malloc((n ? n : 1) * sizeof *perm), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    int rc = ND_OK;
    if (!perm || !tmp) ND_FAIL(ND_ENOMEM, "expire: out of memory for %zu fingerprints", n);
    for (unsigned t = j->first; t < db->plan.info.tables; t += j->step) {
        for (size_t i = 0; i < n; i++) perm[i] = nd_perm_apply(&db->plan.table[t], j->dead->v[i]);
        sort_u64(perm, tmp, n);
        ND_TRY(st_table_rewrite_without(j->g, db->store, t, db->run_size, perm, n));
    }
cleanup:
    free(perm);
    free(tmp);
    return rc;
}

/* docs into a fork of g, for a task. */
typedef struct docs_job {
    nd_db *db;
    st_regen *g;
    expire_drops *drops;
    int64_t before;
    uint64_t gone;
} docs_job;

static int docs_task(void *arg)
{
    docs_job *j = arg;
    return docs_without(j->db, j->g, j->drops, j->before, &j->gone);
}

/* The deletions of docs and rev (and a resemblance store's sketches and
 * band entries, beside docs), then every table, into g: with two threads
 * docs is walked beside rev, and the odd tables written beside the even
 * ones, each on a fork of g. Progress is reported here, on the caller's
 * thread. */
static int write_generation(nd_db *db, st_regen *g, int64_t before, uint64_t *gone,
                            st_u64s *dead, db_stop *stop)
{
    int par = db_threads(db) >= 2, rc;
    expire_drops drops;
    docs_job dj = {db, NULL, NULL, before, 0};
    uint64_t gone_rev = 0;
    nd_task task;
    if (db->min_resemblance > 0) {
        ND_FORWARD(expire_drops_begin(&drops, db, g));
        dj.drops = &drops;
    }
    if (par && (rc = st_regen_fork(&dj.g, g)) < 0) {
        if (dj.drops) (void)expire_drops_finish(&drops, g, 0);
        return rc;
    }
    if (par) st_regen_set_stop(dj.g, db_stop_seen, stop);
    else dj.g = g;
    nd_task_start(&task, docs_task, &dj, par);
    rc = nd_task_wait(&task, rev_without(db, g, before, &gone_rev, dead));
    if (par) {
        int jrc = st_regen_join(g, dj.g, rc == ND_OK);
        if (rc == ND_OK) rc = jrc;
    }
    if (dj.drops) {
        int drc = expire_drops_finish(&drops, g, rc == ND_OK);
        if (rc == ND_OK) rc = drc;
    }
    ND_FORWARD(rc);
    if (dj.gone != gone_rev)
        return nd_err_set(ND_ECORRUPT, "expire: %llu documents expire in docs but %llu in rev",
                          (unsigned long long)dj.gone, (unsigned long long)gone_rev);
    *gone = dj.gone;
    if (*gone == 0) return ND_OK; /* nothing to switch to */
    if ((rc = db_stop_report(stop, 2)) != 0) return rc;
    tables_job even = {db, g, dead, 0, par ? 2 : 1}, odd = {db, NULL, dead, 1, 2};
    if (!par) return tables_without(&even);
    ND_FORWARD(st_regen_fork(&odd.g, g));
    st_regen_set_stop(odd.g, db_stop_seen, stop);
    nd_task_start(&task, tables_without, &odd, 1);
    rc = nd_task_wait(&task, tables_without(&even));
    int jrc = st_regen_join(g, odd.g, rc == ND_OK);
    ND_FORWARD(rc);
    return jrc;
}

static int rewrite_locked(nd_db *db, int64_t before, uint64_t *deleted)
{
    db_stop stop;
    db_stop_init(&stop, db, "rewriting", "families", 2 + db->plan.info.tables);
    st_regen *g = NULL;
    st_u64s dead = {0};
    uint64_t gone = 0;
    db_txn t = {0};
    int rc;
    ND_TRY(db_fold_locked(db));
    ND_TRY(db_bands_flush(db)); /* the band log then names no expiring document */
    ND_TRY(st_regen_new_carried(&g, db->store));
    /* "rewriting": families written of docs, rev and the tables, asked
     * within a family too (at 100M documents a pass over docs takes about
     * 30 s): by the caller's regen, read by its forks */
    st_regen_set_stop(g, db_stop_ask, &stop);
    ND_TRY(db_txn_begin(&t, db, DB_TXN_HELD | DB_TXN_PLAIN | DB_TXN_BANDS_FLUSHED));
    /* a stop (rc > 0) before the switch leaves the store as it was */
    if ((rc = db_stop_report(&stop, 0)) != 0) goto cleanup;
    rc = db_stop_result(&stop, write_generation(db, g, before, &gone, &dead, &stop));
    if (rc != 0 || gone == 0) goto cleanup;
    if (t.docs < gone || t.fps < dead.n)
        ND_FAIL(ND_ECORRUPT, "expire: %llu documents and %llu fingerprints go, of %llu and %llu "
                "counted", (unsigned long long)gone, (unsigned long long)dead.n,
                (unsigned long long)t.docs, (unsigned long long)t.fps);
    t.docs -= gone;
    t.fps -= dead.n;
    ND_TRY(st_batch_set_regen(t.b, g));
    ND_TRY(db_txn_commit(&t));
    *deleted = gone;
cleanup:
    rc = db_txn_end(&t, rc);
    if (rc == ND_OK) rc = db_stop_report(&stop, stop.total);
    st_regen_free(g);
    st_u64s_dispose(&dead);
    return rc;
}

static int expire_rewrite(nd_db *db, int64_t before, uint64_t *deleted)
{
    db_exclusive_lock(db);
    int rc = rewrite_locked(db, before, deleted);
    db_exclusive_unlock(db);
    return rc;
}

/* ---- the choice ---------------------------------------------------------- */

int db_expire(uint64_t *out_deleted, nd_db *db, int64_t before, int how)
{
    st_iter *it = NULL;
    gathered e = {0};
    uint64_t deleted = 0, total = 0, seen = 0;
    int rc;
    if (out_deleted) *out_deleted = 0;
    ND_FORWARD(db_check_writable(db));
    int bulk = how != DB_EXPIRE_GROUPS;
    nd_db_counts(&total, NULL, db);
    if (bulk && how == DB_EXPIRE_REWRITE) {
        rc = expire_rewrite(db, before, &deleted);
        goto cleanup;
    }
    /* Past this many the generation is written (bulk only); else the keys
     * go in groups, each as soon as it is full when no generation may
     * follow. */
    uint64_t switch_at = total / EXPIRE_REWRITE_SHARE;
    if (switch_at < EXPIRE_GROUP) switch_at = EXPIRE_GROUP;
    ND_TRY(st_iter_new(&it, db->store, ST_CF_DOCS, NULL, 1));
    if ((rc = db_progress(db, "expiring", "documents", 0, total)) != 0) goto cleanup;
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen), *v = st_iter_value(it, &vlen);
        int64_t time;
        /* stopped: what was gathered is deleted first, so that the count
         * reported is what is gone */
        if ((rc = db_progress_tick(db, "expiring", "documents", ++seen, total)) != 0) {
            int drc = delete_gathered(db, &e, before, &deleted);
            if (drc < 0) rc = drc;
            goto cleanup;
        }
        ND_TRY(db_doc_decode(v, vlen, NULL, NULL, &time));
        if (!db_doc_expired(time, before)) continue;
        ND_TRY(gathered_push(&e, k, klen));
        if (bulk && e.n > switch_at) { /* this phase ends here, "rewriting" follows */
            st_iter_free(it);
            it = NULL;
            gathered_clear(&e);
            if ((rc = db_progress(db, "expiring", "documents", seen, total)) == 0)
                rc = expire_rewrite(db, before, &deleted);
            goto cleanup;
        }
        if (!bulk && e.n == EXPIRE_GROUP && (rc = delete_gathered(db, &e, before, &deleted)) != 0)
            goto cleanup;
    }
    ND_TRY(st_iter_status(it));
    ND_TRY(delete_gathered(db, &e, before, &deleted));
    rc = db_progress(db, "expiring", "documents", seen, total);
cleanup:
    gathered_clear(&e);
    free(e.keys);
    free(e.lens);
    st_iter_free(it);
    if (out_deleted) *out_deleted = deleted;
    return rc;
}

int nd_db_expire(uint64_t *out_deleted, nd_db *db, int64_t before)
{
    return db_expire(out_deleted, db, before, DB_EXPIRE_AUTO);
}
