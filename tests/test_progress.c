/*
 * test_progress.c — the long whole-store calls' progress (nd_db_set_progress,
 * nd_db_repair_progress): each phase reported at its start and end in order,
 * counts that reach the total, and a callback's stop obeyed by the rule of
 * the header (a positive value returned as it is, a negative one as
 * ND_ESTOPPED) at a point where the store is whole: verify found nothing yet,
 * compact folded whole tables, expire deleted whole documents and counts
 * them, repair left no rebuilt copy and starts again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "db_expire.h"
#include "db_fixture.h"
#include "neardup.h"
#include "oracle.h"

/* more than ND_PROGRESS_EVERY: a report between a phase's ends; one in
 * EXPIRED last seen at time 100 (expire is slow: see bench/README.md);
 * the last ONLINE added online (the rest imported, which is faster) */
enum { NDOCS = 70000, TABLES = 4, EXPIRED = 16, ONLINE = 6000 };

/* What the callback saw, and when it stops: at the first report of phase
 * stop_phase whose done is at least stop_done, returning stop_with. */
typedef struct seen {
    char phases[16][16];
    unsigned n_phases;
    uint64_t last_done, last_total;
    unsigned reports;
    const char *stop_phase;
    uint64_t stop_done;
    unsigned stop_repeat; /* stop at this report of those that qualify (0: the first) */
    unsigned qualified;
    int stop_with;
} seen;

static int on_progress(const nd_progress *p, void *payload)
{
    seen *s = payload;
    assert_non_null(p->phase);
    assert_non_null(p->unit);
    s->reports++;
    if (!s->n_phases || strcmp(s->phases[s->n_phases - 1], p->phase) != 0) {
        assert_true(s->n_phases < 16);
        assert_int_equal(p->done, 0); /* a phase starts at 0 */
        snprintf(s->phases[s->n_phases++], sizeof s->phases[0], "%s", p->phase);
    } else {
        assert_true(p->done >= s->last_done); /* never backwards */
    }
    s->last_done = p->done;
    s->last_total = p->total;
    if (s->stop_phase && strcmp(p->phase, s->stop_phase) == 0 && p->done >= s->stop_done &&
        ++s->qualified >= s->stop_repeat)
        return s->stop_with;
    return 0;
}

static nd_db *filled(const char *path)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.k = 3;
    o.has_k = 1;
    o.tables = TABLES;
    o.expected_docs = NDOCS;
    assert_int_equal(nd_db_open(&db, path, &o), ND_OK);
    static nd_doc docs[NDOCS];
    static char keys[NDOCS][12];
    oracle_rng r = {41};
    for (size_t i = 0; i < NDOCS; i++) {
        snprintf(keys[i], sizeof keys[i], "d%zu", i);
        docs[i] = (nd_doc){keys[i], strlen(keys[i]), oracle_next(&r), 0,
                           i % EXPIRED ? 200 : 100, NULL};
    }
    assert_int_equal(nd_db_import(db, docs, NDOCS - ONLINE), ND_OK);
    /* the rest online: fresh entries the compaction folds */
    assert_int_equal(nd_db_add_many(db, docs + NDOCS - ONLINE, ONLINE), ND_OK);
    return db;
}

static void expect_phases(const seen *s, const char *const *want, unsigned n)
{
    assert_int_equal(s->n_phases, n);
    for (unsigned i = 0; i < n; i++) assert_string_equal(s->phases[i], want[i]);
}

