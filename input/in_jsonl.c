/*
 * in_jsonl.c — JSON lines: {"id": ..., "text": ...} or {"id": ..., "fp": ...}.
 *
 * "id" is a string, or an integer (written in decimal as the key); exactly
 * one of "text" (string) and "fp" (16 hex digits) is required; "score" is
 * an optional number, "html" an optional boolean. Other members are
 * ignored (but must be valid JSON). Strings may hold any Unicode JSON can
 * escape, \u0000 included, except NUL in the id.
 *
 * The key's and the text's members may have other names (r->id_field,
 * r->text_field: --id-field, --text-field, --html-field, whose text is
 * HTML): a missing or mistyped one is named in the message ("field
 * \"content\": missing"). A chosen name takes its member over: "fp",
 * "score" or "html" chosen as the key's or the text's is not read as
 * such. The default names keep every message as it was.
 *
 * Two parsers, one verdict. A line first goes to the fast parser
 * (in_json_fast.h: simdjson), whose strings are used in place, without a
 * copy. When it declines — the line is not valid JSON, or not an object
 * jansson reads the same way — or when a member is missing or of the
 * wrong kind, the line is parsed again with jansson, which gives the
 * message naming the line, the column or the member, exactly as before
 * the fast parser came (and accepts what only it accepts: nesting deeper
 * than 1024, lines over IN_JSON_FAST_MAX). A good line costs one fast
 * parse; a bad line a fast and a jansson parse.
 *
 * One row of the format table (in_jsonl.h); reads through in_source.c.
 * The reader's state is the fast parser, made at the first line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "in_jsonl.h"

#include "in_json_fast.h"
#include "in_source.h"
#include "in_text.h"

_Static_assert(IN_PAD >= IN_JSON_PADDING, "the reader's views are followed by too few bytes");

/* The members a line is read by: the key's and the text's (chosen, or
 * "id" and "text"), and "fp", "score" and "html" unless a chosen name is
 * theirs (NULL then). */
typedef struct names {
    const char *id, *text, *fp, *score, *html;
} names;

static names names_of(const in_reader *r)
{
    names n = {r->id_field ? r->id_field : "id", r->text_field ? r->text_field : "text",
               r->taken & IN_TAKES_FP ? NULL : "fp", r->taken & IN_TAKES_SCORE ? NULL : "score",
               r->taken & IN_TAKES_HTML ? NULL : "html"};
    return n;
}

/* The fast parse of r->line into rec: 1 a good record, 0 let jansson
 * decide (declined, or a member that is not what it should be). */
int in_jsonl_fast(in_reader *r, in_record *rec)
{
    enum { ID, TEXT, FP, SCORE, HTML, NFIELDS };
    names nm = names_of(r);
    in_json_field f[NFIELDS] = {
        [ID] = {.name = nm.id}, [TEXT] = {.name = nm.text}, [FP] = {.name = nm.fp},
        [SCORE] = {.name = nm.score}, [HTML] = {.name = nm.html}};
    in_json_fast *json = r->state;
    if (!json) {
        if (in_json_fast_new(&json)) return 0;
        r->state = json;
    }
    if (!in_json_fast_object(json, r->line, r->len, f, NFIELDS)) return 0;

    if (f[ID].kind == IN_JSON_STRING) {
        rec->key = f[ID].str;
        rec->key_len = f[ID].len;
    } else if (f[ID].kind == IN_JSON_INT) {
        char num[32];
        int n = snprintf(num, sizeof num, "%" PRId64, f[ID].i);
        if (in_copy(&r->key, &r->key_cap, num, (size_t)n)) return 0;
        rec->key = r->key;
        rec->key_len = (size_t)n;
    } else {
        return 0;
    }
    if (in_key_problem(rec->key, rec->key_len)) return 0;
    if ((f[TEXT].kind != IN_JSON_ABSENT) == (f[FP].kind != IN_JSON_ABSENT)) return 0;
    if (f[TEXT].kind == IN_JSON_STRING) {
        rec->text = f[TEXT].str;
        rec->text_len = f[TEXT].len;
    } else if (f[FP].kind == IN_JSON_STRING) {
        const char *why;
        if (in_parse_hex64(f[FP].str, f[FP].len, &rec->fp, &why)) return 0;
        rec->has_fp = 1;
    } else {
        return 0;
    }
    if (f[SCORE].kind == IN_JSON_INT || f[SCORE].kind == IN_JSON_DOUBLE) {
        rec->score = f[SCORE].num;
        rec->has_score = 1;
    } else if (f[SCORE].kind != IN_JSON_ABSENT) {
        return 0;
    }
    if (f[HTML].kind == IN_JSON_TRUE) rec->is_html = 1;
    else if (f[HTML].kind != IN_JSON_ABSENT && f[HTML].kind != IN_JSON_FALSE) return 0;
    if (r->text_html && rec->text) rec->is_html = 1;
    rec->line = r->lineno;
    return 1;
}

