/*
 * test_client.c — libneardup-client against `neardup serve`: every call's
 * answer compared with the embedded library's on the same documents (a
 * second store, opened with nd_db_open, given the same writes), in a
 * fingerprint-only store and in a resemblance store; then the error
 * paths: no token and a wrong one, an unreachable server, a server that
 * never answers (timeout), a missing key, an oversize batch, a
 * fingerprint where a text is needed, sync on a --no-sync server, bad
 * arguments, and a keep-alive connection the server closed meanwhile.
 * $NEARDUP: the CLI. Exit 77 when it was built without the server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "../tmpdir.h"
#include "client_ref.h"
#include "serve_fixture.h"

typedef struct fixture {
    char dir[64];
    char path[128]; /* the served store */
    served srv;
    nd_db *ref;     /* the reference store */
    nd_client *c;
    nd_client_results *got;
    nd_results *want;
} fixture;

/* A served store and its reference: fingerprint-only or resemblance. */
static void start(fixture *f, int fingerprint_only, const char *const *args, const char *token)
{
    memset(f, 0, sizeof *f);
    tmpdir_make(f->dir);
    char ref[128];
    snprintf(f->path, sizeof f->path, "%s/srv.nd", f->dir);
    snprintf(ref, sizeof ref, "%s/ref.nd", f->dir);
    nd_db *db = NULL;
    assert_int_equal(ref_create(&db, f->path, fingerprint_only), ND_OK);
    assert_int_equal(nd_db_close(db), ND_OK);
    assert_int_equal(ref_create(&f->ref, ref, fingerprint_only), ND_OK);
    assert_int_equal(serve_start(&f->srv, f->path, args), 0);
    nd_client_options o = ND_CLIENT_OPTIONS_INIT;
    o.token = token;
    assert_int_equal(nd_client_open(&f->c, f->srv.url, &o), ND_OK);
    assert_int_equal(nd_client_results_new(&f->got), ND_OK);
    assert_int_equal(nd_results_new(&f->want), ND_OK);
}

static void stop(fixture *f)
{
    nd_client_close(f->c);
    nd_client_results_free(f->got);
    nd_results_free(f->want);
    assert_int_equal(serve_stop(&f->srv), 0);
    assert_int_equal(nd_db_close(f->ref), ND_OK);
    tmpdir_remove(f->dir);
}

/* The client's results equal the library's, in order. */
static void same_list(const nd_client_results *got, const nd_results *want, int with_meta,
                      const char *what)
{
    char why[256];
    if (nd_client_results_count(got) != nd_results_count(want))
        fail_msg("%s: %zu matches, want %zu", what, nd_client_results_count(got),
                 nd_results_count(want));
    for (size_t i = 0; i < nd_results_count(want); i++) {
        ref_diff(why, sizeof why, nd_client_results_get(got, i), nd_results_get(want, i),
                 with_meta);
        if (why[0]) fail_msg("%s: match %zu: %s", what, i, why);
    }
}

static void same_batch(const nd_batch_item *got, const nd_batch_item *want, size_t n,
                       const char *what)
{
    for (size_t i = 0; i < n; i++) {
        const nd_batch_item *g = &got[i], *w = &want[i];
        if (g->dup != w->dup || g->dist != w->dist || g->match_fp != w->match_fp ||
            g->match_index != w->match_index || g->match_key_len != w->match_key_len ||
            (w->dup && memcmp(g->match_key, w->match_key, w->match_key_len) != 0) ||
            fabs(g->resemblance - w->resemblance) > 1e-9)
            fail_msg("%s: document %zu: dup %d dist %u index %zu key %s, want %d %u %zu %s", what,
                     i, g->dup, g->dist, g->match_index, g->dup ? g->match_key : "-", w->dup,
                     w->dist, w->match_index, w->dup ? w->match_key : "-");
    }
}

/* ---- a fingerprint-only store */

