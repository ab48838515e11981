/*
 * test_direct.c — runs read straight from a table's file (cmp_direct.h):
 * when a store uses it (after a generation is written, at open, after
 * compaction) and when not (after a write to the run space), its ranges
 * against the sorted set of values written (brute force), with fresh
 * entries beside it, and a damaged or foreign file refused; all of it
 * again with the files read through mappings (st_open_opts.map_tables).
 * The RocksDB versions the reader is pinned to, and a store under another
 * version falling back to RocksDB with the same answers.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "cmp_direct.h"
#include "cmp_kv.h"
#include "oracle.h"
#include "storage.h"
#include "tmpdir.h"

#define NTABLES 2
#define RUN_SIZE 128

static oracle_rng rng = {11};
static uint64_t rnd(void) { return oracle_next(&rng); }

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* n distinct sorted values: random ones, clusters sharing their top 48
 * bits (many runs within one entry of the direct index), 0 and the top. */
static size_t make_values(uint64_t *v, size_t n)
{
    size_t m = 0;
    v[m++] = 0;
    v[m++] = UINT64_MAX;
    while (m < n) {
        uint64_t x = rnd();
        if (m % 3 == 0)
            for (int i = 0; i < 50 && m < n; i++) v[m++] = (x & ~0xffffull) | (rnd() & 0xffff);
        else v[m++] = x;
    }
    qsort(v, m, sizeof *v, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || v[u - 1] != v[i]) v[u++] = v[i];
    return u;
}

/* A new generation whose tables both hold vals[0..n). */
static void write_generation(st_store *s, const uint64_t *vals, size_t n)
{
    st_regen *g = NULL;
    st_batch *b = NULL;
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    for (unsigned t = 0; t < NTABLES; t++)
        assert_int_equal(st_table_rewrite(g, s, t, RUN_SIZE, vals, n, NULL), ND_OK);
    for (int cf = ST_CF_DOCS; cf <= ST_CF_REV; cf++) {
        assert_int_equal(st_regen_begin(g, cf), ND_OK);
        assert_int_equal(st_regen_end(g), ND_OK);
    }
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 1), ND_OK);
    st_batch_free(b);
    st_regen_free(g);
}

/* got equals the values of want[0..n) in [lo, hi]. */
static void check_range(const st_u64s *got, const uint64_t *want, size_t n, uint64_t lo,
                        uint64_t hi)
{
    size_t a = st_u64_lower_bound(want, n, lo), m = 0;
    while (a + m < n && want[a + m] <= hi) m++;
    assert_int_equal(got->n, m);
    if (m) assert_memory_equal(got->v, want + a, m * sizeof *want);
}

/* Ascending disjoint ranges through a cursor (as a batch reads them:
 * steps of a fraction of a run, of a few runs, past CURSOR_MAX_STEPS
 * runs) equal the
 * brute-force ones; scan: read ahead, as a dense batch reads. */
static void check_cursor(st_store *s, unsigned t, const uint64_t *want, size_t n, int scan)
{
    st_cursor *c = NULL;
    st_u64s got = {0};
    assert_int_equal(st_cursor_new(&c, s, t, scan), ND_OK);
    uint64_t lo = 0;
    int ended = 0; /* the walk reached the end of the values */
    for (int q = 0; q < 2000 && !ended; q++) {
        uint64_t hi = lo + (rnd() >> (q % 3 ? 16 : 10));
        if (hi < lo) hi = UINT64_MAX;
        got.n = 0;
        assert_int_equal(st_cursor_range(c, lo, hi, &got), ND_OK);
        check_range(&got, want, n, lo, hi);
        uint64_t step = q % 200 == 0 ? rnd() >> 4 : q % 50 == 0 ? rnd() >> 6 : rnd() >> 12;
        ended = hi == UINT64_MAX || hi + 1 + step <= hi;
        lo = hi + 1 + step;
        if (!ended && q % 5 == 0) { /* onto a stored value */
            size_t i = st_u64_lower_bound(want, n, lo);
            ended = i == n;
            if (!ended) lo = want[i];
        }
    }
    assert_true(ended);
    st_u64s_dispose(&got);
    st_cursor_free(c);
}

/* Every range read of table t equals the brute-force one over want, read
 * one at a time and through cursors. */
static void check_ranges(st_store *s, unsigned t, const uint64_t *want, size_t n)
{
    st_reader *r = NULL;
    st_u64s got = {0};
    assert_int_equal(st_reader_new(&r, s), ND_OK);
    for (int q = 0; q < 1200; q++) { /* 200 of each shape */
        uint64_t lo, hi;
        switch (q % 6) {
        case 0: lo = rnd(); hi = lo + (rnd() >> 20); break;           /* a few runs wide */
        case 1: lo = want[rnd() % n]; hi = lo; break;                  /* one stored value */
        case 2: lo = want[rnd() % n] + 1; hi = lo + (rnd() >> 40); break; /* just past one */
        case 3: lo = rnd(); hi = lo + (rnd() >> 50); break;           /* mostly empty */
        case 4: lo = want[rnd() % n] & ~0xffffull; hi = lo | 0xffff; break; /* a cluster */
        default: lo = rnd() >> 1; hi = UINT64_MAX; break;             /* to the end */
        }
        if (hi < lo) hi = UINT64_MAX;
        if (q == 0) { lo = 0; hi = UINT64_MAX; }
        got.n = 0;
        assert_int_equal(st_table_range(r, t, lo, hi, 1, &got), ND_OK);
        check_range(&got, want, n, lo, hi);
    }
    st_u64s_dispose(&got);
    st_reader_free(r);
    check_cursor(s, t, want, n, 0);
    check_cursor(s, t, want, n, 1);
}

