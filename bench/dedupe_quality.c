/*
 * dedupe_quality.c — precision and recall of `neardup dedupe --out pairs`
 * against exact shingle resemblance (bench/README.md, "Dedupe quality").
 *
 * The ground truth is the exact Jaccard resemblance of the documents' word
 * w-shingle sets (nd_shingle_set + nd_resemblance). Every pair at or above
 * the threshold T (default 0.8) is found without comparing all n^2/2
 * pairs, by the prefix filter of all-pairs similarity joins (Bayardo,
 * Ma, Srikant, WWW 2007): order the universe of shingles by document
 * frequency (rarest first, ties by hash), and keep of each set A its
 * prefix, its first |A| - ceil(T|A|) + 1 shingles in that order. If
 * J(A,B) >= T then |A n B| >= T|A u B| >= ceil(T max(|A|,|B|)) =: a; the
 * first common shingle x (in the global order) has at least a - 1 common
 * shingles after it in A and in B, so x lies within the first |A| - a + 1
 * of A and the first |B| - a + 1 of B: inside both prefixes. So every such
 * pair shares a prefix shingle (and, also exact, |B| >= T|A|); each
 * candidate is then checked exactly. Rare-first order keeps boilerplate
 * shingles out of the prefixes, which keeps the posting lists short.
 * --brute compares every pair instead (to check the filter on a small
 * corpus).
 *
 * Containment (Broder: "A roughly contained in B") is the share of the
 * smaller set found in the larger, |A n B| / min(|A|, |B|). Its truth, the
 * pairs with containment >= --cmust (0.9) whose sets both have at least
 * --cmin (20) shingles, comes from the same prefix filter turned around:
 * with A the smaller set, |A n B| >= ceil(0.9 |A|) puts a common shingle
 * within the first |A| - ceil(0.9 |A|) + 1 of A in the global order, and
 * anywhere in B, so A's prefix is probed against the postings of every
 * shingle of every set.
 *
 * Scoring a pairs file (KEY1<TAB>KEY2<TAB>...): precision = share of the
 * reported pairs whose exact resemblance is >= --good (0.8); precision
 * (J or C) also counts a pair good when its exact containment is >=
 * --good; recall = share of the true pairs with resemblance >= --must
 * (0.9) that are reported; containment recall = share of the containment
 * truth that is reported (also given for its pairs of resemblance below
 * --must, the ones resemblance alone does not ask for). Misses are broken down by their simhash distance (default
 * fingerprint) and min-hash sketch estimate, to tell a too-narrow k from a
 * too-high R.
 *
 * Documents: every regular file directly in CORPUS_DIR, named
 * CORPUS_DIR/NAME exactly as `neardup dedupe CORPUS_DIR` names them.
 * Documents with an empty shingle set take no part in the truth.
 * The category of a document is its name up to the first "__": figures
 * are also given per category (pairs within one category).
 *
 * Usage: dedupe_quality [--w W] [--t T] [--good G] [--must M] [--brute]
 *                       [--cmust C] [--cmin N] [--truth-out FILE]
 *                       CORPUS_DIR [PAIRS_FILE...]
 * Uses only <neardup.h>.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <neardup.h>

#include "bench_alloc.h"

typedef struct doc {
    char *key;
    char *cat;
    uint64_t *set; /* sorted by hash */
    size_t n;
    uint64_t fp;
    nd_sketch sk;
} doc;

typedef struct tpair {
    uint32_t a, b; /* a < b */
    float j;
} tpair;

static doc *docs;
static size_t ndocs;
static unsigned w = 3;

