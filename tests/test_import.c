/*
 * test_import.c — the key order of bulk imports (db_import_order), and
 * imports of keys that share long prefixes.
 *
 * db_import_order radix-sorts keys 8 bytes at a time and finishes small
 * groups by comparison. Its orders are checked against qsort with the
 * store's bytewise order (memcmp, then the shorter key first) on key sets
 * built to hit every branch: URL-like keys sharing 45 bytes, keys that are
 * prefixes of others, embedded and trailing zero bytes (equal to the
 * zero padding of a shorter key's last word), lengths on both sides of
 * every 8-byte boundary, groups above and below the comparison threshold,
 * keys of 4096 bytes, and (for rev) many documents of one fingerprint.
 * db_import_split keeps the last document of each key, in key order.
 * Then nd_db_import and an nd_loader (several chunks spilled) store URL-like
 * keys: nd_db_foreach_doc visits exactly the keys given, with their
 * fingerprints, and nd_db_verify passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "db_import.h"
#include "neardup.h"
#include "tmpdir.h"

/* The keys of one test set, in one arena. */
typedef struct key_set {
    nd_doc *docs;
    size_t n, cap;
    char *arena[8192];
    size_t narena;
} key_set;

static nd_db *open_new(const char *path);

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void add_key(key_set *s, const void *key, size_t len, uint64_t fp)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->docs = realloc(s->docs, s->cap * sizeof *s->docs);
        assert_non_null(s->docs);
    }
    assert_true(s->narena < sizeof s->arena / sizeof s->arena[0]);
    char *k = malloc(len);
    assert_non_null(k);
    memcpy(k, key, len);
    s->arena[s->narena++] = k;
    s->docs[s->n++] = (nd_doc){k, len, fp, 0.5, 1700000000};
}

static void free_keys(key_set *s)
{
    for (size_t i = 0; i < s->narena; i++) free(s->arena[i]);
    free(s->docs);
    memset(s, 0, sizeof *s);
}

/* The store's order: bytewise, then the shorter key first. */
static int key_cmp(const nd_doc *a, const nd_doc *b)
{
    size_t l = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, l);
    return c ? c : (a->key_len > b->key_len) - (a->key_len < b->key_len);
}

static const nd_doc *cmp_docs;

static int cmp_by_key(const void *x, const void *y)
{
    return key_cmp(&cmp_docs[*(const size_t *)x], &cmp_docs[*(const size_t *)y]);
}

static int cmp_by_fp_key(const void *x, const void *y)
{
    const nd_doc *a = &cmp_docs[*(const size_t *)x], *b = &cmp_docs[*(const size_t *)y];
    if (a->fp != b->fp) return a->fp < b->fp ? -1 : 1;
    return key_cmp(a, b);
}

/* db_import_order of every document (idx given in a shuffled order) must
 * equal qsort's order, key by key; keys are distinct, as the importer's. */