static void direct_present(st_store *s, unsigned t, int want)
{
    cmp_direct *d = st_table_direct(s, t);
    if (want) {
        assert_non_null(d);
        assert_true(cmp_direct_blocks(d) > 10);
    } else {
        assert_null(d);
    }
    cmp_direct_unref(d);
}

/* Was the direct reader tested with the RocksDB this build uses? Not:
 * stores read every table through RocksDB, and the tests that need the
 * direct reader are skipped (cmp_direct.h, CMP_DIRECT_ROCKSDB_MIN). */
static int direct_tested(void)
{
    unsigned major, minor;
    kv_version(&major, &minor);
    return cmp_direct_supports(major, minor);
}
#define NEED_DIRECT()                                                          \
    do {                                                                       \
        if (!direct_tested()) skip();                                          \
    } while (0)

/* Whether the stores of a test read their tables' files through mappings
 * (the *_mapped tests set it around a test of reads by pread). */
static int mapped;

static st_store *open_store(const char *path, int create, int readonly)
{
    st_store *s = NULL;
    st_open_opts o = {.create = create, .ntables = NTABLES, .readonly = readonly,
                      .map_tables = mapped};
    assert_int_equal(st_open(&s, path, &o), ND_OK);
    return s;
}

/* In one write, insert x as a fresh entry of every table (insert), or
 * remove it from every table (its fresh entry, or from its run). */
static void change_everywhere(st_store *s, uint64_t x, int insert)
{
    st_batch *b = NULL;
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    for (unsigned t = 0; t < NTABLES; t++)
        assert_int_equal(insert ? st_table_insert(s, b, t, x) : st_table_remove(s, b, t, x), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_batch_free(b);
}

static void insert_fresh(st_store *s, uint64_t x) { change_everywhere(s, x, 1); }

/* Add x to the sorted set v[0..*n) (x not in it). */
static void set_add(uint64_t *v, size_t *n, uint64_t x)
{
    size_t i = st_u64_lower_bound(v, *n, x);
    memmove(v + i + 1, v + i, (*n - i) * sizeof *v);
    v[i] = x;
    (*n)++;
}

/* Add a random value not in v to v and, fresh, to every table; it is
 * returned. */
static uint64_t add_fresh(st_store *s, uint64_t *v, size_t *n)
{
    uint64_t x;
    size_t i;
    do {
        x = rnd();
        i = st_u64_lower_bound(v, *n, x);
    } while (i < *n && v[i] == x);
    insert_fresh(s, x);
    set_add(v, n, x);
    return x;
}

/* n values in a new array v with room for extra more, and a new store
 * at dir/db (dir: 64 bytes, path: 128). */
static st_store *new_store(char *dir, char *path, uint64_t **v, size_t *n, size_t extra)
{
    size_t cap = 60000;
    *v = malloc((cap + extra) * sizeof **v);
    assert_non_null(*v);
    *n = make_values(*v, cap);
    tmpdir_make(dir);
    snprintf(path, 128, "%s/db", dir);
    return open_store(path, 1, 0);
}

static void test_lifecycle(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128];
    uint64_t *v;
    size_t n;

    /* A new store has no files: RocksDB reads it. */
    st_store *s = new_store(dir, path, &v, &n, 100);
    direct_present(s, 0, 0);
    write_generation(s, v, n);
    for (unsigned t = 0; t < NTABLES; t++) {
        direct_present(s, t, 1);
        check_ranges(s, t, v, n);
    }

    /* Fresh entries leave the run space alone: still direct, and ranges
     * merge them in. */
    for (int i = 0; i < 50; i++) add_fresh(s, v, &n);
    direct_present(s, 0, 1);
    check_ranges(s, 0, v, n);
    assert_int_equal(st_close(s), ND_OK);

    /* Reopened (the fresh entries flushed to their own file): direct
     * again, read-only too. */
    s = open_store(path, 0, 1);
    direct_present(s, 1, 1);
    check_ranges(s, 1, v, n);
    assert_int_equal(st_close(s), ND_OK);
    s = open_store(path, 0, 0);
    direct_present(s, 0, 1);

    /* A removal from a run writes the run space: table 0 goes back to
     * RocksDB (table 1, untouched, keeps its file), answers stay exact,
     * and a reopen still finds more than one file holding runs. */
    st_batch *b = NULL;
    uint64_t gone = v[n / 2];
    assert_int_equal(st_batch_new(&b, s), ND_OK);
    assert_int_equal(st_table_remove(s, b, 0, gone), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_OK);
    st_batch_free(b);
    direct_present(s, 0, 0);
    direct_present(s, 1, 1);
    uint64_t *w = malloc(n * sizeof *w);
    assert_non_null(w);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] != gone) w[m++] = v[i];
    check_ranges(s, 0, w, m);
    check_ranges(s, 1, v, n);
    assert_int_equal(st_close(s), ND_OK);
    s = open_store(path, 0, 0);
    direct_present(s, 0, 0);
    check_ranges(s, 0, w, m);

    /* Folding the fresh entries and compacting leaves one file of runs
     * per table: direct again. */
    for (unsigned t = 0; t < NTABLES; t++)
        assert_int_equal(st_table_fold(s, t, RUN_SIZE, 0, NULL, NULL, NULL, NULL), ND_OK);
    assert_int_equal(st_compact_files(s), ND_OK);
    direct_present(s, 0, 1);
    check_ranges(s, 0, w, m);
    check_ranges(s, 1, v, n);
    assert_int_equal(st_close(s), ND_OK);
    free(w);
    free(v);
    tmpdir_remove(dir);
}

