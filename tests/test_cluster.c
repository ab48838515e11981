/*
 * test_cluster.c — query-biased clustering (nd_cluster).
 *
 * Random result lists with planted near-duplicates: every removal obeys
 * the representative rule (within its query's tier k, kept scores at least
 * as high, kept not removed), a removed document never shows up again, and
 * the removals equal those of a brute-force re-implementation of the rule
 * (linear scans, insertion sorts). Small hand-made cases pin top M, tiers
 * by query rank, the carry-over between queries, and the bad arguments.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "neardup.h"

typedef struct removal {
    uint32_t query, removed, kept;
    unsigned dist;
} removal;

typedef struct rlist {
    removal *r;
    size_t n, cap;
    size_t stop_after; /* return 99 at this many removals; 0 = never */
} rlist;

static int record(uint32_t query, uint32_t removed, uint32_t kept, unsigned dist, void *payload)
{
    rlist *l = payload;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->r = realloc(l->r, l->cap * sizeof *l->r);
        assert_non_null(l->r);
    }
    l->r[l->n++] = (removal){query, removed, kept, dist};
    return l->stop_after && l->n == l->stop_after ? 99 : 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static unsigned tier_k(const nd_cluster_options *o, uint32_t qrank)
{
    if (!o || !o->n_tiers) return 3;
    for (size_t t = 0; t < o->n_tiers; t++)
        if (qrank <= o->tiers[t].last_query) return o->tiers[t].k;
    return o->tiers[o->n_tiers - 1].k;
}

/* The rule, written the slow obvious way. */
static void brute(rlist *out, const nd_cluster_item *it, size_t n, const nd_cluster_options *o)
{
    uint32_t *gone = malloc((n + 1) * sizeof *gone), n_gone = 0;
    size_t *sel = malloc((n + 1) * sizeof *sel);
    unsigned char *taken = malloc(n + 1);
    size_t top = o ? o->top : 0;
    uint32_t qrank = 0;
    for (size_t b = 0, e; b < n; b = e) {
        for (e = b; e < n && it[e].query == it[b].query; e++) {}
        qrank++;
        unsigned k = tier_k(o, qrank);
        size_t m = 0;
        /* insertion by (rank, index) of the items still present */
        for (size_t i = b; i < e; i++) {
            int dead = 0;
            for (uint32_t g = 0; g < n_gone; g++) dead |= gone[g] == it[i].doc;
            if (dead) continue;
            size_t p = m++;
            while (p > 0 && it[sel[p - 1]].rank > it[i].rank) {
                sel[p] = sel[p - 1];
                p--;
            }
            sel[p] = i;
        }
        if (top && m > top) m = top;
        /* stable insertion sort by score descending, then rank */
        for (size_t i = 1; i < m; i++) {
            size_t v = sel[i], p = i;
            while (p > 0 && (it[sel[p - 1]].score < it[v].score ||
                             (it[sel[p - 1]].score == it[v].score && it[sel[p - 1]].rank > it[v].rank))) {
                sel[p] = sel[p - 1];
                p--;
            }
            sel[p] = v;
        }
        memset(taken, 0, m);
        for (size_t i = 0; i < m; i++) {
            if (taken[i]) continue;
            taken[i] = 1;
            for (size_t j = i + 1; j < m; j++) {
                unsigned d = nd_hamming(it[sel[i]].fp, it[sel[j]].fp);
                if (taken[j] || d > k) continue;
                taken[j] = 1;
                gone[n_gone++] = it[sel[j]].doc;
                record(it[b].query, it[sel[j]].doc, it[sel[i]].doc, d, out);
            }
        }
    }
    free(gone);
    free(sel);
    free(taken);
}

/* Random queries over a pool of documents; document d's fingerprint is
 * centre[d % 8] with up to 5 bits flipped, so near-duplicates abound. The
 * same document has one fingerprint and one score everywhere. */
static size_t make_items(nd_cluster_item *it, uint64_t *dfp, double *dscore, uint32_t n_docs,
                         uint32_t n_queries, uint32_t per_query)
{
    uint64_t centre[8];
    for (int c = 0; c < 8; c++) centre[c] = rnd();
    for (uint32_t d = 0; d < n_docs; d++) {
        dfp[d] = centre[d % 8];
        for (unsigned f = rnd() % 6; f > 0; f--) dfp[d] ^= 1ull << (rnd() % 64);
        dscore[d] = (double)(rnd() % 4); /* ties on purpose */
    }
    size_t n = 0;
    uint32_t *pick = malloc(n_docs * sizeof *pick);
    for (uint32_t q = 0; q < n_queries; q++) {
        uint32_t r = (uint32_t)(rnd() % (per_query + 1));
        if (r > n_docs) r = n_docs;
        for (uint32_t d = 0; d < n_docs; d++) pick[d] = d;
        for (uint32_t i = 0; i < r; i++) { /* r distinct documents */
            uint32_t j = i + (uint32_t)(rnd() % (n_docs - i)), t = pick[i];
            pick[i] = pick[j];
            pick[j] = t;
            uint32_t doc = pick[i] * 3 + 7; /* sparse caller indices */
            it[n++] = (nd_cluster_item){1000 - q * 13, /* ids not in order */
                                        (uint32_t)(rnd() % 3 ? i + 1 : rnd() % (r + 1) + 1),
                                        doc, dfp[pick[i]], dscore[pick[i]]};
        }
    }
    free(pick);
    return n;
}

