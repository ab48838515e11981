/*
 * test_fingerprint.c — the fingerprint function: golden vectors (frozen),
 * the accumulator against a plain reference, normalisation paths, features
 * vs fingerprint, HTML robustness, and quality on real text found on the
 * machine and shipped in tests/data/texts (edited copies of a page within
 * 3 bits; unrelated texts about 32 apart, never within 3).
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
#include "oracle.h"

/* One sequence through every test, in order. */
static oracle_rng rng = {3};
static uint64_t rnd(void) { return oracle_next(&rng); }

static uint64_t fp_of(const char *text, size_t len, const nd_fp_options *o)
{
    uint64_t fp = 0;
    assert_int_equal(nd_fingerprint(&fp, text, len, o), ND_OK);
    return fp;
}

/* The vector's fingerprint under function version (0: the newest) and an
 * HTML title weight (0: the version's default). */
static uint64_t golden_weighed(const golden_input *g, unsigned version, unsigned title_weight)
{
    nd_fp_options o = ND_FP_OPTIONS_INIT;
    o.features = g->features;
    o.n = g->n;
    o.flags = g->flags | ND_FP_FUNCTION(version);
    o.title_weight = title_weight;
    o.stopwords = g->stop;
    o.n_stopwords = g->nstop;
    return fp_of(g->text, g->len, &o);
}

static uint64_t golden_of(const golden_input *g, unsigned version)
{
    return golden_weighed(g, version, 0);
}

/* Version 1, computed on request (the stores created before version 2
 * keep it), and version 2 on its own vectors. */
static void test_golden(void **state)
{
    (void)state;
    size_t n = sizeof golden_inputs / sizeof golden_inputs[0];
    assert_int_equal(n, sizeof golden_fp / sizeof golden_fp[0]);
    for (size_t i = 0; i < n; i++) {
        uint64_t fp = golden_of(&golden_inputs[i], 1);
        if (fp != golden_fp[i]) fprintf(stderr, "golden %zu: %016llx\n", i, (unsigned long long)fp);
        assert_true(fp == golden_fp[i]);
        /* No input has a gap inside a CJK run or Hangul: version 2 gives
         * each the same fingerprint under version 1's title weight (2),
         * and by default that of title weight 1 (a page without a title:
         * the same). */
        assert_true(golden_weighed(&golden_inputs[i], 2, 2) == golden_fp[i]);
        assert_true(golden_of(&golden_inputs[i], 0) == golden_weighed(&golden_inputs[i], 1, 1));
        assert_true(golden_of(&golden_inputs[i], 2) == golden_of(&golden_inputs[i], 0));
        if ((golden_inputs[i].flags & ND_FP_HTML) && strstr(golden_inputs[i].text, "<title>"))
            assert_true(golden_of(&golden_inputs[i], 0) != golden_fp[i]); /* it weighs less */
    }
    for (unsigned k = 0; k < 4; k++) {
        nd_fp_options o = ND_FP_OPTIONS_INIT;
        char buf[256];
        o.features = (nd_feature_kind)k;
        o.flags = ND_FP_FUNCTION(1);
        assert_int_equal(nd_fp_config_string(buf, sizeof buf, &o), ND_OK);
        assert_string_equal(buf, golden_config[k]);
        o.flags = 0; /* the newest */
        assert_int_equal(nd_fp_config_string(buf, sizeof buf, &o), ND_OK);
        assert_string_equal(buf, golden_config_v2[k]);
        o.flags = ND_FP_FUNCTION(2);
        assert_int_equal(nd_fp_config_string(buf, sizeof buf, &o), ND_OK);
        assert_string_equal(buf, golden_config_v2[k]);
    }
    /* Versions this build does not compute. */
    for (unsigned v = ND_FP_VERSION + 1; v < 256; v += 37) {
        nd_fp_options o = ND_FP_OPTIONS_INIT;
        uint64_t fp;
        char buf[256];
        o.flags = ND_FP_FUNCTION(v);
        assert_int_equal(nd_fingerprint(&fp, "text", 4, &o), ND_EVERSION);
        assert_int_equal(nd_fp_config_string(buf, sizeof buf, &o), ND_EVERSION);
    }
    assert_int_equal(ND_FP_FUNCTION_OF(ND_FP_FUNCTION(7) | ND_FP_HTML), 7);
    /* Spot checks of the rules behind the vectors. */
    assert_true(golden_fp[2] == golden_fp[8]);   /* case and punctuation */
    assert_true(golden_fp[0] == 0 && golden_fp[26] == 0); /* no features */
    assert_true(golden_fp[16] != golden_fp[17]); /* CJK bigrams matter */
}

