/*
 * test_mirrored.c — fingerprints whose table entries wait in the fresh
 * mirror (engine/store/db_mirrored.c) when they lose their last document: a key
 * replaced or deleted soon after it was added.
 *
 * The churn: 2,000 single adds, every second one replacing the key of the
 * add before (a crawler storing a changed page again), some replacing an
 * older key, some new keys sharing a fingerprint with another key, a
 * deletion every 50 adds, then nd_db_expire of the oldest, then one
 * nd_db_add_many call that replaces logged keys within itself and gives a
 * logged fingerprint it removes to another key. Its fingerprints are
 * drawn from an oracle store with planted neighbours (tests/oracle.h).
 *
 * - No flush: the churn's removals leave the log without writing the
 *   waiting fingerprints' table keys (db->mirror.flushes does not move;
 *   every removal used to flush, about a thousand here), and the log holds
 *   exactly the distinct fingerprints of the live keys.
 * - Exactness: every query (the planted centres and every fingerprint the
 *   churn removed, k = 0..5) returns exactly the live keys within k, with
 *   their current fingerprints, never a removed one; every table holds
 *   each live fingerprint once (the mirror's count, stats, nd_db_verify);
 *   likewise after a close (which flushes) and a reopen.
 * - Crash: a process that runs the churn and exits without closing leaves
 *   a store that a read-only open (the log replayed into the mirror) and a
 *   writable one find in exactly that state.
 * - A fingerprint removed from the log and logged again by one call whose
 *   commit flushes the full log stays logged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_core.h"
#include "db_fixture.h"
#include "db_mirrored.h"
#include "neardup.h"
#include "oracle.h"
#include "storage.h"

enum {
    STEPS = 2000,                     /* single adds of the churn */
    NQ = 8,                           /* planted query centres */
    MAXD = 4,                         /* their neighbours at distances 0..MAXD */
    EXPIRE_BEFORE = 1200,             /* nd_db_expire: times 1000 + step, so the first 200 steps */
    KEYS = STEPS + 8,                 /* keys the churn may use: its adds and the last call's */
    POOL = STEPS + 8,                 /* fingerprints it draws */
};

/* What the churn leaves: key i ("k<i>") holds fp[i] while live[i]. */
typedef struct churn {
    uint64_t pool[POOL], qs[NQ];
    size_t next; /* pool entries drawn */
    uint64_t fp[KEYS];
    int64_t time[KEYS];
    unsigned char live[KEYS];
    size_t nkeys;
    uint64_t gone[POOL + KEYS]; /* fingerprints a key stopped holding */
    size_t ngone;
    size_t unlogged; /* live fingerprints whose table keys were written */
} churn;

static void key_of(char *buf, size_t i) { sprintf(buf, "k%zu", i); }

/* The pool: an oracle store with planted neighbours, shuffled so that
 * they come throughout the churn. NULL when out of memory. */
static churn *churn_new(void)
{
    oracle_rng r = {9091};
    churn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    (void)oracle_make(&r, c->pool, POOL - NQ * (MAXD + 1), c->qs, NQ, MAXD); /* POOL of them */
    for (size_t i = POOL - 1; i > 0; i--) {
        size_t j = oracle_next(&r) % (i + 1);
        uint64_t x = c->pool[i];
        c->pool[i] = c->pool[j];
        c->pool[j] = x;
    }
    return c;
}

/* Key i now holds fp (time): in the model, and in db unless NULL. */
static int churn_put(churn *c, nd_db *db, size_t i, uint64_t fp, int64_t time)
{
    char key[32];
    if (i >= KEYS) return 15;
    key_of(key, i);
    if (db && nd_db_add(db, key, strlen(key), fp, 0.5, time) != ND_OK) return 10;
    if (c->live[i]) c->gone[c->ngone++] = c->fp[i];
    c->fp[i] = fp;
    c->time[i] = time;
    c->live[i] = 1;
    return 0;
}

static int churn_delete(churn *c, nd_db *db, size_t i)
{
    char key[32];
    key_of(key, i);
    if (db && nd_db_delete(db, key, strlen(key)) != ND_OK) return 11;
    c->gone[c->ngone++] = c->fp[i];
    c->live[i] = 0;
    return 0;
}

/* The single adds, the deletions and nd_db_expire. */
static int churn_singles(churn *c, nd_db *db)
{
    int rc = 0;
    for (size_t j = 0; j < STEPS && !rc; j++) {
        int64_t time = 1000 + (int64_t)j;
        if (j % 2 == 0) { /* a new key; now and then sharing the last key's fingerprint */
            size_t k = c->nkeys++;
            int share = j % 20 == 10 && c->live[k - 1];
            rc = churn_put(c, db, k, share ? c->fp[k - 1] : c->pool[c->next++], time);
        } else { /* a replacement: of the key just added, or of an older one */
            size_t k = c->nkeys - 1 - (j % 10 == 5 && c->nkeys > 7 ? j % 7 : 0);
            rc = churn_put(c, db, k, c->pool[c->next++], time);
            size_t d = c->nkeys - 2; /* every 50: the key before goes too, still logged */
            if (!rc && j % 50 == 49 && c->live[d]) rc = churn_delete(c, db, d);
        }
    }
    if (rc) return rc;
    uint64_t deleted = 0, want = 0;
    if (db && nd_db_expire(&deleted, db, EXPIRE_BEFORE) != ND_OK) return 12;
    for (size_t i = 0; i < c->nkeys; i++)
        if (c->live[i] && c->time[i] < EXPIRE_BEFORE) {
            want++;
            (void)churn_delete(c, NULL, i);
        }
    return db && deleted != want ? 13 : 0;
}

