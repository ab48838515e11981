/*
 * test_store_regen.c — the storage layer's generations (st_regen): table
 * runs rewritten in pieces, the block cache a rewrite fills, families
 * written anew as a generation and switched to in one write, forks of a
 * generation written on other threads and joined; each against a
 * reference sorted set (store_ref.h).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_fixture.h"
#include "store_ref.h"
#include "oracle.h"
#include "storage.h"
#include "tmpdir.h"

/* Random distinct sorted values, also inserted into the reference. */
static size_t fresh_values(uint64_t *v, size_t n, ref *r)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rnd();
        if (!ref_has(r, x)) v[m++] = x;
    }
    qsort(v, m, sizeof *v, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || v[u - 1] != v[i]) v[u++] = v[i];
    return u;
}

/* fresh_values of n into vals, inserted into tables 0 and 1 by one write
 * of the new batch *b (fresh entries) and into r; how many. */
static size_t insert_fresh(st_store *s, st_batch **bp, uint64_t *vals, size_t n, ref *r)
{
    size_t m = fresh_values(vals, n, r);
    assert_int_equal(st_batch_new(bp, s), ND_OK);
    st_batch *b = *bp;
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(st_table_insert(s, b, 0, vals[i]), ND_OK);
        assert_int_equal(st_table_insert(s, b, 1, vals[i]), ND_OK);
        ref_insert(r, vals[i]);
    }
    assert_int_equal(st_write(s, b, 0), ND_OK);
    return m;
}

/* New docs entries "d<x>" -> "v" for the values of a rewrite. */
typedef struct doc_src {
    const uint64_t *v;
    char key[24];
} doc_src;

static int doc_src_kv(void *payload, size_t i, const void **key, size_t *klen, const void **val,
                      size_t *vlen)
{
    doc_src *d = payload;
    snprintf(d->key, sizeof d->key, "d%016llx", (unsigned long long)d->v[i]);
    *key = d->key;
    *klen = strlen(d->key);
    *val = "v";
    *vlen = 1;
    return ND_OK;
}

/* Rewrite generation g: tables 0 and 1 with vals (table 1 gets exactly
 * the values table 0 reports as added), docs with a key per added value,
 * rev as it is. */
static void rewrite_all(st_regen *g, st_store *s, const uint64_t *vals, size_t n, size_t want_added)
{
    st_u64s added = {0};
    assert_int_equal(st_table_rewrite(g, s, 0, 16, vals, n, &added), ND_OK);
    assert_int_equal(added.n, want_added);
    assert_int_equal(st_table_rewrite(g, s, 1, 16, added.v, added.n, NULL), ND_OK);
    doc_src d = {added.v, ""};
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, added.n, doc_src_kv, &d), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_REV, 0, doc_src_kv, &d), ND_OK);
    st_u64s_dispose(&added);
}

/* A source that hands out at most 777 values a call, whatever it is
 * asked for (st_table_rewrite_stream must not assume full blocks). */
typedef struct odd_src {
    const uint64_t *v;
    size_t n, i;
} odd_src;

static int odd_read(void *payload, uint64_t *buf, size_t cap, size_t *got)
{
    odd_src *o = payload;
    size_t k = o->n - o->i;
    if (k > cap) k = cap;
    if (k > 777) k = 777;
    memcpy(buf, o->v + o->i, k * sizeof *buf);
    o->i += k;
    *got = k;
    return ND_OK;
}

/* st_table_rewrite_stream merges piece by piece (run_size * 1024 values at
 * a time) where many new values fall into a stored run or above the last:
 * a store of 20 values below 2^63 (one run), then 100k new
 * values across the whole range plus every stored value again (skipped).
 * Both tables (one streamed, one from an array) then hold exactly the
 * union, in runs that decode; out-of-order values are refused. */
