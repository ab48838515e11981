/*
 * bdb.h — shared pieces of bench_db, the database benchmark (issue 5).
 *
 * bench_db measures neardup against baselines on synthetic fingerprints:
 *  - bdb_gen.c:  the seeded, counter-based data generator (any element of
 *                any stream can be computed alone, so phases regenerate
 *                data instead of holding it);
 *  - bdb_scan.c: the brute-force popcount scan, the oracle of every check;
 *  - bdb_ref.c:  the in-memory reference of the same method (sorted
 *                permuted tables, direct index on their top bits), the
 *                "limit" a persistent engine can approach;
 *  - bdb_util.c: clocks, percentiles, peak RSS per phase, the metrics
 *                record written as JSON, directory helpers;
 *  - bdb_main.c: the phases and the command line.
 * Only <neardup.h> is used from neardup; the baselines take nothing from
 * the engine under test but the planner's choice of design
 * (nd_plan_candidates), so the reference mirrors the engine's tables.
 */
#ifndef BDB_H
#define BDB_H

#include <stddef.h>
#include <stdint.h>

#include "bench_rss.h"

/* ---- generator (bdb_gen.c) ---------------------------------------- */

/* Streams: each draws from its own sub-seed. */
enum { BDB_STORED = 'S', BDB_QUERY = 'Q', BDB_BATCH = 'B', BDB_STREAM = 'A',
       BDB_GROUP = 'G', BDB_JOIN = 'J' };

#define BDB_MAX_FLIPS 6u

typedef struct bdb_gen {
    uint64_t seed;
    uint64_t n; /* stored fingerprints */
} bdb_gen;

uint64_t bdb_mix(uint64_t x);
/* Stored fingerprint i (uniform random). */
uint64_t bdb_stored(const bdb_gen *g, uint64_t i);
/* Query j of a stream: with probability 1/2 a stored fingerprint with
 * 0..BDB_MAX_FLIPS distinct random bits flipped (flip count uniform), else
 * a fresh random value. *base receives the stored index or UINT64_MAX. */
uint64_t bdb_query(const bdb_gen *g, int stream, uint64_t j, uint64_t *base);
/* The self-join set of n elements: the first half fresh random values,
 * element n/2 + i a copy of element i with 0..6 bits flipped. */
uint64_t bdb_join_elem(const bdb_gen *g, uint64_t n, uint64_t i);

/* ---- brute force (bdb_scan.c) --------------------------------------- */

/* Append to out (grown with realloc) every v[i] with popcount(v[i]^q) <= k;
 * returns the count or SIZE_MAX on allocation failure. */
size_t bdb_scan(const uint64_t *v, size_t n, uint64_t q, unsigned k, uint64_t **out,
                size_t *cap);
/* Only count. */
size_t bdb_scan_count(const uint64_t *v, size_t n, uint64_t q, unsigned k);

/* ---- in-memory reference (bdb_ref.c) ------------------------------- */

typedef struct bdb_ref bdb_ref;

/* Build the one-level Manku design with `blocks` blocks for design distance
 * k (C(blocks, blocks-k) tables, the blocks-k chosen blocks on top) over
 * v[0..n). Index bits: min(prefix, floor(log2 n)), at least 1.
 * Returns NULL on bad arguments or out of memory. */
bdb_ref *bdb_ref_new(const uint64_t *v, size_t n, unsigned k, unsigned blocks);
void bdb_ref_free(bdb_ref *r);
unsigned bdb_ref_tables(const bdb_ref *r);
unsigned bdb_ref_prefix_min(const bdb_ref *r);
size_t bdb_ref_bytes(const bdb_ref *r);

/* Per-thread scratch of a query. */
typedef struct bdb_ref_scratch {
    uint64_t *v;
    size_t n, cap;
} bdb_ref_scratch;

/* Distinct stored fingerprints within qk of q (any qk <= 16: beyond the
 * design k, prefixes within d = floor(m*qk/b) flips are probed, m the
 * chosen blocks). Results left sorted in s->v[0..s->n); returns the count
 * or SIZE_MAX on allocation failure. Thread-safe with distinct scratch. */
size_t bdb_ref_query(const bdb_ref *r, uint64_t q, unsigned qk, bdb_ref_scratch *s);

/* ---- utilities (bdb_util.c) ---------------------------------------- */