static void test_verify(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = filled(fx->path);
    seen s = {0};
    assert_int_equal(nd_db_set_progress(db, on_progress, &s), ND_OK);
    assert_int_equal(nd_db_verify(db), ND_OK);
    static const char *const phases[] = {"tables", "documents"};
    expect_phases(&s, phases, 2);
    assert_int_equal(s.last_done, NDOCS);
    assert_int_equal(s.last_total, NDOCS);
    assert_true(s.reports >= TABLES + 1 + NDOCS / ND_PROGRESS_EVERY + 2);
    /* stopped: positive as it is, negative as ND_ESTOPPED */
    s = (seen){.stop_phase = "documents", .stop_done = 1, .stop_with = 7};
    assert_int_equal(nd_db_verify(db), 7);
    s = (seen){.stop_phase = "tables", .stop_done = 2, .stop_with = -1};
    assert_int_equal(nd_db_verify(db), ND_ESTOPPED);
    assert_int_equal(s.last_done, 2);
    assert_int_equal(nd_db_set_progress(db, NULL, NULL), ND_OK);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(nd_db_set_progress(NULL, on_progress, &s), ND_EINVAL);
}

static void test_compact(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = filled(fx->path);
    seen s = {.stop_phase = "folding", .stop_done = 2, .stop_with = 1};
    nd_db_set_progress(db, on_progress, &s);
    assert_int_equal(nd_db_compact(db), 1);
    assert_int_equal(s.last_done, 2); /* two tables folded, whole */
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_verify(db), ND_OK);
    /* stopped while RocksDB compacts the files: asked at once, then every
     * 50 ms (its compaction cancelled, each job whole) */
    s = (seen){.stop_phase = "compacting", .stop_repeat = 2, .stop_with = 3};
    nd_db_set_progress(db, on_progress, &s);
    assert_int_equal(nd_db_compact(db), 3);
    assert_int_equal(s.last_done, 0);
    s = (seen){.stop_phase = "compacting", .stop_repeat = 2, .stop_with = -2};
    assert_int_equal(nd_db_compact(db), ND_ESTOPPED);
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_verify(db), ND_OK);
    /* and to the end: the stop did not outlive the call (RocksDB's C API
     * reports no error of a compaction: the space it gives back does) */
    nd_stats before, after;
    assert_int_equal(nd_db_stats(&before, db), ND_OK);
    s = (seen){0};
    nd_db_set_progress(db, on_progress, &s);
    assert_int_equal(nd_db_compact(db), ND_OK);
    assert_int_equal(nd_db_stats(&after, db), ND_OK);
    assert_true(after.disk_bytes < before.disk_bytes);
    static const char *const phases[] = {"folding", "compacting"};
    expect_phases(&s, phases, 2);
    assert_int_equal(s.last_done, 1);
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

static void test_expire(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = filled(fx->path);
    uint64_t deleted = 0, docs;
    /* stopped in the first delete batch: what it deleted, each whole */
    seen s = {.stop_phase = "expiring", .stop_done = 1, .stop_with = 3};
    nd_db_set_progress(db, on_progress, &s);
    assert_int_equal(nd_db_expire(&deleted, db, 150), 3);
    assert_true(deleted > 0 && deleted < NDOCS / EXPIRED);
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, NDOCS - deleted);
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_verify(db), ND_OK);
    /* the rest */
    uint64_t more = 0;
    s = (seen){0};
    nd_db_set_progress(db, on_progress, &s);
    assert_int_equal(nd_db_expire(&more, db, 150), ND_OK);
    assert_int_equal(deleted + more, (NDOCS + EXPIRED - 1) / EXPIRED);
    static const char *const phases[] = {"expiring"};
    expect_phases(&s, phases, 1);
    assert_int_equal(s.last_done, NDOCS - deleted);
    assert_int_equal(s.last_total, NDOCS - deleted);
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_verify(db), ND_OK);
}


/* By a new generation: a stop before the switch deletes nothing; the
 * whole call reports each family written. */
