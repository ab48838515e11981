/*
 * test_in_jsonl.c — the JSONL reader's two parsers (input/in_jsonl.c): the
 * fast one (simdjson, in_json_fast.cpp) must accept only what jansson
 * accepts, and give the same record; everything it declines gets
 * jansson's verdict and message. Each case states the outcome, and every
 * case is run through both parsers and compared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "in_json_fast.h"
#include "in_jsonl.h"
#include "in_reader.h"
#include "in_source.h"

typedef struct outcome {
    int rc;          /* in_reader_next's code */
    int fast;        /* 1: the fast parser took the line */
    char err[1024];  /* with rc -1 */
    in_record rec;   /* with rc 1: key and text copied below */
    char *key, *text;
} outcome;

/* The member names the next readers take (test_fields; in_reader_open
 * sets them from in_reader_opts as here). */
static const char *g_id, *g_text;
static int g_html;

static in_reader *reader_new(void)
{
    in_reader *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->fmt = IN_FORMAT_JSONL; /* in_reader_close frees the parser */
    r->fd = -1;
    r->path = strdup("t.jsonl");
    r->lineno = 1;
    if (g_id) r->id_field = strdup(g_id);
    if (g_text) r->text_field = strdup(g_text);
    r->text_html = g_html;
    const char *names[2] = {g_id, g_text};
    for (int i = 0; i < 2; i++) {
        if (!names[i]) continue;
        if (strcmp(names[i], "fp") == 0) r->taken |= IN_TAKES_FP;
        if (strcmp(names[i], "score") == 0) r->taken |= IN_TAKES_SCORE;
        if (strcmp(names[i], "html") == 0) r->taken |= IN_TAKES_HTML;
    }
    return r;
}

static void set_fields(const char *id, const char *text, int html)
{
    g_id = id;
    g_text = text;
    g_html = html;
}

