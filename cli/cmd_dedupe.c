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
 * estimate a resemblance >= R, or, with --min-containment C > 0, a
 * containment >= C (Broder's "roughly contained": |A n B| / min(|A|,|B|),
 * estimated as J (|A| + |B|) / (1 + J) over the smaller set, from the
 * sketch estimate J and the counts of distinct features). Banding is what
 * lets k exceed the self-join's 8: templated texts of resemblance 0.9 lie
 * up to 25 bits apart (bench/README.md, "Dedupe quality", has the
 * measurement that chose the defaults k=24, R=0.85, C off). With R = 0
 * (simhash only) the self-join alone answers, so k <= 8.
 *
 * Which contained pairs can be found: every one within min(k, 8) bits
 * (the self-join), and those banding finds. With C > 0 the bands are 32 of
 * 4 bins instead of 16 of 8, so pairs of lower resemblance meet (a page
 * with half as much again appended, J about 0.67: 0.999 instead of 0.47);
 * a short page inside a much longer one (J below 0.3: 0.23 or less) is
 * mostly not found, and its estimate would be too coarse to trust anyway.
 * C stays off by default: contained pairs are not near-duplicates by the
 * resemblance measure the defaults are judged on (bench/README.md).
 *
 * Each pair is reported once: the self-join reports a pair from its first
 * table only; banding skips a pair the self-join already saw (within
 * min(k, 8) bits) and a pair that also agrees in an earlier band.
 *
 * Clusters follow the representative rule (nd_cluster_greedy), so every
 * dropped document is a reported pair with its kept one.
 *
 * Memory per document: 8 B (fingerprint) in RAM, + 8 with --keep
 * score|longest. The rest goes to unlinked scratch files in $TMPDIR
 * (dedupe_docs.c over dedupe_spill.c), read back only where needed: keys
 * (8 B offset + the key) for the output, and, when texts are read, the
 * sketch and feature count (260 B) for grouping identical documents,
 * confirming candidates (through a 4 MB cache) and banding (each band pass
 * reads the file once in order). The sorts stay within --memory: the
 * self-join's (nd_selfjoin_stream, 32 B a document sorted at once) and the
 * grouping's (dedupe_group.c, the same) are split into partitions of top
 * fingerprint bits when larger, each one more pass over the fingerprints
 * in memory, with the same output. A band pass takes 16 B a document. The
 * cluster modes group identical documents (8 B a document besides the
 * sort) and join one of each group, then hold 12 B a pair while joining,
 * 20 while building the graph, and 20 a document to cluster. Pairs output
 * streams. No text is kept. With --db the documents are also loaded into
 * a database after the read, through one nd_loader (pieces of up to 1M
 * read back from the scratch files; the loader's chunks are sized to
 * --memory at LOAD_DOC_BYTES a document, and larger loads spill into the
 * database directory), so the store is written once, at the commit.
 */
#include "cli.h"
#include "cli_docs.h"
#include "dedupe_band.h"
#include "dedupe_docs.h"
#include "dedupe_feat.h"
#include "dedupe_group.h"
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
    "                      [--min-containment C] [--memory MB] [--skip-bad] [--json]\n"
    "                      INPUT...\n"
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
    "  --min-containment C  also report a pair when at least this share of the\n"
    "                       smaller document's features are in the larger one\n"
    "                       (estimated from the sketches and feature counts;\n"
    "                       default 0 = off). Contained pairs are found within\n"
    "                       min(K, 8) bits, or by banding, which with C > 0 uses\n"
    "                       32 bands of 4 bins: it finds a page with half as much\n"
    "                       text appended, mostly not a short page in a long one.\n"
    "                       --out pairs --json then shows \"containment\" too\n"
    "  --keep               which document of a cluster stays: first (input order,\n"
    "                       default), score (highest \"score\"), longest (text)\n"
    "  --format             input format (default files: each file or every file\n"
    "                       under a directory is a document)\n"
    "  --db DB              also load every document (key, fingerprint, score) into\n"
    "                       the database DB, created with design distance min(K, 8)\n"
    "                       if missing, for later queries. Documents stored there\n"
    "                       before are not compared. Without --db nothing is\n"
    "                       left on disk. The load holds as many documents in\n"
    "                       memory at a time as --memory allows (216 bytes\n"
    "                       each, plus twice the key; more go to temporary\n"
    "                       files in DB) and writes the database once, at the\n"
    "                       end\n"
    "  --memory MB          memory for the sorts of the self-join and of grouping\n"
    "                       identical documents (default 256; MB = 2^20 bytes,\n"
    "                       0.001 .. 1048576). A sort takes 32 bytes a document;\n"
    "                       one larger than MB is split into partitions, each\n"
    "                       sorted and joined alone: the same output, one more\n"
    "                       pass over the fingerprints a partition (slow when\n"
    "                       MB is far below 32 bytes x documents)\n"
    "Memory: 8 bytes a document (16 with --keep score|longest) and the sorts\n"
    "(--memory); clusters, keep and drop add 8 a document while sorting and\n"
    "about 20 a document and 20 a pair to cluster. Keys, and sketches (260\n"
    "bytes a text), go to unlinked scratch files in $TMPDIR (default /tmp),\n"
    "read back where needed.\n"
    "Defaults: chosen for precision and recall >= 0.95 on real texts (see\n"
    "bench/README.md). Clusters: documents are taken in --keep order; one not\n"
    "yet assigned is kept and takes every unassigned document it forms a pair\n"
    "with, so each dropped document is within K bits (and R resemblance) of its\n"
    "kept one.\n"
    "";

