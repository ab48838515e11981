/*
 * in_internal.h — what the format readers in_*.c share.
 */
#ifndef ND_IN_INTERNAL_H
#define ND_IN_INTERNAL_H

#include <stdio.h>
#include <zlib.h>

#include "in_reader.h"

struct in_reader {
    in_format fmt;
    char *path; /* display name */
    gzFile gz;
    int eof;
    char *line; /* current line / record body */
    size_t len, cap;
    uint64_t lineno;
    char err[1024];
    /* jsonl / warc: owned copies for the current record */
    char *key;
    size_t key_cap;
    char *text;
    size_t text_cap;
    /* files: the walk */
    char **files;
    size_t nfiles, next_file;
};

/* Set r->err to "FILE:LINE: msg" and return code. */
int in_fail(in_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Read the next line (without its newline, CR stripped) into r->line.
 * 1 line, 0 end, -1 line over the limit (skipped to its end), -2 I/O. */
int in_read_line(in_reader *r);

/* Read exactly n bytes into r->line (warc). 1 ok, -2 short/IO. */
int in_read_bytes(in_reader *r, size_t n);

/* Copy bytes into a growable owned buffer. 0 ok, -2 out of memory. */
int in_copy(char **dst, size_t *cap, const char *src, size_t n);

/* Validate a key: 1..ND_MAX_KEY_LEN bytes, no NUL. NULL if fine, else why. */
const char *in_key_problem(const char *key, size_t len);

int in_next_fp(in_reader *r, in_record *rec);
int in_next_tsv(in_reader *r, in_record *rec);
int in_next_jsonl(in_reader *r, in_record *rec);
int in_next_files(in_reader *r, in_record *rec);
int in_next_warc(in_reader *r, in_record *rec);
int in_files_open(in_reader *r, const char *path);
void in_files_close(in_reader *r);

#endif
