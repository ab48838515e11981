/*
 * bench_fingerprint.c — throughput of nd_fingerprint, in MB of input per
 * second on one core, over real text found on the machine.
 *
 * Two corpora are loaded into memory first, so that only fingerprinting is
 * timed: plain text (the roff sources of man pages, gzipped under
 * /usr/share/man and read through zlib, plus /usr/share/common-licenses and
 * /usr/share/doc/PKG/copyright) and HTML (every .html under /usr/share/doc).
 * Each mode fingerprints the whole corpus once per run, document by
 * document, as a crawler would; the report gives the median, minimum and
 * maximum of the runs in MB per second of the thread's CPU time (which a
 * busy machine disturbs less than the wall clock), and the median by the
 * wall clock. Modes: text with word features, text with the
 * default features, HTML (ND_FP_HTML) with the default features, and the
 * same pages' extracted text (nd_html_extract: body, newline, title) as
 * plain text with the default features, so that the HTML rate (per byte of
 * HTML) and the text rate of the very same pages stand side by side.
 *
 * Single-threaded by construction; pin it to a core with taskset for
 * stable figures. Uses only <neardup.h> (and zlib to read man pages).
 * Usage: bench_fingerprint [--runs N] [--max-mb M] [--only words|default|html|html-text]
 *        [--text FILE]... [--html FILE]...  (files given replace the default
 *        corpus; --max-mb caps each corpus, default 48).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>

#include <neardup.h>

typedef struct doc {
    char *p;
    size_t n;
} doc;

typedef struct corpus {
    doc *d;
    size_t n, cap, bytes, max_bytes;
} corpus;

static void die(const char *what)
{
    fprintf(stderr, "bench_fingerprint: %s\n", what);
    exit(1);
}

/* Whole file, through zlib: gzread passes plain files through unchanged. */
static int load_file(corpus *c, const char *path)
{
    if (c->bytes >= c->max_bytes) return 0;
    gzFile f = gzopen(path, "rb");
    if (!f) return 0;
    size_t cap = 1 << 16, n = 0;
    char *p = malloc(cap);
    if (!p) die("out of memory");
    for (;;) {
        if (n == cap) {
            cap *= 2;
            p = realloc(p, cap);
            if (!p) die("out of memory");
        }
        int r = gzread(f, p + n, (unsigned)(cap - n));
        if (r <= 0) break;
        n += (size_t)r;
    }
    gzclose(f);
    if (n == 0 || n > ND_MAX_DOC_BYTES) {
        free(p);
        return 0;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 1024;
        c->d = realloc(c->d, c->cap * sizeof *c->d);
        if (!c->d) die("out of memory");
    }
    c->d[c->n++] = (doc){p, n};
    c->bytes += n;
    return 1;
}

/* Files matching pattern, every stride-th one in sorted order (so a capped
 * corpus samples the whole set instead of the first letters). */
static void load_glob(corpus *c, const char *pattern, size_t stride)
{
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) return;
    for (size_t i = 0; i < g.gl_pathc; i += stride) load_file(c, g.gl_pathv[i]);
    globfree(&g);
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sink for the fingerprints, so no call can be optimised away. */
static volatile uint64_t sink;

static void run_mode(const char *name, const corpus *c, const nd_fp_options *o, int runs)
{
    double *mbs = malloc((size_t)runs * sizeof *mbs), *wall = malloc((size_t)runs * sizeof *wall);
    if (!mbs || !wall) die("out of memory");
    for (int r = 0; r < runs; r++) {
        uint64_t x = 0;
        double w0 = clock_s(CLOCK_MONOTONIC), t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        for (size_t i = 0; i < c->n; i++) {
            uint64_t fp;
            if (nd_fingerprint(&fp, c->d[i].p, c->d[i].n, o) != ND_OK) {
                fprintf(stderr, "bench_fingerprint: %s\n", nd_errmsg());
                exit(1);
            }
            x ^= fp;
        }
        double t = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0, tw = clock_s(CLOCK_MONOTONIC) - w0;
        sink ^= x;
        mbs[r] = (double)c->bytes / 1e6 / t;
        wall[r] = (double)c->bytes / 1e6 / tw;
    }
    qsort(mbs, (size_t)runs, sizeof *mbs, cmp_double);
    qsort(wall, (size_t)runs, sizeof *wall, cmp_double);
    printf("%-16s %9.1f %9.1f %9.1f %11.1f %5d\n", name, median(mbs, runs), mbs[0],
           mbs[runs - 1], median(wall, runs), runs);
    fflush(stdout);
    free(mbs);
    free(wall);
}

