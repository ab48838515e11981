/*
 * test_dedupe.c — the corpus dedupe (nd_dedupe_*): its pairs on a tiny
 * corpus of texts equal those of a brute-force check of every pair with
 * exact shingle resemblance and containment under the same thresholds;
 * a memory budget that partitions every sort gives the same pairs,
 * clusters and roles in the same order; the clusters keep the
 * representative rule; the documents come back as added; bad options and
 * misuse give ND_EINVAL (a missing scratch directory ND_EIO); a callback's
 * nonzero return stops a walk with ND_DEDUPE_STOPPED whatever its value;
 * signatures computed apart give the same results.
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

#include <neardup.h>

#include "oracle.h"
#include "tmpdir.h"

/* ---- a tiny corpus ---------------------------------------------------------- */

enum { MAX_DOCS = 64, TEXT_CAP = 4096 };

typedef struct corpus {
    char text[MAX_DOCS][TEXT_CAP];
    char key[MAX_DOCS][16];
    double score[MAX_DOCS];
    size_t n;
} corpus;

/* n random words from a vocabulary of 500 into out (appended). */
static void words(char *out, oracle_rng *r, size_t n)
{
    size_t len = strlen(out);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, TEXT_CAP - len, "%sw%u", len ? " " : "",
                                (unsigned)(oracle_next(r) % 500));
}

/* text with its word number `at` replaced. */
static void substitute(char *out, const char *text, size_t at, const char *word)
{
    size_t w = 0;
    out[0] = '\0';
    for (const char *p = text; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        size_t o = strlen(out);
        snprintf(out + o, TEXT_CAP - o, "%s%.*s", o ? " " : "", (int)(w == at ? strlen(word) : len),
                 w == at ? word : p);
        w++;
        p += len + (e != NULL);
    }
}

static void add_doc(corpus *c, const char *text)
{
    assert_true(c->n < MAX_DOCS);
    snprintf(c->text[c->n], TEXT_CAP, "%s", text);
    snprintf(c->key[c->n], sizeof c->key[0], "d%02zu", c->n);
    c->score[c->n] = (double)((c->n * 7) % 11);
    c->n++;
}

/* Originals, copies with one or two words changed (resemblance about 0.9
 * and above), exact copies, pages with half as much again appended
 * (contained, resemblance about 0.67), and unrelated texts. */
static void make_corpus(corpus *c)
{
    oracle_rng r = {35};
    char t[TEXT_CAP], u[TEXT_CAP];
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 10; i++) {
        t[0] = '\0';
        words(t, &r, 120 + 10 * (size_t)i);
        add_doc(c, t);
        if (i % 2 == 0) {
            substitute(u, t, 40, "changed");
            add_doc(c, u);
        }
        if (i % 3 == 0) add_doc(c, t);
        if (i == 4 || i == 7) {
            strcpy(u, t);
            words(u, &r, 60 + 5 * (size_t)i);
            add_doc(c, u);
        }
        if (i == 8) {
            substitute(u, t, 10, "one");
            substitute(t, u, 90, "two");
            add_doc(c, t);
        }
    }
}

/* ---- what the walks saw --------------------------------------------------- */

typedef struct seen_pair {
    uint64_t a, b;
    unsigned dist;
    double res, cont;
    int by_cont;
    char ka[16], kb[16];
} seen_pair;

typedef struct seen {
    seen_pair p[16384];
    nd_dedupe_member m[8192];
    char mkey[8192][16];
    size_t np, nm, calls, stop_at;
    int stop_value;
} seen;

static int on_pair(const nd_dedupe_pair *p, void *payload)
{
    seen *s = payload;
    assert_true(p->a < p->b);
    assert_true(s->np < sizeof s->p / sizeof s->p[0]);
    seen_pair *q = &s->p[s->np++];
    *q = (seen_pair){p->a, p->b, p->dist, p->resemblance, p->containment, p->by_containment, "", ""};
    assert_true(p->key_a_len < sizeof q->ka && p->key_b_len < sizeof q->kb);
    memcpy(q->ka, p->key_a, p->key_a_len + 1); /* a NUL follows */
    memcpy(q->kb, p->key_b, p->key_b_len + 1);
    s->calls++;
    return s->stop_at && s->calls == s->stop_at ? s->stop_value : 0;
}