/* After a fold (runs rewritten into new files), st_compact_tables makes
 * each table's runs one file again and reads them directly, while fresh
 * entries wait in the memtables; a reader made before finds it too; a
 * stopped compaction leaves the table read through RocksDB. */
static void test_compact_tables(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128];
    uint64_t *v;
    size_t n;
    st_store *s = new_store(dir, path, &v, &n, 2000);
    write_generation(s, v, n);
    for (int i = 0; i < 1000; i++) add_fresh(s, v, &n);
    for (unsigned t = 0; t < NTABLES; t++) {
        assert_int_equal(st_table_fold(s, t, RUN_SIZE, 0, NULL, NULL, NULL, NULL), ND_OK);
        direct_present(s, t, 0);
    }
    /* Fresh entries in the memtables, after the fold. */
    for (int i = 0; i < 200; i++) add_fresh(s, v, &n);
    st_reader *r = NULL;
    st_u64s got = {0};
    assert_int_equal(st_reader_new(&r, s), ND_OK);
    assert_int_equal(st_table_range(r, 0, 0, UINT64_MAX, 1, &got), ND_OK);
    assert_int_equal(got.n, n);

    st_stop_compacting(s, 1);
    assert_int_equal(st_compact_tables(s), ND_OK);
    direct_present(s, 0, 0);
    st_stop_compacting(s, 0);
    assert_int_equal(st_compact_tables(s), ND_OK);
    for (unsigned t = 0; t < NTABLES; t++) {
        direct_present(s, t, 1);
        check_ranges(s, t, v, n);
    }
    got.n = 0;
    assert_int_equal(st_table_range(r, 0, 0, UINT64_MAX, 1, &got), ND_OK);
    assert_int_equal(got.n, n);
    assert_memory_equal(got.v, v, n * sizeof *v);
    /* More fresh entries leave it direct. */
    for (int i = 0; i < 100; i++) add_fresh(s, v, &n);
    direct_present(s, 1, 1);
    check_ranges(s, 1, v, n);
    st_u64s_dispose(&got);
    st_reader_free(r);
    assert_int_equal(st_close(s), ND_OK);
    free(v);
    tmpdir_remove(dir);
}

/* What a refold's callbacks do: the first unlock (the view is taken, the
 * walk not begun) makes one write to the store. */
typedef struct interfere {
    st_store *s;
    int unlocks;
    enum { NOTHING, FRESH_INSERT, FRESH_DELETE, RUN_DELETE } what;
    uint64_t x; /* the value inserted or deleted (every table) */
} interfere;

static void refold_lock(void *p) { (void)p; }

static void refold_unlock(void *p)
{
    interfere *f = p;
    if (f->unlocks++ != 0 || f->what == NOTHING) return;
    change_everywhere(f->s, f->x, f->what == FRESH_INSERT);
}

/* Remove x from the sorted set v[0..*n) (x in it). */
static void set_remove(uint64_t *v, size_t *n, uint64_t x)
{
    size_t i = st_u64_lower_bound(v, *n, x);
    assert_true(i < *n && v[i] == x);
    memmove(v + i, v + i + 1, (*n - i - 1) * sizeof *v);
    (*n)--;
}

static uint64_t fresh_count(st_store *s, unsigned t)
{
    uint64_t c = 0;
    assert_int_equal(st_table_fresh_count(s, t, &c), ND_OK);
    return c;
}

/* The whole of table t through reader r equals v[0..n). */
static void check_all(st_reader *r, unsigned t, const uint64_t *v, size_t n)
{
    st_u64s got = {0};
    assert_int_equal(st_table_range(r, t, 0, UINT64_MAX, 1, &got), ND_OK);
    assert_int_equal(got.n, n);
    assert_memory_equal(got.v, v, n * sizeof *v);
    st_u64s_dispose(&got);
}

/* The sequential fold (st_table_refold): one file replaces the run space
 * and deletes the fresh entries it placed, and is read directly at once;
 * ranges stay exact after it (for a reader made before it too), after a
 * reopen (RocksDB reads the two files) and after compaction (direct). A fresh insert during its walk stays fresh; a fresh
 * deletion or a run-space write during it makes it give up: nothing
 * changed, and the deleted value stays deleted. */