static void die(const char *what)
{
    fprintf(stderr, "dedupe_quality: %s\n", what);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *p = bench_xmalloc(cap);
    for (;;) {
        if (n == cap) p = bench_xrealloc(p, cap *= 2);
        size_t got = fread(p + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return p;
}

static void sk_cb(uint64_t h, int32_t wt, void *p)
{
    (void)wt;
    nd_sketch_add(p, h);
}

/* Every regular file directly in dir, sorted by name (the order in which
 * `neardup dedupe DIR` reads them). */
static void load_corpus(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) die("cannot open the corpus directory");
    char **names = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (nn == cap) names = bench_xrealloc(names, (cap = cap ? cap * 2 : 1024) * sizeof *names);
        names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof *names, cmp_str);
    docs = bench_xmalloc(nn * sizeof *docs);
    const char *sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    for (size_t i = 0; i < nn; i++) {
        doc *x = &docs[ndocs];
        size_t kl = strlen(dir) + strlen(names[i]) + 2, len;
        x->key = bench_xmalloc(kl);
        snprintf(x->key, kl, "%s%s%s", dir, sep, names[i]);
        char *text = read_all(x->key, &len);
        if (!text) die("cannot read a corpus file");
        if (nd_shingle_set(&x->set, &x->n, text, len, w) < 0) die(nd_errmsg());
        if (nd_fingerprint(&x->fp, text, len, &fo) < 0) die(nd_errmsg());
        nd_sketch_builder b;
        nd_sketch_init(&b);
        nd_features(text, len, &fo, sk_cb, &b);
        if (nd_sketch_finish(&x->sk, &b) < 0) die(nd_errmsg());
        nd_sketch_dispose(&b);
        free(text);
        char *cut = strstr(names[i], "__");
        x->cat = strndup(names[i], cut ? (size_t)(cut - names[i]) : strlen(names[i]));
        free(names[i]);
        ndocs++;
    }
    free(names);
}

/* ---- ground truth ------------------------------------------------------ */

static tpair *ctruth; /* containment truth; j holds the containment */
static size_t nctruth, ctruth_cap;
static double cmust = 0.9;
static size_t cmin = 20;

static double containment_of(uint32_t a, uint32_t b)
{
    const doc *x = &docs[a], *y = &docs[b];
    if (x->n > y->n) {
        const doc *t = x;
        x = y;
        y = t;
    }
    return x->n ? nd_containment(x->set, x->n, y->set, y->n) : 0;
}


static tpair *truth;
static size_t ntruth, truth_cap;

static void add_truth(uint32_t a, uint32_t b, double j)
{
    if (ntruth == truth_cap) truth = bench_xrealloc(truth, (truth_cap = truth_cap ? truth_cap * 2 : 4096) * sizeof *truth);
    truth[ntruth++] = (tpair){a < b ? a : b, a < b ? b : a, (float)j};
}

static size_t prefix_len(size_t n, double t)
{
    size_t need = (size_t)(t * (double)n - 1e-9);
    if ((double)need < t * (double)n - 1e-9) need++; /* ceil(t n) */
    return n - need + 1;
}

typedef struct rank {
    uint64_t h;
    uint32_t df;
} rank;

static const uint64_t *uni; /* sorted distinct shingles */
static uint32_t *uni_df;
static size_t nuni;

static uint32_t df_of(uint64_t h)
{
    size_t lo = 0, hi = nuni;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (uni[mid] < h) lo = mid + 1;
        else hi = mid;
    }
    return uni_df[lo];
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_rank(const void *a, const void *b)
{
    const rank *x = a, *y = b;
    if (x->df != y->df) return x->df < y->df ? -1 : 1;
    return x->h < y->h ? -1 : x->h > y->h;
}

typedef struct post {
    uint64_t h;
    uint32_t d;
} post;

/* Index of the first posting of hash h in ps[0..n) (sorted by hash), or
 * of the first greater one. */
static size_t first_post(const post *ps, size_t n, uint64_t h)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ps[mid].h < h) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int cmp_post(const void *a, const void *b)
{
    const post *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return x->d < y->d ? -1 : x->d > y->d;
}

