/*
 * quality_sim.c — simulate resemblance-verified near-duplicate detection
 * for sketch and band designs, on a real corpus (bench/README.md,
 * "Near-duplicate quality"; bench/quality.sh runs it).
 *
 * Each document's features are the ones its fingerprint is made from
 * (nd_features, default options: word 3-shingles after NFKC and case
 * folding); its fingerprint is nd_fingerprint's. A design is
 * SKETCH,BANDSxROWS[i][s|f],R[,kK][,all|allrep]: candidates are the
 * documents within K bits (default 3) or sharing a band key (BANDSxROWS
 * bins of a one-permutation sketch, consecutive or with "i" interleaved,
 * empty bins filled by rotation, with "s" spread or with "f" rounds -- with
 * "f" and a larger fssBxb SKETCH, its first bins; "0" for none), and a
 * candidate is accepted when the SKETCH (quality_sketch.h) estimates a
 * resemblance >= R. Two uses, written in neardup's own output formats so
 * that bench/quality_score.py judges them exactly as it judges the engine:
 *   stream  documents in corpus order; a document is "dup" of the accepted
 *           stored candidate of highest estimate, else "new" and stored
 *           (its band keys indexed): OUT.LABEL.stream, lines new<TAB>KEY or
 *           dup<TAB>KEY<TAB>MATCH<TAB>DIST. With "all" a dup document is
 *           indexed too (a store that remembers the sketches of the copies
 *           it turned away, so that a later copy of a copy still meets it);
 *           "allrep" names the new document behind the matched copy instead.
 *   pairs   every candidate pair of the whole corpus that is accepted:
 *           OUT.LABEL.pairs, lines KEY1<TAB>KEY2<TAB>DIST.
 * LABEL is the design with commas as underscores. Per design one line
 *   SIM<TAB>LABEL<TAB>sketch bytes<TAB>band keys<TAB>stream candidates a
 *   document<TAB>pair candidates a document<TAB>share of the truth's
 *   J >= 0.9 pairs that are candidates<TAB>same for 0.8 <= J < 0.9<TAB>
 *   P(0.9)<TAB>P(0.8) (a band catches a pair of that J, independent bins)
 *   <TAB>microseconds a document to build the sketch<TAB>and the band keys
 *   (CPU time, from the distinct feature hashes; a plain implementation)
 *   <TAB>1 if the band keys come from the sketch's own bins (one
 *   computation in a real implementation), else 0
 * With --truth (bench/quality_truth.py's pairs, by document index) the two
 * candidate shares are measured; otherwise they are printed as -1.
 *
 * Input: the corpus's .texts file (bench/quality_corpus.py): records
 * "KEY<TAB>BYTES\n", the text, "\n". Uses only <neardup.h>.
 *
 * Usage: quality_sim CORPUS.texts OUT_PREFIX [--truth TRUTH.tsv] DESIGN...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <neardup.h>

#include "bench_alloc.h"
#include "quality_sketch.h"

typedef struct corpus {
    size_t n;
    char **key;
    uint64_t *fp;
    uint64_t **feat; /* distinct feature hashes, ascending */
    size_t *nfeat;
} corpus;

typedef struct design {
    char label[96];
    qs_design sketch;
    unsigned bands, rows, k;
    int interleaved; /* band b takes bins b, b + bands, ... */
    qs_fill fill;    /* how the band sketch's empty bins are filled */
    unsigned bins;   /* bins of the band sketch: the SKETCH's when it is
                      * fssBxb and the bands are "f" (one computation) */
    int all; /* the stream indexes every document, dups included */
    int rep; /* ... and names a dup's stored representative as the match */
    double r;
} design;

typedef struct truth_pair {
    uint32_t a, b;
    double j;
} truth_pair;

static void die(const char *what)
{
    fprintf(stderr, "quality_sim: %s\n", what);
    exit(1);
}

static double now(void) /* this thread's CPU time: the machine may be busy */
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- corpus ------------------------------------------------------------- */

typedef struct feat_buf {
    uint64_t *h;
    size_t n, cap;
} feat_buf;

