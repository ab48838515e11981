/*
 * cmd_dedupe.c — `neardup dedupe`: one-shot near-duplicate clean of a corpus.
 *
 * One pass reads every document and computes, from the same shingle
 * features, its simhash and a min-hash sketch. A self-join finds every
 * pair within k bits (the candidates); where texts were read, a candidate
 * is confirmed only if the sketches estimate a resemblance of at least R
 * (Henzinger: simhash alone is imprecise on the web; the pair of signals is
 * not). Clusters follow the representative rule (nd_cluster_greedy), so
 * every dropped document is a confirmed near-duplicate of the kept one.
 * Memory per document: 8 (fp) + 8 (key offset) + 16 (score, length) +
 * 256 (sketch) bytes plus its key; no text is kept.
 */
#include "cli.h"
#include "in_reader.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: neardup dedupe [--k K] [--format files|jsonl|tsv|warc|fp]\n"
    "                      [--keep first|score|longest] [--out clusters|pairs|keep|drop]\n"
    "                      [--min-resemblance R] [--features F] [--html] [--skip-bad]\n"
    "                      [--json] INPUT...\n"
    "\n"
    "Find the near-duplicates of a corpus and print them:\n"
    "  clusters  CLUSTER<TAB>keep|drop<TAB>KEY<TAB>DIST  for clusters of 2 or more\n"
    "            (DIST: bits to the kept document of the cluster)\n"
    "  pairs     KEY1<TAB>KEY2<TAB>DIST for every confirmed pair\n"
    "  keep      the keys to keep (one per cluster, singletons included)\n"
    "  drop      the keys to drop\n"
    "  --k K                candidate distance (default 6)\n"
    "  --min-resemblance R  confirm candidates whose estimated word 3-shingle\n"
    "                       resemblance is >= R (default 0.85; 0 = simhash only;\n"
    "                       fp input has no text and is never confirmed)\n"
    "  --keep               which document of a cluster stays: first (input order,\n"
    "                       default), score (highest \"score\"), longest (text)\n"
    "  --format             input format (default files: each file or every file\n"
    "                       under a directory is a document)\n"
    "Clusters: documents are taken in --keep order; one not yet assigned is\n"
    "kept and takes every unassigned confirmed neighbour, so each dropped\n"
    "document is within K bits (and R resemblance) of its kept one.\n"
    "Exit codes: 0 ok, 1 bad usage or input, 2 internal error.\n";

typedef struct doc {
    uint64_t fp;
    size_t key_off, key_len;
    double score;
    uint64_t length;
} doc;

typedef struct pair {
    uint32_t a, b;
    uint8_t dist;
} pair;

typedef struct corpus {
    doc *d;
    nd_sketch *sk;
    size_t n, cap;
    char *keys;
    size_t klen, kcap;
    int has_text;
    pair *p;
    size_t np, pcap;
    double min_res;
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

static int push_doc(corpus *c, const in_record *rec, uint64_t fp, const nd_sketch *sk)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        doc *d = realloc(c->d, cap * sizeof *d);
        if (!d) return -1;
        c->d = d;
        nd_sketch *s = realloc(c->sk, cap * sizeof *s);
        if (!s) return -1;
        c->sk = s;
        c->cap = cap;
    }
    if (c->klen + rec->key_len > c->kcap) {
        size_t cap = c->kcap ? c->kcap : 65536;
        while (cap < c->klen + rec->key_len) cap *= 2;
        char *k = realloc(c->keys, cap);
        if (!k) return -1;
        c->keys = k;
        c->kcap = cap;
    }
    memcpy(c->keys + c->klen, rec->key, rec->key_len);
    c->d[c->n] = (doc){fp, c->klen, rec->key_len, rec->has_score ? rec->score : 0,
                       rec->text ? rec->text_len : 0};
    if (sk) c->sk[c->n] = *sk;
    else memset(&c->sk[c->n], 0, sizeof c->sk[c->n]);
    c->klen += rec->key_len;
    c->n++;
    return 0;
}

