/*
 * test_api.c — the rules neardup.h states for the whole API, as a caller
 * meets them.
 *
 * Options: every options struct has an ND_*_INIT macro and an _init()
 * function that agree, and unknown versions are refused. nd_db_options of
 * version 1 (a caller built against the header before `threads` was
 * appended) is initialised without touching the later field, and accepted
 * by nd_db_open, which ignores what lies beyond it.
 * Callbacks: 0 goes on; a positive value stops and is returned as it is; a
 * negative one stops with ND_ESTOPPED, so a callback returning, say,
 * ND_ECORRUPT is never taken for the library's error (nd_db_foreach_doc,
 * nd_selfjoin, nd_selfjoin_stream, nd_cluster).
 * Threads: nd_db_options.threads decides how many threads nd_db_batch
 * (merged and probed) and an nd_loader start — counted by wrapping
 * pthread_create at link time (tests/meson.build: -Wl,--wrap) — with the
 * same answers whatever the number; out of range it is refused.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_fixture.h"
#include "neardup.h"
#include "oracle.h"

/* ---- pthread_create, counted ------------------------------------------ */

int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg);

static atomic_uint threads_started;

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg)
{
    atomic_fetch_add(&threads_started, 1);
    return __real_pthread_create(th, attr, fn, arg);
}

/* ---- helpers -------------------------------------------------------- */

static nd_db *open_threads(const char *path, unsigned threads)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.k = 3;
    o.tables = 4;
    o.run_size = 16;
    o.expected_docs = 100000;
    o.threads = threads;
    int rc = nd_db_open(&db, path, &o);
    if (rc) fprintf(stderr, "open: %s\n", nd_errmsg());
    assert_int_equal(rc, ND_OK);
    return db;
}

/* n documents "<prefix><i>" with random fingerprints from seed. */
static nd_doc *make_docs(size_t n, const char *prefix, uint64_t seed, char (**keys)[24])
{
    oracle_rng r = {seed};
    nd_doc *d = calloc(n, sizeof *d);
    *keys = calloc(n, sizeof **keys);
    assert_non_null(d);
    assert_non_null(*keys);
    for (size_t i = 0; i < n; i++) {
        int len = snprintf((*keys)[i], sizeof (*keys)[i], "%s%zu", prefix, i);
        d[i] = (nd_doc){(*keys)[i], (size_t)len, oracle_next(&r), 1.0, 1000 + (int64_t)i};
    }
    return d;
}

/* ---- options ---------------------------------------------------------- */

static void test_options_init(void **state)
{
    (void)state;
    nd_fp_options fo, fo_init = ND_FP_OPTIONS_INIT;
    nd_query_options qo, qo_init = ND_QUERY_OPTIONS_INIT;
    nd_cluster_options co, co_init = ND_CLUSTER_OPTIONS_INIT;
    nd_db_options dbo, dbo_init = ND_DB_OPTIONS_INIT;
    memset(&fo, 0xab, sizeof fo);
    memset(&qo, 0xab, sizeof qo);
    memset(&co, 0xab, sizeof co);
    memset(&dbo, 0xab, sizeof dbo);
    assert_int_equal(nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION), ND_OK);
    assert_int_equal(nd_query_options_init(&qo, ND_QUERY_OPTIONS_VERSION), ND_OK);
    assert_int_equal(nd_cluster_options_init(&co, ND_CLUSTER_OPTIONS_VERSION), ND_OK);
    assert_int_equal(nd_db_options_init(&dbo, ND_DB_OPTIONS_VERSION), ND_OK);
    assert_true(fo.version == fo_init.version && fo.features == fo_init.features &&
                fo.n == fo_init.n && fo.flags == fo_init.flags &&
                fo.title_weight == fo_init.title_weight && fo.stopwords == NULL &&
                fo.n_stopwords == 0);
    assert_true(qo.version == qo_init.version && qo.flags == 0 && qo.limit == 0);
    assert_true(co.version == co_init.version && co.top == 0 && co.tiers == NULL &&
                co.n_tiers == 0);
    assert_true(dbo.version == dbo_init.version && dbo.version == 4 && dbo.flags == 0 &&
                dbo.k == 0 && dbo.expected_docs == 0 && dbo.tables == 0 &&
                dbo.run_size == 0 && dbo.cache_bytes == 0 && dbo.fold_threshold == 0 &&
                dbo.fp == NULL && dbo.has_k == 0 && dbo.threads == 0 &&
                dbo.min_resemblance == 0);
    /* Unknown versions (0, the next one) are refused. */
    assert_int_equal(nd_fp_options_init(&fo, 0), ND_EINVAL);
    assert_int_equal(nd_query_options_init(&qo, ND_QUERY_OPTIONS_VERSION + 1), ND_EINVAL);
    assert_int_equal(nd_cluster_options_init(&co, ND_CLUSTER_OPTIONS_VERSION + 1), ND_EINVAL);
    assert_int_equal(nd_db_options_init(&dbo, ND_DB_OPTIONS_VERSION + 1), ND_EINVAL);
    assert_int_equal(nd_db_options_init(&dbo, 0), ND_EINVAL);
    assert_int_equal(nd_query_options_init(NULL, ND_QUERY_OPTIONS_VERSION), ND_EINVAL);
    assert_int_equal(nd_cluster_options_init(NULL, ND_CLUSTER_OPTIONS_VERSION), ND_EINVAL);
}

