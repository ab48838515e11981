/*
 * bench_resemble.c — what a resemblance store costs (issue 34, item 5;
 * issue 49): the same stream of texts into a fingerprint-only store and
 * into a resemblance store, their rates, latencies, disk and memory per
 * document and the planted copies each catches. Only <neardup.h> is used.
 *
 *   bench_resemble [--n N] [--rounds R] [--dir D] [--seed S] [--k K]
 *                  [--batch B] [--only fp|rs] [--threads T] [--import]
 *                  [--keys seq|hashed|url] [--checks Q] [--compact] [--check]
 *   bench_resemble --jsonl FILE --mb M [--seed S]
 *
 * The texts (brs_gen.c): Zipf words from a 50,000-word vocabulary, 30 to
 * 2,000 words a text (log-uniform), 10% of them planted copies of an
 * earlier text with 1-10% of their words substituted, inserted or
 * deleted. They are generated in batches of B (default 4096) between the
 * timed parts: generation is not in any rate. Each batch is then
 * signed (fp: nd_fingerprint under the store's options; rs: nd_db_sign,
 * fingerprint and sketch from one tokenisation) and streamed into the
 * store one document at a time (fp: nd_db_add_if_new; rs:
 * nd_db_add_doc_if_new), k = K (default 3) for both, a fresh store of
 * expected_docs N each run, rounds alternating fp, rs. With --threads T
 * (1 or 2) T threads sign and stream each batch, document j on thread
 * j mod T. Rates per run:
 * wall = documents / wall seconds of the timed parts (sign + add); CPU =
 * documents / CPU seconds of the whole process from open to close (RocksDB's
 * background threads included) less the main thread's CPU generating texts
 * and tallying. Each add call's latency goes to a histogram (p50, p99).
 * After the stream, Q (--checks, default 20,000) texts that follow the
 * stream (10% of them copies) are checked without being added
 * (nd_db_query_doc; signing untimed): the check latency p50 and p99.
 * --import: each round also loads the same signed texts into a fresh store
 * of each kind through an nd_loader (nd_loader_add per batch, then
 * nd_loader_finish; what `neardup import` does): documents a second of
 * the loader's calls, signing timed apart.
 * Keys (--keys): seq, 8 bytes big-endian in stream order (default);
 * hashed, 12 bytes in random order (a 4-byte hash before the number, as a
 * crawler keying by a URL's hash writes them); url, a URL of 45-60 bytes
 * whose host and path scatter them.
 * The table gives medians over the rounds, and rs/fp ratios.
 * Disk: nd_db_stats after the stream (disk_bytes: the directory's files;
 * sketch_bytes: keys and values of the sketch and band families); with
 * --compact, also after nd_db_compact in the first round. Memory: the
 * process's peak RSS during each run (the mark reset at its start), and
 * its anonymous and file-backed RSS after the checks.
 * Catches: a planted copy is caught when the store calls it a duplicate
 * naming a text of its family (the same original); by the exact 3-shingle
 * resemblance J to its source (nd_features, nd_resemblance: computed once,
 * untimed). "false" counts originals called duplicates.
 * --check: exit 1 unless the resemblance store catches at least 90% of the
 * copies of J >= 0.9 and more than the fingerprint-only store.
 * --jsonl: write the same texts as JSONL ({"id":"d<i>","text":...}) until M
 * MB (1e6 bytes), for `neardup dedupe`.
 */
#define _POSIX_C_SOURCE 200809L
#include <neardup.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "bench_alloc.h"
#include "brs_gen.h"
#include "bench_rss.h"
#include "brs_measure.h"

enum { FP = 0, RS = 1 };
static const char *const store_name[2] = {"fp-only", "resemblance"};
enum { KEYS_SEQ, KEYS_HASHED, KEYS_URL };
enum { MAX_KEY = 64, MAX_THREADS = 2 };

/* J classes of planted copies: >= 0.9, [0.85, 0.9), < 0.85. */
enum { JHI, JMID, JLO, NCLASS };

typedef struct run {
    double wall, sign_wall, add_wall, cpu;
    uint64_t docs, dups, false_dups, copies[NCLASS], caught[NCLASS];
    nd_stats st;
    int has_compact;
    nd_stats st_compact;
    brs_lat add_lat, check_lat;
    double rss_peak, rss_anon, rss_file; /* MiB */
} run;

