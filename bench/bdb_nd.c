/*
 * bdb_nd.c — bench_db's neardup phases, through <neardup.h> only.
 *
 * Order (each phase's peak RSS is its own, see bdb_util.c):
 *  1. bulk load of the n stored fingerprints (document key: the index as 8
 *     big-endian bytes), regenerated chunk by chunk;
 *  2. disk figures (nd_db_stats) beside the entropy bound;
 *  3. oracle checks of the sample at k = 3 and 6;
 *  4. warm online queries (the files read into the page cache first): k = 3
 *     and 6, 1 and 2 threads, after one untimed pass; every answer count
 *     is checked against the reference's; then the same on a read-only
 *     handle opened with ND_DB_MMAP (the tables read through mappings);
 *  5. batch: `batch` queries against the stored set (warm);
 *  6. cold online queries: close, drop the OS page cache of the database's
 *     files (posix_fadvise DONTNEED, no root needed), reopen (empty block
 *     cache), time the first qcold queries; then read the files back in;
 *  7. self-join of the join set with nd_selfjoin;
 *  8. stream add_if_new (WAL, no fsync per document) on one thread, then
 *     the next as many documents on two threads, then as many again in
 *     groups through nd_db_batch with ND_BATCH_ADD (add_if_new's decisions,
 *     one write a group); the first two again on a handle opened with
 *     ND_DB_MMAP; then group commit:
 *     check each document of a group with nd_db_query, add the new ones with
 *     one nd_db_add_many on a handle opened with ND_DB_SYNC (one fsync per
 *     group), and a short run of nd_db_add_if_new with ND_DB_SYNC (one fsync
 *     per document) for scale, and nd_db_batch with ND_BATCH_ADD on that
 *     handle (one fsync per group).
 * bulk_load() and batch_run() hold the engine's bulk paths (nd_db_import,
 * nd_db_batch) beside the per-document stand-ins (--no-import, --no-batch).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <neardup.h>

#include "bdb.h"

#define ND_TRY(call)                                                                     \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != ND_OK) bdb_die("%s: %s (%s)", #call, nd_strerror(rc_), nd_errmsg()); \
    } while (0)

static void key_of(uint8_t out[8], uint64_t id)
{
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(id >> (56 - 8 * i));
}

static nd_db *db_open(const bdb_state *s, unsigned flags, uint64_t fold_threshold)
{
    nd_db_options opt = ND_DB_OPTIONS_INIT;
    opt.flags = flags | ND_DB_FINGERPRINT_ONLY; /* fingerprints, no texts */
    opt.k = (unsigned)s->o.plan_k;
    opt.expected_docs = s->o.n;
    opt.cache_bytes = s->o.cache_mb << 20;
    opt.tables = (unsigned)s->o.tables;
    opt.fold_threshold = fold_threshold;
    nd_db *db = NULL;
    ND_TRY(nd_db_open(&db, s->o.dir, &opt));
    return db;
}

/* ---- 1. bulk load ---- */


/* Load ids [0, n) of the stored stream into a fresh database: with an
 * nd_loader (chunks of --load-group documents, default nd_db_import_step's
 * largest) as `neardup import` does; with --import-steps, nd_db_import in
 * calls that grow with the store (the way before the loader); or
 * (--no-import, the stand-in used before either existed) nd_db_add_many of
 * 100000 without background folds. Then one nd_db_compact (a no-op after an
 * import). The caller times the whole; the label goes to the report. */
