/*
 * in_doc_io.h — stored documents as text: the lines `dump` writes and
 * `import --format dump` reads back (and `expire --dry-run` prints).
 * Part of input/ (see in_reader.h; was cli/doc_io.h).
 *
 *   tsv    KEY<TAB>HEX16<TAB>SCORE<TAB>LASTSEEN, the key escaped as every
 *          TSV output escapes it (\\ \t \n \r \xHH), the score with 17
 *          significant digits, LASTSEEN in seconds since the epoch: every
 *          byte of the key and every bit of the score and time come back.
 *   jsonl  {"id":KEY,"fp":"HEX16","score":S,"time":T}: what
 *          `import --format jsonl` reads (key, fingerprint and score); a
 *          key byte that is not valid UTF-8 is written as \u00XX, so such
 *          keys do not come back byte for byte (use tsv to copy a store).
 */
#ifndef ND_DOC_IO_H
#define ND_DOC_IO_H

#include <stdint.h>
#include <stdio.h>

#include <neardup.h>

#include "in_reader.h"

/* Write one document as a tsv or (json) jsonl line. */
void doc_put(FILE *f, const nd_doc *d, int json);

/* A reader of doc_put's tsv lines. */
typedef struct doc_reader doc_reader;

/* Open path ("-" = stdin) -> 0; -2 with the message in doc_reader_error(NULL). */
int doc_reader_open(doc_reader **out, const char *path);
/* The next document: 1 (rec and *time filled; valid until the next call),
 * 0 at the end, -1 for a bad line (the message "FILE:LINE: FIELD: problem"
 * in doc_reader_error; the next call goes on after it), -2 when the input
 * cannot be read. */
int doc_reader_next(doc_reader *r, in_record *rec, int64_t *time);
/* Last message of r, or of the last failed open when r is NULL. */
const char *doc_reader_error(const doc_reader *r);
/* Bytes read so far. */
uint64_t doc_reader_bytes(const doc_reader *r);
void doc_reader_close(doc_reader *r); /* accepts NULL */

#endif
