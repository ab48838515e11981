/*
 * in_doc_io.c — stored documents as text lines (see in_doc_io.h). The
 * writer reuses the escapes of every other output (in_put_field,
 * in_put_json_string, in_text.c); the reader undoes the tsv escapes, so
 * that a dump imports back into an equal store. Part of input/ (moved
 * from cli/doc_io.c): it calls in_text.c only.
 */
#include "in_doc_io.h"

#include "in_text.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void doc_put(FILE *f, const nd_doc *d, int json)
{
    if (json) {
        fputs("{\"id\":", f);
        in_put_json_string(f, d->key, d->key_len);
        fprintf(f, ",\"fp\":\"%016llx\",\"score\":", (unsigned long long)d->fp);
        /* JSON has no NaN or infinity */
        if (isfinite(d->score)) fprintf(f, "%.17g", d->score);
        else fputs("null", f);
        fprintf(f, ",\"time\":%lld}\n", (long long)d->time);
        return;
    }
    in_put_field(f, d->key, d->key_len);
    fprintf(f, "\t%016llx\t%.17g\t%lld\n", (unsigned long long)d->fp, d->score,
            (long long)d->time);
}

/* The longest line: a key of ND_MAX_KEY_LEN bytes, each escaped as \xHH,
 * and the other fields, with room to spare. */
#define DOC_LINE_MAX (4 * ND_MAX_KEY_LEN + 256)

struct doc_reader {
    FILE *f;
    char *name;
    char *line;
    size_t cap;
    uint64_t lineno, bytes;
    char err[512];
};

static char open_err[512];

static int fail(doc_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(doc_reader *r, int code, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(r->err, sizeof r->err, "%s:%llu: ", r->name, (unsigned long long)r->lineno);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof r->err) vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

int doc_reader_open(doc_reader **out, const char *path)
{
    doc_reader *r = calloc(1, sizeof *r);
    int std = strcmp(path, "-") == 0;
    if (r) r->name = strdup(std ? "<stdin>" : path);
    if (!r || !r->name) {
        snprintf(open_err, sizeof open_err, "'%s': out of memory", path);
        goto fail;
    }
    r->f = std ? stdin : fopen(path, "rb");
    if (!r->f) {
        snprintf(open_err, sizeof open_err, "cannot open '%s': %s", path, strerror(errno));
        goto fail;
    }
    *out = r;
    return 0;
fail:
    doc_reader_close(r);
    return -2;
}

/* The next tab-separated field of [*p, end) -> its start and length; *p
 * moves past the tab. Returns -1 when the line has no such field. */
static int next_field(char **p, char *end, char **start, size_t *len)
{
    if (*p > end) return -1;
    char *tab = memchr(*p, '\t', (size_t)(end - *p));
    char *stop = tab ? tab : end;
    *start = *p;
    *len = (size_t)(stop - *p);
    *p = stop + 1;
    return 0;
}

int doc_reader_next(doc_reader *r, in_record *rec, int64_t *time)
{
    ssize_t got;
    do {
        errno = 0;
        got = getline(&r->line, &r->cap, r->f);
        if (got < 0) {
            if (ferror(r->f))
                return fail(r, -2, "cannot read: %s", strerror(errno ? errno : EIO));
            return 0;
        }
        r->lineno++;
        r->bytes += (uint64_t)got;
        if (got > 0 && r->line[got - 1] == '\n') got--;
        if (got > 0 && r->line[got - 1] == '\r') got--;
    } while (got == 0); /* blank lines */
    if (got > DOC_LINE_MAX) return fail(r, -1, "line longer than %d bytes", DOC_LINE_MAX);
    char *p = r->line, *end = r->line + got, *key, *hex, *score, *t;
    size_t klen, hlen, slen, tlen;
    if (next_field(&p, end, &key, &klen) || next_field(&p, end, &hex, &hlen) ||
        next_field(&p, end, &score, &slen) || next_field(&p, end, &t, &tlen))
        return fail(r, -1, "expected KEY<TAB>HEX16<TAB>SCORE<TAB>LASTSEEN (as `neardup dump` "
                           "writes)");
    if (p <= end) return fail(r, -1, "more than 4 fields (a key's TAB must be written \\t)");
    long kl = in_unescape_field(key, klen);
    if (kl < 0) return fail(r, -1, "key: bad escape (\\\\ \\t \\n \\r or \\xHH)");
    if (kl == 0) return fail(r, -1, "key: empty key");
    if (kl > ND_MAX_KEY_LEN) return fail(r, -1, "key: key longer than %u bytes", ND_MAX_KEY_LEN);
    const char *why;
    memset(rec, 0, sizeof *rec);
    if (in_parse_hex64(hex, hlen, &rec->fp, &why)) return fail(r, -1, "fingerprint: %s", why);
    score[slen] = '\0'; /* the fields are no longer needed as a line */
    t[tlen] = '\0';
    char *se;
    rec->score = strtod(score, &se); /* what %.17g wrote, nan and inf too */
    if (slen == 0 || *se) return fail(r, -1, "score: not a number: '%.40s'", score);
    if (in_parse_time(t, time)) return fail(r, -1, "time: not whole seconds: '%.40s'", t);
    rec->key = key;
    rec->key_len = (size_t)kl;
    rec->has_fp = 1;
    rec->has_score = 1;
    rec->file = r->name;
    rec->line = r->lineno;
    return 1;
}

const char *doc_reader_error(const doc_reader *r) { return r ? r->err : open_err; }

uint64_t doc_reader_bytes(const doc_reader *r) { return r->bytes; }

void doc_reader_close(doc_reader *r)
{
    if (!r) return;
    if (r->f && r->f != stdin) fclose(r->f);
    free(r->name);
    free(r->line);
    free(r);
}