static void test_golden_v2(void **state)
{
    (void)state;
    size_t n = sizeof golden_inputs_v2 / sizeof golden_inputs_v2[0];
    uint64_t fp[sizeof golden_inputs_v2 / sizeof golden_inputs_v2[0]];
    int bad = 0;
    assert_int_equal(n, sizeof golden_fp_v2 / sizeof golden_fp_v2[0]);
    for (size_t i = 0; i < n; i++) {
        fp[i] = golden_of(&golden_inputs_v2[i], 0);
        assert_true(golden_of(&golden_inputs_v2[i], 2) == fp[i]);
        if (fp[i] != golden_fp_v2[i]) {
            fprintf(stderr, "    0x%016llxull, /* %zu */\n", (unsigned long long)fp[i], i);
            bad = 1;
        }
    }
    assert_false(bad);
    /* The rules behind the vectors: spaces, line breaks, tabs, CR,
     * ideographic space and punctuation inside a run cost nothing. */
    for (size_t i = 1; i <= 5; i++) assert_true(fp[i] == fp[0]);
    assert_true(fp[7] == fp[6]);
    assert_true(fp[9] == fp[8] && fp[10] == fp[8]); /* Hangul: spaces do not count */
    assert_true(fp[13] == fp[12]);                  /* Latin ends a run */
    assert_true(fp[16] == fp[15]);                  /* NUL and U+FFFD end a run */
    assert_true(fp[23] == fp[22]);                  /* a zero-width space is skipped */
    assert_true(fp[27] == fp[26]);
    assert_true(fp[18] == golden_of(&golden_inputs_v2[18], 1)); /* Thai as in version 1 */
    assert_true(fp[29] == golden_of(&golden_inputs_v2[29], 1)); /* no bigrams: as version 1 */
    /* Folding: Traditional as Simplified, Simplified unchanged. */
    assert_true(fp[32] == fp[0] && fp[33] == fp[0] && fp[34] != fp[0]);
    assert_true(fp[36] == fp[37]);
    {
        nd_fp_options o = ND_FP_OPTIONS_INIT;
        uint64_t x;
        char buf[256];
        o.flags = ND_FP_FOLD_CHINESE;
        assert_int_equal(nd_fp_config_string(buf, sizeof buf, &o), ND_OK);
        assert_string_equal(buf, "fp2;shingles:3;nfkc-cf+t2s;cjk2;stop:0000000000000000;title:1");
        o.flags = ND_FP_FOLD_CHINESE | ND_FP_FUNCTION(1); /* not in version 1 */
        assert_int_equal(nd_fingerprint(&x, "x", 1, &o), ND_EINVAL);
        /* Stop words are folded too. */
        static const char *const stop[] = {"數據"};
        const char *t = "我们的数据库存储指纹";
        uint64_t with, without;
        o.flags = ND_FP_FOLD_CHINESE;
        o.features = ND_FEATURES_WORDS;
        o.stopwords = stop;
        o.n_stopwords = 1;
        assert_int_equal(nd_fingerprint(&with, t, strlen(t), &o), ND_OK);
        o.stopwords = NULL;
        o.n_stopwords = 0;
        assert_int_equal(nd_fingerprint(&without, t, strlen(t), &o), ND_OK);
        assert_true(with != without);
        static const char *const simp[] = {"数据"};
        uint64_t plain;
        o.flags = 0;
        o.stopwords = simp;
        o.n_stopwords = 1;
        assert_int_equal(nd_fingerprint(&plain, t, strlen(t), &o), ND_OK);
        assert_true(with == plain);
    }
    /* Version 1 broke runs at each of them. */
    for (size_t i = 1; i <= 5; i++)
        assert_true(golden_of(&golden_inputs_v2[i], 1) != golden_of(&golden_inputs_v2[0], 1));
    assert_true(fp[0] == golden_of(&golden_inputs_v2[0], 1)); /* unbroken: unchanged */
}