static void test_refold(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128];
    uint64_t *v, folded = 99;
    size_t n, nf = 0;
    st_store *s = new_store(dir, path, &v, &n, 1600);
    write_generation(s, v, n);
    uint64_t in_run = v[n / 2];

    /* No fresh entries: nothing to do, the file stays direct. */
    assert_int_equal(st_table_refold(s, 0, RUN_SIZE, NULL, NULL, NULL, &folded), ND_OK);
    assert_int_equal(folded, 0);
    direct_present(s, 0, 1);

    /* About three fresh entries per run. */
    uint64_t *fv = malloc(1500 * sizeof *fv);
    assert_non_null(fv);
    for (nf = 0; nf < 1500; nf++) fv[nf] = add_fresh(s, v, &n);
    qsort(fv, nf, sizeof *fv, cmp_u64);
    st_reader *r = NULL;
    assert_int_equal(st_reader_new(&r, s), ND_OK);
    check_all(r, 0, v, n);

    interfere f = {.s = s, .what = FRESH_DELETE, .x = fv[nf / 2]};
    assert_int_equal(st_table_refold(s, 0, RUN_SIZE, refold_lock, refold_unlock, &f, &folded),
                     ND_OK);
    assert_int_equal(f.unlocks, 2);
    assert_int_equal(folded, 0);
    set_remove(v, &n, f.x);
    assert_int_equal(fresh_count(s, 0), nf - 1);
    direct_present(s, 0, 1);
    check_ranges(s, 0, v, n);
    check_all(r, 0, v, n);

    f = (interfere){.s = s, .what = RUN_DELETE, .x = in_run};
    assert_int_equal(st_table_refold(s, 0, RUN_SIZE, refold_lock, refold_unlock, &f, &folded),
                     ND_OK);
    assert_int_equal(folded, 0);
    set_remove(v, &n, in_run);
    assert_int_equal(fresh_count(s, 0), nf - 1);
    check_ranges(s, 0, v, n);
    check_all(r, 0, v, n);

    /* A fresh insert during the walk: the others are folded, it stays.
     * The file is read directly at once. */
    uint64_t y;
    size_t at;
    do {
        y = rnd();
        at = st_u64_lower_bound(v, n, y);
    } while (at < n && v[at] == y);
    f = (interfere){.s = s, .what = FRESH_INSERT, .x = y};
    assert_int_equal(st_table_refold(s, 0, RUN_SIZE, refold_lock, refold_unlock, &f, &folded),
                     ND_OK);
    assert_int_equal(folded, nf - 1);
    set_add(v, &n, y);
    assert_int_equal(fresh_count(s, 0), 1);
    direct_present(s, 0, 1);
    check_ranges(s, 0, v, n);
    check_all(r, 0, v, n);

    /* Table 1 without callbacks: all of its fresh entries. */
    assert_int_equal(st_table_refold(s, 1, RUN_SIZE, NULL, NULL, NULL, &folded), ND_OK);
    assert_int_equal(folded, nf);
    assert_int_equal(fresh_count(s, 1), 0);
    direct_present(s, 1, 1);
    check_ranges(s, 1, v, n);
    check_all(r, 1, v, n);
    st_reader_free(r);

    /* Reopened, two files hold run keys (the older under the range
     * deletion): RocksDB reads them, exactly; compacted, one file again. */
    assert_int_equal(st_close(s), ND_OK);
    s = open_store(path, 0, 0);
    assert_int_equal(fresh_count(s, 0), 1);
    for (unsigned t = 0; t < NTABLES; t++) {
        direct_present(s, t, 0);
        check_ranges(s, t, v, n);
    }
    assert_int_equal(st_compact_tables(s), ND_OK);
    for (unsigned t = 0; t < NTABLES; t++) {
        direct_present(s, t, 1);
        check_ranges(s, t, v, n);
    }
    assert_int_equal(st_close(s), ND_OK);
    free(fv);
    free(v);
    tmpdir_remove(dir);
}

/* Ranges of a cursor from lo up, steps of a few runs, until above stop
 * (0: to the end), each equal to the brute-force one over want[0..n);
 * returns where the next range would start (0: the end was reached). */
static uint64_t cursor_ranges(st_cursor *c, uint64_t lo, uint64_t stop, const uint64_t *want,
                              size_t n)
{
    st_u64s got = {0};
    for (;;) {
        uint64_t hi = lo + (rnd() >> 14);
        if (hi < lo) hi = UINT64_MAX;
        got.n = 0;
        assert_int_equal(st_cursor_range(c, lo, hi, &got), ND_OK);
        check_range(&got, want, n, lo, hi);
        uint64_t next = hi + 1 + (rnd() >> 20);
        if (hi == UINT64_MAX || next <= hi) {
            lo = 0;
            break;
        }
        lo = next;
        if (stop && lo > stop) break;
    }
    st_u64s_dispose(&got);
    return lo;
}

/* A cursor reads fresh entries from the mirror, which follows the store,
 * not the cursor's snapshot: a fold during its walk moves fresh entries
 * into runs that the cursor (reading the snapshot's runs) does not see.
 * Each of its ranges still equals the set as of its creation, every value
 * once: across the sequential fold (table 0, whose runs the cursor reads
 * from the old file), a fold run by run (table 1), and writes after the
 * fold (a run value removed, a fresh value added). */
static void test_cursor_across_folds(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128];
    uint64_t *v, folded = 0;
    size_t n;
    st_store *s = new_store(dir, path, &v, &n, 1600);
    write_generation(s, v, n);
    for (int i = 0; i < 1500; i++) add_fresh(s, v, &n);
    uint64_t *snap = malloc((n + 2 * NTABLES) * sizeof *snap), last = 0;
    assert_non_null(snap);
    memcpy(snap, v, n * sizeof *v);
    size_t nsnap = n;

    for (unsigned t = 0; t < NTABLES; t++) {
        for (int scan = 0; scan <= 1; scan++) {
            st_cursor *c = NULL;
            assert_int_equal(st_cursor_new(&c, s, t, scan), ND_OK);
            uint64_t lo = cursor_ranges(c, 0, UINT64_MAX / 2, snap, nsnap);
            assert_true(lo > 0);
            if (scan == 0) {
                uint64_t had = fresh_count(s, t);
                assert_true(had >= 1500);
                if (t == 0)
                    assert_int_equal(st_table_refold(s, t, RUN_SIZE, NULL, NULL, NULL, &folded),
                                     ND_OK);
                else
                    assert_int_equal(st_table_fold(s, t, RUN_SIZE, 0, NULL, NULL, NULL, &folded),
                                     ND_OK);
                assert_int_equal(folded, had);
                assert_int_equal(fresh_count(s, t), 0);
            } else { /* the runs change again: a value above lo leaves */
                size_t i = st_u64_lower_bound(v, n, lo + (UINT64_MAX - lo) / 2);
                if (i < n && v[i] == last) i++; /* the one fresh entry */
                assert_true(i < n);
                change_everywhere(s, v[i], 0);
                set_remove(v, &n, v[i]);
            }
            last = add_fresh(s, v, &n); /* after the snapshot: not seen */
            assert_int_equal(cursor_ranges(c, lo, 0, snap, nsnap), 0);
            st_cursor_free(c);
            /* A new cursor sees the store as it is now. */
            check_cursor(s, t, v, n, scan);
            memcpy(snap, v, n * sizeof *v);
            nsnap = n;
        }
    }
    assert_int_equal(st_close(s), ND_OK);
    free(snap);
    free(v);
    tmpdir_remove(dir);
}