static void test_rewrite_pieces(void **state)
{
    db_fixture *fx = *state;
    st_store *s = store_create(fx->path, 2);
    st_batch *b;
    st_regen *g;
    enum { STORED = 20, NEW = 100000 };
    ref r = {malloc((STORED + NEW) * sizeof(uint64_t)), 0};
    uint64_t *vals = malloc((STORED + NEW) * sizeof *vals);
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    for (size_t i = 0; i < STORED; i++) {
        uint64_t x = rnd() >> 1;
        if (ref_has(&r, x)) continue;
        ref_insert(&r, x);
        assert_int_equal(st_table_insert(s, b, 0, x), ND_OK);
        assert_int_equal(st_table_insert(s, b, 1, x), ND_OK);
    }
    assert_int_equal(st_write(s, b, 0), ND_OK);
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(st_table_fold(s, t, 16, 0, NULL, NULL, NULL, NULL), ND_OK);
    size_t stored = r.n, n = fresh_values(vals, NEW, &r);
    size_t nnew = n;
    memcpy(vals + n, r.v, stored * sizeof *vals);
    n += stored;
    qsort(vals, n, sizeof *vals, cmp_u64);
    /* Out of order: refused. */
    uint64_t bad[3] = {7, 9, 8};
    odd_src o = {bad, 3, 0};
    uint64_t put = 0;
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_table_rewrite_stream(g, s, 0, 16, odd_read, &o, &put), ND_EINVAL);
    st_regen_free(g);
    /* The merge. */
    o = (odd_src){vals, n, 0};
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_table_rewrite_stream(g, s, 0, 16, odd_read, &o, &put), ND_OK);
    assert_int_equal(put, nnew);
    st_u64s added = {0};
    assert_int_equal(st_table_rewrite(g, s, 1, 16, vals, n, &added), ND_OK);
    assert_int_equal(added.n, nnew);
    doc_src d = {vals, ""};
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, 0, doc_src_kv, &d), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_REV, 0, doc_src_kv, &d), ND_OK);
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_META, "k", 1, "v", 1), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    for (size_t i = 0; i < n; i++)
        if (!ref_has(&r, vals[i])) ref_insert(&r, vals[i]);
    assert_int_equal(r.n, stored + nnew);
    check_ranges(s, &r);
    st_reader *rd;
    assert_int_equal(st_reader_new(&rd, s), ND_OK);
    for (unsigned t = 0; t < 2; t++) {
        added.n = 0;
        assert_int_equal(st_table_range(rd, t, 0, UINT64_MAX, 1, &added), ND_OK);
        assert_int_equal(added.n, r.n);
        assert_memory_equal(added.v, r.v, r.n * sizeof *r.v);
    }
    st_reader_free(rd);
    st_u64s_dispose(&added);
    st_batch_free(b);
    free(vals);
    free(r.v);
    st_close(s);
}

/* Table generations (st_regen): a rewrite equals the set it replaces plus
 * the new values; nothing shows before the switching write, while
 * snapshots taken before it keep the old tables; an abandoned generation,
 * or one a crash left behind, is dropped and the old one stays. */
/* Point reads fill the block cache only while the files fit in it. */
static void test_cache_fill(void **state)
{
    db_fixture *fx = *state;
    char key[16], val[1024];
    st_store *s = NULL;
    st_batch *b;
    st_open_opts o = {.create = 1, .ntables = 1, .cache_bytes = 1u << 20};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_true(st_fills_cache(s)); /* empty */
    /* 4 MB of values that do not compress, past the 1 MiB cache */
    uint64_t x = 88172645463325252ull;
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    for (int i = 0; i < 4096; i++) {
        for (size_t j = 0; j < sizeof val; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            val[j] = (char)x;
        }
        snprintf(key, sizeof key, "k%06d", i);
        assert_int_equal(st_batch_put(b, ST_CF_DOCS, key, strlen(key), val, sizeof val), ND_OK);
        if (i % 512 == 511) {
            assert_int_equal(st_write(s, b, 0), ND_OK);
            st_batch_clear(b);
        }
    }
    assert_int_equal(st_compact_files(s), ND_OK);
    assert_false(st_fills_cache(s));
    char *v;
    size_t vlen;
    assert_int_equal(st_get(s, ST_CF_DOCS, "k004095", 7, &v, &vlen), ND_OK); /* still read */
    assert_true(vlen == sizeof val && memcmp(v, val, vlen) == 0);
    free(v);
    st_batch_free(b);
    st_close(s);
    o = (st_open_opts){.create = 0, .cache_bytes = 64u << 20};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_true(st_fills_cache(s)); /* fits the larger cache */
    st_close(s);
    o.cache_bytes = 1u << 20;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_false(st_fills_cache(s)); /* decided at open too */
    st_close(s);
}

