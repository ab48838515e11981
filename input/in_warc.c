/*
 * in_warc.c — WARC files (ISO 28500, versions 1.0 and 1.1), plain or gzip.
 *
 * A record is "WARC/1.x", header lines, a blank line, Content-Length bytes
 * of block, then CRLF CRLF. Documents come from "response" records (the
 * HTTP status line and headers are skipped; HTML when the HTTP Content-Type
 * says text/html or application/xhtml+xml) and "conversion" records (plain
 * text). The key is WARC-Target-URI. A block that runs past the end of the
 * input (a Content-Length that lies, a truncated file) is fatal and names
 * the record; a record without the fields we need is a bad record. Messages
 * give the record's ordinal where line formats give a line.
 *
 * One row of the format table (in_warc.h); reads through in_source.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <neardup.h>

#include "in_warc.h"

#include "in_source.h"
#include "in_text.h"

static const char *header_value(const char *line, const char *name)
{
    size_t n = strlen(name);
    if (strncasecmp(line, name, n) != 0 || line[n] != ':') return NULL;
    line += n + 1;
    while (*line == ' ' || *line == '\t') line++;
    return line;
}

/* Locate the end of HTTP headers in a response block. */
static size_t http_body_start(const char *b, size_t n, int *is_html)
{
    *is_html = 0;
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(b + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - b) : n;
        size_t len = end - i;
        if (len && b[end - 1] == '\r') len--;
        if (len == 0) return nl ? end + 1 : n; /* blank line */
        if (len > 13 && strncasecmp(b + i, "Content-Type:", 13) == 0) {
            const char *v = b + i + 13;
            size_t vl = len - 13;
            while (vl && (*v == ' ' || *v == '\t')) { v++; vl--; }
            if ((vl >= 9 && strncasecmp(v, "text/html", 9) == 0) ||
                (vl >= 21 && strncasecmp(v, "application/xhtml+xml", 21) == 0))
                *is_html = 1;
        }
        if (!nl) return n;
        i = end + 1;
    }
    return n;
}

/* One record: 1 a document, 2 a record of a type that holds none. */
static int next_record(in_reader *r, in_record *rec)
{
    int rc;
    uint64_t record_line;
    /* Find the version line (skipping the blank lines between records). */
    for (;;) {
        rc = in_read_line(r);
        if (rc != 1) return rc;
        if (r->len == 0) continue;
        if (strncmp(r->line, "WARC/", 5) == 0) break;
        return in_fail(r, -1, "expected a WARC/1.x version line, got '%.40s'", r->line);
    }
    record_line = r->lineno;
    char type[64] = "";
    long long clen = -1;
    int have_uri = 0;
    for (;;) {
        rc = in_read_line(r);
        if (rc == 0) return in_fail(r, -2, "record at line %llu: input ends inside its header",
                                    (unsigned long long)record_line);
        if (rc != 1) return rc;
        if (r->len == 0) break;
        const char *v;
        if ((v = header_value(r->line, "WARC-Type"))) {
            snprintf(type, sizeof type, "%s", v);
        } else if ((v = header_value(r->line, "WARC-Target-URI"))) {
            size_t vl = strlen(v);
            if (vl && v[0] == '<' && v[vl - 1] == '>') { v++; vl -= 2; } /* WARC 1.0 style */
            if (in_copy(&r->key, &r->key_cap, v, vl)) return in_fail(r, -2, "out of memory");
            have_uri = 1;
        } else if ((v = header_value(r->line, "Content-Length"))) {
            char *end;
            clen = strtoll(v, &end, 10);
            if (end == v || *end || clen < 0) clen = -2;
        }
    }
    if (clen == -1) return in_fail(r, -2, "record at line %llu: no Content-Length", (unsigned long long)record_line);
    if (clen == -2) return in_fail(r, -2, "record at line %llu: bad Content-Length", (unsigned long long)record_line);
    if (clen > (long long)ND_MAX_DOC_BYTES) {
        /* Skip the block so the next record can be read. */
        rc = in_skip_bytes(r, (size_t)clen);
        if (rc != 1) return rc;
        return in_fail(r, -1, "record at line %llu: block of %lld bytes exceeds the %u MiB limit",
                       (unsigned long long)record_line, clen, ND_MAX_DOC_BYTES >> 20);
    }
    rc = in_read_bytes(r, (size_t)clen);
    if (rc != 1) {
        snprintf(r->err + strlen(r->err), sizeof r->err - strlen(r->err), " (record at line %llu)",
                 (unsigned long long)record_line);
        return rc;
    }
    /* Count the block's lines so later messages keep true line numbers. */
    for (size_t i = 0; i < r->len; i++) r->lineno += r->line[i] == '\n';
    int response = strcasecmp(type, "response") == 0, conversion = strcasecmp(type, "conversion") == 0;
    if (!response && !conversion) return 2; /* request, metadata, warcinfo... */
    if (!have_uri) {
        r->lineno = record_line;
        return in_fail(r, -1, "field \"WARC-Target-URI\": missing in a %s record", type);
    }
    const char *kp = in_key_problem(r->key, strlen(r->key));
    if (kp) return in_fail(r, -1, "field \"WARC-Target-URI\": %s", kp);
    size_t start = 0;
    rec->is_html = 0;
    if (response) start = http_body_start(r->line, r->len, &rec->is_html);
    rec->key = r->key;
    rec->key_len = strlen(r->key);
    rec->text = r->line + start;
    rec->text_len = r->len - start;
    rec->line = record_line;
    return 1;
}

static int next_warc(in_reader *r, in_record *rec)
{
    int rc;
    while ((rc = next_record(r, rec)) == 2) {}
    return rc;
}

const in_format_ops in_warc_format = {.name = "warc", .open = in_source_open, .next = next_warc};
