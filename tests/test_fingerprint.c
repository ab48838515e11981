/*
 * test_fingerprint.c — the fingerprint function: golden vectors (frozen),
 * the accumulator against a plain reference, normalisation paths, features
 * vs fingerprint, HTML robustness, and quality on real text found on the
 * machine (edited copies within 3 bits; unrelated texts about 32 apart).
 */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "neardup.h"
#include "golden_fp.h"
#include "golden_fp_inputs.h"

static uint64_t rng = 3;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t fp_of(const char *text, size_t len, const nd_fp_options *o)
{
    uint64_t fp = 0;
    assert_int_equal(nd_fingerprint(&fp, text, len, o), ND_OK);
    return fp;
}

static void test_golden(void **state)
{
    (void)state;
    size_t n = sizeof golden_inputs / sizeof golden_inputs[0];
    assert_int_equal(n, sizeof golden_fp / sizeof golden_fp[0]);
    for (size_t i = 0; i < n; i++) {
        const golden_input *g = &golden_inputs[i];
        nd_fp_options o = ND_FP_OPTIONS_INIT;
        o.features = g->features;
        o.n = g->n;
        o.flags = g->flags;
        o.stopwords = g->stop;
        o.n_stopwords = g->nstop;
        uint64_t fp = fp_of(g->text, g->len, &o);
        if (fp != golden_fp[i]) fprintf(stderr, "golden %zu: %016llx\n", i, (unsigned long long)fp);
        assert_true(fp == golden_fp[i]);
    }
    for (unsigned k = 0; k < 4; k++) {
        nd_fp_options o = ND_FP_OPTIONS_INIT;
        char buf[256];
        o.features = (nd_feature_kind)k;
        assert_int_equal(nd_fp_config_string(buf, sizeof buf, &o), ND_OK);
        assert_string_equal(buf, golden_config[k]);
    }
    /* Spot checks of the rules behind the vectors. */
    assert_true(golden_fp[2] == golden_fp[8]);   /* case and punctuation */
    assert_true(golden_fp[0] == 0 && golden_fp[26] == 0); /* no features */
    assert_true(golden_fp[16] != golden_fp[17]); /* CJK bigrams matter */
}

/* The accumulator equals 64 plain counters for any weights. */
static void test_simhash_reference(void **state)
{
    (void)state;
    for (int round = 0; round < 200; round++) {
        nd_simhash acc;
        int64_t ref[64] = {0};
        nd_simhash_init(&acc);
        int n = (int)(rnd() % 300);
        for (int i = 0; i < n; i++) {
            uint64_t h = rnd();
            int32_t w;
            switch (rnd() % 4) {
            case 0: w = 1; break;
            case 1: w = -(int32_t)(rnd() % 1000); break;
            case 2: w = INT32_MAX; break;
            default: w = (int32_t)(rnd() % 2000) - 1000;
            }
            nd_simhash_add_hash(&acc, h, w);
            for (int b = 0; b < 64; b++) ref[b] += ((h >> b) & 1) ? w : -(int64_t)w;
        }
        uint64_t want = 0;
        for (int b = 0; b < 64; b++)
            if (ref[b] > 0) want |= 1ull << b;
        assert_true(nd_simhash_final(&acc) == want);
    }
    nd_simhash acc;
    nd_simhash_init(&acc);
    nd_simhash_add_feature(&acc, "abc", 3, 1);
    assert_true(nd_simhash_final(&acc) == nd_feature_hash("abc", 3));
    assert_int_equal(nd_hamming(0, ~0ull), 64);
    assert_int_equal(nd_hamming(5, 6), 2);
}

/* The ASCII fast path agrees with full NFKC + case folding. */
static void test_normalisation_paths(void **state)
{
    (void)state;
    const char *ascii = "the quick brown fox jumps over the lazy dog";
    const char *wide = "ＴＨＥ　ｑｕｉｃｋ　ＢＲＯＷＮ　ｆｏｘ　ｊｕｍｐｓ　ｏｖｅｒ　ｔｈｅ　ｌａｚｙ　ｄｏｇ";
    const char *mixed = "The QUICK brown ｆｏｘ jumps over the lazy dog";
    uint64_t a = fp_of(ascii, strlen(ascii), NULL);
    assert_true(a == fp_of(wide, strlen(wide), NULL));
    assert_true(a == fp_of(mixed, strlen(mixed), NULL));
    /* Decomposed and composed forms are the same text. */
    const char *nfd = "cafe\xcc\x81 au lait", *nfc = "caf\xc3\xa9 au lait";
    assert_true(fp_of(nfd, strlen(nfd), NULL) == fp_of(nfc, strlen(nfc), NULL));
    /* Invalid bytes are separators, deterministically. */
    const char *bad = "alpha\xff" "beta", *sep = "alpha beta";
    assert_true(fp_of(bad, strlen(bad), NULL) == fp_of(sep, strlen(sep), NULL));
    const char nul[] = "alpha\0beta";
    assert_true(fp_of(nul, sizeof nul - 1, NULL) == fp_of(sep, strlen(sep), NULL));
}