static void test_random_vs_brute(void **state)
{
    (void)state;
    enum { DOCS = 60, QUERIES = 25, PER = 20 };
    nd_cluster_item *it = malloc(QUERIES * PER * sizeof *it);
    uint64_t dfp[DOCS];
    double dscore[DOCS];
    nd_cluster_tier tiers[3] = {{3, 4}, {10, 2}, {20, 1}};
    size_t total = 0;
    for (int round = 0; round < 300; round++) {
        size_t n = make_items(it, dfp, dscore, DOCS, QUERIES, PER);
        nd_cluster_options o = ND_CLUSTER_OPTIONS_INIT;
        o.top = round % 3 == 0 ? 0 : 1 + rnd() % 12;
        if (round % 2) {
            o.tiers = tiers;
            o.n_tiers = 1 + round % 3;
        }
        rlist got = {0}, want = {0};
        assert_int_equal(nd_cluster(it, n, &o, record, &got), ND_OK);
        brute(&want, it, n, &o);
        assert_int_equal(got.n, want.n);
        for (size_t i = 0; i < got.n; i++) {
            assert_int_equal(got.r[i].query, want.r[i].query);
            assert_int_equal(got.r[i].removed, want.r[i].removed);
            assert_int_equal(got.r[i].kept, want.r[i].kept);
            assert_int_equal(got.r[i].dist, want.r[i].dist);
        }
        total += got.n;

        /* The representative rule and the carry-over, checked directly. */
        unsigned char gone[DOCS * 3 + 8] = {0};
        uint32_t qrank = 0, last_q = UINT32_MAX;
        size_t r = 0;
        for (size_t b = 0, e; b < n; b = e) {
            for (e = b; e < n && it[e].query == it[b].query; e++) {}
            qrank++;
            assert_int_not_equal(it[b].query, last_q);
            last_q = it[b].query;
            size_t in_query = 0;
            for (; r < got.n && got.r[r].query == it[b].query; r++) {
                removal x = got.r[r];
                uint32_t pr = (x.removed - 7) / 3, pk = (x.kept - 7) / 3;
                assert_int_equal(x.dist, nd_hamming(dfp[pr], dfp[pk]));
                assert_true(x.dist <= tier_k(&o, qrank));
                assert_true(dscore[pk] >= dscore[pr]);
                assert_false(gone[x.kept]);    /* kept is still present */
                assert_false(gone[x.removed]); /* removed only once */
                gone[x.removed] = 1;
                in_query++;
            }
            if (o.top) assert_true(in_query < o.top); /* at least one kept of M */
        }
        assert_int_equal(r, got.n);
        /* A removed document is never a representative afterwards. */
        for (size_t i = 0; i < got.n; i++)
            for (size_t j = i + 1; j < got.n; j++) assert_int_not_equal(got.r[j].kept, got.r[i].removed);
        free(got.r);
        free(want.r);
    }
    assert_true(total > 1000); /* the planted near-duplicates were found */
    free(it);
}

static void test_top_m(void **state)
{
    (void)state;
    /* Five identical results; only the top 2 by rank are considered. */
    nd_cluster_item it[5];
    for (uint32_t i = 0; i < 5; i++) it[i] = (nd_cluster_item){0, 5 - i, i, 42, (double)i};
    nd_cluster_options o = ND_CLUSTER_OPTIONS_INIT;
    o.top = 2;
    rlist got = {0};
    assert_int_equal(nd_cluster(it, 5, &o, record, &got), ND_OK);
    /* ranks 1, 2 are docs 4, 3; doc 4 scores higher: keeps 4, removes 3 */
    assert_int_equal(got.n, 1);
    assert_int_equal(got.r[0].removed, 3);
    assert_int_equal(got.r[0].kept, 4);
    assert_int_equal(got.r[0].dist, 0);
    got.n = 0;
    assert_int_equal(nd_cluster(it, 5, NULL, record, &got), ND_OK);
    assert_int_equal(got.n, 4);
    free(got.r);
}