static int on_member(const nd_dedupe_member *m, void *payload)
{
    seen *s = payload;
    assert_true(s->nm < sizeof s->m / sizeof s->m[0]);
    assert_true(m->key_len < sizeof s->mkey[0]);
    memcpy(s->mkey[s->nm], m->key, m->key_len + 1);
    s->m[s->nm] = *m;
    s->m[s->nm].key = NULL;
    s->nm++;
    s->calls++;
    return s->stop_at && s->calls == s->stop_at ? s->stop_value : 0;
}

/* Field by field: structs copied by assignment may differ in padding. */
static void pair_equal(const seen_pair *a, const seen_pair *b)
{
    assert_int_equal(a->a, b->a);
    assert_int_equal(a->b, b->b);
    assert_int_equal(a->dist, b->dist);
    assert_true(a->res == b->res && a->cont == b->cont);
    assert_int_equal(a->by_cont, b->by_cont);
    assert_string_equal(a->ka, b->ka);
    assert_string_equal(a->kb, b->kb);
}

static void member_equal(const nd_dedupe_member *a, const nd_dedupe_member *b)
{
    assert_int_equal(a->cluster, b->cluster);
    assert_int_equal(a->role, b->role);
    assert_int_equal(a->doc, b->doc);
    assert_int_equal(a->kept, b->kept);
    assert_int_equal(a->dist, b->dist);
}

static void seen_equal(const seen *a, const seen *b)
{
    assert_int_equal(a->np, b->np);
    assert_int_equal(a->nm, b->nm);
    for (size_t i = 0; i < a->np; i++) pair_equal(&a->p[i], &b->p[i]);
    for (size_t i = 0; i < a->nm; i++) {
        member_equal(&a->m[i], &b->m[i]);
        assert_string_equal(a->mkey[i], b->mkey[i]);
    }
}

static char dir[64];

static nd_dedupe *new_dedupe(const nd_dedupe_options *base)
{
    nd_dedupe_options o = ND_DEDUPE_OPTIONS_INIT;
    if (base) o = *base;
    o.scratch_dir = dir;
    nd_dedupe *d = NULL;
    assert_int_equal(nd_dedupe_new(&d, &o), ND_OK);
    assert_non_null(d);
    return d;
}

static nd_dedupe *load_texts(const corpus *c, const nd_dedupe_options *o)
{
    nd_dedupe *d = new_dedupe(o);
    for (size_t i = 0; i < c->n; i++)
        assert_int_equal(nd_dedupe_add_text(d, c->key[i], strlen(c->key[i]), c->text[i],
                                            strlen(c->text[i]), c->score[i]),
                         ND_OK);
    return d;
}