/* The .sst files of dir that open as direct readers (table runs). */
static size_t run_files(const char *dir, char names[][256], size_t cap)
{
    size_t k = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) && k < cap;) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".sst") != 0) continue;
        cmp_direct *c = NULL;
        snprintf(names[k], 256, "%s/%s", dir, e->d_name);
        assert_int_equal(cmp_direct_open(&c, names[k], 0, 0, 0), ND_OK);
        if (c) k++;
        cmp_direct_unref(c);
    }
    closedir(d);
    return k;
}

static void copy_file(const char *from, const char *to, long flip_at)
{
    FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
    assert_non_null(f);
    assert_non_null(g);
    long i = 0;
    for (int c; (c = fgetc(f)) != EOF; i++) fputc(i == flip_at ? c ^ 0x10 : c, g);
    fclose(f);
    fclose(g);
}

/* Walk every run of a direct reader: 1 if all read, else the error. */
static int walk_all(cmp_direct *d)
{
    cmp_direct_it it;
    uint64_t tail;
    const char *val;
    size_t vlen;
    cmp_direct_buf buf = {0};
    int rc = cmp_direct_seek(d, 0, 0, &buf, &it);
    while (rc == ND_OK && (rc = cmp_direct_next(&it, &tail, &val, &vlen)) == 1) rc = ND_OK;
    free(buf.p);
    return rc;
}

/* new_store's store whose tables hold one generation of its values,
 * closed; names receives the run files of its tables (checked to be
 * exactly NTABLES). */
static void written_store(char *dir, char *path, char names[8][256], uint64_t **v, size_t *n)
{
    st_store *s = new_store(dir, path, v, n, 0);
    write_generation(s, *v, *n);
    assert_int_equal(st_close(s), ND_OK);
    /* Exactly the two tables' files are run files (docs, rev, meta are
     * not: other keys, compression). */
    assert_int_equal(run_files(path, names, 8), NTABLES);
}

/* Tail of the run a seek at x stands on (the first whose tail is >= x). */
static uint64_t seek_tail(cmp_direct *d, cmp_direct_buf *buf, uint64_t x)
{
    cmp_direct_it it;
    uint64_t tail;
    const char *val;
    size_t vlen;
    assert_int_equal(cmp_direct_seek(d, x, 0, buf, &it), ND_OK);
    assert_int_equal(cmp_direct_next(&it, &tail, &val, &vlen), 1);
    return tail;
}

/* A probe buffer serves a block it holds again (a k=6 query's flipped
 * prefixes often fall into the block just read) and reads the file for
 * any other block, of the same file or another; the runs found are the
 * same either way. */
static void test_block_reuse(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128], names[8][256];
    uint64_t *v;
    size_t n;
    written_store(dir, path, names, &v, &n);
    cmp_direct *d = NULL, *e = NULL;
    assert_int_equal(cmp_direct_open(&d, names[0], 0, 0, 0), ND_OK);
    assert_int_equal(cmp_direct_open(&e, names[1], 0, 0, 0), ND_OK);
    assert_non_null(d);
    assert_non_null(e);
    assert_true(cmp_direct_blocks(d) > 2);
    cmp_direct_buf buf = {0}, fresh = {0};
    /* A value inside a run (not its tail) whose seek reads one block: a
     * seek reads two when a shortened index separator sends it to the
     * block before its run's, which depends on the data. */
    size_t i = n / 3;
    for (;; i++) {
        fresh.wd = NULL;
        fresh.reads = 0;
        if (seek_tail(d, &fresh, v[i]) != v[i] && fresh.reads == 1) break;
    }
    fresh.reads = 0;
    uint64_t t1 = seek_tail(d, &buf, v[i]);
    assert_int_equal(buf.reads, 1);
    assert_true(t1 >= v[i]);
    /* The next value: the same run, so the same block; no read. */
    assert_int_equal(seek_tail(d, &buf, v[i + 1]), t1);
    assert_int_equal(buf.reads, 1);
    /* The last value: another block. */
    assert_int_equal(seek_tail(d, &buf, v[n - 1]), v[n - 1]);
    assert_int_equal(buf.reads, 2);
    /* Back: read again; the same run as a buffer that holds nothing. */
    assert_int_equal(seek_tail(d, &buf, v[i]), t1);
    assert_int_equal(buf.reads, 3);
    fresh.wd = NULL;
    assert_int_equal(seek_tail(d, &fresh, v[i]), t1);
    assert_int_equal(fresh.reads, 1);
    /* The same offset in another file is another block. */
    uint64_t te = seek_tail(e, &fresh, v[i]);
    assert_int_equal(fresh.reads, 2);
    assert_true(te >= v[i]);
    free(buf.p);
    free(fresh.p);
    cmp_direct_unref(d);
    cmp_direct_unref(e);
    free(v);
    tmpdir_remove(dir);
}

/* The tails of the runs a probe's walk from lo visits: up to the first
 * whose tail is >= hi, told to the reader as until (or not: 0).
 * Returns how many; ND_ECORRUPT etc. as a negative count. */
