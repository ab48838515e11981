/*
 * in_reader.h — pull readers for the tools' input formats; the main
 * header of input/.
 *
 * input/ owns the reading of documents from files and streams: the
 * formats below (a table of rows, in_format.h, one file per format:
 * in_lines.c, in_jsonl.c, in_files.c, in_warc.c, dispatched by
 * in_reader.c), the byte source under them (in_source.c: read(2), gzip,
 * lines), dump's lines both ways (in_doc_io.h) and the text forms of keys
 * and fingerprints every output shares (in_text.h). Its public headers
 * are this one, in_doc_io.h and in_text.h; the rest is internal (tests
 * may use it). Calls go down only: in_reader.c -> the formats ->
 * in_source.c and in_text.c; no format calls another or the dispatcher.
 * in_guess.c (in_format_guess) is a pure function of a name and bytes,
 * which the dispatcher calls to infer a format and to word its hints.
 * It may call libc, <neardup.h> (its limits and types: no function of
 * the library, so a program links whichever library it wants), zlib and
 * libzstd (in_source.c alone), jansson (in_jsonl.c alone) and simdjson
 * (in_json_fast.cpp alone); nothing of cli/, tool/ or mpi/. One internal
 * static library (input/meson.build), linked by neardup, neardup-mpi,
 * tool/ and the readers' tests and fuzz target.
 *
 *   fp     lines HEX16[<TAB>KEY]; KEY defaults to the hex text
 *   jsonl  {"id": string|integer, "text": string} or {"id":..., "fp": "HEX16"},
 *          optional "score": number and "html": true; the key's and the
 *          text's members may be named otherwise (in_reader_opts)
 *   tsv    KEY<TAB>TEXT (TEXT may hold further tabs)
 *   files  each regular file is a document, key = its path; directories are
 *          walked recursively in sorted order; symbolic links are
 *          followed (key = the path through the link), a link back to a
 *          directory of the walk is reported as a bad record (a loop), so
 *          is a dangling link; other kinds of files (FIFOs, sockets,
 *          devices) met inside a walk are skipped; .html/.htm/.xhtml files
 *          are HTML
 *   warc   WARC 1.0/1.1, plain or gzip (detected by content, members may be
 *          concatenated): "response" records (HTTP headers skipped; HTML
 *          when Content-Type is text/html) and "conversion" records (text);
 *          key = WARC-Target-URI; other record types are skipped
 * Line formats and WARC also read gzip- and zstd-compressed input
 * transparently (told by content: gzip's magic, zstd's). On a pipe,
 * socket or terminal a record is returned as soon as its line is
 * complete (reads take what has come; gzip is told by its first two
 * bytes, zstd by its first four). Without a --format the format is
 * inferred (in_reader_opts.infer, in_format_guess).
 *
 * Limits: a line, file or record body of at most ND_MAX_DOC_BYTES (64 MiB);
 * a key of 1..ND_MAX_KEY_LEN bytes without NUL bytes. Texts are bytes:
 * invalid UTF-8 and NUL bytes pass through to the fingerprinter.
 *
 * in_reader_next returns 1 (a record), 0 (end), -1 (a bad record: the
 * message "FILE:LINE: FIELD: problem" is in in_reader_error — "FILE:
 * problem" for a whole file of the files format; calling next again
 * skips it) or -2 (fatal: unreadable input, truncated gzip, a record
 * running past the end of the file). A record's memory is valid until the
 * next call. An input that cannot be opened: "FILE: cannot open: REASON".
 */
#ifndef ND_IN_READER_H
#define ND_IN_READER_H

#include <stddef.h>
#include <stdint.h>

#include "in_guess.h"
#include "in_record.h"


/* "fp", "jsonl", "tsv", "files", "warc" -> 0; -1 otherwise. */
int in_format_parse(const char *s, in_format *out);
/* The word of --format for fmt ("dump" for IN_FORMAT_DUMP). */
const char *in_format_name(in_format fmt);

/* in_format_guess, the rule inference goes by: in_guess.h. */


/* How in_reader_open reads an input; NULL: as { 0 } (fmt as given, the
 * JSONL members "id" and "text"). */
typedef struct in_reader_opts {
    /* 1: fmt is only the command's default (no --format given): infer the
     * format. A directory is files (when formats has it); otherwise the
     * first bytes are read (after decompression: up to the first complete
     * line that is not blank, IN_GUESS_BYTES or the end) and
     * in_format_guess decides among formats; when it names none of them,
     * fmt. files then reads a regular file whole as before; a stream
     * (stdin, a FIFO) becomes one document with stream_document, else the
     * open fails ("cannot tell the format"). A dump-looking input fails
     * the open ("use --format dump" when dump is set). */
    int infer;
    unsigned formats;    /* IN_BIT of each format the command reads; 0 = all */
    int dump;            /* the command reads --format dump (for the messages) */
    int stream_document; /* with infer: a stream of no record format is one
                            document (key: "-" for stdin, else the path) */
    /* jsonl: the member holding the key (NULL: "id") and the one holding
     * the text (NULL: "text"); html_field, instead of text_field: the text
     * is this member and is HTML. A chosen name takes the member over: one
     * called "fp", "score" or "html" is no longer read as such. */
    const char *id_field, *text_field, *html_field;
} in_reader_opts;

/* Open path ("-" = stdin; not for files) as fmt (or, with opts->infer, as
 * inferred). On failure returns -2 with the message in
 * in_reader_error(NULL).
 *
 * Hints: the first bad record of an input (and only it) may end with what
 * the input looks like:
 *   - when it is the input's first record and its line looks like another
 *     record format: "FILE:1: fingerprint '{"id"...': not a hex digit;
 *     this looks like JSONL: use --format jsonl" (or "..., which this
 *     command does not read" when opts->formats lacks it);
 *   - without a --format (opts->infer), when that line is no record at
 *     all: "...; this looks like plain text: use --format files" (or
 *     "..., not fp, jsonl or tsv records");
 *   - otherwise, for a format inferred from a TSV or fingerprint first
 *     line or from the name: "...; format tsv inferred from the first
 *     line: give --format to choose".
 * An input of the format it is read as, given or inferred from a '{' or
 * "WARC/1." start, gets no hint: its messages are as they always were.
 */
int in_reader_open(in_reader **out, in_format fmt, const char *path, const in_reader_opts *opts);
/* The format r reads (the given or inferred one). */
in_format in_reader_format(const in_reader *r);
int in_reader_next(in_reader *r, in_record *rec);
/* Last message of r, or of the last failed open when r is NULL. */
const char *in_reader_error(const in_reader *r);
/* Input bytes consumed so far (compressed bytes for gzip). */
uint64_t in_reader_bytes(const in_reader *r);
/* 1 when the next in_reader_next would wait for input: the input is live,
 * holds no complete line (line formats) and has nothing to read now. A
 * command that answers as it reads answers what it holds first. */
int in_reader_would_block(in_reader *r);

/* A read blocked on a pipe or terminal that a signal interrupts (EINTR)
 * is retried unless stop, when set, returns nonzero: then the read fails
 * with "interrupted", so a command that defers its signals (cli_signal.c)
 * gets back control to clean up. One setting for the process; NULL (the
 * default) always retries. */
void in_reader_set_stop(int (*stop)(void));
void in_reader_close(in_reader *r); /* accepts NULL */

#endif
