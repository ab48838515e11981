/*
 * in_source.h — what the format readers in_*.c share.
 *
 * A reader over a stream (every format but files) reads its bytes through
 * in_source.c: read(2) into one buffer, gzip decoded on the way when the
 * input starts with gzip's magic. The current line or block is a view
 * into that buffer (r->line, r->len), valid until the next read; at least
 * IN_PAD readable bytes follow every view (the fast JSON parser reads up
 * to 64 bytes past the end of its input).
 */
#ifndef ND_IN_SOURCE_H
#define ND_IN_SOURCE_H

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "in_reader.h"

#define IN_PAD 64

typedef struct in_json_fast in_json_fast;

struct in_reader {
    in_format fmt;
    char *path; /* display name */
    /* the byte source (in_source.c) */
    int fd;          /* -1: none (files format) */
    int live;        /* a pipe, socket or terminal: reads return what has come */
    int eof;         /* every byte of the input is in buf */
    int gzip;        /* 0 plain, 1 inside a gzip member, 2 between members */
    int inflating;   /* zs is initialised */
    z_stream zs;
    unsigned char *zin; /* compressed bytes read, not yet inflated */
    size_t zin_cap;
    int raw_eof;        /* read(2) returned 0 */
    uint64_t raw_bytes; /* bytes read(2) from fd */
    char *buf;          /* buf_cap + IN_PAD + 1 bytes */
    size_t beg, end, buf_cap;
    size_t ready;       /* with ready_ok: a buffered newline ending a line */
    int ready_ok;
    /* the current line / record body: a view into buf */
    char *line;
    size_t len;
    uint64_t lineno;
    char err[1024];
    /* jsonl / warc: owned copies for the current record */
    char *key;
    size_t key_cap;
    char *text;
    size_t text_cap;
    in_json_fast *json;
    /* files: the walk */
    struct in_file_entry *files;
    size_t nfiles, next_file;
};

/* Set r->err to "FILE:LINE: msg" and return code. */
int in_fail(in_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Set r->err to "NAME: msg" (no line: a file as a whole) and return code. */
int in_fail_file(in_reader *r, int code, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The byte source (in_source.c). Open fd (owned from now on, closed by
 * in_source_close); 0, or -2 with the message in r->err. */
int in_source_open(in_reader *r, int fd);
void in_source_close(in_reader *r);

/* Read the next line (without its newline, CR stripped, NUL-terminated)
 * into the view r->line, r->len.
 * 1 line, 0 end, -1 line over the limit (skipped to its end), -2 I/O. */
int in_read_line(in_reader *r);

/* The next n bytes as the view r->line (warc; not NUL-terminated).
 * 1 ok, -2 short/IO. */
int in_read_bytes(in_reader *r, size_t n);
/* Skip n bytes. 1 ok, -2 short/IO. */
int in_skip_bytes(in_reader *r, size_t n);

/* 1 when the next in_read_line would wait for input: the source is live,
 * no complete line is buffered and nothing can be read right now. */
int in_source_would_block(in_reader *r);

/* Make buf hold at least need bytes (plus the padding); -1 out of memory. */
int in_buf_reserve(in_reader *r, size_t need);

/* Copy bytes into a growable owned buffer. 0 ok, -2 out of memory. */
int in_copy(char **dst, size_t *cap, const char *src, size_t n);

int in_next_fp(in_reader *r, in_record *rec);
int in_next_tsv(in_reader *r, in_record *rec);
int in_next_jsonl(in_reader *r, in_record *rec);
/* The two parses of the JSONL line in r->line (in_jsonl.c; tests compare
 * them): fast, 1 a good record or 0 declined; jansson, as in_reader_next. */
int in_jsonl_fast(in_reader *r, in_record *rec);
int in_jsonl_jansson(in_reader *r, in_record *rec);
int in_next_files(in_reader *r, in_record *rec);
int in_next_warc(in_reader *r, in_record *rec);
int in_files_open(in_reader *r, const char *path);
void in_files_close(in_reader *r);
void in_jsonl_close(in_reader *r);

#endif