static void test_fingerprint_calls(void **state)
{
    (void)state;
    fixture f;
    start(&f, 1, NULL, NULL);
    uint64_t seed = 42, fps[400];
    char key[32];
    nd_query_options first = ND_QUERY_OPTIONS_INIT;
    first.limit = 1;
    /* a stream with near-duplicates of earlier documents at 0..5 bits */
    for (unsigned i = 0; i < 400; i++) {
        fps[i] = i < 20 || i % 3 == 0 ? ref_rand(&seed)
                                      : ref_flip(fps[ref_rand(&seed) % i], i % 6, &seed);
        snprintf(key, sizeof key, "doc/%u", i % 370); /* some keys come back */
        int64_t t = 1700000000 + i;
        if (i % 11 == 0) { /* a plain add */
            assert_int_equal(nd_client_add(f.c, key, strlen(key), fps[i], i * 0.5, t, 0), ND_OK);
            assert_int_equal(nd_db_add(f.ref, key, strlen(key), fps[i], i * 0.5, t), ND_OK);
            continue;
        }
        unsigned k = i % 7 == 0 ? ND_CLIENT_DEFAULT_K : 3;
        assert_int_equal(nd_client_check(f.got, f.c, fps[i], k), ND_OK);
        assert_int_equal(nd_db_query(f.want, f.ref, fps[i], 3, &first), ND_OK);
        same_list(f.got, f.want, 1, "check");
        assert_int_equal(nd_client_add_if_new(f.got, f.c, key, strlen(key), fps[i], i * 0.5, t,
                                              k, i % 5 == 0 ? ND_CLIENT_SYNC : 0),
                         ND_OK);
        assert_int_equal(nd_db_add_if_new(f.want, f.ref, key, strlen(key), fps[i], i * 0.5, t, 3),
                         ND_OK);
        same_list(f.got, f.want, 1, "add_if_new");
    }
    /* queries, closest first, with and without a limit */
    for (unsigned i = 0; i < 400; i += 13) {
        for (unsigned k = 0; k <= 6; k += 3) {
            nd_query_options qo = ND_QUERY_OPTIONS_INIT;
            qo.limit = i % 2 ? 2 : 0;
            assert_int_equal(nd_client_query(f.got, f.c, fps[i], k, qo.limit), ND_OK);
            assert_int_equal(nd_db_query(f.want, f.ref, fps[i], k, &qo), ND_OK);
            same_list(f.got, f.want, 1, "query");
        }
    }
    /* get, delete */
    assert_int_equal(nd_client_get(f.got, f.c, "doc/7", 5), ND_OK);
    assert_int_equal(nd_db_get(f.want, f.ref, "doc/7", 5), ND_OK);
    same_list(f.got, f.want, 1, "get");
    assert_int_equal(nd_client_delete(f.c, "doc/7", 5), ND_OK);
    assert_int_equal(nd_db_delete(f.ref, "doc/7", 5), ND_OK);
    assert_int_equal(nd_client_get(f.got, f.c, "doc/7", 5), ND_ENOTFOUND);
    assert_int_equal(nd_client_results_count(f.got), 0);
    assert_non_null(strstr(nd_client_errmsg(), "404 not_found"));
    assert_int_equal(nd_client_delete(f.c, "doc/7", 5), ND_ENOTFOUND);
    /* a key that needs percent-encoding */
    const char *odd = "a b/c?d%e#f";
    assert_int_equal(nd_client_add(f.c, odd, strlen(odd), 99, 0, 5, 0), ND_OK);
    assert_int_equal(nd_db_add(f.ref, odd, strlen(odd), 99, 0, 5), ND_OK);
    assert_int_equal(nd_client_get(f.got, f.c, odd, strlen(odd)), ND_OK);
    assert_string_equal(nd_client_results_get(f.got, 0)->key, odd);
    /* batches: against the store and within themselves, then stored */
    enum { N = 60 };
    nd_client_doc cd[N];
    nd_doc ld[N];
    char keys[N][16];
    nd_batch_item gi[N], wi[N];
    nd_client_results *gk;
    nd_results *wk;
    assert_int_equal(nd_client_results_new(&gk), ND_OK);
    assert_int_equal(nd_results_new(&wk), ND_OK);
    for (unsigned i = 0; i < N; i++) {
        uint64_t fp = i % 4 == 0 ? ref_flip(fps[ref_rand(&seed) % 400], i % 5, &seed)
                    : i % 4 == 1 && i > 4 ? ref_flip(cd[i - 4].fp, i % 4, &seed)
                    : ref_rand(&seed);
        snprintf(keys[i], sizeof keys[i], "b/%u", i);
        cd[i] = (nd_client_doc){keys[i], strlen(keys[i]), fp, NULL, 0, i, 1800000000 + i, 0};
        ld[i] = (nd_doc){keys[i], strlen(keys[i]), fp, i, 1800000000 + i, NULL};
    }
    for (unsigned add = 0; add <= 1; add++) {
        assert_int_equal(nd_client_batch(gi, gk, f.c, cd, N, 3, add ? ND_BATCH_ADD : 0), ND_OK);
        assert_int_equal(nd_db_batch(wi, wk, f.ref, ld, N, 3, add ? ND_BATCH_ADD : 0), ND_OK);
        same_batch(gi, wi, N, add ? "batch add" : "batch");
    }
    assert_int_equal(nd_client_batch(gi, gk, f.c, cd, 0, 3, 0), ND_OK); /* empty */
    nd_client_results_free(gk);
    nd_results_free(wk);
    /* stats */
    nd_client_stats st;
    uint64_t docs, fpn;
    assert_int_equal(nd_client_stats_get(&st, f.c), ND_OK);
    assert_int_equal(nd_db_counts(&docs, &fpn, f.ref), ND_OK);
    assert_int_equal(st.documents, docs);
    assert_int_equal(st.fingerprints, fpn);
    assert_int_equal(st.k, 3);
    assert_true(st.durable);
    assert_true(st.min_resemblance == 0);
    char *json = NULL;
    assert_int_equal(nd_client_stats_json(&json, f.c), ND_OK);
    assert_non_null(strstr(json, "\"documents\":"));
    free(json);
    assert_int_equal(nd_client_healthy(f.c), ND_OK);
    assert_string_equal(nd_client_errmsg(), "");
    stop(&f);
}