static void truth_prefix(double t, size_t *out_cand)
{
    /* Document frequencies. */
    size_t total = 0;
    for (size_t i = 0; i < ndocs; i++) total += docs[i].n;
    uint64_t *all = bench_xmalloc(total * sizeof *all);
    size_t m = 0;
    for (size_t i = 0; i < ndocs; i++) {
        memcpy(all + m, docs[i].set, docs[i].n * sizeof *all);
        m += docs[i].n;
    }
    qsort(all, total, sizeof *all, cmp_u64);
    uni_df = bench_xmalloc((total ? total : 1) * sizeof *uni_df);
    nuni = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i;
        while (j < total && all[j] == all[i]) j++;
        all[nuni] = all[i];
        uni_df[nuni++] = (uint32_t)(j - i);
        i = j;
    }
    uni = all;
    /* Prefixes in (df, hash) order, and their postings. */
    post *ps = NULL;
    size_t nps = 0, pcap = 0;
    rank *rk = NULL;
    size_t rcap = 0;
    for (size_t i = 0; i < ndocs; i++) {
        if (!docs[i].n) continue;
        if (docs[i].n > rcap) rk = bench_xrealloc(rk, (rcap = docs[i].n) * sizeof *rk);
        for (size_t s = 0; s < docs[i].n; s++) rk[s] = (rank){docs[i].set[s], df_of(docs[i].set[s])};
        qsort(rk, docs[i].n, sizeof *rk, cmp_rank);
        size_t p = prefix_len(docs[i].n, t);
        for (size_t s = 0; s < p; s++) {
            if (rk[s].df < 2) continue; /* in no other set */
            if (nps == pcap) ps = bench_xrealloc(ps, (pcap = pcap ? pcap * 2 : 65536) * sizeof *ps);
            ps[nps++] = (post){rk[s].h, (uint32_t)i};
        }
    }
    free(rk);
    qsort(ps, nps, sizeof *ps, cmp_post);
    /* Candidates of document a: the members b < a of the posting lists of
     * a's prefix shingles; a stamp per b counts each pair once. */
    uint32_t *stamp = bench_xmalloc(ndocs * sizeof *stamp);
    for (size_t i = 0; i < ndocs; i++) stamp[i] = UINT32_MAX;
    size_t cand = 0;
    rk = NULL;
    rcap = 0;
    /* Index: start of each posting list, found by binary search per probe. */
    for (uint32_t a = 0; a < ndocs; a++) {
        if (!docs[a].n) continue;
        if (docs[a].n > rcap) rk = bench_xrealloc(rk, (rcap = docs[a].n) * sizeof *rk);
        for (size_t s = 0; s < docs[a].n; s++) rk[s] = (rank){docs[a].set[s], df_of(docs[a].set[s])};
        qsort(rk, docs[a].n, sizeof *rk, cmp_rank);
        size_t p = prefix_len(docs[a].n, t);
        for (size_t s = 0; s < p; s++) {
            if (rk[s].df < 2) continue;
            size_t lo = first_post(ps, nps, rk[s].h);
            for (size_t y = lo; y < nps && ps[y].h == rk[s].h && ps[y].d < a; y++) {
                uint32_t b = ps[y].d;
                if (stamp[b] == a) continue;
                stamp[b] = a;
                size_t na = docs[a].n, nb = docs[b].n;
                size_t lo_n = na < nb ? na : nb, hi_n = na < nb ? nb : na;
                if ((double)lo_n < t * (double)hi_n - 1e-9) continue;
                cand++;
                double j = nd_resemblance(docs[a].set, na, docs[b].set, nb);
                if (j >= t) add_truth(b, a, j);
            }
        }
    }
    free(rk);
    free(stamp);
    free(ps);
    *out_cand = cand;
}

static void truth_containment_brute(void)
{
    for (uint32_t a = 0; a < ndocs; a++) {
        if (docs[a].n < cmin) continue;
        for (uint32_t b = a + 1; b < ndocs; b++) {
            if (docs[b].n < cmin) continue;
            double c = containment_of(a, b);
            if (c < cmust) continue;
            if (nctruth == ctruth_cap)
                ctruth = bench_xrealloc(ctruth, (ctruth_cap = ctruth_cap ? ctruth_cap * 2 : 4096) * sizeof *ctruth);
            ctruth[nctruth++] = (tpair){a, b, (float)c};
        }
    }
}

static void truth_brute(double t)
{
    for (uint32_t a = 0; a < ndocs; a++) {
        if (!docs[a].n) continue;
        for (uint32_t b = a + 1; b < ndocs; b++) {
            if (!docs[b].n) continue;
            double j = nd_resemblance(docs[a].set, docs[a].n, docs[b].set, docs[b].n);
            if (j >= t) add_truth(a, b, j);
        }
    }
}

