/*
 * test_store_carry.c — a new generation that carries docs and rev
 * (st_regen_new_carried, cmp_carry.h): deletions written as files,
 * ingested over the carried families at the switch; readers of the old
 * generation; a generation abandoned (the carried families stay); a
 * crash after the switch's write (the next open, writable or read-only,
 * applies the deletions); a deletion file lost (writes refused, the open
 * names it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_fixture.h"
#include "store_ref.h"
#include "storage.h"
#include "tmpdir.h"

enum { NKEYS = 5000, TABLES = 2 };

static void doc_key(char out[16], unsigned i) { snprintf(out, 16, "d%06u", i); }

/* rev key of document i: BE64(i / 2) || its key (two documents a
 * fingerprint). */
static size_t rev_key(char out[32], unsigned i)
{
    char k[16];
    doc_key(k, i);
    uint64_t fp = i / 2;
    for (int b = 0; b < 8; b++) out[b] = (char)(fp >> (56 - 8 * b));
    memcpy(out + 8, k, strlen(k));
    return 8 + strlen(k);
}

/* Document i goes in an expiry when gone(i). */
static int gone(unsigned i) { return i % 3 == 0; }

/* NKEYS documents and their rev entries, by one write. */
static st_store *filled(const char *path)
{
    st_store *s = store_create(path, TABLES);
    st_batch *b;
    char k[16], rk[32];
    assert_int_equal(st_batch_new_plain(&b, s), ND_OK);
    for (unsigned i = 0; i < NKEYS; i++) {
        doc_key(k, i);
        assert_int_equal(st_batch_put(b, ST_CF_DOCS, k, strlen(k), "v", 1), ND_OK);
        size_t rl = rev_key(rk, i);
        assert_int_equal(st_batch_put(b, ST_CF_REV, rk, rl, "", 0), ND_OK);
    }
    assert_int_equal(st_write(s, b, 1), ND_OK);
    st_batch_free(b);
    return s;
}

/* A carried generation with the deletions of the gone documents, its
 * tables written empty; not switched to. */
static st_regen *carried(st_store *s)
{
    st_regen *g;
    char k[16], rk[32];
    assert_int_equal(st_regen_new_carried(&g, s), ND_OK);
    assert_int_equal(st_regen_begin(g, ST_CF_DOCS), ND_OK);
    assert_int_equal(st_regen_put(g, "x", 1, "v", 1), ND_EINVAL); /* deletions only */
    for (unsigned i = 0; i < NKEYS; i++) {
        assert_int_equal(st_regen_tick(g), ND_OK);
        doc_key(k, i);
        if (gone(i)) assert_int_equal(st_regen_delete(g, k, strlen(k)), ND_OK);
    }
    assert_int_equal(st_regen_end(g), ND_OK);
    /* rev on a fork, as an expiry writes it beside docs */
    st_regen *f;
    assert_int_equal(st_regen_fork(&f, g), ND_OK);
    assert_int_equal(st_regen_begin(f, ST_CF_REV), ND_OK);
    for (unsigned i = 0; i < NKEYS; i += 3) { /* ascending: BE64(i / 2) first */
        size_t rl = rev_key(rk, i);
        assert_int_equal(st_regen_delete(f, rk, rl), ND_OK);
    }
    assert_int_equal(st_regen_end(f), ND_OK);
    assert_int_equal(st_regen_join(g, f, 1), ND_OK);
    for (unsigned t = 0; t < TABLES; t++) {
        assert_int_equal(st_regen_begin(g, ST_CF_TABLE(t)), ND_OK);
        assert_int_equal(st_regen_end(g), ND_OK);
    }
    return g;
}

static int file_exists(const char *dir, const char *name)
{
    char p[256];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &sb) == 0;
}

static char *meta(st_store *s, const char *key)
{
    char *v = NULL;
    size_t len;
    int rc = st_get(s, ST_CF_META, key, strlen(key), &v, &len);
    if (rc == ND_ENOTFOUND) return NULL;
    assert_int_equal(rc, ND_OK);
    return v;
}