enum { MAX_JOIN_K = ND_MAX_PLAN_K };

/* --min-containment by default (0 = off; bench/README.md, "Dedupe
 * quality"), and the band width used when containment is on. */
#define DEFAULT_MIN_CONTAINMENT 0.0
enum { CONTAINMENT_BAND_BINS = 4 };

/* --memory: MB (2^20 bytes) for the sorts, by default and at most; the
 * least is 1 KB, for tests that want many partitions. */
enum { DEFAULT_MEMORY_MB = 256, MAX_MEMORY_MB = 1 << 20 };
#define MIN_MEMORY_MB 0.001

typedef struct pair {
    uint32_t a, b;
    uint8_t dist;
} pair;

/* The documents (dedupe_docs.h) and the state of the joins. */
typedef struct corpus {
    dedupe_docs d;
    pair *p; /* kept for clusters, keep and drop (indices into ids) */
    size_t np, pcap;
    /* The documents the joins see: ids[0..m) (doc indices, increasing), or
     * all n when ids is NULL. The cluster modes join one document of each
     * group of identical ones (same fingerprint and sketch). */
    const uint32_t *ids;
    size_t m;
    uint64_t reported, confirmed_by_containment;
    int stream, json;
    double min_res, min_cont;
    unsigned k, join_k, band_width;
    size_t memory; /* bytes for the sorts of the self-join and of grouping (--memory) */
    int oom, io; /* io: a scratch file failed (dedupe_spill_error) */
} corpus;

/* A failed read of the store sets c->oom or c->io. */
static int docs_failed(corpus *c, int rc)
{
    if (rc == DEDUPE_DOCS_ENOMEM) c->oom = 1;
    else c->io = 1;
    return -1;
}

static int get_rec(corpus *c, size_t i, dedupe_rec *out)
{
    int rc = dedupe_docs_rec(&c->d, i, out);
    return rc ? docs_failed(c, rc) : 0;
}

static void put_bytes(const char *k, size_t len, int json)
{
    if (json) cli_put_json_string(stdout, k, len);
    else cli_put_field(stdout, k, len);
}

static int put_key(corpus *c, size_t i, int json)
{
    size_t len;
    int rc = dedupe_docs_key(&c->d, i, &len);
    if (rc) return docs_failed(c, rc);
    put_bytes(c->d.kbuf, len, json);
    return 0;
}

/* Is a candidate a reported pair: resemblance >= R, or containment >= C
 * when C > 0? *res and *cont get the estimates. */
static int confirm(const corpus *c, const dedupe_rec *a, const dedupe_rec *b, double *res,
                   double *cont, int *by_cont)
{
    *res = nd_sketch_resemblance(&a->sk, &b->sk);
    *cont = dedupe_containment(*res, a->size, b->size);
    *by_cont = 0;
    if (*res >= c->min_res) return 1;
    if (c->min_cont > 0 && *cont >= c->min_cont) return *by_cont = 1;
    return 0;
}

#define DOC(c, x) ((c)->ids ? (size_t)(c)->ids[x] : (size_t)(x))

/* A reported pair x < y (indices into ids), with the two records when the
 * caller read them (else NULL): printed at once (pairs) or kept for the
 * clusters. Nonzero stops the joins (c->oom or c->io says why). */