static int bad(in_reader *r, json_t *j, const char *field, const char *what)
{
    json_decref(j);
    return in_fail(r, -1, "field \"%s\": %s", field, what);
}

/* jansson's parse of r->line into rec: the reference behaviour, and every
 * message. Returns in_reader_next's codes. */
int in_jsonl_jansson(in_reader *r, in_record *rec)
{
    json_error_t err;
    /* A member named twice is refused, not read as its last value. */
    json_t *j = json_loadb(r->line, r->len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &err);
    if (!j) return in_fail(r, -1, "invalid JSON at column %d: %s", err.column, err.text);
    if (!json_is_object(j)) return bad(r, j, "(line)", "expected a JSON object");

    names nm = names_of(r);
    /* a text member of another name than "text": its own messages */
    int custom = r->text_field && strcmp(r->text_field, "text") != 0;
    json_t *id = json_object_get(j, nm.id);
    char num[32];
    const char *key;
    size_t klen;
    if (!id) return bad(r, j, nm.id, "missing");
    if (json_is_string(id)) {
        key = json_string_value(id);
        klen = json_string_length(id);
    } else if (json_is_integer(id)) {
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
        key = num;
        klen = strlen(num);
    } else {
        return bad(r, j, nm.id, "expected a string or an integer");
    }
    const char *kp = in_key_problem(key, klen);
    if (kp) return bad(r, j, nm.id, kp);

    json_t *text = json_object_get(j, nm.text), *fp = nm.fp ? json_object_get(j, nm.fp) : NULL;
    if (text && fp) {
        if (!custom) return bad(r, j, "fp", "give either \"text\" or \"fp\", not both");
        json_decref(j);
        return in_fail(r, -1, "field \"fp\": give either \"%s\" or \"fp\", not both", nm.text);
    }
    if (!text && !fp) return bad(r, j, nm.text, custom ? "missing" : "missing (or give \"fp\")");
    if (text && !json_is_string(text)) return bad(r, j, nm.text, "expected a string");
    if (fp) {
        const char *why;
        if (!json_is_string(fp)) return bad(r, j, "fp", "expected a string of 16 hex digits");
        if (in_parse_hex64(json_string_value(fp), json_string_length(fp), &rec->fp, &why))
            return bad(r, j, "fp", why);
        rec->has_fp = 1;
    }
    json_t *score = nm.score ? json_object_get(j, nm.score) : NULL;
    if (score) {
        if (!json_is_number(score)) return bad(r, j, "score", "expected a number");
        rec->score = json_number_value(score);
        rec->has_score = 1;
    }
    json_t *html = nm.html ? json_object_get(j, nm.html) : NULL;
    if (html) {
        if (!json_is_boolean(html)) return bad(r, j, "html", "expected true or false");
        rec->is_html = json_is_true(html);
    }
    if (r->text_html && text) rec->is_html = 1;
    if (in_copy(&r->key, &r->key_cap, key, klen) ||
        (text && in_copy(&r->text, &r->text_cap, json_string_value(text), json_string_length(text)))) {
        json_decref(j);
        return in_fail(r, -2, "out of memory");
    }
    rec->key = r->key;
    rec->key_len = klen;
    if (text) {
        rec->text = r->text;
        rec->text_len = json_string_length(text);
    }
    rec->line = r->lineno;
    json_decref(j);
    return 1;
}

static int next_jsonl(in_reader *r, in_record *rec)
{
    int rc;
    /* a line of white space alone is blank, as an empty one is */
    while ((rc = in_read_line(r)) == 1 && in_blank(r->line, r->len)) {}
    if (rc != 1) return rc;
    if (in_jsonl_fast(r, rec)) return 1;
    const char *file = rec->file;
    memset(rec, 0, sizeof *rec); /* the fast parse may have filled some */
    rec->file = file;
    return in_jsonl_jansson(r, rec);
}

static void close_jsonl(in_reader *r)
{
    in_json_fast_free(r->state);
    r->state = NULL;
}

const in_format_ops in_jsonl_format = {
    .name = "jsonl", .open = in_source_open, .next = next_jsonl, .close = close_jsonl};
