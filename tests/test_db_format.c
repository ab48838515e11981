/*
 * test_db_format.c — stores of older formats and versions answer exactly.
 *
 * Format upgrade: a database of format 1 (runs in codec version 1, made
 * with the encoder switched to version 1) answers every query exactly,
 * stays at format 1 when opened read-only, is upgraded to the current
 * format by the first open for writing, and answers exactly with both run
 * versions mixed.
 *
 * Rev values (format 3): a query's score and time come from the rev entry;
 * entries written before format 3 (empty values) are read through docs, a
 * change of score or time rewrites both families, and verify catches a rev
 * value that disagrees with docs.
 *
 * Fingerprint function version 1: a store made with it keeps it.
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

/* ---- fingerprint function version 1 ---------------------------------- */

/* A meta record of the closed database at path (malloc'd string). */
static char *meta_record(const char *path, const char *name)
{
    st_store *s = NULL;
    st_open_opts so = {.readonly = 1};
    assert_int_equal(st_open(&s, path, &so), ND_OK);
    char *v = NULL;
    size_t len;
    assert_int_equal(st_get(s, ST_CF_META, name, strlen(name), &v, &len), ND_OK);
    char *out = malloc(len + 1);
    assert_non_null(out);
    memcpy(out, v, len);
    out[len] = '\0';
    free(v);
    st_close(s);
    return out;
}

/* A store created with version 1 of the fingerprint function (as every
 * store of the builds before version 2: records "fp1;..." and flags
 * without version bits) opens, and what is added to it or asked of it is
 * fingerprinted with version 1, whatever the caller's options say about
 * the version. */
static void test_fp_version1_store(void **state)
{
    db_fixture *fx = *state;
    /* Segmented Chinese: versions 1 and 2 differ on it. */
    const char *orig = "我们的数据库存储指纹并回答查询，近似重复的文档很快就能找到。";
    const char *seg = "我们 的 数据库 存储 指纹 并 回答 查询 ， 近似 重复 的 文档 很快 就 能 找到 。";
    nd_fp_options v1 = ND_FP_OPTIONS_INIT, v2 = ND_FP_OPTIONS_INIT;
    v1.flags = ND_FP_FUNCTION(1);
    v2.flags = ND_FP_FUNCTION(2);
    uint64_t seg1, seg2, orig1, orig2;
    assert_int_equal(nd_fingerprint(&seg1, seg, strlen(seg), &v1), ND_OK);
    assert_int_equal(nd_fingerprint(&seg2, seg, strlen(seg), &v2), ND_OK);
    assert_int_equal(nd_fingerprint(&orig1, orig, strlen(orig), &v1), ND_OK);
    assert_int_equal(nd_fingerprint(&orig2, orig, strlen(orig), NULL), ND_OK);
    assert_true(seg1 != seg2 && seg2 == orig2 && seg1 != orig1);

    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_NO_BACKGROUND;
    o.fp = &v1;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    char *rec = meta_record(fx->path, "fp");
    assert_string_equal(rec, "fp1;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:2");
    free(rec);
    rec = meta_record(fx->path, "fpopts");
    assert_string_equal(rec, "features=0 n=0 flags=0 title=0"); /* as version 1 builds wrote */
    free(rec);

    /* Opens with no options, and with options naming no version. */
    nd_db_options ro = ND_DB_OPTIONS_INIT;
    ro.flags = ND_DB_NO_BACKGROUND;
    nd_fp_options plain = ND_FP_OPTIONS_INIT;
    ro.fp = &plain;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &ro), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    ro.fp = &v2; /* but not with version 2 asked */
    nd_db *db = NULL;
    assert_int_equal(nd_db_open(&db, fx->path, &ro), ND_EMISMATCH);
    ro.fp = NULL;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &ro), ND_OK);
    nd_fp_options got;
    assert_int_equal(nd_db_fp_options(&got, fx->db), ND_OK);
    assert_int_equal(ND_FP_FUNCTION_OF(got.flags), 1);
    uint64_t fp;
    assert_int_equal(nd_fingerprint(&fp, seg, strlen(seg), &got), ND_OK);
    assert_true(fp == seg1);

    /* add and query sign texts with version 1. */
    nd_signature sig, sig_orig;
    assert_int_equal(nd_db_sign(&sig, fx->db, seg, strlen(seg), 0), ND_OK);
    assert_true(sig.fp == seg1);
    assert_int_equal(nd_db_sign(&sig_orig, fx->db, orig, strlen(orig), 0), ND_OK);
    assert_true(sig_orig.fp == orig1);
    nd_doc doc = {.key = "seg", .key_len = 3, .fp = sig.fp, .sketch = &sig.sketch};
    assert_int_equal(nd_db_add_doc_if_new(fx->res, fx->db, &doc, 3), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 0);
    assert_int_equal(nd_db_query(fx->res, fx->db, seg1, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(fx->res), 1);
    assert_int_equal(nd_db_get(fx->res, fx->db, "seg", 3), ND_OK);
    assert_true(nd_results_get(fx->res, 0)->fp == seg1);
    assert_int_equal(db_fixture_close(fx), ND_OK);

    /* A store of default options computes version 2. */
    char path2[160];
    snprintf(path2, sizeof path2, "%s/v2", fx->dir);
    o.fp = NULL;
    assert_int_equal(nd_db_open(&fx->db, path2, &o), ND_OK);
    assert_int_equal(nd_db_sign(&sig, fx->db, seg, strlen(seg), 0), ND_OK);
    assert_true(sig.fp == seg2);
    assert_int_equal(nd_db_fp_options(&got, fx->db), ND_OK);
    assert_int_equal(ND_FP_FUNCTION_OF(got.flags), 2);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    rec = meta_record(path2, "fp");
    assert_true(strncmp(rec, "fp2;", 4) == 0);
    free(rec);
    ro.fp = &v1;
    assert_int_equal(nd_db_open(&db, path2, &ro), ND_EMISMATCH);
}