static const char *bulk_load(bdb_state *s, double *add_s, double *compact_s)
{
    const bdb_opts *o = &s->o;
    int import = !o->no_import, steps = import && o->import_steps, loader = import && !steps;
    nd_db *db = db_open(s, ND_DB_CREATE | ND_DB_EXCL | ND_DB_NO_BACKGROUND, UINT64_MAX);
    nd_loader *l = NULL;
    size_t gmax = o->load_group ? o->load_group : import ? nd_db_import_step(o->n) : 100000;
    if (gmax > o->n) gmax = (size_t)o->n;
    nd_doc *docs = bdb_xmalloc(gmax * sizeof *docs);
    uint8_t(*keys)[8] = bdb_xmalloc(gmax * sizeof *keys);
    double t0 = bdb_now(), call_first = 0, call_last = 0;
    size_t calls = 0;
    if (loader) ND_TRY(nd_loader_new(&l, db, o->load_group));
    for (uint64_t base = 0; base < o->n; calls++) {
        size_t g = o->load_group || !steps ? gmax : nd_db_import_step(base);
        size_t m = o->n - base < g ? (size_t)(o->n - base) : g;
        for (size_t i = 0; i < m; i++) {
            key_of(keys[i], base + i);
            docs[i] = (nd_doc){keys[i], 8, bdb_stored(&s->g, base + i), 0, 1};
        }
        double c0 = bdb_now();
        if (loader) ND_TRY(nd_loader_add(l, docs, m));
        else if (import) ND_TRY(nd_db_import(db, docs, m));
        else ND_TRY(nd_db_add_many(db, docs, m));
        call_last = bdb_now() - c0;
        if (base == 0) call_first = call_last;
        base += m;
    }
    if (loader) { /* the last call is the commit */
        double c0 = bdb_now();
        uint64_t added = 0;
        ND_TRY(nd_loader_finish(&added, l));
        call_last = bdb_now() - c0;
        if (added != o->n) bdb_die("nd_loader_finish added %llu of %llu documents",
                                   (unsigned long long)added, (unsigned long long)o->n);
    }
    double t1 = bdb_now();
    /* does a call's cost grow with what is already stored? */
    bdb_metric("nd.load.first_call_s", call_first);
    bdb_metric("nd.load.last_call_s", call_last);
    bdb_metric("nd.load.calls", (double)calls);
    nd_loader_free(l);
    ND_TRY(nd_db_compact(db));
    ND_TRY(nd_db_close(db));
    *add_s = t1 - t0;
    *compact_s = bdb_now() - t1;
    free(docs);
    free(keys);
    static char label[160];
    if (loader)
        snprintf(label, sizeof label,
                 "nd_loader in chunks of %zu documents (nd_loader_add, then nd_loader_finish: "
                 "the last call), then nd_db_compact",
                 o->load_group ? (size_t)o->load_group : nd_db_import_step(UINT64_MAX));
    else if (steps && !o->load_group)
        snprintf(label, sizeof label,
                 "nd_db_import in %zu calls growing with the store (half of it, 1M..8M), "
                 "then nd_db_compact", calls);
    else
        snprintf(label, sizeof label, "%s in calls of %zu documents, then nd_db_compact",
                 import ? "nd_db_import" : "nd_db_add_many (--no-import)", gmax);
    return label;
}

/* ---- queries ---- */

typedef struct nd_ctx {
    nd_db *db;
    nd_results *res[2];
    unsigned flags;
} nd_ctx;

static size_t nd_fn(void *ctx, unsigned tid, uint64_t q, unsigned k)
{
    nd_ctx *c = ctx;
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.flags = c->flags;
    if (nd_db_query(c->res[tid], c->db, q, k, &qo) != ND_OK) return SIZE_MAX;
    return nd_results_count(c->res[tid]);
}

static void ctx_init(nd_ctx *c, nd_db *db, unsigned flags)
{
    c->db = db;
    c->flags = flags;
    ND_TRY(nd_results_new(&c->res[0]));
    ND_TRY(nd_results_new(&c->res[1]));
}

static void ctx_dispose(nd_ctx *c)
{
    nd_results_free(c->res[0]);
    nd_results_free(c->res[1]);
}

/* fps of the last answer on thread 0 */
static size_t answer_fps(const nd_ctx *c, uint64_t **buf, size_t *cap)
{
    size_t n = nd_results_count(c->res[0]);
    if (n > *cap) {
        *cap = n * 2;
        *buf = realloc(*buf, *cap * sizeof **buf);
        if (!*buf) bdb_die("out of memory");
    }
    for (size_t i = 0; i < n; i++) (*buf)[i] = nd_results_get(c->res[0], i)->fp;
    return n;
}

static void check_counts(bdb_state *s, const char *what, const uint32_t *got,
                         const uint32_t *want, size_t n)
{
    size_t bad = 0, first = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            if (first == SIZE_MAX) first = i;
            bad++;
        }
    if (bad)
        bdb_fail(s, "%s: %zu of %zu answer counts differ from the reference (first: query "
                    "%zu, %u vs %u)",
                 what, bad, n, first, got[first], want[first]);
}

