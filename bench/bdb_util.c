/*
 * bdb_util.c — clocks, quantiles, the metrics record
 * and directory helpers for bench_db.
 *
 * Peak RSS per phase (bench_rss.c): Linux keeps the high-water mark VmHWM
 * in /proc/self/status, and writing "5" to /proc/self/clear_refs resets it
 * to the current RSS, so each phase reads the peak of that phase alone
 * (after malloc_trim, so that heap a previous phase freed is not counted).
 * Metrics are kept in insertion order and written as one flat JSON object
 * ("system.metric": value) that bench/bdb_report.py aggregates over runs.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bdb.h"

void bdb_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_db: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

void *bdb_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) bdb_die("out of memory (%zu bytes)", n);
    return p;
}

void *bdb_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) bdb_die("out of memory (%zu x %zu bytes)", n, sz);
    return p;
}

double bdb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bdb_quantile(double *lat, size_t n, double q)
{
    if (n == 0) return 0;
    qsort(lat, n, sizeof *lat, cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return lat[i < n ? i : n - 1];
}

double bdb_median(double *v, size_t n)
{
    return bdb_quantile(v, n, 0.5);
}

/* Bytes this process made the kernel read from storage (not from the page
 * cache): /proc/self/io read_bytes. -1 when unavailable. */
double bdb_storage_read_mib(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    if (!f) return -1;
    char line[128];
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "read_bytes:", 11) == 0) {
            v = strtod(line + 11, NULL) / 1048576.0;
            break;
        }
    fclose(f);
    return v;
}

/* ---- metrics ---- */

typedef struct metric {
    char name[96];
    double v;
} metric;

static metric *g_m;
static size_t g_nm, g_cm;
static char **g_notes;
static size_t g_nn;

void bdb_metric(const char *name, double value)
{
    for (size_t i = 0; i < g_nm; i++)
        if (strcmp(g_m[i].name, name) == 0) {
            g_m[i].v = value;
            return;
        }
    if (g_nm == g_cm) {
        g_cm = g_cm ? g_cm * 2 : 64;
        g_m = realloc(g_m, g_cm * sizeof *g_m);
        if (!g_m) bdb_die("out of memory");
    }
    snprintf(g_m[g_nm].name, sizeof g_m[g_nm].name, "%s", name);
    g_m[g_nm++].v = value;
}

void bdb_metricf(double value, const char *fmt, ...)
{
    char name[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    bdb_metric(name, value);
}

void bdb_note(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    g_notes = realloc(g_notes, (g_nn + 1) * sizeof *g_notes);
    if (!g_notes || !(g_notes[g_nn] = strdup(buf))) bdb_die("out of memory");
    g_nn++;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

int bdb_metrics_write(const char *path, const char *header_json)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\n%s,\n  \"notes\": [", header_json);
    for (size_t i = 0; i < g_nn; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_str(f, g_notes[i]);
    }
    fputs("],\n  \"metrics\": {", f);
    for (size_t i = 0; i < g_nm; i++)
        fprintf(f, "%s\n    \"%s\": %.6g", i ? "," : "", g_m[i].name, g_m[i].v);
    fputs("\n  }\n}\n", f);
    return f == stdout ? fflush(f) : fclose(f);
}

/* ---- directories ---- */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

int bdb_rmtree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

static long g_dropped;
static uint64_t g_du;

static int drop_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F || !S_ISREG(st->st_mode)) return 0;
    int fd = open(p, O_RDONLY);
    if (fd < 0) return 0;
    fdatasync(fd);
    if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0) g_dropped++;
    close(fd);
    return 0;
}

long bdb_drop_cache(const char *path)
{
    g_dropped = 0;
    nftw(path, drop_one, 32, FTW_PHYS);
    return g_dropped;
}

static int warm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F || !S_ISREG(st->st_mode)) return 0;
    int fd = open(p, O_RDONLY);
    if (fd < 0) return 0;
    static char buf[1 << 20];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    close(fd);
    return 0;
}

void bdb_warm_cache(const char *path)
{
    nftw(path, warm_one, 32, FTW_PHYS);
}

static int du_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)p;
    (void)ftw;
    if (flag == FTW_F && S_ISREG(st->st_mode)) g_du += (uint64_t)st->st_size;
    return 0;
}

uint64_t bdb_du(const char *path)
{
    g_du = 0;
    nftw(path, du_one, 32, FTW_PHYS);
    return g_du;
}

int bdb_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