static void check_after(st_store *s, size_t expired)
{
    assert_int_equal(st_generation(s), 1);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), NKEYS - expired);
    assert_int_equal(family_keys(s, ST_CF_REV, NULL), NKEYS - expired);
    char k[16], *v;
    size_t len;
    for (unsigned i = 0; i < 30; i++) {
        doc_key(k, i);
        int rc = st_get(s, ST_CF_DOCS, k, strlen(k), &v, &len);
        assert_int_equal(rc, gone(i) ? ND_ENOTFOUND : ND_OK);
        if (rc == ND_OK) free(v);
    }
    char *gen = meta(s, "st.gen");
    assert_string_equal(gen, "1,0"); /* tables of 1, docs and rev of 0 */
    free(gen);
    assert_null(meta(s, "st.carry"));
}

static void test_carry_switch(void **state)
{
    db_fixture *fx = *state;
    st_store *s = filled(fx->path);
    size_t expired = (NKEYS + 2) / 3;
    st_snap *before;
    assert_int_equal(st_snap_new(&before, s), ND_OK);

    /* Abandoned: the carried families stay, the deletion files go. */
    st_regen *g = carried(s);
    assert_true(file_exists(fx->path, "carried-docs.sst"));
    assert_true(file_exists(fx->path, "carried-rev.sst"));
    st_regen_free(g);
    assert_false(file_exists(fx->path, "carried-docs.sst"));
    assert_false(file_exists(fx->path, "carried-rev.sst"));
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), NKEYS);
    assert_int_equal(family_keys(s, ST_CF_REV, NULL), NKEYS);

    /* Written, not switched to: nothing is deleted yet. */
    g = carried(s);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), NKEYS);
    store_switch(s, g, 0);
    check_after(s, expired);
    assert_false(file_exists(fx->path, "carried-docs.sst"));
    assert_false(st_family_settled(s, ST_CF_DOCS)); /* the deletions wait for compaction */
    assert_true(st_family_settled(s, ST_CF_TABLE(0)));
    /* A snapshot from before reads the old generation, deletions not seen. */
    assert_int_equal(family_keys(s, ST_CF_DOCS, before), NKEYS);
    st_snap_free(before);
    /* Writes go on into the carried families, and a full compaction. */
    st_batch *b;
    assert_int_equal(st_batch_new_plain(&b, s), ND_OK);
    assert_int_equal(st_batch_put(b, ST_CF_DOCS, "d000000", 7, "w", 1), ND_OK);
    assert_int_equal(st_write(s, b, 1), ND_OK);
    st_batch_free(b);
    assert_int_equal(st_compact_files(s), ND_OK);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), NKEYS - expired + 1);
    assert_int_equal(st_close(s), ND_OK);

    /* Reopened, read-only and writable. */
    for (int ro = 1; ro >= 0; ro--) {
        st_open_opts o = {.readonly = ro};
        assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
        assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), NKEYS - expired + 1);
        assert_int_equal(family_keys(s, ST_CF_REV, NULL), NKEYS - expired);
        assert_int_equal(st_close(s), ND_OK);
    }

    /* A second carried generation carries generation 0's docs on. */
    st_open_opts o = {0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(st_regen_new_carried(&g, s), ND_OK);
    assert_int_equal(st_regen_begin(g, ST_CF_DOCS), ND_OK);
    assert_int_equal(st_regen_delete(g, "d000000", 7), ND_OK);
    assert_int_equal(st_regen_end(g), ND_OK);
    assert_int_equal(st_regen_begin(g, ST_CF_REV), ND_OK); /* nothing: no file */
    assert_int_equal(st_regen_end(g), ND_OK);
    for (unsigned t = 0; t < TABLES; t++) {
        assert_int_equal(st_regen_begin(g, ST_CF_TABLE(t)), ND_OK);
        assert_int_equal(st_regen_end(g), ND_OK);
    }
    store_switch(s, g, 0);
    assert_int_equal(st_generation(s), 2);
    char *gen = meta(s, "st.gen");
    assert_string_equal(gen, "2,0");
    free(gen);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), NKEYS - expired);
    assert_int_equal(st_close(s), ND_OK);
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    assert_int_equal(family_keys(s, ST_CF_DOCS, NULL), NKEYS - expired);
    assert_int_equal(st_close(s), ND_OK);
}