double bdb_now(void); /* monotonic seconds */
/* qsort's comparator of uint64_t, ascending. */
int bdb_cmp_u64(const void *a, const void *b);
/* Sort lat[0..n) and return the q-quantile (0 <= q <= 1). */
double bdb_quantile(double *lat, size_t n, double q);
double bdb_median(double *v, size_t n);

/* Peak resident set per phase: bench_rss.h (bench_rss_reset, then
 * bench_rss_peak_mib). */
/* MiB read from storage by this process so far (/proc/self/io), or -1. */
double bdb_storage_read_mib(void);

/* Metrics record: "name" -> number, written as JSON at the end. */
void bdb_metric(const char *name, double value);
void bdb_metricf(double value, const char *fmt, ...);
void bdb_note(const char *fmt, ...); /* free-text notes in the JSON */
int bdb_metrics_write(const char *path, const char *header_json);

/* Directories. */
int bdb_rmtree(const char *path);
/* Drop the OS page cache of every file under path (posix_fadvise
 * DONTNEED): a cold start without root. Returns files touched. */
long bdb_drop_cache(const char *path);
/* Read every file under path once, into the OS page cache. */
void bdb_warm_cache(const char *path);
/* Bytes of the regular files under path. */
uint64_t bdb_du(const char *path);

/* Allocation helpers that die on failure (benchmark, not library). */
void *bdb_xmalloc(size_t n);
void *bdb_xcalloc(size_t n, size_t sz);
void bdb_die(const char *fmt, ...);

/* ---- one benchmark run (bdb_main.c, bdb_base.c, bdb_nd.c) ----------- */

typedef struct bdb_opts {
    uint64_t n, q, q6, qcold, sample, batch, stream, group, group_docs, fsync_docs;
    uint64_t join, load_group, seed, cache_mb, tables, plan_k;
    const char *dir, *out, *dump;
    int keep, reuse, verify, no_import, import_steps, no_batch;
} bdb_opts;

typedef struct bdb_state {
    bdb_opts o;
    bdb_gen g;
    uint64_t *qs;       /* online queries, o.q of them */
    uint64_t *bq;       /* batch queries, o.batch */
    uint64_t *js;       /* self-join set, o.join */
    /* oracle of the first ns online queries: stored fps within 6, sorted */
    size_t ns, *orc_off;
    uint64_t *orc_fp;
    /* oracle of the first nbs batch queries within 3 */
    size_t nbs, *borc_off;
    uint64_t *borc_fp;
    /* self-join sample: element js_idx[i]'s partners (indices), sorted */
    size_t njs, *jorc_off;
    uint64_t *js_idx, *jorc;
    /* reference answer counts for every query (UINT32_MAX: not computed) */
    uint32_t *ref_cnt3, *ref_cnt6, *ref_bcnt;
    unsigned plan_k, plan_tables, plan_blocks, plan_levels; /* the database's design */
    unsigned ref_blocks; /* the reference's: the best one-level design for k=3 */
    long failures; /* disagreements with the oracle or the reference */
} bdb_state;

/* Run nq queries through fn with `threads` threads (query i on thread
 * i mod threads); lat[i] receives seconds, cnt[i] the answer count (both
 * may be NULL). Returns the wall time. fn returns SIZE_MAX on error. */
typedef size_t (*bdb_query_fn)(void *ctx, unsigned tid, uint64_t q, unsigned k);
double bdb_run_queries(bdb_query_fn fn, void *ctx, const uint64_t *qs, size_t nq, unsigned k,
                       unsigned threads, double *lat, uint32_t *cnt);
/* Record <prefix>.p50_us, .p99_us, .qps from a latency array (sorted). */
void bdb_record_latency(const char *prefix, double *lat, size_t n, double wall);

/* Compare an answer (fps, any order, duplicates allowed; sorted in place)
 * with the oracle of sample query i at distance k; counts and reports a
 * disagreement. what names the system. Returns 0 when equal. */
int bdb_check_online(bdb_state *s, const char *what, size_t i, unsigned k, uint64_t *got,
                     size_t ngot);
int bdb_check_batch(bdb_state *s, const char *what, size_t i, uint64_t *got, size_t ngot);
void bdb_fail(bdb_state *s, const char *fmt, ...);

/* Phases. */
void bdb_phase_data(bdb_state *s);      /* queries, join set (bdb_base.c) */
void bdb_phase_baselines(bdb_state *s); /* scan oracle + reference */
void bdb_phase_neardup(bdb_state *s);   /* bdb_nd.c */

#endif /* BDB_H */
