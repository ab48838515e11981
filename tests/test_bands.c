/*
 * test_bands.c — a resemblance store's recent band entries (engine/
 * db_bands.c): they live in memory and a meta log until a flush writes
 * them to the band family; checks find them in both, merged in key order
 * under ND_DB_BAND_CANDIDATES; removals reach both; a flush comes by
 * itself past nd_db.bands_max, on the flush thread beside checks and
 * writes (or on the writer's with one thread), and a failed one is
 * retried and told; a store opened again (or read-only beside its writer)
 * reads the log back; stats and verify count both; the filter of the
 * prefixes the family holds is ready over an empty family, or after its
 * walk at a reopen, and checks find the same through it; the filter
 * itself never forgets a prefix and answers "may hold" for few others.
 * Documents here carry made-up sketches (every band key the same within a
 * document), so which documents share band keys is chosen exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_band_filter.h"
#include "db_bands.h"
#include "db_core.h"
#include "db_fixture.h"
#include "neardup.h"

#define NDOCS 100

typedef struct docs {
    char key[NDOCS][16];
    nd_sketch sk[NDOCS];
    nd_doc d[NDOCS];
} docs;

/* Document i: key "d%03d", a fingerprint far from every other's (k 0
 * finds only itself), and a sketch whose every byte and band key is
 * group g's: documents of one group resemble each other wholly. */
static void make_doc(docs *c, int i, unsigned g)
{
    snprintf(c->key[i], sizeof c->key[i], "d%03d", i);
    memset(&c->sk[i], (int)(0x10 + g), sizeof c->sk[i]);
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) c->sk[i].band[b] = 0x1000 + g;
    c->d[i] = (nd_doc){c->key[i], strlen(c->key[i]), 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1),
                       1.0, 10, &c->sk[i]};
}

static nd_db *open_rs_threads(const char *path, unsigned flags, unsigned threads)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = flags | ND_DB_NO_BACKGROUND;
    o.threads = threads;
    o.tables = 4;
    o.min_resemblance = 0.8;
    assert_int_equal(nd_db_open(&db, path, &o), ND_OK);
    return db;
}

/* A flush thread (threads 2), whatever the machine. */
static nd_db *open_rs(const char *path, unsigned flags) { return open_rs_threads(path, flags, 2); }

static uint64_t band_keys(nd_db *db)
{
    nd_stats st;
    assert_int_equal(nd_db_stats(&st, db), ND_OK);
    return st.band_keys;
}

