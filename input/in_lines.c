/*
 * in_lines.c — the two line formats without quoting: fp and tsv, two rows
 * of the format table (in_lines.h). Reads through in_source.c; keys and
 * fingerprints are checked by in_text.c.
 */
#include <string.h>

#include "in_lines.h"

#include "in_source.h"
#include "in_text.h"

/* Skip blank lines; returns in_read_line's code. */
static int next_nonblank(in_reader *r)
{
    int rc;
    while ((rc = in_read_line(r)) == 1 && r->len == 0) {}
    return rc;
}

static int next_fp(in_reader *r, in_record *rec)
{
    int rc = next_nonblank(r);
    if (rc != 1) return rc;
    char *tab = memchr(r->line, '\t', r->len);
    size_t hexlen = tab ? (size_t)(tab - r->line) : r->len;
    const char *why;
    if (in_parse_hex64(r->line, hexlen, &rec->fp, &why))
        return in_fail(r, -1, "fingerprint '%.*s': %s", (int)(hexlen > 40 ? 40 : hexlen), r->line, why);
    rec->has_fp = 1;
    rec->key = tab ? tab + 1 : r->line;
    rec->key_len = tab ? r->len - hexlen - 1 : hexlen;
    const char *kp = in_key_problem(rec->key, rec->key_len);
    if (kp) return in_fail(r, -1, "key: %s", kp);
    rec->line = r->lineno;
    return 1;
}

static int next_tsv(in_reader *r, in_record *rec)
{
    int rc = next_nonblank(r);
    if (rc != 1) return rc;
    char *tab = memchr(r->line, '\t', r->len);
    if (!tab) return in_fail(r, -1, "text: missing TAB between key and text");
    rec->key = r->line;
    rec->key_len = (size_t)(tab - r->line);
    const char *kp = in_key_problem(rec->key, rec->key_len);
    if (kp) return in_fail(r, -1, "key: %s", kp);
    rec->text = tab + 1;
    rec->text_len = r->len - rec->key_len - 1;
    rec->line = r->lineno;
    return 1;
}

const in_format_ops in_fp_format = {.name = "fp", .open = in_source_open, .next = next_fp};
const in_format_ops in_tsv_format = {.name = "tsv", .open = in_source_open, .next = next_tsv};
