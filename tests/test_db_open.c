/*
 * test_db_open.c — a fingerprint-only store across opens: fingerprints
 * whose table keys wait in the mirror (db_mirrored.c) after a crash and
 * in calls of many; open errors and refusals to create; verify, expire
 * and backup on a small store; stop words recorded at creation.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmp_codec.h"
#include "cmp_direct.h"
#include "cmp_kv.h"
#include "db_core.h"
#include "db_expire.h"
#include "db_fold.h"
#include "db_mirrored.h"
#include "db_fixture.h"
#include "db_oracle.h"
#include "neardup.h"
#include "oracle.h"
#include "storage.h"
#include "tmpdir.h"

/* ---- fingerprints whose table keys wait (db_mirrored.c) --------------- */

/* Run write(db, arg) in a child process on a store created at fx->path,
 * which then exits without nd_db_close, as a crash after its last write;
 * write returns 0, or a nonzero exit code naming what failed (no cmocka
 * in the child). */
static void crash_after(db_fixture *fx, int (*write)(nd_db *db, const void *arg), const void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nd_db *db = NULL;
        nd_db_options o = db_fixture_options(ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY);
        _exit(nd_db_open(&db, fx->path, &o) ? 2 : write(db, arg));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

typedef struct fp_list {
    const uint64_t *fps;
    size_t n;
} fp_list;

/* Documents key_of(i) -> fps[i], one nd_db_add each. */
static int add_singly(nd_db *db, const void *arg)
{
    const fp_list *l = arg;
    for (size_t i = 0; i < l->n; i++) {
        char key[32];
        key_of(key, i);
        if (nd_db_add(db, key, strlen(key), l->fps[i], (double)i, 1000 + (int64_t)i)) return 3;
    }
    return 0;
}

/* A process that adds documents one at a time and dies without closing
 * leaves the last ones' table entries as meta records only; every reader
 * finds them after a read-only open (queries, scanning queries beyond the
 * plan's k, stats, verify), a writable open too, and a removal of one
 * (whose keys a flush cut short wrote into some tables) takes it from
 * the log and every table, the others still waiting. A writable close
 * leaves no record. */
static void test_mirrored_after_crash(void **state)
{
    db_fixture *fx = *state;
    oracle_rng r = {4242};
    /* More than DB_MIRRORED_MAX: the writer flushes once, then dies with
     * some waiting. */
    enum { NBASE = DB_MIRRORED_MAX + 1000, NQ = 12 };
    uint64_t *fps = malloc((NBASE + NQ * 6) * sizeof *fps), qs[NQ];
    assert_non_null(fps);
    size_t n = oracle_make(&r, fps, NBASE, qs, NQ, 5);
    fp_list all = {fps, n};
    crash_after(fx, add_singly, &all);

    /* Read-only: the records enter the mirror, and nothing flushes them. */
    nd_db *db = fx->db = db_fixture_open(fx->path, ND_DB_READONLY);
    size_t waiting = db->mirror.fps.n;
    assert_int_equal(waiting, n - DB_MIRRORED_MAX);
    check_all(db, fps, n, qs, NQ, 3); /* k up to 5: beyond the plan's 3 too */
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.table[0].entries, st.fingerprints);
    assert_int_equal(st.table[0].fresh, n);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(db->mirror.fps.n, waiting);

    /* A flush cut by a crash after two tables took their keys, before
     * the records went: those tables hold the keys, the records remain. */
    size_t cut[2];
    uint64_t *cut_pv[2];
    for (unsigned t = 0; t < 2; t++) {
        cut_pv[t] = malloc(2 * waiting * sizeof *cut_pv[t]);
        assert_non_null(cut_pv[t]);
        cut[t] = db_table_sorted(db, t, db->mirror.fps.v, waiting, cut_pv[t]);
        assert_int_equal(cut[t], waiting);
    }
    db_fixture_close(fx);
    st_store *s = NULL;
    st_open_opts so = {0};
    assert_int_equal(st_open(&s, fx->path, &so), ND_OK);
    for (unsigned t = 0; t < 2; t++) {
        assert_int_equal(st_table_ingest_keys(s, t, cut_pv[t], cut[t]), ND_OK);
        free(cut_pv[t]);
    }
    assert_int_equal(st_close(s), ND_OK);
    db = fx->db = db_fixture_open(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, waiting);
    check_all(db, fps, n, qs, NQ, 3);
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    for (unsigned t = 0; t < 4; t++) { /* each entry counted once */
        assert_int_equal(st.table[t].entries, st.fingerprints);
        assert_int_equal(st.table[t].fresh, n);
    }
    assert_int_equal(nd_db_verify(db), ND_OK);
    db_fixture_close(fx);

    /* Writable: still waiting, less the one a removal takes. */
    db = fx->db = db_fixture_open(fx->path, 0);
    assert_int_equal(db->mirror.fps.n, waiting);
    check_all(db, fps, n, qs, NQ, 3);
    char key[32];
    uint64_t flushes = db->mirror.flushes;
    key_of(key, n - 1); /* the last added: its entries were waiting */
    assert_int_equal(nd_db_delete(db, key, strlen(key)), ND_OK);
    assert_int_equal(db->mirror.fps.n, waiting - 1);
    assert_int_equal(db->mirror.flushes, flushes);
    check_all(db, fps, n - 1, qs, NQ, 3);
    assert_int_equal(nd_db_verify(db), ND_OK); /* its scans flush */
    assert_int_equal(db->mirror.fps.n, 0);
    /* Five more wait (one a fingerprint removed above); the close writes
     * their keys. */
    for (size_t i = n - 1; i < n + 4; i++) {
        uint64_t fp = i < n ? fps[i] : oracle_next(&r);
        key_of(key, i);
        assert_int_equal(nd_db_add(db, key, strlen(key), fp, 0, 0), ND_OK);
    }
    assert_int_equal(db->mirror.fps.n, 5);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = db_fixture_open(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, 0);
    check_all(db, fps, n, qs, NQ, 3);
    assert_int_equal(nd_db_verify(db), ND_OK);
    uint64_t ndocs;
    assert_int_equal(nd_db_counts(&ndocs, NULL, db), ND_OK);
    assert_int_equal(ndocs, n + 4);
    free(fps);
}