static void test_regen(void **state)
{
    db_fixture *fx = *state;
    st_store *s = store_create(fx->path, 2);
    st_batch *b;
    st_regen *g;
    st_snap *sn;
    st_reader *rd;
    st_u64s out = {0};
    enum { N = 30000 };
    ref r = {malloc(4 * N * sizeof(uint64_t)), 0};
    uint64_t *vals = malloc(2 * N * sizeof *vals);
    assert_int_equal(st_reader_new(&rd, s), ND_OK);
    assert_int_equal(st_generation(s), 0);
    assert_false(st_family_settled(s, ST_CF_DOCS)); /* gen 0 was never ingested */

    /* Some values through the ordinary path first: fresh, then folded. */
    size_t n = insert_fresh(s, &b, vals, 3000, &r);
    /* Fresh entries refuse a rewrite: they must be folded first. */
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_table_rewrite(g, s, 0, 16, vals, 1, NULL), ND_EINVAL);
    st_regen_free(g);
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(st_table_fold(s, t, 16, 0, NULL, NULL, NULL, NULL), ND_OK);
    size_t keys_before = family_keys(s, ST_CF_TABLE(0), NULL);

    /* Generation 1: new values plus some already stored (skipped). */
    n = fresh_values(vals, N, &r);
    size_t nnew = n;
    for (size_t i = 0; i < 500; i++) vals[n++] = r.v[rnd() % r.n];
    qsort(vals, n, sizeof *vals, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || vals[u - 1] != vals[i]) vals[u++] = vals[i];
    n = u;
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    rewrite_all(g, s, vals, n, nnew);
    /* Written and ingested, but not current: readers see the old tables. */
    assert_int_equal(family_keys(s, ST_CF_TABLE(0), NULL), keys_before);
    check_ranges(s, &r);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), 0);
    assert_int_equal(st_snap_new(&sn, s), ND_OK);
    /* A switching batch writes only meta: docs would go to the old family. */
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_DOCS, "k", 1, "v", 1), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_EINVAL);
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_META, "k", 1, "v", 1), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_batch_put(b, ST_CF_REV, "k", 1, "", 0), ND_EINVAL);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    assert_int_equal(st_generation(s), 1);
    for (size_t i = 0; i < n; i++)
        if (!ref_has(&r, vals[i])) ref_insert(&r, vals[i]);
    check_ranges(s, &r); /* a reader made before the switch follows it */
    out.n = 0;
    assert_int_equal(st_table_range(rd, 1, 0, UINT64_MAX, 1, &out), ND_OK);
    assert_int_equal(out.n, r.n);
    for (size_t i = 0; i < r.n; i++) assert_true(out.v[i] == r.v[i]);
    /* The snapshot still reads generation 0, which is dropped once it goes. */
    assert_int_equal(family_keys(s, ST_CF_TABLE(0), sn), keys_before);
    st_snap_free(sn);
    char *v, dk[24];
    size_t vlen;
    assert_int_equal(st_get(s, ST_CF_META, "k", 1, &v, &vlen), ND_OK);
    free(v);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), nnew);
    snprintf(dk, sizeof dk, "d%016llx", (unsigned long long)vals[0]);
    assert_int_equal(st_get(s, ST_CF_DOCS, dk, strlen(dk), &v, &vlen), ND_OK);
    assert_true(vlen == 1 && v[0] == 'v');
    free(v);
    /* Every family of the switched-to generation is settled (compaction
     * leaves it alone) until a write touches it. */
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE(2); cf++) assert_true(st_family_settled(s, cf));
    assert_false(st_family_settled(s, ST_CF_META));
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_DOCS, "~settled", 8, "v", 1), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    assert_false(st_family_settled(s, ST_CF_DOCS));
    assert_true(st_family_settled(s, ST_CF_REV) && st_family_settled(s, ST_CF_TABLE(1)));
    assert_int_equal(st_compact_files(s), ND_OK);
    check_ranges(s, &r);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), nnew + 1);
    /* A key merged twice, or out of order, is refused (and the generation
     * dropped). */
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    doc_src d = {vals, ""};
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, 1, doc_src_kv, &d), ND_ECORRUPT);
    st_regen_free(g);
    uint64_t twice[2] = {5, 5};
    d.v = twice;
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_REV, 2, doc_src_kv, &d), ND_EINVAL);
    /* Every family must be written before a switch. */
    st_batch_clear(b);
    assert_int_equal(st_batch_set_regen(b, g), ND_EINVAL);
    st_regen_free(g);

    /* An abandoned generation changes nothing; the next one can be made. */
    size_t keys1 = family_keys(s, ST_CF_TABLE(0), NULL);
    ref r0 = r;
    n = fresh_values(vals, 1000, &r);
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    rewrite_all(g, s, vals, n, n);
    st_regen_free(g);
    assert_int_equal(st_generation(s), 1);
    assert_int_equal(family_keys(s, ST_CF_TABLE(0), NULL), keys1);
    check_ranges(s, &r0);

    /* A crash after the files were ingested, before the switch: the child
     * stops without a word to RocksDB; the next open drops its families,
     * whose names a new generation then reuses. */
    st_reader_free(rd);
    st_batch_free(b);
    st_close(s);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        st_open_opts oc = {.create = 0};
        if (st_open(&s, fx->path, &oc) != ND_OK || st_regen_new(&g, s) != ND_OK) _exit(1);
        st_u64s added = {0};
        if (st_table_rewrite(g, s, 0, 16, vals, n, &added) != ND_OK) _exit(2);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    st_open_opts o = {.create = 0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_generation(s), 1);
    assert_int_equal(st_ntables(s), 2);
    check_ranges(s, &r0);
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    rewrite_all(g, s, vals, n, n);
    assert_int_equal(st_batch_new_plain(&b, s), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    for (size_t i = 0; i < n; i++) ref_insert(&r, vals[i]);
    check_ranges(s, &r);
    st_batch_free(b);
    st_close(s);

    /* A crash while a family's file is being written leaves the file; a
     * read-only open keeps it, the next writable open removes it. */
    char tmpfile[160];
    snprintf(tmpfile, sizeof tmpfile, "%s/regen.sst.tmp", fx->path);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        st_open_opts oc = {.create = 0};
        if (st_open(&s, fx->path, &oc) != ND_OK || st_regen_new(&g, s) != ND_OK ||
            st_regen_begin(g, ST_CF_TABLE(0)) != ND_OK)
            _exit(1);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat sb;
    assert_int_equal(stat(tmpfile, &sb), 0);
    o.readonly = 1;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    st_close(s);
    assert_int_equal(stat(tmpfile, &sb), 0);
    o.readonly = 0;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_generation(s), 2);
    st_close(s);
    assert_int_not_equal(stat(tmpfile, &sb), 0);

    /* Reopened, read-only too: generation 2 with every value. */
    o.readonly = 1;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_generation(s), 2);
    assert_false(st_family_settled(s, ST_CF_TABLE(0))); /* not known after a reopen */
    check_ranges(s, &r);
    st_close(s);
    st_u64s_dispose(&out);
    free(vals);
    free(r.v);
}

