/*
 * cli_util.c — error reporting, option parsing and the small parsers and
 * writers the commands of neardup share. What neardup-mpi shares too is
 * tool/cli_common.c; the text forms of keys and fingerprints are
 * input/in_text.c.
 */
#include "cli.h"
#include "cli_progress.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    cli_progress_clear();
    fputs("neardup: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_USAGE;
}

int cli_fail_nd(int rc, const char *fmt, ...)
{
    va_list ap;
    cli_progress_clear();
    fputs("neardup: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const char *detail = nd_errmsg(), *what = nd_strerror(rc);
    /* "out of memory: out of memory for ..." says it once */
    if (strncmp(detail, what, strlen(what)) == 0) what = "";
    fprintf(stderr, ": %s%s%s\n", what, what[0] && detail[0] ? ": " : "", detail);
    return (rc == ND_EINVAL || rc == ND_ELIMIT) ? CLI_EXIT_USAGE : CLI_EXIT_DB;
}

int cli_help(int argc, char **argv, const char *usage_text)
{
    if (!cli_wants_help(argc, argv)) return 0;
    fputs(usage_text, stdout);
    fputs(CLI_EXIT_RULE, stdout);
    return 1;
}

int cli_usage_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "neardup: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; see 'neardup %s --help'\n", cmd);
    return CLI_EXIT_USAGE;
}

/* How many long options name (the text after "--", up to '=') is a
 * prefix of, and the last one matched (getopt_long's own matching rule). */
static int count_matches(const struct option *longopts, const char *name, size_t len,
                         const struct option **match)
{
    int n = 0;
    for (const struct option *o = longopts; o->name; o++) {
        if (strncmp(o->name, name, len) != 0) continue;
        *match = o;
        if (strlen(o->name) == len) return 1; /* exact */
        n++;
    }
    return n;
}

static int completing;

void cli_complete_begin(void) { completing = 1; }

int cli_completing(void) { return completing; }

/* The completion of a command: its table, then the end of the process. */
static void complete_options(const struct option *longopts)
{
    puts("--help");
    for (const struct option *o = longopts; o->name; o++) printf("--%s\n", o->name);
    fflush(stdout);
    exit(ferror(stdout) ? CLI_EXIT_DB : CLI_EXIT_OK);
}

int cli_getopt(int argc, char **argv, const struct option *longopts, const char *cmd)
{
    if (completing) complete_options(longopts);
    /* ':' first: a missing value is ':' (not '?'), and getopt stays silent
     * (opterr = 0) so that the one message is ours. */
    opterr = 0;
    int opt = getopt_long(argc, argv, ":", longopts, NULL);
    if (opt != '?' && opt != ':') return opt;
    const char *arg = argv[optind - 1];
    if (opt == ':') {
        cli_usage_fail(cmd, "option '%s' needs a value", arg);
        return '?';
    }
    if (strncmp(arg, "--", 2) != 0) {
        cli_usage_fail(cmd, "unrecognized option '-%c'", optopt ? optopt : arg[1]);
        return '?';
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const struct option *match = NULL;
    int n = count_matches(longopts, name, len, &match);
    if (n == 1 && eq && match->has_arg == no_argument)
        cli_usage_fail(cmd, "option '--%s' takes no value", match->name);
    else if (n > 1)
        cli_usage_fail(cmd, "option '--%.*s' is ambiguous", (int)len, name);
    else
        cli_usage_fail(cmd, "unrecognized option '--%.*s'", (int)len, name);
    return '?';
}

unsigned cli_edit_distance(const char *a, const char *b)
{
    enum { MAXLEN = 64 };
    size_t n = strnlen(a, MAXLEN), m = strnlen(b, MAXLEN);
    unsigned d[MAXLEN + 1][MAXLEN + 1];
    for (size_t i = 0; i <= n; i++) d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

void cli_suggest(char *out, size_t size, const char *word, const char *const *names, size_t n)
{
    enum { MAX_EDITS = 2 };
    unsigned best = MAX_EDITS + 1;
    for (size_t i = 0; i < n; i++) {
        unsigned e = cli_edit_distance(word, names[i]);
        if (e < best) best = e;
    }
    out[0] = '\0';
    /* as many edits as the word has letters is no longer a typo of it */
    if (best > MAX_EDITS || best >= strlen(word) || size == 0) return;
    size_t len = 0, found = 0;
    for (size_t i = 0; i < n && len < size; i++) {
        if (cli_edit_distance(word, names[i]) != best) continue;
        int w = snprintf(out + len, size - len, "%s'%s'", found ? " or " : " (did you mean ",
                         names[i]);
        if (w < 0) break;
        len += (size_t)w;
        found++;
    }
    if (len < size) snprintf(out + len, size - len, "?)");
}

const char *cli_plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

int cli_parse_duration(const char *s, int64_t *out)
{
    char *end;
    if (!s || !isdigit((unsigned char)*s)) return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || v < 0) return -1;
    long long mul;
    switch (*end) {
    case '\0': return -2; /* a bare number: seconds or days? say so */
    case 's': mul = 1; break;
    case 'm': mul = 60; break;
    case 'h': mul = 3600; break;
    case 'd': mul = 86400; break;
    case 'w': mul = 7 * 86400; break;
    default: return -1;
    }
    if (end[1] || v > INT64_MAX / mul) return -1;
    *out = (int64_t)(v * mul);
    return 0;
}

void cli_warn_resemblance(const char *cmd, double r)
{
    if (!(r > 0 && r < CLI_ADVISED_MIN_RESEMBLANCE)) return;
    fprintf(stderr,
            "neardup: %s: warning: --min-resemblance %g is below %g, where the band keys "
            "stop finding every candidate; choose %g or more (docs/cli.md, \"Resemblance\")\n",
            cmd, r, CLI_ADVISED_MIN_RESEMBLANCE, CLI_ADVISED_MIN_RESEMBLANCE);
}

void cli_put_hex(FILE *f, uint64_t fp) { fprintf(f, "%016llx", (unsigned long long)fp); }
