/*
 * cmd_dedupe.c — `neardup dedupe`: one-shot near-duplicate clean of a corpus.
 *
 * One pass reads every document and computes, from the same features, its
 * simhash and a min-hash sketch (128 bins). Candidate pairs come from two
 * sources: the self-join of the fingerprints (every pair within
 * min(k, 8) bits, exhaustive) and, where texts were read, min-hash
 * banding of the sketches (16 bands of 8 bins; two documents whose bins
 * agree in one band are candidates: a pair of resemblance 0.9 shares a
 * band with probability 0.9999, 0.8 with 0.95, 0.5 with 0.06). A
 * candidate is reported when it is within k bits AND its sketches
 * estimate a resemblance >= R. Banding is what lets k exceed the
 * self-join's 8: templated texts of resemblance 0.9 lie up to 25 bits
 * apart (bench/README.md, "Dedupe quality", has the measurement that
 * chose the defaults k=24, R=0.85). With R = 0 (simhash only) the
 * self-join alone answers, so k <= 8.
 *
 * Each pair is reported once: the self-join reports a pair from its first
 * table only; banding skips a pair the self-join already saw (within
 * min(k, 8) bits) and a pair that also agrees in an earlier band.
 *
 * Clusters follow the representative rule (nd_cluster_greedy), so every
 * dropped document is a reported pair with its kept one.
 *
 * Memory per document: 8 (fp) + 8 (key offset) + the key, + 8 with
 * --keep score|longest, + 256 (sketch) when texts are read, + 16 during a band
 * pass (the sort). Pairs output streams; the cluster modes first group
 * identical documents (4 a document; 32 while sorting) and join one of each
 * group, then hold 12 per pair, 8 per pair end and 12 per document.
 * No text is kept. With --db the documents are also loaded into a
 * database (nd_import, in chunks) after the read.
 */
#include "cli.h"
#include "dedupe_band.h"
#include "in_reader.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: neardup dedupe [--db DB] [--k K] [--min-resemblance R]\n"
    "                      [--format files|jsonl|tsv|warc|fp] [--keep first|score|longest]\n"
    "                      [--out clusters|pairs|keep|drop] [--features F] [--html]\n"
    "                      [--skip-bad] [--json] INPUT...\n"
    "\n"
    "Find the near-duplicates of a corpus and print them:\n"
    "  clusters  CLUSTER<TAB>keep|drop<TAB>KEY<TAB>DIST  for clusters of 2 or more\n"
    "            (DIST: bits to the kept document of the cluster)\n"
    "  pairs     KEY1<TAB>KEY2<TAB>DIST for every reported pair (as found)\n"
    "  keep      the keys to keep (one per cluster, singletons included)\n"
    "  drop      the keys to drop\n"
    "A pair is reported when its fingerprints are within K bits and the\n"
    "min-hash sketches of its texts estimate a resemblance of at least R.\n"
    "  --k K                largest distance in bits (default 24; with R = 0 or\n"
    "                       fp input: 0..8, default 3)\n"
    "  --min-resemblance R  resemblance of the feature sets (word 3-shingles by\n"
    "                       default), estimated from 128-bin sketches (default\n"
    "                       0.85); 0 = simhash only. Fp input has no text: its\n"
    "                       pairs are simhash only (K <= 8)\n"
    "  --keep               which document of a cluster stays: first (input order,\n"
    "                       default), score (highest \"score\"), longest (text)\n"
    "  --format             input format (default files: each file or every file\n"
    "                       under a directory is a document)\n"
    "  --db DB              also load every document (key, fingerprint, score) into\n"
    "                       the database DB, created with design distance min(K, 8)\n"
    "                       if missing, for later queries. Documents stored there\n"
    "                       before are not compared. Without --db nothing is\n"
    "                       written to disk: the work is done in memory.\n"
    "Defaults: chosen for precision and recall >= 0.95 on real texts (see\n"
    "bench/README.md). Clusters: documents are taken in --keep order; one not\n"
    "yet assigned is kept and takes every unassigned document it forms a pair\n"
    "with, so each dropped document is within K bits (and R resemblance) of its\n"
    "kept one.\n"
    "Exit codes: 0 ok, 1 bad usage or input, 2 internal or database error.\n";