/* ---- format 1 databases ----------------------------------------------- */

/* The "format" meta record of the database at path (closed), as a number;
 * with set != 0, overwrite it with set first. */
static unsigned meta_format(const char *path, unsigned set)
{
    st_store *s = NULL;
    st_open_opts so = {0};
    assert_int_equal(st_open(&s, path, &so), ND_OK);
    if (set) {
        char buf[16];
        st_batch *b = NULL;
        snprintf(buf, sizeof buf, "%u", set);
        assert_int_equal(st_batch_new(&b, s), ND_OK);
        assert_int_equal(st_batch_put(b, ST_CF_META, "format", 6, buf, strlen(buf)), ND_OK);
        assert_int_equal(st_write(s, b, 1), ND_OK);
        st_batch_free(b);
    }
    char *v = NULL;
    size_t len;
    assert_int_equal(st_get(s, ST_CF_META, "format", 6, &v, &len), ND_OK);
    unsigned f = (unsigned)strtoul(v, NULL, 10);
    free(v);
    st_close(s);
    return f;
}

/* Count the runs of every table of the closed database at path by the
 * codec version in their first byte. */
static void count_runs(const char *path, size_t *v1, size_t *v2)
{
    st_store *s = NULL;
    st_open_opts so = {.readonly = 1};
    *v1 = *v2 = 0;
    assert_int_equal(st_open(&s, path, &so), ND_OK);
    for (unsigned t = 0; t < st_ntables(s); t++) {
        st_iter *it = NULL;
        assert_int_equal(st_iter_new(&it, s, ST_CF_TABLE(t), NULL, 1), ND_OK);
        for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
            size_t klen, vlen;
            const char *k = st_iter_key(it, &klen);
            const char *v = st_iter_value(it, &vlen);
            if (klen != 9 || k[0] != 'R') continue;
            assert_true(vlen >= 2);
            unsigned version = (unsigned char)v[0] & 0x0f;
            assert_true(version == 1 || version == 2);
            if (version == 1) (*v1)++;
            else (*v2)++;
        }
        assert_int_equal(st_iter_status(it), ND_OK);
        st_iter_free(it);
    }
    st_close(s);
}

