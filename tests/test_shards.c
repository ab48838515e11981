/*
 * test_shards.c — the sharded-store handle (nd_shards_*): creation in its
 * three forms (shards kept open, created one at a time, the manifest left
 * to nd_shards_finish), opening the whole store or a part, the manifest
 * handed over as text, placement by the documented FNV-1a-64 rule, a
 * shard that does not match the manifest, and the errors of bad options
 * and of directories that are not stores; batch mode over the store
 * (nd_shards_batch, and its parts check, decide and add) answers as
 * nd_db_batch on one database holding the same documents, also when storing
 * and beyond the plan's k; the loader puts every document in its shard.
 * Shards that verify by resemblance: the manifest records R, a batch over
 * them answers as nd_db_batch on one resemblance store, and two parts'
 * checks merged and decided by nd_shards_decide_similar as the whole.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <neardup.h>

#include "db_fixture.h"
#include "oracle.h"
#include "similar_corpus.h"
#include "tmpdir.h"

#define SIM_R 0.85

static char dir[64];

static int setup(void **state)
{
    (void)state;
    tmpdir_make(dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tmpdir_remove(dir);
    return 0;
}

static void store_path(char *out, const char *name)
{
    snprintf(out, 256, "%s/%s", dir, name);
}

static nd_shards_options create_opts(unsigned shards, unsigned flags)
{
    nd_shards_options o = ND_SHARDS_OPTIONS_INIT;
    o.flags = ND_SHARDS_CREATE | flags;
    o.shards = shards;
    o.k = 4;
    o.has_k = 1;
    o.expected_docs = 1000000;
    return o;
}

/* FNV-1a-64, written out as the manifest's documentation states it. */
static uint64_t fnv(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void test_create_open_place(void **state)
{
    (void)state;
    char path[256], p[4096];
    nd_shards *s = NULL;
    nd_shards_info info;
    store_path(path, "st");
    nd_shards_options o = create_opts(5, 0);
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    assert_int_equal(nd_shards_info_get(&info, s), ND_OK);
    assert_int_equal(info.shards, 5);
    assert_int_equal(info.k, 4);
    assert_true(info.tables > 0);
    assert_int_equal(info.expected_docs, 1000000);
    assert_int_equal(info.format, ND_FORMAT_VERSION);
    assert_int_equal(info.fp_version, ND_FP_VERSION);
    assert_non_null(strstr(info.fingerprint, "shingles:3"));
    /* every shard open, each a database of the store's plan */
    for (unsigned i = 0; i < 5; i++) {
        nd_plan_info plan;
        assert_non_null(nd_shards_db(s, i));
        assert_int_equal(nd_db_plan(&plan, nd_shards_db(s, i)), ND_OK);
        assert_int_equal(plan.k, 4);
        assert_int_equal(plan.tables, info.tables);
        assert_int_equal(nd_shards_path(p, sizeof p, s, i), ND_OK);
        char want[300];
        snprintf(want, sizeof want, "%s/shard-%03u", path, i);
        assert_string_equal(p, want);
    }
    assert_null(nd_shards_db(s, 5));
    assert_int_equal(nd_shards_path(p, sizeof p, s, 5), ND_EINVAL);
    assert_int_equal(nd_shards_path(p, 8, s, 0), ND_ELIMIT);
    /* placement: FNV-1a-64 of the key mod S; a document added through
     * its shard is found there */
    const char *keys[] = {"a", "https://example.com/", "", "key 42"};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(nd_shards_place(s, keys[i], strlen(keys[i])), fnv(keys[i]) % 5);
    assert_int_equal(fnv("a"), 0xaf63dc4c8601ec8cull); /* the published test vector */
    unsigned home = nd_shards_place(s, "doc", 3);
    assert_int_equal(nd_db_add(nd_shards_db(s, home), "doc", 3, 0x1234, 0, 0), ND_OK);
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* reopened: the same manifest; a part opens its shards only */
    o = (nd_shards_options)ND_SHARDS_OPTIONS_INIT;
    o.parts = 2;
    o.part = 1;
    o.db_flags = ND_DB_READONLY;
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    for (unsigned i = 0; i < 5; i++) assert_true((nd_shards_db(s, i) != NULL) == (i % 2 == 1));
    char text[ND_SHARDS_MANIFEST_MAX];
    assert_int_equal(nd_shards_manifest(text, sizeof text, s), ND_OK);
    assert_non_null(strstr(text, "assign " ND_SHARDS_ASSIGN_RULE "\n"));
    assert_int_equal(nd_shards_manifest(text, 10, s), ND_ELIMIT);
    assert_int_equal(nd_shards_manifest(text, sizeof text, s), ND_OK);
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* the manifest given as text (a coordinator's copy) */
    o = (nd_shards_options)ND_SHARDS_OPTIONS_INIT;
    o.manifest = text;
    o.db_flags = ND_DB_READONLY;
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    assert_int_equal(nd_db_get(res, nd_shards_db(s, home), "doc", 3), ND_OK);
    nd_results_free(res);
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* a damaged text is refused with its line */
    text[0] = 'X';
    assert_int_equal(nd_shards_open(&s, path, &o), ND_ECORRUPT);
    assert_null(s);
    assert_non_null(strstr(nd_errmsg(), "NEARDUP-SHARDS:1"));
    assert_int_equal(nd_shards_close(NULL), ND_OK);
}

/* A sharded store of fingerprint function version 1 records it, reopens
 * computing it, and a manifest naming a version this build does not
 * compute is refused. */
static void test_fp_version1(void **state)
{
    (void)state;
    char path[256];
    nd_shards *s = NULL;
    nd_shards_info info;
    store_path(path, "v1");
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    fo.flags = ND_FP_FUNCTION(1);
    nd_shards_options o = create_opts(2, 0);
    o.fp = &fo;
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    assert_int_equal(nd_shards_info_get(&info, s), ND_OK);
    assert_int_equal(info.fp_version, 1);
    assert_true(strncmp(info.fingerprint, "fp1;", 4) == 0);
    char text[ND_SHARDS_MANIFEST_MAX];
    assert_int_equal(nd_shards_manifest(text, sizeof text, s), ND_OK);
    assert_non_null(strstr(text, "\nfp-version 1\n"));
    assert_int_equal(nd_shards_close(s), ND_OK);
    o = (nd_shards_options)ND_SHARDS_OPTIONS_INIT;
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    nd_fp_options got;
    assert_int_equal(nd_db_fp_options(&got, nd_shards_db(s, 1)), ND_OK);
    assert_int_equal(ND_FP_FUNCTION_OF(got.flags), 1);
    assert_int_equal(nd_shards_close(s), ND_OK);
    char *at = strstr(text, "\nfp-version 1\n");
    at[12] = '9';
    o.manifest = text;
    o.db_flags = ND_DB_READONLY;
    assert_int_equal(nd_shards_open(&s, path, &o), ND_EVERSION);
    assert_non_null(strstr(nd_errmsg(), "fingerprint function version 9"));
}

static void test_manifest_only_and_finish(void **state)
{
    (void)state;
    char path[256], path2[256];
    nd_shards *s = NULL, *t = NULL;
    store_path(path, "one_at_a_time");
    nd_shards_options o = create_opts(3, ND_SHARDS_MANIFEST_ONLY);
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    for (unsigned i = 0; i < 3; i++) assert_null(nd_shards_db(s, i)); /* created, closed */
    assert_int_equal(nd_shards_finish(s), ND_EINVAL);                  /* manifest written */
    assert_int_equal(nd_shards_close(s), ND_OK);
    o = (nd_shards_options)ND_SHARDS_OPTIONS_INIT;
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    assert_non_null(nd_shards_db(s, 2));
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* NO_MANIFEST: not a store until finished */
    store_path(path2, "being_filled");
    o = create_opts(2, ND_SHARDS_NO_MANIFEST);
    assert_int_equal(nd_shards_open(&s, path2, &o), ND_OK);
    assert_int_equal(nd_db_add(nd_shards_db(s, 1), "k", 1, 7, 0, 0), ND_OK);
    nd_shards_options ro = ND_SHARDS_OPTIONS_INIT;
    ro.db_flags = ND_DB_READONLY;
    assert_int_equal(nd_shards_open(&t, path2, &ro), ND_ENOTFOUND);
    assert_non_null(strstr(nd_errmsg(), "not a sharded store"));
    assert_int_equal(nd_shards_finish(s), ND_OK);
    assert_null(nd_shards_db(s, 1)); /* closed by finish */
    assert_int_equal(nd_shards_finish(s), ND_EINVAL);
    assert_int_equal(nd_shards_close(s), ND_OK);
    assert_int_equal(nd_shards_open(&t, path2, &ro), ND_OK);
    uint64_t docs = 0;
    assert_int_equal(nd_db_counts(&docs, NULL, nd_shards_db(t, 1)), ND_OK);
    assert_int_equal(docs, 1);
    assert_int_equal(nd_shards_close(t), ND_OK);
}

static void test_mismatch_and_errors(void **state)
{
    (void)state;
    char path[256], shard1[300], cmd[700];
    nd_shards *s = (nd_shards *)1;
    store_path(path, "mm");
    nd_shards_options o = create_opts(2, ND_SHARDS_MANIFEST_ONLY);
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    assert_int_equal(nd_shards_close(s), ND_OK);
    assert_int_equal(nd_shards_open(&s, path, &o), ND_EEXIST); /* exists */
    assert_null(s);
    /* shard 1 replaced by a database of another k */
    snprintf(shard1, sizeof shard1, "%s/shard-001", path);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", shard1);
    assert_int_equal(system(cmd), 0);
    nd_db *db;
    nd_db_options dbo = ND_DB_OPTIONS_INIT;
    dbo.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY;
    dbo.k = 2;
    assert_int_equal(nd_db_open(&db, shard1, &dbo), ND_OK);
    assert_int_equal(nd_db_close(db), ND_OK);
    nd_shards_options ro = ND_SHARDS_OPTIONS_INIT;
    assert_int_equal(nd_shards_open(&s, path, &ro), ND_EMISMATCH);
    assert_non_null(strstr(nd_errmsg(), "shard 1 '"));
    assert_non_null(strstr(nd_errmsg(), "does not match the manifest"));
    ro.parts = 2; /* part 0 does not open shard 1 */
    assert_int_equal(nd_shards_open(&s, path, &ro), ND_OK);
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* a missing shard */
    assert_int_equal(system(cmd), 0);
    ro.parts = 0;
    assert_int_equal(nd_shards_open(&s, path, &ro), ND_ENOTFOUND);
    assert_non_null(strstr(nd_errmsg(), "shard-001"));
    /* not a store */
    assert_int_equal(nd_shards_open(&s, dir, &ro), ND_ENOTFOUND);
    /* bad options */
    nd_shards_options bad[8];
    for (int i = 0; i < 8; i++) bad[i] = create_opts(2, 0);
    bad[0].version = 9;
    bad[1].flags |= 0x100;
    bad[2].shards = 0;
    bad[3].shards = ND_SHARDS_MAX + 1;
    bad[4].k = 9;
    bad[5].parts = 2, bad[5].part = 2;
    bad[6].db_flags = ND_DB_READONLY;
    bad[7].flags = ND_SHARDS_NO_MANIFEST; /* without CREATE */
    for (int i = 0; i < 8; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/bad%d", dir, i);
        if (nd_shards_open(&s, p, &bad[i]) != ND_EINVAL) fail_msg("bad options %d accepted", i);
        assert_null(s);
    }
    assert_int_equal(nd_shards_open(NULL, path, NULL), ND_EINVAL);
    assert_int_equal(nd_shards_options_init(&ro, ND_SHARDS_OPTIONS_VERSION + 1), ND_EINVAL);
    nd_shards_options def = ND_SHARDS_OPTIONS_INIT;
    assert_int_equal(nd_shards_options_init(&ro, ND_SHARDS_OPTIONS_VERSION), ND_OK);
    assert_memory_equal(&ro, &def, sizeof ro);
}

/* ---- batch mode against one database ---------------------------------------- */

static void same_items(const nd_batch_item *a, const nd_batch_item *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].dup, b[i].dup);
        if (!a[i].dup) continue;
        assert_int_equal(a[i].dist, b[i].dist);
        assert_int_equal(a[i].match_fp, b[i].match_fp);
        assert_int_equal(a[i].match_index, b[i].match_index);
        assert_int_equal(a[i].match_key_len, b[i].match_key_len);
        assert_memory_equal(a[i].match_key, b[i].match_key, a[i].match_key_len);
    }
}