static char *dup_bytes(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    assert_non_null(d);
    if (n) memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static void outcome_free(outcome *o)
{
    free(o->key);
    free(o->text);
}

/* Parse line[0, len) with both parsers; check they agree; return the
 * verdict a user gets. */
static outcome parse_n(const char *line, size_t len)
{
    char *buf = malloc(len + IN_JSON_PADDING + 1);
    assert_non_null(buf);
    memcpy(buf, line, len);
    memset(buf + len, 'x', IN_JSON_PADDING + 1); /* the padding's bytes do not matter */

    in_reader *fr = reader_new(), *jr = reader_new();
    in_record fast = {0}, slow = {0};
    fr->line = jr->line = buf;
    fr->len = jr->len = len;
    int frc = in_jsonl_fast(fr, &fast);
    int jrc = in_jsonl_jansson(jr, &slow);
    assert_true(frc == 0 || frc == 1);
    if (frc == 1) { /* the fast parser may only take what jansson takes, the same way */
        assert_int_equal(jrc, 1);
        assert_int_equal(fast.key_len, slow.key_len);
        assert_memory_equal(fast.key, slow.key, fast.key_len);
        assert_int_equal(fast.text != NULL, slow.text != NULL);
        assert_int_equal(fast.text_len, slow.text_len);
        if (fast.text_len) assert_memory_equal(fast.text, slow.text, fast.text_len);
        assert_int_equal(fast.has_fp, slow.has_fp);
        assert_true(fast.fp == slow.fp);
        assert_int_equal(fast.has_score, slow.has_score);
        assert_true(fast.score == slow.score);
        assert_int_equal(fast.is_html, slow.is_html);
    }
    outcome o = {.rc = jrc, .fast = frc, .rec = slow};
    snprintf(o.err, sizeof o.err, "%s", jr->err);
    if (jrc == 1) {
        o.key = dup_bytes(slow.key, slow.key_len);
        o.text = slow.text ? dup_bytes(slow.text, slow.text_len) : NULL;
    }
    in_reader_close(fr);
    in_reader_close(jr);
    free(buf);
    return o;
}

static outcome parse(const char *line) { return parse_n(line, strlen(line)); }

/* A good line: the fast parser takes it; key and text as given. */
static void expect_record(const char *line, const char *key, const char *text, size_t text_len)
{
    outcome o = parse(line);
    if (o.rc != 1) fail_msg("%s: %s", line, o.err);
    assert_int_equal(o.fast, 1);
    assert_string_equal(o.key, key);
    assert_int_equal(o.rec.text_len, text_len);
    assert_memory_equal(o.text, text, text_len);
    outcome_free(&o);
}

/* A bad line: rc -1 and a message that contains want. */
static void expect_bad(const char *line, const char *want)
{
    outcome o = parse(line);
    assert_int_equal(o.fast, 0);
    if (o.rc != -1 || !strstr(o.err, want))
        fail_msg("%s: rc %d, message [%s], want [%s]", line, o.rc, o.err, want);
    assert_non_null(strstr(o.err, "t.jsonl:1: "));
    outcome_free(&o);
}

static void test_escapes(void **state)
{
    (void)state;
    expect_record("{\"id\":\"a\",\"text\":\"caf\\u00e9\"}", "a", "caf\xc3\xa9", 5);
    expect_record("{\"id\":\"a\",\"text\":\"\\ud83d\\ude00!\"}", "a", "\xf0\x9f\x98\x80!", 5);
    expect_record("{\"id\":\"a\",\"text\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", "a", "\"\\/\b\f\n\r\t", 8);
    expect_record("{\"id\":\"\\u0041\\u00DF\",\"text\":\"x\"}", "A\xc3\x9f", "x", 1);
    /* U+0000 is a byte of the text (JSON_ALLOW_NUL), not of a key */
    expect_record("{\"id\":\"a\",\"text\":\"x\\u0000y\"}", "a", "x\0y", 3);
    expect_bad("{\"id\":\"a\\u0000b\",\"text\":\"x\"}", "field \"id\": key contains a NUL byte");
    /* escaped member names are the names */
    expect_record("{\"\\u0069d\":\"k\",\"t\\u0065xt\":\"v\"}", "k", "v", 1);
}

static void test_invalid_surrogates(void **state)
{
    (void)state;
    expect_bad("{\"id\":\"a\",\"text\":\"\\ud800\"}", "invalid JSON at column");
    expect_bad("{\"id\":\"a\",\"text\":\"\\udc00\"}", "invalid Unicode");
    expect_bad("{\"id\":\"a\",\"text\":\"\\ud800\\u0041\"}", "invalid Unicode");
    expect_bad("{\"id\":\"a\",\"text\":\"\\ud800x\"}", "invalid JSON");
    expect_bad("{\"id\":\"a\",\"text\":\"\\ud83d\\ud83d\"}", "invalid JSON");
    expect_bad("{\"id\":\"a\",\"text\":\"\\u12\"}", "invalid JSON");
    expect_bad("{\"id\":\"a\",\"text\":\"\\x41\"}", "invalid JSON");
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    expect_bad("{\"id\":\"a\",\"text\":\"\xff\"}", "unable to decode byte 0xff");
    expect_bad("{\"id\":\"a\",\"text\":\"\xc0\x80\"}", "invalid JSON");     /* overlong NUL */
    expect_bad("{\"id\":\"a\",\"text\":\"\xed\xa0\x80\"}", "invalid JSON"); /* a surrogate */
    expect_bad("{\"id\":\"a\",\"text\":\"\xf4\x90\x80\x80\"}", "invalid JSON"); /* > U+10FFFF */
    expect_bad("{\"id\":\"a\",\"text\":\"\xe2\x82\"}", "invalid JSON");     /* cut short */
    expect_bad("{\"id\":\"\xe9t\xe9\",\"text\":\"x\"}", "invalid JSON");    /* Latin-1 key */
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"other\":\"\x80\"}", "invalid JSON"); /* ignored member */
    expect_record("{\"id\":\"a\",\"text\":\"\xe2\x82\xac \xf0\x9f\x98\x80\"}", "a", "\xe2\x82\xac \xf0\x9f\x98\x80", 8);
}

