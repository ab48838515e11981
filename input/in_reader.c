/*
 * in_reader.c — opening inputs, messages, and dispatching to the format
 * readers.
 *
 * Line formats and WARC read through in_source.c, which passes plain
 * input through and decompresses gzip (several members too), so .gz
 * inputs need no flag. A truncated gzip stream is a fatal error that
 * names the file. An input that cannot be opened is named without a line
 * ("FILE: cannot open: REASON").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <neardup.h>

#include "in_source.h"

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

int in_fail_file(in_reader *r, int code, const char *name, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(r->err, sizeof r->err, "%s: ", name);
    if (n < 0 || (size_t)n >= sizeof r->err) n = 0;
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
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
    r->fd = -1;
    if (fmt == IN_FORMAT_FILES) {
        if (in_files_open(r, path) < 0) goto fail;
    } else {
        int fd = strcmp(path, "-") == 0 ? fcntl(0, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            in_fail_file(r, -2, r->path, "cannot open: %s", strerror(errno));
            goto fail;
        }
        if (in_source_open(r, fd) < 0) goto fail;
    }
    *out = r;
    return 0;
fail:
    snprintf(open_err, sizeof open_err, "%s", r->err);
    in_reader_close(r);
    return -2;
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
    return r ? r->raw_bytes : 0;
}

int in_reader_would_block(in_reader *r) { return r && in_source_would_block(r); }

void in_reader_close(in_reader *r)
{
    if (!r) return;
    in_source_close(r);
    in_files_close(r);
    in_jsonl_close(r);
    free(r->key);
    free(r->text);
    free(r->path);
    free(r);
}
