/*
 * cli.h — shared pieces of the neardup command-line tool.
 *
 * The CLI sees only <neardup.h>. Every command is a function
 * `int cmd_<name>(int argc, char **argv)` (argv[0] is the command name)
 * returning an exit code:
 *   0  success
 *   1  bad usage or bad input (message names file, line and field)
 *   2  database error (message carries nd_strerror and nd_errmsg)
 * Commands print results on stdout and diagnostics, one line each, on
 * stderr prefixed by "neardup: ".
 */
#ifndef ND_CLI_H
#define ND_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <neardup.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_USAGE = 1, CLI_EXIT_DB = 2 };

/* The command table lives in main.c; add one row per command there and
 * one declaration here. */
int cmd_fingerprint(int argc, char **argv);
int cmd_distance(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_compact(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_backup(int argc, char **argv);
int cmd_expire(int argc, char **argv);
int cmd_dedupe(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_shard(int argc, char **argv);

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Open the database at path with ND_DB_* flags; on failure prints the
 * error and returns the exit code (CLI_EXIT_DB or CLI_EXIT_USAGE). */
int cli_open_db(nd_db **out, const char *path, unsigned flags);
/* cli_open_db with nd_db_options.threads (0: the library's default). */
int cli_open_db_threads(nd_db **out, const char *path, unsigned flags, unsigned threads);
/* Close; prints and returns CLI_EXIT_DB on failure. */
int cli_close_db(nd_db *db, const char *path);

/* Fingerprint the file at path ("-" = stdin) with the database's
 * fingerprint options (HTML if html); prints errors, returns an exit code. */
int cli_fingerprint_file(uint64_t *out, nd_db *db, const char *path, int html);

/* "words", "shingles:N", "chars:N" (N 1..16; "shingles" alone = the default
 * width) into opts->features / opts->n -> 0; -1 otherwise. */
int cli_parse_features(const char *s, nd_fp_options *opts);

/* "neardup: <message>\n" on stderr; returns CLI_EXIT_USAGE. */
int cli_fail(const char *fmt, ...) CLI_PRINTF(1, 2);

/* "neardup: <what>: <nd_strerror(rc)>: <nd_errmsg()>\n" on stderr;
 * returns CLI_EXIT_DB, or CLI_EXIT_USAGE when rc is ND_EINVAL or ND_ELIMIT
 * (the caller's input was at fault). */
int cli_fail_nd(int rc, const char *fmt, ...) CLI_PRINTF(2, 3);

/* True when argv holds -h or --help: the command prints its usage text
 * to stdout and returns 0. */
int cli_wants_help(int argc, char **argv);

/* cli_wants_help, and if so the usage text printed to stdout: a command
 * starts with `if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;`. */
int cli_help(int argc, char **argv, const char *usage_text);

/* Print usage (to stdout for --help, to stderr after a usage error). */
void cli_usage(FILE *f, const char *text);

/* Exactly 16 hex digits (either case, no 0x, no sign) -> 0 and *out;
 * otherwise -1 and *why names the problem ("too short", "not hex"...). */
int cli_parse_hex64(const char *s, size_t len, uint64_t *out, const char **why);

/* A count such as 1000000, 1e6, 2.5e7, 10M, 3G, 500k -> 0 and *out. */
int cli_parse_count(const char *s, uint64_t *out);

/* A whole number in [lo, hi] -> 0 and *out; -1 otherwise. */
int cli_parse_uint(const char *s, unsigned long lo, unsigned long hi,
                   unsigned long *out);

/* ND_BATCH_THREADS from the environment (1..64), else 0 (unset or out of
 * range): the threads of nd_db_batch, which the batch commands pass as
 * nd_db_options.threads (the library reads no environment). */
unsigned cli_batch_threads(void);

/* A duration: 90d, 12h, 30m, 45s, 2w, or plain seconds -> 0 and *out. */
int cli_parse_duration(const char *s, int64_t *out);

/* Write key bytes as one TSV field: backslash, tab, newline, CR and other
 * control bytes are escaped (\\ \t \n \r \xHH); everything else verbatim. */
void cli_put_field(FILE *f, const char *bytes, size_t len);

/* Write bytes as a JSON string (with quotes): ", \ and control bytes are
 * escaped; valid UTF-8 passes through; each byte of an invalid UTF-8
 * sequence becomes \u00XX (so such keys are readable, not round-trippable:
 * use TSV output for exact bytes). */
void cli_put_json_string(FILE *f, const char *bytes, size_t len);

/* Write a fingerprint as 16 lowercase hex digits. */
void cli_put_hex(FILE *f, uint64_t fp);

#endif /* ND_CLI_H */