/* Every pair with containment >= cmust, both sets >= cmin (needs uni and
 * uni_df from truth_prefix, or builds them). Each smaller set A probes the
 * postings of all shingles with its prefix; B must be at least as large
 * (ties: both probe, duplicates are removed by the caller). */
static void truth_containment(size_t *out_cand)
{
    post *ps = NULL;
    size_t nps = 0, pcap = 0, cand = 0;
    for (size_t i = 0; i < ndocs; i++) {
        if (docs[i].n < cmin) continue;
        for (size_t s = 0; s < docs[i].n; s++) {
            if (df_of(docs[i].set[s]) < 2) continue;
            if (nps == pcap) ps = bench_xrealloc(ps, (pcap = pcap ? pcap * 2 : 65536) * sizeof *ps);
            ps[nps++] = (post){docs[i].set[s], (uint32_t)i};
        }
    }
    qsort(ps, nps, sizeof *ps, cmp_post);
    uint32_t *stamp = bench_xmalloc(ndocs * sizeof *stamp);
    for (size_t i = 0; i < ndocs; i++) stamp[i] = UINT32_MAX;
    rank *rk = NULL;
    size_t rcap = 0;
    for (uint32_t a = 0; a < ndocs; a++) {
        if (docs[a].n < cmin) continue;
        if (docs[a].n > rcap) rk = bench_xrealloc(rk, (rcap = docs[a].n) * sizeof *rk);
        for (size_t s = 0; s < docs[a].n; s++) rk[s] = (rank){docs[a].set[s], df_of(docs[a].set[s])};
        qsort(rk, docs[a].n, sizeof *rk, cmp_rank);
        size_t p = prefix_len(docs[a].n, cmust);
        stamp[a] = a;
        for (size_t s = 0; s < p; s++) {
            if (rk[s].df < 2) continue;
            size_t lo = first_post(ps, nps, rk[s].h);
            for (size_t y = lo; y < nps && ps[y].h == rk[s].h; y++) {
                uint32_t b = ps[y].d;
                if (stamp[b] == a || docs[b].n < docs[a].n) continue;
                stamp[b] = a;
                cand++;
                double c = nd_containment(docs[a].set, docs[a].n, docs[b].set, docs[b].n);
                if (c < cmust) continue;
                if (nctruth == ctruth_cap)
                    ctruth = bench_xrealloc(ctruth, (ctruth_cap = ctruth_cap ? ctruth_cap * 2 : 4096) * sizeof *ctruth);
                ctruth[nctruth++] = (tpair){a < b ? a : b, a < b ? b : a, (float)c};
            }
        }
    }
    free(rk);
    free(stamp);
    free(ps);
    *out_cand = cand;
}