typedef struct bench {
    uint64_t n, seed, batch, checks;
    unsigned k, threads;
    int keys;
    const char *dir;
    brs_gen g;
    float *jtrue;             /* per text: J to its source; NaN not yet known */
    char *buf;                /* a batch of texts */
    size_t buf_cap;
    size_t *off, *len;
    nd_signature *sig;
    unsigned char (*key)[MAX_KEY]; /* per text of a batch: its key */
    size_t *key_len;
    uint64_t *match;          /* per text of a batch: its match's id, or UINT64_MAX */
    uint64_t *hash[2];        /* feature hashes of a copy and of its source */
    size_t hash_n[2], hash_cap[2];
} bench;

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die_nd(const char *what, int rc)
{
    fprintf(stderr, "bench_resemble: %s: %s: %s\n", what, nd_strerror(rc), nd_errmsg());
    exit(1);
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (56 - 8 * i));
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

/* Text id's key (see --keys); returns its length. */
static size_t key_of(int keys, unsigned char key[MAX_KEY], uint64_t id)
{
    if (keys == KEYS_SEQ) {
        put_be64(key, id);
        return 8;
    }
    uint64_t h = mix64(id + 1);
    if (keys == KEYS_HASHED) {
        for (int i = 0; i < 4; i++) key[i] = (unsigned char)(h >> (56 - 8 * i));
        put_be64(key + 4, id);
        return 12;
    }
    int n = snprintf((char *)key, MAX_KEY, "https://www.site%04u.example.com/%08x/p%llu.html",
                     (unsigned)(h % 10000), (unsigned)(h >> 32), (unsigned long long)id);
    return (size_t)n;
}

static uint64_t id_of(int keys, const char *key, size_t len)
{
    const unsigned char *k = (const unsigned char *)key;
    if (keys == KEYS_SEQ) return len == 8 ? get_be64(k) : UINT64_MAX;
    if (keys == KEYS_HASHED) return len == 12 ? get_be64(k + 4) : UINT64_MAX;
    size_t i = len;
    while (i > 0 && key[i - 1] != 'p') i--; /* "p<id>.html" */
    return i ? strtoull(key + i, NULL, 10) : UINT64_MAX;
}

/* --- exact resemblance of a planted copy to its source (untimed) --- */

static int which_hash;
static bench *hash_bench;

static void collect(uint64_t h, int32_t w, void *payload)
{
    (void)w;
    (void)payload;
    bench *b = hash_bench;
    int s = which_hash;
    if (b->hash_n[s] == b->hash_cap[s]) {
        b->hash_cap[s] = b->hash_cap[s] ? 2 * b->hash_cap[s] : 4096;
        b->hash[s] = bench_xrealloc(b->hash[s], b->hash_cap[s] * sizeof(uint64_t));
    }
    b->hash[s][b->hash_n[s]++] = h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void hashes_of(bench *b, int s, const char *text, size_t len, const nd_fp_options *o)
{
    b->hash_n[s] = 0;
    which_hash = s;
    hash_bench = b;
    int rc = nd_features(text, len, o, collect, NULL);
    if (rc != ND_OK) die_nd("nd_features", rc);
    qsort(b->hash[s], b->hash_n[s], sizeof(uint64_t), cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < b->hash_n[s]; i++)
        if (m == 0 || b->hash[s][m - 1] != b->hash[s][i]) b->hash[s][m++] = b->hash[s][i];
    b->hash_n[s] = m;
}

static double exact_j(bench *b, uint64_t i, const char *text, size_t len, uint64_t source,
                      const nd_fp_options *o)
{
    static char *src;
    if (!src) src = bench_xrealloc(NULL, BRS_MAX_TEXT);
    size_t sl = brs_text(&b->g, source, src, NULL);
    (void)i;
    hashes_of(b, 0, text, len, o);
    hashes_of(b, 1, src, sl, o);
    return nd_resemblance(b->hash[0], b->hash_n[0], b->hash[1], b->hash_n[1]);
}

/* --- one run: the stream into a fresh store --- */

static nd_db *open_fresh(const bench *b, int which, const char *path)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_resemble: cannot remove %s\n", path);
        exit(2);
    }
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_EXCL;
    o.k = b->k;
    o.expected_docs = b->n;
    o.min_resemblance = which == RS ? ND_DB_DEFAULT_MIN_RESEMBLANCE : 0;
    if (which != RS) o.flags |= ND_DB_FINGERPRINT_ONLY;
    nd_db *db = NULL;
    int rc = nd_db_open(&db, path, &o);
    if (rc != ND_OK) die_nd("nd_db_open", rc);
    return db;
}

