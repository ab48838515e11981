/*
 * cli.h — shared pieces of the neardup command-line tool.
 *
 * Of the library the CLI sees only <neardup.h>; it reads its inputs with
 * input/ (in_reader.h) and shares tool/ (cli_common.h, dedupe_common.h)
 * with neardup-mpi. Every command is a function
 * `int cmd_<name>(int argc, char **argv)` (argv[0] is the command name)
 * returning an exit code, one rule for every command (CLI_EXIT_RULE, which
 * `--help` prints):
 *   0    success
 *   1    bad usage or bad input: an unknown option, a missing argument, an
 *        input that cannot be read or holds a malformed record (the message
 *        names file, line and field), a key not found
 *   2    database or output error: the database is missing, not a
 *        database, busy, corrupt, or a read or write of it failed (the
 *        message carries nd_strerror and nd_errmsg); writing the output
 *        failed
 *   130  interrupted (SIGINT; 143 for SIGTERM): see cli_signal.c
 * Commands print results on stdout and diagnostics, one line each, on
 * stderr prefixed by "neardup: ". A usage error is one line naming the
 * problem and ending "; see 'neardup COMMAND --help'", never the help.
 */
#ifndef ND_CLI_H
#define ND_CLI_H

#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <neardup.h>

/* The exit codes, the option parsers and --help test that neardup-mpi
 * shares: tool/. */
#include "cli_common.h"
#include "cli_progress.h"
/* The text forms of keys, fingerprints and times (in_parse_hex64,
 * in_put_field, in_put_json_string...): input/, shared by every output. */
#include "in_text.h"

/* The exit-code rule as `neardup --help` and every `neardup COMMAND --help`
 * state it (cli_help appends it to each command's usage text). */