enum { MANY_FIRST = DB_MIRRORED_CALL + 1, MANY_SECOND = 100 };
enum { MANY_N = MANY_FIRST + MANY_SECOND + DB_MIRRORED_CALL };

/* Documents key_of(i) -> fps[i] by nd_db_add_many calls of MANY_FIRST,
 * MANY_SECOND and DB_MIRRORED_CALL; each call's fingerprints wait or not
 * as said. */
static int add_three_calls(nd_db *db, const void *arg)
{
    const uint64_t *fps = arg;
    static char keys[MANY_N][32];
    static nd_doc docs[MANY_N];
    for (size_t i = 0; i < MANY_N; i++) {
        key_of(keys[i], i);
        docs[i] = (nd_doc){keys[i], strlen(keys[i]), fps[i], (double)i, 1000 + (int64_t)i};
    }
    if (nd_db_add_many(db, docs, MANY_FIRST)) return 3;
    if (db->mirror.fps.n != 0) return 4;
    if (nd_db_add_many(db, docs + MANY_FIRST, MANY_SECOND)) return 5;
    if (db->mirror.fps.n != MANY_SECOND) return 6;
    if (nd_db_add_many(db, docs + MANY_FIRST + MANY_SECOND, DB_MIRRORED_CALL)) return 7;
    if (db->mirror.fps.n != MANY_SECOND + DB_MIRRORED_CALL) return 8;
    return 0;
}

/* A call adding up to DB_MIRRORED_CALL new fingerprints logs them (their
 * table keys wait), a larger one writes their keys: a process that adds
 * by nd_db_add_many calls of DB_MIRRORED_CALL + 1, 100 and DB_MIRRORED_CALL
 * documents and dies without closing leaves the last two calls' waiting,
 * and a read-only open finds every document. */
static void test_mirrored_add_many(void **state)
{
    db_fixture *fx = *state;
    oracle_rng r = {777};
    enum { NQ = 12, MAXD = 5, NBASE = MANY_N - NQ * (MAXD + 1) };
    uint64_t *fps = malloc(MANY_N * sizeof *fps), qs[NQ];
    assert_non_null(fps);
    assert_int_equal(oracle_make(&r, fps, NBASE, qs, NQ, MAXD), MANY_N);
    crash_after(fx, add_three_calls, fps);

    nd_db *db = fx->db = db_fixture_open(fx->path, ND_DB_READONLY);
    assert_int_equal(db->mirror.fps.n, MANY_SECOND + DB_MIRRORED_CALL);
    check_all(db, fps, MANY_N, qs, NQ, MAXD); /* the planted neighbours: the last call's */
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, MANY_N);
    for (unsigned t = 0; t < 4; t++) assert_int_equal(st.table[t].entries, st.fingerprints);
    assert_int_equal(nd_db_verify(db), ND_OK);
    free(fps);
}

/* ---- open errors, verify, expire, backup ------------------------------ */