static void timed_queries(bdb_state *s, nd_ctx *c, const char *label, unsigned k,
                          unsigned threads, size_t n, double *lat, uint32_t *cnt)
{
    char name[96];
    double io0 = bdb_storage_read_mib();
    double wall = bdb_run_queries(nd_fn, c, s->qs, n, k, threads, lat, cnt);
    if (wall < 0) bdb_die("nd_db_query: %s", nd_errmsg());
    double io1 = bdb_storage_read_mib();
    snprintf(name, sizeof name, "nd.%s.k%u.t%u", label, k, threads);
    bdb_record_latency(name, lat, n, wall);
    /* warm figures are only warm if this stays near 0 */
    if (io0 >= 0 && io1 >= 0) bdb_metricf(io1 - io0, "%s.storage_read_mib", name);
    const uint32_t *want = k == 3 ? s->ref_cnt3 : s->ref_cnt6;
    if (want && cnt) check_counts(s, name, cnt, want, n);
}

static nd_db *reopen_cold(bdb_state *s, nd_db *db)
{
    ND_TRY(nd_db_close(db));
    bdb_drop_cache(s->o.dir);
    return db_open(s, 0, 0);
}

/* 4b. The warm queries again on a second handle, read-only, that reads
 * the tables through mappings (ND_DB_MMAP): after one untimed pass,
 * which maps most pages a query touches. Its own RSS peak: the mapped
 * pages count in it; after the queries, its anonymous and file-backed
 * parts apart. */
static void mapped_queries(bdb_state *s, const bdb_opts *o, double *lat, uint32_t *cnt)
{
    nd_ctx c;
    ctx_init(&c, db_open(s, ND_DB_READONLY | ND_DB_MMAP, 0), 0);
    bench_rss_reset();
    bdb_run_queries(nd_fn, &c, s->qs, o->q, 3, 1, NULL, NULL);
    for (unsigned k = 3; k <= 6; k += 3)
        for (unsigned th = 1; th <= 2; th++)
            timed_queries(s, &c, "query_mmap", k, th, k == 3 ? o->q : o->q6, lat, cnt);
    c.flags = ND_QUERY_FP_ONLY;
    timed_queries(s, &c, "query_mmap_fponly", 3, 1, o->q, lat, cnt);
    bdb_metric("rss.query_mmap_mib", bench_rss_peak_mib());
    /* What top shows: RES the sum, SHR the file-backed share (the mapped
     * tables, page cache the kernel reclaims under pressure). */
    double anon, file;
    bench_rss_split_mib(&anon, &file);
    bdb_metric("rss.query_mmap_anon_mib", anon);
    bdb_metric("rss.query_mmap_file_mib", file);
    ND_TRY(nd_db_close(c.db));
    ctx_dispose(&c);
}

/* ---- 6. batch ---- */

/* Outcome of one batch document: is a near-duplicate stored (or, with
 * nd_db_batch, an earlier new document of the batch), and the closest one. */
typedef struct bres {
    uint64_t fp;   /* match fingerprint */
    size_t from;   /* earlier batch document matched, or SIZE_MAX (stored) */
    uint8_t dup, dist;
} bres;

/* Check n documents at distance k against the stored set: nd_db_batch (one
 * merge join per table), or (--no-batch, the stand-in used before it
 * existed) one nd_db_query per document (closest match only) on one thread. */