/* A caller built against version 1 of nd_db_options: its struct ends
 * before `threads`, which init must not write and open must not read. */
static void test_db_options_version1(void **state)
{
    db_fixture *fx = *state;
    nd_db_options o;
    memset(&o, 0xab, sizeof o);
    assert_int_equal(nd_db_options_init(&o, 1), ND_OK);
    assert_int_equal(o.version, 1);
    assert_true(o.flags == 0 && o.k == 0 && o.fp == NULL && o.has_k == 0);
    assert_true(o.threads == 0xababababu); /* beyond a version-1 struct */
    o.flags = ND_DB_CREATE; /* before version 4: a fingerprint-only store */
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK); /* threads not read */
    assert_true(nd_db_min_resemblance(fx->db) == 0);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.version = 2; /* now it is read, and out of range */
    o.threads = 65;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "threads"));
    o.threads = 0; /* a version-2 struct: min_resemblance not read */
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == 0);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.version = ND_DB_OPTIONS_VERSION + 1;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_EINVAL);
    assert_null(fx->db);
}

/* The default store answers as a person would: options at zero (version
 * 4) create a store verifying by resemblance 0.85; ND_DB_FINGERPRINT_ONLY
 * asks for Manku's store; an existing store opens as it was made. */
static void test_default_store(void **state)
{
    db_fixture *fx = *state;
    char fp_path[160], v3_path[160];
    snprintf(fp_path, sizeof fp_path, "%s/fp", fx->dir);
    snprintf(v3_path, sizeof v3_path, "%s/v3", fx->dir);
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == ND_DB_DEFAULT_MIN_RESEMBLANCE);
    nd_doc bare = {"b", 1, 0x99, 0, 0, NULL};
    assert_int_equal(nd_db_add_many(fx->db, &bare, 1), ND_EINVAL); /* texts, not fingerprints */
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.flags = 0; /* opens as made, whatever the default */
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == ND_DB_DEFAULT_MIN_RESEMBLANCE);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.flags = ND_DB_FINGERPRINT_ONLY; /* asks for what it is not */
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_EMISMATCH);
    assert_non_null(strstr(nd_errmsg(), "fingerprint-only"));
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY;
    o.min_resemblance = 0.9;
    assert_int_equal(nd_db_open(&fx->db, fp_path, &o), ND_EINVAL);
    o.min_resemblance = 0;
    assert_int_equal(nd_db_open(&fx->db, fp_path, &o), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == 0);
    assert_int_equal(nd_db_add_many(fx->db, &bare, 1), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    o.flags = 0;
    assert_int_equal(nd_db_open(&fx->db, fp_path, &o), ND_OK); /* as made */
    assert_true(nd_db_min_resemblance(fx->db) == 0);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    /* A caller built against version 3 keeps its meaning: 0 is
     * fingerprint-only. */
    assert_int_equal(nd_db_options_init(&o, 3), ND_OK);
    o.flags = ND_DB_CREATE;
    assert_int_equal(nd_db_open(&fx->db, v3_path, &o), ND_OK);
    assert_true(nd_db_min_resemblance(fx->db) == 0);
}