static int setup(void **state)
{
    (void)state;
    tmpdir_make(dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tmpdir_remove(dir);
    return 0;
}

/* ---- pairs against brute force -------------------------------------------- */

static int pair_listed(const seen *s, size_t a, size_t b)
{
    for (size_t i = 0; i < s->np; i++)
        if (s->p[i].a == a && s->p[i].b == b) return 1;
    return 0;
}

/* Every pair i < j with fingerprints within k and exact resemblance >= R
 * or (C > 0) exact containment >= C must be reported, and nothing else. */
static void check_brute_force(unsigned k, double min_res, double min_cont)
{
    static corpus c;
    static seen s;
    make_corpus(&c);
    memset(&s, 0, sizeof s);
    nd_dedupe_options o = ND_DEDUPE_OPTIONS_INIT;
    o.k = k;
    o.has_k = 1;
    o.min_resemblance = min_res;
    o.min_containment = min_cont;
    nd_dedupe *d = load_texts(&c, &o);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &s), ND_OK);
    uint64_t *set[MAX_DOCS];
    size_t len[MAX_DOCS];
    uint64_t fp[MAX_DOCS];
    for (size_t i = 0; i < c.n; i++) {
        assert_int_equal(nd_shingle_set(&set[i], &len[i], c.text[i], strlen(c.text[i]), 3), ND_OK);
        assert_int_equal(nd_fingerprint(&fp[i], c.text[i], strlen(c.text[i]), NULL), ND_OK);
    }
    size_t want = 0, by_cont = 0;
    for (size_t i = 0; i < c.n; i++) {
        for (size_t j = i + 1; j < c.n; j++) {
            double jac = nd_resemblance(set[i], len[i], set[j], len[j]);
            double cont = len[i] <= len[j] ? nd_containment(set[i], len[i], set[j], len[j])
                                           : nd_containment(set[j], len[j], set[i], len[i]);
            int near = nd_hamming(fp[i], fp[j]) <= k &&
                       (jac >= min_res || (min_cont > 0 && cont >= min_cont));
            assert_int_equal(pair_listed(&s, i, j), near);
            want += (size_t)near;
            by_cont += near && jac < min_res;
        }
    }
    assert_int_equal(s.np, want);
    for (size_t x = 0; x < s.np; x++) { /* keys, distances and estimates */
        const seen_pair *p = &s.p[x];
        assert_string_equal(p->ka, c.key[p->a]);
        assert_string_equal(p->kb, c.key[p->b]);
        assert_int_equal(p->dist, nd_hamming(fp[p->a], fp[p->b]));
        double jac = nd_resemblance(set[p->a], len[p->a], set[p->b], len[p->b]);
        assert_true(fabs(p->res - jac) < 0.15);
        assert_true(min_cont > 0 ? p->cont >= 0 && p->cont <= 1 : p->cont == -1);
    }
    nd_dedupe_stats st;
    assert_int_equal(nd_dedupe_stats_get(&st, d), ND_OK);
    assert_int_equal(st.documents, c.n);
    assert_int_equal(st.texts, c.n);
    assert_int_equal(st.pairs, want);
    assert_int_equal(st.by_containment, by_cont);
    assert_int_equal(st.k, k);
    for (size_t i = 0; i < c.n; i++) free(set[i]);
    nd_dedupe_free(d);
}

static void test_pairs_brute_force(void **state)
{
    (void)state;
    check_brute_force(64, 0.8, 0);   /* banding finds every pair */
    check_brute_force(5, 0.8, 0);    /* the distance cuts */
    check_brute_force(64, 0.85, 0.8); /* the contained pages too */
}

/* The corpus has pairs of every kind, so the brute-force check is not
 * vacuous. */
static void test_corpus_has_pairs(void **state)
{
    (void)state;
    static corpus c;
    static seen s;
    make_corpus(&c);
    memset(&s, 0, sizeof s);
    nd_dedupe_options o = ND_DEDUPE_OPTIONS_INIT;
    o.min_containment = 0.8;
    nd_dedupe *d = load_texts(&c, &o);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &s), ND_OK);
    size_t exact = 0, edited = 0, contained = 0, far = 0;
    for (size_t i = 0; i < s.np; i++) {
        exact += s.p[i].res == 1.0;
        edited += s.p[i].res < 1.0 && !s.p[i].by_cont;
        contained += (size_t)s.p[i].by_cont;
        far += s.p[i].dist > 8;
    }
    assert_true(exact >= 4 && edited >= 5 && contained >= 2 && far >= 1);
    nd_dedupe_free(d);
}

/* ---- the memory budget ----------------------------------------------------- */

/* Random fingerprints with planted copies 0..5 bits from earlier ones,
 * and some texts. */