static const char *batch_run(const bdb_state *s, nd_db *db, const uint64_t *q, size_t n,
                             unsigned k, bres *out)
{
    if (!s->o.no_batch) {
        nd_doc *docs = bdb_xmalloc(n * sizeof *docs);
        uint8_t(*keys)[8] = bdb_xmalloc(n * sizeof *keys);
        nd_batch_item *it = bdb_xmalloc(n * sizeof *it);
        nd_results *kr;
        ND_TRY(nd_results_new(&kr));
        for (size_t i = 0; i < n; i++) {
            key_of(keys[i], (4ull << 60) | i);
            docs[i] = (nd_doc){keys[i], 8, q[i], 0, 5};
        }
        ND_TRY(nd_db_batch(it, kr, db, docs, n, k, 0));
        for (size_t i = 0; i < n; i++)
            out[i] = (bres){it[i].match_fp,
                            it[i].match_index == ND_BATCH_STORED ? SIZE_MAX : it[i].match_index,
                            (uint8_t)(it[i].dup != 0), (uint8_t)it[i].dist};
        nd_results_free(kr);
        free(it);
        free(keys);
        free(docs);
        return "nd_db_batch (check only)";
    }
    nd_results *res;
    ND_TRY(nd_results_new(&res));
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.flags = ND_QUERY_FP_ONLY;
    qo.limit = 1;
    for (size_t i = 0; i < n; i++) {
        ND_TRY(nd_db_query(res, db, q[i], k, &qo));
        out[i] = (bres){0, SIZE_MAX, 0, 0};
        if (nd_results_count(res)) {
            const nd_match *m = nd_results_get(res, 0);
            out[i] = (bres){m->fp, SIZE_MAX, 1, (uint8_t)m->dist};
        }
    }
    nd_results_free(res);
    return "one nd_db_query per document, closest match, 1 thread (--no-batch)";
}

/* Every outcome against the reference's counts, the sample's distances
 * against the scan. */
static void batch_check(bdb_state *s, const bres *r, size_t n, unsigned k)
{
    size_t inbatch = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t q = s->bq[i];
        int stored = s->ref_bcnt ? s->ref_bcnt[i] > 0 : -1;
        if (r[i].dup && r[i].from != SIZE_MAX) {
            inbatch++;
            if (r[i].from >= i || (unsigned)__builtin_popcountll(s->bq[r[i].from] ^ q) != r[i].dist ||
                r[i].dist > k)
                bdb_fail(s, "batch: document %zu matched batch document %zu wrongly", i,
                         r[i].from);
            continue;
        }
        if (r[i].dup && ((unsigned)__builtin_popcountll(r[i].fp ^ q) != r[i].dist || r[i].dist > k))
            bdb_fail(s, "batch: document %zu: match at a wrong distance", i);
        if (stored >= 0 && r[i].dup != stored)
            bdb_fail(s, "batch: document %zu is %s, the reference finds %u stored within %u", i,
                     r[i].dup ? "a duplicate" : "new", s->ref_bcnt[i], k);
    }
    for (size_t i = 0; i < s->nbs && i < n; i++) {
        unsigned best = 99;
        for (size_t j = s->borc_off[i]; j < s->borc_off[i + 1]; j++) {
            unsigned d = (unsigned)__builtin_popcountll(s->borc_fp[j] ^ s->bq[i]);
            if (d < best) best = d;
        }
        if (r[i].from != SIZE_MAX) continue;
        if ((best == 99) != !r[i].dup || (r[i].dup && r[i].dist != best))
            bdb_fail(s, "batch: sample document %zu: closest stored at %u, the scan %u", i,
                     r[i].dup ? r[i].dist : 99u, best);
    }
    bdb_metric("nd.batch.k3.inbatch_matches", (double)inbatch);
}

/* ---- 7. self-join ---- */

typedef struct pairs {
    uint64_t (*p)[2];
    size_t n, cap;
} pairs;

static int pair_cb(size_t i, size_t j, unsigned dist, void *payload)
{
    (void)dist;
    pairs *ps = payload;
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 4096;
        ps->p = realloc(ps->p, ps->cap * sizeof *ps->p);
        if (!ps->p) return ND_ENOMEM;
    }
    ps->p[ps->n][0] = i;
    ps->p[ps->n][1] = j;
    ps->n++;
    return 0;
}

