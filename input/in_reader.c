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
 *
 * Without a --format (in_reader_opts.infer) the dispatcher chooses the
 * row: a directory is files; else it opens the source, reads its first
 * bytes (in_source_peek: they stay buffered for the format) and asks
 * in_format_guess (in_guess.c). It also words the hints: the first bad
 * record of an input is looked at again (its line, through
 * in_format_guess) and its message says what the input looks like when
 * that is not the format it is read as.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "in_files.h"
#include "in_format.h"
#include "in_jsonl.h"
#include "in_lines.h"
#include "in_reader.h"
#include "in_source.h"
#include "in_warc.h"

#include <neardup.h>

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

const char *in_format_name(in_format fmt)
{
    if ((unsigned)fmt < NFORMATS) return formats[fmt]->name;
    return fmt == IN_FORMAT_DUMP ? "dump" : "?";
}

enum { HOW_GIVEN = 0, HOW_CONTENT = IN_GUESS_CONTENT, HOW_NAME = IN_GUESS_NAME, HOW_DEFAULT,
       HOW_DIR };

static int reads(const in_reader *r, in_format f)
{
    if (f == IN_FORMAT_DUMP) return r->dump_ok;
    return (r->formats & IN_BIT(f)) != 0;
}

/* The reader's copies of the JSONL options. 0, or -2 out of memory. */
static int set_fields(in_reader *r, const in_reader_opts *o)
{
    const char *text = o->html_field ? o->html_field : o->text_field;
    if ((o->id_field && !(r->id_field = strdup(o->id_field))) ||
        (text && !(r->text_field = strdup(text))))
        return in_fail_file(r, -2, r->path, "out of memory");
    r->text_html = o->html_field != NULL;
    const char *names[2] = {o->id_field, text};
    for (int i = 0; i < 2; i++) {
        if (!names[i]) continue;
        if (strcmp(names[i], "fp") == 0) r->taken |= IN_TAKES_FP;
        if (strcmp(names[i], "score") == 0) r->taken |= IN_TAKES_SCORE;
        if (strcmp(names[i], "html") == 0) r->taken |= IN_TAKES_HTML;
    }
    return 0;
}

/* Choose r's format (the command's default is fmt) and open it. 0 or -2. */
static int open_inferred(in_reader *r, in_format fmt, const char *path, const in_reader_opts *o)
{
    int std = strcmp(path, "-") == 0;
    struct stat st;
    if (!std && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* a directory: the files of a walk, where the command reads them */
        r->fmt = reads(r, IN_FORMAT_FILES) ? IN_FORMAT_FILES : fmt;
        r->how = r->fmt == IN_FORMAT_FILES ? HOW_DIR : HOW_DEFAULT;
        return formats[r->fmt]->open(r, path);
    }
    if (in_source_open(r, path) < 0) return -2;
    r->lineno = 1; /* a failure while peeking names the first line */
    int rc = in_source_peek(r, IN_GUESS_BYTES);
    if (rc < 0) return rc;
    r->lineno = 0;
    in_format g;
    int how = in_format_guess(std ? NULL : path, r->line, r->len, &g);
    if (how != IN_GUESS_NONE && g == IN_FORMAT_DUMP) {
        r->lineno = 1;
        if (o->dump)
            return in_fail(r, -2, "this looks like `neardup dump` output "
                                  "(KEY<TAB>HEX16<TAB>SCORE<TAB>TIME): use --format dump");
        return in_fail(r, -2, "this looks like `neardup dump` output "
                              "(KEY<TAB>HEX16<TAB>SCORE<TAB>TIME), which this command does not read");
    }
    if (how != IN_GUESS_NONE && reads(r, g)) {
        r->fmt = g;
        r->how = how;
    } else {
        r->fmt = fmt;
        r->how = HOW_DEFAULT;
    }
    if (r->fmt != IN_FORMAT_FILES) return 0; /* every stream row opens with in_source_open */
    /* No record format: files. A regular file is read whole, as given. */
    if (!std && fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
        in_source_close(r);
        r->raw_bytes = 0;
        r->eof = r->raw_eof = r->live = 0;
        r->beg = r->end = r->buf_cap = 0;
        r->gzip = 0;
        return formats[IN_FORMAT_FILES]->open(r, path);
    }
    if (!o->stream_document)
        return in_fail_file(r, -2, r->path,
                            "cannot tell the format (the first line is no fp, jsonl, tsv or warc "
                            "record): give --format");
    /* a stream: one document (in_files.c, next_stream) */
    if (in_copy(&r->key, &r->key_cap, std ? "-" : path, strlen(std ? "-" : path)))
        return in_fail_file(r, -2, r->path, "out of memory");
    return 0;
}