static void test_open_errors(void **state)
{
    db_fixture *fx = *state;
    char plain[128], cp[128];
    nd_db *db, *db2;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_ENOTFOUND);
    db = fx->db = open_db(fx->path, 3, 10, 16);
    assert_int_equal(nd_db_add(db, "x", 1, 42, 0, 0), ND_OK);
    o.flags = 0;
    assert_int_equal(nd_db_open(&db2, fx->path, &o), ND_EBUSY);
    /* a second handle in this process is told so, not "another process" */
    char want[256];
    snprintf(want, sizeof want, "%s is open for writing by this process (another handle)",
             fx->path);
    assert_string_equal(nd_errmsg(), want);
    assert_string_equal(nd_strerror(ND_EBUSY), "database is busy");
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&db2, fx->path, &o), ND_OK);
    nd_results *res = fx->res;
    assert_int_equal(nd_db_get(res, db2, "x", 1), ND_OK);
    assert_int_equal(nd_db_add(db2, "y", 1, 1, 0, 0), ND_EREADONLY);
    nd_db_close(db2);
    snprintf(cp, sizeof cp, "%s/backup", fx->dir);
    assert_int_equal(nd_db_backup(db, cp), ND_OK);
    assert_int_equal(nd_db_backup(db, cp), ND_EEXIST);
    db_fixture_close(fx);
    /* Mismatches. */
    o = (nd_db_options)ND_DB_OPTIONS_INIT;
    o.has_k = 1;
    o.k = 2;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EMISMATCH);
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    fo.features = ND_FEATURES_CHARS;
    o = (nd_db_options)ND_DB_OPTIONS_INIT;
    o.fp = &fo;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EMISMATCH);
    assert_non_null(strstr(nd_errmsg(), "chars"));
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_EXCL;
    o.fp = NULL;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EEXIST);
    /* The backup opens and holds the document. */
    o = (nd_db_options)ND_DB_OPTIONS_INIT;
    assert_int_equal(nd_db_open(&fx->db, cp, &o), ND_OK);
    assert_int_equal(nd_db_get(res, fx->db, "x", 1), ND_OK);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    db_fixture_close(fx);
    /* A plain directory is not a database. */
    snprintf(plain, sizeof plain, "%s/plain", fx->dir);
    mkdir(plain, 0755);
    FILE *f = fopen(strcat(strcpy(cp, plain), "/CURRENT"), "w");
    fclose(f);
    o.flags = 0;
    assert_int_not_equal(nd_db_open(&db, plain, &o), ND_OK);
}

static void touch(const char *dir, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

/* One refusal rule, in the library: a store is created in a new or empty
 * directory (or over what RocksDB leaves of a creation that did not
 * finish), never beside other files; a directory of a database's files
 * without CURRENT is damage, not a place to create. */
static void test_create_refusal(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = NULL;
    char d[128], file[160];
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY;
    snprintf(d, sizeof d, "%s/busy", fx->dir);
    assert_int_equal(mkdir(d, 0755), 0);
    touch(d, "notes.txt");
    assert_int_equal(nd_db_open(&db, d, &o), ND_EEXIST);
    assert_null(db);
    assert_non_null(strstr(nd_errmsg(), "is not empty"));
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_EXCL;
    assert_int_equal(nd_db_open(&db, d, &o), ND_EEXIST);
    o.flags = 0;
    assert_int_equal(nd_db_open(&db, d, &o), ND_ENOTFOUND); /* nothing was made there */
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY;
    snprintf(file, sizeof file, "%s/notes.txt", d);
    assert_int_equal(nd_db_open(&db, file, &o), ND_EEXIST);
    assert_non_null(strstr(nd_errmsg(), "is not a directory"));
    /* An empty directory, and one holding only what RocksDB writes
     * before CURRENT, are places to create. */
    snprintf(d, sizeof d, "%s/empty", fx->dir);
    assert_int_equal(mkdir(d, 0755), 0);
    assert_int_equal(nd_db_open(&db, d, &o), ND_OK);
    nd_db_close(db);
    snprintf(d, sizeof d, "%s/unfinished", fx->dir);
    assert_int_equal(mkdir(d, 0755), 0);
    touch(d, "LOCK");
    touch(d, "IDENTITY");
    touch(d, "MANIFEST-000001");
    assert_int_equal(nd_db_open(&db, d, &o), ND_OK);
    assert_int_equal(nd_db_add(db, "x", 1, 42, 0, 0), ND_OK);
    nd_db_close(db);
    /* An existing store opens with CREATE (and only EXCL refuses it). */
    assert_int_equal(nd_db_open(&db, d, &o), ND_OK);
    assert_int_equal(nd_db_get(fx->res, db, "x", 1), ND_OK);
    nd_db_close(db);
    /* Its files without CURRENT: damage, reported as such, created over by
     * nobody. */
    snprintf(file, sizeof file, "%s/CURRENT", d);
    assert_int_equal(unlink(file), 0);
    assert_int_equal(nd_db_open(&db, d, &o), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "no CURRENT"));
    o.flags = 0;
    assert_int_equal(nd_db_open(&db, d, &o), ND_ECORRUPT);
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&db, d, &o), ND_ECORRUPT);
}