static void test_expire_rewrite(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = filled(fx->path);
    uint64_t deleted = 7, docs;
    /* between families, and within the walk of rev (its caller's walker
     * asks at each of its parts: the store is too small for an ask every
     * 65,536 entries of a walker) */
    for (unsigned repeat = 0; repeat <= 2; repeat += 2) {
        seen s = {.stop_phase = "rewriting", .stop_done = repeat ? 0 : 2,
                  .stop_repeat = repeat, .stop_with = 5};
        nd_db_set_progress(db, on_progress, &s);
        assert_int_equal(db_expire(&deleted, db, 150, DB_EXPIRE_REWRITE), 5);
        assert_int_equal(deleted, 0);
        assert_int_equal(s.last_done, repeat ? 0 : 2);
        assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
        assert_int_equal(docs, NDOCS);
        nd_db_set_progress(db, NULL, NULL);
        assert_int_equal(nd_db_verify(db), ND_OK);
    }
    /* within the tables: once the first is written (each one is asked
     * after, by the caller, or read by a fork's job), before the switch */
    seen s = {.stop_phase = "rewriting", .stop_done = 3, .stop_with = 5};
    nd_db_set_progress(db, on_progress, &s);
    assert_int_equal(db_expire(&deleted, db, 150, DB_EXPIRE_REWRITE), 5);
    assert_int_equal(deleted, 0);
    assert_true(s.last_done >= 3 && s.last_done < 2 + TABLES);
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, NDOCS);
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_verify(db), ND_OK);
    s = (seen){0};
    nd_db_set_progress(db, on_progress, &s);
    assert_int_equal(db_expire(&deleted, db, 150, DB_EXPIRE_REWRITE), ND_OK);
    assert_int_equal(deleted, (NDOCS + EXPIRED - 1) / EXPIRED);
    static const char *const phases[] = {"rewriting"};
    expect_phases(&s, phases, 1);
    assert_int_equal(s.last_done, 2 + TABLES);
    assert_int_equal(s.last_total, 2 + TABLES);
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, NDOCS - deleted);
    assert_int_equal(nd_db_verify(db), ND_OK);
}
/* As many new documents as stored (a new generation: each family more
 * than ND_PROGRESS_EVERY keys), and REPLACED stored keys moved. */
enum { FRESH = NDOCS, REPLACED = 10 };
static nd_doc more_docs[FRESH + REPLACED];

static void fill_more(char prefix)
{
    static char keys[FRESH][12];
    oracle_rng r = {(uint64_t)prefix};
    for (size_t i = 0; i < FRESH; i++) {
        snprintf(keys[i], sizeof keys[i], "%c%zu", prefix, i);
        more_docs[i] = (nd_doc){keys[i], strlen(keys[i]), oracle_next(&r), 0, 300, NULL};
    }
    static char old[REPLACED][12];
    for (size_t i = 0; i < REPLACED; i++) {
        snprintf(old[i], sizeof old[i], "d%zu", i);
        more_docs[FRESH + i] = (nd_doc){old[i], strlen(old[i]), oracle_next(&r), 0, 300, NULL};
    }
}

static uint64_t stored_fp(nd_db *db, const char *key)
{
    nd_results *res = NULL;
    assert_int_equal(nd_results_new(&res), ND_OK);
    assert_int_equal(nd_db_get(res, db, key, strlen(key)), ND_OK);
    uint64_t fp = nd_results_get(res, 0)->fp;
    nd_results_free(res);
    return fp;
}

/* nd_db_import stopped while it looks up the stored keys, between
 * families, within one and just before its write: none of the new
 * documents imported, the keys it replaced (after the look-up) stay
 * replaced; unstopped, a family at a time to tables + 2; the loader's
 * commit is not stopped. */