/* The state a crash leaves right after the switch's write (the record of
 * the generation and of the deletions, before their ingest): made by a
 * child that writes those records itself and stops without a word. */
static void crash_after_switch(const char *path)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        st_open_opts o = {0};
        st_store *s;
        st_batch *b;
        if (st_open(&s, path, &o) != ND_OK) _exit(1);
        (void)carried(s);
        if (st_batch_new_plain(&b, s) != ND_OK ||
            st_batch_put(b, ST_CF_META, "st.gen", 6, "1,0", 3) != ND_OK ||
            st_batch_put(b, ST_CF_META, "st.carry", 8, "3", 1) != ND_OK ||
            st_write(s, b, 1) != ND_OK)
            _exit(2);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(file_exists(path, "carried-docs.sst"));
}

static void test_carry_crash(void **state)
{
    db_fixture *fx = *state;
    st_store *s = filled(fx->path);
    size_t expired = (NKEYS + 2) / 3;
    assert_int_equal(st_close(s), ND_OK);

    /* Opened for writing: the deletions are applied first. */
    char copy[600];
    snprintf(copy, sizeof copy, "cp -a %s %s.pristine", fx->path, fx->path);
    assert_int_equal(system(copy), 0);
    crash_after_switch(fx->path);
    st_open_opts o = {0};
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    check_after(s, expired);
    assert_int_equal(st_close(s), ND_OK);
    assert_false(file_exists(fx->path, "carried-docs.sst"));
    assert_false(file_exists(fx->path, "carried-rev.sst"));

    /* Opened read-only: a writable open finishes it first (no writer
     * holds the store), then the reader sees the expiry done. */
    snprintf(copy, sizeof copy, "rm -rf %s && cp -a %s.pristine %s", fx->path, fx->path,
             fx->path);
    assert_int_equal(system(copy), 0);
    crash_after_switch(fx->path);
    o.readonly = 1;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    check_after(s, expired);
    assert_int_equal(st_close(s), ND_OK);
    assert_false(file_exists(fx->path, "carried-docs.sst"));

    /* A deletion file lost before the switch: the switch's write is
     * durable, its deletions are not in; the store takes no more writes,
     * and the next open names the missing file. */
    snprintf(copy, sizeof copy, "rm -rf %s && cp -a %s.pristine %s", fx->path, fx->path,
             fx->path);
    assert_int_equal(system(copy), 0);
    o.readonly = 0;
    assert_int_equal(st_open(&s, fx->path, &o), ND_OK);
    st_regen *g = carried(s);
    char lost[256];
    snprintf(lost, sizeof lost, "%s/carried-rev.sst", fx->path);
    assert_int_equal(unlink(lost), 0);
    st_batch *b;
    assert_int_equal(st_batch_new_plain(&b, s), ND_OK);
    assert_int_equal(st_batch_set_regen(b, g), ND_OK);
    assert_int_equal(st_write(s, b, 0), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "carried-rev.sst"));
    st_batch_clear(b);
    assert_int_equal(st_batch_put(b, ST_CF_DOCS, "z", 1, "v", 1), ND_OK);
    assert_int_equal(st_write(s, b, 1), ND_EIO);
    assert_non_null(strstr(nd_errmsg(), "open it again"));
    st_batch_free(b);
    st_regen_free(g);
    (void)st_close(s);
    assert_int_equal(st_open(&s, fx->path, &o), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "carried-rev.sst"));
    snprintf(copy, sizeof copy, "rm -rf %s.pristine", fx->path);
    assert_int_equal(system(copy), 0);
}

/* A resemblance store's sketch and band families take deletions beside
 * a carried generation's (not required by its switch); a store without
 * them refuses their begin. */