/* Generate texts start..start+m-1 into the batch, keys included
 * (untimed); the exact J of each planted copy is computed once. */
static void gen_batch(bench *b, uint64_t start, uint64_t m, const nd_fp_options *fpo, int exact)
{
    size_t used = 0;
    for (uint64_t j = 0; j < m; j++) {
        if (b->buf_cap - used < BRS_MAX_TEXT) {
            b->buf_cap = 2 * b->buf_cap + BRS_MAX_TEXT;
            b->buf = bench_xrealloc(b->buf, b->buf_cap);
        }
        brs_info info;
        b->off[j] = used;
        b->len[j] = brs_text(&b->g, start + j, b->buf + used, &info);
        b->key_len[j] = key_of(b->keys, b->key[j], start + j);
        if (exact && info.is_copy && isnan(b->jtrue[start + j]))
            b->jtrue[start + j] = (float)exact_j(b, start + j, b->buf + used, b->len[j],
                                                 info.source, fpo);
        used += b->len[j];
    }
}

/* One thread's share of a batch: documents j = t, t + nt, ... */
typedef struct part {
    bench *b;
    nd_db *db;
    nd_results *res;
    const nd_fp_options *fpo;
    int which, step; /* step 0: sign; 1: add; 2: check */
    unsigned t, nt;
    uint64_t start, m;
    brs_lat *lat;
} part;

static void *run_part(void *arg)
{
    part *p = arg;
    bench *b = p->b;
    int rc = ND_OK;
    for (uint64_t j = p->t; j < p->m; j += p->nt) {
        const char *text = b->buf + b->off[j];
        nd_doc d = {b->key[j], b->key_len[j], b->sig[j].fp, 0, (int64_t)(p->start + j),
                    p->which == RS ? &b->sig[j].sketch : NULL};
        if (p->step == 0) {
            if (p->which == RS) rc = nd_db_sign(&b->sig[j], p->db, text, b->len[j], 0);
            else rc = nd_fingerprint(&b->sig[j].fp, text, b->len[j], p->fpo);
            if (rc != ND_OK) die_nd(p->which == RS ? "nd_db_sign" : "nd_fingerprint", rc);
            continue;
        }
        double t0 = clock_s(CLOCK_MONOTONIC);
        if (p->step == 2) rc = nd_db_query_doc(p->res, p->db, &d, b->k, NULL);
        else if (p->which == RS) rc = nd_db_add_doc_if_new(p->res, p->db, &d, b->k);
        else rc = nd_db_add_if_new(p->res, p->db, d.key, d.key_len, d.fp, 0, d.time, b->k);
        brs_lat_add(p->lat, clock_s(CLOCK_MONOTONIC) - t0);
        if (rc != ND_OK) die_nd(p->step == 2 ? "nd_db_query_doc" : "add", rc);
        if (p->step == 1)
            b->match[j] = nd_results_count(p->res) > 0
                              ? id_of(b->keys, nd_results_get(p->res, 0)->key,
                                      nd_results_get(p->res, 0)->key_len)
                              : UINT64_MAX;
    }
    return NULL;
}

/* Run a step over the batch on nt threads; returns its wall time. */
static double run_step(part *parts, unsigned nt, int step, uint64_t start, uint64_t m)
{
    pthread_t th[MAX_THREADS];
    double t0 = clock_s(CLOCK_MONOTONIC);
    for (unsigned t = 0; t < nt; t++) {
        parts[t].nt = nt;
        parts[t].step = step;
        parts[t].start = start;
        parts[t].m = m;
        if (t > 0 && pthread_create(&th[t], NULL, run_part, &parts[t]) != 0) {
            fprintf(stderr, "bench_resemble: cannot start a thread\n");
            exit(2);
        }
    }
    run_part(&parts[0]);
    for (unsigned t = 1; t < nt; t++) pthread_join(th[t], NULL);
    return clock_s(CLOCK_MONOTONIC) - t0;
}

static void tally(bench *b, uint64_t start, uint64_t m, run *out)
{
    for (uint64_t j = 0; j < m; j++) {
        uint64_t id = start + j;
        int dup = b->match[j] != UINT64_MAX, same = 0;
        brs_info info, mi;
        brs_info_of(&b->g, id, &info);
        if (dup) {
            brs_info_of(&b->g, b->match[j], &mi);
            same = mi.root == info.root;
        }
        out->dups += (uint64_t)dup;
        if (info.is_copy) {
            float J = b->jtrue[id];
            int c = J >= 0.9f ? JHI : J >= 0.85f ? JMID : JLO;
            out->copies[c]++;
            out->caught[c] += (uint64_t)same;
        } else {
            out->false_dups += (uint64_t)dup;
        }
    }
}