typedef struct collect {
    nd_simhash acc;
    size_t n;
} collect;

static void collect_cb(uint64_t h, int32_t w, void *p)
{
    collect *c = p;
    nd_simhash_add_hash(&c->acc, h, w);
    c->n++;
}

static void test_features_match_fingerprint(void **state)
{
    (void)state;
    const char *t = "one two three four five six";
    for (unsigned k = 1; k <= 3; k++) {
        nd_fp_options o = ND_FP_OPTIONS_INIT;
        o.features = (nd_feature_kind)k;
        collect c;
        nd_simhash_init(&c.acc);
        c.n = 0;
        assert_int_equal(nd_features(t, strlen(t), &o, collect_cb, &c), ND_OK);
        assert_true(nd_simhash_final(&c.acc) == fp_of(t, strlen(t), &o));
        size_t want = k == ND_FEATURES_WORDS ? 6 : k == ND_FEATURES_SHINGLES ? 4 : 24;
        assert_int_equal(c.n, want);
    }
    /* Stop words are dropped before shingling. */
    const char *stop[] = {"two"};
    nd_fp_options o = ND_FP_OPTIONS_INIT;
    o.features = ND_FEATURES_WORDS;
    o.stopwords = stop;
    o.n_stopwords = 1;
    const char *without = "one three four five six";
    assert_true(fp_of(t, strlen(t), &o) == fp_of(without, strlen(without), NULL) ||
                fp_of(t, strlen(t), &o) == fp_of(without, strlen(without), &(nd_fp_options){
                    ND_FP_OPTIONS_VERSION, ND_FEATURES_WORDS, 0, 0, 0, NULL, 0}));
    /* Errors. */
    uint64_t fp;
    nd_fp_options bad = ND_FP_OPTIONS_INIT;
    bad.version = 99;
    assert_int_equal(nd_fingerprint(&fp, "x", 1, &bad), ND_EINVAL);
    bad = (nd_fp_options)ND_FP_OPTIONS_INIT;
    bad.features = (nd_feature_kind)7;
    assert_int_equal(nd_fingerprint(&fp, "x", 1, &bad), ND_EINVAL);
    assert_int_equal(nd_fingerprint(&fp, NULL, 3, NULL), ND_EINVAL);
    assert_int_equal(nd_fingerprint(&fp, "x", (size_t)ND_MAX_DOC_BYTES + 1, NULL), ND_ELIMIT);
    char small[8];
    assert_int_equal(nd_fp_config_string(small, sizeof small, NULL), ND_ELIMIT);
    assert_int_equal(nd_fp_options_init(&bad, 2), ND_EINVAL);
}

static void test_html(void **state)
{
    (void)state;
    nd_html_text t;
    const char *h = "<html><head><title>T1</title><style>x{}</style></head><body>"
                    "<p>a&amp;b</p><script>evil()</script><div>c</div></body></html>";
    assert_int_equal(nd_html_extract(&t, h, strlen(h)), ND_OK);
    assert_string_equal(t.title, "T1");
    assert_non_null(strstr(t.body, "a&b"));
    assert_null(strstr(t.body, "evil"));
    assert_null(strstr(t.body, "x{}"));
    nd_html_text_dispose(&t);
    nd_html_text_dispose(NULL);
    /* Hostile HTML never crashes. */
    size_t deep_n = 200000 * 3;
    char *deep = malloc(deep_n + 1);
    for (size_t i = 0; i < deep_n; i += 3) memcpy(deep + i, "<b>", 3);
    deep[deep_n] = '\0';
    assert_int_equal(nd_html_extract(&t, deep, deep_n), ND_OK);
    nd_html_text_dispose(&t);
    for (int r = 0; r < 300; r++) {
        size_t n = rnd() % 400;
        for (size_t i = 0; i < n; i++) deep[i] = "<>/&;#x!-abp \"'=\xff\x00"[rnd() % 18];
        uint64_t fp;
        nd_fp_options o = ND_FP_OPTIONS_INIT;
        o.flags = ND_FP_HTML;
        assert_int_equal(nd_fingerprint(&fp, deep, n, &o), ND_OK);
    }
    free(deep);
    assert_int_equal(nd_html_extract(&t, "", 0), ND_OK);
    assert_int_equal(t.body_len, 0);
    nd_html_text_dispose(&t);
}