/* The features of a run across a gap, one by one: a bigram over the two
 * characters alone, a lone character its own token. */
static void run_token_cb(uint64_t h, int32_t w, void *payload)
{
    uint64_t *v = payload;
    assert_int_equal(w, 1);
    if (v[0] < 15) v[++v[0]] = h;
}

static void test_cjk_runs(void **state)
{
    (void)state;
    static const struct {
        const char *text, *tokens[4];
    } cases[] = {
        {"数 据\n库", {"数据", "据库"}},
        {"「数」", {"数"}},
        {"数。\r\n据", {"数据"}},
        {"数\0据", {"数", "据"}},
        {"数 x 据", {"数", "x", "据"}},
        {"数 1 据", {"数", "1", "据"}},
        {"카 나", {"카나"}},
        {"カ・ナ", {"カナ"}},
        {"ก ข", {"ก", "ข"}},
        {"数\xee\x80\x80据", {"数", "据"}}, /* private use ends a run */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint64_t got[16] = {0};
        nd_fp_options o = ND_FP_OPTIONS_INIT;
        o.features = ND_FEATURES_WORDS;
        size_t len = strlen(cases[c].text);
        if (c == 3) len = 7;
        assert_int_equal(nd_features(cases[c].text, len, &o, run_token_cb, got), ND_OK);
        size_t k = 0;
        while (k < 4 && cases[c].tokens[k]) {
            const char *t = cases[c].tokens[k];
            if (k >= got[0] || got[k + 1] != nd_feature_hash(t, strlen(t)))
                fprintf(stderr, "case %zu token %zu '%s'\n", c, k, t);
            assert_true(k < got[0] && got[k + 1] == nd_feature_hash(t, strlen(t)));
            k++;
        }
        assert_int_equal(got[0], k);
    }
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

/* ---- hostile HTML: linear time, sane text, no leak (run under ASan) ---- */

/* Body of html[0..n) through nd_html_extract, which must succeed. */
static nd_html_text html_of(const char *html, size_t n)
{
    nd_html_text t;
    assert_int_equal(nd_html_extract(&t, html, n), ND_OK);
    assert_non_null(t.body);
    assert_non_null(t.title);
    assert_int_equal(t.body[t.body_len], '\0');
    assert_int_equal(t.title[t.title_len], '\0');
    return t;
}

/* A page of prefix, count copies of unit, then suffix. */
static char *repeat(const char *prefix, const char *unit, size_t count, const char *suffix,
                    size_t *n)
{
    size_t p = strlen(prefix), u = strlen(unit), s = strlen(suffix);
    char *b = malloc(p + u * count + s + 1);
    assert_non_null(b);
    memcpy(b, prefix, p);
    for (size_t i = 0; i < count; i++) memcpy(b + p + i * u, unit, u);
    memcpy(b + p + u * count, suffix, s + 1);
    *n = p + u * count + s;
    return b;
}

static void expect_body(const char *html, size_t n, const char *want, const char *never)
{
    nd_html_text t = html_of(html, n);
    if (want) assert_non_null(strstr(t.body, want));
    if (never) assert_null(strstr(t.body, never));
    nd_html_text_dispose(&t);
}

static void test_html_hostile(void **state)
{
    (void)state;
    size_t n;
    /* 1M nested <div>: the text after them is kept (libxml2 stopped at
     * depth 256), each block still separates words. */
    char *b = repeat("<body>", "<div>", 1000000, "deep text", &n);
    expect_body(b, n, "deep text", NULL);
    free(b);
    /* 1M end tags that close nothing, under elements that stop the search. */
    b = repeat("<body><a><div>", "<b>", 300, "", &n);
    char *c = repeat(b, "</a>", 1000000, "after", &n);
    expect_body(c, n, "after", NULL);
    free(b);
    free(c);
    /* A 10 MB attribute, quoted (with '>' inside) and bare. */
    b = repeat("<p title=\"", "x>", 5000000, "\">shown</p>", &n);
    expect_body(b, n, "shown", "x>");
    free(b);
    b = repeat("<p title=", "y", 10000000, ">bare</p>", &n);
    expect_body(b, n, "bare", "yyy");
    free(b);
    /* 64 MiB of '<': no element ever opens, so no text. */
    n = ND_MAX_DOC_BYTES;
    b = malloc(n);
    assert_non_null(b);
    memset(b, '<', n);
    nd_html_text t = html_of(b, n);
    assert_int_equal(t.title_len, 0);
    nd_html_text_dispose(&t);
    free(b);
    /* Unterminated comment, script, style: the rest is hidden. */
#define LIT(s) s, sizeof(s) - 1
    expect_body(LIT("<p>seen<!-- never closed <p>hidden"), "seen", "hidden");
    expect_body(LIT("<p>seen<script>never closed </p><p>hidden"), "seen", "hidden");
    expect_body(LIT("<p>seen<style>p { never closed </p><p>hidden"), "seen", "hidden");
    expect_body(LIT("<p>seen<script>a</scriptx>b</SCRIPT >after"), "after", "scriptx");
    /* NUL bytes are spaces; invalid UTF-8 passes through (fp_text.c makes
     * it U+FFFD). */
    t = html_of(LIT("<p>a\0b</p>\0<p>c\xff\xfe" "d</p>"));
    assert_non_null(strstr(t.body, "a b"));
    assert_non_null(strstr(t.body, "c\xff\xfe" "d"));
    nd_html_text_dispose(&t);
    /* DOCTYPE, CDATA (text to libxml2's HTML parser, so to us), plaintext
     * (an ordinary element), upper-case tags, bare attribute values. */
    expect_body(LIT("<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><p>x</p>"), "x", "DOCTYPE");
    expect_body(LIT("<!DOCTYPE"), NULL, "DOCTYPE");
    expect_body(LIT("<p>x<![CDATA[y]]>z</p>"), "x<![CDATA[y]]>z", NULL);
    expect_body(LIT("<plaintext><b>bold</b> text"), "bold text", "<b>");
    expect_body(LIT("<HTML><BODY><DIV CLASS=a>Upper<SCRIPT>no</SCRIPT></DIV></BODY></HTML>"),
                "Upper", "no");
    expect_body(LIT("<p class=a id=b data-x=c>bare attributes</p>"), "bare attributes", "class");
    t = html_of(LIT("<HEAD><TITLE>T &amp; U</TITLE></HEAD><P>&lt;b&gt; &#x41;&#66; &nbsp;&bogus; &amp"));
    assert_string_equal(t.title, "T & U");
    assert_non_null(strstr(t.body, "<b> AB \xc2\xa0&bogus; &amp"));
    nd_html_text_dispose(&t);
#undef LIT
}

/* ---- quality on real text --------------------------------------------- */

/* Real texts come from the machine (Debian's licence and copyright files)
 * and, always as well, from tests/data/texts (licences whose verbatim
 * copying is permitted), so no quality test depends on the machine and
 * none is skipped. */
#ifndef ND_TESTS_DIR
#define ND_TESTS_DIR "tests"
#endif
#define SHIPPED(name) ND_TESTS_DIR "/data/texts/" name

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

typedef struct text {
    char *p;
    size_t n;
} text;

typedef struct texts {
    text *v;
    size_t n, cap;
} texts;

/* Append the files matching pattern whose size is in [lo, hi], taking
 * every stride-th match in sorted order, up to max texts in all. */
static void texts_glob(texts *t, const char *pattern, size_t lo, size_t hi, size_t stride,
                       size_t max)
{
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) return;
    for (size_t i = 0; i < g.gl_pathc && t->n < max; i += stride) {
        size_t n;
        char *p = slurp(g.gl_pathv[i], &n);
        if (!p || n < lo || n > hi) {
            free(p);
            continue;
        }
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 64;
            t->v = realloc(t->v, t->cap * sizeof *t->v);
            assert_non_null(t->v);
        }
        t->v[t->n++] = (text){p, n};
    }
    globfree(&g);
}

