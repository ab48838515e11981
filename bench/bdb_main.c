/*
 * bdb_main.c — bench_db: neardup's database benchmark (issue 5).
 *
 * One run: generate the data (bdb_gen.c), measure the baselines and build
 * the oracle (bdb_base.c), then measure neardup (bdb_nd.c); every answer
 * neardup gives on the oracle's sample must equal the brute-force scan's,
 * and every answer count must equal the in-memory reference's. The metrics
 * of the run go to one JSON object (--out); bench/run.sh runs it several
 * times and bench/bdb_report.py turns the runs into medians, ratios and
 * the record's table (bench/results/<date>-<size>.md).
 *
 * Exit status: 0 when every check agreed, 1 on any disagreement, 2 on an
 * error (bad usage, a failing neardup call).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <neardup.h>

#include "bdb.h"

/* ---- shared helpers of the phases ---- */

void bdb_fail(bdb_state *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (s->failures < 20) fprintf(stderr, "bench_db: DISAGREEMENT: %s\n", buf);
    if (s->failures < 5) bdb_note("DISAGREEMENT: %s", buf);
    s->failures++;
}

static size_t sort_unique(uint64_t *v, size_t n)
{
    if (n < 2) return n;
    qsort(v, n, sizeof *v, bdb_cmp_u64);
    size_t w = 1;
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[w - 1]) v[w++] = v[i];
    return w;
}

static int compare(bdb_state *s, const char *what, const char *kind, size_t i, unsigned k,
                   uint64_t q, const uint64_t *want, size_t nwant, uint64_t *got, size_t ngot)
{
    ngot = sort_unique(got, ngot);
    /* want is sorted (scan order is not: sort a filtered copy) */
    uint64_t *w = bdb_xmalloc((nwant + 1) * sizeof *w);
    size_t nw = 0;
    for (size_t j = 0; j < nwant; j++)
        if ((unsigned)__builtin_popcountll(want[j] ^ q) <= k) w[nw++] = want[j];
    nw = sort_unique(w, nw);
    int bad = nw != ngot || (nw && memcmp(w, got, nw * sizeof *w) != 0);
    if (bad)
        bdb_fail(s, "%s: %s query %zu (%016llx) at k=%u: %zu matches, the scan %zu", what,
                 kind, i, (unsigned long long)q, k, ngot, nw);
    free(w);
    return bad;
}

int bdb_check_online(bdb_state *s, const char *what, size_t i, unsigned k, uint64_t *got,
                     size_t ngot)
{
    return compare(s, what, "online", i, k, s->qs[i], s->orc_fp + s->orc_off[i],
                   s->orc_off[i + 1] - s->orc_off[i], got, ngot);
}

int bdb_check_batch(bdb_state *s, const char *what, size_t i, uint64_t *got, size_t ngot)
{
    return compare(s, what, "batch", i, 3, s->bq[i], s->borc_fp + s->borc_off[i],
                   s->borc_off[i + 1] - s->borc_off[i], got, ngot);
}

typedef struct worker {
    bdb_query_fn fn;
    void *ctx;
    const uint64_t *qs;
    size_t nq;
    unsigned k, tid, threads;
    double *lat;
    uint32_t *cnt;
    int err;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (size_t i = w->tid; i < w->nq; i += w->threads) {
        double t0 = w->lat ? bdb_now() : 0;
        size_t m = w->fn(w->ctx, w->tid, w->qs[i], w->k);
        if (w->lat) w->lat[i] = bdb_now() - t0;
        if (m == SIZE_MAX) {
            w->err = 1;
            return NULL;
        }
        if (w->cnt) w->cnt[i] = (uint32_t)m;
    }
    return NULL;
}

double bdb_run_queries(bdb_query_fn fn, void *ctx, const uint64_t *qs, size_t nq, unsigned k,
                       unsigned threads, double *lat, uint32_t *cnt)
{
    worker w[2];
    pthread_t th[2];
    if (threads < 1) threads = 1;
    if (threads > 2) threads = 2;
    double t0 = bdb_now();
    for (unsigned i = 0; i < threads; i++) {
        w[i] = (worker){fn, ctx, qs, nq, k, i, threads, lat, cnt, 0};
        if (i > 0 && pthread_create(&th[i], NULL, work, &w[i]) != 0)
            bdb_die("pthread_create failed");
    }
    work(&w[0]);
    for (unsigned i = 1; i < threads; i++) pthread_join(th[i], NULL);
    double wall = bdb_now() - t0;
    for (unsigned i = 0; i < threads; i++)
        if (w[i].err) return -1;
    return wall;
}