static nd_dedupe *load_mixed(const nd_dedupe_options *o, int texts)
{
    static corpus c;
    oracle_rng r = {7};
    uint64_t fps[3000];
    char key[32];
    nd_dedupe *d = new_dedupe(o);
    for (size_t i = 0; i < 3000; i++) {
        fps[i] = i > 10 && oracle_next(&r) % 2 ? oracle_flip(&r, fps[oracle_next(&r) % i],
                                                              (unsigned)(oracle_next(&r) % 6))
                                               : oracle_next(&r);
        snprintf(key, sizeof key, "p%zu", i);
        assert_int_equal(nd_dedupe_add_fp(d, key, strlen(key), fps[i], (double)(i % 13)), ND_OK);
    }
    if (texts) {
        make_corpus(&c);
        for (size_t i = 0; i < c.n; i++)
            assert_int_equal(nd_dedupe_add_text(d, c.key[i], strlen(c.key[i]), c.text[i],
                                                strlen(c.text[i]), c.score[i]),
                             ND_OK);
    }
    return d;
}

static void walk_all(seen *s, const nd_dedupe_options *o, int texts)
{
    memset(s, 0, sizeof *s);
    nd_dedupe *d = load_mixed(o, texts);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, s), ND_OK);
    nd_dedupe_free(d);
    d = load_mixed(o, texts);
    assert_int_equal(nd_dedupe_clusters(d, on_member, s), ND_OK);
    assert_int_equal(nd_dedupe_roles(d, on_member, s), ND_OK);
    nd_dedupe_free(d);
}

static void test_memory_partitions(void **state)
{
    (void)state;
    static seen a, b;
    nd_dedupe_options o = ND_DEDUPE_OPTIONS_INIT;
    for (int texts = 0; texts <= 1; texts++) {
        for (int keep = 0; keep <= 1; keep++) {
            o.memory = 0;
            o.k = texts ? 24 : 5;
            o.has_k = 1;
            o.keep = keep ? ND_DEDUPE_KEEP_SCORE : ND_DEDUPE_KEEP_FIRST;
            walk_all(&a, &o, texts);
            o.memory = ND_DEDUPE_MIN_MEMORY; /* hundreds of partitions */
            walk_all(&b, &o, texts);
            assert_true(a.np > 500);
            seen_equal(&a, &b);
        }
    }
}

/* ---- progress ------------------------------------------------------------ */

/* What the progress callback saw: the phases in order, and per call that
 * done never went back within a phase and each phase began at 0. */
typedef struct progress_log {
    char phases[128];
    uint64_t last_done, last_total, calls;
    int ok;
} progress_log;

static void on_progress(const nd_dedupe_progress *p, void *payload)
{
    progress_log *g = payload;
    size_t len = strlen(g->phases);
    const char *tail = len ? strrchr(g->phases, ' ') : NULL;
    const char *cur = tail ? tail + 1 : g->phases;
    if (strcmp(cur, p->phase) != 0) { /* a new phase starts at 0 */
        if (p->done != 0) g->ok = 0;
        snprintf(g->phases + len, sizeof g->phases - len, "%s%s", len ? " " : "", p->phase);
    } else if (p->done < g->last_done) {
        g->ok = 0;
    }
    if (!p->unit || !p->unit[0]) g->ok = 0;
    g->last_done = p->done;
    g->last_total = p->total;
    g->calls++;
}

static void test_progress(void **state)
{
    (void)state;
    static corpus c;
    static seen pairs, cl;
    make_corpus(&c);
    nd_dedupe_options o = ND_DEDUPE_OPTIONS_INIT;
    nd_dedupe *d = load_texts(&c, &o);
    progress_log g = {.ok = 1};
    assert_int_equal(nd_dedupe_set_progress(NULL, on_progress, &g), ND_EINVAL);
    assert_int_equal(nd_dedupe_set_progress(d, on_progress, &g), ND_OK);
    memset(&pairs, 0, sizeof pairs);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &pairs), ND_OK);
    assert_string_equal(g.phases, "self-join banding");
    assert_true(g.ok);
    assert_true(g.last_total > 0 && g.last_done == g.last_total); /* every sketch, every band */
    memset(&g, 0, sizeof g);
    g.ok = 1;
    memset(&cl, 0, sizeof cl);
    assert_int_equal(nd_dedupe_clusters(d, on_member, &cl), ND_OK);
    assert_string_equal(g.phases, "grouping self-join banding clustering");
    assert_true(g.ok);
    assert_true(g.last_done == g.last_total);
    /* switched off: no more calls (the clustering is computed once, so
     * walk the pairs again) */
    uint64_t calls = g.calls;
    assert_int_equal(nd_dedupe_set_progress(d, NULL, NULL), ND_OK);
    memset(&pairs, 0, sizeof pairs);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &pairs), ND_OK);
    assert_int_equal(g.calls, calls);
    nd_dedupe_free(d);
}