static int cmp_tpair(const void *x, const void *y)
{
    const tpair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

/* ---- scoring ------------------------------------------------------------ */

static long find_key(const char *k)
{
    size_t lo = 0, hi = ndocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(docs[mid].key, k);
        if (c == 0) return (long)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

typedef struct stat_row {
    const char *cat;
    size_t reported, good, must, found;
} stat_row;

static stat_row rows[64];
static size_t nrows;

static stat_row *row_for(const char *cat)
{
    for (size_t i = 0; i < nrows; i++)
        if (strcmp(rows[i].cat, cat) == 0) return &rows[i];
    if (nrows == 64) return &rows[63];
    rows[nrows] = (stat_row){cat, 0, 0, 0, 0};
    return &rows[nrows++];
}

static const char *pair_cat(uint32_t a, uint32_t b)
{
    return strcmp(docs[a].cat, docs[b].cat) == 0 ? docs[a].cat : "(mixed)";
}

static void score(const char *file, double good, double must)
{
    FILE *f = fopen(file, "r");
    if (!f) die("cannot open a pairs file");
    tpair *rep = NULL;
    size_t nrep = 0, cap = 0, unknown = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    while ((got = getline(&line, &lcap, f)) > 0) {
        char *t1 = strchr(line, '\t');
        if (!t1) continue;
        *t1 = 0;
        char *t2 = strchr(t1 + 1, '\t');
        if (t2) *t2 = 0;
        else t1[1 + strcspn(t1 + 1, "\n")] = 0;
        long a = find_key(line), b = find_key(t1 + 1);
        if (a < 0 || b < 0 || a == b) {
            unknown++;
            continue;
        }
        if (nrep == cap) rep = bench_xrealloc(rep, (cap = cap ? cap * 2 : 4096) * sizeof *rep);
        rep[nrep++] = (tpair){(uint32_t)(a < b ? a : b), (uint32_t)(a < b ? b : a), 0};
    }
    free(line);
    fclose(f);
    qsort(rep, nrep, sizeof *rep, cmp_tpair);
    size_t m = 0;
    for (size_t i = 0; i < nrep; i++)
        if (m == 0 || cmp_tpair(&rep[i], &rep[m - 1])) rep[m++] = rep[i];
    size_t dups = nrep - m;
    nrep = m;
    nrows = 0;
    stat_row *all = row_for("all");
    size_t hist_bad[5] = {0}; /* reported pairs below good: J in [0,.2),..[.6,.8) */
    size_t good_jc = 0;        /* J >= good or containment >= good */
    for (size_t i = 0; i < nrep; i++) {
        double j = nd_resemblance(docs[rep[i].a].set, docs[rep[i].a].n, docs[rep[i].b].set,
                                  docs[rep[i].b].n);
        good_jc += j >= good || containment_of(rep[i].a, rep[i].b) >= good;
        stat_row *r = row_for(pair_cat(rep[i].a, rep[i].b));
        all->reported++;
        r->reported++;
        if (j >= good) {
            all->good++;
            r->good++;
        } else {
            int bucket = (int)(j * 5);
            hist_bad[bucket < 0 ? 0 : bucket > 4 ? 4 : bucket]++;
        }
    }
    size_t miss_dist[66] = {0}, miss_sk[11] = {0}, miss = 0;
    for (size_t i = 0; i < ntruth; i++) {
        if (truth[i].j < must) continue;
        stat_row *r = row_for(pair_cat(truth[i].a, truth[i].b));
        all->must++;
        r->must++;
        if (bsearch(&truth[i], rep, nrep, sizeof *rep, cmp_tpair)) {
            all->found++;
            r->found++;
        } else {
            miss++;
            miss_dist[nd_hamming(docs[truth[i].a].fp, docs[truth[i].b].fp)]++;
            double e = nd_sketch_resemblance(&docs[truth[i].a].sk, &docs[truth[i].b].sk);
            miss_sk[(int)(e * 10)]++;
        }
    }
    size_t cfound = 0, clow = 0, clow_found = 0; /* clow: containment truth with J < must */
    for (size_t i = 0; i < nctruth; i++) {
        int found = bsearch(&ctruth[i], rep, nrep, sizeof *rep, cmp_tpair) != NULL;
        cfound += (size_t)found;
        if (nd_resemblance(docs[ctruth[i].a].set, docs[ctruth[i].a].n, docs[ctruth[i].b].set,
                           docs[ctruth[i].b].n) < must) {
            clow++;
            clow_found += (size_t)found;
        }
    }
    double prec_jc = nrep ? (double)good_jc / (double)nrep : 1.0;
    double crecall = nctruth ? (double)cfound / (double)nctruth : 1.0;
    printf("%s: %zu reported pairs (%zu repeated, %zu unknown keys)\n", file, nrep, dups, unknown);
    printf("  %-12s %9s %9s %9s %9s %9s\n", "category", "reported", "J>=good", "precision", "J>=must",
           "recall");
    for (size_t i = 0; i < nrows; i++)
        printf("  %-12s %9zu %9zu %9.4f %9zu %9.4f\n", rows[i].cat, rows[i].reported, rows[i].good,
               rows[i].reported ? (double)rows[i].good / (double)rows[i].reported : 1.0, rows[i].must,
               rows[i].must ? (double)rows[i].found / (double)rows[i].must : 1.0);
    printf("  false positives by exact J: [0,.2) %zu  [.2,.4) %zu  [.4,.6) %zu  [.6,.8) %zu\n",
           hist_bad[0], hist_bad[1], hist_bad[2], hist_bad[3] + hist_bad[4]);
    if (miss) {
        printf("  misses by simhash distance:");
        for (int d = 0; d <= 64; d++)
            if (miss_dist[d]) printf(" %d:%zu", d, miss_dist[d]);
        printf("\n  misses by sketch estimate (tenths):");
        for (int s = 0; s <= 10; s++)
            if (miss_sk[s]) printf(" %.1f:%zu", s / 10.0, miss_sk[s]);
        printf("\n");
    }
    printf("  precision counting containment (J or C >= good): %zu of %zu, %.4f\n", good_jc, nrep,
           prec_jc);
    printf("  containment recall (C >= %.2f, both sets >= %zu shingles): %zu of %zu, %.4f; "
           "of those with J < must: %zu of %zu, %.4f\n", cmust, cmin, cfound, nctruth, crecall,
           clow_found, clow, clow ? (double)clow_found / (double)clow : 1.0);
    printf("RESULT\t%s\t%zu\t%.4f\t%.4f\t%.4f\t%.4f\n", file, nrep,
           all->reported ? (double)all->good / (double)all->reported : 1.0,
           all->must ? (double)all->found / (double)all->must : 1.0, prec_jc, crecall);
    free(rep);
}

int main(int argc, char **argv)
{
    double t = 0.8, good = 0.8, must = 0.9;
    int brute = 0, i = 1;
    const char *truth_out = NULL;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (strcmp(argv[i], "--brute") == 0) brute = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--w") == 0) w = (unsigned)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--t") == 0) t = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--good") == 0) good = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--must") == 0) must = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--truth-out") == 0) truth_out = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--cmust") == 0) cmust = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--cmin") == 0) cmin = (size_t)atol(argv[++i]);
        else die("usage: dedupe_quality [--w W] [--t T] [--good G] [--must M] [--brute] "
                 "[--cmust C] [--cmin N] [--truth-out FILE] CORPUS_DIR [PAIRS_FILE...]");
    }
    if (i >= argc) die("give CORPUS_DIR");
    if (good < t || must < t) die("--good and --must must be >= --t");
    double t0 = now();
    load_corpus(argv[i]);
    size_t empty = 0, shingles = 0;
    for (size_t d = 0; d < ndocs; d++) {
        empty += docs[d].n == 0;
        shingles += docs[d].n;
    }
    double t1 = now();
    size_t cand = 0;
    if (brute) truth_brute(t);
    else truth_prefix(t, &cand);
    qsort(truth, ntruth, sizeof *truth, cmp_tpair);
    double t2 = now();
    size_t ccand = 0;
    if (brute) truth_containment_brute();
    else truth_containment(&ccand);
    qsort(ctruth, nctruth, sizeof *ctruth, cmp_tpair);
    size_t cm = 0;
    for (size_t p = 0; p < nctruth; p++)
        if (cm == 0 || cmp_tpair(&ctruth[p], &ctruth[cm - 1])) ctruth[cm++] = ctruth[p];
    nctruth = cm;
    double t3 = now();
    size_t n8 = 0, n9 = 0, n10 = 0;
    for (size_t p = 0; p < ntruth; p++) {
        n8 += truth[p].j >= good;
        n9 += truth[p].j >= must;
        n10 += truth[p].j >= 1.0;
    }
    printf("corpus %s: %zu documents (%zu with no shingle), %zu %u-shingles (distinct per document) in all\n",
           argv[i], ndocs, empty, shingles, w);
    printf("truth (%s, T=%.2f): %zu pairs with J>=%.2f, %zu with J>=%.2f, %zu identical sets; "
           "%zu candidates checked; load %.1f s, join %.1f s\n",
           brute ? "all pairs" : "prefix filter", t, n8, good, n9, must, n10, cand, t1 - t0, t2 - t1);
    printf("containment truth: %zu pairs with C>=%.2f and both sets >= %zu shingles; "
           "%zu candidates checked; %.1f s\n", nctruth, cmust, cmin, ccand, t3 - t2);
    if (truth_out) {
        FILE *f = fopen(truth_out, "w");
        if (!f) die("cannot write --truth-out");
        for (size_t p = 0; p < ntruth; p++)
            fprintf(f, "%s\t%s\t%.4f\n", docs[truth[p].a].key, docs[truth[p].b].key, truth[p].j);
        fclose(f);
    }
    for (i++; i < argc; i++) score(argv[i], good, must);
    return 0;
}