static void selfjoin_phase(bdb_state *s)
{
    const bdb_opts *o = &s->o;
    pairs ps = {0};
    bench_rss_reset();
    double t0 = bdb_now();
    ND_TRY(nd_selfjoin(s->js, o->join, 3, pair_cb, &ps));
    double dt = bdb_now() - t0;
    bdb_metric("nd.selfjoin.k3.s", dt);
    bdb_metric("nd.selfjoin.k3.pairs", (double)ps.n);
    bdb_metric("rss.selfjoin_mib", bench_rss_peak_mib());

    /* Check the sampled elements' partners against the scan. */
    size_t ns = s->njs;
    uint64_t **got = bdb_xcalloc(ns + 1, sizeof *got);
    size_t *ng = bdb_xcalloc(ns + 1, sizeof *ng), *cap = bdb_xcalloc(ns + 1, sizeof *cap);
    /* sample index lookup: sorted (element, sample slot) */
    uint64_t (*look)[2] = bdb_xmalloc((ns + 1) * sizeof *look);
    for (size_t i = 0; i < ns; i++) {
        look[i][0] = s->js_idx[i];
        look[i][1] = i;
    }
    qsort(look, ns, sizeof *look, bdb_cmp_u64);
    for (size_t pi = 0; pi < ps.n; pi++)
        for (int side = 0; side < 2; side++) {
            uint64_t e = ps.p[pi][side], other = ps.p[pi][!side];
            size_t lo = 0, hi = ns;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (look[mid][0] < e) lo = mid + 1;
                else hi = mid;
            }
            for (; lo < ns && look[lo][0] == e; lo++) {
                size_t slot = look[lo][1];
                if (ng[slot] == cap[slot]) {
                    cap[slot] = cap[slot] ? cap[slot] * 2 : 8;
                    got[slot] = realloc(got[slot], cap[slot] * sizeof **got);
                    if (!got[slot]) bdb_die("out of memory");
                }
                got[slot][ng[slot]++] = other;
            }
        }
    for (size_t i = 0; i < ns; i++) {
        size_t want = s->jorc_off[i + 1] - s->jorc_off[i];
        if (ng[i]) qsort(got[i], ng[i], sizeof **got, bdb_cmp_u64);
        if (ng[i] != want ||
            (want && memcmp(got[i], s->jorc + s->jorc_off[i], want * sizeof **got) != 0))
            bdb_fail(s, "nd_selfjoin: element %llu has %zu partners within 3, the scan %zu",
                     (unsigned long long)s->js_idx[i], ng[i], want);
        free(got[i]);
    }
    free(got);
    free(ng);
    free(cap);
    free(look);
    free(ps.p);
}

/* ---- 8. streams ---- */

/* One of the two threads of the second stream: documents from + j for
 * j = id, id + 2, ... below n. */
typedef struct stream_worker {
    nd_db *db;
    const bdb_gen *g;
    uint64_t from, n;
    unsigned id;
    size_t added;
    int rc;
} stream_worker;

/* nd_db_add_if_new of the stream's document id; *added counts it if new. */
static int stream_add(nd_db *db, const bdb_gen *g, uint64_t id, nd_results *res, size_t *added)
{
    uint8_t key[8];
    key_of(key, (1ull << 62) | id);
    int rc = nd_db_add_if_new(res, db, key, 8, bdb_query(g, BDB_STREAM, id, NULL), 0, 2, 3);
    if (rc == ND_OK) *added += nd_results_count(res) == 0;
    return rc;
}

static void *stream_worker_main(void *p)
{
    stream_worker *w = p;
    nd_results *res;
    w->rc = nd_results_new(&res);
    for (uint64_t j = w->id; w->rc == ND_OK && j < w->n; j += 2)
        w->rc = stream_add(w->db, w->g, w->from + j, res, &w->added);
    nd_results_free(res);
    return NULL;
}

/* The stream's next n documents (ids from..) on two threads: metrics
 * nd.NAME.docs_per_s and .added. */
static void stream_two_threads(bdb_state *s, nd_db *db, uint64_t from, uint64_t n,
                               const char *name)
{
    stream_worker w[2];
    pthread_t th;
    for (unsigned i = 0; i < 2; i++) w[i] = (stream_worker){db, &s->g, from, n, i, 0, ND_OK};
    double w0 = bdb_now();
    if (pthread_create(&th, NULL, stream_worker_main, &w[1]) != 0) bdb_die("pthread_create failed");
    stream_worker_main(&w[0]);
    pthread_join(th, NULL);
    double wall = bdb_now() - w0;
    for (unsigned i = 0; i < 2; i++) ND_TRY(w[i].rc);
    bdb_metricf((double)n / wall, "nd.%s.docs_per_s", name);
    bdb_metricf((double)(w[0].added + w[1].added), "nd.%s.added", name);
}