/* ---- callbacks -------------------------------------------------------- */

typedef struct stopper {
    size_t calls, at; /* return value at call number at */
    int value;
} stopper;

static int stop_doc(const nd_doc *d, void *payload)
{
    (void)d;
    stopper *s = payload;
    return ++s->calls == s->at ? s->value : 0;
}

static int stop_pair(size_t i, size_t j, unsigned dist, void *payload)
{
    (void)i, (void)j, (void)dist;
    stopper *s = payload;
    return ++s->calls == s->at ? s->value : 0;
}

static int stop_cluster(uint32_t q, uint32_t removed, uint32_t kept, unsigned dist, void *payload)
{
    (void)q, (void)removed, (void)kept, (void)dist;
    stopper *s = payload;
    return ++s->calls == s->at ? s->value : 0;
}

static const uint64_t *read_fps_src;

static int read_fps(uint64_t *out, size_t start, size_t count, void *payload)
{
    stopper *s = payload;
    memcpy(out, read_fps_src + start, count * sizeof *out);
    return ++s->calls == s->at ? s->value : 0;
}

static void test_callback_rule(void **state)
{
    db_fixture *fx = *state;
    fx->db = open_threads(fx->path, 0);
    char (*keys)[24];
    nd_doc *d = make_docs(10, "doc", 9, &keys);
    assert_int_equal(nd_db_add_many(fx->db, d, 10), ND_OK);

    stopper s = {0, 0, 0}; /* never stops: every document */
    assert_int_equal(nd_db_foreach_doc(fx->db, stop_doc, &s), ND_OK);
    assert_int_equal(s.calls, 10);
    s = (stopper){0, 3, 7}; /* a positive value is the callback's own */
    assert_int_equal(nd_db_foreach_doc(fx->db, stop_doc, &s), 7);
    assert_int_equal(s.calls, 3);
    /* A negative value, even one that is an nd_error, is ND_ESTOPPED. */
    static const int negative[] = {-1, ND_ECORRUPT, ND_EIO, -1000};
    for (size_t i = 0; i < 4; i++) {
        s = (stopper){0, 2, negative[i]};
        assert_int_equal(nd_db_foreach_doc(fx->db, stop_doc, &s), ND_ESTOPPED);
        assert_int_equal(s.calls, 2);
        assert_non_null(strstr(nd_errmsg(), "callback"));
    }
    assert_string_not_equal(nd_strerror(ND_ESTOPPED), "unknown error");

    /* The same rule in the batch algorithms. */
    uint64_t fps[64];
    for (size_t i = 0; i < 64; i++) fps[i] = d[i % 10].fp ^ (i / 10); /* near pairs */
    s = (stopper){0, 2, 5};
    assert_int_equal(nd_selfjoin(fps, 64, 3, stop_pair, &s), 5);
    s = (stopper){0, 2, ND_ENOMEM};
    assert_int_equal(nd_selfjoin(fps, 64, 3, stop_pair, &s), ND_ESTOPPED);
    read_fps_src = fps;
    stopper pairs = {0, 0, 0};
    s = (stopper){0, 1, ND_EIO};
    assert_int_equal(nd_selfjoin_stream(64, 3, 0, read_fps, &s, stop_pair, &pairs), ND_ESTOPPED);
    s = (stopper){0, 1, 4};
    assert_int_equal(nd_selfjoin_stream(64, 3, 0, read_fps, &s, stop_pair, &pairs), 4);
    nd_cluster_item items[3] = {{0, 1, 0, 0, 0}, {0, 2, 1, 0, 0}, {0, 3, 2, 0, 0}};
    s = (stopper){0, 1, ND_EINVAL};
    assert_int_equal(nd_cluster(items, 3, NULL, stop_cluster, &s), ND_ESTOPPED);
    s = (stopper){0, 2, 11};
    assert_int_equal(nd_cluster(items, 3, NULL, stop_cluster, &s), 11);
    free(d);
    free(keys);
}

/* ---- threads ---------------------------------------------------------- */

/* Threads nd_db_batch starts for a batch of n (merged when n is above
 * 4096, probed otherwise); its answers into out. */