/* A fork's table rewrite, for a thread. */
typedef struct fork_job {
    st_regen *g;
    st_store *s;
    const uint64_t *vals;
    size_t n;
    int rc;
} fork_job;

static void *fork_main(void *arg)
{
    fork_job *j = arg;
    j->rc = st_table_rewrite(j->g, j->s, 1, 16, j->vals, j->n, NULL);
    return NULL;
}

/* Forks of a generation's writer (st_regen_fork): a fork writes table 1
 * on another thread while the parent writes table 0 and docs, and rev
 * too; joined and kept, the switch shows both tables' union and the
 * docs. A fork dropped leaves its family unwritten (the switch refuses)
 * until the parent writes it; a family written by both is refused at the
 * join; forks of forks and of a table rewritten in place are refused. A
 * crash left a fork's finished file: the next writable open removes it
 * and the generation stays. */
static void test_regen_fork(void **state)
{
    db_fixture *fx = *state;
    char forkfile[160];
    st_store *s = store_create(fx->path, 2);
    st_batch *b;
    st_regen *g, *f, *f2;
    enum { N = 20000 };
    ref r = {malloc(4 * N * sizeof(uint64_t)), 0};
    uint64_t *vals = malloc(N * sizeof *vals);
    size_t n = insert_fresh(s, &b, vals, 3000, &r);
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(st_table_fold(s, t, 16, 0, NULL, NULL, NULL, NULL), ND_OK);

    /* Kept: table 1 and rev by the fork, on a thread, the rest by g. */
    n = fresh_values(vals, N, &r);
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_regen_fork(&f, g), ND_OK);
    assert_int_equal(st_regen_fork(&f2, f), ND_EINVAL);
    fork_job j = {f, s, vals, n, -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fork_main, &j), 0);
    assert_int_equal(st_table_rewrite(g, s, 0, 16, vals, n, NULL), ND_OK);
    doc_src d = {vals, ""};
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, n, doc_src_kv, &d), ND_OK);
    pthread_join(th, NULL);
    assert_int_equal(j.rc, ND_OK);
    assert_int_equal(st_family_merge(f, s, ST_CF_REV, 0, doc_src_kv, &d), ND_OK);
    st_batch_clear(b);
    assert_int_equal(st_batch_set_regen(b, g), ND_EINVAL); /* not joined yet */
    assert_int_equal(st_regen_join(g, f, 1), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    for (size_t i = 0; i < n; i++) ref_insert(&r, vals[i]);
    check_ranges(s, &r);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), n);

    /* Dropped: table 1 must be written again, by g. */
    ref r1 = r;
    r1.v = malloc(4 * N * sizeof(uint64_t));
    memcpy(r1.v, r.v, r.n * sizeof *r.v);
    size_t n2 = fresh_values(vals, 1000, &r1);
    for (size_t i = 0; i < n2; i++) ref_insert(&r1, vals[i]);
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_regen_fork(&f, g), ND_OK);
    uint64_t other = vals[0] ^ 1; /* what the dropped file held */
    assert_int_equal(st_table_rewrite(f, s, 1, 16, &other, 1, NULL), ND_OK);
    assert_int_equal(st_regen_join(g, f, 0), ND_OK);
    assert_int_equal(st_table_rewrite(g, s, 0, 16, vals, n2, NULL), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_DOCS, 0, doc_src_kv, &d), ND_OK);
    assert_int_equal(st_family_merge(g, s, ST_CF_REV, 0, doc_src_kv, &d), ND_OK);
    st_batch_clear(b);
    assert_int_equal(st_batch_set_regen(b, g), ND_EINVAL); /* table 1 dropped */
    assert_int_equal(st_table_rewrite(g, s, 1, 16, vals, n2, NULL), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_regen_free(g);
    check_ranges(s, &r1);

    /* Written twice: refused at the join (and g still switches). */
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_regen_fork(&f, g), ND_OK);
    assert_int_equal(st_table_rewrite(f, s, 0, 16, &other, 1, NULL), ND_OK);
    assert_int_equal(st_table_rewrite(g, s, 0, 16, NULL, 0, NULL), ND_OK);
    assert_int_equal(st_regen_join(g, f, 1), ND_EINVAL);
    st_regen_free(g);
    check_ranges(s, &r1);
    const st_snap *view;
    assert_int_equal(st_regen_new_table(&g, s, 0, &view), ND_OK);
    assert_int_equal(st_regen_fork(&f, g), ND_EINVAL);
    st_regen_free(g);

    /* A crash after a fork finished its file. */
    st_batch_free(b);
    st_close(s);
    snprintf(forkfile, sizeof forkfile, "%s/regen-%d.sst.tmp", fx->path, ST_CF_TABLE(1));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        st_open_opts oc = {.create = 0};
        if (st_open(&s, fx->path, &oc) != ND_OK || st_regen_new(&g, s) != ND_OK ||
            st_regen_fork(&f, g) != ND_OK ||
            st_table_rewrite(f, s, 1, 16, &other, 1, NULL) != ND_OK)
            _exit(1);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat sb;
    assert_int_equal(stat(forkfile, &sb), 0);
    st_open_opts o = {.create = 0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_not_equal(stat(forkfile, &sb), 0);
    assert_int_equal(st_generation(s), 2);
    check_ranges(s, &r1);
    st_close(s);
    free(vals);
    free(r.v);
    free(r1.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_cache_fill),
        DB_FIXTURE_TEST(test_regen),
        DB_FIXTURE_TEST(test_regen_fork),
        DB_FIXTURE_TEST(test_rewrite_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