static void test_tiers_by_query_rank(void **state)
{
    (void)state;
    /* Three queries (ids out of order), each two documents 2 bits apart. */
    nd_cluster_item it[6] = {
        {50, 1, 0, 0x0, 2}, {50, 2, 1, 0x3, 1},
        {7, 1, 2, 0x0, 2},  {7, 2, 3, 0x3, 1},
        {9, 1, 4, 0x0, 2},  {9, 2, 5, 0x3, 1},
    };
    nd_cluster_tier tiers[2] = {{1, 2}, {2, 1}}; /* query 3: "the rest" = last tier */
    nd_cluster_options o = ND_CLUSTER_OPTIONS_INIT;
    o.tiers = tiers;
    o.n_tiers = 2;
    rlist got = {0};
    assert_int_equal(nd_cluster(it, 6, &o, record, &got), ND_OK);
    assert_int_equal(got.n, 1);
    assert_int_equal(got.r[0].query, 50);
    assert_int_equal(got.r[0].removed, 1);
    tiers[1].k = 2;
    got.n = 0;
    assert_int_equal(nd_cluster(it, 6, &o, record, &got), ND_OK);
    assert_int_equal(got.n, 3);
    assert_int_equal(got.r[2].query, 9);
    assert_int_equal(got.r[2].removed, 5);
    assert_int_equal(got.r[2].kept, 4);
    free(got.r);
}

static void test_carry_over(void **state)
{
    (void)state;
    /* Query 1 removes B (near A). In query 2, B would be the best and
     * near D; being gone, it cannot remove D, and C (far) stays. */
    nd_cluster_item it[5] = {
        {1, 1, 0 /* A */, 0xf0, 5}, {1, 2, 1 /* B */, 0xf1, 1},
        {2, 1, 1 /* B */, 0xf1, 9}, {2, 2, 3 /* D */, 0xf7, 2}, {2, 3, 2 /* C */, ~0ull, 3},
    };
    nd_cluster_options o = ND_CLUSTER_OPTIONS_INIT;
    nd_cluster_tier t = {1, 1};
    o.tiers = &t;
    o.n_tiers = 1;
    rlist got = {0};
    assert_int_equal(nd_cluster(it, 5, &o, record, &got), ND_OK);
    assert_int_equal(got.n, 1);
    assert_int_equal(got.r[0].removed, 1);
    assert_int_equal(got.r[0].kept, 0);
    /* Score ties: the better rank is kept. */
    nd_cluster_item tie[2] = {{0, 2, 0, 1, 1}, {0, 1, 1, 1, 1}};
    got.n = 0;
    assert_int_equal(nd_cluster(tie, 2, NULL, record, &got), ND_OK);
    assert_int_equal(got.n, 1);
    assert_int_equal(got.r[0].kept, 1);
    free(got.r);
}

static void test_bad_args(void **state)
{
    (void)state;
    nd_cluster_item it[3] = {{0, 1, 0, 0, 0}, {1, 1, 1, 0, 0}, {0, 2, 2, 0, 0}};
    rlist got = {0};
    nd_cluster_options o = ND_CLUSTER_OPTIONS_INIT;
    assert_int_equal(nd_cluster(NULL, 0, NULL, record, &got), ND_OK);
    assert_int_equal(nd_cluster(NULL, 1, NULL, record, &got), ND_EINVAL);
    assert_int_equal(nd_cluster(it, 2, NULL, NULL, NULL), ND_EINVAL);
    assert_int_equal(nd_cluster(it, 3, NULL, record, &got), ND_EINVAL); /* query 0 split */
    assert_non_null(strstr(nd_errmsg(), "not contiguous"));
    o.version = 2;
    assert_int_equal(nd_cluster(it, 2, &o, record, &got), ND_EINVAL);
    o.version = ND_CLUSTER_OPTIONS_VERSION;
    o.n_tiers = 1; /* NULL tiers */
    assert_int_equal(nd_cluster(it, 2, &o, record, &got), ND_EINVAL);
    nd_cluster_tier bad[2] = {{5, 3}, {5, 2}};
    o.tiers = bad;
    o.n_tiers = 2;
    assert_int_equal(nd_cluster(it, 2, &o, record, &got), ND_EINVAL);
    bad[1].last_query = 6;
    bad[1].k = 65;
    assert_int_equal(nd_cluster(it, 2, &o, record, &got), ND_EINVAL);
    bad[1].k = 64;
    assert_int_equal(nd_cluster(it, 2, &o, record, &got), ND_OK);
    bad[0].last_query = 0;
    assert_int_equal(nd_cluster(it, 2, &o, record, &got), ND_EINVAL);
    nd_cluster_item dup[2] = {{0, 1, 4, 0, 0}, {0, 2, 4, 0, 0}};
    assert_int_equal(nd_cluster(dup, 2, NULL, record, &got), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "twice"));
    nd_cluster_item nan_item[1] = {{0, 1, 0, 0, NAN}};
    assert_int_equal(nd_cluster(nan_item, 1, NULL, record, &got), ND_EINVAL);
    /* The callback's nonzero value stops and is returned. */
    nd_cluster_item same[4] = {{0, 1, 0, 0, 0}, {0, 2, 1, 0, 0}, {0, 3, 2, 0, 0}, {0, 4, 3, 0, 0}};
    got.stop_after = 2;
    assert_int_equal(nd_cluster(same, 4, NULL, record, &got), 99);
    assert_int_equal(got.n, 2);
    free(got.r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_brute),
        cmocka_unit_test(test_top_m),
        cmocka_unit_test(test_tiers_by_query_rank),
        cmocka_unit_test(test_carry_over),
        cmocka_unit_test(test_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
