/*
 * test_fleet.c — nd_fleet over three `neardup serve --shard I` servers of a
 * 3-shard store against nd_client over one server of a plain store given
 * the same calls: equal decisions on a stream with planted near-duplicates
 * at every distance 0..k+2 (fingerprint-only), and on texts with near
 * copies around the resemblance threshold (a resemblance store); checks,
 * check-and-adds, queries, batches (checked, at another k, stored), gets,
 * deletes, stats. Then the fleet's refusals: servers out of order, a
 * plain server among shards, a key sent to the wrong shard (421).
 * (test_client.c checks nd_client against the embedded library.)
 * $NEARDUP: the CLI. Exit 77 when it was built without the server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../tmpdir.h"
#include "client_ref.h"
#include "serve_fixture.h"

enum { K = 3, S = 3 };

typedef struct pair {
    char dir[64];
    served shard[S], single;
    nd_fleet *fleet;
    nd_client *one;
    nd_client_results *a, *b;
} pair;

static void sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (system(cmd) != 0) fail_msg("failed: %s", cmd);
}

/* A 3-shard store and a plain one, each served (--no-sync). */
static void start(pair *p, int resemblance)
{
    const char *nd = getenv("NEARDUP");
    char path[128], arg[8];
    memset(p, 0, sizeof *p);
    tmpdir_make(p->dir);
    sh("'%s' shard init '%s/s.nds' --shards %d --k %d --tables 4 --docs 300000 %s >/dev/null",
       nd, p->dir, S, K, resemblance ? "" : "--fingerprint-only");
    sh("'%s' init '%s/one.nd' --k %d --tables 4 --docs 100000 %s >/dev/null", nd, p->dir, K,
       resemblance ? "" : "--fingerprint-only");
    const char *urls[S];
    snprintf(path, sizeof path, "%s/s.nds", p->dir);
    for (int i = 0; i < S; i++) {
        snprintf(arg, sizeof arg, "%d", i);
        const char *args[] = {"--no-sync", "--shard", arg, NULL};
        assert_int_equal(serve_start(&p->shard[i], path, args), 0);
        urls[i] = p->shard[i].url;
    }
    snprintf(path, sizeof path, "%s/one.nd", p->dir);
    const char *args[] = {"--no-sync", NULL};
    assert_int_equal(serve_start(&p->single, path, args), 0);
    assert_int_equal(nd_fleet_open(&p->fleet, urls, S, NULL), ND_OK);
    assert_int_equal(nd_client_open(&p->one, p->single.url, NULL), ND_OK);
    assert_int_equal(nd_client_results_new(&p->a), ND_OK);
    assert_int_equal(nd_client_results_new(&p->b), ND_OK);
}

static void stop(pair *p)
{
    nd_fleet_close(p->fleet);
    nd_client_close(p->one);
    nd_client_results_free(p->a);
    nd_client_results_free(p->b);
    for (int i = 0; i < S; i++) assert_int_equal(serve_stop(&p->shard[i]), 0);
    assert_int_equal(serve_stop(&p->single), 0);
    tmpdir_remove(p->dir);
}

/* The fleet's answer a equals the single server's b. */
static void same(const nd_client_results *a, const nd_client_results *b, const char *what,
                 const char *key)
{
    char why[256];
    if (nd_client_results_count(a) != nd_client_results_count(b))
        fail_msg("%s %s: %zu matches, one store %zu", what, key, nd_client_results_count(a),
                 nd_client_results_count(b));
    for (size_t i = 0; i < nd_client_results_count(b); i++) {
        ref_diff(why, sizeof why, nd_client_results_get(a, i), nd_client_results_get(b, i), 1);
        if (why[0]) fail_msg("%s %s: match %zu: %s", what, key, i, why);
    }
}