/* ---- clusters and roles ------------------------------------------------------ */

static void test_clusters_rule(void **state)
{
    (void)state;
    static corpus c;
    static seen pairs, cl, roles;
    make_corpus(&c);
    for (int keep = 0; keep <= 2; keep++) {
        nd_dedupe_options o = ND_DEDUPE_OPTIONS_INIT;
        o.keep = (nd_dedupe_keep)keep;
        memset(&pairs, 0, sizeof pairs);
        memset(&cl, 0, sizeof cl);
        memset(&roles, 0, sizeof roles);
        nd_dedupe *d = load_texts(&c, &o);
        assert_int_equal(nd_dedupe_roles(d, on_member, &roles), ND_OK);
        assert_int_equal(nd_dedupe_clusters(d, on_member, &cl), ND_OK);
        assert_int_equal(nd_dedupe_pairs(d, on_pair, &pairs), ND_OK); /* after: also allowed */
        nd_dedupe_stats st;
        assert_int_equal(nd_dedupe_stats_get(&st, d), ND_OK);
        assert_true(st.distinct > 0 && st.distinct < c.n);
        nd_dedupe_free(d);
        /* roles: every document once, in input order */
        assert_int_equal(roles.nm, c.n);
        size_t dropped = 0;
        for (size_t i = 0; i < c.n; i++) {
            const nd_dedupe_member *m = &roles.m[i];
            assert_int_equal(m->doc, i);
            assert_string_equal(roles.mkey[i], c.key[i]);
            if (m->role == ND_DEDUPE_ROLE_KEEP) {
                assert_int_equal(m->kept, i);
                assert_int_equal(m->dist, 0);
                continue;
            }
            dropped++;
            /* the rule: a drop is a pair with its kept one, or identical to it */
            assert_int_equal(m->role, ND_DEDUPE_ROLE_DROP);
            assert_true(m->cluster > 0);
            size_t lo = m->kept < i ? m->kept : i, hi = m->kept < i ? i : m->kept;
            assert_true(pair_listed(&pairs, lo, hi) || strcmp(c.text[lo], c.text[hi]) == 0);
            assert_int_equal(roles.m[m->kept].role, ND_DEDUPE_ROLE_KEEP);
            assert_int_equal(roles.m[m->kept].cluster, m->cluster);
            /* the kept one comes first in keep order */
            if (keep == 1) assert_true(c.score[m->kept] >= c.score[i]);
            if (keep == 2) assert_true(strlen(c.text[m->kept]) >= strlen(c.text[i]));
            if (keep == 0) assert_true(m->kept < i);
        }
        assert_true(dropped >= 8);
        /* clusters: numbered 1.., the kept member first, then the dropped
         * ones in input order; exactly the members of roles with a cluster */
        size_t in_clusters = 0;
        for (size_t i = 0; i < c.n; i++) in_clusters += roles.m[i].cluster > 0;
        assert_int_equal(cl.nm, in_clusters);
        uint64_t number = 0;
        for (size_t x = 0; x < cl.nm; x++) {
            const nd_dedupe_member *m = &cl.m[x];
            member_equal(m, &roles.m[m->doc]);
            if (m->role == ND_DEDUPE_ROLE_KEEP) {
                assert_int_equal(m->cluster, ++number);
            } else {
                assert_int_equal(m->cluster, number);
                const nd_dedupe_member *prev = &cl.m[x - 1];
                assert_true(prev->role == ND_DEDUPE_ROLE_KEEP || prev->doc < m->doc);
            }
        }
    }
}

/* ---- the documents back ---------------------------------------------------- */

typedef struct docs_seen {
    size_t n, batches, max_batch;
} docs_seen;