static void check_order(const key_set *s, int by_fp)
{
    size_t *idx = malloc(s->n * sizeof *idx), *want = malloc(s->n * sizeof *want);
    sort_item *order = NULL;
    assert_non_null(idx);
    assert_non_null(want);
    for (size_t i = 0; i < s->n; i++) idx[i] = i;
    for (size_t i = s->n; i > 1; i--) { /* shuffle */
        size_t j = rng() % i, t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
    memcpy(want, idx, s->n * sizeof *want);
    cmp_docs = s->docs;
    qsort(want, s->n, sizeof *want, by_fp ? cmp_by_fp_key : cmp_by_key);
    assert_int_equal(db_import_order(s->docs, idx, s->n, by_fp ? DB_ORDER_FP : DB_ORDER_KEY, &order),
                     ND_OK);
    for (size_t i = 0; i < s->n; i++) {
        const nd_doc *got = &s->docs[order[i].idx], *exp = &s->docs[want[i]];
        if (key_cmp(got, exp) != 0 || got->fp != exp->fp)
            fail_msg("by_fp %d: item %zu of %zu: key of %zu bytes where %zu bytes expected",
                     by_fp, i, s->n, got->key_len, exp->key_len);
    }
    free(order);
    free(idx);
    free(want);
}

/* Distinct keys that stress the word-by-word sort. */
static void build_keys(key_set *s, int few_fps)
{
    char k[4096];
    const char *url = "https://www.example.com/news/2026/11/article-"; /* 45 bytes */
    size_t ul = strlen(url);
    uint64_t fps[3] = {rng(), rng(), rng()};
#define FP() (few_fps ? fps[rng() % 3] : rng())
    /* URL-like: a long shared prefix, then 1..12 more characters. */
    for (int i = 0; i < 600; i++) {
        int len = sprintf(k, "%s%llu", url, (unsigned long long)(rng() % 1000000000000ull));
        (void)len;
        int dup = 0;
        for (size_t j = 0; j < s->n && !dup; j++)
            dup = s->docs[j].key_len == strlen(k) && memcmp(s->docs[j].key, k, strlen(k)) == 0;
        if (!dup) add_key(s, k, strlen(k), FP());
    }
    /* Every prefix of the URL (lengths 1..45): each is a prefix of the
     * others, and the lengths cross every word boundary. */
    for (size_t l = 1; l <= ul; l++) add_key(s, url, l, FP());
    /* Zero bytes: "ab", "ab\0", "ab\0\0", ... up to 20 zeros (equal to
     * the padding of "ab" in its word and the next two), and the same
     * with a byte after them. */
    for (size_t z = 0; z <= 20; z++) {
        memset(k, 0, sizeof k);
        k[0] = 'a';
        k[1] = 'b';
        add_key(s, k, 2 + z, FP());
        k[2 + z] = 1;
        add_key(s, k, 3 + z, FP());
    }
    /* Keys of 0xff bytes (above every padding) and 4096-byte keys that
     * differ only in their last byte. */
    for (size_t l = 1; l <= 17; l++) {
        memset(k, 0xff, l);
        add_key(s, k, l, FP());
    }
    for (int i = 0; i < 20; i++) {
        memset(k, 'x', sizeof k);
        k[sizeof k - 1] = (char)('A' + i);
        add_key(s, k, sizeof k, FP());
    }
    /* Small groups: short random binary keys. */
    for (int i = 0; i < 300; i++) {
        size_t l = 1 + rng() % 20;
        for (size_t j = 0; j < l; j++) k[j] = (char)(rng() % 4); /* few values: ties */
        int dup = 0;
        for (size_t j = 0; j < s->n && !dup; j++)
            dup = s->docs[j].key_len == l && memcmp(s->docs[j].key, k, l) == 0;
        if (!dup) add_key(s, k, l, FP());
    }
#undef FP
}

static void test_order_by_key(void **state)
{
    (void)state;
    key_set s = {0};
    build_keys(&s, 0);
    check_order(&s, 0);
    check_order(&s, 0); /* another shuffle */
    free_keys(&s);
}

static void test_order_by_fp(void **state)
{
    (void)state;
    key_set s = {0};
    build_keys(&s, 1); /* three fingerprints: large groups of equal ones */
    check_order(&s, 1);
    free_keys(&s);
    build_keys(&s, 0);
    check_order(&s, 1);
    free_keys(&s);
}

/* db_import_split on an empty store: every key once, in key order, as
 * its last document; nothing counts as stored. */
static void test_split_last_wins(void **state)
{
    (void)state;
    char dir[64], path[128];
    key_set s = {0}, all = {0};
    build_keys(&s, 0);
    /* Each key 1..3 times, the copies spread over the whole array. */
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < s.n; i++)
            if (round == 0 || rng() % 2) add_key(&all, s.docs[i].key, s.docs[i].key_len, rng());
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    nd_db *db = open_new(path);
    size_t *rep = NULL, *fresh = NULL, nrep = 9, nfresh = 0;
    assert_int_equal(db_import_split(db, all.docs, all.n, &rep, &nrep, &fresh, &nfresh), ND_OK);
    assert_int_equal(nrep, 0);
    assert_int_equal(nfresh, s.n);
    for (size_t i = 0; i < nfresh; i++) {
        const nd_doc *d = &all.docs[fresh[i]];
        if (i > 0) assert_true(key_cmp(&all.docs[fresh[i - 1]], d) < 0);
        for (size_t j = fresh[i] + 1; j < all.n; j++) /* no later copy */
            assert_true(key_cmp(&all.docs[j], d) != 0);
    }
    free(rep);
    free(fresh);
    assert_int_equal(nd_db_close(db), ND_OK);
    tmpdir_remove(dir);
    free_keys(&s);
    free_keys(&all);
}

/* nd_db_foreach_doc: each visited key found in the expected (sorted) set. */
typedef struct visit {
    const nd_doc *want; /* sorted by key */
    size_t n, seen;
    int bad;
} visit;

static int visit_cb(const nd_doc *d, void *payload)
{
    visit *v = payload;
    if (v->seen >= v->n || key_cmp(d, &v->want[v->seen]) != 0 || d->fp != v->want[v->seen].fp)
        v->bad = 1;
    v->seen++;
    return 0;
}

static int cmp_doc_keys(const void *a, const void *b) { return key_cmp(a, b); }

static void check_stored(nd_db *db, const key_set *s)
{
    nd_doc *want = malloc(s->n * sizeof *want);
    assert_non_null(want);
    memcpy(want, s->docs, s->n * sizeof *want);
    qsort(want, s->n, sizeof *want, cmp_doc_keys);
    visit v = {want, s->n, 0, 0};
    assert_int_equal(nd_db_foreach_doc(db, visit_cb, &v), ND_OK);
    assert_int_equal(v.seen, s->n);
    assert_false(v.bad);
    uint64_t docs = 0;
    assert_int_equal(nd_db_counts(&docs, NULL, db), ND_OK);
    assert_int_equal(docs, s->n);
    assert_int_equal(nd_db_verify(db), ND_OK);
    free(want);
}

static nd_db *open_new(const char *path)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.expected_docs = 10000;
    assert_int_equal(nd_db_open(&db, path, &o), ND_OK);
    return db;
}

static void test_import_shared_prefixes(void **state)
{
    (void)state;
    char dir[64], path[128];
    key_set s = {0};
    build_keys(&s, 0);
    tmpdir_make(dir);
    /* One nd_db_import. */
    snprintf(path, sizeof path, "%s/import", dir);
    nd_db *db = open_new(path);
    assert_int_equal(nd_db_import(db, s.docs, s.n), ND_OK);
    check_stored(db, &s);
    assert_int_equal(nd_db_close(db), ND_OK);
    /* A loader spilling chunks of 97 documents. */
    snprintf(path, sizeof path, "%s/loader", dir);
    db = open_new(path);
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 97), ND_OK);
    for (size_t i = 0; i < s.n; i += 50)
        assert_int_equal(nd_loader_add(l, s.docs + i, s.n - i < 50 ? s.n - i : 50), ND_OK);
    assert_int_equal(nd_loader_finish(NULL, l), ND_OK);
    nd_loader_free(l);
    check_stored(db, &s);
    assert_int_equal(nd_db_close(db), ND_OK);
    tmpdir_remove(dir);
    free_keys(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_by_key),
        cmocka_unit_test(test_order_by_fp),
        cmocka_unit_test(test_split_last_wins),
        cmocka_unit_test(test_import_shared_prefixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