static void feat_cb(uint64_t h, int32_t w, void *payload)
{
    (void)w;
    feat_buf *b = payload;
    if (b->n == b->cap) b->h = bench_xrealloc(b->h, (b->cap = b->cap ? 2 * b->cap : 1024) * sizeof *b->h);
    b->h[b->n++] = h;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static void load_corpus(corpus *c, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open the corpus's .texts file");
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    size_t cap = 0, tcap = 0;
    char *text = NULL, *line = NULL;
    size_t lcap = 0;
    feat_buf fb = {0};
    memset(c, 0, sizeof *c);
    while (getline(&line, &lcap, f) > 0) {
        char *tab = strchr(line, '\t');
        if (!tab) die("malformed .texts record");
        *tab = 0;
        size_t len = strtoull(tab + 1, NULL, 10);
        if (len + 1 > tcap) text = bench_xrealloc(text, tcap = len + 1);
        if (fread(text, 1, len + 1, f) != len + 1 || text[len] != '\n') die("truncated .texts record");
        if (c->n == cap) {
            cap = cap ? 2 * cap : 4096;
            c->key = bench_xrealloc(c->key, cap * sizeof *c->key);
            c->fp = bench_xrealloc(c->fp, cap * sizeof *c->fp);
            c->feat = bench_xrealloc(c->feat, cap * sizeof *c->feat);
            c->nfeat = bench_xrealloc(c->nfeat, cap * sizeof *c->nfeat);
        }
        size_t i = c->n++;
        c->key[i] = strdup(line);
        if (!c->key[i]) die("out of memory");
        if (nd_fingerprint(&c->fp[i], text, len, &fo) < 0) die(nd_errmsg());
        fb.n = 0;
        if (nd_features(text, len, &fo, feat_cb, &fb) < 0) die(nd_errmsg());
        qsort(fb.h, fb.n, sizeof *fb.h, cmp_u64);
        size_t m = 0;
        for (size_t x = 0; x < fb.n; x++)
            if (m == 0 || fb.h[x] != fb.h[m - 1]) fb.h[m++] = fb.h[x];
        c->feat[i] = bench_xmalloc(m * sizeof **c->feat);
        memcpy(c->feat[i], fb.h, m * sizeof *fb.h);
        c->nfeat[i] = m;
    }
    free(fb.h);
    free(text);
    free(line);
    fclose(f);
}

static void corpus_free(corpus *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->key[i]);
        free(c->feat[i]);
    }
    free(c->key);
    free(c->fp);
    free(c->feat);
    free(c->nfeat);
    memset(c, 0, sizeof *c);
}

static truth_pair *load_truth(const char *path, size_t *out_n)
{
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open the truth file");
    truth_pair *t = NULL;
    size_t n = 0, cap = 0;
    unsigned a, b;
    double j;
    while (fscanf(f, "%u\t%u\t%lf", &a, &b, &j) == 3) {
        if (n == cap) t = bench_xrealloc(t, (cap = cap ? 2 * cap : 4096) * sizeof *t);
        t[n++] = (truth_pair){a, b, j};
    }
    fclose(f);
    *out_n = n;
    return t;
}

/* ---- a map of 64-bit keys (band keys) to 32-bit values ------------------ */

typedef struct u64_map {
    uint64_t *key; /* 0 = empty slot (callers never insert 0) */
    uint32_t *val;
    size_t cap, used;
} u64_map;

static size_t map_slot(const u64_map *m, uint64_t k)
{
    size_t s = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (m->cap - 1);
    while (m->key[s] && m->key[s] != k) s = (s + 1) & (m->cap - 1);
    return s;
}

/* The value slot of k, inserted with value 0 when absent. */
static uint32_t *map_put(u64_map *m, uint64_t k)
{
    if (2 * (m->used + 1) > m->cap) { /* grow: load stays <= 1/2 */
        u64_map g = {0};
        g.cap = m->cap ? 2 * m->cap : 1024;
        g.used = m->used;
        g.key = bench_xmalloc(g.cap * sizeof *g.key);
        g.val = bench_xmalloc(g.cap * sizeof *g.val);
        memset(g.key, 0, g.cap * sizeof *g.key);
        for (size_t s = 0; s < m->cap; s++)
            if (m->key[s]) {
                size_t t = map_slot(&g, m->key[s]);
                g.key[t] = m->key[s];
                g.val[t] = m->val[s];
            }
        free(m->key);
        free(m->val);
        *m = g;
    }
    size_t s = map_slot(m, k);
    if (!m->key[s]) {
        m->key[s] = k;
        m->val[s] = 0;
        m->used++;
    }
    return &m->val[s];
}