/* The stream's next n documents (ids from..) on one thread, each timed:
 * metrics nd.NAME.docs_per_s, .added and the latencies nd.NAME.k3. */
static void stream_one_thread(bdb_state *s, nd_db *db, uint64_t from, uint64_t n,
                              const char *name)
{
    nd_results *res;
    ND_TRY(nd_results_new(&res));
    double *lat = bdb_xmalloc((n + 1) * sizeof *lat);
    size_t added = 0;
    double w0 = bdb_now();
    for (uint64_t j = 0; j < n; j++) {
        double t0 = bdb_now();
        ND_TRY(stream_add(db, &s->g, from + j, res, &added));
        lat[j] = bdb_now() - t0;
    }
    double wall = bdb_now() - w0;
    char label[64];
    snprintf(label, sizeof label, "nd.%s.k3", name);
    bdb_record_latency(label, lat, n, wall);
    bdb_metricf((double)n / wall, "nd.%s.docs_per_s", name);
    bdb_metricf((double)added, "nd.%s.added", name);
    free(lat);
    nd_results_free(res);
}

/* n documents of the stream from id `from` on, o->group at a time through
 * nd_db_batch with ND_BATCH_ADD: each group checked against the stored set
 * and within itself as add_if_new one by one would, its new documents
 * stored by one write (fsynced when db was opened with ND_DB_SYNC).
 * Metrics nd.NAME.docs_per_s, .group and .added. */
static void stream_batches(bdb_state *s, nd_db *db, uint64_t from, uint64_t n, const char *name)
{
    size_t g = s->o.group, added = 0;
    nd_doc *docs = bdb_xmalloc(g * sizeof *docs);
    uint8_t(*keys)[8] = bdb_xmalloc(g * sizeof *keys);
    nd_batch_item *items = bdb_xmalloc(g * sizeof *items);
    nd_results *match_keys;
    ND_TRY(nd_results_new(&match_keys));
    double w0 = bdb_now();
    for (uint64_t base = 0; base < n; base += g) {
        size_t m = n - base < g ? (size_t)(n - base) : g;
        for (size_t i = 0; i < m; i++) {
            key_of(keys[i], (1ull << 62) | (from + base + i));
            uint64_t fp = bdb_query(&s->g, BDB_STREAM, from + base + i, NULL);
            docs[i] = (nd_doc){keys[i], 8, fp, 0, 2};
        }
        ND_TRY(nd_db_batch(items, match_keys, db, docs, m, 3, ND_BATCH_ADD));
        for (size_t i = 0; i < m; i++) added += !items[i].dup;
    }
    double wall = bdb_now() - w0;
    if (n) {
        bdb_metricf((double)n / wall, "nd.%s.docs_per_s", name);
        bdb_metricf((double)g, "nd.%s.group", name);
        bdb_metricf((double)added, "nd.%s.added", name);
    }
    nd_results_free(match_keys);
    free(items);
    free(keys);
    free(docs);
}