static long walk_range(cmp_direct *d, cmp_direct_buf *buf, uint64_t lo, uint64_t hi,
                       uint64_t until, uint64_t *tails, size_t cap)
{
    cmp_direct_it it;
    uint64_t tail;
    const char *val;
    size_t vlen, n = 0;
    int rc = cmp_direct_seek(d, lo, until, buf, &it);
    while (rc == ND_OK && (rc = cmp_direct_next(&it, &tail, &val, &vlen)) == 1) {
        assert_true(n < cap);
        tails[n++] = tail;
        rc = ND_OK;
        if (tail >= hi) break;
    }
    return rc < 0 ? rc : (long)n;
}

/* A probe whose runs fill several blocks reads them at once when the
 * reader knows where its walk stops; the runs are those of a walk a
 * block at a time. A range past 64 KB reads in several steps; every
 * block read so is still checksummed. */
static void test_span_read(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128], copy[160], names[8][256];
    uint64_t *v;
    size_t n;
    written_store(dir, path, names, &v, &n);
    cmp_direct *d = NULL;
    assert_int_equal(cmp_direct_open(&d, names[0], 0, 0, 0), ND_OK);
    assert_non_null(d);
    uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    cmp_direct_buf one = {0}, span = {0};
    /* About 3 KB of runs: several blocks. */
    uint64_t lo = v[n / 4], hi = v[n / 4 + 600];
    long na = walk_range(d, &one, lo, hi, 0, a, n);
    assert_true(na > 0);
    assert_true(one.reads >= 3);
    long nb = walk_range(d, &span, lo, hi, hi, b, n);
    assert_int_equal(nb, na);
    assert_memory_equal(a, b, (size_t)na * sizeof *a);
    assert_int_equal(span.reads, 1);
    /* A probe within one block reads one block's bytes. */
    span.wd = NULL;
    span.reads = 0;
    assert_true(walk_range(d, &span, lo, lo, lo, b, n) > 0);
    assert_int_equal(span.reads, 1);
    assert_true(span.wlen < 4096);
    /* The whole file: in steps of at most 64 KB. */
    struct stat st;
    assert_int_equal(stat(names[0], &st), 0);
    one = (cmp_direct_buf){.p = one.p, .cap = one.cap};
    span = (cmp_direct_buf){.p = span.p, .cap = span.cap};
    na = walk_range(d, &one, v[0], v[n - 1], 0, a, n);
    nb = walk_range(d, &span, v[0], v[n - 1], v[n - 1], b, n);
    assert_int_equal(nb, na);
    assert_memory_equal(a, b, (size_t)na * sizeof *a);
    assert_true(span.reads >= (uint64_t)st.st_size / 65536);
    assert_true(span.reads <= (uint64_t)st.st_size / 65536 + 2);
    assert_true(span.reads * 8 < one.reads);
    /* A flipped byte in the middle of the file (a data block): found. */
    snprintf(copy, sizeof copy, "%s/copy.sst", dir);
    copy_file(names[0], copy, (long)st.st_size / 2);
    cmp_direct *c = NULL;
    assert_int_equal(cmp_direct_open(&c, copy, 0, 0, 0), ND_OK);
    assert_non_null(c);
    span.wd = NULL;
    assert_int_equal(walk_range(c, &span, v[0], v[n - 1], v[n - 1], b, n), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "checksum"));
    cmp_direct_unref(c);
    free(one.p);
    free(span.p);
    free(a);
    free(b);
    cmp_direct_unref(d);
    free(v);
    tmpdir_remove(dir);
}

/* The direct reader of run file path, read through a mapping or not. */
static cmp_direct *opened(const char *path, int map)
{
    cmp_direct *d = NULL;
    assert_int_equal(cmp_direct_open(&d, path, 0, 0, map), ND_OK);
    assert_non_null(d);
    return d;
}

static void test_damaged_and_foreign(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128], copy[160], names[8][256];
    uint64_t *v;
    size_t n;
    written_store(dir, path, names, &v, &n);
    cmp_direct *d = NULL, *good = NULL;
    assert_int_equal(cmp_direct_open(&good, names[0], 0, 0, 0), ND_OK);
    assert_int_equal(walk_all(good), 0);

    /* A flipped byte in a data block: found by the block's checksum when
     * a walk reaches it; and by a probe whose buffer holds the same block
     * of the intact file, checked (another file's bytes are checked anew). */
    snprintf(copy, sizeof copy, "%s/copy.sst", dir);
    copy_file(names[0], copy, 100);
    assert_int_equal(cmp_direct_open(&d, copy, 0, 0, 0), ND_OK);
    assert_non_null(d);
    assert_int_equal(walk_all(d), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "checksum"));
    cmp_direct_buf buf = {0};
    cmp_direct_it it;
    assert_int_equal(cmp_direct_seek(good, 0, 0, &buf, &it), ND_OK);
    assert_int_equal(cmp_direct_seek(good, 0, 0, &buf, &it), ND_OK);
    assert_int_equal(buf.reads, 1);
    assert_int_equal(cmp_direct_seek(d, 0, 0, &buf, &it), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "checksum"));
    free(buf.p);
    cmp_direct_unref(good);
    cmp_direct_unref(d);

    /* Mapped, the same: the walk finds the flipped byte. */
    d = opened(copy, 1);
    assert_int_equal(walk_all(d), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "checksum"));
    cmp_direct_unref(d);

    /* A flipped byte in the magic number: refused at open. */
    struct stat st;
    assert_int_equal(stat(names[0], &st), 0);
    copy_file(names[0], copy, (long)st.st_size - 3);
    assert_int_equal(cmp_direct_open(&d, copy, 0, 0, 0), ND_ECORRUPT);
    assert_null(d);

    /* A format this reader does not know is not an error: open says so
     * with no reader, and RocksDB reads the file. Another table format
     * version in the footer (5 -> 21), another checksum type (XXH3 ->
     * 20). */
    copy_file(names[0], copy, (long)st.st_size - 12);
    assert_int_equal(cmp_direct_open(&d, copy, 0, 0, 0), ND_OK);
    assert_null(d);
    copy_file(names[0], copy, (long)st.st_size - 53);
    assert_int_equal(cmp_direct_open(&d, copy, 0, 0, 0), ND_OK);
    assert_null(d);

    /* A missing file. */
    snprintf(copy, sizeof copy, "%s/absent.sst", dir);
    assert_int_equal(cmp_direct_open(&d, copy, 0, 0, 0), ND_EIO);
    assert_null(d);
    assert_int_equal(cmp_direct_open(&d, copy, 0, 0, 1), ND_EIO);
    assert_null(d);
    free(v);
    tmpdir_remove(dir);
}