static void texts_free(texts *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->v[i].p);
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* The three edits of a web page that must not make it a new document. The
 * page is the text with a date line on top and a footer below; the copies
 * change the date, add an advertisement sentence at the paragraph break
 * nearest the middle, or change the footer (new version, year, timing and
 * an extra link). d[e] is the distance of copy e from the page. */
static void edit_distances(const char *t, size_t n, unsigned d[3])
{
    static const char *const date1 = "Last updated: 2026-03-14 09:12 UTC\n\n";
    static const char *const date2 = "Last updated: 2026-11-22 17:45 UTC\n\n";
    static const char *const ad =
        "Buy cheap widgets now at our online store: the best deals of the year! ";
    static const char *const foot1 =
        "\n\nPage generated by ExampleCMS 4.2 in 0.31 s. "
        "Copyright 2026 Example Corp. All rights reserved.\n";
    static const char *const foot2 =
        "\n\nPage generated by ExampleCMS 4.3 in 0.07 s. "
        "Copyright 2027 Example Corp. All rights reserved. Privacy policy.\n";
    size_t mid = n / 2;
    const char *para = strstr(t + mid, "\n\n");
    if (para) {
        mid = (size_t)(para - t) + 2;
    } else {
        while (mid < n && t[mid] != '\n') mid++;
        if (mid < n) mid++;
    }
    char *e = malloc(n + 512);
    assert_non_null(e);
    size_t m = (size_t)sprintf(e, "%s", date1);
    memcpy(e + m, t, n);
    m += (size_t)sprintf(e + m + n, "%s", foot1) + n;
    uint64_t page = fp_of(e, m, NULL);

    m = (size_t)sprintf(e, "%s", date2);
    memcpy(e + m, t, n);
    m += (size_t)sprintf(e + m + n, "%s", foot1) + n;
    d[0] = nd_hamming(page, fp_of(e, m, NULL));

    m = (size_t)sprintf(e, "%s", date1);
    memcpy(e + m, t, mid);
    m += mid;
    memcpy(e + m, ad, strlen(ad));
    m += strlen(ad);
    memcpy(e + m, t + mid, n - mid);
    m += (size_t)sprintf(e + m + n - mid, "%s", foot1) + n - mid;
    d[1] = nd_hamming(page, fp_of(e, m, NULL));

    m = (size_t)sprintf(e, "%s", date1);
    memcpy(e + m, t, n);
    m += (size_t)sprintf(e + m + n, "%s", foot2) + n;
    d[2] = nd_hamming(page, fp_of(e, m, NULL));
    free(e);
}