/* A run's store and what its end needs. */
typedef struct run_ctx {
    char path[4096];
    nd_db *db;
    nd_fp_options fpo;
    double cpu0; /* the process's CPU seconds at the start */
} run_ctx;

/* Start a run: a fresh store of the kind at DIR/NAME, the RSS peak reset. */
static void start_run(run_ctx *c, const bench *b, int which, const char *name, run *out)
{
    memset(out, 0, sizeof *out);
    snprintf(c->path, sizeof c->path, "%s/%s", b->dir, name);
    bench_rss_reset();
    c->cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    c->db = open_fresh(b, which, c->path);
    int rc = nd_db_fp_options(&c->fpo, c->db);
    if (rc != ND_OK) die_nd("nd_db_fp_options", rc);
}

static void finish_run(run_ctx *c, int compact, double gen_cpu, run *out)
{
    nd_db *db = c->db;
    int rc;
    out->wall = out->sign_wall + out->add_wall;
    if ((rc = nd_db_stats(&out->st, db)) != ND_OK) die_nd("nd_db_stats", rc);
    bench_rss_split_mib(&out->rss_anon, &out->rss_file);
    /* The close (memtable flush) counts as the store's work. */
    if (compact) {
        /* Compaction is not stream work: its CPU is left out of the rate. */
        double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if ((rc = nd_db_compact(db)) != ND_OK) die_nd("nd_db_compact", rc);
        if ((rc = nd_db_stats(&out->st_compact, db)) != ND_OK) die_nd("nd_db_stats", rc);
        out->has_compact = 1;
        gen_cpu += clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
    if ((rc = nd_db_close(db)) != ND_OK) die_nd("nd_db_close", rc);
    out->cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c->cpu0 - gen_cpu;
    out->rss_peak = bench_rss_peak_mib();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->path);
    if (system(cmd) != 0) fprintf(stderr, "bench_resemble: cannot remove %s\n", c->path);
}

static void one_run(bench *b, int which, int compact, run *out)
{
    run_ctx c;
    start_run(&c, b, which, which == FP ? "fp" : "rs", out);
    nd_db *db = c.db;
    const nd_fp_options *fpo = &c.fpo;
    double gen_cpu = 0;
    int rc;
    part parts[MAX_THREADS];
    brs_lat lat[MAX_THREADS];
    for (unsigned t = 0; t < b->threads; t++) {
        memset(&lat[t], 0, sizeof lat[t]);
        parts[t] = (part){b, db, NULL, fpo, which, 0, t, b->threads, 0, 0, &lat[t]};
        if ((rc = nd_results_new(&parts[t].res)) != ND_OK) die_nd("nd_results_new", rc);
    }

    double report_at = 0, t_start = clock_s(CLOCK_MONOTONIC);
    for (uint64_t start = 0; start < b->n; start += b->batch) {
        uint64_t m = b->n - start < b->batch ? b->n - start : b->batch;
        double g0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        gen_batch(b, start, m, fpo, 1);
        gen_cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - g0;
        /* Sign, then stream (timed). */
        out->sign_wall += run_step(parts, b->threads, 0, start, m);
        out->add_wall += run_step(parts, b->threads, 1, start, m);
        /* Tally (untimed, its CPU left out as generation's). */
        double g1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        tally(b, start, m, out);
        gen_cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - g1;
        out->docs += m;
        double now = clock_s(CLOCK_MONOTONIC);
        if (now - t_start >= report_at) {
            fprintf(stderr, "  %s: %llu docs, %.0f docs/s (wall, timed parts)\n",
                    store_name[which], (unsigned long long)out->docs,
                    out->docs / (out->sign_wall + out->add_wall));
            report_at = now - t_start + 60;
        }
    }
    for (unsigned t = 0; t < b->threads; t++) brs_lat_merge(&out->add_lat, &lat[t]);
    /* Checks of the texts after the stream: signed untimed, on one thread
     * (a latency, not a rate). */
    double g2 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    parts[0].lat = &out->check_lat;
    for (uint64_t done = 0; done < b->checks; done += b->batch) {
        uint64_t m = b->checks - done < b->batch ? b->checks - done : b->batch;
        gen_batch(b, b->n + done, m, fpo, 0);
        run_step(parts, 1, 0, b->n + done, m);
        run_step(parts, 1, 2, b->n + done, m);
    }
    gen_cpu += clock_s(CLOCK_PROCESS_CPUTIME_ID) - g2; /* not stream work */
    for (unsigned t = 0; t < b->threads; t++) nd_results_free(parts[t].res);
    finish_run(&c, compact, gen_cpu, out);
}

