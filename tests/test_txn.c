/*
 * test_txn.c — the write transaction (engine/store/db_txn.c), through its own
 * calls: what a transaction stages is invisible until its commit, a
 * commit moves the counters and publishes new fingerprints to the
 * mirror's log, a refresh's plain write moves neither counters nor the
 * commit epoch, DB_TXN_HELD leaves the caller's lock alone, and the
 * epoch ring tells nd_db_add_if_new's unlocked check when it must run again;
 * in a resemblance store the sketch and band entries ride in the same
 * batch.
 * The writers built on it (nd_db_add*, nd_db_delete, nd_db_expire, nd_db_batch,
 * imports, the loader) are tested in test_db.c, test_batch.c,
 * test_import.c and test_load.c.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "db_core.h"
#include "db_fixture.h"
#include "db_mirrored.h"
#include "db_txn.h"
#include "neardup.h"

static nd_db *open_db(const char *path)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.k = 3;
    o.has_k = 1;
    o.tables = 4;
    o.expected_docs = 100000;
    assert_int_equal(nd_db_open(&db, path, &o), ND_OK);
    return db;
}

static void count_is(nd_db *db, uint64_t docs, uint64_t fps)
{
    uint64_t d, f;
    assert_int_equal(nd_db_counts(&d, &f, db), ND_OK);
    assert_int_equal(d, docs);
    assert_int_equal(f, fps);
}

/* Is the writer lock free? (taken and given back at once) */
static int lock_free(nd_db *db)
{
    if (pthread_mutex_trylock(&db->write.mu) != 0) return 0;
    pthread_mutex_unlock(&db->write.mu);
    return 1;
}