/* One nd_db_add_many call: key b (logged) is replaced twice, the second
 * time removing the fingerprint the call itself added (the call's
 * deferred entries, that one's and the next's, are then staged as table
 * keys); then key a (logged) gets a new fingerprint and its old one goes
 * to a new key: removed from the log and logged again in one write; a
 * new key last. All but the one fingerprint staged as keys stay logged. */
static int churn_call(churn *c, nd_db *db)
{
    size_t a = c->nkeys - 1, b = c->nkeys - 3, n = c->nkeys;
    while (!c->live[a]) a--;
    while (!c->live[b] || b == a) b--;
    char keys[5][32];
    size_t idx[5] = {b, b, a, n, n + 1};
    uint64_t fps[5] = {c->pool[c->next], c->pool[c->next + 1], c->pool[c->next + 2], c->fp[a],
                       c->pool[c->next + 3]};
    nd_doc docs[5];
    for (int i = 0; i < 5; i++) {
        key_of(keys[i], idx[i]);
        docs[i] = (nd_doc){keys[i], strlen(keys[i]), fps[i], 0.5, 5000};
    }
    if (db && nd_db_add_many(db, docs, 5) != ND_OK) return 14;
    c->next += 4;
    c->nkeys += 2;
    for (int i = 0; i < 5; i++) (void)churn_put(c, NULL, idx[i], fps[i], 5000);
    c->unlogged = 1;
    return 0;
}

/* The churn on db (NULL: the model alone). 0, or a code naming what
 * failed; with db, a mirror flush is a failure too (20). */
static int churn_run(churn *c, nd_db *db)
{
    uint64_t flushes = db ? db->mirror.flushes : 0;
    int rc = churn_singles(c, db);
    if (!rc) rc = churn_call(c, db);
    if (!rc && db && db->mirror.flushes != flushes) rc = 20;
    return rc;
}

/* Distinct fingerprints of the live keys. */
static size_t live_fps(const churn *c)
{
    uint64_t *v = malloc(KEYS * sizeof *v);
    size_t n = 0, m = 0;
    assert_non_null(v);
    for (size_t i = 0; i < c->nkeys; i++)
        if (c->live[i]) v[n++] = c->fp[i];
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && v[j] != v[i]) j++;
        m += j == i;
    }
    free(v);
    return m;
}

/* nd_db_query(q, k) returns exactly the live keys within k of q, each once
 * with its current fingerprint. */
static void check_query(nd_db *db, const churn *c, uint64_t q, unsigned k, nd_results *res)
{
    size_t want = 0;
    unsigned char seen[KEYS] = {0};
    for (size_t i = 0; i < c->nkeys; i++) want += c->live[i] && nd_hamming(c->fp[i], q) <= k;
    assert_int_equal(nd_db_query(res, db, q, k, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), want);
    for (size_t m = 0; m < want; m++) {
        const nd_match *mt = nd_results_get(res, m);
        char key[32];
        size_t i;
        assert_int_equal(sscanf(mt->key, "k%zu", &i), 1);
        key_of(key, i);
        assert_int_equal(mt->key_len, strlen(key));
        assert_true(i < c->nkeys && c->live[i] && !seen[i]);
        seen[i] = 1;
        assert_true(mt->fp == c->fp[i]);
        assert_int_equal(mt->dist, nd_hamming(mt->fp, q));
    }
}

/* The store holds the churn's state: every query exact, every key as the
 * model has it, every table holding each live fingerprint once. */
static void check_store(nd_db *db, const churn *c)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    for (size_t q = 0; q < NQ; q++)
        for (unsigned k = 0; k <= MAXD + 1; k++) check_query(db, c, c->qs[q], k, res);
    for (size_t g = 0; g < c->ngone; g++)
        for (unsigned k = 0; k <= 2; k++) check_query(db, c, c->gone[g], k, res);
    for (size_t i = 0; i < c->nkeys; i++) {
        char key[32];
        key_of(key, i);
        int rc = nd_db_get(res, db, key, strlen(key));
        assert_int_equal(rc, c->live[i] ? ND_OK : ND_ENOTFOUND);
        if (c->live[i]) assert_true(nd_results_get(res, 0)->fp == c->fp[i]);
    }
    nd_results_free(res);
    nd_stats st;
    size_t distinct = live_fps(c);
    for (unsigned t = 0; t < 4; t++) { /* the mirror's count: nothing stale in it */
        uint64_t fresh;
        assert_int_equal(st_table_fresh_count(db->store, t, &fresh), ND_OK);
        assert_int_equal(fresh, distinct);
    }
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.fingerprints, distinct);
    for (unsigned t = 0; t < st.tables; t++) assert_int_equal(st.table[t].entries, distinct);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* The churn never flushes the mirror, leaves exactly the live keys'
 * fingerprints logged, and the store exact; a writable close flushes
 * them and the reopened store is the same. */