typedef struct expire_seen {
    uint64_t n;
    int64_t max_time;
    int bad_keys;
} expire_seen;

static int count_expired(const nd_doc *d, void *payload)
{
    expire_seen *e = payload;
    char want[32];
    /* key e<i> was added with time i */
    snprintf(want, sizeof want, "e%lld", (long long)d->time);
    if (d->key_len != strlen(want) || memcmp(d->key, want, d->key_len) != 0) e->bad_keys++;
    if (e->n == 0 || d->time > e->max_time) e->max_time = d->time;
    e->n++;
    return 0;
}

static int stop_at_first(const nd_doc *d, void *payload)
{
    (void)d;
    (void)payload;
    return 7;
}

static void test_expire(void **state)
{
    db_fixture *fx = *state;
    char key[32];
    nd_db *db = fx->db = open_db(fx->path, 3, 4, 16);
    oracle_rng g = {9};
    for (int i = 0; i < 500; i++) {
        sprintf(key, "e%d", i);
        assert_int_equal(nd_db_add(db, key, strlen(key), oracle_next(&g), 0, i), ND_OK);
    }
    /* The dry run lists exactly what nd_db_expire then deletes, deleting
     * nothing itself. */
    expire_seen seen = {0, 0, 0};
    assert_int_equal(nd_db_foreach_expired(db, 200, count_expired, &seen), ND_OK);
    assert_int_equal(seen.n, 200);
    assert_true(seen.max_time < 200);
    assert_int_equal(seen.bad_keys, 0);
    uint64_t n = 0;
    assert_int_equal(nd_db_counts(&n, NULL, db), ND_OK);
    assert_int_equal(n, 500);
    assert_int_equal(nd_db_foreach_expired(db, 200, stop_at_first, NULL), 7);
    assert_int_equal(nd_db_expire(&n, db, 200), ND_OK);
    assert_int_equal(n, 200);
    seen = (expire_seen){0, 0, 0};
    assert_int_equal(nd_db_foreach_expired(db, 200, count_expired, &seen), ND_OK);
    assert_int_equal(seen.n, 0);
    nd_results *res = fx->res;
    assert_int_equal(nd_db_get(res, db, "e199", 4), ND_ENOTFOUND);
    assert_int_equal(nd_db_get(res, db, "e200", 4), ND_OK);
    assert_int_equal(nd_db_compact(db), ND_OK);
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    assert_int_equal(st.documents, 300);
    assert_int_equal(st.table[0].entries, 300);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* Stop words given at creation are recorded: after reopening, the
 * database's options fingerprint texts exactly as at creation. */
static void test_stopwords_kept(void **state)
{
    db_fixture *fx = *state;
    const char *stop[] = {"the", "a", "of"};
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    fo.stopwords = stop;
    fo.n_stopwords = 3;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.fp = &fo;
    nd_db *db = NULL;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.flags = 0;
    o.fp = NULL;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    nd_fp_options got;
    assert_int_equal(nd_db_fp_options(&got, fx->db), ND_OK);
    assert_int_equal(got.n_stopwords, 3);
    assert_string_equal(got.stopwords[1], "a");
    const char *text = "the quick brown fox of the hills jumps over a lazy dog again and again";
    uint64_t want, have, plain;
    assert_int_equal(nd_fingerprint(&want, text, strlen(text), &fo), ND_OK);
    assert_int_equal(nd_fingerprint(&have, text, strlen(text), &got), ND_OK);
    assert_int_equal(nd_fingerprint(&plain, text, strlen(text), NULL), ND_OK);
    assert_true(want == have);
    assert_true(want != plain); /* the words made a difference */
    /* Asking for the same configuration matches; without stop words not. */
    db_fixture_close(fx);
    o.fp = &fo;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    db_fixture_close(fx);
    nd_fp_options none = ND_FP_OPTIONS_INIT;
    o.fp = &none;
    assert_int_equal(nd_db_open(&db, fx->path, &o), ND_EMISMATCH);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_open_errors),
        DB_FIXTURE_TEST(test_create_refusal),
        DB_FIXTURE_TEST(test_expire),
        DB_FIXTURE_TEST(test_stopwords_kept),
        DB_FIXTURE_TEST(test_mirrored_after_crash),
        DB_FIXTURE_TEST(test_mirrored_add_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