static void stream_phase(bdb_state *s, nd_db *db)
{
    const bdb_opts *o = &s->o;
    nd_results *res;
    ND_TRY(nd_results_new(&res));
    uint8_t key[8];
    size_t added = 0;
    double w0, wall;

    bench_rss_reset();
    if (o->stream) {
        stream_one_thread(s, db, 0, o->stream, "stream");
        stream_two_threads(s, db, o->stream, o->stream, "stream_t2");
    }
    stream_batches(s, db, 2 * o->stream, o->stream, "stream_batch");
    bdb_metric("rss.stream_mib", bench_rss_peak_mib());
    ND_TRY(nd_db_close(db));

    /* The single-document streams again with the tables mapped (ids past
     * every other stream's: stream_batch_sync's end at 3 * stream +
     * group_docs). */
    if (o->stream) {
        uint64_t from = 3 * o->stream + o->group_docs;
        db = db_open(s, ND_DB_MMAP, 0);
        bench_rss_reset();
        stream_one_thread(s, db, from, o->stream, "stream_mmap");
        stream_two_threads(s, db, from + o->stream, o->stream, "stream_mmap_t2");
        bdb_metric("rss.stream_mmap_mib", bench_rss_peak_mib());
        ND_TRY(nd_db_close(db));
    }

    /* Group commit on a handle that fsyncs every write. */
    db = db_open(s, ND_DB_SYNC, 0);
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.flags = ND_QUERY_FIRST | ND_QUERY_FP_ONLY;
    size_t g = o->group;
    nd_doc *docs = bdb_xmalloc(g * sizeof *docs);
    uint8_t(*keys)[8] = bdb_xmalloc(g * sizeof *keys);
    added = 0;
    w0 = bdb_now();
    for (uint64_t base = 0; base < o->group_docs; base += g) {
        size_t m = o->group_docs - base < g ? (size_t)(o->group_docs - base) : g, na = 0;
        for (size_t i = 0; i < m; i++) {
            uint64_t fp = bdb_query(&s->g, BDB_GROUP, base + i, NULL);
            ND_TRY(nd_db_query(res, db, fp, 3, &qo));
            if (nd_results_count(res)) continue;
            /* a near-duplicate inside the same group is not caught: the
             * group's documents are random, such pairs are negligible */
            key_of(keys[na], (2ull << 62) | (base + i));
            docs[na] = (nd_doc){keys[na], 8, fp, 0, 3};
            na++;
        }
        ND_TRY(nd_db_add_many(db, docs, na));
        added += na;
    }
    wall = bdb_now() - w0;
    bdb_metric("nd.stream_group_sync.docs_per_s", (double)o->group_docs / wall);
    bdb_metric("nd.stream_group_sync.group", (double)g);
    bdb_metric("nd.stream_group_sync.added", (double)added);

    w0 = bdb_now();
    for (uint64_t j = 0; j < o->fsync_docs; j++) {
        key_of(key, (3ull << 62) | j);
        uint64_t fp = bdb_query(&s->g, BDB_GROUP, o->group_docs + j, NULL);
        ND_TRY(nd_db_add_if_new(res, db, key, 8, fp, 0, 4, 3));
    }
    wall = bdb_now() - w0;
    if (o->fsync_docs) bdb_metric("nd.stream_sync_each.docs_per_s", (double)o->fsync_docs / wall);
    stream_batches(s, db, 3 * o->stream, o->group_docs, "stream_batch_sync");
    ND_TRY(nd_db_close(db));
    free(docs);
    free(keys);
    nd_results_free(res);
}