static int emit(corpus *c, size_t x, size_t y, unsigned dist, const dedupe_rec *ra,
                const dedupe_rec *rb)
{
    size_t i = DOC(c, x), j = DOC(c, y);
    c->reported++;
    if (c->stream) {
        dedupe_rec a, b;
        if (c->json && c->d.has_sk && !ra) {
            if (get_rec(c, i, &a) || get_rec(c, j, &b)) return 1;
            ra = &a;
            rb = &b;
        }
        if (c->json) {
            printf("{\"a\":");
            if (put_key(c, i, 1)) return 1;
            printf(",\"b\":");
            if (put_key(c, j, 1)) return 1;
            printf(",\"dist\":%u", dist);
            if (c->d.has_sk) {
                double res = nd_sketch_resemblance(&ra->sk, &rb->sk);
                printf(",\"resemblance\":%.3f", res);
                if (c->min_cont > 0)
                    printf(",\"containment\":%.3f", dedupe_containment(res, ra->size, rb->size));
            }
            printf("}\n");
        } else {
            if (put_key(c, i, 0)) return 1;
            putchar('\t');
            if (put_key(c, j, 0)) return 1;
            printf("\t%u\n", dist);
        }
        return 0;
    }
    if (c->np == c->pcap) {
        size_t cap = c->pcap ? c->pcap * 2 : 4096;
        if (dedupe_grow((void **)&c->p, cap, sizeof *c->p)) {
            c->oom = 1;
            return 1;
        }
        c->pcap = cap;
    }
    c->p[c->np++] = (pair){(uint32_t)x, (uint32_t)y, (uint8_t)dist};
    return 0;
}

static int check_and_emit(corpus *c, size_t x, size_t y, unsigned dist, const dedupe_rec *a,
                          const dedupe_rec *b)
{
    double res, cont;
    int by_cont;
    if (!confirm(c, a, b, &res, &cont, &by_cont)) return 0;
    c->confirmed_by_containment += (uint64_t)by_cont;
    return emit(c, x, y, dist, a, b);
}

static int join_cb(size_t x, size_t y, unsigned dist, void *payload)
{
    corpus *c = payload;
    if (!(c->d.has_sk && c->min_res > 0)) return emit(c, x, y, dist, NULL, NULL);
    dedupe_rec a, b;
    if (get_rec(c, DOC(c, x), &a) || get_rec(c, DOC(c, y), &b)) return 1;
    return check_and_emit(c, x, y, dist, &a, &b);
}

/* ---- min-hash banding ---------------------------------------------------- */

static int band_cand(size_t x, size_t y, unsigned dist, const dedupe_rec *a, const dedupe_rec *b,
                     void *payload)
{
    return check_and_emit(payload, x, y, dist, a, b);
}

typedef struct band_read {
    corpus *c;
    dedupe_spill_reader seq;
} band_read;

/* The band join's source: a pass reads the sketch file in order; a run's
 * documents come through the cache. */
static int band_src_read(dedupe_rec *out, const uint32_t *docs, size_t n, int sequential,
                         void *payload)
{
    band_read *br = payload;
    for (size_t i = 0; i < n; i++) {
        if (!sequential) {
            if (get_rec(br->c, docs[i], &out[i])) return -1;
            continue;
        }
        const void *r = dedupe_spill_reader_get(&br->seq, (uint64_t)docs[i] * sizeof *out,
                                                sizeof *out);
        if (!r) {
            br->c->io = 1;
            return -1;
        }
        memcpy(&out[i], r, sizeof *out);
    }
    return 0;
}

static int joins_failed(const corpus *c, const char *what)
{
    if (c->io) {
        fprintf(stderr, "neardup: dedupe: %s: %s\n", what, dedupe_spill_error());
        return CLI_EXIT_DB;
    }
    return cli_fail("dedupe: out of memory in the %s", what);
}

/* The self-join's source: the fingerprints of ids[start ..). */
static int read_fps(uint64_t *out, size_t start, size_t count, void *payload)
{
    const corpus *c = payload;
    if (!c->ids) memcpy(out, c->d.fp + start, count * sizeof *out);
    else
        for (size_t x = 0; x < count; x++) out[x] = c->d.fp[c->ids[start + x]];
    return 0;
}

/* Every pair of the documents ids[0..m): the self-join (within the memory
 * budget), then banding. @return a CLI exit code. */
