/*
 * bdb_base.c — bench_db's data and baseline phases.
 *
 * Data: the online queries, the batch queries and the self-join set are
 * generated once and kept (they are small); the stored set (8 bytes per
 * fingerprint) lives only during this phase and is regenerated chunk by
 * chunk by the neardup phase, so the engine's peak RSS is its own.
 *
 * Baselines, in the same process and run as the engine:
 *  - the brute-force scan over the first `sample` online queries (k = 6,
 *    from which every k <= 6 answer is filtered) and the first sample/2
 *    batch queries (k = 3): this is the oracle; its per-query time is the
 *    scan baseline (batch and self-join scan figures are extrapolated from
 *    it and flagged as estimates);
 *  - the in-memory reference (bdb_ref.c) with the engine's design (same k,
 *    blocks and table count when the planner picks a one-level design),
 *    checked against the oracle, then timed like the engine: query latency
 *    at k = 3 and 6 with 1 and 2 threads, the batch, the self-join. Its
 *    answer counts for every query are kept to check the engine on all
 *    queries, not only the sample.
 * With --dump DIR the data is written for bench/bdb_faiss.py (little-endian
 * uint64 / uint32 arrays, see write_dump).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <neardup.h>

#include "bdb.h"

/* The planner's designs for distance k and n documents, cheapest first
 * (at most 16 of them). */
static size_t plan_candidates(nd_plan_info pi[16], unsigned k, uint64_t n)
{
    size_t np = 0;
    if (nd_plan_candidates(pi, 16, &np, k, n) != ND_OK || np == 0)
        bdb_die("nd_plan_candidates: %s", nd_errmsg());
    return np < 16 ? np : 16;
}

/* The first one-level design of pi[0..np) with `tables` tables (0: any);
 * np if there is none. */
static size_t one_level(const nd_plan_info *pi, size_t np, uint64_t tables)
{
    size_t i = 0;
    while (i < np && (pi[i].levels != 1 || (tables && pi[i].tables != tables))) i++;
    return i;
}

void bdb_phase_data(bdb_state *s)
{
    const bdb_opts *o = &s->o;
    s->qs = bdb_xmalloc(o->q * sizeof *s->qs);
    for (uint64_t j = 0; j < o->q; j++) s->qs[j] = bdb_query(&s->g, BDB_QUERY, j, NULL);
    s->bq = bdb_xmalloc(o->batch * sizeof *s->bq);
    for (uint64_t j = 0; j < o->batch; j++) s->bq[j] = bdb_query(&s->g, BDB_BATCH, j, NULL);
    s->js = bdb_xmalloc(o->join * sizeof *s->js);
    for (uint64_t j = 0; j < o->join; j++) s->js[j] = bdb_join_elem(&s->g, o->join, j);

    /* The planner's design for this size and --plan-k (what nd_db_open will
     * choose), and the reference's: the database's design when it is a
     * one-level k=3 one, else the best one-level k=3 design (a k=6 design
     * of 28 tables would not fit in RAM at 100M). */
    nd_plan_info pi[16], p3[16];
    unsigned pk = (unsigned)o->plan_k;
    size_t np = plan_candidates(pi, pk, o->n), d = 0;
    if (o->tables) { /* forced: that one-level design */
        d = one_level(pi, np, o->tables);
        if (d == np) bdb_die("--tables %llu: no one-level design of that many tables for k=%u",
                             (unsigned long long)o->tables, pk);
        bdb_note("tables forced to %u (--tables)", pi[d].tables);
    }
    const nd_plan_info *db = &pi[d], *ref = db;
    if (pk != 3 || db->levels != 1) {
        const nd_plan_info *c3 = pi;
        size_t n3 = np;
        if (pk != 3) {
            n3 = plan_candidates(p3, 3, o->n);
            c3 = p3;
        }
        size_t r = one_level(c3, n3, 0);
        if (r == n3) bdb_die("the planner has no one-level design for k=3 at this size");
        ref = &c3[r];
        bdb_note("the reference uses the planner's best one-level design for k=3 (%u tables, "
                 "%u blocks); the database %u tables for k=%u",
                 ref->tables, ref->blocks[0], db->tables, pk);
    }
    s->plan_k = db->k;
    s->plan_tables = db->tables;
    s->plan_levels = db->levels;
    s->plan_blocks = db->blocks[0];
    s->ref_blocks = ref->blocks[0];
}

static int write_file(const char *dir, const char *name, const void *p, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, bytes, f);
    return fclose(f) == 0 && w == bytes ? 0 : -1;
}

/* stored.u64 (n), queries.u64 (q), batch.u64 (batch), refcnt3.u32 and
 * refcnt6.u32 (the reference's counts for queries[0..q) and [0..q6)),
 * refbcnt.u32 (batch counts). Little-endian, as the machine writes them. */