/* The keys nd_db_query_doc finds for doc, at k 0, in key order. */
static size_t found(nd_db *db, nd_results *r, const nd_doc *doc, char out[][16])
{
    assert_int_equal(nd_db_query_doc(r, db, doc, 0, NULL), ND_OK);
    size_t n = nd_results_count(r);
    for (size_t i = 0; i < n; i++) {
        const nd_match *m = nd_results_get(r, i);
        assert_true(m->key_len < 16);
        memcpy(out[i], m->key, m->key_len);
        out[i][m->key_len] = 0;
    }
    qsort(out, n, 16, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* Memory and family together: a check finds a group's documents whether
 * their entries wait in memory or were written, and at most
 * ND_DB_BAND_CANDIDATES of them, the first in key order. */
static void test_memory_and_family(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_rs(fx->path, ND_DB_CREATE);
    static docs c;
    char got[NDOCS][16];
    for (int i = 0; i < NDOCS; i++) make_doc(&c, i, i < 90 ? 0 : 1);
    /* 40 of group 0 written to the family, 50 more in memory */
    assert_int_equal(nd_db_add_many(db, c.d, 40), ND_OK);
    assert_int_equal(db_bands_flush_now(db), ND_OK);
    assert_int_equal(nd_db_add_many(db, c.d + 40, NDOCS - 40), ND_OK);
    size_t n = found(db, fx->res, &c.d[95], got);
    assert_int_equal(n, 10); /* group 1: all in memory */
    assert_string_equal(got[0], "d090");
    n = found(db, fx->res, &c.d[0], got);
    assert_int_equal(n, ND_DB_BAND_CANDIDATES); /* 90 share its band keys */
    for (size_t i = 0; i < n; i++) {
        char want[16];
        snprintf(want, sizeof want, "d%03u", (unsigned)i);
        assert_string_equal(got[i], want); /* the first 64 by key */
    }
    /* stats write the memory first: 12 entries a document */
    assert_int_equal(band_keys(db), (uint64_t)NDOCS * ND_SKETCH_BANDS);
    assert_int_equal(nd_db_verify(db), ND_OK);
    assert_int_equal(found(db, fx->res, &c.d[95], got), 10);
}

/* Removals: a deletion and a replacement reach entries in memory and in
 * the family alike, and nothing comes back at the next flush. */
static void test_removals(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_rs(fx->path, ND_DB_CREATE);
    static docs c;
    char got[NDOCS][16];
    for (int i = 0; i < 20; i++) make_doc(&c, i, (unsigned)i % 2);
    assert_int_equal(nd_db_add_many(db, c.d, 10), ND_OK);
    assert_int_equal(db_bands_flush_now(db), ND_OK);
    assert_int_equal(nd_db_add_many(db, c.d + 10, 10), ND_OK);
    /* delete d002 (family) and d012 (memory); d004 (family) and d014
     * (memory) move to group 1 with a new sketch and fingerprint */
    assert_int_equal(nd_db_delete(db, "d002", 4), ND_OK);
    assert_int_equal(nd_db_delete(db, "d012", 4), ND_OK);
    docs *r = &c;
    for (int i = 4; i <= 14; i += 10) {
        make_doc(r, i, 1);
        r->d[i].fp ^= 1;
        assert_int_equal(nd_db_add_many(db, &r->d[i], 1), ND_OK);
    }
    char want0[][16] = {"d000", "d006", "d008", "d010", "d016", "d018"};
    for (int round = 0; round < 2; round++) { /* before and after a flush */
        size_t n = found(db, fx->res, &c.d[0], got);
        assert_int_equal(n, 6);
        for (size_t i = 0; i < n; i++) assert_string_equal(got[i], want0[i]);
        assert_int_equal(found(db, fx->res, &c.d[1], got), 12);
        assert_int_equal(band_keys(db), 18u * ND_SKETCH_BANDS);
        assert_int_equal(nd_db_verify(db), ND_OK);
    }
}

/* The log: a store opened again reads back what memory held (here
 * without a flush at close: the writer is left open and a read-only
 * store beside it reads the same log), and a flush comes by itself past
 * bands_max. */
static void test_log_and_limit(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_rs(fx->path, ND_DB_CREATE);
    static docs c;
    char got[NDOCS][16];
    db->bands_max = 5 * ND_SKETCH_BANDS; /* a flush every 5 documents or so */
    for (int i = 0; i < 23; i++) make_doc(&c, i, (unsigned)i % 3);
    for (int i = 0; i < 23; i++) assert_int_equal(nd_db_add_many(db, &c.d[i], 1), ND_OK);
    assert_int_equal(nd_db_delete(db, "d021", 4), ND_OK);
    /* a reader beside the writer: its memory is the writer's log */
    nd_db *ro = open_rs(fx->path, ND_DB_READONLY);
    for (int g = 0; g < 3; g++) {
        assert_int_equal(found(ro, fx->res, &c.d[g], got), g == 1 ? 8 : 7);
        assert_int_equal(found(db, fx->res, &c.d[g], got), g == 1 ? 8 : 7);
    }
    assert_int_equal(band_keys(ro), 22u * ND_SKETCH_BANDS);
    assert_int_equal(nd_db_verify(ro), ND_OK);
    assert_int_equal(nd_db_close(ro), ND_OK);
    /* closed and opened again: the close wrote the memory */
    assert_int_equal(db_fixture_close(fx), ND_OK);
    db = fx->db = open_rs(fx->path, 0);
    assert_int_equal(found(db, fx->res, &c.d[1], got), 8);
    assert_int_equal(band_keys(db), 22u * ND_SKETCH_BANDS);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* Flushes every 3 documents, on the flush thread (threads 2) or the
 * writer's (1), while documents are added, deleted and replaced: after
 * each step a check finds exactly the live members of the group it
 * touched (entries in memory, frozen or written), and at the end no
 * removed entry came back with a later file (stats and verify count 12 a
 * live document). */
static void flush_beside_writes(db_fixture *fx, unsigned threads)
{
    nd_db *db = fx->db = open_rs_threads(fx->path, ND_DB_CREATE, threads);
    static docs c;
    char got[NDOCS][16];
    int group[NDOCS]; /* a live document's group, or -1 */
    enum { GROUPS = 5 };
    db->bands_max = 3 * ND_SKETCH_BANDS;
    for (int i = 0; i < NDOCS; i++) group[i] = -1;
    for (int i = 0; i < NDOCS; i++) {
        int g = i % GROUPS, touched = g;
        make_doc(&c, i, (unsigned)g);
        assert_int_equal(nd_db_add_many(db, &c.d[i], 1), ND_OK);
        group[i] = g;
        if (i % 4 == 3) { /* delete the one added two before */
            assert_int_equal(nd_db_delete(db, c.key[i - 2], strlen(c.key[i - 2])), ND_OK);
            touched = group[i - 2];
            group[i - 2] = -1;
        } else if (i % 5 == 4 && group[i - 1] >= 0) { /* replace the one before */
            int to = (group[i - 1] + 1) % GROUPS;
            touched = group[i - 1];
            make_doc(&c, i - 1, (unsigned)to);
            c.d[i - 1].fp ^= 1;
            assert_int_equal(nd_db_add_many(db, &c.d[i - 1], 1), ND_OK);
            group[i - 1] = to;
        }
        for (int pass = 0; pass < 2; pass++) {
            int gg = pass ? g : touched, members = 0, first = -1;
            for (int j = 0; j <= i; j++)
                if (group[j] == gg && members++ == 0) first = j;
            if (first < 0) continue;
            assert_int_equal(found(db, fx->res, &c.d[first], got), (size_t)members);
        }
    }
    int live = 0;
    for (int i = 0; i < NDOCS; i++) live += group[i] >= 0;
    assert_int_equal(band_keys(db), (uint64_t)live * ND_SKETCH_BANDS);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

static void test_flush_thread(void **state) { flush_beside_writes(*state, 2); }
static void test_flush_writer_thread(void **state) { flush_beside_writes(*state, 1); }

/* A flush that fails on the flush thread (its file cannot be made: a
 * directory has its name) keeps its entries where checks find them; the
 * next write that needs the memory retries it, and fails naming it; once
 * the cause is gone the retry writes them and nothing is lost. */
static void test_flush_failure(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_rs(fx->path, ND_DB_CREATE);
    static docs c;
    char got[NDOCS][16], blocker[200];
    db->bands_max = 2 * ND_SKETCH_BANDS;
    snprintf(blocker, sizeof blocker, "%s/band-entries.sst.tmp", fx->path);
    assert_int_equal(mkdir(blocker, 0700), 0);
    for (int i = 0; i < 5; i++) make_doc(&c, i, 0);
    /* d002 freezes d000-d001, whose write fails on the thread */
    for (int i = 0; i < 4; i++) assert_int_equal(nd_db_add_many(db, &c.d[i], 1), ND_OK);
    assert_int_equal(found(db, fx->res, &c.d[0], got), 4);
    /* d004 needs the memory: the retry fails and says so */
    assert_int_not_equal(nd_db_add_many(db, &c.d[4], 1), ND_OK);
    assert_non_null(strstr(nd_errmsg(), "band entries"));
    assert_int_equal(found(db, fx->res, &c.d[0], got), 4);
    assert_int_equal(rmdir(blocker), 0);
    assert_int_equal(nd_db_add_many(db, &c.d[4], 1), ND_OK);
    assert_int_equal(found(db, fx->res, &c.d[0], got), 5);
    assert_int_equal(band_keys(db), 5u * ND_SKETCH_BANDS);
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* Wait (at most 20 s) for the filter's walk to end with a filter of at
 * least 2^log2 bits. */
static int filter_soon(nd_db *db, unsigned log2)
{
    for (int i = 0; i < 2000 && db_bands_filter_log2(db) < log2; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return db_bands_filter_log2(db) >= log2;
}
static int filter_ready_soon(nd_db *db) { return filter_soon(db, 1); }

/* The filter: ready at creation (an empty family); at a reopen after its
 * walk (threads 2), never with one thread or read-only (checks seek).
 * Whichever, a check finds each group's live documents, before and after
 * more documents are added, deleted and flushed. */
static void test_filter(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_rs(fx->path, ND_DB_CREATE);
    static docs c;
    char got[NDOCS][16];
    int live[4] = {0};
    assert_true(db_bands_filter_log2(db));
    db->bands_max = 4 * ND_SKETCH_BANDS;
    for (int i = 0; i < 60; i++) {
        make_doc(&c, i, (unsigned)i % 3);
        assert_int_equal(nd_db_add_many(db, &c.d[i], 1), ND_OK);
        live[i % 3]++;
    }
    for (int g = 0; g < 3; g++) assert_int_equal(found(db, fx->res, &c.d[g], got), (size_t)live[g]);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    for (unsigned threads = 1; threads <= 2; threads++) {
        db = fx->db = open_rs_threads(fx->path, 0, threads);
        if (threads == 1) assert_false(db_bands_filter_log2(db));
        else assert_true(filter_ready_soon(db));
        db->bands_max = 4 * ND_SKETCH_BANDS;
        for (int g = 0; g < 3; g++)
            assert_int_equal(found(db, fx->res, &c.d[g], got), (size_t)live[g]);
        /* a new group, an old one grown, a deletion, all flushed or not */
        for (int i = 60 + 10 * (int)(threads - 1); i < 70 + 10 * (int)(threads - 1); i++) {
            int g = i % 2 ? 3 : 0;
            make_doc(&c, i, (unsigned)g);
            assert_int_equal(nd_db_add_many(db, &c.d[i], 1), ND_OK);
            live[g]++;
        }
        assert_int_equal(nd_db_delete(db, c.key[3 * threads], 4), ND_OK); /* group 0 */
        live[0]--;
        for (int round = 0; round < 2; round++) {
            for (int g = 0; g < 4; g++) {
                int first = g == 0 ? 0 : g == 3 ? 61 : g;
                assert_int_equal(found(db, fx->res, &c.d[first], got), (size_t)live[g]);
            }
            assert_int_equal(db_bands_flush_now(db), ND_OK);
        }
        assert_int_equal(nd_db_verify(db), ND_OK);
        assert_int_equal(db_fixture_close(fx), ND_OK);
    }
    nd_db *ro = open_rs(fx->path, ND_DB_READONLY);
    assert_false(db_bands_filter_log2(ro));
    assert_int_equal(found(ro, fx->res, &c.d[61], got), (size_t)live[3]);
    assert_int_equal(nd_db_close(ro), ND_OK);
}

/* Document j's sketch under another key and a fingerprint far from all:
 * only the band entries can find j. */
static size_t found_by_bands(nd_db *db, nd_results *r, const docs *c, int j, char out[][16])
{
    nd_doc probe = c->d[j];
    probe.key = "probe";
    probe.key_len = 5;
    probe.fp = ~c->d[j].fp;
    return found(db, r, &probe, out);
}

/* Growth: a filter of 2^10 bits, filled by a walk, grows (to 2^12, by
 * another walk while it serves) once a sixteenth of its bits are set; each
 * document here has band keys of its own. Checks find every document by
 * its band entries throughout, and after the growth. */
static void test_filter_growth(void **state)
{
    db_fixture *fx = *state;
    nd_db *db = fx->db = open_rs(fx->path, ND_DB_CREATE);
    static docs c;
    char got[NDOCS][16];
    db->bands_max = 2 * ND_SKETCH_BANDS;
    for (int i = 0; i < 4; i++) {
        make_doc(&c, i, (unsigned)i);
        assert_int_equal(nd_db_add_many(db, &c.d[i], 1), ND_OK);
    }
    assert_int_equal(db_bands_flush_now(db), ND_OK);
    assert_int_equal(db_bands_filter_reset(db, 10), ND_OK);
    assert_true(filter_soon(db, 10));
    for (int i = 4; i < 40; i++) { /* 480 prefixes: past 128 bits set */
        make_doc(&c, i, (unsigned)i);
        assert_int_equal(nd_db_add_many(db, &c.d[i], 1), ND_OK);
        for (int j = 0; j <= i; j += 7)
            assert_int_equal(found_by_bands(db, fx->res, &c, j, got), 1);
    }
    assert_true(filter_soon(db, 12));
    assert_int_equal(db_bands_flush_now(db), ND_OK);
    for (int j = 0; j < 40; j++) {
        assert_int_equal(found_by_bands(db, fx->res, &c, j, got), 1);
        assert_string_equal(got[0], c.key[j]);
    }
    assert_int_equal(nd_db_verify(db), ND_OK);
}

/* The filter alone: every prefix added may be held, and of prefixes
 * never added few are (two bits in one word, 2^16 prefixes in 2^20 bits:
 * about 1.5%, where one bit a prefix would give 6%). */
static void test_filter_rate(void **state)
{
    (void)state;
    db_band_filter f;
    assert_int_equal(db_band_filter_init(&f, 20), ND_OK);
    assert_non_null(f.words);
    atomic_store(&f.ready, 1);
    const unsigned n = 1u << 16;
    for (unsigned i = 0; i < n; i++) db_band_filter_add(&f, i % ND_SKETCH_BANDS, i * 2654435761u);
    unsigned held = 0, fp = 0;
    for (unsigned i = 0; i < n; i++) {
        held += (unsigned)db_band_filter_may_hold(&f, i % ND_SKETCH_BANDS, i * 2654435761u);
        fp += (unsigned)db_band_filter_may_hold(&f, i % ND_SKETCH_BANDS, (n + i) * 2654435761u);
    }
    assert_int_equal(held, n);
    assert_true(fp < n / 40); /* < 2.5% */
    assert_true(atomic_load(&f.set) > n && atomic_load(&f.set) <= 2 * n);
    db_band_filter_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_memory_and_family),
        DB_FIXTURE_TEST(test_removals),
        DB_FIXTURE_TEST(test_log_and_limit),
        DB_FIXTURE_TEST(test_flush_thread),
        DB_FIXTURE_TEST(test_flush_writer_thread),
        DB_FIXTURE_TEST(test_flush_failure),
        DB_FIXTURE_TEST(test_filter),
        DB_FIXTURE_TEST(test_filter_growth),
        cmocka_unit_test(test_filter_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