enum { MAX_JOIN_K = ND_MAX_PLAN_K };

typedef struct pair {
    uint32_t a, b;
    uint8_t dist;
} pair;

typedef struct corpus {
    uint64_t *fp;    /* n */
    size_t *key_off; /* n + 1: key i is keys[key_off[i] .. key_off[i+1]) */
    double *prio;    /* n, with --keep score|longest */
    nd_sketch *sk;   /* n, once a document had text */
    double *score;   /* n, with --db */
    size_t n, cap;
    char *keys;
    size_t klen, kcap;
    pair *p; /* kept for clusters, keep and drop (indices into ids) */
    size_t np, pcap;
    /* The documents the joins see: ids[0..m) (doc indices, increasing), or
     * all n when ids is NULL. The cluster modes join one document of each
     * group of identical ones (same fingerprint and sketch). */
    const uint32_t *ids;
    size_t m;
    uint64_t reported;
    int stream, json;
    double min_res;
    unsigned k, join_k;
    int oom;
} corpus;

typedef struct acc_ctx {
    nd_simhash sim;
    nd_sketch_builder sk;
} acc_ctx;

static void acc_cb(uint64_t h, int32_t w, void *p)
{
    acc_ctx *a = p;
    nd_simhash_add_hash(&a->sim, h, w);
    nd_sketch_add(&a->sk, h);
}

static int grow(void **p, size_t cap, size_t size)
{
    void *q = realloc(*p, cap * size);
    if (!q) return -1;
    *p = q;
    return 0;
}

static int push_doc(corpus *c, const in_record *rec, uint64_t fp, const nd_sketch *sk,
                    double prio)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        if (grow((void **)&c->fp, cap, sizeof *c->fp) ||
            grow((void **)&c->key_off, cap + 1, sizeof *c->key_off) ||
            (c->prio && grow((void **)&c->prio, cap, sizeof *c->prio)) ||
            (c->score && grow((void **)&c->score, cap, sizeof *c->score)) ||
            (c->sk && grow((void **)&c->sk, cap, sizeof *c->sk)))
            return -1;
        c->cap = cap;
    }
    if (sk && !c->sk) { /* the first text: earlier documents had none */
        c->sk = calloc(c->cap, sizeof *c->sk);
        if (!c->sk) return -1;
    }
    if (c->klen + rec->key_len > c->kcap) {
        size_t cap = c->kcap ? c->kcap : 65536;
        while (cap < c->klen + rec->key_len) cap *= 2;
        if (grow((void **)&c->keys, cap, 1)) return -1;
        c->kcap = cap;
    }
    memcpy(c->keys + c->klen, rec->key, rec->key_len);
    c->key_off[c->n] = c->klen;
    c->klen += rec->key_len;
    c->key_off[c->n + 1] = c->klen;
    c->fp[c->n] = fp;
    if (c->prio) c->prio[c->n] = prio;
    if (c->score) c->score[c->n] = rec->has_score ? rec->score : 0;
    if (c->sk) {
        if (sk) c->sk[c->n] = *sk;
        else memset(&c->sk[c->n], 0, sizeof c->sk[c->n]);
    }
    c->n++;
    return 0;
}

static void put_key(const corpus *c, size_t i, int json)
{
    const char *k = c->keys + c->key_off[i];
    size_t len = c->key_off[i + 1] - c->key_off[i];
    if (json) cli_put_json_string(stdout, k, len);
    else cli_put_field(stdout, k, len);
}

static double resemblance(const corpus *c, size_t i, size_t j)
{
    return c->sk ? nd_sketch_resemblance(&c->sk[i], &c->sk[j]) : 1.0;
}

#define DOC(c, x) ((c)->ids ? (size_t)(c)->ids[x] : (size_t)(x))

/* A reported pair x < y (indices into ids): printed at once (pairs) or
 * kept for the clusters. */