static void test_import(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = filled(fx->path);
    fill_more('n');
    const size_t n = FRESH + REPLACED;
    uint64_t docs;
    const uint64_t d3 = stored_fp(db, "d3");
    struct {
        uint64_t done;
        unsigned repeat;
        int with, want;
    } stops[] = {
        {0, 1, 8, 8},                /* looking up the stored keys: none replaced yet */
        {1, 0, 4, 4},                /* after table 0 */
        {TABLES, 2, 9, 9},           /* within docs: its first report between keys */
        {TABLES + 1, 2, -1, ND_ESTOPPED}, /* within rev, negative */
        {TABLES + 2, 0, 6, 6},       /* the last chance, before the write */
    };
    for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
        seen s = {.stop_phase = "importing", .stop_done = stops[i].done,
                  .stop_repeat = stops[i].repeat, .stop_with = stops[i].with};
        nd_db_set_progress(db, on_progress, &s);
        assert_int_equal(nd_db_import(db, more_docs, n), stops[i].want);
        assert_int_equal(s.last_done, stops[i].done);
        if (stops[i].repeat) assert_int_equal(s.qualified, stops[i].repeat);
        nd_db_set_progress(db, NULL, NULL);
        assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
        assert_int_equal(docs, NDOCS);
        assert_int_equal(stored_fp(db, "d3"), i == 0 ? d3 : more_docs[FRESH + 3].fp);
        nd_results *res = NULL;
        assert_int_equal(nd_results_new(&res), ND_OK);
        assert_int_equal(nd_db_get(res, db, "n0", 2), ND_ENOTFOUND);
        nd_results_free(res);
        assert_int_equal(nd_db_verify(db), ND_OK);
    }
    seen s = {0};
    nd_db_set_progress(db, on_progress, &s);
    assert_int_equal(nd_db_import(db, more_docs, n), ND_OK);
    static const char *const phases[] = {"importing"};
    expect_phases(&s, phases, 1);
    assert_int_equal(s.last_done, TABLES + 2);
    assert_int_equal(s.last_total, TABLES + 2);
    /* each family's end, and reports between the keys of docs and rev */
    assert_true(s.reports >= 1 + TABLES + 2 + 2 * (FRESH + NDOCS) / ND_PROGRESS_EVERY);
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, NDOCS + FRESH);
    assert_int_equal(nd_db_verify(db), ND_OK);
    /* the loader's commit runs to its end, whatever the callback says */
    fill_more('m');
    s = (seen){.stop_phase = "importing", .stop_with = 1};
    nd_db_set_progress(db, on_progress, &s);
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 0), ND_OK);
    assert_int_equal(nd_loader_add(l, more_docs, FRESH), ND_OK);
    uint64_t added = 0;
    assert_int_equal(nd_loader_finish(&added, l), ND_OK);
    nd_loader_free(l);
    assert_int_equal(added, FRESH);
    assert_int_equal(s.reports, 0);
    nd_db_set_progress(db, NULL, NULL);
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, NDOCS + 2 * FRESH);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

static void test_repair(void **state)
{
    db_fixture *fx = *state;
    fx->db = filled(fx->path);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    char rebuilt[160], damaged[160];
    snprintf(rebuilt, sizeof rebuilt, "%s.repairing", fx->path);
    snprintf(damaged, sizeof damaged, "%s.damaged", fx->path);
    struct stat st;
    /* stopped while rebuilding: no copy left, the store in place */
    seen s = {.stop_phase = "rebuilding", .stop_done = 1, .stop_with = 5};
    nd_repair_report rep;
    assert_int_equal(nd_db_repair_progress(fx->path, on_progress, &s, &rep), 5);
    assert_int_not_equal(stat(rebuilt, &st), 0);
    assert_int_not_equal(stat(damaged, &st), 0);
    /* again, to the end */
    s = (seen){0};
    assert_int_equal(nd_db_repair_progress(fx->path, on_progress, &s, &rep), ND_OK);
    assert_int_equal(rep.docs_kept, NDOCS);
    assert_int_equal(rep.docs_dropped, 0);
    static const char *const phases[] = {"salvaging", "counting", "rebuilding", "tables",
                                         "documents"};
    expect_phases(&s, phases, 5);
    assert_int_equal(s.last_done, NDOCS);
    tmpdir_remove(damaged);
    nd_db_options o = ND_DB_OPTIONS_INIT;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_verify),
        DB_FIXTURE_TEST(test_compact),
        DB_FIXTURE_TEST(test_expire),
        DB_FIXTURE_TEST(test_expire_rewrite),
        DB_FIXTURE_TEST(test_import),
        DB_FIXTURE_TEST(test_repair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