int in_reader_open(in_reader **out, in_format fmt, const char *path, const in_reader_opts *opts)
{
    static const in_reader_opts none = {0};
    const in_reader_opts *o = opts ? opts : &none;
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
    r->formats = o->formats ? o->formats : ~0u;
    r->dump_ok = o->dump;
    int rc = set_fields(r, o);
    if (rc == 0) rc = o->infer ? open_inferred(r, fmt, path, o) : formats[fmt]->open(r, path);
    if (rc < 0) {
        snprintf(open_err, sizeof open_err, "%s", r->err);
        in_reader_close(r);
        return -2;
    }
    *out = r;
    return 0;
}

in_format in_reader_format(const in_reader *r) { return r->fmt; }

/* What a format is called in a hint. */
static const char *noun(in_format f)
{
    switch (f) {
    case IN_FORMAT_FP: return "fingerprint lines";
    case IN_FORMAT_JSONL: return "JSONL";
    case IN_FORMAT_TSV: return "TSV";
    case IN_FORMAT_WARC: return "WARC";
    case IN_FORMAT_DUMP: return "`neardup dump` output";
    default: return "plain text";
    }
}

/* The record formats r's command reads, as "fp, jsonl or tsv". */
static void list_formats(const in_reader *r, char *out, size_t cap)
{
    const char *names[NFORMATS];
    size_t n = 0, len = 0;
    for (size_t i = 0; i < NFORMATS; i++)
        if (i != IN_FORMAT_FILES && reads(r, (in_format)i)) names[n++] = formats[i]->name;
    out[0] = '\0';
    for (size_t i = 0; i < n && len < cap; i++) {
        int k = snprintf(out + len, cap - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                         names[i]);
        if (k < 0) break;
        len += (size_t)k;
    }
}

static void append(in_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(in_reader *r, const char *fmt, ...)
{
    size_t len = strlen(r->err);
    va_list ap;
    va_start(ap, fmt);
    if (len < sizeof r->err) vsnprintf(r->err + len, sizeof r->err - len, fmt, ap);
    va_end(ap);
}

static int starts_hex16(const char *p, size_t n)
{
    if (n < 16) return 0;
    for (size_t i = 0; i < 16; i++)
        if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return 0;
    return 1;
}

/* The hint of a bad record (the input's first: see in_reader.h). */
static void hint(in_reader *r)
{
    r->hinted = 1;
    if (r->fmt == IN_FORMAT_FILES) return;
    if (r->nrec == 0 && r->line && r->len) {
        /* the failing line: what does it look like? (a copy, ended by a
         * newline, so that a dump line is seen complete) */
        char look[ND_MAX_KEY_LEN + 256];
        size_t n = r->len < sizeof look - 1 ? r->len : sizeof look - 1;
        memcpy(look, r->line, n);
        look[n++] = '\n';
        in_format g;
        if (in_format_guess(NULL, look, n, &g) != IN_GUESS_NONE) {
            if (g == r->fmt) goto inferred;
            if (reads(r, g)) append(r, "; this looks like %s: use --format %s", noun(g), in_format_name(g));
            else append(r, "; this looks like %s, which this command does not read", noun(g));
            return;
        }
        /* no --format, and the line is no record (nor a fingerprint line
         * gone wrong: its own message says enough) */
        if (r->how != HOW_GIVEN && !(r->fmt == IN_FORMAT_FP && starts_hex16(r->line, r->len))) {
            if (reads(r, IN_FORMAT_FILES)) {
                append(r, "; this looks like plain text: use --format files (one document a file)");
            } else {
                char list[64];
                list_formats(r, list, sizeof list);
                append(r, "; this looks like plain text, not %s records", list);
            }
            return;
        }
    }
inferred: /* jsonl and warc by their first bytes leave no doubt: no word */
    if (r->how == HOW_CONTENT && (r->fmt == IN_FORMAT_TSV || r->fmt == IN_FORMAT_FP))
        append(r, "; format %s inferred from the first line: give --format to choose",
               in_format_name(r->fmt));
    else if (r->how == HOW_NAME)
        append(r, "; format %s inferred from the name: give --format to choose",
               in_format_name(r->fmt));
}

int in_reader_next(in_reader *r, in_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->file = r->path;
    int rc = formats[r->fmt]->next(r, rec);
    if (rc == -1 && !r->hinted) hint(r);
    if (rc == 1 || rc == -1) r->nrec++;
    return rc;
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
    free(r->id_field);
    free(r->text_field);
    free(r);
}