/* A file read through a mapping gives the runs a pread gives, seek by
 * seek and in a walk of the whole file, without a read into the buffer;
 * and each look at a mapped block checks it again: bytes changed in the
 * file after a first look (the mapping shows them) are found at the
 * next, where a buffer that holds the block serves it unread. */
static void test_mapped_reads(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128], copy[160], names[8][256];
    uint64_t *v;
    size_t n;
    written_store(dir, path, names, &v, &n);
    cmp_direct *d = opened(names[0], 0), *m = opened(names[0], 1);
    assert_int_equal(cmp_direct_blocks(m), cmp_direct_blocks(d));
    cmp_direct_buf bd = {0}, bm = {0};
    for (int q = 0; q < 1200; q++) { /* 200 of each shape */
        uint64_t x = q % 2 ? v[rnd() % n] : rnd();
        if (x > v[n - 1]) continue;
        assert_int_equal(seek_tail(m, &bm, x), seek_tail(d, &bd, x));
    }
    assert_null(bm.p); /* nothing read into it */
    uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    long na = walk_range(d, &bd, v[0], v[n - 1], v[n - 1], a, n);
    long nb = walk_range(m, &bm, v[0], v[n - 1], v[n - 1], b, n);
    assert_true(na > (long)(n / RUN_SIZE));
    assert_int_equal(nb, na);
    assert_memory_equal(a, b, (size_t)na * sizeof *a);
    cmp_direct_unref(m);

    /* A copy, mapped and read by pread, each with a buffer that looked at
     * the block of v[n / 2]; then one of that block's bytes flips. */
    snprintf(copy, sizeof copy, "%s/copy.sst", dir);
    copy_file(names[0], copy, -1);
    cmp_direct *c = opened(copy, 0);
    m = opened(copy, 1);
    uint64_t x = v[n / 2];
    cmp_direct_buf bc = {0};
    uint64_t tail = seek_tail(c, &bc, x);
    assert_int_equal(seek_tail(m, &bm, x), tail);
    assert_int_equal(bc.reads, 1);
    /* The block's first byte: the run's key, where bc holds the block. */
    FILE *f = fopen(copy, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)bc.woff, SEEK_SET), 0);
    int ch = fgetc(f);
    assert_int_equal(fseek(f, (long)bc.woff, SEEK_SET), 0);
    fputc(ch ^ 0x10, f);
    assert_int_equal(fclose(f), 0);
    cmp_direct_it it;
    assert_int_equal(cmp_direct_seek(m, x, 0, &bm, &it), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "checksum"));
    assert_int_equal(seek_tail(c, &bc, x), tail); /* held, not read again */
    assert_int_equal(bc.reads, 1);
    free(bc.p);
    free(bd.p);
    free(a);
    free(b);
    cmp_direct_unref(c);
    cmp_direct_unref(m);
    cmp_direct_unref(d);
    free(v);
    tmpdir_remove(dir);
}

/* Readers race a writer that removes values from runs (the first removal
 * drops the table's direct reader mid-read): every range read holds all
 * values never removed and nothing never stored. */
typedef struct race {
    st_store *s;
    const uint64_t *v;      /* stored at the start */
    size_t n;
    const unsigned char *removable; /* v[i] may be removed while reading */
    atomic_int stop;
    int bad;
} race;

static void *race_reader(void *arg)
{
    race *r = arg;
    st_reader *rd = NULL;
    st_u64s got = {0};
    oracle_rng own = {(uint64_t)(uintptr_t)&got}; /* this thread's own */
    if (st_reader_new(&rd, r->s) != ND_OK) {
        r->bad = 1;
        return NULL;
    }
    while (!atomic_load(&r->stop) && !r->bad) {
        uint64_t lo = oracle_next(&own), hi = lo + (oracle_next(&own) >> 18);
        if (hi < lo) hi = UINT64_MAX;
        got.n = 0;
        if (st_table_range(rd, 0, lo, hi, 1, &got) != ND_OK) r->bad = 2;
        size_t a = st_u64_lower_bound(r->v, r->n, lo), j = 0;
        for (size_t i = a; i < r->n && r->v[i] <= hi; i++) {
            while (j < got.n && got.v[j] < r->v[i]) j++, r->bad |= 4; /* never stored */
            int found = j < got.n && got.v[j] == r->v[i];
            if (found) j++;
            else if (!r->removable[i]) r->bad |= 8; /* lost */
        }
        if (j != got.n) r->bad |= 4;
    }
    st_u64s_dispose(&got);
    st_reader_free(rd);
    return NULL;
}

