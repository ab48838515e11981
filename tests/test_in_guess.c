/*
 * test_in_guess.c — format inference (input/in_guess.c, in_format_guess)
 * as a table of name x first bytes -> format, then through in_reader_open
 * with in_reader_opts.infer on real files: the format chosen, the
 * records read, and the hints of a first bad record (in_reader.c), with
 * and without a --format given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <neardup.h>

#include "in_reader.h"

#define NONE (-1)

typedef struct row {
    const char *name;    /* NULL: none */
    const char *content; /* NULL: none */
    size_t len;          /* 0: strlen(content) */
    int how;             /* IN_GUESS_* */
    int fmt;             /* in_format, or NONE */
} row;

static const char *how_name(int how)
{
    return how == IN_GUESS_CONTENT ? "content" : how == IN_GUESS_NAME ? "name" : "none";
}

static void test_table(void **state)
{
    (void)state;
    static char long_key[ND_MAX_KEY_LEN + 16], max_key[ND_MAX_KEY_LEN + 16];
    memset(long_key, 'k', ND_MAX_KEY_LEN + 1);
    strcpy(long_key + ND_MAX_KEY_LEN + 1, "\ttext\n");
    memset(max_key, 'k', ND_MAX_KEY_LEN);
    strcpy(max_key + ND_MAX_KEY_LEN, "\ttext\n");
    const row rows[] = {
        /* content: JSONL */
        {NULL, "{\"id\":\"a\",\"text\":\"x\"}\n", 0, IN_GUESS_CONTENT, IN_FORMAT_JSONL},
        {NULL, "\n\r\n  \t{\"id\":1", 0, IN_GUESS_CONTENT, IN_FORMAT_JSONL},
        {NULL, "{", 0, IN_GUESS_CONTENT, IN_FORMAT_JSONL},
        {NULL, "[{\"id\":1}]\n", 0, IN_GUESS_NONE, NONE}, /* a JSON array is not JSONL */
        /* WARC */
        {NULL, "WARC/1.0\r\nWARC-Type: response\r\n", 0, IN_GUESS_CONTENT, IN_FORMAT_WARC},
        {NULL, "\r\nWARC/1.1\n", 0, IN_GUESS_CONTENT, IN_FORMAT_WARC},
        {NULL, "WARC/2.0\n", 0, IN_GUESS_NONE, NONE},
        {NULL, " WARC/1.0\n", 0, IN_GUESS_NONE, NONE},
        /* fingerprint lines */
        {NULL, "0123456789abcdef\tkey\n", 0, IN_GUESS_CONTENT, IN_FORMAT_FP},
        {NULL, "0123456789ABCDEF\n", 0, IN_GUESS_CONTENT, IN_FORMAT_FP},
        {NULL, "0123456789abcdef\r\n", 0, IN_GUESS_CONTENT, IN_FORMAT_FP},
        {NULL, "0123456789abcdef", 0, IN_GUESS_CONTENT, IN_FORMAT_FP},
        {NULL, "\n\n0123456789abcdef\tk\n", 0, IN_GUESS_CONTENT, IN_FORMAT_FP},
        {NULL, "0123456789abcdefa\n", 0, IN_GUESS_NONE, NONE},   /* 17 digits */
        {NULL, "0123456789abcdef key\n", 0, IN_GUESS_NONE, NONE}, /* a space */
        {NULL, "0123456789abcde\tk\n", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV}, /* 15 */
        {NULL, "0123456789abcdeg\tk\n", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
        /* dump lines (complete ones), before fp: a dump key may be hex */
        {NULL, "key\t0123456789abcdef\t0\t1767225600\n", 0, IN_GUESS_CONTENT, IN_FORMAT_DUMP},
        {NULL, "k\t0123456789abcdef\t-2.5e-07\t-3\n", 0, IN_GUESS_CONTENT, IN_FORMAT_DUMP},
        {NULL, "k\t0123456789abcdef\tnan\t0\r\n", 0, IN_GUESS_CONTENT, IN_FORMAT_DUMP},
        {NULL, "0123456789abcdef\t0123456789abcdef\t0\t17\n", 0, IN_GUESS_CONTENT, IN_FORMAT_DUMP},
        {NULL, "key\t0123456789abcdef\t0\t1767225600", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
        {NULL, "key\t0123456789abcdef\t0\t17\tmore\n", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
        {NULL, "key\t0123456789abcdef\tx\t17\n", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
        {NULL, "key\t0123456789abcdef\t0\t1.5\n", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
        /* TSV */
        {NULL, "page-1\tsome text\n", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
        {NULL, "a key with spaces\ttext\twith tabs", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
        {NULL, max_key, 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
        {NULL, long_key, 0, IN_GUESS_NONE, NONE},
        {NULL, "\ttext after a tab\n", 0, IN_GUESS_NONE, NONE},       /* no key */
        {NULL, "\t\t\tThe \"Artistic License\"\n", 0, IN_GUESS_NONE, NONE}, /* a licence */
        {NULL, "  indented\ttext\n", 0, IN_GUESS_NONE, NONE},
        {NULL, "k\0ey\ttext\n", 10, IN_GUESS_NONE, NONE}, /* NUL in the key */
        {NULL, "first line\nsecond\tline\n", 0, IN_GUESS_NONE, NONE}, /* the first line decides */
        /* nothing to go by */
        {NULL, "", 0, IN_GUESS_NONE, NONE},
        {NULL, "\n \r\n\t\n", 0, IN_GUESS_NONE, NONE},
        {NULL, "Plain text, as a licence starts.\n", 0, IN_GUESS_NONE, NONE},
        {NULL, "\x89PNG\r\n\x1a\n\0\0", 10, IN_GUESS_NONE, NONE},
        {NULL, NULL, 0, IN_GUESS_NONE, NONE},
        /* names */
        {"corpus.jsonl", NULL, 0, IN_GUESS_NAME, IN_FORMAT_JSONL},
        {"CORPUS.JSONL", NULL, 0, IN_GUESS_NAME, IN_FORMAT_JSONL},
        {"dir.d/x.ndjson", NULL, 0, IN_GUESS_NAME, IN_FORMAT_JSONL},
        {"x.json", NULL, 0, IN_GUESS_NAME, IN_FORMAT_JSONL},
        {"x.jsonl.gz", NULL, 0, IN_GUESS_NAME, IN_FORMAT_JSONL},
        {"x.jsonl.zst", NULL, 0, IN_GUESS_NAME, IN_FORMAT_JSONL},
        {"pages.tsv", NULL, 0, IN_GUESS_NAME, IN_FORMAT_TSV},
        {"pages.TSV.GZ", NULL, 0, IN_GUESS_NAME, IN_FORMAT_TSV},
        {"crawl.warc", NULL, 0, IN_GUESS_NAME, IN_FORMAT_WARC},
        {"crawl.warc.gz", NULL, 0, IN_GUESS_NAME, IN_FORMAT_WARC},
        {"crawl.warc.zst", NULL, 0, IN_GUESS_NAME, IN_FORMAT_WARC},
        {"x.txt", NULL, 0, IN_GUESS_NONE, NONE},
        {"x.gz", NULL, 0, IN_GUESS_NONE, NONE},
        {"x.jsonl.gz.zst", NULL, 0, IN_GUESS_NONE, NONE}, /* one layer only */
        {"x.jsonl.bak", NULL, 0, IN_GUESS_NONE, NONE},
        {".jsonl", NULL, 0, IN_GUESS_NONE, NONE},
        {"jsonl", NULL, 0, IN_GUESS_NONE, NONE},
        {"a.jsonl/notes", NULL, 0, IN_GUESS_NONE, NONE}, /* the last component */
        /* both: the content first, the name when it says nothing */
        {"fps.tsv", "0123456789abcdef\tdoc\n", 0, IN_GUESS_CONTENT, IN_FORMAT_FP},
        {"x.tsv", "{\"id\":1}\n", 0, IN_GUESS_CONTENT, IN_FORMAT_JSONL},
        {"x.jsonl", "plain text\n", 0, IN_GUESS_NAME, IN_FORMAT_JSONL},
        {"x.warc.gz", "", 0, IN_GUESS_NAME, IN_FORMAT_WARC},
        {"x.txt", "k\tv\n", 0, IN_GUESS_CONTENT, IN_FORMAT_TSV},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *t = &rows[i];
        size_t n = t->content ? (t->len ? t->len : strlen(t->content)) : 0;
        in_format f = (in_format)99;
        int how = in_format_guess(t->name, t->content, n, &f);
        int got = how == IN_GUESS_NONE ? NONE : (int)f;
        if (how != t->how || got != t->fmt)
            fail_msg("row %zu (name %s, content [%.30s]): %s %d, want %s %d", i,
                     t->name ? t->name : "-", t->content ? t->content : "-", how_name(how), got,
                     how_name(t->how), t->fmt);
        if (how == IN_GUESS_NONE) assert_int_equal(f, 99); /* untouched */
    }
}

/* ---- through in_reader_open ---------------------------------------------- */

static char dir[64];

static const char *put(const char *name, const char *content)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
    return path;
}

/* Open path as fmt with o; the format it reads, or -1 (the open failed:
 * its message in err). */
static int open_as(in_reader **r, in_format fmt, const char *path, const in_reader_opts *o,
                   char *err, size_t cap)
{
    if (in_reader_open(r, fmt, path, o) < 0) {
        snprintf(err, cap, "%s", in_reader_error(NULL));
        return -1;
    }
    return (int)in_reader_format(*r);
}

/* The message of the first bad record of path read as fmt with o. */
static void first_bad(char *out, size_t cap, in_format fmt, const char *path, const in_reader_opts *o)
{
    in_reader *r;
    in_record rec;
    int got;
    assert_true(open_as(&r, fmt, path, o, out, cap) >= 0);
    while ((got = in_reader_next(r, &rec)) == 1) {}
    assert_int_equal(got, -1);
    snprintf(out, cap, "%s", in_reader_error(r));
    in_reader_close(r);
}

#define ALL_RECORDS (IN_BIT(IN_FORMAT_FP) | IN_BIT(IN_FORMAT_JSONL) | IN_BIT(IN_FORMAT_TSV))

static void expect_has(const char *msg, const char *want)
{
    if (!strstr(msg, want)) fail_msg("message [%s] lacks [%s]", msg, want);
}

static void test_infer_open(void **state)
{
    (void)state;
    char err[1200];
    in_reader *r;
    in_record rec;
    in_reader_opts add = {.infer = 1, .formats = ALL_RECORDS};
    in_reader_opts dedupe = {.infer = 1};

    /* JSONL under any name: read as JSONL, records intact */
    const char *p = put("c.txt", "\n{\"id\":\"a\",\"text\":\"one\"}\n{\"id\":\"b\",\"text\":\"two\"}\n");
    assert_int_equal(open_as(&r, IN_FORMAT_FP, p, &add, err, sizeof err), IN_FORMAT_JSONL);
    assert_int_equal(in_reader_next(r, &rec), 1);
    assert_int_equal(rec.line, 2);
    assert_memory_equal(rec.key, "a", 1);
    assert_int_equal(in_reader_next(r, &rec), 1);
    assert_memory_equal(rec.text, "two", 3);
    assert_int_equal(in_reader_next(r, &rec), 0);
    in_reader_close(r);

    /* a directory: files, where the command reads them; else as before */
    char sub[128];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    put("sub/doc", "a document\n");
    assert_int_equal(open_as(&r, IN_FORMAT_FILES, sub, &dedupe, err, sizeof err), IN_FORMAT_FILES);
    assert_int_equal(in_reader_next(r, &rec), 1);
    assert_int_equal(rec.text_len, 11);
    in_reader_close(r);
    assert_int_equal(open_as(&r, IN_FORMAT_FP, sub, &add, err, sizeof err), -1);
    expect_has(err, "sub: cannot open: Is a directory");

    /* a regular file of no record format: files reads it whole (dedupe) */
    p = put("notes", "Plain text, a TAB only later\nline\ttwo\n");
    assert_int_equal(open_as(&r, IN_FORMAT_FILES, p, &dedupe, err, sizeof err), IN_FORMAT_FILES);
    assert_int_equal(in_reader_next(r, &rec), 1);
    assert_int_equal(rec.text_len, 38);
    assert_int_equal(in_reader_next(r, &rec), 0);
    in_reader_close(r);
    /* ... and for add (fp by default) the first line's error says what it is */
    first_bad(err, sizeof err, IN_FORMAT_FP, p, &add);
    expect_has(err, "notes:1: fingerprint 'Plain text");
    expect_has(err, "; this looks like plain text, not fp, jsonl or tsv records");
    in_reader_opts import = {.infer = 1, .dump = 1};
    first_bad(err, sizeof err, IN_FORMAT_FP, p, &import);
    expect_has(err, "; this looks like plain text: use --format files");

    /* an inferred format failing later: how it was chosen */
    p = put("t.txt", "k1\tone\nno tab here\n");
    assert_int_equal(open_as(&r, IN_FORMAT_FILES, p, &dedupe, err, sizeof err), IN_FORMAT_TSV);
    in_reader_close(r);
    first_bad(err, sizeof err, IN_FORMAT_FILES, p, &dedupe);
    expect_has(err, "t.txt:2: text: missing TAB between key and text; format tsv inferred from "
                    "the first line: give --format to choose");
    p = put("n.jsonl", "not json\n");
    first_bad(err, sizeof err, IN_FORMAT_FILES, p, &dedupe);
    expect_has(err, "n.jsonl:1: invalid JSON");
    expect_has(err, "this looks like plain text: use --format files");

    /* dump output is never read as TSV */
    p = put("d.tsv", "k\t00000000000000ff\t0\t1767225600\n");
    assert_int_equal(open_as(&r, IN_FORMAT_FP, p, &import, err, sizeof err), -1);
    expect_has(err, "d.tsv:1: this looks like `neardup dump` output");
    expect_has(err, "use --format dump");
    assert_int_equal(open_as(&r, IN_FORMAT_FILES, p, &dedupe, err, sizeof err), -1);
    expect_has(err, "which this command does not read");

    /* WARC content for a command that reads no WARC: the default, and a hint */
    p = put("w.txt", "WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n");
    assert_int_equal(open_as(&r, IN_FORMAT_FP, p, &add, err, sizeof err), IN_FORMAT_FP);
    in_reader_close(r);
    first_bad(err, sizeof err, IN_FORMAT_FP, p, &add);
    expect_has(err, "w.txt:1: fingerprint 'WARC/1.0'");
    expect_has(err, "this looks like WARC, which this command does not read");
    assert_int_equal(open_as(&r, IN_FORMAT_FILES, p, &dedupe, err, sizeof err), IN_FORMAT_WARC);
    assert_int_equal(in_reader_next(r, &rec), 0); /* a warcinfo record: no document */
    in_reader_close(r);

    /* an empty file: the default format, no records */
    p = put("empty.jsonl", "");
    assert_int_equal(open_as(&r, IN_FORMAT_FP, p, &add, err, sizeof err), IN_FORMAT_JSONL);
    assert_int_equal(in_reader_next(r, &rec), 0);
    in_reader_close(r);
}

/* A --format given: records and messages as before, but for a first line
 * of another record format. */
static void test_given(void **state)
{
    (void)state;
    char err[1200];
    in_reader_opts all = {0}, query = {.formats = IN_BIT(IN_FORMAT_FP)};
    const char *p = put("j.txt", "{\"id\":\"a\",\"text\":\"x\"}\n");
    first_bad(err, sizeof err, IN_FORMAT_FP, p, &all);
    expect_has(err, "j.txt:1: fingerprint '{\"id\":\"a\",\"text\":\"x\"}': not a hex digit; "
                    "this looks like JSONL: use --format jsonl");
    first_bad(err, sizeof err, IN_FORMAT_FP, p, NULL);
    expect_has(err, "; this looks like JSONL: use --format jsonl");
    first_bad(err, sizeof err, IN_FORMAT_FP, p, &query);
    expect_has(err, "; this looks like JSONL, which this command does not read");
    first_bad(err, sizeof err, IN_FORMAT_TSV, p, &all);
    expect_has(err, "j.txt:1: text: missing TAB between key and text; this looks like JSONL");
    /* a bad line of the right format: the message as it was, exactly */
    p = put("b.jsonl", "{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"b\"}\n");
    first_bad(err, sizeof err, IN_FORMAT_JSONL, p, &all);
    char want[300];
    snprintf(want, sizeof want, "%s:2: field \"text\": missing (or give \"fp\")", p);
    assert_string_equal(err, want);
    /* the first line bad, but of the format given: no hint either */
    p = put("b1.jsonl", "{\"id\":\"b\"}\n");
    first_bad(err, sizeof err, IN_FORMAT_JSONL, p, &all);
    snprintf(want, sizeof want, "%s:1: field \"text\": missing (or give \"fp\")", p);
    assert_string_equal(err, want);
    p = put("s.fp", "0123456789abcdef doc\n");
    first_bad(err, sizeof err, IN_FORMAT_FP, p, &all);
    snprintf(want, sizeof want, "%s:1: fingerprint '0123456789abcdef doc': expected HEX16<TAB>KEY; "
             "found a space after the fingerprint", p);
    assert_string_equal(err, want);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_in_guess.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_infer_open),
        cmocka_unit_test(test_given),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