static int run_joins(corpus *c)
{
    if (c->m < 2) return CLI_EXIT_OK;
    int nrc = nd_selfjoin_stream(c->m, c->join_k, c->memory, read_fps, c, join_cb, c);
    if (c->oom || c->io) return joins_failed(c, "self-join");
    if (nrc < 0) return cli_fail_nd(nrc, "dedupe: self-join");
    if (c->d.has_sk && c->min_res > 0) {
        band_read br = {c, {0}};
        dedupe_band_src src = {band_src_read, &br};
        dedupe_spill_reader_init(&br.seq, &c->d.recs);
        int brc = dedupe_band_scan(c->m, c->ids, c->d.fp, &src, c->band_width, c->join_k, c->k,
                                   band_cand, c);
        dedupe_spill_reader_dispose(&br.seq);
        if (brc == -1) c->oom = 1;
        if (c->oom || c->io) return joins_failed(c, "band join");
    }
    return CLI_EXIT_OK;
}

/* ---- clusters ------------------------------------------------------------ */

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
    size_t n = c->d.n, m = 0;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order), *g = NULL, *ids = NULL, *lorder = NULL;
    uint32_t *rep = NULL, *adj = NULL, *drops = NULL;
    size_t *start = NULL;
    int rc = CLI_EXIT_OK;
    if (!order) return cli_fail("dedupe: out of memory");
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    sort_prio = c->d.prio;
    if (c->d.prio) qsort(order, n, sizeof *order, cmp_priority); /* else: input order */
    int grc = dedupe_group(&g, &ids, &m, &c->d, order, c->memory);
    if (grc == DEDUPE_DOCS_EIO) {
        fprintf(stderr, "neardup: dedupe: grouping identical documents: %s\n", dedupe_spill_error());
        rc = CLI_EXIT_DB;
        goto done;
    }
    if (grc) {
        rc = cli_fail("dedupe: out of memory grouping identical documents");
        goto done;
    }
    if (m == n) { /* no two identical: join the documents themselves */
        free(ids);
        ids = NULL;
    }
    /* The leaders' priority order; the documents' is not needed after. */
    lorder = malloc((m ? m : 1) * sizeof *lorder);
    if (!lorder) goto oom;
    size_t q = 0;
    for (size_t p = 0; p < n; p++)
        if (LEAD(g[order[p]]) == order[p]) lorder[q++] = g[order[p]];
    free(order);
    order = NULL;
    c->ids = ids;
    c->m = m; /* kept for the summary */
    rc = run_joins(c);
    if (rc) goto done;
    /* The leaders' graph in CSR form. start[x] is first x's fill cursor,
     * which ends at x + 1's start: shifted back by one after. */
    start = calloc(m + 1, sizeof *start);
    adj = malloc((2 * c->np + 1) * sizeof *adj);
    rep = malloc((m ? m : 1) * sizeof *rep);
    if (!start || !adj || !rep) goto oom;
    for (size_t e = 0; e < c->np; e++) {
        start[c->p[e].a + 1]++;
        start[c->p[e].b + 1]++;
    }
    for (size_t x = 0; x < m; x++) start[x + 1] += start[x];
    for (size_t e = 0; e < c->np; e++) {
        adj[start[c->p[e].a]++] = c->p[e].b;
        adj[start[c->p[e].b]++] = c->p[e].a;
    }
    memmove(start + 1, start, m * sizeof *start);
    start[0] = 0;
    free(c->p); /* the graph holds the pairs now */
    c->p = NULL;
    int nrc = nd_cluster_greedy(rep, lorder, m, start, adj);
    if (nrc < 0) {
        rc = cli_fail_nd(nrc, "dedupe: clustering");
        goto done;
    }
    /* Document i stays iff it leads its group and the group stays. */
    if (strcmp(out, "keep") == 0 || strcmp(out, "drop") == 0) {
        int want_keep = out[0] == 'k';
        dedupe_docs_walk w;
        dedupe_docs_walk_init(&w, &c->d);
        for (size_t i = 0; i < n; i++) {
            if ((LEAD(rep[g[i]]) == i) != want_keep) continue;
            size_t len;
            const char *k = dedupe_docs_walk_key(&w, i, &len);
            if (!k) {
                c->io = 1;
                break;
            }
            if (json) { printf("{\"%s\":", want_keep ? "keep" : "drop"); put_bytes(k, len, 1); printf("}\n"); }
            else { put_bytes(k, len, 0); putchar('\n'); }
        }
        dedupe_docs_walk_dispose(&w);
        if (c->io) goto io;
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
    for (size_t i = 0; i < n; i++) /* start[x] as x's cursor, as above */
        if (LEAD(rep[g[i]]) != i) drops[start[rep[g[i]]]++] = (uint32_t)i;
    memmove(start + 1, start, m * sizeof *start);
    start[0] = 0;
    size_t cluster = 0;
    for (size_t p = 0; p < m; p++) {
        uint32_t x = lorder[p], r = LEAD(x);
        if (rep[x] != x || start[x] == start[x + 1]) continue;
        cluster++;
        if (json) printf("{\"cluster\":%zu,\"role\":\"keep\",\"key\":", cluster);
        else printf("%zu\tkeep\t", cluster);
        if (put_key(c, r, json)) goto io;
        printf(json ? ",\"dist\":0}\n" : "\t0\n");
        for (size_t e = start[x]; e < start[x + 1]; e++) {
            uint32_t d = drops[e];
            unsigned dist = nd_hamming(c->d.fp[d], c->d.fp[r]);
            if (json) printf("{\"cluster\":%zu,\"role\":\"drop\",\"key\":", cluster);
            else printf("%zu\tdrop\t", cluster);
            if (put_key(c, d, json)) goto io;
            printf(json ? ",\"dist\":%u}\n" : "\t%u\n", dist);
        }
    }
    goto done;
io:
    if (c->io) {
        fprintf(stderr, "neardup: dedupe: printing the clusters: %s\n", dedupe_spill_error());
        rc = CLI_EXIT_DB;
        goto done;
    }
oom:
    rc = cli_fail("dedupe: out of memory building clusters");
done:
    c->ids = NULL;
    free(order);
    free(g);
    free(ids);
    free(lorder);
    free(rep);
    free(adj);
    free(start);
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

/* Memory of a document in a loader's chunk besides its key: the document,
 * its key's offset, and the sort items and scratch of its spill (160);
 * the loader fills a second chunk while the first is written (56 more,
 * measured: a 100M load in chunks of 8M peaked 430 MB higher). */
#define LOAD_DOC_BYTES 216

/* The documents into the database through one loader, a piece at a
 * time: the piece's keys (and scores) are read back from the scratch
 * files in one go; the loader copies them. */
static int load_db(nd_db *db, const char *path, corpus *c)
{
    size_t chunk = c->memory / LOAD_DOC_BYTES;
    if (chunk < 1000) chunk = 1000;
    size_t piece = cli_load_piece(chunk);
    size_t cap = c->d.n < piece ? (c->d.n ? c->d.n : 1) : piece;
    nd_doc *d = malloc(cap * sizeof *d);
    uint64_t *off = malloc((cap + 1) * sizeof *off);
    double *score = malloc(cap * sizeof *score);
    char *kb = NULL;
    size_t kb_cap = 0;
    nd_loader *l = NULL;
    int64_t now = (int64_t)time(NULL);
    int line = 0, rc = CLI_EXIT_OK, nrc; /* line: width of the progress line shown */
    if (!d || !off || !score) goto oom;
    if ((nrc = nd_loader_new(&l, db, chunk)) < 0) goto fail;
    if (isatty(2))
        line = fprintf(stderr, "neardup: dedupe: loading %zu documents into '%s'...", c->d.n, path);
    for (size_t s = 0; s < c->d.n; s += piece) {
        size_t m = c->d.n - s < piece ? c->d.n - s : piece;
        if (dedupe_spill_pread(&c->d.koff, off, (m + 1) * sizeof *off, (uint64_t)s * 8) ||
            dedupe_spill_pread(&c->d.scores, score, m * sizeof *score, (uint64_t)s * sizeof *score))
            goto io;
        size_t klen = (size_t)(off[m] - off[0]);
        if (klen > kb_cap) {
            if (dedupe_grow((void **)&kb, klen, 1)) goto oom;
            kb_cap = klen;
        }
        if (klen && dedupe_spill_pread(&c->d.keys, kb, klen, off[0])) goto io;
        for (size_t i = 0; i < m; i++)
            d[i] = (nd_doc){kb + (off[i] - off[0]), (size_t)(off[i + 1] - off[i]), c->d.fp[s + i],
                            score[i], now};
        if ((nrc = nd_loader_add(l, d, m)) < 0) goto fail;
    }
    if ((nrc = nd_loader_commit(l, NULL)) < 0) goto fail;
    if (line > 0) fprintf(stderr, "\r%*s\r", line, "");
    goto done;
fail:
    if (line > 0) fputc('\n', stderr);
    rc = cli_fail_nd(nrc, "dedupe: loading database '%s'", path);
    goto done;
io:
    if (line > 0) fputc('\n', stderr);
    fprintf(stderr, "neardup: dedupe: loading database '%s': %s\n", path, dedupe_spill_error());
    rc = CLI_EXIT_DB;
    goto done;
oom:
    if (line > 0) fputc('\n', stderr);
    rc = cli_fail("dedupe: out of memory loading the database");
done:
    nd_loader_free(l); /* without a commit, nothing new is stored */
    free(d);
    free(off);
    free(score);
    free(kb);
    return rc;
}

int cmd_dedupe(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},       {"format", required_argument, 0, 'F'},
        {"keep", required_argument, 0, 'K'},    {"out", required_argument, 0, 'o'},
        {"min-resemblance", required_argument, 0, 'r'},
        {"min-containment", required_argument, 0, 'c'},
        {"features", required_argument, 0, 'f'}, {"html", no_argument, 0, 'H'},
        {"skip-bad", no_argument, 0, 'b'},      {"json", no_argument, 0, 'j'},
        {"db", required_argument, 0, 'd'},      {"memory", required_argument, 0, 'm'},
        {0, 0, 0, 0}};
    corpus c = {0};
    in_format fmt = IN_FORMAT_FILES;
    nd_fp_options fo;
    unsigned long k = 24;
    const char *out = "clusters", *db_path = NULL;
    nd_db *db = NULL;
    dedupe_feat ac = {0};
    int html = 0, skip_bad = 0, json = 0, opt, rc = CLI_EXIT_OK, keep_mode = 0, k_given = 0;
    int features_given = 0;
    uint64_t bad = 0;
    c.min_res = 0.85;
    c.min_cont = DEFAULT_MIN_CONTAINMENT;
    c.memory = (size_t)DEFAULT_MEMORY_MB << 20;
    c.d.keys.fd = c.d.koff.fd = c.d.recs.fd = c.d.scores.fd = -1; /* disposable before init */
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "dedupe")) != -1) {
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
        case 'c': {
            char *end;
            c.min_cont = strtod(optarg, &end);
            if (*end || end == optarg || !(c.min_cont >= 0 && c.min_cont <= 1))
                return cli_fail("dedupe: --min-containment must be a number in [0, 1] (0 = off), got '%s'",
                                optarg);
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
        case 'm': {
            char *end;
            double mb = strtod(optarg, &end);
            if (*end || end == optarg || !(mb >= MIN_MEMORY_MB && mb <= MAX_MEMORY_MB))
                return cli_fail("dedupe: --memory must be a number of MB in [%g, %u], got '%s'",
                                MIN_MEMORY_MB, MAX_MEMORY_MB, optarg);
            c.memory = (size_t)(mb * (1 << 20));
            break;
        }
        default: return CLI_EXIT_USAGE;
        }
    }
    if (optind == argc)
        return cli_usage_fail("dedupe", "give at least one INPUT");
    /* Simhash only (R = 0, or fp input): the self-join must cover k. */
    if ((c.min_res == 0 || fmt == IN_FORMAT_FP) && k > MAX_JOIN_K) {
        if (k_given)
            return cli_fail("dedupe: --k above %u needs texts and --min-resemblance > 0", MAX_JOIN_K);
        k = 3;
    }
    c.k = (unsigned)k;
    c.join_k = c.k < MAX_JOIN_K ? c.k : MAX_JOIN_K;
    c.band_width = c.min_cont > 0 ? CONTAINMENT_BAND_BINS : DEDUPE_BAND_BINS;
    ac.count = c.min_cont > 0;
    c.json = json;
    c.stream = strcmp(out, "pairs") == 0;
    if (db_path) {
        rc = open_db(&db, db_path, c.join_k, &fo, features_given);
        if (rc) return rc;
        if (!features_given) nd_db_fp_options(&fo, db);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int irc = dedupe_docs_init(&c.d, keep_mode != 0, db != NULL);
    if (irc == DEDUPE_DOCS_EIO) {
        rc = CLI_EXIT_DB;
        fprintf(stderr, "neardup: dedupe: %s\n", dedupe_spill_error());
        goto done;
    }
    if (irc) {
        rc = cli_fail("dedupe: out of memory");
        goto done;
    }
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
            dedupe_rec dr;
            if (!rec.has_fp) {
                nd_fp_options o = fo;
                if (html || rec.is_html) o.flags |= ND_FP_HTML;
                dedupe_feat_begin(&ac);
                int nrc = nd_features(rec.text, rec.text_len, &o, dedupe_feat_add, &ac);
                if (nrc < 0) {
                    rc = cli_fail_nd(nrc, "%s:%llu", rec.file, (unsigned long long)rec.line);
                    break;
                }
                if (ac.oom) {
                    rc = cli_fail("dedupe: out of memory counting the features of %s:%llu", rec.file,
                                  (unsigned long long)rec.line);
                    break;
                }
                fp = dedupe_feat_end(&ac, &dr.sk, &dr.size);
                bytes += rec.text_len;
            }
            double prio = keep_mode == 1 ? (rec.has_score ? rec.score : 0)
                                         : keep_mode == 2 && rec.text ? (double)rec.text_len : 0;
            double score = rec.has_score ? rec.score : 0;
            int prc = c.d.n == UINT32_MAX ? DEDUPE_DOCS_ENOMEM
                                        : dedupe_docs_push(&c.d, rec.key, rec.key_len, fp,
                                                           rec.has_fp ? NULL : &dr, prio, score);
            if (prc == DEDUPE_DOCS_EIO) {
                fprintf(stderr, "neardup: dedupe: %s\n", dedupe_spill_error());
                rc = CLI_EXIT_DB;
                break;
            }
            if (prc) {
                rc = cli_fail("dedupe: out of memory after %zu documents", c.d.n);
                break;
            }
            if (tty && c.d.n % 20000 == 0)
                fprintf(stderr, "\rneardup: dedupe: %zu documents, %.1f MB read", c.d.n, bytes / 1e6);
        }
        in_reader_close(r);
    }
    if (tty && c.d.n >= 20000) fputc('\n', stderr);
    if (rc == CLI_EXIT_OK) {
        int frc = dedupe_docs_finish(&c.d);
        if (frc == DEDUPE_DOCS_EIO) {
            fprintf(stderr, "neardup: dedupe: %s\n", dedupe_spill_error());
            rc = CLI_EXIT_DB;
        } else if (frc) {
            rc = cli_fail("dedupe: out of memory");
        }
    }
    if (rc == CLI_EXIT_OK && !c.d.has_sk && c.k > MAX_JOIN_K) { /* only fingerprints were read */
        if (k_given && c.d.n > 0)
            rc = cli_fail("dedupe: --k above %u needs texts (no document had one)", MAX_JOIN_K);
        c.k = c.join_k = 3;
    }
    if (rc == CLI_EXIT_OK) {
        c.m = c.d.n;
        rc = c.stream ? run_joins(&c) : run_clusters(&c, out, json);
    }
    if (rc == CLI_EXIT_OK && db) rc = load_db(db, db_path, &c);
