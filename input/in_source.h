/*
 * in_source.h — the layer every format reader stands on (in_source.c):
 * the reader's state, its messages, the bytes of a stream input and the
 * lines and blocks cut from them.
 *
 * A reader over a stream (every format but files) reads its bytes through
 * in_source.c: read(2) into one buffer, gzip decoded on the way when the
 * input starts with gzip's magic. The current line or block is a view
 * into that buffer (r->line, r->len), valid until the next read; at least
 * IN_PAD readable bytes follow every view (the fast JSON parser reads up
 * to 64 bytes past the end of its input).
 *
 * The formats (in_lines.c, in_jsonl.c, in_files.c, in_warc.c) call this
 * layer and in_text.c only: never each other, nor the dispatcher
 * (in_reader.c) that calls them through the format table (in_format.h).
 */
#ifndef ND_IN_SOURCE_H
#define ND_IN_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "in_record.h"

#define IN_PAD 64

struct in_reader {
    in_format fmt; /* the row of the format table (in_reader.c) */
    char *path;    /* display name */
    /* the byte source (in_source.c) */
    int fd;          /* -1: none (files format) */
    int live;        /* a pipe, socket or terminal: reads return what has come */
    int eof;         /* every byte of the input is in buf */
    int gzip;        /* 0 plain, 1 inside a gzip member, 2 between members,
                        3 zstd */
    struct in_gz *gz; /* the decoder's state (in_source.c, the only user of
                         zlib and libzstd); NULL for plain input */
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
    int skip_line;   /* the current line passed the limit: drop its rest */
    char err[1024];
    /* owned copies for the current record (jsonl, warc), freed at close */
    char *key;
    size_t key_cap;
    char *text;
    size_t text_cap;
    /* the format's own state (the JSON parser, the files of a walk):
     * made by the format, freed by its close (in_format.h) */
    void *state;
    /* jsonl: the members of the key and the text (NULL: "id", "text"),
     * text_html: the text is HTML (--html-field), taken: IN_TAKES_* of the
     * members "fp", "score", "html" no longer read as such because a
     * chosen name is theirs. Owned by the reader (in_reader.c). */
    char *id_field, *text_field;
    int text_html;
    unsigned taken;
    /* the dispatcher's (in_reader.c): how the format was chosen, the
     * formats the command reads, records returned, a hint given */
    int how;
    unsigned formats;
    int dump_ok;
    uint64_t nrec;
    int hinted;
};

enum { IN_TAKES_FP = 1, IN_TAKES_SCORE = 2, IN_TAKES_HTML = 4 };

/* Set r->err to "FILE:LINE: msg" and return code. */
int in_fail(in_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Set r->err to "NAME: msg" (no line: a file as a whole) and return code. */
int in_fail_file(in_reader *r, int code, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Copy bytes into a growable owned buffer. 0 ok, -2 out of memory. */
int in_copy(char **dst, size_t *cap, const char *src, size_t n);

/* Open path ("-" = stdin) as r's byte source: the open of every stream
 * format. 0, or -2 with the message in r->err ("FILE: cannot open: ..."). */
int in_source_open(in_reader *r, const char *path);
/* Close the source and free the buffer (also of a reader without a
 * source, whose buffer the files format fills). */
void in_source_close(in_reader *r);

/* A read blocked on a pipe or terminal that a signal interrupts (EINTR)
 * is retried unless stop, when set, returns nonzero (in_reader_set_stop). */
void in_source_set_stop(int (*stop)(void));

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

/* Buffer the input's first bytes without consuming them (inference,
 * in_reader.c): read until a line that is not blank is complete, max
 * bytes are held (max <= the buffer's first size) or the input ends. The
 * view r->line, r->len: the bytes held (decoded). 0, or -2 (I/O, corrupt
 * data) with the message in r->err. */
int in_source_peek(in_reader *r, size_t max);

/* The rest of the input as one view r->line, r->len (the files format on
 * a stream: one document). 1, 0 when the input was read before, -1 when
 * it exceeds ND_MAX_DOC_BYTES (the rest is then read and dropped), -2
 * I/O. */
int in_read_all(in_reader *r);

#endif