static int emit(corpus *c, size_t x, size_t y, unsigned dist)
{
    size_t i = DOC(c, x), j = DOC(c, y);
    c->reported++;
    if (c->stream) {
        if (c->json) {
            printf("{\"a\":");
            put_key(c, i, 1);
            printf(",\"b\":");
            put_key(c, j, 1);
            printf(",\"dist\":%u", dist);
            if (c->sk) printf(",\"resemblance\":%.3f", resemblance(c, i, j));
            printf("}\n");
        } else {
            put_key(c, i, 0);
            putchar('\t');
            put_key(c, j, 0);
            printf("\t%u\n", dist);
        }
        return 0;
    }
    if (c->np == c->pcap) {
        size_t cap = c->pcap ? c->pcap * 2 : 4096;
        if (grow((void **)&c->p, cap, sizeof *c->p)) {
            c->oom = 1;
            return 1;
        }
        c->pcap = cap;
    }
    c->p[c->np++] = (pair){(uint32_t)x, (uint32_t)y, (uint8_t)dist};
    return 0;
}

static int join_cb(size_t x, size_t y, unsigned dist, void *payload)
{
    corpus *c = payload;
    if (c->min_res > 0 && resemblance(c, DOC(c, x), DOC(c, y)) < c->min_res) return 0;
    return emit(c, x, y, dist);
}

/* ---- min-hash banding ---------------------------------------------------- */

static int band_cb(size_t x, size_t y, unsigned dist, void *payload)
{
    return emit(payload, x, y, dist);
}

/* Every pair of the documents ids[0..m) (fps: their fingerprints): the
 * self-join, then banding. @return a CLI exit code. */
static int run_joins(corpus *c, const uint64_t *fps)
{
    if (c->m < 2) return CLI_EXIT_OK;
    int nrc = nd_selfjoin(fps, c->m, c->join_k, join_cb, c);
    if (c->oom) return cli_fail("dedupe: out of memory storing pairs");
    if (nrc < 0) return cli_fail_nd(nrc, "dedupe: self-join");
    if (c->sk && c->min_res > 0) {
        if (dedupe_band_join(c->m, c->ids, c->fp, c->sk, c->join_k, c->k, c->min_res, band_cb, c) < 0)
            c->oom = 1;
        if (c->oom) return cli_fail("dedupe: out of memory in the band join");
    }
    return CLI_EXIT_OK;
}

/* ---- clusters ------------------------------------------------------------ */

typedef struct fp_ent {
    uint64_t fp;
    uint32_t i;
} fp_ent;

/* Stable LSD radix sort by fp. */
static void radix_sort_ent(fp_ent *a, fp_ent *tmp, size_t n)
{
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[((a[i].fp >> shift) & 0xff) + 1]++;
        for (unsigned b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) tmp[count[(a[i].fp >> shift) & 0xff]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

/* Groups of identical documents (same fingerprint, and same sketch when
 * texts were read): out_g[i] = the group of document i, numbered in the
 * input order of the groups' leaders; the leader of a group is its first
 * document in priority order, and (*out_ids)[g] is its index.
 * Identical documents have the same neighbours, so the greedy clustering
 * of the whole graph assigns a group as a whole: clustering the leaders
 * alone gives the same answer, without the m(m-1)/2 pairs of a group. */
static int group_identical(uint32_t **out_g, uint32_t **out_ids, size_t *out_m, const corpus *c,
                           const uint32_t *order)
{
    size_t n = c->n, m = 0, nl = 0, lcap = 0;
    fp_ent *e = malloc((n ? n : 1) * sizeof *e), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint32_t *g = malloc((n ? n : 1) * sizeof *g), *ids = NULL, *local = NULL;
    if (!e || !tmp || !g) goto oom;
    for (size_t p = 0; p < n; p++) e[p] = (fp_ent){c->fp[order[p]], order[p]};
    radix_sort_ent(e, tmp, n); /* stable: priority order within one fingerprint */
    free(tmp);
    tmp = NULL;
    for (size_t s = 0, t; s < n; s = t) {
        for (t = s + 1; t < n && e[t].fp == e[s].fp; t++) {}
        nl = 0; /* leaders of distinct sketches within this fingerprint */
        for (size_t u = s; u < t; u++) {
            uint32_t d = e[u].i;
            size_t l = 0;
            if (c->sk)
                while (l < nl && memcmp(&c->sk[local[l]], &c->sk[d], sizeof c->sk[d])) l++;
            if (l == nl) {
                if (nl == lcap && grow((void **)&local, lcap = lcap ? 2 * lcap : 16, sizeof *local))
                    goto oom;
                local[nl++] = d;
            }
            g[d] = local[l];
        }
    }
    free(local);
    local = NULL;
    /* Number the groups by their leaders' input order (e is free now). */
    uint32_t *num = (uint32_t *)e;
    for (size_t i = 0; i < n; i++) m += g[i] == i;
    ids = malloc((m ? m : 1) * sizeof *ids);
    if (!ids) goto oom;
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i] == i) {
            num[i] = (uint32_t)m;
            ids[m++] = (uint32_t)i;
        }
    for (size_t i = 0; i < n; i++) g[i] = num[g[i]];
    free(e);
    *out_g = g;
    *out_ids = ids;
    *out_m = m;
    return CLI_EXIT_OK;
oom:
    free(e);
    free(tmp);
    free(g);
    free(ids);
    free(local);
    return cli_fail("dedupe: out of memory grouping identical documents");
}

