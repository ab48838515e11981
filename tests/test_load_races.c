/*
 * test_load_races.c — the bulk loader (nd_loader_*) beside other writers,
 * its temporary files and its errors (the model and checks of
 * load_model.h; exactness: test_load.c).
 *
 * Another writer storing a spilled key before the commit is overridden by
 * the loader's document, also when the load holds that key again in a
 * later chunk (spilled after the other writer's store, or the last one):
 * then the later document wins, and when the other writer stored the
 * loader's own fingerprint; a key of the unspilled last chunk stored
 * by another writer is replaced too. A key stored before the load,
 * replaced at its spill and stored again by another writer keeps the other
 * writer's document.
 *
 * Temporary files: spills go to an "nd-load-*" directory in the database
 * directory; nd_loader_free (with or without commit) leaves no "nd-load-*"
 * entry; free without commit drops every new document but keeps the
 * replacements written at spills. A stale "nd-load-*" directory is removed
 * by the next writable nd_db_open and left alone by a read-only one.
 *
 * Errors: a chunk file lost before the commit fails it with ND_EIO naming
 * the file, whichever pass (and thread) reads it, and the store keeps what
 * it held; add after commit and a second commit give ND_EINVAL; a read-only
 * handle gives ND_EREADONLY; a key over ND_MAX_KEY_LEN gives ND_ELIMIT and
 * adds nothing of that call (the loader goes on); NULL docs give
 * ND_EINVAL; an empty key is refused as nd_db_import refuses it;
 * nd_loader_free(NULL) is a no-op; an empty load commits nothing.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_fixture.h"
#include "load_model.h"
#include "neardup.h"
#include "oracle.h"
#include "tmpdir.h"

/* ---- another writer between the spill and the commit ------------------ */

/* Name of x among fp[0..n) for a message. */
static const char *fp_name(const uint64_t *fp, const char *const *names, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (fp[i] == x) return names[i];
    return "?";
}

/* Each key's stored fingerprint is fp[want]; every mismatch is printed
 * before the assertion fails. */
typedef struct want_fp {
    const char *key;
    int want;
} want_fp;

