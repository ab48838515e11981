/*
 * bench_fold.c — what a fold costs on a kept bench_db database, and how
 * queries fare right after it: the run-by-run fold (st_table_fold) against
 * the sequential refold (st_table_refold), each followed by the table
 * compaction a background fold does (st_compact_tables).
 *
 * usage: bench_fold DB [--add N] [--threads T] [--group G] [--start S]
 *                      [--check 1] [--probes M] [--readonly 1]
 *                      [--fold run|refold] [--queries Q] [--mmap 1]
 *                      [--replace 0|1]
 *   DB         a database bench_db left (bench_db --n 100M --keep --dir DB),
 *              opened without background folds
 *   --add N    first nd_db_add_if_new N documents of bench_db's stream (k=3),
 *              ids S.. (default 200M: not among a 100M database's)
 *   --threads T  the adds on T threads, thread i taking ids S + i, S + i + T,
 *              ... (default 1)
 *   --group G  the adds in groups of G documents through
 *              nd_db_batch(ND_BATCH_ADD) instead of one nd_db_add_if_new each
 *              (default 1: single adds)
 *   --check 1  the --add documents are only checked, not stored: nd_db_batch
 *              without ND_BATCH_ADD, G documents a call
 *   --probes M nd_db_batch checks batches of at most M documents by probes and
 *              merges larger ones (db->batch_probes_max; default the
 *              engine's DB_BATCH_PROBES_MAX; 0: always the merge)
 *   --readonly 1  open with ND_DB_READONLY (with --check and --queries only)
 *   --fold F   then fold every table (run or refold), time it, and compact
 *              the tables (timed)
 *   --queries Q  fingerprint-only k=3 queries of bench_db's query set at
 *              open, after the fold and after the compaction (default 5000)
 *   --mmap 1   open with ND_DB_MMAP (the tables read through mappings)
 *   --replace R  the adds are nd_db_add, not nd_db_add_if_new; with R = 1 every
 *              second one replaces the key of the add before it with the
 *              new document's fingerprint (a crawler storing a page again
 *              whose text changed): a new key, then a replaced one whose
 *              fingerprint still waits in the fresh mirror; R = 0 new keys
 *              only, the rate to compare with. Prints the mirror flushes
 *              the adds made too
 * Prints one line per step: the fresh entries at open, add rate, each
 * table's fold time, p50/p90 query latency, which tables are read directly.
 * Copy DB first to compare the two folds on the same state (a fold changes
 * it). Internal: the folds and the compaction have no public API.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bdb.h"
#include "cmp_direct.h"
#include "db_core.h"
#include "neardup.h"
#include "storage.h"

#define TRY(call)                                                                   \
    do {                                                                            \
        if ((call) != ND_OK) {                                                      \
            fprintf(stderr, "bench_fold: %s: %s\n", #call, nd_errmsg());            \
            exit(2);                                                                \
        }                                                                           \
    } while (0)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Latency of nq fingerprint-only k=3 queries, and the direct tables. */
static void queries(nd_db *db, const bdb_gen *g, size_t nq, const char *when)
{
    if (!nq) return;
    nd_results *r;
    double *lat = malloc(nq * sizeof *lat);
    if (!lat) exit(2);
    TRY(nd_results_new(&r));
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.flags = ND_QUERY_FP_ONLY;
    for (size_t j = 0; j < nq; j++) {
        uint64_t q = bdb_query(g, BDB_QUERY, j, NULL);
        double t0 = now_s();
        TRY(nd_db_query(r, db, q, 3, &qo));
        lat[j] = (now_s() - t0) * 1e6;
    }
    qsort(lat, nq, sizeof *lat, cmp_double);
    unsigned direct = 0;
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        cmp_direct *d = st_table_direct(db->store, t);
        direct += d != NULL;
        cmp_direct_unref(d);
    }
    printf("%s: k=3 fp-only p50 %.1f us, p90 %.1f us; %u of %u tables direct\n", when,
           lat[nq / 2], lat[nq * 9 / 10], direct, db->plan.info.tables);
    fflush(stdout);
    nd_results_free(r);
    free(lat);
}