static int pair_cb(size_t i, size_t j, unsigned dist, void *payload)
{
    corpus *c = payload;
    if (c->has_text && c->min_res > 0 && nd_sketch_resemblance(&c->sk[i], &c->sk[j]) < c->min_res)
        return 0;
    if (c->np == c->pcap) {
        size_t cap = c->pcap ? c->pcap * 2 : 4096;
        pair *p = realloc(c->p, cap * sizeof *p);
        if (!p) {
            c->oom = 1;
            return 1;
        }
        c->p = p;
        c->pcap = cap;
    }
    c->p[c->np++] = (pair){(uint32_t)i, (uint32_t)j, (uint8_t)dist};
    return 0;
}

static void put_key(const corpus *c, size_t i, int json)
{
    if (json) cli_put_json_string(stdout, c->keys + c->d[i].key_off, c->d[i].key_len);
    else cli_put_field(stdout, c->keys + c->d[i].key_off, c->d[i].key_len);
}

static const corpus *sort_corpus;
static int keep_mode;

static int cmp_priority(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const doc *da = &sort_corpus->d[a], *db = &sort_corpus->d[b];
    if (keep_mode == 1 && da->score != db->score) return da->score > db->score ? -1 : 1;
    if (keep_mode == 2 && da->length != db->length) return da->length > db->length ? -1 : 1;
    return a < b ? -1 : a > b; /* then input order */
}