static void test_control_bytes(void **state)
{
    (void)state;
    expect_bad("{\"id\":\"a\",\"text\":\"a\x01\"}", "control character 0x1");
    expect_bad("{\"id\":\"a\",\"text\":\"a\tb\"}", "control character 0x9");
    expect_bad("{\"id\":\"a\",\"text\":\"a\x1f\"}", "control character");
    expect_bad("{\"id\":\"a\x0a\",\"text\":\"x\"}", "invalid JSON");
    /* a raw NUL byte, inside a string and outside */
    outcome o = parse_n("{\"id\":\"a\",\"text\":\"a\0b\"}", 23);
    assert_int_equal(o.rc, -1);
    assert_int_equal(o.fast, 0);
    o = parse_n("{\"id\":\"a\",\"text\":\"ab\"}\0", 23);
    assert_int_equal(o.rc, -1);
    /* DEL and whitespace between tokens are fine */
    expect_record("{\"id\":\"a\",\"text\":\"a\x7f\"}", "a", "a\x7f", 2);
    expect_record(" \t{ \"id\" : \"a\" ,\r\"text\":\"b\" } \t", "a", "b", 1);
}

static void test_members(void **state)
{
    (void)state;
    expect_bad("{\"text\":\"x\"}", "field \"id\": missing");
    /* a member named twice is refused by both parsers, not read as its
     * last value (issue 44), whether it is read or ignored, at any depth */
    expect_bad("{\"id\":\"a\",\"id\":\"b\",\"text\":\"x\"}", "duplicate object key");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"text\":\"y\"}", "duplicate object key");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"o\":1,\"o\":2}", "duplicate object key");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"n\":{\"k\":1,\"k\":2}}", "duplicate object key");
    expect_bad("{\"m0\":0,\"m1\":1,\"m2\":2,\"m3\":3,\"m4\":4,\"m5\":5,\"m6\":6,\"m7\":7,"
               "\"m8\":8,\"m9\":9,\"ma\":0,\"mb\":1,\"mc\":2,\"md\":3,\"me\":4,\"mf\":5,"
               "\"mg\":6,\"m3\":9,\"id\":\"a\",\"text\":\"x\"}", "duplicate object key");
    expect_bad("{\"id\":null,\"text\":\"x\"}", "field \"id\": expected a string or an integer");
    expect_bad("{\"id\":1.5,\"text\":\"x\"}", "field \"id\": expected a string or an integer");
    expect_bad("{\"id\":true,\"text\":\"x\"}", "field \"id\": expected a string or an integer");
    expect_bad("{\"id\":[\"a\"],\"text\":\"x\"}", "field \"id\": expected a string or an integer");
    expect_bad("{\"id\":{},\"text\":\"x\"}", "field \"id\": expected a string or an integer");
    expect_bad("{\"id\":\"\",\"text\":\"x\"}", "field \"id\": empty key");
    expect_record("{\"id\":-42,\"text\":\"x\"}", "-42", "x", 1);
    expect_record("{\"id\":9223372036854775807,\"text\":\"x\"}", "9223372036854775807", "x", 1);
    expect_bad("{\"id\":9223372036854775808,\"text\":\"x\"}", "too big integer");
    expect_bad("{\"id\":\"a\"}", "field \"text\": missing");
    expect_bad("{\"id\":\"a\",\"text\":5}", "field \"text\": expected a string");
    expect_bad("{\"id\":\"a\",\"text\":null}", "field \"text\": expected a string");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"fp\":\"0123456789abcdef\"}", "field \"fp\": give either");
    expect_bad("{\"id\":\"a\",\"fp\":12}", "field \"fp\": expected a string of 16 hex digits");
    expect_bad("{\"id\":\"a\",\"fp\":\"0123\"}", "field \"fp\": too short");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"score\":\"high\"}", "field \"score\": expected a number");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"score\":null}", "field \"score\": expected a number");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"html\":1}", "field \"html\": expected true or false");
    expect_bad("[1,2]", "field \"(line)\": expected a JSON object");
    expect_bad("\"x\"", "'[' or '{' expected");
    expect_bad("{\"id\":\"a\",\"text\":\"x\"} x", "end of file expected");
    expect_bad("{\"id\":\"a\",\"text\":", "invalid JSON");

    outcome o = parse("{\"id\":\"a\",\"fp\":\"00000000000000ff\",\"score\":2.5,\"html\":true}");
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fast, 1);
    assert_true(o.rec.has_fp && o.rec.fp == 0xff && o.rec.has_score && o.rec.score == 2.5 &&
                o.rec.is_html && !o.text);
    outcome_free(&o);
    o = parse("{\"id\":\"a\",\"text\":\"x\",\"score\":-3,\"html\":false,\"other\":[1,{\"z\":null}]}");
    assert_int_equal(o.fast, 1);
    assert_true(o.rec.has_score && o.rec.score == -3 && !o.rec.is_html);
    outcome_free(&o);
    /* a name given twice is refused (it was read as its last value) */
    expect_bad("{\"id\":\"a\",\"id\":\"b\",\"text\":1,\"text\":\"t\"}", "duplicate object key");
    expect_bad("{\"id\":\"a\",\"text\":\"t\",\"text\":1}", "duplicate object key");
}