void bdb_record_latency(const char *prefix, double *lat, size_t n, double wall)
{
    char name[128];
    snprintf(name, sizeof name, "%s.p50_us", prefix);
    bdb_metric(name, bdb_quantile(lat, n, 0.50) * 1e6);
    snprintf(name, sizeof name, "%s.p99_us", prefix);
    bdb_metric(name, bdb_quantile(lat, n, 0.99) * 1e6);
    snprintf(name, sizeof name, "%s.qps", prefix);
    bdb_metric(name, wall > 0 ? (double)n / wall : 0);
}

/* ---- command line ---- */

static void usage(FILE *f)
{
    fputs("usage: bench_db [options]\n"
          "  --n N          stored fingerprints (1M, 10M, 20000 ...; default 1M)\n"
          "  --q N          online queries at k=3 (default 10000)\n"
          "  --q6 N         online queries at k=6 (default 300)\n"
          "  --qcold N      cold queries after a reopen (default 1000; k=6: at most q6)\n"
          "  --sample N     oracle sample: online queries scanned (default 200)\n"
          "  --batch N      batch queries (default 1M)\n"
          "  --join N       self-join set size (default 1M)\n"
          "  --stream N     add_if_new documents (default 20000)\n"
          "  --group-docs N documents of the group-commit phase (default 20000)\n"
          "  --group N      group size (default 256)\n"
          "  --fsync-docs N add_if_new with fsync per document (default 200)\n"
          "  --load-group N documents per load call and loader chunk (default: chunks of\n"
          "                 8M; with --import-steps calls of half the store, 1M..8M;\n"
          "                 nd_db_add_many 100000)\n"
          "  --no-import    load with nd_db_add_many even where nd_db_import exists\n"
          "  --import-steps load with nd_db_import in calls growing with the store instead\n"
          "                 of one nd_loader (the way before the loader)\n"
          "  --no-batch     one nd_db_query per batch document even where nd_db_batch exists\n"
          "  --cache-mb N   block cache (default: neardup's)\n"
          "  --plan-k K     the database's design distance (default 3): the planner's\n"
          "                 design for K; the reference keeps its k=3 design\n"
          "  --tables T     the planner's one-level design of T tables for K (default:\n"
          "                 the planner's choice); the reference uses the same design\n"
          "  --seed N       data seed (default 1)\n"
          "  --dir DIR      database directory (must not exist; default a temporary one)\n"
          "  --keep         keep the database\n"
          "  --reuse        query the database already in --dir (built by an earlier\n"
          "                 --keep run with the same --n and --seed): no load phase;\n"
          "                 the stream phases of earlier runs have added documents\n"
          "  --verify       run nd_db_verify after the load\n"
          "  --dump DIR     write the data for bench/bdb_faiss.py into DIR\n"
          "  --out FILE     metrics JSON (default: stdout)\n"
          "  --smoke        small sizes for the test suite (N=20000, Q=200)\n"
          "exit: 0 all checks agree, 1 a disagreement, 2 an error\n",
          f);
}

static uint64_t parse_count(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0) bdb_die("bad number '%s'", s);
    switch (*end) {
    case 'k': case 'K': v *= 1e3; end++; break;
    case 'm': case 'M': v *= 1e6; end++; break;
    case 'g': case 'G': v *= 1e9; end++; break;
    default: break;
    }
    if (*end) bdb_die("bad number '%s'", s);
    return (uint64_t)(v + 0.5);
}