static int output_clusters(corpus *c, const char *out, int json)
{
    size_t n = c->n;
    uint32_t *order = malloc(n * sizeof *order), *rep = malloc(n * sizeof *rep);
    size_t *start = calloc(n + 1, sizeof *start);
    uint32_t *adj = malloc((2 * c->np + 1) * sizeof *adj);
    uint8_t *dist = malloc((2 * c->np + 1) * sizeof *dist);
    int rc = CLI_EXIT_OK;
    if (!order || !rep || !start || !adj || !dist) {
        rc = cli_fail("dedupe: out of memory building clusters");
        goto done;
    }
    for (size_t e = 0; e < c->np; e++) {
        start[c->p[e].a + 1]++;
        start[c->p[e].b + 1]++;
    }
    for (size_t i = 0; i < n; i++) start[i + 1] += start[i];
    {
        size_t *fill = malloc((n + 1) * sizeof *fill);
        if (!fill) {
            rc = cli_fail("dedupe: out of memory");
            goto done;
        }
        memcpy(fill, start, (n + 1) * sizeof *fill);
        for (size_t e = 0; e < c->np; e++) {
            adj[fill[c->p[e].a]] = c->p[e].b;
            dist[fill[c->p[e].a]++] = c->p[e].dist;
            adj[fill[c->p[e].b]] = c->p[e].a;
            dist[fill[c->p[e].b]++] = c->p[e].dist;
        }
        free(fill);
    }
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    sort_corpus = c;
    qsort(order, n, sizeof *order, cmp_priority);
    int nrc = nd_cluster_greedy(rep, order, n, start, adj);
    if (nrc < 0) {
        rc = cli_fail_nd(nrc, "dedupe: clustering");
        goto done;
    }
    if (strcmp(out, "keep") == 0 || strcmp(out, "drop") == 0) {
        int want_keep = out[0] == 'k';
        for (size_t i = 0; i < n; i++) {
            if ((rep[i] == i) != want_keep) continue;
            if (json) { printf("{\"%s\":", want_keep ? "keep" : "drop"); put_key(c, i, 1); printf("}\n"); }
            else { put_key(c, i, 0); putchar('\n'); }
        }
        goto done;
    }
    /* clusters: in priority order of their kept document; members in
     * input order. A member's distance is found on the kept one's list. */
    size_t *members = calloc(n, sizeof *members), cluster = 0;
    if (!members) {
        rc = cli_fail("dedupe: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (rep[i] != i) members[rep[i]]++;
    for (size_t oi = 0; oi < n; oi++) {
        uint32_t r = order[oi];
        if (rep[r] != r || members[r] == 0) continue;
        cluster++;
        if (json) { printf("{\"cluster\":%zu,\"role\":\"keep\",\"key\":", cluster); put_key(c, r, 1); printf(",\"dist\":0}\n"); }
        else { printf("%zu\tkeep\t", cluster); put_key(c, r, 0); printf("\t0\n"); }
        for (size_t e = start[r]; e < start[r + 1]; e++) {
            uint32_t m = adj[e];
            if (rep[m] != r || m == r) continue;
            if (json) { printf("{\"cluster\":%zu,\"role\":\"drop\",\"key\":", cluster); put_key(c, m, 1); printf(",\"dist\":%u}\n", dist[e]); }
            else { printf("%zu\tdrop\t", cluster); put_key(c, m, 0); printf("\t%u\n", dist[e]); }
        }
    }
    free(members);
done:
    free(order);
    free(rep);
    free(start);
    free(adj);
    free(dist);
    return rc;
}

int cmd_dedupe(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},       {"format", required_argument, 0, 'F'},
        {"keep", required_argument, 0, 'K'},    {"out", required_argument, 0, 'o'},
        {"min-resemblance", required_argument, 0, 'r'},
        {"features", required_argument, 0, 'f'}, {"html", no_argument, 0, 'H'},
        {"skip-bad", no_argument, 0, 'b'},      {"json", no_argument, 0, 'j'},
        {0, 0, 0, 0}};
    corpus c = {0};
    in_format fmt = IN_FORMAT_FILES;
    nd_fp_options fo;
    unsigned long k = 6;
    const char *out = "clusters";
    int html = 0, skip_bad = 0, json = 0, opt, rc = CLI_EXIT_OK;
    uint64_t bad = 0;
    c.min_res = 0.85;
    keep_mode = 0;
    if (cli_wants_help(argc, argv)) {
        cli_usage(stdout, usage);
        return CLI_EXIT_OK;
    }
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    optind = 1;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_PLAN_K, &k))
                return cli_fail("dedupe: --k must be 0..%u, got '%s'", ND_MAX_PLAN_K, optarg);
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
            break;
        case 'H': html = 1; break;
        case 'b': skip_bad = 1; break;
        case 'j': json = 1; break;
        default: cli_usage(stderr, usage); return CLI_EXIT_USAGE;
        }
    }
    if (optind == argc) {
        cli_usage(stderr, usage);
        return cli_fail("dedupe: give at least one INPUT");
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
                c.has_text = 1;
                bytes += rec.text_len;
            }
            if (push_doc(&c, &rec, fp, rec.has_fp ? NULL : &sk)) {
                rc = cli_fail("dedupe: out of memory after %zu documents", c.n);
                break;
            }
            if (tty && c.n % 20000 == 0)
                fprintf(stderr, "\rneardup: dedupe: %zu documents, %.1f MB read", c.n, bytes / 1e6);
        }
        in_reader_close(r);
    }
    if (tty && c.n >= 20000) fputc('\n', stderr);
    if (rc == CLI_EXIT_OK) {
        /* fps are strided inside doc: copy them out for the join. */
        int nrc;
        uint64_t *fps = malloc((c.n ? c.n : 1) * sizeof *fps);
        if (!fps) rc = cli_fail("dedupe: out of memory");
        else {
            for (size_t i = 0; i < c.n; i++) fps[i] = c.d[i].fp;
            nrc = nd_selfjoin(fps, c.n, (unsigned)k, pair_cb, &c);
            free(fps);
            if (c.oom) rc = cli_fail("dedupe: out of memory storing pairs");
            else if (nrc < 0) rc = cli_fail_nd(nrc, "dedupe: self-join");
        }
    }
    if (rc == CLI_EXIT_OK) {
        if (strcmp(out, "pairs") == 0) {
            for (size_t e = 0; e < c.np; e++) {
                if (json) {
                    printf("{\"a\":");
                    put_key(&c, c.p[e].a, 1);
                    printf(",\"b\":");
                    put_key(&c, c.p[e].b, 1);
                    printf(",\"dist\":%u", c.p[e].dist);
                    if (c.has_text)
                        printf(",\"resemblance\":%.3f", nd_sketch_resemblance(&c.sk[c.p[e].a], &c.sk[c.p[e].b]));
                    printf("}\n");
                } else {
                    put_key(&c, c.p[e].a, 0);
                    putchar('\t');
                    put_key(&c, c.p[e].b, 0);
                    printf("\t%u\n", c.p[e].dist);
                }
            }
        } else {
            rc = output_clusters(&c, out, json);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "neardup: dedupe: %zu documents, %zu confirmed pairs, %llu bad, %.2f s\n", c.n,
            c.np, (unsigned long long)bad,
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    free(c.d);
    free(c.sk);
    free(c.keys);
    free(c.p);
    return rc;
}
