/*
 * cli_signal.c — what SIGINT and SIGTERM do to a command.
 *
 * By default (cli_signals_init, called by main) a signal ends the command
 * at once, as it would without a handler, after one line
 * "neardup: COMMAND: interrupted" on stderr. That is safe for every
 * command: each write of the library is atomic and durable, so what was
 * acknowledged stays and nothing half-done survives the next open.
 *
 * A command with something to clean up or report (the bulk loader's
 * temporary files, the count of documents added) calls cli_signals_defer:
 * the first signal then only records itself, the command reads it with
 * cli_interrupted between records and between library calls, stops,
 * cleans up, says what became of its work and returns
 * CLI_EXIT_INTERRUPTED. main then ends the process by that same signal
 * (cli_signals_exit), so that a shell sees the command killed by it (exit
 * status 130 for SIGINT, 143 for SIGTERM) and a script running it stops
 * as well. A second signal ends the process at once, as by default.
 *
 * A signal the process inherited as ignored stays ignored (a script's
 * background job ignores SIGINT, so that ^C to the script leaves it be).
 * The handlers are installed without SA_RESTART, so that a read blocked
 * on a terminal or a pipe returns (EINTR) and the command sees the flag;
 * the kernel gives a process's signal to its main thread, which reads the
 * input, unless that thread blocks it.
 */
#include "cli.h"
#include "in_reader.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t deferring, pending;
static char die_msg[160];
static size_t die_len;

/* Async-signal-safe: write the message and die by sig. */
static void die_by(int sig)
{
    if (die_len) {
        ssize_t w = write(2, die_msg, die_len);
        (void)w;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached */
}

static void on_signal(int sig)
{
    if (deferring && !pending) {
        pending = sig;
        return;
    }
    die_by(sig);
}

void cli_signals_init(const char *cmd)
{
    /* On a terminal the line may hold a progress line (or the ^C echo):
     * return to its start and clear it first. */
    const char *clear = isatty(2) ? "\r\033[K" : "";
    int n = snprintf(die_msg, sizeof die_msg, "%sneardup: %.60s: interrupted\n", clear, cmd);
    die_len = n > 0 && (size_t)n < sizeof die_msg ? (size_t)n : 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocked read returns */
    const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

void cli_signals_defer(void)
{
    deferring = 1;
    in_reader_set_stop(cli_interrupted); /* a blocked read returns to the command */
}

int cli_interrupted(void) { return pending; }

void cli_signals_exit(void)
{
    int sig = pending;
    if (!sig) return;
    fflush(NULL);
    die_len = 0; /* the command said what happened */
    die_by(sig);
}