/* Valid JSON that jansson refuses: refused, whichever parser looks first. */
static void test_jansson_limits(void **state)
{
    (void)state;
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"n\":18446744073709551615}", "too big integer");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"o\":[{\"n\":10000000000000000000}]}", "too big integer");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"k\\u0000\":1}", "NUL byte in object key");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"o\":{\"\\u0000\":1}}", "NUL byte in object key");
    expect_bad("{\"id\":\"a\",\"text\":\"x\",\"n\":1e400}", "invalid JSON");
    expect_record("{\"id\":\"a\",\"text\":\"x\",\"n\":1e-400,\"m\":-0,\"f\":123456789012345678901234567890.5}",
                  "a", "x", 1);
}

static char *nested(int depth)
{
    char *s = malloc((size_t)depth * 2 + 64);
    assert_non_null(s);
    int n = sprintf(s, "{\"id\":\"deep\",\"text\":\"x\",\"d\":");
    for (int i = 0; i < depth; i++) s[n++] = '[';
    for (int i = 0; i < depth; i++) s[n++] = ']';
    s[n++] = '}';
    s[n] = '\0';
    return s;
}

static void test_deep_and_huge(void **state)
{
    (void)state;
    /* deeper than simdjson's 1024 but within jansson's 2048: jansson reads it */
    char *s = nested(1500);
    outcome o = parse(s);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fast, 0);
    assert_string_equal(o.key, "deep");
    outcome_free(&o);
    free(s);
    s = nested(1000);
    o = parse(s);
    assert_int_equal(o.fast, 1);
    outcome_free(&o);
    free(s);
    s = nested(3000);
    expect_bad(s, "maximum parsing depth reached");
    free(s);

    /* a line over the fast parser's limit: jansson reads it, same text */
    size_t n = IN_JSON_FAST_MAX + 100;
    char *line = malloc(n + 64);
    assert_non_null(line);
    size_t k = (size_t)sprintf(line, "{\"id\":\"big\",\"text\":\"");
    while (k < n) {
        memcpy(line + k, "ab\\n\\u00e9 ", 11);
        k += 11;
    }
    k += (size_t)sprintf(line + k, "\"}");
    o = parse_n(line, k);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fast, 0);
    assert_memory_equal(o.text, "ab\n\xc3\xa9 ab\n", 9);
    outcome_free(&o);
    /* and a long line within it: the fast parser */
    o = parse_n(line, 4 << 20);
    assert_int_equal(o.rc, -1); /* cut inside the string */
    size_t cut = 20 + 11 * (((4u << 20) - 20) / 11); /* where a pattern starts */
    memcpy(line + cut, "\"}", 2);
    o = parse_n(line, cut + 2);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fast, 1);
    outcome_free(&o);
    free(line);
}