static void write_dump(const bdb_state *s, const uint64_t *v)
{
    const bdb_opts *o = &s->o;
    if (write_file(o->dump, "stored.u64", v, o->n * 8) ||
        write_file(o->dump, "queries.u64", s->qs, o->q * 8) ||
        write_file(o->dump, "batch.u64", s->bq, o->batch * 8) ||
        write_file(o->dump, "refcnt3.u32", s->ref_cnt3, o->q * 4) ||
        write_file(o->dump, "refcnt6.u32", s->ref_cnt6, o->q6 * 4) ||
        write_file(o->dump, "refbcnt.u32", s->ref_bcnt, o->batch * 4))
        bdb_die("cannot write the data files under %s", o->dump);
}

/* ---- the oracle ---- */

static void scan_phase(bdb_state *s, const uint64_t *v)
{
    const bdb_opts *o = &s->o;
    size_t ns = o->sample < o->q ? o->sample : o->q;
    size_t nbs = o->sample / 2 < o->batch ? o->sample / 2 : o->batch;
    double *lat = bdb_xmalloc((ns + 1) * sizeof *lat);
    uint64_t *buf = NULL;
    size_t cap = 0, total = 0;

    /* Timed scans (counting only; the cost hardly depends on k). */
    for (unsigned k = 3; k <= 6; k += 3) {
        double w0 = bdb_now();
        for (size_t i = 0; i < ns; i++) {
            double t0 = bdb_now();
            total += bdb_scan_count(v, o->n, s->qs[i], k);
            lat[i] = bdb_now() - t0;
        }
        double wall = bdb_now() - w0;
        char name[64];
        snprintf(name, sizeof name, "scan.query.k%u.t1", k);
        bdb_record_latency(name, lat, ns, wall);
        if (k == 3) {
            double mean = ns ? wall / (double)ns : 0;
            bdb_metric("scan.batch.k3.s", mean * (double)o->batch);
            bdb_metric("scan.selfjoin.k3.s",
                       mean * (double)o->join / (double)o->n * (double)o->join / 2);
        }
    }

    /* The oracle itself, at k = 6. */
    s->ns = ns;
    s->orc_off = bdb_xmalloc((ns + 1) * sizeof *s->orc_off);
    s->orc_off[0] = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t m = bdb_scan(v, o->n, s->qs[i], 6, &buf, &cap);
        if (m == SIZE_MAX) bdb_die("out of memory");
        s->orc_fp = realloc(s->orc_fp, (s->orc_off[i] + m + 1) * sizeof *s->orc_fp);
        if (!s->orc_fp) bdb_die("out of memory");
        memcpy(s->orc_fp + s->orc_off[i], buf, m * sizeof *buf);
        s->orc_off[i + 1] = s->orc_off[i] + m;
    }

    s->nbs = nbs;
    s->borc_off = bdb_xmalloc((nbs + 1) * sizeof *s->borc_off);
    s->borc_off[0] = 0;
    for (size_t i = 0; i < nbs; i++) {
        size_t m = bdb_scan(v, o->n, s->bq[i], 3, &buf, &cap);
        if (m == SIZE_MAX) bdb_die("out of memory");
        s->borc_fp = realloc(s->borc_fp, (s->borc_off[i] + m + 1) * sizeof *s->borc_fp);
        if (!s->borc_fp) bdb_die("out of memory");
        memcpy(s->borc_fp + s->borc_off[i], buf, m * sizeof *buf);
        s->borc_off[i + 1] = s->borc_off[i] + m;
    }

    /* Self-join sample: partners of evenly spread elements, by index. */
    size_t njs = ns < o->join ? ns : o->join;
    s->njs = njs;
    s->js_idx = bdb_xmalloc((njs + 1) * sizeof *s->js_idx);
    s->jorc_off = bdb_xmalloc((njs + 1) * sizeof *s->jorc_off);
    size_t jlen = 0, jcap = 0;
    for (size_t i = 0; i < njs; i++) {
        /* alternate between the two halves so planted pairs are sampled */
        uint64_t idx = (i * (o->join / njs) + (i & 1) * (o->join / 2)) % o->join;
        s->js_idx[i] = idx;
        s->jorc_off[i] = jlen;
        for (uint64_t j = 0; j < o->join; j++) {
            if (j == idx || (unsigned)__builtin_popcountll(s->js[j] ^ s->js[idx]) > 3) continue;
            if (jlen == jcap) {
                jcap = jcap ? jcap * 2 : 256;
                s->jorc = realloc(s->jorc, jcap * sizeof *s->jorc);
                if (!s->jorc) bdb_die("out of memory");
            }
            s->jorc[jlen++] = j;
        }
    }
    s->jorc_off[njs] = jlen;
    (void)total;
    free(buf);
    free(lat);
}

