/*
 * in_reader.c — opening inputs, reading lines and bytes within the limits,
 * and dispatching to the format readers.
 *
 * Line formats and WARC read through zlib's gzread, which passes plain
 * files through unchanged and decompresses gzip (several members too), so
 * .gz inputs need no flag. A truncated gzip stream is a fatal error that
 * names the file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <neardup.h>

#include "in_internal.h"

static _Thread_local char open_err[1024];

int in_format_parse(const char *s, in_format *out)
{
    static const char *const names[] = {"fp", "jsonl", "tsv", "files", "warc"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (in_format)i;
            return 0;
        }
    return -1;
}

int in_fail(in_reader *r, int code, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(r->err, sizeof r->err, "%s:%llu: ", r->path, (unsigned long long)r->lineno);
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

const char *in_key_problem(const char *key, size_t len)
{
    if (len == 0) return "empty key";
    if (len > ND_MAX_KEY_LEN) return "key longer than 4096 bytes";
    if (memchr(key, '\0', len)) return "key contains a NUL byte";
    return NULL;
}

int in_copy(char **dst, size_t *cap, const char *src, size_t n)
{
    if (n + 1 > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < n + 1) c *= 2;
        char *p = realloc(*dst, c);
        if (!p) return -2;
        *dst = p;
        *cap = c;
    }
    memcpy(*dst, src, n);
    (*dst)[n] = '\0';
    return 0;
}

static int grow(in_reader *r, size_t need)
{
    if (need <= r->cap) return 0;
    size_t c = r->cap ? r->cap : 65536;
    while (c < need) c *= 2;
    char *p = realloc(r->line, c);
    if (!p) return -1;
    r->line = p;
    r->cap = c;
    return 0;
}

static int gz_problem(in_reader *r)
{
    int errnum = 0;
    const char *msg = gzerror(r->gz, &errnum);
    if (errnum == Z_ERRNO) return in_fail(r, -2, "read error: %s", strerror(errno));
    if (errnum != Z_OK && errnum != Z_STREAM_END)
        return in_fail(r, -2, "corrupt or truncated gzip data: %s", msg);
    return 0;
}

int in_read_line(in_reader *r)
{
    int too_long = 0;
    r->len = 0;
    if (r->eof) return 0;
    r->lineno++;
    for (;;) {
        int c = gzgetc(r->gz);
        if (c == -1) {
            if (gz_problem(r)) return -2;
            r->eof = 1;
            if (r->len == 0 && !too_long) {
                r->lineno--;
                return 0;
            }
            break;
        }
        if (c == '\n') break;
        if (too_long) continue;
        if (r->len >= ND_MAX_DOC_BYTES) {
            too_long = 1;
            continue;
        }
        if (r->len + 1 >= r->cap && grow(r, r->len + 2)) return in_fail(r, -2, "out of memory");
        r->line[r->len++] = (char)c;
    }
    if (too_long) return in_fail(r, -1, "line longer than the %u MiB limit", ND_MAX_DOC_BYTES >> 20);
    if (r->len && r->line[r->len - 1] == '\r') r->len--;
    if (grow(r, r->len + 1)) return in_fail(r, -2, "out of memory");
    r->line[r->len] = '\0';
    return 1;
}

int in_read_bytes(in_reader *r, size_t n)
{
    if (grow(r, n + 1)) return in_fail(r, -2, "out of memory");
    size_t got = 0;
    while (got < n) {
        int k = gzread(r->gz, r->line + got, (unsigned)(n - got > (1u << 30) ? (1u << 30) : n - got));
        if (k < 0) return gz_problem(r) ? -2 : in_fail(r, -2, "read error");
        if (k == 0) {
            if (gz_problem(r)) return -2;
            return in_fail(r, -2, "record claims %zu bytes but the input ends after %zu", n, got);
        }
        got += (size_t)k;
    }
    r->len = n;
    r->line[n] = '\0';
    return 1;
}

int in_reader_open(in_reader **out, in_format fmt, const char *path, const void *opts)
{
    (void)opts;
    *out = NULL;
    in_reader *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(open_err, sizeof open_err, "out of memory");
        return -2;
    }
    r->fmt = fmt;
    r->path = strdup(strcmp(path, "-") == 0 ? "<stdin>" : path);
    if (!r->path) {
        free(r);
        snprintf(open_err, sizeof open_err, "out of memory");
        return -2;
    }
    if (fmt == IN_FORMAT_FILES) {
        if (in_files_open(r, path) < 0) {
            snprintf(open_err, sizeof open_err, "%s", r->err);
            in_reader_close(r);
            return -2;
        }
    } else {
        r->gz = strcmp(path, "-") == 0 ? gzdopen(dup(0), "rb") : gzopen(path, "rb");
        if (!r->gz) {
            snprintf(open_err, sizeof open_err, "cannot open '%s': %s", path,
                     errno ? strerror(errno) : "out of memory");
            in_reader_close(r);
            return -2;
        }
        gzbuffer(r->gz, 1 << 17);
    }
    *out = r;
    return 0;
}

int in_reader_next(in_reader *r, in_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->file = r->path;
    switch (r->fmt) {
    case IN_FORMAT_FP: return in_next_fp(r, rec);
    case IN_FORMAT_TSV: return in_next_tsv(r, rec);
    case IN_FORMAT_JSONL: return in_next_jsonl(r, rec);
    case IN_FORMAT_FILES: return in_next_files(r, rec);
    case IN_FORMAT_WARC: return in_next_warc(r, rec);
    }
    return in_fail(r, -2, "unknown format");
}

const char *in_reader_error(const in_reader *r) { return r ? r->err : open_err; }

uint64_t in_reader_bytes(const in_reader *r)
{
    if (!r) return 0;
    if (r->gz) return (uint64_t)gzoffset(r->gz);
    return 0;
}

void in_reader_close(in_reader *r)
{
    if (!r) return;
    if (r->gz) gzclose(r->gz);
    in_files_close(r);
    free(r->line);
    free(r->key);
    free(r->text);
    free(r->path);
    free(r);
}