/* The same texts into a fresh store through an nd_loader. */
static void import_run(bench *b, int which, run *out)
{
    run_ctx c;
    start_run(&c, b, which, which == FP ? "fp-import" : "rs-import", out);
    nd_db *db = c.db;
    double gen_cpu = 0;
    int rc;
    part parts[MAX_THREADS];
    for (unsigned t = 0; t < b->threads; t++)
        parts[t] = (part){b, db, NULL, &c.fpo, which, 0, t, b->threads, 0, 0, NULL};
    nd_loader *l = NULL;
    if ((rc = nd_loader_new(&l, db, 0)) != ND_OK) die_nd("nd_loader_new", rc);
    nd_doc *docs = bench_xrealloc(NULL, b->batch * sizeof *docs);
    for (uint64_t start = 0; start < b->n; start += b->batch) {
        uint64_t m = b->n - start < b->batch ? b->n - start : b->batch;
        double g0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        gen_batch(b, start, m, &c.fpo, 0);
        gen_cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - g0;
        out->sign_wall += run_step(parts, b->threads, 0, start, m);
        for (uint64_t j = 0; j < m; j++)
            docs[j] = (nd_doc){b->key[j], b->key_len[j], b->sig[j].fp, 0, (int64_t)(start + j),
                               which == RS ? &b->sig[j].sketch : NULL};
        double t0 = clock_s(CLOCK_MONOTONIC);
        if ((rc = nd_loader_add(l, docs, m)) != ND_OK) die_nd("nd_loader_add", rc);
        out->add_wall += clock_s(CLOCK_MONOTONIC) - t0;
        out->docs += m;
    }
    double t0 = clock_s(CLOCK_MONOTONIC);
    if ((rc = nd_loader_finish(NULL, l)) != ND_OK) die_nd("nd_loader_finish", rc);
    out->add_wall += clock_s(CLOCK_MONOTONIC) - t0;
    nd_loader_free(l);
    free(docs);
    finish_run(&c, 0, gen_cpu, out);
    if (out->st.documents != b->n) {
        fprintf(stderr, "bench_resemble: the import stored %llu of %llu texts\n",
                (unsigned long long)out->st.documents, (unsigned long long)b->n);
        exit(1);
    }
}

/* --- report --- */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef double (*metric_fn)(const run *r);
static double m_wall(const run *r) { return r->docs / r->wall; }
static double m_cpu(const run *r) { return r->docs / r->cpu; }
static double m_sign(const run *r) { return 1e6 * r->sign_wall / r->docs; }
static double m_add(const run *r) { return 1e6 * r->add_wall / r->docs; }
static double m_add50(const run *r) { return brs_lat_quantile_us(&r->add_lat, 0.50); }
static double m_add99(const run *r) { return brs_lat_quantile_us(&r->add_lat, 0.99); }
static double m_chk50(const run *r) { return brs_lat_quantile_us(&r->check_lat, 0.50); }
static double m_chk99(const run *r) { return brs_lat_quantile_us(&r->check_lat, 0.99); }
static double m_disk(const run *r) { return (double)r->st.disk_bytes / (double)r->st.documents; }
static double m_rss(const run *r) { return r->rss_peak; }
static double m_anon(const run *r) { return r->rss_anon; }
static double m_file(const run *r) { return r->rss_file; }
static double m_load(const run *r) { return r->docs / r->add_wall; }

static double med_of(const run *r, size_t n, metric_fn f, double *lo, double *hi)
{
    double v[64];
    for (size_t i = 0; i < n; i++) v[i] = f(&r[i]);
    double m = median(v, n);
    *lo = v[0];
    *hi = v[n - 1];
    return m;
}

static double share(uint64_t a, uint64_t b) { return b ? (double)a / b : NAN; }

typedef struct metric {
    const char *name;
    metric_fn f;
    const char *fmt;
} metric;