enum { STORED = 3000, BATCH = 600 };

static void test_batch_like_one_db(void **state)
{
    (void)state;
    static char skeys[STORED][16], bkeys[BATCH][16];
    static nd_doc stored[STORED], batch[BATCH];
    static nd_batch_item one[BATCH], many[BATCH], fresh[STORED];
    oracle_rng r = {34};
    char path[256], dbpath[256];
    nd_db *db;
    nd_shards *s;
    nd_results *k1, *k2;
    for (size_t i = 0; i < STORED; i++) {
        snprintf(skeys[i], sizeof skeys[i], "s%zu", i);
        uint64_t fp = i > 100 && i % 3 == 0 ? oracle_flip(&r, stored[i / 2].fp, i % 3)
                                            : oracle_next(&r);
        stored[i] = (nd_doc){skeys[i], strlen(skeys[i]), fp, (double)(i % 7), 1000};
    }
    /* near stored documents, near earlier batch documents, stored keys
     * again (refreshed with ADD), and unrelated ones */
    for (size_t i = 0; i < BATCH; i++) {
        uint64_t fp;
        switch (i % 4) {
        case 0: fp = oracle_flip(&r, stored[oracle_next(&r) % STORED].fp, (unsigned)(i % 5)); break;
        case 1: fp = i > 4 ? oracle_flip(&r, batch[i - 3].fp, (unsigned)(i % 4)) : oracle_next(&r); break;
        default: fp = oracle_next(&r);
        }
        if (i % 10 == 2) snprintf(bkeys[i], sizeof bkeys[i], "s%zu", (i * 37) % STORED);
        else snprintf(bkeys[i], sizeof bkeys[i], "b%zu", i);
        if (i % 10 == 2) fp = stored[(i * 37) % STORED].fp ^ 1; /* its own key, 1 bit away */
        batch[i] = (nd_doc){bkeys[i], strlen(bkeys[i]), fp, 1, 2000};
    }
    store_path(dbpath, "one");
    store_path(path, "many");
    nd_db_options dbo = ND_DB_OPTIONS_INIT;
    dbo.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY;
    dbo.k = 3;
    dbo.expected_docs = 1000000;
    assert_int_equal(nd_db_open(&db, dbpath, &dbo), ND_OK);
    assert_int_equal(nd_db_add_many(db, stored, STORED), ND_OK);
    nd_shards_options o = create_opts(4, 0);
    o.k = 3;
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    memset(fresh, 0, sizeof fresh); /* all new: each to its shard */
    assert_int_equal(nd_shards_add(s, stored, fresh, STORED), ND_OK);
    assert_int_equal(nd_results_new(&k1), ND_OK);
    assert_int_equal(nd_results_new(&k2), ND_OK);
    unsigned ks[] = {3, 0, 6, 10};
    for (size_t t = 0; t < 4; t++) {
        assert_int_equal(nd_db_batch(one, k1, db, batch, BATCH, ks[t], 0), ND_OK);
        assert_int_equal(nd_shards_batch(many, k2, s, batch, BATCH, ks[t], 0), ND_OK);
        same_items(one, many, BATCH);
    }
    size_t dups = 0, batch_dups = 0;
    for (size_t i = 0; i < BATCH; i++) {
        dups += (size_t)one[i].dup;
        batch_dups += one[i].dup && one[i].match_index != ND_BATCH_STORED;
    }
    assert_true(dups > BATCH / 3 && batch_dups > 20); /* not vacuous */
    /* storing: the same decisions, then the same stored set */
    assert_int_equal(nd_db_batch(one, k1, db, batch, BATCH, 3, ND_BATCH_ADD), ND_OK);
    assert_int_equal(nd_shards_batch(many, k2, s, batch, BATCH, 3, ND_BATCH_ADD), ND_OK);
    same_items(one, many, BATCH);
    uint64_t n1 = 0, n2 = 0;
    assert_int_equal(nd_db_counts(&n1, NULL, db), ND_OK);
    for (unsigned i = 0; i < 4; i++) {
        uint64_t c = 0;
        assert_int_equal(nd_db_counts(&c, NULL, nd_shards_db(s, i)), ND_OK);
        n2 += c;
    }
    assert_int_equal(n1, n2);
    assert_true(n1 > STORED);
    /* a stored key met again: its time refreshed in its shard */
    nd_results *got;
    assert_int_equal(nd_results_new(&got), ND_OK);
    unsigned home = nd_shards_place(s, bkeys[2], strlen(bkeys[2]));
    assert_int_equal(nd_db_get(got, nd_shards_db(s, home), bkeys[2], strlen(bkeys[2])), ND_OK);
    assert_int_equal(nd_results_get(got, 0)->time, 2000);
    nd_results_free(got);
    /* again: everything is a duplicate of something stored now */
    assert_int_equal(nd_db_batch(one, k1, db, batch, BATCH, 3, 0), ND_OK);
    assert_int_equal(nd_shards_batch(many, k2, s, batch, BATCH, 3, 0), ND_OK);
    same_items(one, many, BATCH);
    for (size_t i = 0; i < BATCH; i++) assert_true(many[i].dup);
    assert_int_equal(nd_shards_batch(many, k2, s, batch, BATCH, ND_MAX_K + 1, 0), ND_EINVAL);
    assert_int_equal(nd_shards_batch(many, k2, s, batch, BATCH, 3, 0x10), ND_EINVAL);
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* a part cannot run the whole batch */
    nd_shards_options po = ND_SHARDS_OPTIONS_INIT;
    po.parts = 2;
    assert_int_equal(nd_shards_open(&s, path, &po), ND_OK);
    assert_int_equal(nd_shards_batch(many, k2, s, batch, BATCH, 3, 0), ND_EINVAL);
    assert_int_equal(nd_shards_check(many, k2, s, batch, BATCH, 3), ND_OK); /* its shards */
    assert_int_equal(nd_shards_close(s), ND_OK);
    nd_results_free(k1);
    nd_results_free(k2);
    assert_int_equal(nd_db_close(db), ND_OK);
}