static void same_batch(pair *p, const nd_client_doc *docs, size_t n, unsigned k, unsigned flags,
                       const char *what)
{
    nd_batch_item x[64], y[64];
    assert_true(n <= 64);
    assert_int_equal(nd_fleet_batch(x, p->a, p->fleet, docs, n, k, flags), ND_OK);
    assert_int_equal(nd_client_batch(y, p->b, p->one, docs, n, k, flags), ND_OK);
    for (size_t i = 0; i < n; i++)
        if (x[i].dup != y[i].dup || x[i].dist != y[i].dist || x[i].match_fp != y[i].match_fp ||
            x[i].match_index != y[i].match_index ||
            (y[i].dup && strcmp(x[i].match_key, y[i].match_key) != 0) ||
            fabs(x[i].resemblance - y[i].resemblance) > 1e-9)
            fail_msg("%s: document %zu: fleet dup %d dist %u index %zu key %s res %g, "
                     "one store %d %u %zu %s %g", what, i, x[i].dup, x[i].dist, x[i].match_index,
                     x[i].dup ? x[i].match_key : "-", x[i].resemblance, y[i].dup, y[i].dist,
                     y[i].match_index, y[i].dup ? y[i].match_key : "-", y[i].resemblance);
}

static void test_fingerprint_stream(void **state)
{
    (void)state;
    pair p;
    start(&p, 0);
    enum { BASES = 14, NEAR = K + 3, N = BASES * (1 + NEAR) };
    static char keys[N + 2][48];
    uint64_t fps[N + 2], seed = 11, bases[BASES];
    size_t n = 0;
    for (int i = 0; i < BASES; i++) {
        bases[i] = ref_rand(&seed);
        snprintf(keys[n], sizeof keys[n], "base/%d", i);
        fps[n++] = bases[i];
    }
    for (int i = 0; i < BASES; i++)
        for (unsigned d = 0; d < NEAR; d++) {
            snprintf(keys[n], sizeof keys[n], "near/%d/%u/%05llx", i, d,
                     (unsigned long long)(ref_rand(&seed) & 0xfffff));
            fps[n++] = ref_flip(bases[i], d, &seed);
        }
    /* shuffle the near copies, keep half the bases after them */
    for (size_t i = N - 1; i > BASES; i--) {
        size_t j = BASES + ref_rand(&seed) % (i - BASES + 1);
        char t[48];
        uint64_t f = fps[i];
        memcpy(t, keys[i], 48), memcpy(keys[i], keys[j], 48), memcpy(keys[j], t, 48);
        fps[i] = fps[j], fps[j] = f;
    }
    memcpy(keys[n], keys[3], 48), fps[n++] = fps[3]; /* keys seen again */
    memcpy(keys[n], keys[20], 48), fps[n++] = fps[20];
    size_t order[N + 2], m = 0, news = 0;
    for (size_t i = 0; i < 7; i++) order[m++] = i;
    for (size_t i = BASES; i < N; i++) order[m++] = i;
    for (size_t i = 7; i < BASES; i++) order[m++] = i;
    order[m++] = N, order[m++] = N + 1;
    for (size_t t = 0; t < 70; t++) {
        size_t i = order[t];
        assert_int_equal(nd_fleet_check(p.a, p.fleet, fps[i], ND_CLIENT_DEFAULT_K), ND_OK);
        assert_int_equal(nd_client_check(p.b, p.one, fps[i], ND_CLIENT_DEFAULT_K), ND_OK);
        same(p.a, p.b, "check", keys[i]);
        assert_int_equal(nd_fleet_add_if_new(p.a, p.fleet, keys[i], strlen(keys[i]), fps[i], 0,
                                             1000 + t, K, 0), ND_OK);
        assert_int_equal(nd_client_add_if_new(p.b, p.one, keys[i], strlen(keys[i]), fps[i], 0,
                                              1000 + t, K, 0), ND_OK);
        same(p.a, p.b, "check-and-add", keys[i]);
        news += nd_client_results_count(p.a) == 0;
        if (t % 9 == 0) {
            uint64_t q = ref_flip(fps[i], 1, &seed);
            for (size_t limit = 0; limit <= 2; limit += 2) {
                assert_int_equal(nd_fleet_query(p.a, p.fleet, q, K + 2, limit), ND_OK);
                assert_int_equal(nd_client_query(p.b, p.one, q, K + 2, limit), ND_OK);
                same(p.a, p.b, "query", keys[i]);
            }
        }
    }
    assert_true(news > 0 && news < 70);
    /* batches of the rest: near copies of stored documents and of each other */
    nd_client_doc docs[16];
    for (size_t lo = 70; lo < m; lo += 12) {
        size_t c = 0;
        for (size_t t = lo; t < m && t < lo + 12; t++, c++) {
            size_t i = order[t];
            docs[c] = (nd_client_doc){keys[i], strlen(keys[i]), fps[i], NULL, 0, 0,
                                      (int64_t)(5000 + t), 0};
        }
        docs[c] = (nd_client_doc){"dup-in-batch", 12, docs[0].fp ^ 1, NULL, 0, 0, 6000, 0};
        docs[c + 1] = docs[0]; /* the same key twice in one batch */
        same_batch(&p, docs, c + 2, ND_CLIENT_DEFAULT_K, 0, "batch");
        same_batch(&p, docs, c + 2, K - 1, 0, "batch at k - 1");
        same_batch(&p, docs, c + 2, ND_CLIENT_DEFAULT_K, ND_BATCH_ADD, "batch add");
    }
    /* a batch document new on its own shard whose stored match lies in
     * another: the shard's check must not stop at the batch */
    char x[16], y[16];
    for (int i = 0; i < 100; i++) {
        snprintf(x, sizeof x, "a/%d", i);
        if (nd_fleet_place(x, strlen(x), S) == 0) break;
    }
    for (int i = 0; i < 100; i++) {
        snprintf(y, sizeof y, "b/%d", i);
        if (nd_fleet_place(y, strlen(y), S) == 1) break;
    }
    uint64_t a_fp = ref_rand(&seed), i_fp = a_fp ^ 0x1f, b_fp = i_fp ^ (3ull << 20),
             j_fp = a_fp ^ 7;
    assert_int_equal(nd_fleet_add(p.fleet, x, strlen(x), a_fp, 0, 1, 0), ND_OK);
    assert_int_equal(nd_client_add(p.one, x, strlen(x), a_fp, 0, 1, 0), ND_OK);
    assert_int_equal(nd_fleet_add(p.fleet, y, strlen(y), b_fp, 0, 1, 0), ND_OK);
    assert_int_equal(nd_client_add(p.one, y, strlen(y), b_fp, 0, 1, 0), ND_OK);
    nd_client_doc ij[2] = {{"i", 1, i_fp, NULL, 0, 0, 2, 0}, {"j", 1, j_fp, NULL, 0, 0, 3, 0}};
    same_batch(&p, ij, 2, ND_CLIENT_DEFAULT_K, 0, "shard-new batch document");
    /* a stored batch whose matches name earlier documents of the batch in
     * the same shard and in another: the owners' requests hold only their
     * own documents, so the indices are theirs to renumber */
    static char bk[12][16];
    nd_client_doc bd[12];
    int c = 0;
    for (int i = 0; c < 12 && i < 1000; i++) {
        snprintf(bk[c], sizeof bk[c], "x/%d", i);
        size_t s = nd_fleet_place(bk[c], strlen(bk[c]), S);
        if ((c < 8 && s == 2) || (c >= 8 && s != (c % 2 ? 2 : 0))) continue;
        uint64_t fp = c < 8 ? ref_rand(&seed) : ref_flip(bd[c % 2 ? 7 : 6].fp, 1, &seed);
        bd[c] = (nd_client_doc){bk[c], strlen(bk[c]), fp, NULL, 0, 0, 7000 + c, 0};
        c++;
    }
    assert_int_equal(c, 12);
    same_batch(&p, bd, 12, ND_CLIENT_DEFAULT_K, ND_BATCH_ADD, "batch add, indices");
    /* by key, and the figures */
    for (size_t t = 0; t < m; t += 5) {
        const char *k = keys[order[t]];
        int ra = nd_fleet_get(p.a, p.fleet, k, strlen(k));
        assert_int_equal(ra, nd_client_get(p.b, p.one, k, strlen(k)));
        same(p.a, p.b, "get", k);
    }
    for (int i = 0; i < BASES; i++) {
        assert_int_equal(nd_fleet_query(p.a, p.fleet, bases[i], K + 2, 0), ND_OK);
        assert_int_equal(nd_client_query(p.b, p.one, bases[i], K + 2, 0), ND_OK);
        same(p.a, p.b, "final query", "");
    }
    assert_int_equal(nd_fleet_delete(p.fleet, "base/0", 6), ND_OK);
    assert_int_equal(nd_client_delete(p.one, "base/0", 6), ND_OK);
    assert_int_equal(nd_fleet_delete(p.fleet, "base/0", 6), ND_ENOTFOUND);
    assert_int_equal(nd_fleet_get(p.a, p.fleet, "base/0", 6), ND_ENOTFOUND);
    nd_client_stats fs, os;
    assert_int_equal(nd_fleet_stats_get(&fs, p.fleet), ND_OK);
    assert_int_equal(nd_client_stats_get(&os, p.one), ND_OK);
    assert_int_equal(fs.documents, os.documents);
    assert_int_equal(fs.shards, S);
    assert_int_equal(fs.k, K);
    assert_int_equal(nd_fleet_healthy(p.fleet), ND_OK);
    assert_int_equal(nd_fleet_shards(p.fleet), S);
    stop(&p);
}