/* One thread of the adds: ids start + id, start + id + step, ... */
typedef struct adder {
    nd_db *db;
    const bdb_gen *g;
    uint64_t start, n;
    unsigned id, step;
    size_t group; /* 1: nd_db_add_if_new; more: nd_db_batch(ND_BATCH_ADD) groups */
    unsigned batch_flags; /* ND_BATCH_ADD, or 0 to check only (--check) */
    int replace; /* -1 nd_db_add_if_new; 0 nd_db_add; 1 every second nd_db_add replaces the key before */
} adder;

/* Stream document j's key (8 bytes; ids outside a bench_db store's). */
static void stream_key(uint8_t key[8], uint64_t j)
{
    uint64_t id = (1ull << 62) | j;
    for (int b = 0; b < 8; b++) key[b] = (uint8_t)(id >> (56 - 8 * b));
}

/* The thread's documents in groups of a->group through nd_db_batch. */
static void add_groups(const adder *a, nd_results *r)
{
    nd_doc *docs = malloc(a->group * sizeof *docs);
    nd_batch_item *out = malloc(a->group * sizeof *out);
    uint8_t(*keys)[8] = malloc(a->group * sizeof *keys);
    if (!docs || !out || !keys) exit(2);
    size_t m = 0;
    for (uint64_t j = a->id; j < a->n; j += a->step) {
        stream_key(keys[m], a->start + j);
        docs[m] = (nd_doc){keys[m], 8, bdb_query(a->g, BDB_STREAM, a->start + j, NULL), 0, 2};
        if (++m == a->group || j + a->step >= a->n) {
            TRY(nd_db_batch(out, r, a->db, docs, m, 3, a->batch_flags));
            m = 0;
        }
    }
    free(docs);
    free(out);
    free(keys);
}

static void *adder_main(void *p)
{
    const adder *a = p;
    nd_results *r;
    TRY(nd_results_new(&r));
    if (a->group > 1 || a->batch_flags != ND_BATCH_ADD) {
        add_groups(a, r);
    } else if (a->replace >= 0) {
        uint8_t key[8];
        uint64_t i = 0;
        for (uint64_t j = a->id; j < a->n; j += a->step, i++) {
            if (!a->replace || i % 2 == 0) stream_key(key, a->start + j); /* else the key before */
            TRY(nd_db_add(a->db, key, 8, bdb_query(a->g, BDB_STREAM, a->start + j, NULL), 0, 2));
        }
    } else {
        for (uint64_t j = a->id; j < a->n; j += a->step) {
            uint8_t key[8];
            stream_key(key, a->start + j);
            TRY(nd_db_add_if_new(r, a->db, key, 8,
                              bdb_query(a->g, BDB_STREAM, a->start + j, NULL), 0, 2, 3));
        }
    }
    nd_results_free(r);
    return NULL;
}

/* Is v an on/off option's value, "0" or "1"? */
static int is_switch(const char *v)
{
    return !strcmp(v, "0") || !strcmp(v, "1");
}