static int on_docs(nd_doc *docs, size_t n, void *payload)
{
    docs_seen *s = payload;
    char key[32];
    for (size_t i = 0; i < n; i++) {
        size_t at = s->n + i;
        snprintf(key, sizeof key, "p%zu", at);
        if (at >= 3000) snprintf(key, sizeof key, "d%02zu", at - 3000);
        assert_int_equal(docs[i].key_len, strlen(key));
        assert_memory_equal(docs[i].key, key, docs[i].key_len);
        assert_int_equal(docs[i].time, 0);
        if (at < 3000) assert_true(docs[i].score == (double)(at % 13));
        docs[i].time = 5; /* allowed */
    }
    s->n += n;
    s->batches++;
    if (n > s->max_batch) s->max_batch = n;
    return 0;
}

static void test_docs_walk(void **state)
{
    (void)state;
    static corpus c;
    make_corpus(&c);
    nd_dedupe *d = load_mixed(NULL, 1);
    docs_seen s = {0};
    assert_int_equal(nd_dedupe_docs(d, 1000, on_docs, &s), ND_OK);
    assert_int_equal(s.n, 3000 + c.n);
    assert_int_equal(s.batches, 4);
    assert_int_equal(s.max_batch, 1000);
    memset(&s, 0, sizeof s);
    assert_int_equal(nd_dedupe_docs(d, 0, on_docs, &s), ND_OK); /* again, one batch */
    assert_int_equal(s.batches, 1);
    nd_dedupe_free(d);
}

/* ---- errors ---------------------------------------------------------------- */

static void expect_bad(nd_dedupe_options o, const char *what)
{
    nd_dedupe *d = (nd_dedupe *)&o; /* not NULL: must be cleared */
    if (!o.scratch_dir) o.scratch_dir = dir;
    int rc = nd_dedupe_new(&d, &o);
    if (rc != ND_EINVAL) fail_msg("%s: got %d (%s)", what, rc, nd_errmsg());
    assert_null(d);
    assert_true(strlen(nd_errmsg()) > 0);
}

static void test_bad_options(void **state)
{
    (void)state;
    const nd_dedupe_options def = ND_DEDUPE_OPTIONS_INIT;
    nd_dedupe_options o;
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    o = def, o.version = 2, expect_bad(o, "version");
    o = def, o.flags = 0x10, expect_bad(o, "flags");
    o = def, o.has_k = 1, o.k = 65, expect_bad(o, "k 65");
    o = def, o.has_k = 1, o.k = 9, o.flags = ND_DEDUPE_SIMHASH_ONLY, expect_bad(o, "k 9 simhash");
    o = def, o.min_resemblance = 1.5, expect_bad(o, "resemblance 1.5");
    o = def, o.min_resemblance = -0.1, expect_bad(o, "resemblance -0.1");
    o = def, o.min_resemblance = NAN, expect_bad(o, "resemblance NaN");
    o = def, o.min_containment = 2, expect_bad(o, "containment 2");
    o = def, o.min_containment = NAN, expect_bad(o, "containment NaN");
    o = def, o.keep = (nd_dedupe_keep)7, expect_bad(o, "keep 7");
    o = def, o.memory = ND_DEDUPE_MIN_MEMORY - 1, expect_bad(o, "memory");
    fo.version = 9;
    o = def, o.fp = &fo, expect_bad(o, "fp options");
    assert_int_equal(nd_dedupe_new(NULL, NULL), ND_EINVAL);
    assert_int_equal(nd_dedupe_options_init(&o, 2), ND_EINVAL);
    assert_int_equal(nd_dedupe_options_init(&o, ND_DEDUPE_OPTIONS_VERSION), ND_OK);
    assert_memory_equal(&o, &def, sizeof o);
    /* fine: k 8 simhash-only, k 0, the least memory */
    o = def, o.has_k = 1, o.k = 8, o.flags = ND_DEDUPE_SIMHASH_ONLY, o.memory = ND_DEDUPE_MIN_MEMORY;
    nd_dedupe_free(new_dedupe(&o));
    o = def, o.has_k = 1, o.k = 0;
    nd_dedupe_free(new_dedupe(&o));
    /* a scratch directory that does not exist */
    char missing[96];
    snprintf(missing, sizeof missing, "%s/none", dir);
    o = def, o.scratch_dir = missing;
    nd_dedupe *d = NULL;
    assert_int_equal(nd_dedupe_new(&d, &o), ND_EIO);
    assert_null(d);
    assert_non_null(strstr(nd_errmsg(), "none"));
    nd_dedupe_free(NULL);
}