static const double *sort_prio;

static int cmp_priority(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    if (sort_prio && sort_prio[a] != sort_prio[b]) return sort_prio[a] > sort_prio[b] ? -1 : 1;
    return a < b ? -1 : a > b; /* then input order */
}

/* clusters, keep, drop: group identical documents, join the groups'
 * leaders, cluster them greedily (nd_cluster_greedy), print. */
static int run_clusters(corpus *c, const char *out, int json)
{
#define LEAD(x) (ids ? ids[x] : (uint32_t)(x))
    size_t n = c->n, m = 0;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order), *g = NULL, *ids = NULL, *lorder = NULL;
    uint32_t *rep = NULL, *adj = NULL, *drops = NULL;
    uint64_t *lfp = NULL;
    size_t *start = NULL, *fill = NULL;
    int rc = CLI_EXIT_OK;
    if (!order) return cli_fail("dedupe: out of memory");
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    sort_prio = c->prio;
    if (c->prio) qsort(order, n, sizeof *order, cmp_priority); /* else: input order */
    rc = group_identical(&g, &ids, &m, c, order);
    if (rc) goto done;
    if (m == n) { /* no two identical: join the documents themselves */
        free(ids);
        ids = NULL;
    } else {
        lfp = malloc((m ? m : 1) * sizeof *lfp);
        if (!lfp) goto oom;
        for (size_t x = 0; x < m; x++) lfp[x] = c->fp[ids[x]];
    }
    c->ids = ids;
    c->m = m; /* kept for the summary */
    rc = run_joins(c, lfp ? lfp : c->fp);
    free(lfp);
    lfp = NULL;
    if (rc) goto done;
    /* The leaders' graph in CSR form, and their priority order. */
    start = calloc(m + 1, sizeof *start);
    fill = malloc((m + 1) * sizeof *fill);
    adj = malloc((2 * c->np + 1) * sizeof *adj);
    lorder = malloc((m ? m : 1) * sizeof *lorder);
    rep = malloc((m ? m : 1) * sizeof *rep);
    if (!start || !fill || !adj || !lorder || !rep) goto oom;
    for (size_t e = 0; e < c->np; e++) {
        start[c->p[e].a + 1]++;
        start[c->p[e].b + 1]++;
    }
    for (size_t x = 0; x < m; x++) start[x + 1] += start[x];
    memcpy(fill, start, (m + 1) * sizeof *fill);
    for (size_t e = 0; e < c->np; e++) {
        adj[fill[c->p[e].a]++] = c->p[e].b;
        adj[fill[c->p[e].b]++] = c->p[e].a;
    }
    free(c->p); /* the graph holds the pairs now */
    c->p = NULL;
    size_t q = 0;
    for (size_t p = 0; p < n; p++)
        if (LEAD(g[order[p]]) == order[p]) lorder[q++] = g[order[p]];
    int nrc = nd_cluster_greedy(rep, lorder, m, start, adj);
    if (nrc < 0) {
        rc = cli_fail_nd(nrc, "dedupe: clustering");
        goto done;
    }
    /* Document i stays iff it leads its group and the group stays. */
    if (strcmp(out, "keep") == 0 || strcmp(out, "drop") == 0) {
        int want_keep = out[0] == 'k';
        for (size_t i = 0; i < n; i++) {
            if ((LEAD(rep[g[i]]) == i) != want_keep) continue;
            if (json) { printf("{\"%s\":", want_keep ? "keep" : "drop"); put_key(c, i, 1); printf("}\n"); }
            else { put_key(c, i, 0); putchar('\n'); }
        }
        goto done;
    }
    /* clusters: in priority order of their kept document, each with its
     * dropped documents in input order (bucketed by kept group). */
    memset(start, 0, (m + 1) * sizeof *start);
    for (size_t i = 0; i < n; i++)
        if (LEAD(rep[g[i]]) != i) start[rep[g[i]] + 1]++;
    for (size_t x = 0; x < m; x++) start[x + 1] += start[x];
    drops = malloc((start[m] ? start[m] : 1) * sizeof *drops);
    if (!drops) goto oom;
    memcpy(fill, start, (m + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        if (LEAD(rep[g[i]]) != i) drops[fill[rep[g[i]]]++] = (uint32_t)i;
    size_t cluster = 0;
    for (size_t p = 0; p < m; p++) {
        uint32_t x = lorder[p], r = LEAD(x);
        if (rep[x] != x || start[x] == start[x + 1]) continue;
        cluster++;
        if (json) { printf("{\"cluster\":%zu,\"role\":\"keep\",\"key\":", cluster); put_key(c, r, 1); printf(",\"dist\":0}\n"); }
        else { printf("%zu\tkeep\t", cluster); put_key(c, r, 0); printf("\t0\n"); }
        for (size_t e = start[x]; e < start[x + 1]; e++) {
            uint32_t d = drops[e];
            unsigned dist = nd_hamming(c->fp[d], c->fp[r]);
            if (json) { printf("{\"cluster\":%zu,\"role\":\"drop\",\"key\":", cluster); put_key(c, d, 1); printf(",\"dist\":%u}\n", dist); }
            else { printf("%zu\tdrop\t", cluster); put_key(c, d, 0); printf("\t%u\n", dist); }
        }
    }
    goto done;
oom:
    rc = cli_fail("dedupe: out of memory building clusters");
done:
    c->ids = NULL;
    free(order);
    free(g);
    free(ids);
    free(lfp);
    free(lorder);
    free(rep);
    free(adj);
    free(start);
    free(fill);
    free(drops);
    return rc;
#undef LEAD
}

/* ---- --db ------------------------------------------------------------------ */

static int open_db(nd_db **out, const char *path, unsigned k, const nd_fp_options *fo,
                   int features_given)
{
    nd_db_options o;
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    o.flags = ND_DB_CREATE;
    o.k = k;
    o.fp = features_given ? fo : NULL;
    int rc = nd_open(out, path, &o);
    if (rc < 0) return cli_fail_nd(rc, "dedupe: cannot open or create database '%s'", path);
    return CLI_EXIT_OK;
}

static int load_db(nd_db *db, const char *path, const corpus *c)
{
    enum { CHUNK = 1000000 };
    nd_doc *d = malloc((c->n < CHUNK ? (c->n ? c->n : 1) : CHUNK) * sizeof *d);
    int64_t now = (int64_t)time(NULL);
    if (!d) return cli_fail("dedupe: out of memory loading the database");
    for (size_t s = 0; s < c->n; s += CHUNK) {
        size_t m = c->n - s < CHUNK ? c->n - s : CHUNK;
        for (size_t i = 0; i < m; i++)
            d[i] = (nd_doc){c->keys + c->key_off[s + i], c->key_off[s + i + 1] - c->key_off[s + i],
                            c->fp[s + i], c->score ? c->score[s + i] : 0, now};
        int rc = nd_import(db, d, m);
        if (rc < 0) {
            free(d);
            return cli_fail_nd(rc, "dedupe: loading database '%s'", path);
        }
    }
    free(d);
    return CLI_EXIT_OK;
}

int cmd_dedupe(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},       {"format", required_argument, 0, 'F'},
        {"keep", required_argument, 0, 'K'},    {"out", required_argument, 0, 'o'},
        {"min-resemblance", required_argument, 0, 'r'},
        {"features", required_argument, 0, 'f'}, {"html", no_argument, 0, 'H'},
        {"skip-bad", no_argument, 0, 'b'},      {"json", no_argument, 0, 'j'},
        {"db", required_argument, 0, 'd'},      {0, 0, 0, 0}};
    corpus c = {0};
    in_format fmt = IN_FORMAT_FILES;
    nd_fp_options fo;
    unsigned long k = 24;
    const char *out = "clusters", *db_path = NULL;
    nd_db *db = NULL;
    int html = 0, skip_bad = 0, json = 0, opt, rc = CLI_EXIT_OK, keep_mode = 0, k_given = 0;
    int features_given = 0;
    uint64_t bad = 0;
    c.min_res = 0.85;
    if (cli_wants_help(argc, argv)) {
        cli_usage(stdout, usage);
        return CLI_EXIT_OK;
    }
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    optind = 1;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, 64, &k))
                return cli_fail("dedupe: --k must be 0..64, got '%s'", optarg);
            k_given = 1;
            break;
        case 'F':
            if (in_format_parse(optarg, &fmt))
                return cli_fail("dedupe: --format must be files, jsonl, tsv, warc or fp, got '%s'", optarg);
            break;
        case 'K':
            if (strcmp(optarg, "first") == 0) keep_mode = 0;
            else if (strcmp(optarg, "score") == 0) keep_mode = 1;
            else if (strcmp(optarg, "longest") == 0) keep_mode = 2;
            else return cli_fail("dedupe: --keep must be first, score or longest, got '%s'", optarg);
            break;
        case 'o':
            if (strcmp(optarg, "clusters") && strcmp(optarg, "pairs") && strcmp(optarg, "keep") &&
                strcmp(optarg, "drop"))
                return cli_fail("dedupe: --out must be clusters, pairs, keep or drop, got '%s'", optarg);
            out = optarg;
            break;
        case 'r': {
            char *end;
            c.min_res = strtod(optarg, &end);
            if (*end || end == optarg || !(c.min_res >= 0 && c.min_res <= 1))
                return cli_fail("dedupe: --min-resemblance must be a number in [0, 1], got '%s'", optarg);
            break;
        }
        case 'f':
            if (cli_parse_features(optarg, &fo))
                return cli_fail("dedupe: --features must be words, shingles:N or chars:N, got '%s'", optarg);
            features_given = 1;
            break;
        case 'H': html = 1; break;
        case 'b': skip_bad = 1; break;
        case 'j': json = 1; break;
        case 'd': db_path = optarg; break;
        default: cli_usage(stderr, usage); return CLI_EXIT_USAGE;
        }
    }
    if (optind == argc) {
        cli_usage(stderr, usage);
        return cli_fail("dedupe: give at least one INPUT");
    }
    /* Simhash only (R = 0, or fp input): the self-join must cover k. */
    if ((c.min_res == 0 || fmt == IN_FORMAT_FP) && k > MAX_JOIN_K) {
        if (k_given)
            return cli_fail("dedupe: --k above %u needs texts and --min-resemblance > 0", MAX_JOIN_K);
        k = 3;
    }
    c.k = (unsigned)k;
    c.join_k = c.k < MAX_JOIN_K ? c.k : MAX_JOIN_K;
    c.json = json;
    c.stream = strcmp(out, "pairs") == 0;
    if (db_path) {
        rc = open_db(&db, db_path, c.join_k, &fo, features_given);
        if (rc) return rc;
        if (!features_given) nd_db_fp_options(&fo, db);
    }
    if (keep_mode) {
        c.prio = malloc(1);
        if (!c.prio) return cli_fail("dedupe: out of memory");
    }
    if (db) {
        c.score = malloc(1);
        if (!c.score) return cli_fail("dedupe: out of memory");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int tty = isatty(2);
    uint64_t bytes = 0;
    for (int a = optind; a < argc && rc == CLI_EXIT_OK; a++) {
        in_reader *r;
        in_record rec;
        int got;
        if (in_reader_open(&r, fmt, argv[a], NULL) < 0) {
            rc = cli_fail("%s", in_reader_error(NULL));
            break;
        }
        while ((got = in_reader_next(r, &rec)) != 0) {
            if (got == -1) {
                fprintf(stderr, "neardup: %s\n", in_reader_error(r));
                bad++;
                if (skip_bad) continue;
                rc = CLI_EXIT_USAGE;
                break;
            }
            if (got < 0) {
                rc = cli_fail("%s", in_reader_error(r));
                break;
            }
            uint64_t fp = rec.fp;
            nd_sketch sk;
            if (!rec.has_fp) {
                acc_ctx ac;
                nd_fp_options o = fo;
                if (html || rec.is_html) o.flags |= ND_FP_HTML;
                nd_simhash_init(&ac.sim);
                nd_sketch_begin(&ac.sk);
                int nrc = nd_features(rec.text, rec.text_len, &o, acc_cb, &ac);
                if (nrc < 0) {
                    rc = cli_fail_nd(nrc, "%s:%llu", rec.file, (unsigned long long)rec.line);
                    break;
                }
                fp = nd_simhash_final(&ac.sim);
                nd_sketch_finish(&sk, &ac.sk);
                bytes += rec.text_len;
            }
            double prio = keep_mode == 1 ? (rec.has_score ? rec.score : 0)
                                         : keep_mode == 2 && rec.text ? (double)rec.text_len : 0;
            if (c.n == UINT32_MAX || push_doc(&c, &rec, fp, rec.has_fp ? NULL : &sk, prio)) {
                rc = cli_fail("dedupe: out of memory after %zu documents", c.n);
                break;
            }
            if (tty && c.n % 20000 == 0)
                fprintf(stderr, "\rneardup: dedupe: %zu documents, %.1f MB read", c.n, bytes / 1e6);
        }
        in_reader_close(r);
    }
    if (tty && c.n >= 20000) fputc('\n', stderr);
    if (rc == CLI_EXIT_OK && !c.sk && c.k > MAX_JOIN_K) { /* only fingerprints were read */
        if (k_given && c.n > 0)
            rc = cli_fail("dedupe: --k above %u needs texts (no document had one)", MAX_JOIN_K);
        c.k = c.join_k = 3;
    }
    if (rc == CLI_EXIT_OK) {
        c.m = c.n;
        rc = c.stream ? run_joins(&c, c.fp) : run_clusters(&c, out, json);
    }
    if (rc == CLI_EXIT_OK && db) rc = load_db(db, db_path, &c);
    if (db) {
        int crc = cli_close_db(db, db_path);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    if (fflush(stdout) != 0 && rc == CLI_EXIT_OK) rc = cli_fail("dedupe: writing the output failed");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (c.stream || rc != CLI_EXIT_OK)
        fprintf(stderr, "neardup: dedupe: %zu documents, %llu pairs, %llu bad, %.2f s\n", c.n,
                (unsigned long long)c.reported, (unsigned long long)bad, secs);
    else
        fprintf(stderr, "neardup: dedupe: %zu documents (%zu distinct), %llu pairs of distinct ones, "
                "%llu bad, %.2f s\n", c.n, c.m, (unsigned long long)c.reported,
                (unsigned long long)bad, secs);
    free(c.fp);
    free(c.key_off);
    free(c.prio);
    free(c.sk);
    free(c.score);
    free(c.keys);
    free(c.p);
    return rc;
}