static void test_race_with_removals(void **state)
{
    (void)state;
    NEED_DIRECT();
    char dir[64], path[128];
    size_t cap = 40000;
    uint64_t *v = malloc(cap * sizeof *v);
    unsigned char *removable = calloc(cap, 1);
    assert_non_null(v);
    assert_non_null(removable);
    size_t n = make_values(v, cap);
    for (size_t i = 0; i < n; i += 7) removable[i] = 1;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    st_store *s = open_store(path, 1, 0);
    write_generation(s, v, n);
    direct_present(s, 0, 1);
    race r = {.s = s, .v = v, .n = n, .removable = removable};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, race_reader, &r), 0);
    for (size_t i = 0; i < n; i += 7) {
        st_batch *b = NULL;
        assert_int_equal(st_batch_new(&b, s), ND_OK);
        assert_int_equal(st_table_remove(s, b, 0, v[i]), ND_OK);
        assert_int_equal(st_write(s, b, 0), ND_OK);
        st_batch_free(b);
    }
    atomic_store(&r.stop, 1);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_int_equal(r.bad, 0);
    direct_present(s, 0, 0);
    size_t m = 0; /* what is left: exactly the values never removed */
    for (size_t i = 0; i < n; i++)
        if (!removable[i]) v[m++] = v[i];
    check_ranges(s, 0, v, m);
    assert_int_equal(st_close(s), ND_OK);
    free(removable);
    free(v);
    tmpdir_remove(dir);
}

/* The RocksDB versions the direct reader knows: the tested range only (a
 * minor of 100 or more never passes for another version), or a range a
 * test sets. */
static void test_supported_versions(void **state)
{
    (void)state;
    assert_true(cmp_direct_supports(7, 8));
    assert_false(cmp_direct_supports(7, 7));
    assert_false(cmp_direct_supports(7, 9));
    assert_false(cmp_direct_supports(8, 0));
    assert_false(cmp_direct_supports(9, 10));
    assert_false(cmp_direct_supports(6, 108));
    assert_false(cmp_direct_supports(0, 0));
    cmp_direct_set_supported(706, 710);
    assert_true(cmp_direct_supports(7, 6));
    assert_true(cmp_direct_supports(7, 10));
    assert_false(cmp_direct_supports(7, 11));
    cmp_direct_set_supported(1, 0); /* none */
    assert_false(cmp_direct_supports(7, 8));
    cmp_direct_set_supported(CMP_DIRECT_ROCKSDB_MIN, CMP_DIRECT_ROCKSDB_MAX);
}

/* Under a RocksDB version the reader was not tested with, a store makes
 * no direct reader: not at open, nor after an import's switch, a refold
 * or a compaction; range reads and cursors give the same answers through
 * RocksDB. Back in the range, the same files are read directly again. */
static void test_untested_version(void **state)
{
    (void)state;
    char dir[64], path[128];
    uint64_t *v, folded = 0;
    size_t n;
    int tested = direct_tested();
    cmp_direct_set_supported(1, 0);
    st_store *s = new_store(dir, path, &v, &n, 100);
    write_generation(s, v, n);
    for (unsigned t = 0; t < NTABLES; t++) {
        direct_present(s, t, 0);
        check_ranges(s, t, v, n);
    }
    for (int i = 0; i < 50; i++) add_fresh(s, v, &n);
    assert_int_equal(st_table_refold(s, 0, RUN_SIZE, NULL, NULL, NULL, &folded), ND_OK);
    assert_int_equal(folded, 50);
    assert_int_equal(st_compact_tables(s), ND_OK);
    for (unsigned t = 0; t < NTABLES; t++) {
        direct_present(s, t, 0);
        check_ranges(s, t, v, n);
    }
    assert_int_equal(st_close(s), ND_OK);
    s = open_store(path, 0, 1);
    direct_present(s, 0, 0);
    check_ranges(s, 0, v, n);
    assert_int_equal(st_close(s), ND_OK);
    cmp_direct_set_supported(CMP_DIRECT_ROCKSDB_MIN, CMP_DIRECT_ROCKSDB_MAX);
    s = open_store(path, 0, 1);
    direct_present(s, 0, tested);
    check_ranges(s, 0, v, n);
    assert_int_equal(st_close(s), ND_OK);
    free(v);
    tmpdir_remove(dir);
}

/* Tests of stores that read by pread, again with mapped tables. */
#define MAPPED(test)                                                                         \
    static void test##_mapped(void **state)                                                  \
    {                                                                                        \
        mapped = 1;                                                                          \
        test(state);                                                                         \
        mapped = 0;                                                                          \
    }
MAPPED(test_lifecycle)
MAPPED(test_compact_tables)
MAPPED(test_refold)
MAPPED(test_race_with_removals)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lifecycle),
        cmocka_unit_test(test_compact_tables),
        cmocka_unit_test(test_refold),
        cmocka_unit_test(test_damaged_and_foreign),
        cmocka_unit_test(test_block_reuse),
        cmocka_unit_test(test_span_read),
        cmocka_unit_test(test_race_with_removals),
        cmocka_unit_test(test_mapped_reads),
        cmocka_unit_test(test_lifecycle_mapped),
        cmocka_unit_test(test_compact_tables_mapped),
        cmocka_unit_test(test_refold_mapped),
        cmocka_unit_test(test_race_with_removals_mapped),
        /* last: the tests above draw their data from one generator */
        cmocka_unit_test(test_cursor_across_folds),
        cmocka_unit_test(test_supported_versions),
        cmocka_unit_test(test_untested_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