static void test_format1_database(void **state)
{
    db_fixture *fx = *state;
    char key[32];
    oracle_rng r = {4242};
    enum { NBASE = 3000, NQ = 12, K = 3 };
    uint64_t fps[NBASE + NQ * (K + 3)], qs[NQ];
    size_t n = oracle_make(&r, fps, NBASE, qs, NQ, K + 2), first = n * 2 / 3, v1, v2;

    /* What a format-1 build wrote: version 1 runs, format record 1, and a
     * few fresh entries not yet folded. */
    unsigned was = cmp_codec_write_version(1);
    fx->db = open_db(fx->path, K, 4, 16);
    for (size_t i = 0; i < first; i++) {
        key_of(key, i);
        assert_int_equal(nd_db_add(fx->db, key, strlen(key), fps[i], 0, 0), ND_OK);
        if (i == first - 50) assert_int_equal(nd_db_compact(fx->db), ND_OK);
    }
    assert_int_equal(db_fixture_close(fx), ND_OK);
    cmp_codec_write_version(was);
    assert_int_equal(meta_format(fx->path, 1), 1);
    count_runs(fx->path, &v1, &v2);
    assert_true(v1 > 100);
    assert_int_equal(v2, 0);

    /* Read-only: every answer, and the format stays 1. */
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    check_all(fx->db, fps, first, qs, NQ, K);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    db_fixture_close(fx);
    assert_int_equal(meta_format(fx->path, 0), 1);

    /* Open for writing: upgraded at once; writes and folds mix versions. */
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    check_all(fx->db, fps, first, qs, NQ, K);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    assert_int_equal(meta_format(fx->path, 0), ND_FORMAT_VERSION);
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    for (size_t i = first; i < n; i++) {
        key_of(key, i);
        assert_int_equal(nd_db_add(fx->db, key, strlen(key), fps[i], 0, 0), ND_OK);
        if (i == first + (n - first) / 2) {
            assert_int_equal(nd_db_compact(fx->db), ND_OK);
            check_all(fx->db, fps, i + 1, qs, NQ, K);
        }
    }
    check_all(fx->db, fps, n, qs, NQ, K);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    count_runs(fx->path, &v1, &v2);
    assert_true(v1 > 0 && v2 > 0); /* both versions were read above */

    /* Reopened: the same answers, read-only and after a full compaction. */
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    check_all(fx->db, fps, n, qs, NQ, K);
    db_fixture_close(fx);
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_compact(fx->db), ND_OK);
    check_all(fx->db, fps, n, qs, NQ, K);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    db_fixture_close(fx);
    assert_int_equal(meta_format(fx->path, 0), ND_FORMAT_VERSION);

    /* A newer format is refused, naming both versions. */
    meta_format(fx->path, ND_FORMAT_VERSION + 1);
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_EVERSION);
    char want[96];
    snprintf(want, sizeof want, "format version %u; this build reads 1 to %u",
             ND_FORMAT_VERSION + 1, ND_FORMAT_VERSION);
    assert_non_null(strstr(nd_errmsg(), want));
}

/* ---- rev values ------------------------------------------------------- */

/* Rewrite every rev entry of the closed database at path with value
 * (vlen bytes; 0: empty, as format 2 wrote them). */
static void rev_values_set(const char *path, const void *value, size_t vlen)
{
    st_store *s = NULL;
    st_open_opts so = {0};
    st_iter *it = NULL;
    st_batch *b = NULL;
    assert_int_equal(st_open(&s, path, &so), ND_OK);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    assert_int_equal(st_iter_new(&it, s, ST_CF_REV, NULL, 1), ND_OK);
    size_t n = 0;
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it), n++) {
        size_t klen;
        const char *k = st_iter_key(it, &klen);
        assert_int_equal(st_batch_put(b, ST_CF_REV, k, klen, value, vlen), ND_OK);
    }
    assert_int_equal(st_iter_status(it), ND_OK);
    assert_true(n > 0);
    st_iter_free(it);
    assert_int_equal(st_write(s, b, 1), ND_OK);
    st_batch_free(b);
    st_close(s);
}