static void test_carry_fixed(void **state)
{
    db_fixture *fx = *state;
    st_store *s = filled(fx->path);
    st_regen *g;
    assert_int_equal(st_regen_new_carried(&g, s), ND_OK);
    assert_int_equal(st_regen_begin(g, ST_CF_SKETCH), ND_EINVAL);
    st_regen_free(g);
    assert_int_equal(st_close(s), ND_OK);

    char path[200];
    snprintf(path, sizeof path, "%s2", fx->path);
    st_open_opts o = {.create = 1, .ntables = TABLES, .resemblance = 1};
    assert_int_equal(st_open(&s, path, &o), ND_OK);
    st_batch *b;
    char k[16];
    assert_int_equal(st_batch_new_plain(&b, s), ND_OK);
    for (unsigned i = 0; i < NKEYS; i++) {
        doc_key(k, i);
        assert_int_equal(st_batch_put(b, ST_CF_SKETCH, k, strlen(k), "s", 1), ND_OK);
        char bk[24] = {(char)(i % 12), 0, 0, 0, (char)(i % 7)};
        memcpy(bk + 5, k, strlen(k));
        assert_int_equal(st_batch_put(b, ST_CF_BAND, bk, 5 + strlen(k), "", 0), ND_OK);
    }
    assert_int_equal(st_write(s, b, 1), ND_OK);
    st_batch_free(b);
    /* A plain regen not switched to leaves them as they are. */
    assert_int_equal(st_regen_new(&g, s), ND_OK);
    assert_int_equal(st_regen_begin(g, ST_CF_BAND), ND_OK);
    assert_int_equal(st_regen_put(g, "\x0b\0\0\0\x01zz", 7, "", 0), ND_OK);
    assert_int_equal(st_regen_end(g), ND_OK);
    assert_true(file_exists(path, "carried-band.sst"));
    st_regen_free(g);
    assert_false(file_exists(path, "carried-band.sst"));
    assert_int_equal(family_keys(s, ST_CF_BAND, NULL), NKEYS);
    assert_int_equal(st_regen_new_carried(&g, s), ND_OK);
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE(TABLES); cf++) { /* nothing: no files */
        assert_int_equal(st_regen_begin(g, cf), ND_OK);
        assert_int_equal(st_regen_end(g), ND_OK);
    }
    st_regen *f;
    assert_int_equal(st_regen_fork(&f, g), ND_OK);
    assert_int_equal(st_regen_begin(f, ST_CF_SKETCH), ND_OK);
    for (unsigned i = 0; i < NKEYS; i += 2) {
        doc_key(k, i);
        assert_int_equal(st_regen_delete(f, k, strlen(k)), ND_OK);
    }
    assert_int_equal(st_regen_end(f), ND_OK);
    assert_int_equal(st_regen_begin(f, ST_CF_BAND), ND_OK);
    size_t bands = 0;
    for (unsigned band = 0; band < 12; band++)
        for (unsigned i = band; i < NKEYS; i += 12) { /* band i % 12, then i % 7, then key */
            if (i % 7 != 0) continue;
            doc_key(k, i);
            char bk[24] = {(char)band, 0, 0, 0, 0};
            memcpy(bk + 5, k, strlen(k));
            assert_int_equal(st_regen_delete(f, bk, 5 + strlen(k)), ND_OK);
            bands++;
        }
    assert_int_equal(st_regen_end(f), ND_OK);
    assert_int_equal(st_regen_join(g, f, 1), ND_OK);
    assert_true(file_exists(path, "carried-sketch.sst") && file_exists(path, "carried-band.sst"));
    store_switch(s, g, 0);
    assert_int_equal(family_keys(s, ST_CF_SKETCH, NULL), NKEYS / 2);
    assert_int_equal(family_keys(s, ST_CF_BAND, NULL), NKEYS - bands);
    assert_null(meta(s, "st.carry"));
    assert_false(file_exists(path, "carried-band.sst"));
    assert_int_equal(st_close(s), ND_OK);
    o.create = 0;
    assert_int_equal(st_open(&s, path, &o), ND_OK);
    assert_int_equal(family_keys(s, ST_CF_BAND, NULL), NKEYS - bands);
    assert_int_equal(st_close(s), ND_OK);
}

/* A plain generation's (a bulk load's) puts into the sketch and band
 * families: laid over the families' entries by its switch, or after a
 * crash right after the switch's write by the next open. With crash, a
 * child writes the switch's records itself and stops without a word. */