static unsigned batch_threads(nd_db *db, nd_results *keys, const nd_doc *docs, size_t n,
                              nd_batch_item *out)
{
    atomic_store(&threads_started, 0);
    assert_int_equal(nd_db_batch(out, keys, db, docs, n, 3, 0), ND_OK);
    return atomic_load(&threads_started);
}

static void test_threads_option(void **state)
{
    db_fixture *fx = *state;
    enum { STORED = 5000, MERGED = 6000, PROBED = 320 };
    char (*skeys)[24], (*bkeys)[24];
    nd_doc *stored = make_docs(STORED, "s", 11, &skeys);
    nd_doc *batch = make_docs(MERGED, "b", 12, &bkeys);
    for (size_t i = 0; i < MERGED; i += 3) batch[i].fp = stored[i % STORED].fp ^ 5; /* dups */
    nd_batch_item *want = calloc(MERGED, sizeof *want), *out = calloc(MERGED, sizeof *out);
    nd_results *keys;
    assert_int_equal(nd_results_new(&keys), ND_OK);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned by_default = cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
    static const unsigned counts[] = {1, 3, 2, 0};
    for (size_t c = 0; c < 4; c++) {
        unsigned t = counts[c], eff = t ? t : by_default;
        char path[160];
        snprintf(path, sizeof path, "%s/t%u", fx->dir, t);
        nd_db *db = open_threads(path, t);
        assert_int_equal(nd_db_import(db, stored, STORED), ND_OK);
        /* merged: one thread a table (4 tables), the calling one included */
        unsigned merged = batch_threads(db, keys, batch, MERGED, c ? out : want);
        assert_int_equal(merged, (eff < 4 ? eff : 4) - 1);
        /* probed: one per 32 documents at most (PROBED / 32 = 10) */
        for (size_t i = 0; c && i < MERGED; i++) {
            assert_int_equal(out[i].dup, want[i].dup);
            assert_true(out[i].match_fp == want[i].match_fp);
        }
        unsigned probed = batch_threads(db, keys, batch, PROBED, out);
        assert_int_equal(probed, (eff < 10 ? eff : 10) - 1);
        for (size_t i = 0; i < PROBED; i++) { /* a prefix: the same answers */
            assert_int_equal(out[i].dup, want[i].dup);
            assert_true(out[i].match_fp == want[i].match_fp);
        }
        /* a loader of three chunks: its passes beside the caller, or not */
        nd_loader *l = NULL;
        uint64_t added = 0;
        atomic_store(&threads_started, 0);
        assert_int_equal(nd_loader_new(&l, db, 2000), ND_OK);
        assert_int_equal(nd_loader_add(l, batch, MERGED), ND_OK);
        assert_int_equal(nd_loader_finish(&added, l), ND_OK);
        nd_loader_free(l);
        unsigned loader = atomic_load(&threads_started);
        if (eff == 1) assert_int_equal(loader, 0);
        else assert_true(loader > 0);
        assert_true(added == MERGED);
        assert_int_equal(nd_db_verify(db), ND_OK);
        assert_int_equal(nd_db_close(db), ND_OK);
    }
    nd_results_free(keys);
    free(want);
    free(out);
    free(stored);
    free(batch);
    free(skeys);
    free(bkeys);
}

/* nd_match_order: distance, then fingerprint, then key bytes, a prefix
 * first; antisymmetric, and 0 only for equal matches. */
static void test_match_order(void **state)
{
    (void)state;
    const nd_match m[] = {
        {.dist = 0, .fp = 9, .key = "z", .key_len = 1},
        {.dist = 1, .fp = 1, .key = "a", .key_len = 1},
        {.dist = 1, .fp = 2, .key = "a", .key_len = 1},
        {.dist = 1, .fp = 2, .key = "ab", .key_len = 2},
        {.dist = 1, .fp = 2, .key = "b", .key_len = 1},
    };
    const size_t n = sizeof m / sizeof m[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int c = nd_match_order(&m[i], &m[j]);
            if (i < j) assert_true(c < 0);
            else if (i > j) assert_true(c > 0);
            else assert_int_equal(c, 0);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_init),
        DB_FIXTURE_TEST(test_db_options_version1),
        DB_FIXTURE_TEST(test_default_store),
        DB_FIXTURE_TEST(test_callback_rule),
        DB_FIXTURE_TEST(test_threads_option),
        cmocka_unit_test(test_match_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