/* Two fixed real texts: a page (the Apache licence 2.0, 11 KB, ~1,600
 * words: the visible text of a long article page) and a long document
 * (GPL 3, 35 KB). Each edited copy stays within 3 bits. Fingerprints are
 * frozen, so these are exact regression checks. */
static void test_quality_edits_fixed(void **state)
{
    (void)state;
    static const char *const files[] = {SHIPPED("Apache-2.0"), SHIPPED("GPL-3"),
                                        "/usr/share/common-licenses/GPL-3"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t n;
        char *t = slurp(files[f], &n);
        if (!t && f == 2) continue; /* the machine's copy is optional */
        assert_non_null(t);
        unsigned d[3];
        edit_distances(t, n, d);
        fprintf(stderr, "%s (%zu bytes): date %u, ad %u, footer %u bits\n", files[f], n, d[0],
                d[1], d[2]);
        for (int e = 0; e < 3; e++) assert_true(d[e] <= 3);
        free(t);
    }
}

/* Page-sized real texts (5,000-10,000 bytes, ~800-1,600 words): the
 * copyright files of the installed packages, or the shipped texts of that
 * size when the machine has fewer than 20. Measured with the default
 * features (shingles:3) on Debian 12 (132 pages): the date, ad and footer
 * edits keep 97%, 98% and 94% of the copies within 3 bits, mean 1.3, 1.7
 * and 1.7 bits; the 7 shipped pages 100%, 86%, 86%. Shorter pages drift
 * further (see docs/fingerprints.md). The bounds guard those figures
 * against regressions on any machine. */