#define CLI_EXIT_RULE                                                               \
    "Exit status: 0 success; 1 bad usage or input (an unknown option, an input\n"   \
    "that cannot be read, a malformed record, a key not found); 2 database or\n"   \
    "output error (a database missing, not a database, busy or corrupt; a\n"       \
    "failed write); 130 interrupted (143 on SIGTERM).\n"

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
int cmd_repair(int argc, char **argv);
int cmd_backup(int argc, char **argv);
int cmd_expire(int argc, char **argv);
int cmd_dedupe(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_shard(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Open the database at path with ND_DB_* flags; on failure prints the
 * error and returns CLI_EXIT_DB (whatever the cause: missing, a regular
 * file, not a database, busy). */
int cli_open_db(nd_db **out, const char *path, unsigned flags);
/* cli_open_db with nd_db_options.threads (0: the library's default). */
int cli_open_db_threads(nd_db **out, const char *path, unsigned flags, unsigned threads);
/* Close; prints and returns CLI_EXIT_DB on failure. */
int cli_close_db(nd_db *db, const char *path);

/* A long library call's line (verify, compact, expire, repair): start p
 * for verb (shown on a terminal's stderr, or by NEARDUP_PROGRESS) and
 * defer signals, so that the first SIGINT or SIGTERM stops the call at
 * its next consistent point. cli_long_call_step is its nd_progress_cb
 * (payload: p): each phase on the line; 1 (stop) once a signal came. */
void cli_long_call_start(cli_progress *p, const char *verb);
int cli_long_call_step(const nd_progress *np, void *payload);
/* After the call returned nrc: the line cleared; 1 (the call was
 * stopped) says "neardup: VERB: interrupted" and gives
 * CLI_EXIT_INTERRUPTED; an error is printed as "VERB 'PATH': ..."
 * (cli_fail_nd; a usage code becomes CLI_EXIT_DB); else CLI_EXIT_OK. */
int cli_long_call_end(cli_progress *p, int nrc, const char *verb, const char *path);
/* What an interrupted bulk load (VERB: "import", "shard import") kept, on
 * stderr: nothing. */
void cli_load_interrupted(const char *verb);
/* A signal came while the load's commit ran: it finished. */
void cli_load_late_signal(const char *verb);

/* Fingerprint the file at path ("-" = stdin) with the database's
 * fingerprint options (HTML if html), and with sk non-NULL its sketch
 * too (nd_db_sign); prints errors, returns an exit code. */
int cli_fingerprint_file(uint64_t *out, nd_sketch *sk, nd_db *db, const char *path, int html);

/* "neardup: <message>\n" on stderr; returns CLI_EXIT_USAGE. */
int cli_fail(const char *fmt, ...) CLI_PRINTF(1, 2);

/* "neardup: <what>: <nd_strerror(rc)>: <nd_errmsg()>\n" on stderr;
 * returns CLI_EXIT_DB, or CLI_EXIT_USAGE when rc is ND_EINVAL or ND_ELIMIT
 * (the caller's input was at fault). */
int cli_fail_nd(int rc, const char *fmt, ...) CLI_PRINTF(2, 3);

/* cli_wants_help, and if so the usage text and CLI_EXIT_RULE printed to
 * stdout: a command starts with
 * `if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;`. */
int cli_help(int argc, char **argv, const char *usage_text);

/* A usage error of command cmd ("import", "shard init"): one line
 * "neardup: CMD: <message>; see 'neardup CMD --help'" on stderr;
 * returns CLI_EXIT_USAGE. */
int cli_usage_fail(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* getopt_long over long options only, for command cmd: returns the next
 * option's value, -1 after the last option, or '?' after printing an
 * unknown option or a missing argument as a usage error (cli_usage_fail),
 * so that a command's `default:` only returns CLI_EXIT_USAGE. Resets the
 * parse on the first call for an argv (optind = 1 beforehand). */
int cli_getopt(int argc, char **argv, const struct option *longopts, const char *cmd);

/* Completion mode, for main's hidden `neardup __complete COMMAND [SUB]`:
 * after cli_complete_begin the next cli_getopt prints "--help" and every
 * long option of the table it is given, "--NAME" a line, on stdout and
 * ends the process (exit 0) before the command does anything else: what
 * bash completes is what the command parses. cli_completing() is nonzero
 * in that mode (shard lists its subcommands then). */
void cli_complete_begin(void);
int cli_completing(void);

/* Optimal string alignment distance (insertions, deletions,
 * substitutions, adjacent transpositions) of a and b; at most 64 bytes of
 * each are compared. */
unsigned cli_edit_distance(const char *a, const char *b);

/* " (did you mean 'X'?)" or " (did you mean 'X' or 'Y'?)": the names
 * within two edits of word (and fewer edits than it has bytes), the
 * closest ones, into out; "" when none. */
void cli_suggest(char *out, size_t size, const char *word, const char *const *names, size_t n);

/* "1 document", "2 documents": n and the singular or plural noun, for
 * printf's "%llu %s". */
const char *cli_plural(uint64_t n, const char *one, const char *many);

/* A duration with its unit: 90d, 12h, 30m, 45s, 2w -> 0 and *out
 * (seconds). A number without a unit -> -2 (the caller says the unit is
 * missing: "90" is never read as seconds); anything else -> -1. */
int cli_parse_duration(const char *s, int64_t *out);

/* Signals (cli_signal.c). main calls cli_signals_init(COMMAND): SIGINT or
 * SIGTERM then prints "neardup: COMMAND: interrupted" and ends the process
 * by the signal. After cli_signals_defer() the first signal only sets the
 * flag cli_interrupted() returns (the signal number, else 0): the command
 * stops at its next check, cleans up, prints what became of its work and
 * returns CLI_EXIT_INTERRUPTED; main then calls cli_signals_exit(), which
 * flushes stdio and ends the process by the signal (the shell's status is
 * 128 + the signal). A second signal ends the process at once. */
void cli_signals_init(const char *cmd);
void cli_signals_defer(void);
int cli_interrupted(void);
void cli_signals_exit(void);

/* The least --min-resemblance the docs advise (docs/cli.md,
 * "Resemblance": below it the band keys stop finding every candidate). */
#define CLI_ADVISED_MIN_RESEMBLANCE 0.8

/* A store threshold r below CLI_ADVISED_MIN_RESEMBLANCE: one warning line
 * on stderr naming cmd (the threshold is still taken); nothing otherwise. */
void cli_warn_resemblance(const char *cmd, double r);

/* Write a fingerprint as 16 lowercase hex digits. */
void cli_put_hex(FILE *f, uint64_t fp);

#endif /* ND_CLI_H */
