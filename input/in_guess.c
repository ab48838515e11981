/*
 * in_guess.c — the format an input looks like (in_format_guess,
 * in_guess.h): a pure function of a name and the input's first bytes,
 * which the dispatcher (in_reader.c) calls to infer a format where none
 * is given and to say, when a first record fails, what the input looks
 * like instead. docs/cli.md states the same rule as a table.
 *
 * The content goes first: it is what the readers will see, and a name
 * can lie (`neardup fingerprint ... > fps.tsv` writes fingerprint lines
 * into a .tsv). The name decides only when the content says nothing: an
 * empty input, plain text, or a first line none of the formats has (a
 * .jsonl of plain text is then read as JSONL and fails loudly on its
 * first line, rather than passing as one document). The tests are
 * ordered from the most to the least specific: a dump line (whose key may
 * be 16 hex digits) is also a fingerprint line, and both are TSV lines.
 * A dump line is recognised only complete (its newline in first).
 *
 * Part of input/; calls nothing but libc.
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include <neardup.h>

#include "in_guess.h"

static int is_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Exactly 16 hex digits at p[0, n). */
static int hex16(const unsigned char *p, size_t n)
{
    if (n != 16) return 0;
    for (size_t i = 0; i < 16; i++)
        if (!is_hex(p[i])) return 0;
    return 1;
}

/* A number as dump writes a score (%.17g: digits, sign, point, exponent,
 * inf, nan) at p[0, n). */
static int score_like(const unsigned char *p, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789+-.eEinfaINFA", p[i])) return 0;
    return 1;
}

/* An integer (a time, maybe negative) at p[0, n). */
static int int_like(const unsigned char *p, size_t n)
{
    size_t i = n && p[0] == '-';
    if (i == n) return 0;
    for (; i < n; i++)
        if (p[i] < '0' || p[i] > '9') return 0;
    return 1;
}

/* KEY<TAB>HEX16<TAB>SCORE<TAB>TIME: one of dump's lines. */
static int dump_line(const unsigned char *p, size_t n)
{
    const unsigned char *f[4];
    size_t len[4], k = 0, start = 0;
    for (size_t i = 0; i <= n && k < 4; i++)
        if (i == n || p[i] == '\t') {
            f[k] = p + start;
            len[k++] = i - start;
            start = i + 1;
        }
    if (k != 4 || start != n + 1) return 0; /* not exactly four fields */
    return len[0] > 0 && hex16(f[1], len[1]) && score_like(f[2], len[2]) && int_like(f[3], len[3]);
}

static int by_content(const unsigned char *p, size_t n, in_format *fmt)
{
    size_t s = 0;
    while (s < n && is_blank(p[s])) s++;
    if (s == n) return 0;
    if (p[s] == '{') {
        *fmt = IN_FORMAT_JSONL;
        return 1;
    }
    size_t line = s; /* the start of the line s is on */
    while (line > 0 && p[line - 1] != '\n') line--;
    if (line != s) return 0; /* a line starting blank is none of the others */
    const unsigned char *nl = memchr(p + s, '\n', n - s);
    size_t len = (nl ? (size_t)(nl - p) : n) - s;
    const unsigned char *l = p + s;
    if (len && l[len - 1] == '\r') len--;
    if (len >= 7 && memcmp(l, "WARC/1.", 7) == 0) {
        *fmt = IN_FORMAT_WARC;
        return 1;
    }
    if (nl && dump_line(l, len)) { /* a complete line only: its four fields */
        *fmt = IN_FORMAT_DUMP;
        return 1;
    }
    if (len >= 16 && hex16(l, 16) && (len == 16 || l[16] == '\t')) {
        *fmt = IN_FORMAT_FP;
        return 1;
    }
    const unsigned char *tab = memchr(l, '\t', len);
    if (tab && tab > l && (size_t)(tab - l) <= ND_MAX_KEY_LEN && !memchr(l, '\0', (size_t)(tab - l))) {
        *fmt = IN_FORMAT_TSV;
        return 1;
    }
    return 0;
}

static int by_name(const char *name, in_format *fmt)
{
    static const struct {
        const char *ext;
        in_format fmt;
    } exts[] = {{".jsonl", IN_FORMAT_JSONL}, {".ndjson", IN_FORMAT_JSONL},
                {".json", IN_FORMAT_JSONL},  {".tsv", IN_FORMAT_TSV},
                {".warc", IN_FORMAT_WARC}};
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strlen(base);
    if (n > 3 && strcasecmp(base + n - 3, ".gz") == 0) n -= 3;
    else if (n > 4 && strcasecmp(base + n - 4, ".zst") == 0) n -= 4;
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i].ext);
        if (n > e && strncasecmp(base + n - e, exts[i].ext, e) == 0) {
            *fmt = exts[i].fmt;
            return 1;
        }
    }
    return 0;
}

int in_format_guess(const char *name, const void *first, size_t n, in_format *fmt)
{
    if (first && by_content(first, n, fmt)) return IN_GUESS_CONTENT;
    if (name && by_name(name, fmt)) return IN_GUESS_NAME;
    return IN_GUESS_NONE;
}