static void test_txn_uncommitted(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path);
    db_txn t;
    nd_doc d = {"a", 1, 0x1234, 1.0, 10};
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_false(lock_free(db));
    assert_int_equal(db_txn_stage_add(&t, &d, 0), ND_OK);
    assert_int_equal(t.docs, 1);
    assert_int_equal(t.fps, 1);
    /* Staged, not committed: nothing reaches the store. */
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    assert_true(lock_free(db));
    count_is(db, 0, 0);
    assert_int_equal(nd_db_get(fx->res, db, "a", 1), ND_ENOTFOUND);
    assert_int_equal(db->mirror.fps.n, 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

static void test_txn_commit(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path);
    db_txn t;
    nd_doc d[3] = {{"a", 1, 0x1111, 1.0, 10}, {"b", 1, 0x1111, 2.0, 20}, {"c", 1, 0xffff0000, 3.0, 30}};
    uint64_t epoch = db_txn_epoch(db);
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    for (int i = 0; i < 3; i++) assert_int_equal(db_txn_stage_add(&t, &d[i], 0), ND_OK);
    /* "b" shares "a"'s fingerprint: the batch reads its own writes. */
    assert_int_equal(t.docs, 3);
    assert_int_equal(t.fps, 2);
    assert_int_equal(t.fresh, 2 * 4);
    assert_int_equal(db_txn_commit(&t), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    count_is(db, 3, 2);
    assert_int_equal(db_txn_epoch(db), epoch + 1);
    /* Two new fingerprints, fewer than DB_MIRRORED_CALL: logged. */
    assert_int_equal(db->mirror.fps.n, 2);
    assert_int_equal(nd_db_query(fx->res, db, 0x1110, 1, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 2);
    assert_int_equal(nd_db_verify(db), ND_OK);

    /* A delete of a key that is not there stages nothing. */
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_int_equal(db_txn_stage_delete(&t, "z", 1), ND_ENOTFOUND);
    assert_int_equal(db_txn_stage_delete(&t, "a", 1), ND_OK);
    assert_int_equal(db_txn_stage_delete(&t, "b", 1), ND_OK);
    assert_int_equal(t.docs, 1);
    assert_int_equal(t.fps, 1);
    assert_int_equal(db_txn_commit(&t), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    count_is(db, 1, 1);
    /* The removal from the tables flushed the log first. */
    assert_int_equal(db->mirror.fps.n, 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

static void test_txn_refresh_write(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path);
    db_txn t;
    assert_int_equal(nd_db_add(db, "a", 1, 0x42, 1.5, 100), ND_OK);
    uint64_t epoch = db_txn_epoch(db);
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_int_equal(db_txn_stage_refresh(&t, "a", 1, 0x42, 1.5, 200), ND_OK);
    assert_int_equal(db_txn_write(&t), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    /* No counter moved, no commit counted: add_if_new's checks stand. */
    assert_int_equal(db_txn_epoch(db), epoch);
    count_is(db, 1, 1);
    assert_int_equal(nd_db_get(fx->res, db, "a", 1), ND_OK);
    assert_int_equal(nd_results_get(fx->res, 0)->time, 200);
    assert_true(nd_results_get(fx->res, 0)->score == 1.5);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* A resemblance store: a document's sketch and band entries are staged
 * with it into the one batch, removed with it, kept by a refresh. */
static void test_txn_sketch(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_NO_BACKGROUND;
    o.tables = 4;
    o.min_resemblance = 0.8;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_OK);
    fx->db = db;
    nd_sketch sk, sk2;
    memset(&sk, 0x5a, sizeof sk);
    memset(&sk2, 0x33, sizeof sk2);
    nd_doc d = {"a", 1, 0x1234, 1.0, 10, &sk}, bare = {"b", 1, 0x99, 0, 0, NULL};
    nd_stats st;
    db_txn t;
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_int_equal(db_txn_stage_add(&t, &bare, 0), ND_EINVAL);
    assert_int_equal(db_txn_stage_add(&t, &d, 0), ND_OK);
    /* docs, rev, the sketch and the log record of its band entries (in
     * memory until a flush): one batch */
    assert_int_equal(st_batch_count(t.b), 2 + 1 + 1);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK); /* never committed */
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.sketches + st.band_keys, 0);
    /* staged twice, then deleted, in one transaction: nothing is left */
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_int_equal(db_txn_stage_add(&t, &d, 0), ND_OK);
    d.sketch = &sk2;
    assert_int_equal(db_txn_stage_add(&t, &d, 0), ND_OK);
    assert_int_equal(db_txn_stage_delete(&t, "a", 1), ND_OK);
    assert_int_equal(db_txn_commit(&t), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents + st.sketches + st.band_keys, 0);
    assert_int_equal(nd_db_verify(db), ND_OK);
    /* stored; a refresh keeps the sketch */
    assert_int_equal(nd_db_add_many(db, &d, 1), ND_OK);
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_int_equal(db_txn_stage_refresh(&t, "a", 1, 0x1234, 2.0, 300), ND_OK);
    assert_int_equal(db_txn_write(&t), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.sketches, 1);
    assert_int_equal(st.band_keys, ND_SKETCH_BANDS);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(nd_db_query_doc(fx->res, db, &d, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 1);
    assert_true(nd_results_get(fx->res, 0)->resemblance == 1.0);
    assert_int_equal(nd_results_get(fx->res, 0)->time, 300);
}

static void test_txn_held(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path);
    db_txn t;
    nd_doc d = {"a", 1, 0x77, 0, 1};
    db_write_lock(db);
    assert_int_equal(db_txn_begin(&t, db, DB_TXN_HELD | DB_TXN_TABLES_NOW), ND_OK);
    assert_int_equal(db_txn_stage_add(&t, &d, 0), ND_OK);
    assert_int_equal(db_txn_commit(&t), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    /* The caller's lock is still held, and the table keys were written at
     * once: nothing waits in the mirror's log. */
    assert_false(lock_free(db));
    assert_int_equal(db->mirror.fps.n, 0);
    db_write_unlock(db);
    count_is(db, 1, 1);
    assert_int_equal(nd_db_verify(db), ND_OK);

    /* A transaction never begun ends with the code it is given. */
    db_txn none = {0};
    assert_int_equal(db_txn_end(&none, ND_EIO), ND_EIO);
}

static void test_txn_check_stands(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_db(fx->path);
    db_txn t;
    uint64_t fp = 0xf0f0f0f0f0f0f0f0ull;
    nd_doc d = {"a", 1, fp, 0, 1};
    uint64_t since = db_txn_epoch(db);
    assert_true(db_txn_check_stands(db, since, fp, 3)); /* nothing committed */
    assert_int_equal(db_txn_begin(&t, db, 0), ND_OK);
    assert_int_equal(db_txn_stage_add(&t, &d, 1), ND_OK);
    assert_int_equal(db_txn_commit_checked(&t, fp), ND_OK);
    assert_int_equal(db_txn_end(&t, ND_OK), ND_OK);
    /* Since then only fp was stored: a check of a fingerprint 3 bits
     * away must run again, one 4 bits away stands. */
    assert_false(db_txn_check_stands(db, since, fp ^ 0x7, 3));
    assert_true(db_txn_check_stands(db, since, fp ^ 0xf, 3));
    /* Another kind of commit: the ring cannot speak for it. */
    assert_int_equal(nd_db_add(db, "b", 1, ~fp, 0, 1), ND_OK);
    assert_false(db_txn_check_stands(db, since, fp ^ 0xf, 3));
    assert_true(db_txn_check_stands(db, db_txn_epoch(db), fp ^ 0xf, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_txn_uncommitted),
        DB_FIXTURE_TEST(test_txn_commit),
        DB_FIXTURE_TEST(test_txn_refresh_write),
        DB_FIXTURE_TEST(test_txn_held),
        DB_FIXTURE_TEST(test_txn_sketch),
        DB_FIXTURE_TEST(test_txn_check_stands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