/* One row a metric: each store's median (min-max) and their ratio. */
static void rows(run *runs[2], size_t nr[2], const metric *ms, size_t nm, const char *prefix)
{
    for (size_t i = 0; i < nm; i++) {
        double med[2] = {NAN, NAN}, lo[2], hi[2];
        char cell[2][128];
        for (int s = 0; s < 2; s++) {
            snprintf(cell[s], sizeof cell[s], "-");
            if (!nr[s]) continue;
            med[s] = med_of(runs[s], nr[s], ms[i].f, &lo[s], &hi[s]);
            char a[32], l[32], h[32];
            snprintf(a, sizeof a, ms[i].fmt, med[s]);
            snprintf(l, sizeof l, ms[i].fmt, lo[s]);
            snprintf(h, sizeof h, ms[i].fmt, hi[s]);
            snprintf(cell[s], sizeof cell[s], "%s (%s-%s)", a, l, h);
        }
        printf("| %s%s | %s | %s | %.2f |\n", prefix, ms[i].name, cell[0], cell[1],
               med[1] / med[0]);
    }
}

static const char *const keys_name[] = {"seq", "hashed", "url"};

/* Planted copies of the stream (0 when only imports ran). */
static uint64_t planted(run *runs[2], size_t nr[2])
{
    const run *r = nr[0] ? &runs[0][0] : nr[1] ? &runs[1][0] : NULL;
    return r ? r->copies[JHI] + r->copies[JMID] + r->copies[JLO] : 0;
}

static void report(const bench *b, run *runs[2], size_t nr[2], run *iruns[2], size_t ni[2])
{
    printf("\n%llu texts (seed %llu, %llu planted copies), k=%u, keys %s, %u thread%s, "
           "%zu+%zu runs, medians (min-max):\n\n", (unsigned long long)b->n,
           (unsigned long long)b->seed,
           (unsigned long long)planted(runs, nr),
           b->k, keys_name[b->keys], b->threads, b->threads > 1 ? "s" : "", nr[0], nr[1]);
    static const metric ms[] = {
        {"docs/s, wall (sign + add)", m_wall, "%.0f"},
        {"docs/s, CPU (process)", m_cpu, "%.0f"},
        {"us a doc signing (wall)", m_sign, "%.2f"},
        {"us a doc adding (wall)", m_add, "%.2f"},
        {"add latency p50, us", m_add50, "%.1f"},
        {"add latency p99, us", m_add99, "%.1f"},
        {"check latency p50, us", m_chk50, "%.1f"},
        {"check latency p99, us", m_chk99, "%.1f"},
        {"disk bytes a doc after the stream", m_disk, "%.1f"},
        {"peak RSS of the run, MiB", m_rss, "%.0f"},
        {"RSS after the checks: anonymous, MiB", m_anon, "%.0f"},
        {"RSS after the checks: file-backed, MiB", m_file, "%.0f"},
    };
    static const metric im[] = {
        {"docs/s, loader calls (signing apart)", m_load, "%.0f"},
        {"docs/s, wall (sign + load)", m_wall, "%.0f"},
        {"disk bytes a doc after the load", m_disk, "%.1f"},
        {"peak RSS of the load, MiB", m_rss, "%.0f"},
    };
    printf("| figure | fp-only | resemblance | rs / fp |\n| --- | ---: | ---: | ---: |\n");
    if (nr[0] || nr[1]) rows(runs, nr, ms, sizeof ms / sizeof ms[0], "");
    if (ni[0] || ni[1]) rows(iruns, ni, im, sizeof im / sizeof im[0], "import: ");
    for (int s = 0; s < 2; s++) {
        if (!nr[s]) continue;
        const run *r = &runs[s][0];
        double d = (double)r->st.documents;
        if (s) printf("| resemblance: sketch+band bytes a doc (logical), band keys a doc | | "
                      "%.1f, %.2f | |\n", r->st.sketch_bytes / d, r->st.band_keys / d);
        if (r->has_compact)
            printf("| %s: disk bytes a doc after nd_db_compact | %s%.1f%s |\n", store_name[s],
                   s ? "| " : "", r->st_compact.disk_bytes / d, s ? " |" : " | |");
    }
    if (!nr[0] && !nr[1]) {
        fflush(stdout);
        return;
    }
    printf("\nplanted copies caught (a dup naming a text of the same family), first run:\n\n");
    printf("| store | J >= 0.9 | 0.85 <= J < 0.9 | J < 0.85 | originals called dup |\n"
           "| --- | ---: | ---: | ---: | ---: |\n");
    for (int s = 0; s < 2; s++) {
        if (!nr[s]) continue;
        const run *r = &runs[s][0];
        printf("| %s | %.4f (%llu) | %.4f (%llu) | %.4f (%llu) | %.5f (%llu) |\n", store_name[s],
               share(r->caught[JHI], r->copies[JHI]), (unsigned long long)r->copies[JHI],
               share(r->caught[JMID], r->copies[JMID]), (unsigned long long)r->copies[JMID],
               share(r->caught[JLO], r->copies[JLO]), (unsigned long long)r->copies[JLO],
               share(r->false_dups, r->docs - r->copies[0] - r->copies[1] - r->copies[2]),
               (unsigned long long)r->false_dups);
    }
    fflush(stdout);
}

