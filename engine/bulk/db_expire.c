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
 *     1/EXPIRE_REWRITE_SHARE of the store expired, or in a large store a
 *     sample of rev has found twice that). A walk of rev finds what goes
 *     (expire_walk.c: in parts on two threads; rev alone names each
 *     expired document and each fingerprint left without one). Every
 *     table is written anew as SST files without the fingerprints the
 *     expired documents held last (st_regen, as a bulk import writes
 *     one), beside a thread writing the deletion files; docs and rev are
 *     carried as they are, with a file of the expired entries' deletions
 *     each (st_regen_new_carried: at 100M documents, copying them was two
 *     thirds of the time, 90% of it unchanged), and one synced write
 *     switches to the new generation with the counters; the deletions are
 *     ingested right after it (cmp_carry.h; after a crash, at the next
 *     open): the whole expiry is atomic (a crash before that write leaves
 *     the old generation, after it the new one), and costs a read of rev
 *     and a rewrite of the tables whatever the share expired. Writers wait meanwhile (db_exclusive_lock); queries read
 *     the old generation until the switch. The sketch and band families
 *     of a resemblance store are not generational: beside the docs
 *     deletions the expired documents' sketch deletions go to a file of
 *     their own and their band entries are noted, sorted then into a file of
 *     deletions too (expire_drops.c: about 100 bytes and the key a
 *     document in memory), ingested with docs' and rev's after the
 *     switch, after a flush of the band memory, so that the deletions
 *     meet every entry in the family and the memory holds none to drop.
 *
 * Callers: nd_db_expire (public) and tests (db_expire).
 */
#include "db_expire.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "db_bands.h"
#include "db_core.h"
#include "db_fold.h"
#include "db_txn.h"
#include "expire_drops.h"
#include "expire_walk.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "nd_task.h"
#include "sort.h"

#define EXPIRE_GROUP 16384
/* The generation is written once the expired documents pass this share
 * of the store (and EXPIRE_GROUP): at 10M documents a rewrite takes about
 * as long as groups deleting 1/128 of them. */
#define EXPIRE_REWRITE_SHARE 128
/* From this many documents a sample of rev may choose the generation
 * before the walk of docs does (below, the walk is short anyway). */
#define EXPIRE_SAMPLE_FROM (1u << 20)

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

/* Tables first, first + step, ... into g without the dead fingerprints,
 * each one written counted in stop's done and followed by a stop check
 * (the caller's job asks, a fork's reads the answer: a table's runs are
 * too few for its regen's asks in a small store); *running, when set,
 * counted out at the end. */
typedef struct tables_job {
    nd_db *db;
    st_regen *g;
    const st_u64s *dead;
    unsigned first, step;
    db_stop *stop;
    int asks;
    atomic_uint *running;
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
        db_stop_advance(j->stop);
        ND_TRY(db_stop_check(j->stop, j->asks));
    }
cleanup:
    free(perm);
    free(tmp);
    if (j->running) atomic_fetch_sub(j->running, 1);
    return rc;
}

/* The deletion file of rev (the walk's order) or of docs (the keys
 * sorted, with a resemblance store's sketch and band deletions when drops
 * is non-NULL) into g, for a task. */
typedef struct files_job {
    st_regen *g;
    const expire_walk *w;
    int cf; /* ST_CF_REV or ST_CF_DOCS */
    expire_drops *drops;
    atomic_uint *running; /* counted out at the end */
} files_job;

static int delete_rev(void *arg, const char *key, size_t klen)
{
    return st_regen_delete(((files_job *)arg)->g, key, klen);
}

static int delete_doc(void *arg, const char *key, size_t klen)
{
    files_job *j = arg;
    ND_FORWARD(st_regen_delete(j->g, key, klen));
    return j->drops ? expire_drops_add(j->drops, key, klen) : ND_OK;
}

static int write_file(files_job *j)
{
    ND_FORWARD(st_regen_begin(j->g, j->cf));
    if (j->cf == ST_CF_REV) ND_FORWARD(expire_walk_each_rev(j->w, delete_rev, j));
    else ND_FORWARD(expire_walk_each_doc(j->w, delete_doc, j));
    ND_FORWARD(st_regen_end(j->g));
    return j->drops ? expire_drops_end(j->drops) : ND_OK;
}

static int files_task(void *arg)
{
    files_job *j = arg;
    int rc = write_file(j);
    atomic_fetch_sub(j->running, 1);
    return rc;
}

