/*
 * bench_codec.c — size and decode speed of the run codec, version 1
 * (XOR-delta + lz counts + zstd where it pays) against version 2
 * (Golomb-Rice gaps), on runs shaped like a table's: n sorted uniform
 * random values with the spacing of a table of N fingerprints (mean gap
 * 2^64 / N). Every query decodes runs, so decode time is on its path.
 *
 * It uses an internal header (cmp_codec.h, through neardup_internal_dep):
 * the codec has no public API.
 *
 * usage: bench_codec [--runs R] [--n ENTRIES_PER_RUN] [--reps K]
 * Prints, per N in 1M, 10M, 100M and per version: bits per entry of the
 * run values (header included, key not) and the decode time per entry
 * (median of K passes over R runs; all runs are decoded with one context,
 * as a reader does).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmp_codec.h"
#include "neardup.h"
#include "oracle.h" /* the tests' seeded generator */

static oracle_rng rng = {12345};
static uint64_t rnd(void) { return oracle_next(&rng); }

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* n distinct sorted values in a window of n * 2^64 / N: a run of a table
 * of N uniform random fingerprints. Returns the count (duplicates drop). */
static size_t make_run(uint64_t *v, size_t n, double N)
{
    double span = (double)n * 18446744073709551616.0 / N;
    uint64_t w = span >= 1.8e19 ? UINT64_MAX : (uint64_t)span;
    uint64_t base = rnd() % (UINT64_MAX - w);
    for (size_t i = 0; i < n; i++) v[i] = base + rnd() % w;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v[i] != v[m - 1]) v[m++] = v[i];
    return m;
}

int main(int argc, char **argv)
{
    size_t runs = 8192, n = 128, reps = 7;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--runs")) runs = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--n")) n = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps")) reps = strtoul(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_codec [--runs R] [--n ENTRIES_PER_RUN] [--reps K]\n");
            return 2;
        }
    }
    if (runs < 1 || n < 2 || n > CMP_RUN_MAX || reps < 1 || reps > 101) {
        fprintf(stderr, "bench_codec: bad --runs, --n (2..%u) or --reps (1..101)\n", CMP_RUN_MAX);
        return 2;
    }
    size_t cap = cmp_run_bound(n);
    uint64_t *vals = malloc(runs * n * sizeof *vals), *out = malloc(CMP_RUN_MAX * sizeof *out);
    size_t *cnt = malloc(runs * sizeof *cnt), *len = malloc(runs * sizeof *len);
    uint8_t *enc = malloc(runs * cap);
    cmp_codec *c = NULL;
    if (!vals || !out || !cnt || !len || !enc || cmp_codec_new(&c) != ND_OK) {
        fprintf(stderr, "bench_codec: out of memory\n");
        return 1;
    }
    printf("%zu runs of %zu entries, median of %zu decode passes\n", runs, n, reps);
    printf("N\tversion\tbits/entry\tns/entry\tMentries/s\n");
    const double sizes[] = {1e6, 1e7, 1e8};
    int status = 0;
    for (size_t s = 0; s < 3; s++) {
        size_t total = 0;
        for (size_t r = 0; r < runs; r++) {
            cnt[r] = make_run(vals + r * n, n, sizes[s]);
            total += cnt[r];
        }
        for (unsigned version = 1; version <= 2; version++) {
            cmp_codec_write_version(version);
            size_t bytes = 0;
            for (size_t r = 0; r < runs; r++) {
                if (cmp_run_encode(c, enc + r * cap, cap, &len[r], vals + r * n, cnt[r]) != ND_OK) {
                    fprintf(stderr, "bench_codec: encode: %s\n", nd_errmsg());
                    return 1;
                }
                bytes += len[r];
            }
            double t[101];
            for (size_t k = 0; k < reps; k++) {
                double t0 = now();
                for (size_t r = 0; r < runs; r++) {
                    size_t got;
                    const uint64_t *v = vals + r * n;
                    if (cmp_run_decode(c, out, CMP_RUN_MAX, &got, v[0], enc + r * cap, len[r]) !=
                            ND_OK ||
                        got != cnt[r]) {
                        fprintf(stderr, "bench_codec: decode: %s\n", nd_errmsg());
                        return 1;
                    }
                }
                t[k] = now() - t0;
                /* Every value once, outside the timing. */
                if (k == 0)
                    for (size_t r = 0; r < runs; r++) {
                        size_t got;
                        cmp_run_decode(c, out, CMP_RUN_MAX, &got, vals[r * n], enc + r * cap,
                                       len[r]);
                        if (memcmp(out, vals + r * n, got * sizeof *out) != 0) status = 1;
                    }
            }
            qsort(t, reps, sizeof t[0], cmp_double);
            double ns = 1e9 * t[reps / 2] / (double)total;
            printf("%.0e\t%u\t%.2f\t%.2f\t%.0f\n", sizes[s], version,
                   8.0 * (double)bytes / (double)total, ns, 1e3 / ns);
        }
    }
    cmp_codec_write_version(2);
    if (status) fprintf(stderr, "bench_codec: a decoded run differs from its values\n");
    cmp_codec_free(c);
    free(vals);
    free(out);
    free(cnt);
    free(len);
    free(enc);
    return status;
}