static void load_case(const char *path, int crash)
{
    char k[16], bk[24];
    st_open_opts o = {.create = 1, .ntables = TABLES, .resemblance = 1};
    st_store *s;
    st_batch *b;
    assert_int_equal(st_open(&s, path, &o), ND_OK);
    assert_int_equal(st_batch_new_plain(&b, s), ND_OK);
    for (unsigned i = 0; i < NKEYS; i += 2) { /* the even keys stored */
        doc_key(k, i);
        assert_int_equal(st_batch_put(b, ST_CF_SKETCH, k, strlen(k), "old", 3), ND_OK);
    }
    assert_int_equal(st_write(s, b, 1), ND_OK);
    st_batch_free(b);
    assert_int_equal(st_close(s), ND_OK);
    o.create = 0;
    pid_t pid = crash ? fork() : 0;
    assert_true(pid >= 0);
    if (pid == 0) {
        int ok = st_open(&s, path, &o) == ND_OK;
        st_regen *g = NULL;
        ok = ok && st_regen_new(&g, s) == ND_OK;
        for (int cf = ST_CF_DOCS; ok && cf < ST_CF_TABLE(TABLES); cf++)
            ok = st_regen_begin(g, cf) == ND_OK && st_regen_end(g) == ND_OK;
        ok = ok && st_regen_begin(g, ST_CF_SKETCH) == ND_OK;
        for (unsigned i = 1; ok && i < NKEYS; i += 2) { /* the odd ones loaded */
            doc_key(k, i);
            ok = st_regen_put(g, k, strlen(k), "new", 3) == ND_OK;
        }
        ok = ok && st_regen_end(g) == ND_OK && st_regen_begin(g, ST_CF_BAND) == ND_OK;
        for (unsigned i = 1; ok && i < NKEYS; i += 2) {
            doc_key(k, i);
            memcpy(bk, "\x03\0\0\0\x07", 5);
            memcpy(bk + 5, k, strlen(k));
            ok = st_regen_put(g, bk, 5 + strlen(k), "", 0) == ND_OK;
        }
        ok = ok && st_regen_end(g) == ND_OK && st_batch_new_plain(&b, s) == ND_OK;
        if (crash) {
            _exit(ok && file_exists(path, "carried-sketch.sst") &&
                          st_batch_put(b, ST_CF_META, "st.gen", 6, "1", 1) == ND_OK &&
                          st_batch_put(b, ST_CF_META, "st.carry", 8, "12", 2) == ND_OK &&
                          st_write(s, b, 1) == ND_OK
                      ? 0
                      : 1);
        }
        assert_true(ok);
        assert_int_equal(family_keys(s, ST_CF_SKETCH, NULL), (NKEYS + 1) / 2);
        assert_int_equal(family_keys(s, ST_CF_BAND, NULL), 0); /* not before the switch */
        assert_int_equal(st_batch_set_regen(b, g), ND_OK);
        assert_int_equal(st_write(s, b, 1), ND_OK);
        st_batch_free(b);
        st_regen_free(g);
        assert_int_equal(st_close(s), ND_OK);
    } else {
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(st_open(&s, path, &o), ND_OK);
    assert_null(meta(s, "st.carry"));
    assert_false(file_exists(path, "carried-sketch.sst") || file_exists(path, "carried-band.sst"));
    assert_int_equal(family_keys(s, ST_CF_SKETCH, NULL), NKEYS);
    assert_int_equal(family_keys(s, ST_CF_BAND, NULL), NKEYS / 2);
    for (unsigned i = 0; i < NKEYS; i++) {
        char *v = NULL;
        size_t vlen;
        doc_key(k, i);
        assert_int_equal(st_get(s, ST_CF_SKETCH, k, strlen(k), &v, &vlen), ND_OK);
        assert_memory_equal(v, i % 2 ? "new" : "old", 3);
        free(v);
    }
    assert_int_equal(st_close(s), ND_OK);
}

static void test_carry_load(void **state)
{
    db_fixture *fx = *state;
    char path[200];
    snprintf(path, sizeof path, "%s-switch", fx->path);
    load_case(path, 0);
    snprintf(path, sizeof path, "%s-crash", fx->path);
    load_case(path, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DB_FIXTURE_TEST(test_carry_switch),
        DB_FIXTURE_TEST(test_carry_crash),
        DB_FIXTURE_TEST(test_carry_fixed),
        DB_FIXTURE_TEST(test_carry_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
