/*
 * cli_common.h — what the two command-line tools, neardup (cli/) and
 * neardup-mpi (mpi/), share besides the library and the readers: their
 * exit codes, the parsers of option values they both take, the test for
 * --help, and the decision line both batch commands print (one writer,
 * so that their outputs stay byte-equal). dedupe_common.h is the other
 * half of tool/: the dedupe commands' options and output lines.
 *
 * tool/ sees <neardup.h> (types only: it calls no function of the
 * library) and input/'s in_text.h and in_reader.h (the reader options
 * its field options fill); cli/ and mpi/ call it, nothing of it calls
 * them.
 */
#ifndef ND_CLI_COMMON_H
#define ND_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <neardup.h>

#include "in_reader.h"

/* The exit codes (the rule: cli.h, and mpi_cmds.h for neardup-mpi). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_USAGE = 1, CLI_EXIT_DB = 2, CLI_EXIT_INTERRUPTED = 130 };

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* "words", "shingles:N", "chars:N" (N 1..16; "shingles" alone = the default
 * width) into opts->features / opts->n -> 0; -1 otherwise. */
int cli_parse_features(const char *s, nd_fp_options *opts);

/* True when argv holds -h or --help: the command prints its usage text
 * to stdout and returns 0. */
int cli_wants_help(int argc, char **argv);

/* Print a usage text as it is (neardup-mpi's help, with its own rule). */
void cli_usage(FILE *f, const char *text);

/* A count such as 1000000, 1e6, 2.5e7, 10M, 3G, 500k -> 0 and *out. */
int cli_parse_count(const char *s, uint64_t *out);

/* A whole number in [lo, hi] -> 0 and *out; -1 otherwise. */
int cli_parse_uint(const char *s, unsigned long lo, unsigned long hi,
                   unsigned long *out);

/* ND_BATCH_THREADS from the environment (1..64), else 0 (unset or out of
 * range): the threads of nd_db_batch, which the batch commands pass as
 * nd_db_options.threads (the library reads no environment). */
unsigned cli_batch_threads(void);

/* One decision line of `add`, `batch` and `neardup-mpi batch`: "new\tKEY" or
 * "dup\tKEY\tMATCH\tDIST", or as JSON {"status","key","match","dist"}; a
 * dup in a resemblance store (res >= 0) adds "\tRES" (%.3f), JSON
 * "resemblance". */
void cli_print_decision(FILE *f, int json, const char *key, size_t key_len, int dup,
                        const char *match, size_t match_len, unsigned dist, double res);

/* The JSONL member options of every command that reads records, as
 * getopt_long values: list CLI_FIELD_LONGOPTS in the command's options,
 * hand each value to cli_field_option, then check with cli_fields_check.
 *   --id-field F    the member holding the key (default "id")
 *   --text-field F  the member holding the text (default "text")
 *   --html-field F  the member holding the text, which is HTML (instead of
 *                   --text-field) */
enum { CLI_OPT_ID_FIELD = 0x1001, CLI_OPT_TEXT_FIELD, CLI_OPT_HTML_FIELD };
#define CLI_FIELD_LONGOPTS                                                   \
    {"id-field", required_argument, 0, CLI_OPT_ID_FIELD},                    \
        {"text-field", required_argument, 0, CLI_OPT_TEXT_FIELD},            \
        {"html-field", required_argument, 0, CLI_OPT_HTML_FIELD}
/* The --help lines of the three options (each command's usage text). */
#define CLI_FIELD_HELP                                                               \
    "  --id-field F, --text-field F, --html-field F\n"                               \
    "             JSONL: the members holding the key (default \"id\") and the\n"      \
    "             text (default \"text\"; with --html-field the text is HTML)\n"

/* The sentence of each command's --help on inference: DIR is what a
 * directory is ("a directory is files; else " or ""), DEFAULT the
 * command's format when nothing tells. */
#define CLI_INFER_HELP(DIR, DEFAULT)                                                  \
    "Without --format each input's format is inferred (docs/cli.md, \"Input\n"        \
    "formats\"): " DIR "by its first line ('{' jsonl, 'WARC/1.' warc, 16 hex\n"       \
    "digits fp, KEY<TAB>TEXT tsv), else by its name (.jsonl .ndjson .json, .tsv,\n"   \
    ".warc, also under .gz or .zst), else " DEFAULT "; a first line that is not\n"   \
    "of the format read is an error saying what it looks like. gzip and zstd\n"     \
    "inputs are decompressed (told by their first bytes).\n"

/* Apply one of the options to o: 1 applied, 0 not one of them, -1 a bad
 * value (*why: the message). */
int cli_field_option(in_reader_opts *o, int opt, const char *arg, const char **why);
/* After the options: NULL, or why they do not go together (--text-field
 * with --html-field; two options naming one member; a field option with
 * a --format given (fmt_given) that is not jsonl). */
const char *cli_fields_check(const in_reader_opts *o, int fmt_given, in_format fmt);

/* The resemblance store's refusal of a fingerprint-only record. */
#define CLI_NEEDS_TEXT "this store verifies by resemblance: records need text, not a fingerprint"

#endif