int main(int argc, char **argv)
{
    uint64_t add = 0, start = 200000000;
    unsigned threads = 1;
    size_t nq = 5000, group = 1;
    int mmap = 0, check = 0, readonly = 0, replace = -1;
    size_t probes = DB_BATCH_PROBES_MAX;
    const char *fold = NULL;
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: bench_fold DB [--add N] [--threads T] [--group G] [--start S] "
                        "[--check 1] [--probes M] [--readonly 1] [--fold run|refold] "
                        "[--queries Q] [--mmap 1] [--replace 0|1]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_fold: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--add") == 0) add = strtoull(v, NULL, 10);
        else if (strcmp(a, "--start") == 0) start = strtoull(v, NULL, 10);
        else if (strcmp(a, "--threads") == 0 && atoi(v) >= 1 && atoi(v) <= 64)
            threads = (unsigned)atoi(v);
        else if (strcmp(a, "--queries") == 0) nq = strtoull(v, NULL, 10);
        else if (strcmp(a, "--group") == 0 && strtoull(v, NULL, 10) >= 1)
            group = strtoull(v, NULL, 10);
        else if (strcmp(a, "--mmap") == 0 && is_switch(v)) mmap = *v == '1';
        else if (strcmp(a, "--check") == 0 && is_switch(v)) check = *v == '1';
        else if (strcmp(a, "--readonly") == 0 && is_switch(v)) readonly = *v == '1';
        else if (strcmp(a, "--replace") == 0 && is_switch(v)) replace = *v == '1';
        else if (strcmp(a, "--probes") == 0) probes = strtoull(v, NULL, 10);
        else if (strcmp(a, "--fold") == 0 && (!strcmp(v, "run") || !strcmp(v, "refold"))) fold = v;
        else {
            fprintf(stderr, "bench_fold: unknown option %s %s\n", a, v);
            return 2;
        }
        i++;
    }
    nd_db *db;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    if (replace >= 0 && (check || group > 1)) {
        fprintf(stderr, "bench_fold: --replace goes with single adds only\n");
        return 2;
    }
    if (readonly && ((add && !check) || fold)) {
        fprintf(stderr, "bench_fold: --readonly 1 goes with --check 1 and --queries only\n");
        return 2;
    }
    o.flags = ND_DB_NO_BACKGROUND | (mmap ? ND_DB_MMAP : 0) | (readonly ? ND_DB_READONLY : 0);
    o.fold_threshold = UINT64_MAX;
    double t0 = now_s();
    TRY(nd_db_open(&db, argv[1], &o));
    db->batch_probes_max = probes;
    uint64_t nfps = 0, fresh = 0;
    TRY(nd_db_counts(NULL, &nfps, db));
    unsigned nt = db->plan.info.tables;
    for (unsigned t = 0; t < nt; t++) {
        uint64_t f;
        TRY(st_table_fresh_count(db->store, t, &f));
        fresh += f;
    }
    bdb_gen g = {1, nfps};
    printf("open %.1f s: %llu fingerprints, %llu fresh entries in %u tables\n", now_s() - t0,
           (unsigned long long)nfps, (unsigned long long)fresh, nt);
    queries(db, &g, nq, "at open");

    if (add) {
        uint64_t flushes = db->mirror.flushes;
        adder a[64];
        pthread_t th[64];
        t0 = now_s();
        for (unsigned i = 0; i < threads; i++) {
            a[i] = (adder){db, &g, start, add, i, threads, group, check ? 0 : ND_BATCH_ADD,
                           replace};
            if (i && pthread_create(&th[i], NULL, adder_main, &a[i]) != 0) {
                fprintf(stderr, "bench_fold: pthread_create failed\n");
                return 2;
            }
        }
        adder_main(&a[0]);
        for (unsigned i = 1; i < threads; i++) pthread_join(th[i], NULL);
        double secs = now_s() - t0;
        if (check)
            printf("nd_db_batch (check only; probes up to %zu) in groups of %zu: ",
                   db->batch_probes_max, group);
        else if (group > 1) printf("nd_db_batch(ND_BATCH_ADD) in groups of %zu: ", group);
        else if (replace == 1) printf("add, every second replacing the key before: ");
        else if (replace == 0) printf("add, new keys only: ");
        else printf("add_if_new ");
        printf("%llu documents on %u thread%s: %.0f docs/s\n", (unsigned long long)add,
               threads, threads == 1 ? "" : "s", (double)add / secs);
        if (replace >= 0)
            printf("mirror flushes during the adds: %llu\n",
                   (unsigned long long)(db->mirror.flushes - flushes));
    }

    if (fold) {
        double all = now_s();
        for (unsigned t = 0; t < nt; t++) {
            uint64_t folded = 0;
            t0 = now_s();
            if (strcmp(fold, "refold") == 0)
                TRY(st_table_refold(db->store, t, db->run_size, NULL, NULL, NULL, &folded));
            else TRY(st_table_fold(db->store, t, db->run_size, 0, NULL, NULL, NULL, &folded));
            printf("  %s table %u: %llu entries in %.1f s\n", fold, t,
                   (unsigned long long)folded, now_s() - t0);
        }
        printf("%s: %.1f s\n", fold, now_s() - all);
        queries(db, &g, nq, "after the fold");
        t0 = now_s();
        TRY(st_compact_tables(db->store));
        printf("table compaction: %.1f s\n", now_s() - t0);
        queries(db, &g, nq, "after the compaction");
    }
    TRY(nd_db_close(db));
    return 0;
}