/* The value of k, or 0 when absent. */
static uint32_t map_find(const u64_map *m, uint64_t k)
{
    if (!m->cap) return 0;
    size_t s = map_slot(m, k);
    return m->key[s] == k ? m->val[s] : 0;
}

static void map_free(u64_map *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* ---- candidates --------------------------------------------------------- */

/* Pairs within k bits, by the later document: near[near_at[j] ..
 * near_at[j+1]) are the earlier documents within k of j. */
typedef struct near_list {
    uint32_t *near;
    size_t *near_at;
} near_list;

typedef struct pair_buf {
    uint64_t *p; /* later << 32 | earlier */
    size_t n, cap;
} pair_buf;

static void pair_push(pair_buf *b, uint64_t v)
{
    if (b->n == b->cap) b->p = bench_xrealloc(b->p, (b->cap = b->cap ? 2 * b->cap : 4096) * sizeof *b->p);
    b->p[b->n++] = v;
}

static int pair_cb(size_t i, size_t j, unsigned dist, void *payload)
{
    (void)dist;
    pair_push(payload, (uint64_t)j << 32 | i);
    return 0;
}

static void near_build(near_list *nl, const corpus *c, unsigned k)
{
    pair_buf pb = {0};
    if (nd_selfjoin(c->fp, c->n, k, pair_cb, &pb) < 0) die(nd_errmsg());
    qsort(pb.p, pb.n, sizeof *pb.p, cmp_u64);
    nl->near = bench_xmalloc(pb.n * sizeof *nl->near);
    nl->near_at = bench_xmalloc((c->n + 1) * sizeof *nl->near_at);
    size_t x = 0;
    for (size_t j = 0; j < c->n; j++) {
        nl->near_at[j] = x;
        while (x < pb.n && (pb.p[x] >> 32) == j) {
            nl->near[x] = (uint32_t)pb.p[x];
            x++;
        }
    }
    nl->near_at[c->n] = x;
    free(pb.p);
}

/* Postings of band keys: key -> head of a list of documents. */
typedef struct band_index {
    u64_map head;  /* key -> 1 + first entry */
    uint32_t *doc, *next; /* entries; next is 1 + the following entry, or 0 */
    size_t n, cap;
} band_index;

static void band_insert(band_index *bi, uint64_t key, uint32_t d)
{
    if (bi->n == bi->cap) {
        bi->cap = bi->cap ? 2 * bi->cap : 4096;
        bi->doc = bench_xrealloc(bi->doc, bi->cap * sizeof *bi->doc);
        bi->next = bench_xrealloc(bi->next, bi->cap * sizeof *bi->next);
    }
    uint32_t *h = map_put(&bi->head, key | 1);
    bi->doc[bi->n] = d;
    bi->next[bi->n] = *h;
    *h = (uint32_t)++bi->n;
}

static void band_free(band_index *bi)
{
    map_free(&bi->head);
    free(bi->doc);
    free(bi->next);
    memset(bi, 0, sizeof *bi);
}

/* ---- the two uses ------------------------------------------------------- */

typedef struct sim_stats {
    double stream_cand, pair_cand, cand9, cand8;
} sim_stats;

static FILE *open_out(const char *prefix, const char *label, const char *ext)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%s.%s", prefix, label, ext);
    FILE *f = fopen(path, "w");
    if (!f) die("cannot write an output file");
    return f;
}

/* The best candidate of one document of the stream so far. */
typedef struct stream_pick {
    const qs_sketches *sk;
    const uint8_t *stored;
    uint32_t *stamp; /* stamp[i] == doc: i already considered */
    uint32_t doc;
    long best;
    double best_e;
    size_t cand; /* candidates considered, all documents */
} stream_pick;

