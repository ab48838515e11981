/*
 * cli_docs.h — documents read from inputs, held for a bulk call
 * (nd_db_import, nd_db_batch): records are fingerprinted (unless they carry a
 * fingerprint) and their keys copied into one arena, with the progress
 * line of cli_progress.h. Used by `import`, `batch` and `shard import`. Besides the
 * in_reader formats, `import` and `batch` read `dump`'s lines (in_doc_io.h,
 * --format dump), each document with its own score and time.
 */
#ifndef ND_CLI_DOCS_H
#define ND_CLI_DOCS_H

#include <stdint.h>
#include <stdio.h>

#include <neardup.h>

#include "cli_progress.h"
#include "in_reader.h"

typedef struct cli_docs {
    nd_doc *d;       /* keys (and sketches) valid after cli_docs_seal */
    nd_sketch *sk;   /* the documents' sketches (a resemblance store), or NULL */
    size_t *koff;    /* key offsets in the arena until sealed */
    size_t n, cap;
    char *arena;
    size_t alen, acap;
} cli_docs;

/* Fingerprint of a record: its own, or its text's under fo (HTML when
 * html or the record says so). Prints "FILE:LINE: fingerprint: ..." and
 * returns an exit code on failure. */
int cli_record_fp(uint64_t *out, const in_record *rec, const nd_fp_options *fo, int html);

/* cli_record_fp's returned for a record a resemblance store cannot take
 * (one carrying a fingerprint, no text): the line is printed; the
 * caller counts it bad (skipped with --skip-bad, else exit 1). */
#define CLI_BAD_RECORD (-2)

/* What a record becomes in db: with sk NULL (a fingerprint-only store)
 * as cli_record_fp; with sk (db verifies by resemblance) fingerprint and
 * sketch from one tokenisation (nd_db_sign), CLI_BAD_RECORD for a record
 * without text. */
int cli_record_sign(uint64_t *fp, nd_sketch *sk, const in_record *rec, const nd_fp_options *fo,
                    int html, nd_db *db);

/* Append a record with fingerprint fp, its sketch (NULL: none) and
 * last-seen time; -1 when out of memory (printed). */
int cli_docs_push(cli_docs *l, const in_record *rec, uint64_t fp, const nd_sketch *sk,
                  int64_t time);
/* Append a document (its key bytes copied, its sketch copied when it has
 * one); -1 when out of memory (printed). */
int cli_docs_push_doc(cli_docs *l, const nd_doc *d);
/* Point every document's key into the arena (call before using l->d). */
void cli_docs_seal(cli_docs *l);
void cli_docs_clear(cli_docs *l);
void cli_docs_dispose(cli_docs *l);

/* Documents to hand an nd_loader per call when its chunk is chunk (0: the
 * loader's default): at most a chunk, so that chunks fill exactly, and at
 * most 1M, since the piece is held beside the loader's chunk. */
size_t cli_load_piece(size_t chunk);

/* 1 when an input is live: "-" on a pipe, socket or terminal, or a path
 * naming a FIFO, socket or terminal (what in_source reads as it comes). */
int cli_inputs_live(char **paths, int n);

/* Sum of the sizes of regular files among paths (0 if any is stdin). */
uint64_t cli_inputs_size(char **paths, int n);

/* Read every record of the inputs into l, calling flush(l, payload) each
 * time l holds chunk documents, with o->live whenever a live input has
 * nothing more to give yet (in_reader_would_block), and once at the end
 * (l is cleared after each call). A bad record stops the read (exit 1, the partial chunk is
 * not flushed) unless skip_bad, which counts it in *bad and goes on.
 * Returns an exit code (flush's, if it fails). flush may change o->chunk.
 * A signal (after cli_signals_defer) stops the read at the next record,
 * or flush's caller after a flush: CLI_EXIT_INTERRUPTED, the partial chunk
 * not flushed, nothing printed (the command says what became of it). */
typedef int (*cli_flush_fn)(cli_docs *l, void *payload);
typedef struct cli_read_opts {
    in_format fmt;  /* the format given, or the command's default */
    int fmt_given;  /* --format given; else the format of each input is
                       inferred (in_reader_opts.infer) */
    in_reader_opts in; /* the readers' options: formats the command reads,
                          the JSONL members (--id-field...) */
    int dump; /* --format dump: in_doc_io.h's tsv, fmt unused */
    const nd_fp_options *fo;
    nd_db *sign_db; /* a resemblance store: texts are signed for it; NULL else */
    int html, skip_bad;
    int64_t time;
    size_t chunk; /* 0 = everything in one call */
    cli_progress *progress; /* may be NULL */
    int live; /* on a pipe or terminal, flush what is held before waiting
                 for more input (so each line is answered as it comes) */
} cli_read_opts;
int cli_read_docs(cli_docs *l, char **inputs, int ninputs, cli_read_opts *o,
                  cli_flush_fn flush, void *payload, uint64_t *docs, uint64_t *bad);

/* The input options `import` and `batch` share, as getopt_long values:
 * 'f' --format (the in_reader formats and dump), 'H' --html, 't' --time,
 * 'b' --skip-bad, and the JSONL members (CLI_FIELD_LONGOPTS). Returns 1
 * when opt was one of them and applied, 0 when it is not one of them, and
 * -1 (the error printed, naming cmd) for a bad value. */
int cli_read_option(cli_read_opts *o, int opt, const char *arg, const char *cmd);
/* After the options: cli_fields_check, as a usage error naming cmd
 * (CLI_EXIT_USAGE, printed), else CLI_EXIT_OK. */
int cli_read_check(const cli_read_opts *o, const char *cmd);

/* The reader options of an input read as o says (infer unless a format
 * was given). */
in_reader_opts cli_reader_opts(const cli_read_opts *o);

#endif