int main(int argc, char **argv)
{
    int runs = 7;
    const char *only = NULL;
    double max_mb = 48;
    corpus text = {0}, html = {0};
    const char **tfiles = calloc((size_t)argc, sizeof *tfiles);
    const char **hfiles = calloc((size_t)argc, sizeof *hfiles);
    size_t nt = 0, nh = 0;
    if (!tfiles || !hfiles) die("out of memory");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max-mb") == 0 && i + 1 < argc) max_mb = atof(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--text") == 0 && i + 1 < argc) tfiles[nt++] = argv[++i];
        else if (strcmp(argv[i], "--html") == 0 && i + 1 < argc) hfiles[nh++] = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--runs N] [--max-mb M] [--only words|default|html|html-text]\n"
                            "       [--text FILE]... [--html FILE]...\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1 || max_mb <= 0) die("--runs and --max-mb must be positive");
    text.max_bytes = html.max_bytes = (size_t)(max_mb * 1e6);

    if (nt) {
        for (size_t i = 0; i < nt; i++) load_file(&text, tfiles[i]);
    } else {
        load_glob(&text, "/usr/share/common-licenses/*", 1);
        load_glob(&text, "/usr/share/doc/*/copyright", 1);
        /* English man pages, sampled across all sections. */
        load_glob(&text, "/usr/share/man/man[2-8]/*.gz", 2);
        load_glob(&text, "/usr/share/man/man1/*.gz", 3);
    }
    if (nh) {
        for (size_t i = 0; i < nh; i++) load_file(&html, hfiles[i]);
    } else {
        load_glob(&html, "/usr/share/doc/*/*.html", 1);
        load_glob(&html, "/usr/share/doc/*/*/*.html", 1);
        load_glob(&html, "/usr/share/doc/*/*/*/*.html", 1);
    }
    /* The HTML pages' own text, extracted once (not timed). */
    corpus htext = {0};
    htext.max_bytes = (size_t)-1;
    for (size_t i = 0; i < html.n; i++) {
        nd_html_text t;
        if (nd_html_extract(&t, html.d[i].p, html.d[i].n) != ND_OK) die(nd_errmsg());
        size_t n = t.body_len + 1 + t.title_len;
        char *p = malloc(n + 1);
        if (!p) die("out of memory");
        memcpy(p, t.body, t.body_len);
        p[t.body_len] = '\n';
        memcpy(p + t.body_len + 1, t.title, t.title_len + 1);
        nd_html_text_dispose(&t);
        if (htext.n == htext.cap) {
            htext.cap = htext.cap ? htext.cap * 2 : 1024;
            htext.d = realloc(htext.d, htext.cap * sizeof *htext.d);
            if (!htext.d) die("out of memory");
        }
        htext.d[htext.n++] = (doc){p, n};
        htext.bytes += n;
    }
    printf("neardup %s, fingerprint version %u, one thread\n", ND_VERSION_STRING, ND_FP_VERSION);
    printf("text corpus: %zu documents, %.1f MB; html corpus: %zu documents, %.1f MB "
           "(their text: %.1f MB)\n",
           text.n, (double)text.bytes / 1e6, html.n, (double)html.bytes / 1e6,
           (double)htext.bytes / 1e6);
    printf("MB/s of input per CPU-second of this thread (median, min, max of the runs);\n"
           "wall: median MB/s by the wall clock (lower when the core is shared)\n");
    printf("%-16s %9s %9s %9s %11s %5s\n", "mode", "median", "min", "max", "wall", "runs");

    nd_fp_options words = ND_FP_OPTIONS_INIT, def = ND_FP_OPTIONS_INIT,
                  hdef = ND_FP_OPTIONS_INIT;
    words.features = ND_FEATURES_WORDS;
    hdef.flags = ND_FP_HTML;
#define WANT(m) (!only || strcmp(only, m) == 0)
    if (text.n && WANT("words")) run_mode("text, words", &text, &words, runs);
    if (text.n && WANT("default")) run_mode("text, default", &text, &def, runs);
    if (html.n && WANT("html")) run_mode("html, default", &html, &hdef, runs);
    if (htext.n && WANT("html-text")) run_mode("html's text", &htext, &def, runs);
    if (!text.n && !html.n) die("no input found");

    for (size_t i = 0; i < text.n; i++) free(text.d[i].p);
    for (size_t i = 0; i < html.n; i++) free(html.d[i].p);
    for (size_t i = 0; i < htext.n; i++) free(htext.d[i].p);
    free(htext.d);
    free(text.d);
    free(html.d);
    free(tfiles);
    free(hfiles);
    return 0;
}