/* A fork of g for another thread, told of the caller's stop. */
static int fork_for(st_regen **out, st_regen *g, db_stop *stop)
{
    ND_FORWARD(st_regen_fork(out, g));
    st_regen_set_stop(*out, db_stop_seen, stop);
    return ND_OK;
}

/* Join fork (if any) into g, keeping its files when rc is ND_OK: rc, or
 * the join's failure. */
static int join_fork(st_regen *g, st_regen *fork, int rc)
{
    int jrc = fork ? st_regen_join(g, fork, rc == ND_OK) : ND_OK;
    return rc == ND_OK ? jrc : rc;
}

/* The files and the tables, with two threads all at once: rev's file
 * and docs' beside the odd tables and the even ones (at half a store
 * expired the files outlast the tables: on one thread they left a core
 * idle); the caller, its tables written, asks the stop while the others
 * go on. */
static int write_files_and_tables(nd_db *db, st_regen *g, const expire_walk *w,
                                  const st_u64s *dead, db_stop *stop)
{
    int par = db_threads(db) >= 2, rc = ND_OK;
    atomic_uint running = par ? 3 : 2;
    expire_drops drops;
    files_job rev = {g, w, ST_CF_REV, NULL, &running}, docs = {g, w, ST_CF_DOCS, NULL, &running};
    tables_job even = {db, g, dead, 0, par ? 2 : 1, stop, 1, NULL};
    tables_job odd = {db, NULL, dead, 1, 2, stop, 0, &running};
    st_regen *forks[3] = {NULL, NULL, NULL};
    nd_task rt, dt, ot;
    if (db->min_resemblance > 0) {
        ND_FORWARD(expire_drops_begin(&drops, db, g));
        docs.drops = &drops;
    }
    for (unsigned i = 0; par && i < 3 && rc == ND_OK; i++) rc = fork_for(&forks[i], g, stop);
    if (rc == ND_OK) {
        if (par) {
            rev.g = forks[0];
            docs.g = forks[1];
            odd.g = forks[2];
        }
        nd_task_start(&rt, files_task, &rev, par);
        nd_task_start(&dt, files_task, &docs, par);
        if (par) nd_task_start(&ot, tables_without, &odd, 1);
        rc = tables_without(&even);
        if (rc == ND_OK) rc = db_stop_wait(stop, &running);
        if (par) rc = nd_task_wait(&ot, rc);
        rc = nd_task_wait(&rt, nd_task_wait(&dt, rc));
    }
    for (unsigned i = 0; i < 3; i++) rc = join_fork(g, forks[i], rc);
    if (docs.drops) {
        int drc = expire_drops_finish(&drops, g, rc == ND_OK);
        if (rc == ND_OK) rc = drc;
    }
    return rc;
}

/* What expires (a walk of rev, beside itself with two threads), then the
 * deletions of rev and docs (and a resemblance store's sketches and band
 * entries) and every table into g: *gone documents, *dead the
 * fingerprints none of whose documents stays. Progress is reported here,
 * on the caller's thread. */
static int write_generation(nd_db *db, st_regen *g, int64_t before, uint64_t *gone,
                            st_u64s *dead, db_stop *stop)
{
    expire_walk w;
    int rc = expire_walk_rev(&w, db, stop, db_threads(db) >= 2, before);
    if (rc == ND_OK) {
        *gone = expire_walk_count(&w);
        rc = expire_walk_dead(&w, dead);
    }
    if (rc == ND_OK && *gone > 0 && (rc = db_stop_report(stop, 2)) == 0)
        rc = write_files_and_tables(db, g, &w, dead, stop);
    expire_walk_dispose(&w);
    return rc;
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
    if ((rc = db_progress(db, "expiring", "documents", 0, total)) != 0) goto cleanup;
    if (bulk && total >= EXPIRE_SAMPLE_FROM) {
        uint64_t sampled, old;
        ND_TRY(expire_walk_sample(db, before, &sampled, &old));
        /* clearly past the switch (twice its share): not a walk of docs
         * first to find it (at 10% of 100M, 3 s) */
        if (old * total > 2 * switch_at * sampled) {
            rc = expire_rewrite(db, before, &deleted);
            goto cleanup;
        }
    }
    ND_TRY(st_iter_new(&it, db->store, ST_CF_DOCS, NULL, 1));
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