void bdb_phase_neardup(bdb_state *s)
{
    const bdb_opts *o = &s->o;

    /* 1. bulk load */
    bdb_metric("rss.harness_mib", bench_rss_now_mib());
    bench_rss_reset();
    double add_s = 0, compact_s = 0;
    double t0 = bdb_now(), dt;
    const char *how;
    if (o->reuse) {
        bdb_note("bulk load: none (--reuse of %s)", o->dir);
    } else {
        how = bulk_load(s, &add_s, &compact_s);
        dt = bdb_now() - t0;
        bdb_metric("nd.load.docs_per_s", (double)o->n / dt);
        bdb_metric("nd.load.add_s", add_s);
        bdb_metric("nd.load.compact_s", compact_s);
        bdb_metric("rss.load_mib", bench_rss_peak_mib());
        bdb_note("bulk load: %s", how);
    }

    /* 2. disk */
    nd_db *db = db_open(s, 0, 0);
    nd_plan_info pi;
    ND_TRY(nd_db_plan(&pi, db));
    nd_stats st;
    ND_TRY(nd_db_stats(&st, db));
    double bpe = 0;
    for (unsigned i = 0; i < st.tables; i++) bpe += st.table[i].bits_per_entry;
    bpe /= st.tables ? st.tables : 1;
    uint64_t du = bdb_du(o->dir);
    bdb_metric("nd.tables", st.tables);
    bdb_metric("nd.prefix_min", pi.prefix_min);
    bdb_metric("nd.prefix_max", pi.prefix_max);
    bdb_metric("nd.fingerprints", (double)st.fingerprints);
    bdb_metric("nd.disk.bytes", (double)du);
    bdb_metric("nd.disk.table_bits_per_entry", bpe);
    bdb_metric("nd.disk.all_bits_per_entry_table", 8.0 * (double)du / ((double)o->n * st.tables));
    bdb_metric("nd.disk.bytes_per_doc", (double)du / (double)o->n);
    if (st.fingerprints != o->n && st.fingerprints + 2 < o->n)
        bdb_fail(s, "stats: %llu fingerprints stored, %llu loaded",
                 (unsigned long long)st.fingerprints, (unsigned long long)o->n);
    if (o->verify) {
        t0 = bdb_now();
        int rc = nd_db_verify(db);
        if (rc != ND_OK) bdb_fail(s, "nd_db_verify: %s", nd_errmsg());
        bdb_metric("nd.verify_s", bdb_now() - t0);
    }

    /* 3. oracle checks */
    nd_ctx c;
    ctx_init(&c, db, 0);
    uint64_t *buf = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < s->ns; i++)
        for (unsigned k = 3; k <= 6; k += 3) {
            if (nd_fn(&c, 0, s->qs[i], k) == SIZE_MAX) bdb_die("nd_db_query: %s", nd_errmsg());
            bdb_check_online(s, "neardup", i, k, buf, answer_fps(&c, &buf, &cap));
        }

    /* 4. warm queries. "Warm" is the database's files in the OS page
     * cache: read them in first (an import writes its SST files through
     * RocksDB's SstFileWriter, which drops them from the page cache as it
     * goes; at 100M a batch after the queries still read 1.1 GB). */
    bdb_warm_cache(o->dir);
    size_t nq = o->q > o->q6 ? o->q : o->q6;
    double *lat = bdb_xmalloc((nq + 1) * sizeof *lat);
    uint32_t *cnt = bdb_xmalloc((nq + 1) * sizeof *cnt);
    bench_rss_reset();
    bdb_metric("rss.query_start_mib", bench_rss_now_mib());
    bdb_run_queries(nd_fn, &c, s->qs, o->q, 3, 1, NULL, NULL); /* warm up */
    for (unsigned k = 3; k <= 6; k += 3)
        for (unsigned th = 1; th <= 2; th++)
            timed_queries(s, &c, "query", k, th, k == 3 ? o->q : o->q6, lat, cnt);
    c.flags = ND_QUERY_FP_ONLY;
    timed_queries(s, &c, "query_fponly", 3, 1, o->q, lat, cnt);
    c.flags = 0;
    bdb_metric("rss.query_mib", bench_rss_peak_mib());
    mapped_queries(s, o, lat, cnt);

    /* 5. batch (warm: before the cold phase drops the page cache) */
    bench_rss_reset();
    double bio0 = bdb_storage_read_mib();
    bres *br = bdb_xmalloc((o->batch + 1) * sizeof *br);
    t0 = bdb_now();
    how = batch_run(s, db, s->bq, o->batch, 3, br);
    dt = bdb_now() - t0;
    bdb_metric("nd.batch.k3.s", dt);
    bdb_metric("nd.batch.k3.qps", (double)o->batch / dt);
    if (bio0 >= 0) bdb_metric("nd.batch.k3.storage_read_mib", bdb_storage_read_mib() - bio0);
    bdb_metric("rss.batch_mib", bench_rss_peak_mib());
    bdb_note("batch: %s", how);
    batch_check(s, br, o->batch, 3);
    size_t dups = 0;
    for (size_t i = 0; i < o->batch; i++) dups += br[i].dup;
    bdb_metric("nd.batch.k3.dups", (double)dups);
    free(br);

    /* 6. cold queries (after the batch, which is timed warm) */
    size_t ncold = o->qcold < o->q ? o->qcold : o->q;
    for (unsigned k = 3; k <= 6; k += 3) {
        db = reopen_cold(s, db);
        c.db = db;
        timed_queries(s, &c, "query_cold", k, 1, k == 3 ? ncold : (ncold < o->q6 ? ncold : o->q6),
                      lat, cnt);
    }
    ctx_dispose(&c);
    free(lat);
    /* The phases after this one are timed warm again. */
    bdb_warm_cache(o->dir);

    /* 7. self-join */
    selfjoin_phase(s);

    /* 8. streams (they change the stored set: last) */
    stream_phase(s, db);
    free(buf);
    free(cnt);
}