static void test_misuse(void **state)
{
    (void)state;
    static seen s;
    nd_dedupe *d = new_dedupe(NULL);
    nd_signature sig;
    assert_int_equal(nd_dedupe_add_fp(d, NULL, 3, 1, 0), ND_EINVAL);
    assert_int_equal(nd_dedupe_add_fp(d, "a", 1, 1, NAN), ND_EINVAL);
    assert_int_equal(nd_dedupe_add_text(d, "a", 1, NULL, 5, 0), ND_EINVAL);
    assert_int_equal(nd_dedupe_add_signature(d, "a", 1, NULL, 0), ND_EINVAL);
    assert_int_equal(nd_dedupe_sign(&sig, d, "x", 1, 0x100), ND_EINVAL);
    assert_int_equal(nd_dedupe_pairs(d, NULL, NULL), ND_EINVAL);
    assert_int_equal(nd_dedupe_add_fp(d, NULL, 0, 1, 0), ND_OK); /* empty keys are keys */
    assert_int_equal(nd_dedupe_add_fp(d, "b", 1, 3, 0), ND_OK);
    memset(&s, 0, sizeof s);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &s), ND_OK);
    assert_int_equal(s.np, 1);
    assert_true(s.p[0].res == -1 && s.p[0].cont == -1); /* no text: no estimate */
    assert_string_equal(s.p[0].ka, "");
    /* closed: no more documents; signing still works */
    assert_int_equal(nd_dedupe_add_fp(d, "c", 1, 1, 0), ND_EINVAL);
    assert_int_equal(nd_dedupe_add_text(d, "c", 1, "x y z", 5, 0), ND_EINVAL);
    assert_int_equal(nd_dedupe_sign(&sig, d, "x y z", 5, 0), ND_OK);
    nd_dedupe_free(d);
    /* k above 8 asked for, and no document had text */
    nd_dedupe_options o = ND_DEDUPE_OPTIONS_INIT;
    o.has_k = 1;
    o.k = 9;
    d = new_dedupe(&o);
    assert_int_equal(nd_dedupe_add_fp(d, "a", 1, 1, 0), ND_OK);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &s), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "needs texts"));
    nd_dedupe_free(d);
    /* the default k falls to 3 then */
    d = new_dedupe(NULL);
    assert_int_equal(nd_dedupe_add_fp(d, "a", 1, 0, 0), ND_OK);
    assert_int_equal(nd_dedupe_add_fp(d, "b", 1, 0xf, 0), ND_OK); /* 4 bits */
    memset(&s, 0, sizeof s);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &s), ND_OK);
    assert_int_equal(s.np, 0);
    nd_dedupe_stats st;
    assert_int_equal(nd_dedupe_stats_get(&st, d), ND_OK);
    assert_int_equal(st.k, 3);
    assert_int_equal(nd_dedupe_stats_get(NULL, d), ND_EINVAL);
    nd_dedupe_free(d);
}

/* ---- stopping ---------------------------------------------------------------- */

static int stop_docs(nd_doc *docs, size_t n, void *payload)
{
    (void)docs;
    (void)n;
    return ++*(int *)payload == 2 ? ND_ENOMEM : 0; /* even a negative value */
}

