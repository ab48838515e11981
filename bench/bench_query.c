/*
 * bench_query.c — online query latency on a database that `bench_db
 * --keep` left, for side-by-side runs of two builds of the library
 * (alternate them through LD_LIBRARY_PATH, pinned to one core):
 *
 *   bench_query DIR N Q K [--from J] [--fp-only]
 *
 * N is the --n the database was made with (seed 1); the Q queries are
 * bench_db's online queries (bdb_query, stream BDB_QUERY) from index J
 * (default 5000, past those bench_db itself warms with). They run twice:
 * the first pass warms, the second is timed. Prints p50, p90 and p99 in
 * microseconds and the matches found (the same for any correct build).
 * Only <neardup.h> is used.
 */
#include <neardup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdb.h"

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_query DIR N Q K [--from J] [--fp-only]\n");
        return 2;
    }
    nd_query_options o = ND_QUERY_OPTIONS_INIT;
    size_t from = 5000;
    for (int i = 5; i < argc; i++) {
        if (strcmp(argv[i], "--fp-only") == 0) o.flags |= ND_QUERY_FP_ONLY;
        else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) from = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "bench_query: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    bdb_gen g = {.seed = 1, .n = strtoull(argv[2], NULL, 10)};
    size_t q = strtoull(argv[3], NULL, 10);
    unsigned k = (unsigned)atoi(argv[4]);
    if (g.n == 0 || q == 0) {
        fprintf(stderr, "bench_query: N and Q must be positive\n");
        return 2;
    }
    nd_db *db = NULL;
    nd_results *res = NULL;
    int rc = nd_db_open(&db, argv[1], NULL);
    if (rc == ND_OK) rc = nd_results_new(&res);
    double *lat = bdb_xmalloc(q * sizeof *lat);
    size_t matches = 0;
    for (int pass = 0; rc == ND_OK && pass < 2; pass++)
        for (size_t j = 0; rc == ND_OK && j < q; j++) {
            uint64_t base, fp = bdb_query(&g, BDB_QUERY, from + j, &base);
            double t0 = bdb_now();
            rc = nd_db_query(res, db, fp, k, &o);
            lat[j] = (bdb_now() - t0) * 1e6;
            if (pass) matches += nd_results_count(res);
        }
    if (rc != ND_OK) {
        fprintf(stderr, "bench_query: %s: %s\n", nd_strerror(rc), nd_errmsg());
    } else {
        printf("k=%u q=%zu p50 %.2f p90 %.2f p99 %.2f us, %zu matches\n", k, q,
               bdb_quantile(lat, q, 0.5), bdb_quantile(lat, q, 0.9), bdb_quantile(lat, q, 0.99),
               matches);
    }
    free(lat);
    nd_results_free(res);
    nd_db_close(db);
    return rc == ND_OK ? 0 : 1;
}