/* --id-field, --text-field, --html-field: other member names, the same
 * verdict from both parsers, messages naming the chosen member. */
static void test_fields(void **state)
{
    (void)state;
    set_fields("url", "content", 0);
    expect_record("{\"url\":\"http://a/\",\"content\":\"body\",\"id\":7,\"text\":[]}",
                  "http://a/", "body", 4);
    expect_bad("{\"url\":\"u\"}", "t.jsonl:1: field \"content\": missing");
    outcome o = parse("{\"url\":\"u\"}");
    assert_null(strstr(o.err, "(or give")); /* a chosen text member: just missing */
    outcome_free(&o);
    expect_bad("{\"url\":\"u\",\"content\":5}", "field \"content\": expected a string");
    expect_bad("{\"id\":\"u\",\"content\":\"x\"}", "field \"url\": missing");
    expect_bad("{\"url\":null,\"content\":\"x\"}", "field \"url\": expected a string or an integer");
    expect_bad("{\"url\":\"u\",\"content\":\"x\",\"fp\":\"00000000000000ff\"}",
               "field \"fp\": give either \"content\" or \"fp\", not both");
    /* fp and score still read beside chosen names */
    o = parse("{\"url\":\"u\",\"fp\":\"00000000000000ff\",\"score\":3}");
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fast, 1);
    assert_true(o.rec.has_fp && o.rec.fp == 0xff && o.rec.has_score && o.rec.score == 3);
    outcome_free(&o);

    /* --html-field html: the member "html" is the page, no longer a flag */
    set_fields(NULL, "html", 1);
    o = parse("{\"id\":\"p\",\"html\":\"<p>hi</p>\"}");
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fast, 1);
    assert_true(o.rec.is_html);
    assert_string_equal(o.text, "<p>hi</p>");
    outcome_free(&o);
    expect_bad("{\"id\":\"p\",\"html\":true}", "field \"html\": expected a string");
    expect_bad("{\"id\":\"p\",\"text\":\"x\"}", "field \"html\": missing");
    /* --text-field html: the same text, not HTML */
    set_fields(NULL, "html", 0);
    o = parse("{\"id\":\"p\",\"html\":\"<p>hi</p>\"}");
    assert_int_equal(o.rc, 1);
    assert_false(o.rec.is_html);
    outcome_free(&o);
    /* --html-field raw_content beside a flag "html": false: HTML all the same */
    set_fields(NULL, "raw_content", 1);
    o = parse("{\"id\":\"p\",\"raw_content\":\"<b>x</b>\",\"html\":false}");
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fast, 1);
    assert_true(o.rec.is_html);
    outcome_free(&o);
    /* a chosen name "fp" or "score" takes the member over */
    set_fields("score", "fp", 0);
    o = parse("{\"score\":\"k\",\"fp\":\"plain text\"}");
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.fast, 1);
    assert_false(o.rec.has_fp || o.rec.has_score);
    assert_string_equal(o.key, "k");
    assert_string_equal(o.text, "plain text");
    outcome_free(&o);
    /* --text-field text: the default's messages */
    set_fields(NULL, "text", 0);
    expect_bad("{\"id\":\"a\"}", "field \"text\": missing (or give \"fp\")");
    set_fields(NULL, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),        cmocka_unit_test(test_invalid_surrogates),
        cmocka_unit_test(test_invalid_utf8),   cmocka_unit_test(test_control_bytes),
        cmocka_unit_test(test_members),        cmocka_unit_test(test_jansson_limits),
        cmocka_unit_test(test_deep_and_huge),  cmocka_unit_test(test_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
