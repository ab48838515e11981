/*
 * in_reader.c — the dispatcher: the table of formats, opening an input
 * with its format's row, and the calls of in_reader.h, each of which goes
 * through the row or the source layer (in_source.c).
 *
 * Line formats and WARC read through in_source.c, which passes plain
 * input through and decompresses gzip (several members too), so .gz
 * inputs need no flag. A truncated gzip stream is a fatal error that
 * names the file. An input that cannot be opened is named without a line
 * ("FILE: cannot open: REASON").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "in_files.h"
#include "in_format.h"
#include "in_jsonl.h"
#include "in_lines.h"
#include "in_reader.h"
#include "in_source.h"
#include "in_warc.h"

/* One row per in_format, in the enum's order. */
static const in_format_ops *const formats[] = {
    [IN_FORMAT_FP] = &in_fp_format,
    [IN_FORMAT_JSONL] = &in_jsonl_format,
    [IN_FORMAT_TSV] = &in_tsv_format,
    [IN_FORMAT_FILES] = &in_files_format,
    [IN_FORMAT_WARC] = &in_warc_format,
};
enum { NFORMATS = sizeof formats / sizeof formats[0] };

static _Thread_local char open_err[1024];

int in_format_parse(const char *s, in_format *out)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(s, formats[i]->name) == 0) {
            *out = (in_format)i;
            return 0;
        }
    return -1;
}

int in_reader_open(in_reader **out, in_format fmt, const char *path, const void *opts)
{
    (void)opts;
    *out = NULL;
    if ((unsigned)fmt >= NFORMATS) {
        snprintf(open_err, sizeof open_err, "%s: unknown format", path);
        return -2;
    }
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
    if (formats[fmt]->open(r, path) < 0) {
        snprintf(open_err, sizeof open_err, "%s", r->err);
        in_reader_close(r);
        return -2;
    }
    *out = r;
    return 0;
}

int in_reader_next(in_reader *r, in_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->file = r->path;
    return formats[r->fmt]->next(r, rec);
}

const char *in_reader_error(const in_reader *r) { return r ? r->err : open_err; }

uint64_t in_reader_bytes(const in_reader *r)
{
    return r ? r->raw_bytes : 0;
}

int in_reader_would_block(in_reader *r) { return r && in_source_would_block(r); }

void in_reader_set_stop(int (*stop)(void)) { in_source_set_stop(stop); }

void in_reader_close(in_reader *r)
{
    if (!r) return;
    if (formats[r->fmt]->close) formats[r->fmt]->close(r);
    in_source_close(r);
    free(r->key);
    free(r->text);
    free(r->path);
    free(r);
}
