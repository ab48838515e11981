/*
 * in_guess.h — the format an input looks like (in_guess.c): the rule
 * in_reader infers a format by when no --format is given (in_reader_opts
 * .infer) and words its hints with, and which docs/cli.md's "Input
 * formats" table states. Part of input/ (see in_reader.h, which includes
 * this header); a pure function: it reads no file.
 */
#ifndef ND_IN_GUESS_H
#define ND_IN_GUESS_H

#include <stddef.h>

#include "in_record.h"

/* What in_format_guess went by. */
enum { IN_GUESS_NONE = 0, IN_GUESS_CONTENT = 1, IN_GUESS_NAME = 2 };

/* The format an input looks like, from its first bytes (first[0, n),
 * after decompression: at least its first line that is not blank, as
 * in_reader reads up to IN_GUESS_BYTES of them), else from its name
 * (NULL: none), first match wins:
 *   content  the first byte that is not blank (space, TAB, CR, LF) is '{'
 *            -> jsonl; the line it is on (its first line) starts with
 *            "WARC/1." -> warc; is KEY<TAB>HEX16<TAB>SCORE<TAB>TIME (ended
 *            by LF) -> dump; starts with 16 hex digits then TAB, CR, LF or
 *            the end -> fp; is KEY<TAB>TEXT with KEY 1..ND_MAX_KEY_LEN
 *            bytes, neither blank at its start nor holding NUL -> tsv
 *   name     after one .gz or .zst: .jsonl, .ndjson, .json -> jsonl; .tsv ->
 *            tsv; .warc -> warc (case ignored)
 * Returns IN_GUESS_CONTENT or IN_GUESS_NAME with *fmt set, or
 * IN_GUESS_NONE (*fmt untouched): nothing to go by, or text that is no
 * record format (plain text, a binary file). Never reads a file. */
int in_format_guess(const char *name, const void *first, size_t n, in_format *fmt);
#define IN_GUESS_BYTES 65536

#endif
