/*
 * cli_progress.h — the one progress line of the neardup tool's long
 * commands (import, add, batch, dedupe with its join phases, shard split
 * and shard import): drawn on stderr, replaced in place at most twice a
 * second, cleared before the summary. One formatter for all of them:
 *
 *   VERB[: PHASE]: COUNT[ of TOTAL] UNIT[ (P%)][, MB[ of MB] MB (P%)]
 *       [, RATE UNIT/s][, ETA T]
 *
 * e.g. "import: 8192 docs, 0.2 of 0.4 MB (50%), 40960 docs/s, ETA 1s" and
 * "dedupe: self-join: 40960 of 81920 fingerprints (50%), 409600
 * fingerprints/s, ETA 1s". The share done, and the ETA (the phase's time so
 * far times what is left over what is done), come from the input bytes read
 * against their size when the inputs are regular files, else from the count
 * against its total when that is known (the documents of a split's source,
 * a dedupe phase's work); without either there is neither. The rate (per
 * second of the phase) is left out while the count is 0; T is 42s, 3m07s
 * or 2h05m.
 *
 * When it is shown: on a terminal only (CLI_PROGRESS_*, below), never in a
 * pipe or a file unless forced: by a command's --progress, or for tests by
 * NEARDUP_PROGRESS=1 in the environment (NEARDUP_PROGRESS=all: and every
 * update drawn, not two a second, so that a test sees each phase's lines;
 * NEARDUP_PROGRESS=0: never). The CLI reads that variable; the library
 * never does.
 */
#ifndef ND_CLI_PROGRESS_H
#define ND_CLI_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cli_progress {
    const char *verb;     /* "import", "shard split"; NULL: not started */
    const char *phase;    /* NULL, or the phase shown after the verb */
    const char *unit;     /* what the count counts ("docs") */
    int tty;              /* shown (the name stays: a terminal is what shows it) */
    int every;            /* NEARDUP_PROGRESS=all: every update drawn */
    double start, phase_start, last; /* last: when a line was drawn (0: draw the next) */
    uint64_t total_bytes; /* input bytes to read; 0 = unknown */
    uint64_t total;       /* the count's total, used without bytes; 0 = unknown */
    int width;            /* of the line drawn last, to clear it */
} cli_progress;

/* When a command shows progress: CLI_PROGRESS_AUTO when stderr is a
 * terminal; CLI_PROGRESS_QUIET_TTY also needs stdout not to be one (a
 * command printing a line per document there would be garbled by it);
 * CLI_PROGRESS_ON always (--progress); CLI_PROGRESS_OFF never.
 * NEARDUP_PROGRESS=1 (or all) or 0 in the environment overrides each. */
enum { CLI_PROGRESS_AUTO, CLI_PROGRESS_QUIET_TTY, CLI_PROGRESS_ON, CLI_PROGRESS_OFF };

/* Start the clock of verb's line (unit "docs", no phase); total_bytes is
 * the inputs' size (cli_inputs_size; 0 = unknown). */
void cli_progress_start(cli_progress *p, const char *verb, uint64_t total_bytes);
/* cli_progress_start with a CLI_PROGRESS_* mode. */
void cli_progress_start_mode(cli_progress *p, const char *verb, uint64_t total_bytes, int mode);
/* A new phase (NULL: none) counting unit, of total (0 = unknown; its share
 * and ETA then come from the bytes, if any are given): its own clock, and
 * the next update is drawn at once. */
void cli_progress_phase(cli_progress *p, const char *phase, const char *unit, uint64_t total);
/* Draw the line for count units and bytes of input read (0: the bytes
 * are not known); at most twice a second, the first at once. */
void cli_progress_update(cli_progress *p, uint64_t count, uint64_t bytes);
/* Replace the line by a note such as "import: writing the store..." (a
 * long single call ahead); nothing when progress is not shown. */
void cli_progress_note(cli_progress *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Clear the line; returns the seconds since start. */
double cli_progress_end(cli_progress *p);
/* Clear whatever line is drawn, so that a diagnostic starts a line of its
 * own (cli_fail and cli_fail_nd call it); the next update draws again. */
void cli_progress_clear(void);

/* The line itself (without the leading \r) for count, bytes and the
 * phase's elapsed seconds, into buf: what cli_progress_update draws. */
void cli_progress_format(char *buf, size_t size, const cli_progress *p, uint64_t count,
                         uint64_t bytes, double elapsed);

#endif
