/*
 * in_text.h — the text forms of keys, fingerprints and times that the
 * readers parse and every output of the tools writes: one definition of
 * each, so that what one command prints another reads back.
 *
 * Part of input/ (see in_reader.h); depends on nothing but <neardup.h>'s
 * limits.
 */
#ifndef ND_IN_TEXT_H
#define ND_IN_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exactly 16 hex digits (either case, no 0x, no sign) -> 0 and *out;
 * otherwise -1 and *why names the problem ("too short", "not hex"...). */
int in_parse_hex64(const char *s, size_t len, uint64_t *out, const char **why);

/* A time in whole seconds since the epoch (may be negative) -> 0. */
int in_parse_time(const char *s, int64_t *out);

/* Validate a key: 1..ND_MAX_KEY_LEN bytes, no NUL. NULL if fine, else why. */
const char *in_key_problem(const char *key, size_t len);

/* 1 when p[0..n) is white space alone (spaces, tabs, CR, FF, VT) or
 * empty: a blank line of a line format. */
int in_blank(const char *p, size_t n);

/* Write key bytes as one TSV field: backslash, tab, newline, CR and other
 * control bytes are escaped (\\ \t \n \r \xHH); everything else verbatim. */
void in_put_field(FILE *f, const char *bytes, size_t len);

/* The inverse of in_put_field: unescape len bytes at s in place (a field
 * never grows); returns the new length, or -1 for a bad escape (a lone
 * backslash, \x without two hex digits, an unknown letter). */
long in_unescape_field(char *s, size_t len);

/* Write bytes as a JSON string (with quotes): ", \ and control bytes are
 * escaped; valid UTF-8 passes through; each byte of an invalid UTF-8
 * sequence becomes \u00XX (so such keys are readable, not round-trippable:
 * use TSV output for exact bytes). */
void in_put_json_string(FILE *f, const char *bytes, size_t len);

#endif
