/*
 * cli_progress.c — the progress line of the long commands: when it is
 * shown, and its one format (see cli_progress.h).
 */
#include "cli_progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* NEARDUP_PROGRESS=1 or all: shown; 0: not; else the mode decides. */
static int shown(int mode)
{
    const char *env = getenv("NEARDUP_PROGRESS");
    if (env && (strcmp(env, "1") == 0 || strcmp(env, "all") == 0)) return 1;
    if (env && strcmp(env, "0") == 0) return 0;
    switch (mode) {
    case CLI_PROGRESS_ON: return 1;
    case CLI_PROGRESS_OFF: return 0;
    case CLI_PROGRESS_QUIET_TTY: return isatty(2) && !isatty(1);
    default: return isatty(2);
    }
}

void cli_progress_start_mode(cli_progress *p, const char *verb, uint64_t total_bytes, int mode)
{
    memset(p, 0, sizeof *p);
    p->verb = verb;
    p->unit = "docs";
    p->tty = shown(mode);
    const char *env = getenv("NEARDUP_PROGRESS");
    p->every = env && strcmp(env, "all") == 0;
    p->start = p->phase_start = now_s();
    p->last = p->start - 1.0; /* the first update shows at once */
    p->total_bytes = total_bytes;
}

void cli_progress_start(cli_progress *p, const char *verb, uint64_t total_bytes)
{
    cli_progress_start_mode(p, verb, total_bytes, CLI_PROGRESS_AUTO);
}

void cli_progress_phase(cli_progress *p, const char *phase, const char *unit, uint64_t total)
{
    p->phase = phase;
    p->unit = unit ? unit : "docs";
    p->total = total;
    p->phase_start = now_s();
    p->last = p->phase_start - 1.0;
}

/* A duration as the ETA shows it: 42s, 3m07s, 2h05m. */
static void put_duration(char *buf, size_t size, double s)
{
    unsigned long t = s < 0 ? 0 : s > 3.6e8 ? 360000000ul : (unsigned long)(s + 0.5);
    if (t < 60) snprintf(buf, size, "%lus", t);
    else if (t < 3600) snprintf(buf, size, "%lum%02lus", t / 60, t % 60);
    else snprintf(buf, size, "%luh%02lum", t / 3600, t / 60 % 60);
}

void cli_progress_format(char *buf, size_t size, const cli_progress *p, uint64_t count,
                         uint64_t bytes, double elapsed)
{
    size_t len = 0;
#define PUT(...)                                                                        \
    do {                                                                                \
        int w_ = snprintf(buf + len, len < size ? size - len : 0, __VA_ARGS__);         \
        if (w_ > 0) len += (size_t)w_;                                                  \
    } while (0)
    if (size == 0) return;
    buf[0] = '\0';
    double share = -1; /* of the work done, when known */
    PUT("%s: ", p->verb);
    if (p->phase) PUT("%s: ", p->phase);
    PUT("%llu", (unsigned long long)count);
    if (p->total && !bytes) {
        share = (double)count / (double)p->total;
        PUT(" of %llu %s (%.0f%%)", (unsigned long long)p->total, p->unit,
            100 * (share < 1 ? share : 1));
    } else {
        PUT(" %s", p->unit);
    }
    if (bytes && p->total_bytes) {
        share = (double)bytes / (double)p->total_bytes;
        PUT(", %.1f of %.1f MB (%.0f%%)", (double)bytes / 1e6, (double)p->total_bytes / 1e6,
            100 * (share < 1 ? share : 1));
    } else if (bytes) {
        PUT(", %.1f MB", (double)bytes / 1e6);
    }
    double rate = elapsed > 0 ? (double)count / elapsed : 0;
    if (count) PUT(rate < 10 ? ", %.1f %s/s" : ", %.0f %s/s", rate, p->unit);
    if (share > 0) {
        char eta[32];
        put_duration(eta, sizeof eta, share < 1 ? elapsed * (1 - share) / share : 0);
        PUT(", ETA %s", eta);
    }
#undef PUT
    if (len >= size) buf[size - 1] = '\0';
}

/* The line on the terminal now, for cli_progress_clear. */
static cli_progress *drawn;

/* Draw line over the one drawn before (spaces over what it leaves). */
static void draw(cli_progress *p, const char *line)
{
    int w = (int)strlen(line);
    fprintf(stderr, "\r%s%*s", line, p->width > w ? p->width - w : 0, "");
    p->width = w;
    drawn = p;
    fflush(stderr);
}

void cli_progress_clear(void)
{
    if (!drawn || !drawn->width) return;
    fprintf(stderr, "\r%*s\r", drawn->width, "");
    drawn->width = 0;
    drawn->last = 0; /* drawn again at the next update */
}

void cli_progress_update(cli_progress *p, uint64_t count, uint64_t bytes)
{
    if (!p->tty) return;
    double t = now_s();
    if (t - p->last < 0.5 && !p->every) return;
    p->last = t;
    char line[512];
    cli_progress_format(line, sizeof line, p, count, bytes, t - p->phase_start);
    draw(p, line);
}

void cli_progress_note(cli_progress *p, const char *fmt, ...)
{
    if (!p->tty) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    draw(p, line);
}

double cli_progress_end(cli_progress *p)
{
    if (p->tty && p->width) fprintf(stderr, "\r%*s\r", p->width, "");
    p->width = 0;
    if (drawn == p) drawn = NULL;
    return now_s() - p->start;
}