static void test_resemblance_texts(void **state)
{
    (void)state;
    pair p;
    start(&p, 1);
    static char text[4096], texts[24][2048];
    char key[32];
    /* 6 base texts, each with near copies of 0..27 words of 80 edited */
    for (unsigned i = 0; i < 60; i++) {
        unsigned base = i % 6, edits = (i / 6) * 3;
        size_t n = ref_text(text, sizeof text, base, 80, edits, i);
        snprintf(key, sizeof key, "page/%u", i);
        assert_int_equal(nd_fleet_check_text(p.a, p.fleet, text, n, ND_CLIENT_DEFAULT_K, 0), ND_OK);
        assert_int_equal(nd_client_check_text(p.b, p.one, text, n, ND_CLIENT_DEFAULT_K, 0), ND_OK);
        same(p.a, p.b, "check_text", key);
        assert_int_equal(nd_fleet_add_if_new_text(p.a, p.fleet, key, strlen(key), text, n, 0.5,
                                                  1000 + i, K, 0), ND_OK);
        assert_int_equal(nd_client_add_if_new_text(p.b, p.one, key, strlen(key), text, n, 0.5,
                                                   1000 + i, K, 0), ND_OK);
        same(p.a, p.b, "check-and-add text", key);
        if (i % 7 == 0) {
            assert_int_equal(nd_fleet_query_text(p.a, p.fleet, text, n, K, i % 2 ? 2 : 0, 0),
                             ND_OK);
            assert_int_equal(nd_client_query_text(p.b, p.one, text, n, K, i % 2 ? 2 : 0, 0),
                             ND_OK);
            same(p.a, p.b, "query_text", key);
        }
    }
    nd_client_doc docs[24];
    char keys[24][16];
    for (unsigned i = 0; i < 24; i++) {
        size_t n = ref_text(texts[i], sizeof texts[i], i % 8, 80, (i / 8) * 4 + 1, 77 + i);
        snprintf(keys[i], sizeof keys[i], "bt/%u", i);
        docs[i] = (nd_client_doc){keys[i], strlen(keys[i]), 0, texts[i], n, 0, 2000 + i, 0};
    }
    same_batch(&p, docs, 24, ND_CLIENT_DEFAULT_K, 0, "text batch");
    same_batch(&p, docs, 24, ND_CLIENT_DEFAULT_K, ND_BATCH_ADD, "text batch add");
    same_batch(&p, docs, 24, ND_CLIENT_DEFAULT_K, 0, "text batch again");
    nd_client_stats fs, os;
    assert_int_equal(nd_fleet_stats_get(&fs, p.fleet), ND_OK);
    assert_int_equal(nd_client_stats_get(&os, p.one), ND_OK);
    assert_int_equal(fs.documents, os.documents);
    assert_true(fs.min_resemblance > 0.8);
    stop(&p);
}