/* ---- a resemblance store: texts signed by the server */

static void test_text_calls(void **state)
{
    (void)state;
    fixture f;
    start(&f, 0, NULL, NULL);
    static char text[4096];
    char key[32];
    nd_signature sig;
    nd_query_options first = ND_QUERY_OPTIONS_INIT;
    first.limit = 1;
    /* 12 base texts, each followed by copies with 0..24 words of 80 edited:
     * around the resemblance threshold */
    for (unsigned i = 0; i < 120; i++) {
        unsigned base = i / 10, edits = i % 10 == 0 ? 0 : (i % 10) * 3 - 3;
        size_t n = ref_text(text, sizeof text, base, 80, edits, i);
        snprintf(key, sizeof key, "page/%u", i);
        assert_int_equal(nd_db_sign(&sig, f.ref, text, n, 0), ND_OK);
        nd_doc d = {key, strlen(key), sig.fp, 0.25 * i, 1700000000 + i, &sig.sketch};
        assert_int_equal(nd_client_check_text(f.got, f.c, text, n, ND_CLIENT_DEFAULT_K, 0), ND_OK);
        assert_int_equal(nd_db_query_doc(f.want, f.ref, &d, 3, &first), ND_OK);
        same_list(f.got, f.want, 1, "check_text");
        if (i % 9 == 4) {
            assert_int_equal(nd_client_add_text(f.c, key, strlen(key), text, n, d.score, d.time, 0),
                             ND_OK);
            assert_int_equal(nd_db_add_many(f.ref, &d, 1), ND_OK);
            continue;
        }
        assert_int_equal(nd_client_add_if_new_text(f.got, f.c, key, strlen(key), text, n, d.score,
                                                   d.time, 3, 0),
                         ND_OK);
        assert_int_equal(nd_db_add_doc_if_new(f.want, f.ref, &d, 3), ND_OK);
        same_list(f.got, f.want, 1, "add_if_new_text");
    }
    for (unsigned base = 0; base < 12; base += 3) {
        size_t n = ref_text(text, sizeof text, base, 80, 1, 999);
        assert_int_equal(nd_db_sign(&sig, f.ref, text, n, 0), ND_OK);
        nd_doc d = {NULL, 0, sig.fp, 0, 0, &sig.sketch};
        nd_query_options qo = ND_QUERY_OPTIONS_INIT;
        qo.limit = base % 2 ? 3 : 0;
        assert_int_equal(nd_client_query_text(f.got, f.c, text, n, 3, qo.limit, 0), ND_OK);
        assert_int_equal(nd_db_query_doc(f.want, f.ref, &d, 3, &qo), ND_OK);
        same_list(f.got, f.want, 1, "query_text");
        assert_true(nd_client_results_count(f.got) > 0);
    }
    /* HTML: the server extracts the text as the library does */
    const char *html = "<html><body><p>Rain is expected over the hills.</p></body></html>";
    assert_int_equal(nd_db_sign(&sig, f.ref, html, strlen(html), ND_FP_HTML), ND_OK);
    nd_doc hd = {"h", 1, sig.fp, 0, 7, &sig.sketch};
    assert_int_equal(nd_client_add_if_new_text(f.got, f.c, "h", 1, html, strlen(html), 0, 7, 3,
                                               ND_CLIENT_HTML),
                     ND_OK);
    assert_int_equal(nd_db_add_doc_if_new(f.want, f.ref, &hd, 3), ND_OK);
    assert_int_equal(nd_client_get(f.got, f.c, "h", 1), ND_OK);
    assert_int_equal(nd_client_results_get(f.got, 0)->fp, sig.fp);
    /* a batch of texts, checked then stored */
    enum { N = 30 };
    static char texts[N][2048];
    char keys[N][16];
    nd_client_doc cd[N];
    nd_doc ld[N];
    static nd_signature sigs[N];
    nd_batch_item gi[N], wi[N];
    nd_client_results *gk;
    nd_results *wk;
    assert_int_equal(nd_client_results_new(&gk), ND_OK);
    assert_int_equal(nd_results_new(&wk), ND_OK);
    for (unsigned i = 0; i < N; i++) {
        size_t n = ref_text(texts[i], sizeof texts[i], 20 + i / 3 + (i % 5 == 0 ? 100 : 0), 60,
                            i % 3 * 4, 500 + i);
        if (i % 7 == 0) n = ref_text(texts[i], sizeof texts[i], i % 12, 80, 2, 3000 + i);
        snprintf(keys[i], sizeof keys[i], "bt/%u", i);
        assert_int_equal(nd_db_sign(&sigs[i], f.ref, texts[i], n, 0), ND_OK);
        cd[i] = (nd_client_doc){keys[i], strlen(keys[i]), 0, texts[i], n, 1, 1900000000 + i, 0};
        ld[i] = (nd_doc){keys[i], strlen(keys[i]), sigs[i].fp, 1, 1900000000 + i, &sigs[i].sketch};
    }
    for (unsigned add = 0; add <= 1; add++) {
        assert_int_equal(nd_client_batch(gi, gk, f.c, cd, N, 3, add ? ND_BATCH_ADD : 0), ND_OK);
        assert_int_equal(nd_db_batch(wi, wk, f.ref, ld, N, 3, add ? ND_BATCH_ADD : 0), ND_OK);
        same_batch(gi, wi, N, add ? "text batch add" : "text batch");
    }
    nd_client_results_free(gk);
    nd_results_free(wk);
    nd_client_stats st;
    uint64_t docs;
    assert_int_equal(nd_client_stats_get(&st, f.c), ND_OK);
    assert_int_equal(nd_db_counts(&docs, NULL, f.ref), ND_OK);
    assert_int_equal(st.documents, docs);
    assert_true(st.min_resemblance > 0.8);
    /* a bare fingerprint is refused there */
    assert_int_equal(nd_client_add_if_new(f.got, f.c, "x", 1, 5, 0, 0, 3, 0), ND_EINVAL);
    assert_non_null(strstr(nd_client_errmsg(), "text_required"));
    stop(&f);
}