static void test_churn_without_flush(void **state)
{
    db_fixture *fx = *state;
    churn *c = churn_new();
    assert_non_null(c);
    nd_db *db = fx->db = db_fixture_open(fx->path, ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY);
    uint64_t flushes = db->mirror.flushes;
    assert_int_equal(churn_run(c, db), 0);
    assert_int_equal(db->mirror.flushes, flushes); /* about 1,000 before */
    assert_int_equal(db->mirror.fps.n, live_fps(c) - c->unlogged);
    check_store(db, c); /* stats and verify flush once */
    assert_int_equal(db->mirror.fps.n, 0);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = db_fixture_open(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, 0);
    check_store(db, c);
    free(c);
}

/* A process that runs the churn and dies without closing: the log's
 * records hold exactly the live keys' fingerprints, which a read-only
 * open gives to the mirror, and the store is exact there, then after a
 * writable open, then after its close. */
static void test_churn_crash(void **state)
{
    db_fixture *fx = *state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nd_db *db = NULL;
        nd_db_options o = ND_DB_OPTIONS_INIT;
        o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
        o.k = 3;
        o.has_k = 1;
        o.tables = 4;
        o.run_size = 16;
        o.expected_docs = 100000;
        churn *c = churn_new(); /* no cmocka in the child: exit codes */
        _exit(!c ? 3 : nd_db_open(&db, fx->path, &o) ? 2 : churn_run(c, db));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    churn *c = churn_new();
    assert_non_null(c);
    assert_int_equal(churn_run(c, NULL), 0);
    size_t logged = live_fps(c) - c->unlogged;
    nd_db *db = fx->db = db_fixture_open(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, logged);
    check_store(db, c);
    assert_int_equal(db->mirror.fps.n, logged); /* read-only: nothing flushed */
    db_fixture_close(fx);
    db = fx->db = db_fixture_open(fx->path, 0);
    assert_int_equal(db->mirror.fps.n, logged);
    check_store(db, c);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = db_fixture_open(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, 0);
    check_store(db, c);
    free(c);
}

/* A call that removes a logged fingerprint and logs it again (under
 * another key) while its commit flushes the full log: it stays logged,
 * its table keys written by the next flush. */
static void test_relogged_at_flush(void **state)
{
    db_fixture *fx = *state;
    enum { FILL = DB_MIRRORED_MAX, CALL = DB_MIRRORED_CALL };
    oracle_rng r = {31337};
    nd_doc *docs = malloc(CALL * sizeof *docs);
    char(*keys)[32] = malloc(CALL * sizeof *keys);
    assert_true(docs && keys);
    nd_db *db = fx->db = db_fixture_open(fx->path, ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY);
    for (size_t i = 0; i < FILL; i++) { /* the log full, a call at a time */
        key_of(keys[i % CALL], i);
        docs[i % CALL] = (nd_doc){keys[i % CALL], strlen(keys[i % CALL]), oracle_next(&r), 0, 0};
        if (i % CALL == CALL - 1) assert_int_equal(nd_db_add_many(db, docs, CALL), ND_OK);
    }
    uint64_t flushes = db->mirror.flushes;
    assert_int_equal(db->mirror.fps.n, FILL);
    nd_results *res = fx->res;
    assert_int_equal(nd_db_get(res, db, "k0", 2), ND_OK);
    uint64_t x = nd_results_get(res, 0)->fp, y = oracle_next(&r);
    nd_doc call[2] = {{"k0", 2, y, 0, 0}, {"moved", 5, x, 0, 0}};
    assert_int_equal(nd_db_add_many(db, call, 2), ND_OK);
    assert_int_equal(db->mirror.flushes, flushes + 1);
    assert_int_equal(db->mirror.fps.n, 2); /* y and x */
    assert_int_equal(nd_db_query(res, db, x, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 1);
    assert_int_equal(nd_results_get(res, 0)->key_len, 5);
    assert_int_equal(nd_db_verify(db), ND_OK); /* flushes x's keys into every table */
    assert_int_equal(db->mirror.fps.n, 0);
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.fingerprints, FILL + 1);
    for (unsigned t = 0; t < st.tables; t++) assert_int_equal(st.table[t].entries, FILL + 1);
    free(docs);
    free(keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_churn_without_flush),
        DB_FIXTURE_TEST(test_churn_crash),
        DB_FIXTURE_TEST(test_relogged_at_flush),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