static void test_quality_edits_pages(void **state)
{
    (void)state;
    texts t = {0};
    texts_glob(&t, "/usr/share/doc/*/copyright", 5000, 10000, 1, 200);
    const char *from = "/usr/share/doc/*/copyright";
    if (t.n < 20) {
        texts_free(&t);
        texts_glob(&t, SHIPPED("*"), 5000, 20000, 1, 200);
        from = SHIPPED("*");
    }
    assert_true(t.n >= 4);
    unsigned within[3] = {0}, sum[3] = {0};
    for (size_t i = 0; i < t.n; i++) {
        unsigned d[3];
        edit_distances(t.v[i].p, t.v[i].n, d);
        for (int e = 0; e < 3; e++) {
            within[e] += d[e] <= 3;
            sum[e] += d[e];
        }
    }
    static const char *const names[] = {"date", "ad", "footer"};
    for (int e = 0; e < 3; e++) {
        double frac = (double)within[e] / (double)t.n, mean = (double)sum[e] / (double)t.n;
        fprintf(stderr, "%zu pages of %s, %s edit: %.0f%% within 3 bits, mean %.2f\n", t.n,
                from, names[e], 100 * frac, mean);
        assert_true(frac >= 0.8);
        assert_true(mean <= 2.2);
    }
    texts_free(&t);
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

/* Pairs of texts sharing less than 10% of their word 3-shingles are
 * unrelated: their fingerprints should differ like independent random
 * words (32 bits on average) and never be within k=3. Real text shares
 * boilerplate (licence phrases), which pulls the mean a little below 32:
 * 29-31 on Debian 12. */
static void check_unrelated(const texts *t, const char *what)
{
    uint64_t *fps = calloc(t->n, sizeof *fps);
    hset *sets = calloc(t->n, sizeof *sets);
    nd_fp_options o = ND_FP_OPTIONS_INIT;
    o.features = ND_FEATURES_SHINGLES;
    for (size_t i = 0; i < t->n; i++) {
        fps[i] = fp_of(t->v[i].p, t->v[i].n, NULL);
        assert_int_equal(nd_features(t->v[i].p, t->v[i].n, &o, hset_cb, &sets[i]), ND_OK);
        qsort(sets[i].v, sets[i].n, sizeof *sets[i].v, cmp_u64);
        /* A set, not a bag: drop repeated shingles. */
        size_t u = 0;
        for (size_t j = 0; j < sets[i].n; j++)
            if (u == 0 || sets[i].v[j] != sets[i].v[u - 1]) sets[i].v[u++] = sets[i].v[j];
        sets[i].n = u;
    }
    double sum = 0;
    size_t pairs = 0;
    unsigned lo = 64;
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = i + 1; j < t->n; j++) {
            if (!sets[i].n || !sets[j].n || jaccard(&sets[i], &sets[j]) >= 0.1) continue;
            unsigned d = nd_hamming(fps[i], fps[j]);
            sum += d;
            if (d < lo) lo = d;
            pairs++;
        }
    double mean = pairs ? sum / (double)pairs : 0;
    fprintf(stderr, "%s: %zu texts, %zu unrelated pairs, mean distance %.1f, closest %u\n", what,
            t->n, pairs, mean, lo);
    assert_true(pairs >= 50);
    assert_true(mean >= 28.0 && mean <= 36.0);
    assert_true(lo > 3);
    for (size_t i = 0; i < t->n; i++) free(sets[i].v);
    free(sets);
    free(fps);
}

static void test_quality_unrelated(void **state)
{
    (void)state;
    texts t = {0};
    texts_glob(&t, SHIPPED("*"), 1, SIZE_MAX, 1, SIZE_MAX);
    assert_true(t.n >= 12);
    check_unrelated(&t, "shipped licences");
    texts_free(&t);
    /* The machine's licences and a sample of its packages' copyright
     * files; the shipped texts stand in if there are too few. */
    texts_glob(&t, "/usr/share/common-licenses/*", 1000, 65536, 1, 120);
    texts_glob(&t, "/usr/share/doc/*/copyright", 1000, 65536, 6, 120);
    if (t.n < 12) {
        fprintf(stderr, "only %zu texts on this machine: using the shipped ones\n", t.n);
        texts_free(&t);
        texts_glob(&t, SHIPPED("*"), 1, SIZE_MAX, 1, SIZE_MAX);
    }
    check_unrelated(&t, "machine texts");
    texts_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_golden_v2),
        cmocka_unit_test(test_cjk_runs),
        cmocka_unit_test(test_simhash_reference),
        cmocka_unit_test(test_normalisation_paths),
        cmocka_unit_test(test_features_match_fingerprint),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_html_hostile),
        cmocka_unit_test(test_quality_edits_fixed),
        cmocka_unit_test(test_quality_edits_pages),
        cmocka_unit_test(test_quality_unrelated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