done:
    if (db) {
        int crc = cli_close_db(db, db_path);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    if (fflush(stdout) != 0 && rc == CLI_EXIT_OK) rc = cli_fail("dedupe: writing the output failed");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    char by_cont[64] = "";
    if (c.min_cont > 0)
        snprintf(by_cont, sizeof by_cont, " (%llu by containment)",
                 (unsigned long long)c.confirmed_by_containment);
    if (c.stream || rc != CLI_EXIT_OK)
        fprintf(stderr, "neardup: dedupe: %zu %s, %llu %s%s, %llu bad, %.2f s\n", c.d.n,
                cli_plural(c.d.n, "document", "documents"), (unsigned long long)c.reported,
                cli_plural(c.reported, "pair", "pairs"), by_cont, (unsigned long long)bad, secs);
    else
        fprintf(stderr, "neardup: dedupe: %zu %s (%zu distinct), %llu %s of distinct ones%s, "
                "%llu bad, %.2f s\n", c.d.n, cli_plural(c.d.n, "document", "documents"), c.m,
                (unsigned long long)c.reported, cli_plural(c.reported, "pair", "pairs"), by_cont,
                (unsigned long long)bad, secs);
    free(c.p);
    dedupe_feat_dispose(&ac);
    dedupe_docs_dispose(&c.d);
    return rc;
}