/* --- JSONL corpus --- */

static int write_jsonl(bench *b, const char *file, double mb)
{
    FILE *f = fopen(file, "w");
    if (!f) return perror(file), 2;
    char *text = bench_xrealloc(NULL, BRS_MAX_TEXT);
    double bytes = 0;
    uint64_t i = 0;
    for (; bytes < mb * 1e6; i++) {
        size_t len = brs_text(&b->g, i, text, NULL);
        int h = fprintf(f, "{\"id\":\"d%llu\",\"text\":\"", (unsigned long long)i);
        size_t w = 0;
        for (size_t c = 0; c < len; c++) {
            if (text[c] == '\n') { fputs("\\n", f); w += 2; }
            else { fputc(text[c], f); w++; }
        }
        fputs("\"}\n", f);
        bytes += h + (double)w + 3;
    }
    free(text);
    if (fclose(f) != 0) return perror(file), 2;
    fprintf(stderr, "bench_resemble: %llu texts, %.0f bytes in %s\n", (unsigned long long)i,
            bytes, file);
    return 0;
}

/* A count: digits or a float, with an optional K or M suffix (1M, 2.5M);
 * 0 for anything else, which the caller refuses. */
static uint64_t count_arg(const char *v)
{
    char *end;
    double x = strtod(v, &end);
    if (*end == 'K' || *end == 'k') x *= 1e3, end++;
    else if (*end == 'M' || *end == 'm') x *= 1e6, end++;
    return end == v || *end || x < 1 ? 0 : (uint64_t)x;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_resemble [--n N] [--rounds R] [--dir D] [--seed S] [--k K]\n"
                    "                      [--batch B] [--only fp|rs] [--threads T] [--import]\n"
                    "                      [--keys seq|hashed|url] [--checks Q] [--compact] [--check]\n"
                    "       bench_resemble --jsonl FILE --mb M [--seed S]\n");
}