static void test_refusals(void **state)
{
    (void)state;
    pair p;
    nd_fleet *f = NULL;
    start(&p, 0);
    /* the placement rule (golden: `neardup shard which`, nd_shards_place) */
    assert_int_equal(nd_fleet_place("a", 1, 3), 1);
    assert_int_equal(nd_fleet_place("b/1", 3, 3), 2);
    assert_int_equal(nd_fleet_place("x y", 3, 3), 0);
    const char *swapped[S] = {p.shard[1].url, p.shard[0].url, p.shard[2].url};
    assert_int_equal(nd_fleet_open(&f, swapped, S, NULL), ND_EMISMATCH);
    assert_null(f);
    assert_non_null(strstr(nd_client_errmsg(), "not shard 0 of 3"));
    const char *mixed[2] = {p.shard[0].url, p.single.url};
    assert_int_equal(nd_fleet_open(&f, mixed, 2, NULL), ND_EMISMATCH);
    const char *two[2] = {p.shard[0].url, p.shard[1].url};
    assert_int_equal(nd_fleet_open(&f, two, 2, NULL), ND_EMISMATCH); /* shard 0 of 3 */
    assert_int_equal(nd_fleet_open(&f, NULL, 0, NULL), ND_EINVAL);
    /* a plain server alone is a fleet of one */
    assert_int_equal(nd_fleet_open(&f, (const char *[]){p.single.url}, 1, NULL), ND_OK);
    assert_int_equal(nd_fleet_add(f, "solo", 4, 5, 0, 0, 0), ND_OK);
    assert_int_equal(nd_fleet_get(p.a, f, "solo", 4), ND_OK);
    nd_fleet_close(f);
    /* a key written to a server that does not own it: 421 wrong_shard */
    nd_client *wrong = NULL;
    assert_int_equal(nd_client_open(&wrong, p.shard[0].url, NULL), ND_OK);
    assert_int_equal(nd_client_add(wrong, "a", 1, 5, 0, 0, 0), ND_EMISMATCH);
    assert_non_null(strstr(nd_client_errmsg(), "421 wrong_shard"));
    nd_client_close(wrong);
    /* a server of the fleet down: the fleet's checks fail, naming it */
    assert_int_equal(serve_stop(&p.shard[2]), 0);
    assert_int_equal(nd_fleet_check(p.a, p.fleet, 1, K), ND_CLIENT_ECONNECT);
    assert_non_null(strstr(nd_client_errmsg(), p.shard[2].url));
    assert_int_equal(nd_fleet_healthy(p.fleet), ND_CLIENT_ECONNECT);
    const char *urls[S] = {p.shard[0].url, p.shard[1].url, p.shard[2].url};
    assert_int_equal(nd_fleet_open(&f, urls, S, NULL), ND_CLIENT_ECONNECT);
    char path[128], arg[] = "2";
    snprintf(path, sizeof path, "%s/s.nds", p.dir);
    const char *args[] = {"--no-sync", "--shard", arg, NULL};
    assert_int_equal(serve_start(&p.shard[2], path, args), 0); /* for stop() */
    stop(&p);
}

int main(void)
{
    int rc = ref_server_probe("test_fleet"); /* 77: built without the server */
    if (rc != 0) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fingerprint_stream),
        cmocka_unit_test(test_resemblance_texts),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