/* ---- the reference ---- */

typedef struct ref_ctx {
    bdb_ref *r;
    bdb_ref_scratch sc[2];
} ref_ctx;

static size_t ref_fn(void *ctx, unsigned tid, uint64_t q, unsigned k)
{
    ref_ctx *c = ctx;
    return bdb_ref_query(c->r, q, k, &c->sc[tid]);
}

static void ref_phase(bdb_state *s, const uint64_t *v)
{
    const bdb_opts *o = &s->o;
    ref_ctx c = {0};

    bench_rss_reset();
    double t0 = bdb_now();
    c.r = bdb_ref_new(v, o->n, 3, s->ref_blocks);
    double dt = bdb_now() - t0;
    if (!c.r) bdb_die("reference: cannot build %u blocks over %llu fingerprints",
                      s->ref_blocks, (unsigned long long)o->n);
    unsigned t = bdb_ref_tables(c.r);
    bdb_metric("ref.tables", t);
    bdb_metric("ref.load.docs_per_s", (double)o->n / dt);
    bdb_metric("ref.mem.bits_per_entry_table",
               8.0 * (double)bdb_ref_bytes(c.r) / ((double)o->n * t));

    /* Exactness against the oracle. */
    for (size_t i = 0; i < s->ns; i++)
        for (unsigned k = 3; k <= 6; k += 3) {
            size_t m = bdb_ref_query(c.r, s->qs[i], k, &c.sc[0]);
            if (m == SIZE_MAX) bdb_die("out of memory");
            bdb_check_online(s, "reference", i, k, c.sc[0].v, m);
        }
    for (size_t i = 0; i < s->nbs; i++) {
        size_t m = bdb_ref_query(c.r, s->bq[i], 3, &c.sc[0]);
        if (m == SIZE_MAX) bdb_die("out of memory");
        bdb_check_batch(s, "reference", i, c.sc[0].v, m);
    }

    /* Timed queries: the counts of the 1-thread runs check the engine. */
    size_t nq = o->q > o->q6 ? o->q : o->q6;
    double *lat = bdb_xmalloc((nq + 1) * sizeof *lat);
    s->ref_cnt3 = bdb_xmalloc((o->q + 1) * sizeof *s->ref_cnt3);
    s->ref_cnt6 = bdb_xmalloc((o->q6 + 1) * sizeof *s->ref_cnt6);
    for (unsigned k = 3; k <= 6; k += 3) {
        size_t n = k == 3 ? o->q : o->q6;
        for (unsigned th = 1; th <= 2; th++) {
            char name[64];
            double wall = bdb_run_queries(ref_fn, &c, s->qs, n, k, th, lat,
                                          th == 1 ? (k == 3 ? s->ref_cnt3 : s->ref_cnt6) : NULL);
            snprintf(name, sizeof name, "ref.query.k%u.t%u", k, th);
            bdb_record_latency(name, lat, n, wall);
        }
    }
    free(lat);
    bdb_metric("rss.ref_mib", bench_rss_peak_mib());

    /* Batch: the same method answering the whole batch query by query. */
    s->ref_bcnt = bdb_xmalloc((o->batch + 1) * sizeof *s->ref_bcnt);
    double wall = bdb_run_queries(ref_fn, &c, s->bq, o->batch, 3, 1, NULL, s->ref_bcnt);
    bdb_metric("ref.batch.k3.s", wall);
    bdb_metric("ref.batch.k3.qps", (double)o->batch / wall);
    if (o->dump) write_dump(s, v);
    bdb_ref_free(c.r);
    c.r = NULL;

    /* Self-join through the reference: build over the set, probe each. */
    t0 = bdb_now();
    bdb_ref *jr = bdb_ref_new(s->js, o->join, 3, s->ref_blocks);
    if (!jr) bdb_die("reference: cannot build the self-join tables");
    c.r = jr;
    bdb_run_queries(ref_fn, &c, s->js, o->join, 3, 1, NULL, NULL);
    bdb_metric("ref.selfjoin.k3.s", bdb_now() - t0);
    bdb_ref_free(jr);
    free(c.sc[0].v);
    free(c.sc[1].v);
}

void bdb_phase_baselines(bdb_state *s)
{
    const bdb_opts *o = &s->o;
    uint64_t *v = bdb_xmalloc(o->n * sizeof *v);
    double t0 = bdb_now();
    for (uint64_t i = 0; i < o->n; i++) v[i] = bdb_stored(&s->g, i);
    bdb_metric("gen.stored_s", bdb_now() - t0);
    scan_phase(s, v);
    ref_phase(s, v);
    free(v);
}