static void assert_wins(nd_db *db, const want_fp *w, size_t n, const uint64_t *fp,
                        const char *const *names, size_t nf)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t got = get_fp(db, w[i].key);
        if (got != fp[w[i].want]) {
            fprintf(stderr, "racing writer: %s holds %s, want %s\n", w[i].key,
                    fp_name(fp, names, nf, got), names[w[i].want]);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* K is spilled (written to the loader's files, not stored), then another
 * writer stores K; c1 is added to the loader (last chunk, unspilled), then
 * another writer stores it: after the commit both hold the loader's
 * document. S, stored before the load, is replaced when its chunk spills
 * and stored again by the other writer afterwards. */
static void test_racing_writer(void **state)
{
    db_fixture *fx = *state;
    enum { L, S0, S1, X, Y, W, CC, O1, A1, A2, B1, B2, B3, B4, C2, NF };
    static const char *const names[NF] = {"L",  "S0", "S1", "X",  "Y",  "W",  "CC", "O1",
                                          "A1", "A2", "B1", "B2", "B3", "B4", "C2"};
    uint64_t fp[NF];
    random_fps(fp, NF, 33);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 16);
    model m = {0};
    dadd(db, &m, "S", fp[S0], 0, 0);
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    /* chunk 1 spills: K new (to the files), S stored (replaced now) */
    nd_doc c1[4] = {{"K", 1, fp[L], 1, 1}, {"S", 1, fp[S1], 1, 1}, {"a1", 2, fp[A1], 1, 1},
                    {"a2", 2, fp[A2], 1, 1}};
    assert_int_equal(nd_loader_add(l, c1, 4), ND_OK);
    assert_true(get_fp(db, "S") == fp[S1]);
    assert_absent(db, "K");
    /* the other writer, after the spill */
    assert_int_equal(nd_db_add(db, "K", 1, fp[X], 2, 2), ND_OK);
    assert_int_equal(nd_db_add(db, "S", 1, fp[Y], 2, 2), ND_OK);
    dadd(db, &m, "o1", fp[O1], 2, 2); /* unrelated: stays */
    /* chunk 2 spills */
    nd_doc c2[4] = {{"b1", 2, fp[B1], 3, 3}, {"b2", 2, fp[B2], 3, 3}, {"b3", 2, fp[B3], 3, 3},
                    {"b4", 2, fp[B4], 3, 3}};
    assert_int_equal(nd_loader_add(l, c2, 4), ND_OK);
    /* the last chunk (unspilled); the other writer stores c1 meanwhile */
    nd_doc c3[2] = {{"c1", 2, fp[CC], 4, 4}, {"c2", 2, fp[C2], 4, 4}};
    assert_int_equal(nd_loader_add(l, c3, 2), ND_OK);
    assert_int_equal(nd_db_add(db, "c1", 2, fp[W], 5, 5), ND_OK);
    uint64_t nw = 0;
    expect_ok(nd_loader_finish(&nw, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    expect_ok(nd_db_verify(db), "verify");

    const want_fp wins[] = {{"K", L}, {"c1", CC}, {"c2", C2}, {"a1", A1}, {"b1", B1}};
    assert_wins(db, wins, sizeof wins / sizeof *wins, fp, names, NF);
    double sc;
    int64_t tm;
    get_score_time(db, "K", &sc, &tm);
    assert_true(sc == 1);
    assert_int_equal(tm, 1);
    get_score_time(db, "c1", &sc, &tm);
    assert_true(sc == 4);
    assert_int_equal(tm, 4);
    /* S: the loader replaced it in the store at its spill; the other
     * writer's later store of it stands (the contract's "a key the loader
     * replaced in the store keeps whatever another writer stores after
     * that replacement"). */
    uint64_t s_fp = get_fp(db, "S");
    assert_true(s_fp == fp[Y]);
    model_put_docs(&m, c1, 4);
    model_put_docs(&m, c2, 4);
    model_put_docs(&m, c3, 2);
    model_put(&m, "S", fp[Y], 2, 2);
    const int gone[] = {S0, X, W};
    assert_gone(db, fp, gone, sizeof gone / sizeof *gone);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* As above, but the spilled key comes again later in the load, after the
 * other writer stored it: the later document must win. K2: in chunk 1,
 * and in chunk 2, which spills after the other writer stored K2 (so chunk
 * 2's document replaces it then). K3: in chunk 1, and in the unspilled
 * last chunk (stored by then, so replaced at the commit). */
static void test_racing_writer_superseded(void **state)
{
    db_fixture *fx = *state;
    enum { Z1, Z2, Z, T1, T2, T, A1, A2, B1, B2, B3, C1, NF };
    static const char *const names[NF] = {"Z1", "Z2", "Z",  "T1", "T2", "T",
                                          "A1", "A2", "B1", "B2", "B3", "C1"};
    uint64_t fp[NF];
    random_fps(fp, NF, 34);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 16);
    model m = {0};
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    /* chunk 1 spills: K2, K3 new (to the files) */
    nd_doc c1[4] = {{"K2", 2, fp[Z1], 1, 1}, {"K3", 2, fp[T1], 1, 1}, {"a1", 2, fp[A1], 1, 1},
                    {"a2", 2, fp[A2], 1, 1}};
    assert_int_equal(nd_loader_add(l, c1, 4), ND_OK);
    /* the other writer */
    assert_int_equal(nd_db_add(db, "K2", 2, fp[Z], 2, 2), ND_OK);
    assert_int_equal(nd_db_add(db, "K3", 2, fp[T], 2, 2), ND_OK);
    /* chunk 2 spills: K2 is stored by now, so it is replaced now */
    nd_doc c2[4] = {{"K2", 2, fp[Z2], 3, 3}, {"b1", 2, fp[B1], 3, 3}, {"b2", 2, fp[B2], 3, 3},
                    {"b3", 2, fp[B3], 3, 3}};
    assert_int_equal(nd_loader_add(l, c2, 4), ND_OK);
    assert_true(get_fp(db, "K2") == fp[Z2]);
    /* the last chunk (unspilled): K3 again */
    nd_doc c3[2] = {{"K3", 2, fp[T2], 4, 4}, {"c1", 2, fp[C1], 4, 4}};
    assert_int_equal(nd_loader_add(l, c3, 2), ND_OK);
    uint64_t nw = 0;
    expect_ok(nd_loader_finish(&nw, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    expect_ok(nd_db_verify(db), "verify");

    const want_fp wins[] = {{"K2", Z2}, {"K3", T2}, {"a1", A1}, {"b1", B1}, {"c1", C1}};
    assert_wins(db, wins, sizeof wins / sizeof *wins, fp, names, NF);
    model_put_docs(&m, c1, 4);
    model_put_docs(&m, c2, 4);
    model_put_docs(&m, c3, 2);
    const int gone[] = {Z1, Z, T1, T};
    assert_gone(db, fp, gone, sizeof gone / sizeof *gone);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* The other writer stores a spilled key with the loader's own fingerprint:
 * its rev entry is the one the loader's document would write. rev after
 * docs leaves the loader's entry out (the key is replaced after the
 * switch); a rev written beside docs as if nothing were left out meets
 * the stored entry, which must not fail the commit. The loader's score
 * and time win. */
static void test_racing_writer_same_fp(void **state)
{
    db_fixture *fx = *state;
    enum { L, A1, A2, B1, NF };
    uint64_t fp[NF];
    random_fps(fp, NF, 35);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 16);
    model m = {0};
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 2), ND_OK);
    nd_doc c1[2] = {{"K", 1, fp[L], 1, 1}, {"a1", 2, fp[A1], 1, 1}};
    assert_int_equal(nd_loader_add(l, c1, 2), ND_OK); /* spilled */
    assert_int_equal(nd_db_add(db, "K", 1, fp[L], 2, 2), ND_OK);
    nd_doc c2[2] = {{"a2", 2, fp[A2], 3, 3}, {"b1", 2, fp[B1], 3, 3}};
    assert_int_equal(nd_loader_add(l, c2, 2), ND_OK);
    uint64_t nw = 0;
    expect_ok(nd_loader_finish(&nw, l), "nd_loader_finish");
    nd_loader_free(l);
    assert_int_equal(nw, 3); /* K was stored by the commit */
    expect_ok(nd_db_verify(db), "verify");
    double sc;
    int64_t tm;
    get_score_time(db, "K", &sc, &tm);
    assert_true(sc == 1);
    assert_int_equal(tm, 1);
    model_put_docs(&m, c1, 2);
    model_put_docs(&m, c2, 2);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* ---- free without commit; temporary files ----------------------------- */

static void test_free_without_commit(void **state)
{
    db_fixture *fx = *state;
    char key[16];
    enum { S1, S2, S3, A, B, NEW0, NF = NEW0 + 9 };
    uint64_t fp[NF];
    random_fps(fp, NF, 44);
    nd_db *db = fx->db = open_db(fx->path, K, 0, 0);
    model m = {0};
    nd_doc pre[2] = {{"S1", 2, fp[S1], 0, 0}, {"S2", 2, fp[S2], 0, 0}};
    assert_int_equal(nd_db_import(db, pre, 2), ND_OK);
    model_put(&m, "S1", fp[S1], 0, 0);
    model_put(&m, "S2", fp[S2], 0, 0);
    dadd(db, &m, "S3", fp[S3], 0, 0);

    /* A loader freed at once leaves nothing behind. */
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);

    /* One spill (S1 replaced then), an unspilled rest (S2), no commit. */
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    ladd(l, NULL, "S1", fp[A], 1, 1);
    model_put(&m, "S1", fp[A], 1, 1); /* the replacement stays */
    for (int i = 0; i < 3; i++) {
        sprintf(key, "n%d", i);
        ladd(l, NULL, key, fp[NEW0 + i], 1, 1);
    }
    assert_int_equal(count_load_dirs(fx->path), 1);
    ladd(l, NULL, "S2", fp[B], 1, 1);
    ladd(l, NULL, "n3", fp[NEW0 + 3], 1, 1);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    for (int i = 0; i < 4; i++) {
        sprintf(key, "n%d", i);
        assert_absent(db, key);
        assert_int_equal(count_at(db, fp[NEW0 + i]), 0);
    }
    assert_true(get_fp(db, "S1") == fp[A]);
    assert_true(get_fp(db, "S2") == fp[S2]);
    assert_true(get_fp(db, "S3") == fp[S3]);
    assert_int_equal(count_at(db, fp[B]), 0);
    check_hand(fx, &m, fp, NF, 0);

    /* Commit, then free: nothing left either. */
    assert_int_equal(nd_loader_new(&l, db, 4), ND_OK);
    for (int i = 4; i < 9; i++) {
        sprintf(key, "n%d", i);
        ladd(l, &m, key, fp[NEW0 + i], 2, 2);
    }
    uint64_t nw = 0;
    assert_int_equal(nd_loader_finish(&nw, l), ND_OK);
    assert_int_equal(nw, 5);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    check_hand(fx, &m, fp, NF, 1);
    free(m.d);
}

/* The loader's directory into out ("" when there is none). */
static void load_dir_of(const char *db_path, char *out, size_t cap)
{
    DIR *d = opendir(db_path);
    assert_non_null(d);
    out[0] = '\0';
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "nd-load-", 8) == 0) snprintf(out, cap, "%s/%s", db_path, e->d_name);
    closedir(d);
}

/* A load set up to fail: a database at fx->path holding one document
 * ("x"), a loader into it of chunks of 4, and n documents "k0".. with
 * random fingerprints. */
typedef struct failing_load {
    db_fixture *fx;
    char ld[512];
    nd_loader *l;
    nd_doc docs[16];
    char keys[16][8];
    size_t n;
} failing_load;

static void failing_load_start(failing_load *f, db_fixture *fx, size_t n, uint64_t seed)
{
    uint64_t fp[16];
    assert_true(n <= 16);
    f->fx = fx;
    f->n = n;
    fx->db = open_db(fx->path, K, 4, 16);
    assert_int_equal(nd_db_add(fx->db, "x", 1, 42, 0, 0), ND_OK);
    f->l = NULL;
    assert_int_equal(nd_loader_new(&f->l, fx->db, 4), ND_OK);
    load_dir_of(fx->path, f->ld, sizeof f->ld);
    assert_true(f->ld[0] != '\0');
    random_fps(fp, n, seed);
    for (size_t i = 0; i < n; i++) {
        snprintf(f->keys[i], sizeof f->keys[i], "k%zu", i);
        f->docs[i] = (nd_doc){f->keys[i], strlen(f->keys[i]), fp[i], 1, 1};
    }
}

/* The failed load freed: nothing of it on disk, the store as it was. The
 * database is deleted, so that the test's next case starts empty. */
static void failing_load_end(failing_load *f)
{
    db_fixture *fx = f->fx;
    nd_loader_free(f->l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    uint64_t ndocs = 0;
    assert_int_equal(nd_db_counts(&ndocs, NULL, fx->db), ND_OK);
    assert_int_equal(ndocs, 1);
    for (size_t i = 0; i < f->n; i++) assert_absent(fx->db, f->keys[i]);
    expect_ok(nd_db_verify(fx->db), "verify");
    assert_int_equal(db_fixture_close(fx), ND_OK);
    tmpdir_remove(fx->path);
}

/* A chunk file lost before the commit: the commit fails with ND_EIO
 * naming it, whichever pass reads it (docs; rev, written beside docs
 * where cores allow; an even table and an odd one, which go to a second
 * thread there), and the store keeps what it held. */
static void test_lost_chunk_file(void **state)
{
    const char *lost[] = {"c000000.docs", "c000001.rev", "c000000.t00", "c000001.t01"};
    for (size_t i = 0; i < sizeof lost / sizeof *lost; i++) {
        failing_load f;
        char file[600];
        failing_load_start(&f, *state, 14, 36 + i);
        /* 3 chunks spill; the files of the first two are written before
         * the call returns (the third's writer may still run) */
        assert_int_equal(nd_loader_add(f.l, f.docs, 14), ND_OK);
        snprintf(file, sizeof file, "%s/%s", f.ld, lost[i]);
        assert_int_equal(unlink(file), 0);
        assert_int_equal(nd_loader_finish(NULL, f.l), ND_EIO);
        if (!strstr(nd_errmsg(), lost[i])) fail_msg("%s: %s", lost[i], nd_errmsg());
        failing_load_end(&f);
    }
}

/* A chunk's files are written by a task while the caller fills the next
 * chunk, so a failure to write them comes back from the next call that
 * waits for that task: the add that fills the next chunk (then the loader
 * takes nothing more) or the commit. Either way the store keeps what it
 * held and nothing of the load is left on disk. The failure: a directory
 * where chunk 1's docs file goes (fopen fails on it even for root). */
static void test_writer_failure(void **state)
{
    for (int at_commit = 0; at_commit < 2; at_commit++) {
        failing_load f;
        char block[600];
        failing_load_start(&f, *state, 12, 61 + (uint64_t)at_commit);
        snprintf(block, sizeof block, "%s/c000001.docs", f.ld);
        assert_int_equal(mkdir(block, 0700), 0);
        assert_int_equal(nd_loader_add(f.l, f.docs, 4), ND_OK);     /* chunk 0 */
        assert_int_equal(nd_loader_add(f.l, f.docs + 4, 4), ND_OK); /* chunk 1: its writer fails */
        if (at_commit) {
            assert_int_equal(nd_loader_add(f.l, f.docs + 8, 2), ND_OK); /* no chunk filled */
            assert_int_equal(nd_loader_finish(NULL, f.l), ND_EIO);
        } else {
            assert_int_equal(nd_loader_add(f.l, f.docs + 8, 4), ND_EIO); /* chunk 2 filled */
        }
        if (!strstr(nd_errmsg(), "c000001.docs")) fail_msg("%s", nd_errmsg());
        assert_int_equal(nd_loader_add(f.l, f.docs, 1), ND_EINVAL);
        assert_int_equal(nd_loader_finish(NULL, f.l), ND_EINVAL);
        failing_load_end(&f);
    }
}

/* A stale "nd-load-*" directory (a crashed load's) goes at the next
 * writable open; a read-only open leaves it. */
static void test_stale_dir_removed(void **state)
{
    db_fixture *fx = *state;
    char sub[256], file[320];
    fx->db = open_db(fx->path, K, 0, 0);
    assert_int_equal(nd_db_add(fx->db, "x", 1, 42, 0, 0), ND_OK);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    const char *stale[] = {"nd-load-Ab12Cd", "nd-load-7"};
    for (int i = 0; i < 2; i++) {
        snprintf(sub, sizeof sub, "%s/%s", fx->path, stale[i]);
        assert_int_equal(mkdir(sub, 0755), 0);
        snprintf(file, sizeof file, "%s/chunk-000000", sub);
        FILE *fh = fopen(file, "w");
        assert_non_null(fh);
        fputs("half-written spill\n", fh);
        fclose(fh);
    }
    assert_int_equal(count_load_dirs(fx->path), 2);
    fx->db = open_ro(fx->path);
    assert_true(get_fp(fx->db, "x") == 42);
    assert_int_equal(count_load_dirs(fx->path), 2);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    assert_int_equal(count_load_dirs(fx->path), 2);
    fx->db = open_db(fx->path, K, 0, 0);
    assert_int_equal(count_load_dirs(fx->path), 0);
    assert_true(get_fp(fx->db, "x") == 42);
    expect_ok(nd_db_verify(fx->db), "verify");
    assert_int_equal(db_fixture_close(fx), ND_OK);
}

/* ---- errors ----------------------------------------------------------- */

static void test_errors(void **state)
{
    db_fixture *fx = *state;
    fx->db = open_db(fx->path, K, 0, 0);
    assert_int_equal(db_fixture_close(fx), ND_OK);
    nd_loader_free(NULL);

    /* Read-only handle. */
    fx->db = open_ro(fx->path);
    nd_loader *l = NULL;
    assert_int_equal(nd_loader_new(&l, fx->db, 4), ND_EREADONLY);
    assert_int_equal(db_fixture_close(fx), ND_OK);

    fx->db = open_db(fx->path, K, 0, 0);
    model m = {0};
    uint64_t fp[16];
    random_fps(fp, 16, 55);
    char *big = calloc(1, ND_MAX_KEY_LEN + 2);
    memset(big, 'k', ND_MAX_KEY_LEN + 1);

    /* An empty load commits nothing. */
    uint64_t nw = 99;
    assert_int_equal(nd_loader_new(&l, fx->db, 4), ND_OK);
    assert_int_equal(nd_loader_finish(&nw, l), ND_OK);
    assert_int_equal(nw, 0);
    nd_loader_free(l);

    assert_int_equal(nd_loader_new(&l, fx->db, 4), ND_OK);
    nd_doc one = {"a0", 2, fp[0], 0, 0};
    assert_int_equal(nd_loader_add(l, NULL, 1), ND_EINVAL);
    /* A key too long: nothing of the call is added, wherever it is. */
    nd_doc bad1[3] = {{"g1", 2, fp[1], 0, 0}, {big, ND_MAX_KEY_LEN + 1, fp[2], 0, 0},
                      {"g2", 2, fp[3], 0, 0}};
    assert_int_equal(nd_loader_add(l, bad1, 3), ND_ELIMIT);
    ladd(l, &m, "a1", fp[4], 0, 0);
    ladd(l, &m, "a2", fp[5], 0, 0);
    ladd(l, &m, "a3", fp[6], 0, 0);
    /* g3 and g4 would fill the chunk (and spill) if added before the check */
    nd_doc bad2[3] = {{"g3", 2, fp[7], 0, 0}, {"g4", 2, fp[8], 0, 0},
                      {big, ND_MAX_KEY_LEN + 1, fp[9], 0, 0}};
    assert_int_equal(nd_loader_add(l, bad2, 3), ND_ELIMIT);
    /* An empty key is refused as nd_db_import refuses it. */
    nd_doc empty = {"", 0, fp[10], 0, 0};
    assert_int_equal(nd_loader_add(l, &empty, 1), ND_EINVAL);
    /* The loader goes on. */
    ladd(l, &m, "a4", fp[11], 0, 0); /* fills the chunk: spill */
    nd_doc maxkey = {big, ND_MAX_KEY_LEN, fp[12], 0, 0};
    assert_int_equal(nd_loader_add(l, &maxkey, 1), ND_OK);
    ladd(l, &m, "a5", fp[13], 0, 0);
    assert_int_equal(nd_loader_finish(&nw, l), ND_OK);
    assert_int_equal(nw, 6); /* a1..a5 and the longest key */
    /* Committed: adds and a second commit are refused. */
    assert_int_equal(nd_loader_add(l, &one, 1), ND_EINVAL);
    assert_int_equal(nd_loader_finish(&nw, l), ND_EINVAL);
    assert_int_equal(nd_loader_finish(NULL, l), ND_EINVAL);
    nd_loader_free(l);
    assert_int_equal(count_load_dirs(fx->path), 0);
    const char *gone[] = {"g1", "g2", "g3", "g4", "a0"};
    for (size_t i = 0; i < 5; i++) assert_absent(fx->db, gone[i]);
    for (int i = 1; i <= 3; i++) assert_int_equal(count_at(fx->db, fp[i]), 0);
    for (int i = 7; i <= 10; i++) assert_int_equal(count_at(fx->db, fp[i]), 0);
    assert_true(get_fp(fx->db, "a1") == fp[4]);
    assert_int_equal(nd_db_get(fx->res, fx->db, big, ND_MAX_KEY_LEN), ND_OK);
    assert_true(nd_results_get(fx->res, 0)->fp == fp[12]);

    /* out_new may be NULL. */
    assert_int_equal(nd_loader_new(&l, fx->db, 0), ND_OK);
    ladd(l, &m, "b1", fp[14], 0, 0);
    assert_int_equal(nd_loader_finish(NULL, l), ND_OK);
    nd_loader_free(l);
    assert_true(get_fp(fx->db, "b1") == fp[14]);

    uint64_t ndocs = 0;
    assert_int_equal(nd_db_counts(&ndocs, NULL, fx->db), ND_OK);
    assert_int_equal(ndocs, 7);
    expect_ok(nd_db_verify(fx->db), "verify");
    assert_int_equal(db_fixture_close(fx), ND_OK);
    free(big);
    free(m.d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_racing_writer),
        DB_FIXTURE_TEST(test_writer_failure),
        DB_FIXTURE_TEST(test_racing_writer_superseded),
        DB_FIXTURE_TEST(test_racing_writer_same_fp),
        DB_FIXTURE_TEST(test_free_without_commit),
        DB_FIXTURE_TEST(test_stale_dir_removed),
        DB_FIXTURE_TEST(test_lost_chunk_file),
        DB_FIXTURE_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