/* The one document of fp that nd_db_query(k=0) returns: key, score, time. */
static void expect_doc(nd_db *db, uint64_t fp, const char *key, double score, int64_t time)
{
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    assert_int_equal(nd_db_query(res, db, fp, 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 1);
    const nd_match *m = nd_results_get(res, 0);
    assert_int_equal(m->key_len, strlen(key));
    assert_memory_equal(m->key, key, m->key_len);
    assert_true(m->score == score);
    assert_int_equal(m->time, time);
    nd_results_free(res);
}

static void test_rev_values(void **state)
{
    db_fixture *fx = *state;
    char key[32];
    enum { N = 200 };
    uint64_t fps[N + 1];
    oracle_rng r = {777};
    for (size_t i = 0; i <= N; i++) fps[i] = oracle_next(&r);
    fx->db = open_db(fx->path, 3, 4, 16);
    for (size_t i = 0; i < N; i++) {
        key_of(key, i);
        assert_int_equal(nd_db_add(fx->db, key, strlen(key), fps[i], (double)i / 4, (int64_t)i * 10),
                         ND_OK);
    }
    assert_int_equal(db_fixture_close(fx), ND_OK);

    /* What a format-2 build wrote: empty rev values, read through docs. */
    rev_values_set(fx->path, "", 0);
    meta_format(fx->path, 2);
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    for (size_t i = 0; i < N; i++) {
        key_of(key, i);
        expect_doc(fx->db, fps[i], key, (double)i / 4, (int64_t)i * 10);
    }
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    db_fixture_close(fx);
    assert_int_equal(meta_format(fx->path, 0), 2);

    /* Written to: format 3. A new score and time (same fingerprint) and a
     * move to another fingerprint reach the query through rev; the
     * entries left empty still read through docs. */
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_add(fx->db, "d1", 2, fps[1], 100.5, 1001), ND_OK);
    assert_int_equal(nd_db_add(fx->db, "d2", 2, fps[N], 200.5, 2002), ND_OK);
    nd_results *res = fx->res;
    /* add_if_new of a stored document: its time is refreshed, score kept */
    assert_int_equal(nd_db_add_if_new(res, fx->db, "d3", 2, fps[3], 0, 3003, 3), ND_OK);
    assert_int_equal(nd_db_query(res, fx->db, fps[2], 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 0);
    expect_doc(fx->db, fps[1], "d1", 100.5, 1001);
    expect_doc(fx->db, fps[N], "d2", 200.5, 2002);
    /* d2's rev entry now holds a value: both paths must rewrite it */
    assert_int_equal(nd_db_add(fx->db, "d2", 2, fps[N], 250.5, 2502), ND_OK);
    expect_doc(fx->db, fps[N], "d2", 250.5, 2502);
    assert_int_equal(nd_db_add_if_new(res, fx->db, "d2", 2, fps[N], 0, 2602, 3), ND_OK);
    expect_doc(fx->db, fps[N], "d2", 250.5, 2602);
    expect_doc(fx->db, fps[3], "d3", 3.0 / 4, 3003);
    expect_doc(fx->db, fps[4], "d4", 1.0, 40);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
    assert_int_equal(nd_db_compact(fx->db), ND_OK);
    expect_doc(fx->db, fps[1], "d1", 100.5, 1001);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    assert_int_equal(meta_format(fx->path, 0), ND_FORMAT_VERSION);

    /* A rev value that disagrees with docs fails verify; one of a wrong
     * length fails the query, naming the family. */
    uint8_t bad[DB_REV_VALUE_LEN] = {0};
    bad[DB_REV_VALUE_LEN - 1] = 1;
    rev_values_set(fx->path, bad, sizeof bad);
    o.flags = ND_DB_READONLY;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_verify(fx->db), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "rev entry holds another score or time"));
    db_fixture_close(fx);
    rev_values_set(fx->path, "abc", 3);
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    assert_int_equal(nd_db_query(res, fx->db, fps[5], 0, NULL), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "rev entry value of 3 bytes"));
    db_fixture_close(fx);

    /* Expired by a new generation with the rev values empty again: each
     * entry's time is read from docs (d1, d2, d3 were refreshed). */
    rev_values_set(fx->path, "", 0);
    o.flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&fx->db, fx->path, &o), ND_OK);
    uint64_t gone = 0, docs;
    assert_int_equal(db_expire(&gone, fx->db, 500, DB_EXPIRE_REWRITE), ND_OK);
    assert_int_equal(gone, 47);
    assert_int_equal(nd_db_counts(&docs, NULL, fx->db), ND_OK);
    assert_int_equal(docs, N - 47);
    assert_int_equal(nd_db_query(res, fx->db, fps[10], 0, NULL), ND_OK);
    assert_int_equal(nd_results_count(res), 0);
    expect_doc(fx->db, fps[1], "d1", 100.5, 1001);
    expect_doc(fx->db, fps[60], "d60", 60.0 / 4, 600);
    assert_int_equal(nd_db_verify(fx->db), ND_OK);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_rev_values),
        DB_FIXTURE_TEST(test_fp_version1_store),
        DB_FIXTURE_TEST(test_format1_database),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