/* ---- the loader ------------------------------------------------------------ */

static void test_loader(void **state)
{
    (void)state;
    enum { N = 5000, S = 3 };
    static char keys[N][16];
    static nd_doc docs[N];
    uint64_t per[S] = {0};
    char path[256];
    nd_shards *s;
    nd_shards_loader *l;
    oracle_rng r = {77};
    store_path(path, "loaded");
    nd_shards_options o = create_opts(S, ND_SHARDS_NO_MANIFEST);
    assert_int_equal(nd_shards_open(&s, path, &o), ND_OK);
    assert_int_equal(nd_shards_loader_new(&l, s, 0), ND_OK);
    assert_int_equal(nd_shards_loader_chunk(l), 8000000 / S > 100000 ? 8000000 / S : 100000);
    nd_shards_loader_free(l);
    assert_int_equal(nd_shards_loader_new(&l, s, 700), ND_OK); /* chunks spill */
    assert_int_equal(nd_shards_loader_chunk(l), 700);
    for (size_t i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%zu", i % 4500); /* 500 keys twice: the last wins */
        docs[i] = (nd_doc){keys[i], strlen(keys[i]), oracle_next(&r), 0, 10};
    }
    for (size_t i = 0; i < N; i += 1000) assert_int_equal(nd_shards_loader_add(l, docs + i, 1000), ND_OK);
    for (size_t i = 0; i < 4500; i++) per[nd_shards_place(s, keys[i], strlen(keys[i]))]++;
    uint64_t added = 0;
    for (unsigned i = 0; i < S; i++) {
        uint64_t n = 0;
        assert_int_equal(nd_shards_loader_commit(l, i, &n), ND_OK);
        assert_int_equal(n, per[i]);
        added += n;
    }
    assert_int_equal(added, 4500);
    assert_int_equal(nd_shards_loader_commit(l, 0, NULL), ND_EINVAL); /* twice */
    assert_int_equal(nd_shards_loader_commit(l, S, NULL), ND_EINVAL);
    nd_shards_loader_free(l);
    assert_int_equal(nd_shards_finish(s), ND_OK);
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* reopened: every key in its shard with its last fingerprint */
    nd_shards_options ro = ND_SHARDS_OPTIONS_INIT;
    ro.db_flags = ND_DB_READONLY;
    assert_int_equal(nd_shards_open(&s, path, &ro), ND_OK);
    nd_results *res;
    assert_int_equal(nd_results_new(&res), ND_OK);
    for (size_t i = 0; i < N; i += 97) {
        size_t last = i % 4500 < 500 ? i % 4500 + 4500 : i;
        unsigned home = nd_shards_place(s, keys[i], strlen(keys[i]));
        assert_int_equal(nd_db_get(res, nd_shards_db(s, home), keys[i], strlen(keys[i])), ND_OK);
        assert_int_equal(nd_results_get(res, 0)->fp, docs[last].fp);
    }
    nd_results_free(res);
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* a part cannot load the whole store */
    ro.parts = 2;
    assert_int_equal(nd_shards_open(&s, path, &ro), ND_OK);
    assert_int_equal(nd_shards_loader_new(&l, s, 0), ND_EINVAL);
    assert_int_equal(nd_shards_close(s), ND_OK);
    nd_shards_loader_free(NULL);
}

