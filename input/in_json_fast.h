/*
 * in_json_fast.h — one JSON object parsed at memory speed, for the JSONL
 * reader (in_jsonl.c). The only owner of simdjson: in_json_fast.cpp keeps
 * the C++ behind this C interface.
 *
 * The parser validates the whole line (RFC 8259: UTF-8, escapes including
 * surrogate pairs, no raw control bytes, nothing after the value) and
 * hands out the members the caller names. It never reports errors: when a
 * line is not a plain valid object it *declines*, and the caller parses
 * the line again with jansson, which gives the message (file:line:column)
 * and decides. It declines on: invalid JSON; a root that is not an
 * object; what jansson reads differently from simdjson (an integer
 * beyond int64 anywhere, a NUL byte in a member name anywhere); a line
 * nested deeper than 1024 or longer than IN_JSON_FAST_MAX; out of memory.
 * So every line gets jansson's verdict, at simdjson's speed when it is
 * good. Part of input/ (see in_reader.h).
 */
#ifndef ND_IN_JSON_FAST_H
#define ND_IN_JSON_FAST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Readable bytes that must follow the line given to in_json_fast_object
 * (their values do not matter). */
#define IN_JSON_PADDING 64
/* Longer lines are declined (jansson parses them): the parser's memory is
 * about 14 bytes a byte of line, mostly address space. */
#define IN_JSON_FAST_MAX (16u << 20)

typedef struct in_json_fast in_json_fast;

typedef enum in_json_kind {
    IN_JSON_ABSENT = 0,
    IN_JSON_STRING,
    IN_JSON_INT,    /* an integer that fits int64 */
    IN_JSON_DOUBLE, /* a number with a fraction or an exponent */
    IN_JSON_TRUE,
    IN_JSON_FALSE,
    IN_JSON_NULL,
    IN_JSON_ARRAY,
    IN_JSON_OBJECT
} in_json_kind;

/* A member asked for by name; the parse fills in the rest. */
typedef struct in_json_field {
    const char *name;  /* in: the member name (NUL-terminated); NULL: none
                          (the field stays IN_JSON_ABSENT) */
    in_json_kind kind; /* out: IN_JSON_ABSENT when the object has none */
    const char *str;   /* STRING: the bytes, escapes decoded (may hold NUL);
                          valid until the next parse */
    size_t len;
    int64_t i;         /* INT */
    double num;        /* INT and DOUBLE: the value */
} in_json_field;

/* 0, or -1 when out of memory. */
int in_json_fast_new(in_json_fast **out);
void in_json_fast_free(in_json_fast *p); /* accepts NULL */

/* Parse line[0, len) — followed by IN_JSON_PADDING readable bytes — as
 * one JSON object and fill fields[0, n) (for a name given several times
 * in the object, the last member wins, as in jansson). Returns 1 when
 * parsed, 0 when declined (see above; fields are then unspecified). */
int in_json_fast_object(in_json_fast *p, const char *line, size_t len, in_json_field *fields,
                        size_t n);

#ifdef __cplusplus
}
#endif

#endif