int main(int argc, char **argv)
{
    bench b = {.n = 100000, .seed = 1, .batch = 4096, .checks = 20000, .k = 3, .threads = 1,
               .keys = KEYS_SEQ, .dir = "/tmp/nd-bench-resemble"};
    unsigned rounds = 3;
    int only = -1, compact = 0, check = 0, import = 0;
    const char *jsonl = NULL;
    double mb = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--compact") == 0) { compact = 1; continue; }
        if (strcmp(a, "--check") == 0) { check = 1; continue; }
        if (strcmp(a, "--import") == 0) { import = 1; continue; }
        if (strcmp(a, "--import-only") == 0) { import = 2; continue; }
        if (!v) { usage(); return 2; }
        i++;
        if (strcmp(a, "--n") == 0) {
            if (!(b.n = count_arg(v))) {
                fprintf(stderr, "bench_resemble: --n must be a count like 1000000 or 1M, got '%s'\n", v);
                return 2;
            }
        }
        else if (strcmp(a, "--rounds") == 0) rounds = (unsigned)atoi(v);
        else if (strcmp(a, "--dir") == 0) b.dir = v;
        else if (strcmp(a, "--seed") == 0) b.seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--k") == 0) b.k = (unsigned)atoi(v);
        else if (strcmp(a, "--batch") == 0) b.batch = strtoull(v, NULL, 10);
        else if (strcmp(a, "--only") == 0 && strcmp(v, "fp") == 0) only = FP;
        else if (strcmp(a, "--only") == 0 && strcmp(v, "rs") == 0) only = RS;
        else if (strcmp(a, "--threads") == 0) b.threads = (unsigned)atoi(v);
        else if (strcmp(a, "--checks") == 0) b.checks = strtoull(v, NULL, 10);
        else if (strcmp(a, "--keys") == 0 && strcmp(v, "seq") == 0) b.keys = KEYS_SEQ;
        else if (strcmp(a, "--keys") == 0 && strcmp(v, "hashed") == 0) b.keys = KEYS_HASHED;
        else if (strcmp(a, "--keys") == 0 && strcmp(v, "url") == 0) b.keys = KEYS_URL;
        else if (strcmp(a, "--jsonl") == 0) jsonl = v;
        else if (strcmp(a, "--mb") == 0) mb = strtod(v, NULL);
        else { usage(); return 2; }
    }
    brs_gen_init(&b.g, b.seed);
    if (jsonl) {
        int r = write_jsonl(&b, jsonl, mb);
        brs_gen_dispose(&b.g);
        return r;
    }
    if (b.n == 0 || b.batch == 0 || rounds == 0 || rounds > 64 || b.threads < 1 ||
        b.threads > MAX_THREADS) {
        usage();
        return 2;
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", b.dir);
    if (system(cmd) != 0) return fprintf(stderr, "bench_resemble: cannot make %s\n", b.dir), 2;
    b.jtrue = bench_xrealloc(NULL, b.n * sizeof *b.jtrue);
    b.key = bench_xrealloc(NULL, b.batch * sizeof *b.key);
    b.key_len = bench_xrealloc(NULL, b.batch * sizeof *b.key_len);
    for (uint64_t i = 0; i < b.n; i++) b.jtrue[i] = NAN;
    b.off = bench_xrealloc(NULL, b.batch * sizeof *b.off);
    b.len = bench_xrealloc(NULL, b.batch * sizeof *b.len);
    b.sig = bench_xrealloc(NULL, b.batch * sizeof *b.sig);
    b.match = bench_xrealloc(NULL, b.batch * sizeof *b.match);
    run *runs[2] = {bench_xrealloc(NULL, rounds * sizeof(run)), bench_xrealloc(NULL, rounds * sizeof(run))};
    run *iruns[2] = {bench_xrealloc(NULL, rounds * sizeof(run)),
                     bench_xrealloc(NULL, rounds * sizeof(run))};
    size_t nr[2] = {0, 0}, ni[2] = {0, 0};
    int have[2] = {only != RS, only != FP};
    for (unsigned r = 0; r < rounds; r++)
        for (int s = 0; s < 2; s++) {
            if (!have[s]) continue;
            fprintf(stderr, "bench_resemble: round %u, %s store, %llu texts\n", r + 1,
                    store_name[s], (unsigned long long)b.n);
            const run *x = NULL;
            if (import != 2) {
                one_run(&b, s, compact && r == 0, &runs[s][nr[s]]);
                x = &runs[s][nr[s]++];
                fprintf(stderr, "  %s: %.0f docs/s wall, %.0f docs/s CPU, %.1f disk bytes a doc, "
                                "add p99 %.1f us, check p99 %.1f us, peak RSS %.0f MiB\n",
                        store_name[s], m_wall(x), m_cpu(x), m_disk(x), m_add99(x), m_chk99(x),
                        m_rss(x));
            }
            if (!import) continue;
            import_run(&b, s, &iruns[s][ni[s]]);
            x = &iruns[s][ni[s]++];
            fprintf(stderr, "  %s import: %.0f docs/s (loader calls), %.1f disk bytes a doc\n",
                    store_name[s], m_load(x), m_disk(x));
        }
    if (!nr[0] && !nr[1] && !ni[0] && !ni[1]) return 1;
    report(&b, runs, nr, iruns, ni);
    int fail = 0;
    if (check) {
        double rs = nr[1] ? share(runs[1][0].caught[JHI], runs[1][0].copies[JHI]) : 0;
        double fp = nr[0] ? share(runs[0][0].caught[JHI], runs[0][0].copies[JHI]) : 0;
        fail = !(nr[0] && nr[1] && rs >= 0.9 && rs > fp);
        printf("check: copies of J >= 0.9 caught: resemblance %.4f, fp-only %.4f: %s\n", rs, fp,
               fail ? "FAIL" : "ok");
    }
    free(runs[0]);
    free(runs[1]);
    free(iruns[0]);
    free(iruns[1]);
    free(b.key);
    free(b.key_len);
    free(b.jtrue);
    free(b.off);
    free(b.len);
    free(b.sig);
    free(b.match);
    free(b.buf);
    free(b.hash[0]);
    free(b.hash[1]);
    brs_gen_dispose(&b.g);
    return fail;
}
