/*
 * in_jsonl.c — JSON lines: {"id": ..., "text": ...} or {"id": ..., "fp": ...}.
 *
 * "id" is a string, or an integer (written in decimal as the key); exactly
 * one of "text" (string) and "fp" (16 hex digits) is required; "score" is
 * an optional number, "html" an optional boolean. Other fields are ignored.
 * Strings may hold any Unicode JSON can escape except NUL in the id.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "in_internal.h"

static int bad(in_reader *r, json_t *j, const char *field, const char *what)
{
    json_decref(j);
    return in_fail(r, -1, "field \"%s\": %s", field, what);
}

int in_next_jsonl(in_reader *r, in_record *rec)
{
    int rc;
    while ((rc = in_read_line(r)) == 1 && r->len == 0) {}
    if (rc != 1) return rc;
    json_error_t err;
    json_t *j = json_loadb(r->line, r->len, JSON_ALLOW_NUL, &err);
    if (!j) return in_fail(r, -1, "invalid JSON at column %d: %s", err.column, err.text);
    if (!json_is_object(j)) return bad(r, j, "(line)", "expected a JSON object");

    json_t *id = json_object_get(j, "id");
    char num[32];
    const char *key;
    size_t klen;
    if (!id) return bad(r, j, "id", "missing");
    if (json_is_string(id)) {
        key = json_string_value(id);
        klen = json_string_length(id);
    } else if (json_is_integer(id)) {
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
        key = num;
        klen = strlen(num);
    } else {
        return bad(r, j, "id", "expected a string or an integer");
    }
    const char *kp = in_key_problem(key, klen);
    if (kp) return bad(r, j, "id", kp);

    json_t *text = json_object_get(j, "text"), *fp = json_object_get(j, "fp");
    if (text && fp) return bad(r, j, "fp", "give either \"text\" or \"fp\", not both");
    if (!text && !fp) return bad(r, j, "text", "missing (or give \"fp\")");
    if (text && !json_is_string(text)) return bad(r, j, "text", "expected a string");
    if (fp) {
        const char *why;
        if (!json_is_string(fp)) return bad(r, j, "fp", "expected a string of 16 hex digits");
        if (cli_parse_hex64(json_string_value(fp), json_string_length(fp), &rec->fp, &why))
            return bad(r, j, "fp", why);
        rec->has_fp = 1;
    }
    json_t *score = json_object_get(j, "score");
    if (score) {
        if (!json_is_number(score)) return bad(r, j, "score", "expected a number");
        rec->score = json_number_value(score);
        rec->has_score = 1;
    }
    json_t *html = json_object_get(j, "html");
    if (html) {
        if (!json_is_boolean(html)) return bad(r, j, "html", "expected true or false");
        rec->is_html = json_is_true(html);
    }
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