int main(int argc, char **argv)
{
    bdb_state s = {0};
    bdb_opts *o = &s.o;
    *o = (bdb_opts){.n = 1000000, .q = 10000, .q6 = 300, .qcold = 1000, .sample = 200,
                    .batch = 1000000, .stream = 20000, .group = 256, .group_docs = 20000,
                    .fsync_docs = 200, .join = 1000000, .load_group = 0, .seed = 1,
                    .plan_k = 3, .out = "-"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NUM(flag, field)                                      \
    if (strcmp(a, flag) == 0) {                               \
        if (!v) bdb_die("%s needs a value", flag);           \
        o->field = parse_count(v);                            \
        i++;                                                  \
        continue;                                             \
    }
        NUM("--n", n) NUM("--q", q) NUM("--q6", q6) NUM("--qcold", qcold)
        NUM("--sample", sample) NUM("--batch", batch) NUM("--join", join)
        NUM("--stream", stream) NUM("--group-docs", group_docs) NUM("--group", group)
        NUM("--fsync-docs", fsync_docs) NUM("--load-group", load_group)
        NUM("--cache-mb", cache_mb) NUM("--seed", seed) NUM("--tables", tables)
        NUM("--plan-k", plan_k)
#undef NUM
        if (strcmp(a, "--dir") == 0 && v) { o->dir = v; i++; continue; }
        if (strcmp(a, "--dump") == 0 && v) { o->dump = v; i++; continue; }
        if (strcmp(a, "--out") == 0 && v) { o->out = v; i++; continue; }
        if (strcmp(a, "--keep") == 0) { o->keep = 1; continue; }
        if (strcmp(a, "--reuse") == 0) { o->reuse = 1; o->keep = 1; continue; }
        if (strcmp(a, "--verify") == 0) { o->verify = 1; continue; }
        if (strcmp(a, "--no-import") == 0) { o->no_import = 1; continue; }
        if (strcmp(a, "--import-steps") == 0) { o->import_steps = 1; continue; }
        if (strcmp(a, "--no-batch") == 0) { o->no_batch = 1; continue; }
        if (strcmp(a, "--smoke") == 0) {
            o->n = 20000; o->q = 200; o->q6 = 200; o->qcold = 100; o->sample = 100;
            o->batch = 2000; o->join = 20000; o->stream = 500; o->group_docs = 500;
            o->group = 50; o->fsync_docs = 20; o->load_group = 5000; o->verify = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); return 0; }
        usage(stderr);
        bdb_die("unknown or incomplete option '%s'", a);
    }
    if (o->n < 16 || o->q == 0 || o->group == 0 || o->join < 2 ||
        o->batch == 0)
        bdb_die("sizes too small");
    if (o->q6 > o->q) o->q6 = o->q;
    if (o->plan_k < 1 || o->plan_k > ND_MAX_K) bdb_die("--plan-k: 1..%u", ND_MAX_K);
    if (o->reuse && !o->dir) bdb_die("--reuse needs --dir");
    char tmpdir[] = "/tmp/bench_db.XXXXXX";
    char dbdir[4096];
    int own_tmp = 0;
    if (!o->dir) {
        if (!mkdtemp(tmpdir)) bdb_die("mkdtemp failed");
        snprintf(dbdir, sizeof dbdir, "%s/db", tmpdir);
        o->dir = dbdir;
        own_tmp = 1;
    }
    s.g = (bdb_gen){o->seed, o->n};

    double t0 = bdb_now();
    bdb_phase_data(&s);
    bdb_phase_baselines(&s);
    double t1 = bdb_now();
    bdb_phase_neardup(&s);
    double t2 = bdb_now();
    bdb_metric("run.baselines_s", t1 - t0);
    bdb_metric("run.neardup_s", t2 - t1);
    bdb_metric("run.failures", (double)s.failures);
    if (!o->keep) bdb_rmtree(o->dir);
    if (own_tmp) rmdir(tmpdir);

    char head[2048];
    snprintf(head, sizeof head,
             "  \"n\": %llu, \"q\": %llu, \"q6\": %llu, \"qcold\": %llu, \"sample\": %llu,\n"
             "  \"batch\": %llu, \"join\": %llu, \"stream\": %llu, \"group_docs\": %llu,\n"
             "  \"group\": %llu,\n"
             "  \"seed\": %llu, \"plan\": {\"k\": %u, \"tables\": %u, \"levels\": %u, "
             "\"blocks\": %u, \"ref_blocks\": %u},\n"
             "  \"neardup_version\": \"%s\", \"failures\": %ld",
             (unsigned long long)o->n, (unsigned long long)o->q, (unsigned long long)o->q6,
             (unsigned long long)o->qcold, (unsigned long long)o->sample,
             (unsigned long long)o->batch, (unsigned long long)o->join,
             (unsigned long long)o->stream, (unsigned long long)o->group_docs,
             (unsigned long long)o->group, (unsigned long long)o->seed, s.plan_k, s.plan_tables, s.plan_levels,
             s.plan_blocks, s.ref_blocks, ND_VERSION_STRING, s.failures);
    if (bdb_metrics_write(o->out, head) != 0) bdb_die("cannot write %s", o->out);
    /* Everything the phases allocated (a clean exit under LeakSanitizer). */
    void *owned[] = {s.qs,     s.bq,     s.js,      s.orc_off,  s.orc_fp,   s.borc_off,
                     s.borc_fp, s.jorc_off, s.js_idx, s.jorc,    s.ref_cnt3, s.ref_cnt6,
                     s.ref_bcnt};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) free(owned[i]);
    if (s.failures) {
        fprintf(stderr, "bench_db: %ld disagreement(s) with the oracle or the reference\n",
                s.failures);
        return 1;
    }
    fprintf(stderr, "bench_db: all checks agree (%zu sampled online, %zu batch, %zu self-join "
                    "elements against the scan; every count against the reference)\n",
            s.ns, s.nbs, s.njs);
    return 0;
}