static void consider(stream_pick *p, uint32_t i)
{
    if (!p->stored[i] || p->stamp[i] == p->doc) return;
    p->stamp[i] = p->doc;
    p->cand++;
    double e = qs_estimate(p->sk, p->doc, i);
    if (e > p->best_e) {
        p->best_e = e;
        p->best = i;
    }
}

static void run_stream(const corpus *c, const design *d, const qs_sketches *sk, const near_list *nl,
                       const uint64_t *bkeys, FILE *out, sim_stats *st)
{
    band_index bi = {0};
    uint8_t *stored = calloc(c->n ? c->n : 1, 1);
    if (!stored) die("out of memory");
    stream_pick p = {sk, stored, bench_xmalloc((c->n ? c->n : 1) * sizeof *p.stamp), 0, -1, -1, 0};
    uint32_t *rep = bench_xmalloc((c->n ? c->n : 1) * sizeof *rep); /* the new document behind each */
    for (size_t i = 0; i < c->n; i++) p.stamp[i] = UINT32_MAX;
    for (uint32_t j = 0; j < c->n; j++) {
        p.doc = j;
        p.best = -1;
        p.best_e = -1;
        for (size_t x = nl->near_at[j]; x < nl->near_at[j + 1]; x++) consider(&p, nl->near[x]);
        for (unsigned b = 0; b < d->bands; b++) {
            uint64_t key = bkeys[(size_t)j * d->bands + b] | 1;
            for (uint32_t e = map_find(&bi.head, key); e; e = bi.next[e - 1]) consider(&p, bi.doc[e - 1]);
        }
        if (p.best >= 0 && p.best_e >= d->r) {
            uint32_t m = d->rep ? rep[p.best] : (uint32_t)p.best;
            rep[j] = rep[p.best];
            fprintf(out, "dup\t%s\t%s\t%u\n", c->key[j], c->key[m], nd_hamming(c->fp[j], c->fp[m]));
            if (!d->all) continue;
        } else {
            rep[j] = j;
            fprintf(out, "new\t%s\n", c->key[j]);
        }
        stored[j] = 1;
        for (unsigned b = 0; b < d->bands; b++) band_insert(&bi, bkeys[(size_t)j * d->bands + b], j);
    }
    st->stream_cand = c->n ? (double)p.cand / c->n : 0;
    free(stored);
    free(p.stamp);
    free(rep);
    band_free(&bi);
}

typedef struct band_entry {
    uint64_t key;
    uint32_t doc;
} band_entry;