/* A sharded store of resemblance shards answers a batch as one store. */
static void test_resemblance_shards(void **state)
{
    db_fixture *fx = *state;
    char one[160], dir[160];
    snprintf(one, sizeof one, "%s/one", fx->dir);
    snprintf(dir, sizeof dir, "%s/sharded", fx->dir);
    nd_db *db = fx->db = open_store(one, SIM_R);
    corpus *c = make_corpus(db);
    size_t first = c->n / 4, rest = c->n - first;
    nd_shards_options so = ND_SHARDS_OPTIONS_INIT;
    so.flags = ND_SHARDS_CREATE;
    so.db_flags = ND_DB_NO_BACKGROUND;
    so.shards = 3;
    so.k = SIM_K;
    so.has_k = 1;
    so.tables = 4;
    so.expected_docs = 100000;
    so.min_resemblance = SIM_R;
    nd_shards *s = NULL;
    assert_int_equal(nd_shards_open(&s, dir, &so), ND_OK);
    for (unsigned i = 0; i < 3; i++)
        assert_true(nd_db_min_resemblance(nd_shards_db(s, i)) == SIM_R);
    char man[ND_SHARDS_MANIFEST_MAX];
    assert_int_equal(nd_shards_manifest(man, sizeof man, s), ND_OK);
    assert_non_null(strstr(man, "\nresemblance sketch1;r=0.84999999999999998\n"));
    nd_batch_item *a = calloc(c->n, sizeof *a), *b = calloc(c->n, sizeof *b);
    /* (a and b hold c->n items: the last check is of the whole corpus) */
    nd_results *ka = NULL, *kb = NULL;
    assert_int_equal(nd_results_new(&ka), ND_OK);
    assert_int_equal(nd_results_new(&kb), ND_OK);
    /* the first quarter stored (every document: items need not say new) */
    assert_int_equal(nd_db_add_many(db, c->doc, first), ND_OK);
    assert_int_equal(nd_shards_add(s, c->doc, a, first), ND_OK);
    nd_doc bare = c->doc[first];
    bare.sketch = NULL;
    assert_int_equal(nd_shards_check(b, kb, s, &bare, 1, SIM_K), ND_EINVAL);
    assert_int_equal(nd_db_batch(a, ka, db, c->doc + first, rest, SIM_K, ND_BATCH_ADD), ND_OK);
    assert_int_equal(nd_shards_batch(b, kb, s, c->doc + first, rest, SIM_K, ND_BATCH_ADD), ND_OK);
    size_t dups = 0;
    for (size_t j = 0; j < rest; j++) {
        assert_int_equal(a[j].dup, b[j].dup);
        if (!a[j].dup) continue;
        dups++;
        assert_int_equal(a[j].dist, b[j].dist);
        assert_true(a[j].match_fp == b[j].match_fp && a[j].match_index == b[j].match_index);
        assert_true(a[j].resemblance == b[j].resemblance);
        assert_int_equal(a[j].match_key_len, b[j].match_key_len);
        assert_memory_equal(a[j].match_key, b[j].match_key, a[j].match_key_len);
    }
    assert_true(dups > rest / 4);
    uint64_t total = 0;
    for (unsigned i = 0; i < 3; i++) {
        uint64_t d;
        assert_int_equal(nd_db_verify(nd_shards_db(s, i)), ND_OK);
        assert_int_equal(nd_db_counts(&d, NULL, nd_shards_db(s, i)), ND_OK);
        total += d;
    }
    assert_int_equal(total, c->n);
    assert_int_equal(nd_shards_close(s), ND_OK);
    /* reopened, the manifest's threshold is checked against each shard;
     * a check-only batch over the whole store equals two parts' checks
     * merged (most resemblant, then nd_match_order) and decided by
     * nd_shards_decide_similar, as neardup-mpi batch does */
    nd_shards_options oo = ND_SHARDS_OPTIONS_INIT;
    oo.db_flags = ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_shards_open(&s, dir, &oo), ND_OK);
    nd_doc *q = malloc(c->n * sizeof *q);
    nd_signature *qs = malloc(c->n * sizeof *qs);
    rng = 0x55;
    for (size_t i = 0; i < c->n; i++) { /* fresh copies under new keys */
        sim_text e;
        edit_text(&e, &c->t[i % ORIGINALS], 0.02);
        sign(&qs[i], db, &e);
        q[i] = (nd_doc){"q", 1, qs[i].fp, 0, 0, &qs[i].sketch};
    }
    assert_int_equal(nd_shards_batch(a, ka, s, q, c->n, SIM_K, 0), ND_OK);
    assert_int_equal(nd_shards_close(s), ND_OK);
    nd_shards *part[2];
    nd_batch_item *pi[2] = {calloc(c->n, sizeof *a), calloc(c->n, sizeof *a)};
    nd_results *pk[2];
    for (unsigned p = 0; p < 2; p++) {
        oo.part = p;
        oo.parts = 2;
        assert_int_equal(nd_shards_open(&part[p], dir, &oo), ND_OK);
        assert_int_equal(nd_results_new(&pk[p]), ND_OK);
        assert_int_equal(nd_shards_check(pi[p], pk[p], part[p], q, c->n, SIM_K), ND_OK);
    }
    for (size_t i = 0; i < c->n; i++) {
        const nd_batch_item *x = &pi[0][i], *y = &pi[1][i];
        nd_match mx = {x->match_fp, x->dist, x->match_key, x->match_key_len, 0, 0, 0};
        nd_match my = {y->match_fp, y->dist, y->match_key, y->match_key_len, 0, 0, 0};
        b[i] = !y->dup || (x->dup && (x->resemblance > y->resemblance ||
                                      (x->resemblance == y->resemblance &&
                                       nd_match_order(&mx, &my) < 0)))
                   ? *x
                   : *y;
    }
    assert_int_equal(nd_shards_decide_similar(b, q, c->n, SIM_K, 0), ND_EINVAL);
    assert_int_equal(nd_shards_decide_similar(b, q, c->n, SIM_K, SIM_R), ND_OK);
    size_t batch_matches = 0;
    for (size_t j = 0; j < c->n; j++) {
        assert_int_equal(a[j].dup, b[j].dup);
        if (!a[j].dup) continue;
        batch_matches += a[j].match_index != ND_BATCH_STORED;
        assert_true(a[j].match_index == b[j].match_index && a[j].resemblance == b[j].resemblance);
        assert_int_equal(a[j].match_key_len, b[j].match_key_len);
        assert_memory_equal(a[j].match_key, b[j].match_key, a[j].match_key_len);
    }
    assert_true(batch_matches > 0);
    for (unsigned p = 0; p < 2; p++) {
        assert_int_equal(nd_shards_close(part[p]), ND_OK);
        nd_results_free(pk[p]);
        free(pi[p]);
    }
    free(q);
    free(qs);
    so.min_resemblance = NAN;
    snprintf(dir, sizeof dir, "%s/bad", fx->dir);
    assert_int_equal(nd_shards_open(&s, dir, &so), ND_EINVAL);
    nd_results_free(ka);
    nd_results_free(kb);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_open_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fp_version1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_only_and_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mismatch_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_like_one_db, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loader, setup, teardown),
        DB_FIXTURE_TEST(test_resemblance_shards),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