/* ---- quality on real text --------------------------------------------- */

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = len >= 0 ? malloc((size_t)len + 1) : NULL;
    *n = b ? fread(b, 1, (size_t)len, f) : 0;
    if (b) b[*n] = '\0';
    fclose(f);
    return b;
}

static void test_quality_edits(void **state)
{
    (void)state;
    const char *path = "/usr/share/common-licenses/GPL-3";
    size_t n;
    char *t = slurp(path, &n);
    assert_non_null(t); /* base-files ships it on every Debian system */
    uint64_t base = fp_of(t, n, NULL);
    char *e = malloc(n + 512);
    /* A changed date line at the top. */
    int m = sprintf(e, "Retrieved on 2026-11-22 at 10:31\n");
    memcpy(e + m, t, n);
    assert_true(nd_hamming(base, fp_of(e, n + (size_t)m, NULL)) <= 3);
    /* An advertisement sentence in the middle. */
    const char *ad = " Buy cheap widgets now at our online store: the best deals of the year! ";
    memcpy(e, t, n / 2);
    memcpy(e + n / 2, ad, strlen(ad));
    memcpy(e + n / 2 + strlen(ad), t + n / 2, n - n / 2);
    assert_true(nd_hamming(base, fp_of(e, n + strlen(ad), NULL)) <= 3);
    /* A changed footer. */
    memcpy(e, t, n - 200);
    const char *foot = "\nPage generated by ExampleCMS 4.2 - (c) 2027 Example Corp. All rights reserved.\n";
    memcpy(e + n - 200, foot, strlen(foot));
    assert_true(nd_hamming(base, fp_of(e, n - 200 + strlen(foot), NULL)) <= 3);
    free(e);
    free(t);
}

/* Exact word 3-shingle resemblance, to pick pairs that are unrelated. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct hset {
    uint64_t *v;
    size_t n, cap;
} hset;

static void hset_cb(uint64_t h, int32_t w, void *p)
{
    (void)w;
    hset *s = p;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = h;
}

static double jaccard(hset *a, hset *b)
{
    size_t i = 0, j = 0, inter = 0;
    while (i < a->n && j < b->n) {
        if (a->v[i] == b->v[j]) { inter++; i++; j++; }
        else if (a->v[i] < b->v[j]) i++;
        else j++;
    }
    size_t uni = a->n + b->n - inter;
    return uni ? (double)inter / (double)uni : 1.0;
}

static void test_quality_unrelated(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("/usr/share/common-licenses/*", 0, NULL, &g), 0);
    size_t nfiles = g.gl_pathc, pairs = 0;
    uint64_t *fps = calloc(nfiles, sizeof *fps);
    hset *sets = calloc(nfiles, sizeof *sets);
    nd_fp_options o = ND_FP_OPTIONS_INIT;
    o.features = ND_FEATURES_SHINGLES;
    for (size_t i = 0; i < nfiles; i++) {
        size_t n;
        char *t = slurp(g.gl_pathv[i], &n);
        if (!t) continue;
        fps[i] = fp_of(t, n, NULL);
        nd_features(t, n, &o, hset_cb, &sets[i]);
        qsort(sets[i].v, sets[i].n, sizeof *sets[i].v, cmp_u64);
        free(t);
    }
    double sum = 0;
    for (size_t i = 0; i < nfiles; i++)
        for (size_t j = i + 1; j < nfiles; j++) {
            if (!sets[i].n || !sets[j].n || jaccard(&sets[i], &sets[j]) >= 0.3) continue;
            sum += nd_hamming(fps[i], fps[j]);
            pairs++;
        }
    if (pairs < 50) fprintf(stderr, "only %zu unrelated pairs under /usr/share/common-licenses\n", pairs);
    assert_true(pairs >= 50);
    double mean = sum / (double)pairs;
    fprintf(stderr, "unrelated pairs: %zu, mean distance %.1f\n", pairs, mean);
    assert_true(mean >= 26.0 && mean <= 38.0);
    for (size_t i = 0; i < nfiles; i++) free(sets[i].v);
    free(sets);
    free(fps);
    globfree(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_simhash_reference),
        cmocka_unit_test(test_normalisation_paths),
        cmocka_unit_test(test_features_match_fingerprint),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_quality_edits),
        cmocka_unit_test(test_quality_unrelated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