static void test_callback_stop(void **state)
{
    (void)state;
    static seen s;
    int values[] = {1, -1, ND_EIO, 42};
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
        nd_dedupe *d = load_mixed(NULL, 0);
        memset(&s, 0, sizeof s);
        s.stop_at = 3;
        s.stop_value = values[v];
        assert_int_equal(nd_dedupe_pairs(d, on_pair, &s), ND_DEDUPE_STOPPED);
        assert_int_equal(s.calls, 3);
        s.calls = 0;
        assert_int_equal(nd_dedupe_clusters(d, on_member, &s), ND_DEDUPE_STOPPED);
        assert_int_equal(s.calls, 3);
        s.calls = 0;
        assert_int_equal(nd_dedupe_roles(d, on_member, &s), ND_DEDUPE_STOPPED);
        assert_int_equal(s.calls, 3);
        int calls = 0;
        assert_int_equal(nd_dedupe_docs(d, 100, stop_docs, &calls), ND_DEDUPE_STOPPED);
        assert_int_equal(calls, 2);
        s.calls = 0;
        s.stop_at = 0; /* a walk after a stop runs whole */
        assert_int_equal(nd_dedupe_roles(d, on_member, &s), ND_OK);
        assert_int_equal(s.calls, 3000);
        nd_dedupe_free(d);
    }
}

/* ---- signatures ---------------------------------------------------------------- */

static void test_signatures(void **state)
{
    (void)state;
    static corpus c;
    static seen a, b;
    make_corpus(&c);
    nd_dedupe_options o = ND_DEDUPE_OPTIONS_INIT;
    o.min_containment = 0.8;
    nd_dedupe *signer = new_dedupe(&o), *d = new_dedupe(&o);
    for (size_t i = 0; i < c.n; i++) {
        nd_signature sig;
        uint64_t fp;
        assert_int_equal(nd_dedupe_sign(&sig, signer, c.text[i], strlen(c.text[i]), 0), ND_OK);
        assert_int_equal(nd_fingerprint(&fp, c.text[i], strlen(c.text[i]), NULL), ND_OK);
        assert_int_equal(sig.fp, fp);
        assert_int_equal(sig.length, strlen(c.text[i]));
        uint64_t *set;
        size_t len;
        assert_int_equal(nd_shingle_set(&set, &len, c.text[i], strlen(c.text[i]), 3), ND_OK);
        assert_int_equal(sig.distinct, len);
        free(set);
        assert_int_equal(nd_dedupe_add_signature(d, c.key[i], strlen(c.key[i]), &sig, c.score[i]),
                         ND_OK);
    }
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &a), ND_OK);
    nd_dedupe_free(d);
    d = load_texts(&c, &o);
    assert_int_equal(nd_dedupe_pairs(d, on_pair, &b), ND_OK);
    assert_true(a.np > 10);
    seen_equal(&a, &b);
    nd_dedupe_free(d);
    /* HTML: the flag reads markup; the options' stop words are copied */
    const char *html = "<html><head><title>T</title></head><body><p>one two three four</p>"
                       "<script>var x = 1;</script></body></html>";
    nd_signature s1, s2;
    uint64_t fp;
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    fo.flags = ND_FP_HTML;
    assert_int_equal(nd_dedupe_sign(&s1, signer, html, strlen(html), ND_FP_HTML), ND_OK);
    assert_int_equal(nd_fingerprint(&fp, html, strlen(html), &fo), ND_OK);
    assert_int_equal(s1.fp, fp);
    nd_dedupe_free(signer);
    char word[8] = "two";
    const char *stop[] = {word};
    nd_fp_options sw = ND_FP_OPTIONS_INIT;
    sw.stopwords = stop;
    sw.n_stopwords = 1;
    o.fp = &sw;
    signer = new_dedupe(&o);
    strcpy(word, "zzz"); /* the caller's list changes: the handle's does not */
    assert_int_equal(nd_dedupe_sign(&s2, signer, "one two three four five", 23, 0), ND_OK);
    strcpy(word, "two");
    assert_int_equal(nd_fingerprint(&fp, "one two three four five", 23, &sw), ND_OK);
    assert_int_equal(s2.fp, fp);
    nd_dedupe_free(signer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pairs_brute_force, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corpus_has_pairs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_partitions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clusters_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_progress, setup, teardown),
        cmocka_unit_test_setup_teardown(test_docs_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callback_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signatures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