/* ---- errors */

/* A loopback port nothing listens on (listening: 1 listens, never accepts). */
static int loopback_port(int listening, int *fd_out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    if (listening) {
        assert_int_equal(listen(fd, 8), 0);
        *fd_out = fd;
    } else {
        close(fd);
    }
    return ntohs(a.sin_port);
}

static void test_errors(void **state)
{
    (void)state;
    fixture f;
    char tok[160], url[64];
    nd_client *c = NULL;
    nd_client_options o = ND_CLIENT_OPTIONS_INIT;
    tmpdir_make(f.dir);
    snprintf(tok, sizeof tok, "%s/token", f.dir);
    FILE *t = fopen(tok, "w");
    fputs("s3cret-token-0123456789\n", t);
    fclose(t);
    const char *args[] = {"--token-file", tok, "--max-batch", "4", "--no-sync",
                          "--idle-timeout", "1", NULL};
    char dir[64];
    memcpy(dir, f.dir, sizeof dir);
    start(&f, 1, args, NULL); /* (a new directory; the token stays in dir) */
    /* reads need no token; writes do */
    assert_int_equal(nd_client_check(f.got, f.c, 1, 3), ND_OK);
    assert_int_equal(nd_client_add(f.c, "k", 1, 1, 0, 0, 0), ND_CLIENT_EAUTH);
    assert_non_null(strstr(nd_client_errmsg(), "401"));
    o.token = "wrong-token-wrong-token";
    assert_int_equal(nd_client_open(&c, f.srv.url, &o), ND_OK);
    assert_int_equal(nd_client_add(c, "k", 1, 1, 0, 0, 0), ND_CLIENT_EAUTH);
    assert_non_null(strstr(nd_client_errmsg(), "403 forbidden"));
    nd_client_close(c);
    o.token = NULL;
    o.token_file = tok;
    assert_int_equal(nd_client_open(&c, f.srv.url, &o), ND_OK);
    assert_int_equal(nd_client_add(c, "k", 1, 1, 0, 0, 0), ND_OK);
    assert_int_equal(nd_client_delete(c, "missing", 7), ND_ENOTFOUND);
    /* an oversize batch (--max-batch 4); sync on a --no-sync server is
     * honoured (the group ends with nd_db_sync) */
    nd_client_doc docs[5];
    nd_batch_item items[5];
    for (int i = 0; i < 5; i++) docs[i] = (nd_client_doc){"b", 1, (uint64_t)i, NULL, 0, 0, 0, 0};
    assert_int_equal(nd_client_batch(items, f.got, c, docs, 5, 3, 0), ND_ELIMIT);
    assert_non_null(strstr(nd_client_errmsg(), "413 too_many_documents"));
    assert_int_equal(nd_client_batch(items, f.got, c, docs, 4, 3, 0), ND_OK);
    assert_int_equal(nd_client_add(c, "ks", 2, 5, 0, 0, ND_CLIENT_SYNC), ND_OK);
    assert_int_equal(nd_client_get(f.got, c, "ks", 2), ND_OK);
    /* the server closed the idle connection (--idle-timeout 1): the next
     * call reconnects */
    usleep(1500 * 1000);
    assert_int_equal(nd_client_add(c, "k2", 2, 2, 0, 0, 0), ND_OK);
    assert_int_equal(nd_client_get(f.got, c, "k2", 2), ND_OK);
    nd_client_close(c);
    /* bad arguments, refused before any request */
    assert_int_equal(nd_client_check(f.got, f.c, 1, 17), ND_EINVAL);
    assert_non_null(strstr(nd_client_errmsg(), "k = 17"));
    assert_int_equal(nd_client_add_if_new(f.got, f.c, "\xff\xfe", 2, 1, 0, 0, 3, 0), ND_EINVAL);
    assert_non_null(strstr(nd_client_errmsg(), "UTF-8"));
    assert_int_equal(nd_client_get(f.got, f.c, "", 0), ND_EINVAL);
    assert_int_equal(nd_client_batch(items, f.got, f.c, docs, 1, 3, 0x4), ND_EINVAL);
    stop(&f);
    nd_client_results *res;
    assert_int_equal(nd_client_results_new(&res), ND_OK);
    /* opening */
    assert_int_equal(nd_client_open(&c, "https://example.org", NULL), ND_EINVAL);
    assert_null(c);
    assert_int_equal(nd_client_open(&c, "127.0.0.1:7340", NULL), ND_EINVAL);
    o.token_file = "/nonexistent/token";
    assert_int_equal(nd_client_open(&c, "http://127.0.0.1:1", &o), ND_ENOTFOUND);
    o = (nd_client_options)ND_CLIENT_OPTIONS_INIT;
    o.version = 99;
    assert_int_equal(nd_client_open(&c, "http://127.0.0.1:1", &o), ND_EINVAL);
    /* nothing listens: cannot connect */
    snprintf(url, sizeof url, "http://127.0.0.1:%d", loopback_port(0, NULL));
    assert_int_equal(nd_client_open(&c, url, NULL), ND_OK);
    assert_int_equal(nd_client_healthy(c), ND_CLIENT_ECONNECT);
    assert_int_equal(nd_client_check(res, c, 1, 3), ND_CLIENT_ECONNECT);
    assert_non_null(strstr(nd_client_errmsg(), url));
    nd_client_close(c);
    /* a server that accepts and never answers: the timeout */
    int lfd;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", loopback_port(1, &lfd));
    o = (nd_client_options)ND_CLIENT_OPTIONS_INIT;
    o.timeout_ms = 300;
    assert_int_equal(nd_client_open(&c, url, &o), ND_OK);
    assert_int_equal(nd_client_check(res, c, 1, 3), ND_CLIENT_ETIMEOUT);
    assert_non_null(strstr(nd_client_errmsg(), "/v1/check"));
    nd_client_close(c);
    close(lfd);
    assert_string_equal(nd_client_strerror(ND_CLIENT_ETIMEOUT), "timed out");
    assert_string_equal(nd_client_strerror(ND_ENOTFOUND), "not found");
    nd_client_close(NULL);
    nd_client_results_free(NULL);
    nd_client_results_free(res);
    tmpdir_remove(dir);
}

int main(void)
{
    /* Skip (77) when the CLI was built without the server. */
    int rc = ref_server_probe("test_client");
    if (rc != 0) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fingerprint_calls),
        cmocka_unit_test(test_text_calls),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
