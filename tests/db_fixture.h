/*
 * db_fixture.h — the per-test setup the database tests share, as one
 * cmocka fixture: a fresh temporary directory (tmpdir.h), the database
 * path "<dir>/db" inside it, an nd_results, and a slot for the test's
 * database handle. Register a test with DB_FIXTURE_TEST(test_x), that is
 * cmocka_unit_test_setup_teardown(test_x, db_fixture_setup,
 * db_fixture_teardown), and take the fixture with `db_fixture *fx = *state;`.
 *
 * Setup opens no database: tests open theirs with the options they are
 * about (k, tables, run size, flags) and store the handle in fx->db; one
 * that closes it itself (to assert on the close, or to reopen) uses
 * db_fixture_close, which forgets the handle. cmocka runs teardown after a
 * failed assertion too, so whatever the outcome the results are freed, the
 * database is closed and the directory removed. Tests of the storage layer
 * (st_store, not nd_db) use the directory and path alone.
 */
#ifndef ND_TEST_DB_FIXTURE_H
#define ND_TEST_DB_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "neardup.h"
#include "tmpdir.h"

typedef struct db_fixture {
    char dir[64];    /* the test's temporary directory (tmpdir_make) */
    char path[128];  /* dir + "/db" */
    nd_db *db;       /* NULL until the test opens it; closed by teardown */
    nd_results *res; /* made by setup, freed by teardown */
} db_fixture;

static inline int db_fixture_setup(void **state)
{
    db_fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    if (nd_results_new(&fx->res) != ND_OK) {
        free(fx);
        return -1;
    }
    tmpdir_make(fx->dir);
    snprintf(fx->path, sizeof fx->path, "%s/db", fx->dir);
    *state = fx;
    return 0;
}

/* Close fx->db (NULL: nothing to do) and forget it; nd_db_close's code. */
static inline int db_fixture_close(db_fixture *fx)
{
    int rc = nd_db_close(fx->db);
    fx->db = NULL;
    return rc;
}

static inline int db_fixture_teardown(void **state)
{
    db_fixture *fx = *state;
    nd_results_free(fx->res);
    db_fixture_close(fx);
    tmpdir_remove(fx->dir);
    free(fx);
    return 0;
}

#define DB_FIXTURE_TEST(t) cmocka_unit_test_setup_teardown(t, db_fixture_setup, db_fixture_teardown)

/* The small fingerprint store of the open and mirror tests: k=3, 4 tables,
 * runs of 16, 100K documents expected; flags as given, with
 * ND_DB_NO_BACKGROUND added and k given unless ND_DB_READONLY (include
 * this after cmocka.h). */
static inline nd_db_options db_fixture_options(unsigned flags)
{
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = flags | ((flags & ND_DB_READONLY) ? 0 : ND_DB_NO_BACKGROUND);
    o.k = 3;
    o.has_k = !(flags & ND_DB_READONLY);
    o.tables = 4;
    o.run_size = 16;
    o.expected_docs = 100000;
    return o;
}

static inline nd_db *db_fixture_open(const char *path, unsigned flags)
{
    nd_db *db = NULL;
    nd_db_options o = db_fixture_options(flags);
    int rc = nd_db_open(&db, path, &o);
    if (rc) fprintf(stderr, "open: %s\n", nd_errmsg());
    assert_int_equal(rc, ND_OK);
    return db;
}

#endif