static int cmp_entry(const void *x, const void *y)
{
    const band_entry *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

/* Candidates of a band layout and bit distance, shared by the designs
 * that differ only in sketch or R: each document's band keys, the
 * documents within k bits, and every candidate pair of the corpus. */
typedef struct cand_set {
    int valid;
    unsigned bands, rows, k;
    int interleaved;
    qs_fill fill;
    unsigned bins;
    uint64_t *bkeys; /* bands a document */
    near_list nl;
    uint64_t *pairs; /* ascending; (earlier + 1) << 32 | later, never 0 */
    size_t npairs;
    double cand9, cand8; /* shares of the truth's pairs that are candidates */
    double band_us;      /* microseconds a document to compute its band keys */
} cand_set;

static int cand_same(const cand_set *cs, const design *d)
{
    return cs->valid && cs->bands == d->bands && cs->rows == d->rows && cs->k == d->k &&
           cs->interleaved == d->interleaved && cs->fill == d->fill && cs->bins == d->bins;
}

static void cand_free(cand_set *cs)
{
    free(cs->bkeys);
    free(cs->nl.near);
    free(cs->nl.near_at);
    free(cs->pairs);
    memset(cs, 0, sizeof *cs);
}

static int pair_found(const cand_set *cs, uint64_t key)
{
    return bsearch(&key, cs->pairs, cs->npairs, sizeof key, cmp_u64) != NULL;
}

static void cand_build(cand_set *cs, const corpus *c, const design *d, const truth_pair *truth,
                       size_t ntruth)
{
    cand_free(cs);
    *cs = (cand_set){1, d->bands, d->rows, d->k, d->interleaved, d->fill, d->bins, NULL, {0}, NULL, 0, -1, -1, 0};
    cs->bkeys = bench_xmalloc((c->n ? c->n : 1) * (d->bands ? d->bands : 1) * sizeof *cs->bkeys);
    double t0 = now();
    for (size_t x = 0; x < c->n && d->bands; x++)
        qs_band_keys(cs->bkeys + x * d->bands, d->bands, d->rows, d->bins, d->interleaved, d->fill,
                     c->feat[x], c->nfeat[x]);
    cs->band_us = c->n ? (now() - t0) * 1e6 / c->n : 0;
    near_build(&cs->nl, c, d->k);
    pair_buf pb = {0};
    for (uint32_t j = 0; j < c->n; j++)
        for (size_t x = cs->nl.near_at[j]; x < cs->nl.near_at[j + 1]; x++)
            pair_push(&pb, (uint64_t)(cs->nl.near[x] + 1) << 32 | j);
    band_entry *e = bench_xmalloc((c->n ? c->n : 1) * sizeof *e);
    for (unsigned b = 0; b < d->bands; b++) {
        for (uint32_t i = 0; i < c->n; i++) e[i] = (band_entry){cs->bkeys[(size_t)i * d->bands + b], i};
        qsort(e, c->n, sizeof *e, cmp_entry);
        for (size_t s = 0, t; s < c->n; s = t)
            for (t = s + 1; t < c->n && e[t].key == e[s].key; t++)
                for (size_t u = s; u < t; u++) pair_push(&pb, (uint64_t)(e[u].doc + 1) << 32 | e[t].doc);
    }
    free(e);
    qsort(pb.p, pb.n, sizeof *pb.p, cmp_u64);
    size_t m = 0;
    for (size_t x = 0; x < pb.n; x++)
        if (m == 0 || pb.p[x] != pb.p[m - 1]) pb.p[m++] = pb.p[x];
    cs->pairs = pb.p;
    cs->npairs = m;
    size_t n9 = 0, f9 = 0, n8 = 0, f8 = 0;
    for (size_t x = 0; x < ntruth; x++) {
        int found = pair_found(cs, (uint64_t)(truth[x].a + 1) << 32 | truth[x].b);
        if (truth[x].j >= 0.9) {
            n9++;
            f9 += (size_t)found;
        } else {
            n8++;
            f8 += (size_t)found;
        }
    }
    cs->cand9 = n9 ? (double)f9 / n9 : -1;
    cs->cand8 = n8 ? (double)f8 / n8 : -1;
}

static void run_pairs(const corpus *c, const design *d, const qs_sketches *sk, const cand_set *cs,
                      FILE *out, sim_stats *st)
{
    for (size_t x = 0; x < cs->npairs; x++) {
        uint32_t a = (uint32_t)(cs->pairs[x] >> 32) - 1, b = (uint32_t)cs->pairs[x];
        if (qs_estimate(sk, a, b) >= d->r)
            fprintf(out, "%s\t%s\t%u\n", c->key[a], c->key[b], nd_hamming(c->fp[a], c->fp[b]));
    }
    st->pair_cand = c->n ? (double)cs->npairs / c->n : 0;
    st->cand9 = cs->cand9;
    st->cand8 = cs->cand8;
}

/* ---- designs ------------------------------------------------------------ */

static void parse_design(design *d, const char *spec)
{
    char buf[96], *parts[5];
    unsigned np = 0;
    if (strlen(spec) >= sizeof buf) die("design too long");
    strcpy(buf, spec);
    for (char *p = strtok(buf, ","); p && np < 5; p = strtok(NULL, ",")) parts[np++] = p;
    if (np < 3) die("a design is SKETCH,BANDSxROWS[i][s|f],R[,kK][,all|allrep]");
    if (qs_parse(&d->sketch, parts[0])) die("unknown sketch (lib, ophBxb, bottomK, exact)");
    d->bands = d->rows = 0;
    char flags[8] = "";
    if (strcmp(parts[1], "0") != 0 &&
        (sscanf(parts[1], "%ux%u%7s", &d->bands, &d->rows, flags) < 2 ||
         strspn(flags, "isf") != strlen(flags) || !d->bands || !d->rows || d->rows > 64 ||
         d->bands * d->rows > 4096))
        die("bands are BANDSxROWS[i][s|f] (rows <= 64, at most 4096 bins) or 0");
    d->interleaved = strchr(flags, 'i') != NULL;
    d->fill = strchr(flags, 'f') ? QS_FILL_ROUNDS : strchr(flags, 's') ? QS_FILL_SPREAD : QS_FILL_ROTATE;
    d->bins = d->bands * d->rows;
    if (d->fill == QS_FILL_ROUNDS && d->sketch.kind == QS_OPH && d->sketch.fill == QS_FILL_ROUNDS &&
        d->sketch.size > d->bins)
        d->bins = d->sketch.size;
    d->r = atof(parts[2]);
    d->k = 3;
    d->all = d->rep = 0;
    for (unsigned x = 3; x < np; x++) {
        if (strcmp(parts[x], "all") == 0) d->all = 1;
        else if (strcmp(parts[x], "allrep") == 0) d->all = d->rep = 1;
        else if (parts[x][0] == 'k' && parts[x][1]) d->k = (unsigned)atoi(parts[x] + 1);
        else die("a design's options are kK (bits, default 3), all and allrep");
    }
    if (d->k > 8) die("K is at most 8 (the self-join's limit)");
    snprintf(d->label, sizeof d->label, "%s", spec);
    for (char *p = d->label; *p; p++)
        if (*p == ',') *p = '_';
}

int main(int argc, char **argv)
{
    const char *truth_path = NULL;
    int i = 1;
    if (argc < 4) die("usage: quality_sim CORPUS.texts OUT_PREFIX [--truth TRUTH.tsv] DESIGN...");
    const char *texts = argv[i++], *prefix = argv[i++];
    if (i + 1 < argc && strcmp(argv[i], "--truth") == 0) {
        truth_path = argv[i + 1];
        i += 2;
    }
    corpus c;
    load_corpus(&c, texts);
    size_t ntruth = 0;
    truth_pair *truth = truth_path ? load_truth(truth_path, &ntruth) : NULL;
    for (size_t x = 0; x < ntruth; x++)
        if (truth[x].a >= truth[x].b || truth[x].b >= c.n) die("truth pair out of range");
    cand_set cs = {0};
    for (; i < argc; i++) {
        design d;
        parse_design(&d, argv[i]);
        if (!cand_same(&cs, &d)) cand_build(&cs, &c, &d, truth, ntruth);
        qs_sketches sk;
        double t0 = now();
        if (qs_build(&sk, &d.sketch, c.n, c.feat, c.nfeat)) die("out of memory");
        double sketch_us = c.n ? (now() - t0) * 1e6 / c.n : 0;
        sim_stats st = {0};
        FILE *f = open_out(prefix, d.label, "stream");
        run_stream(&c, &d, &sk, &cs.nl, cs.bkeys, f, &st);
        if (fclose(f)) die("cannot write the stream output");
        f = open_out(prefix, d.label, "pairs");
        run_pairs(&c, &d, &sk, &cs, f, &st);
        if (fclose(f)) die("cannot write the pairs output");
        int shared = d.bins > d.bands * d.rows || (d.fill == QS_FILL_ROUNDS && d.sketch.kind == QS_OPH &&
                                                   d.sketch.fill == QS_FILL_ROUNDS && d.sketch.size == d.bins);
        printf("SIM\t%s\t%zu\t%u\t%.2f\t%.2f\t%.4f\t%.4f\t%.4f\t%.4f\t%.2f\t%.2f\t%d\n", d.label,
               qs_bytes(&d.sketch), d.bands, st.stream_cand, st.pair_cand, st.cand9, st.cand8,
               d.bands ? qs_band_catch(0.9, d.bands, d.rows) : 0,
               d.bands ? qs_band_catch(0.8, d.bands, d.rows) : 0, sketch_us, cs.band_us, shared);
        fflush(stdout);
        qs_free(&sk);
    }
    cand_free(&cs);
    free(truth);
    corpus_free(&c);
    return 0;
}
