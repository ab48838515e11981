/*
 * test_kv.c — the key-value adapter (cmp_kv.h): RocksDB's error strings
 * mapped to nd_error codes (the one place that knows them), and the
 * adapter's operations on a database of two families knowing nothing of
 * neardup: open and reopen, batches (indexed ones reading their own
 * writes, range deletions in plain ones), iterators of each kind,
 * snapshots, a sorted file ingested whole, the live files.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "cmp_kv_error.h"
#include "cmp_kv_mem.h"
#include "neardup.h"
#include "nd_error.h"
#include "tmpdir.h"

static void test_error_mapping(void **state)
{
    (void)state;
    static const struct { const char *msg; int rc; } cases[] = {
        {"Corruption: block checksum mismatch: stored = 1, computed = 2", ND_ECORRUPT},
        {"Corruption: Bad table magic number: expected 1, found 2 in /x/000012.sst", ND_ECORRUPT},
        {"IO error: No space left on device: /x/000012.log", ND_ENOSPC},
        {"IO error: While lock file: /x/LOCK: Resource temporarily unavailable", ND_EBUSY},
        {"IO error: lock hold by current process, acquire time 1 acquiring thread 2: /x/LOCK: No locks available", ND_EBUSY},
        {"Invalid argument: /x/CURRENT: does not exist (create_if_missing is false)", ND_ENOTFOUND},
        {"IO error: No such file or directory: While opening a file for sequentially reading: /x/MANIFEST-000001", ND_ENOTFOUND},
        {"IO error: While open a file for appending: /x/LOG: Read-only file system", ND_EREADONLY},
        {"IO error: While mkdir if missing: /x: Permission denied", ND_EREADONLY},
        {"IO error: While opening a file for sequentially reading: /x/CURRENT: Not a directory", ND_EINVAL},
        {"Invalid argument: Column family not found: t07", ND_EINVAL},
        {"IO error: something else", ND_EIO},
        {"Busy: ", ND_EIO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(kv_map_error(cases[i].msg, "ctx"), cases[i].rc);
        if (cases[i].rc == ND_EBUSY) continue; /* said plainly: below */
        assert_non_null(strstr(nd_errmsg(), "ctx: "));
        assert_non_null(strstr(nd_errmsg(), cases[i].msg));
    }
    /* A lock held: who holds it, not RocksDB's text ("ctx" is the path;
     * it has no LOCK file here, so no pid). */
    assert_int_equal(kv_map_error(cases[3].msg, "ctx"), ND_EBUSY);
    assert_string_equal(nd_errmsg(), "ctx is open for writing by another process");
    assert_int_equal(kv_map_error(cases[4].msg, "ctx"), ND_EBUSY);
    assert_string_equal(nd_errmsg(), "ctx is open for writing by this process (another handle)");
    assert_int_equal(kv_map_error(NULL, "ctx"), ND_EIO);
    assert_non_null(strstr(nd_errmsg(), "ctx: unknown RocksDB error"));
}

static void test_version(void **state)
{
    (void)state;
    unsigned major = 0, minor = 0;
    kv_version(&major, &minor);
    assert_true(major >= 6); /* the version meson found, not a default */
    assert_true(minor < 100);
}

/* Two families: "a" plain, "b" with 1-byte prefix filters. */
static const kv_profile profiles[2] = {{.compress = 1, .bloom_bits = 10},
                                       {.prefix_len = 1, .bloom_bits = 10, .plain_format = 1}};
static const char *const names[2] = {"a", "b"};
static const unsigned name_profiles[2] = {0, 1};

static kv_db *open_db(const char *path, int create, int readonly, kv_cf *cfs[2])
{
    kv_db *db = NULL;
    kv_open_opts o = {.create = create, .readonly = readonly, .profiles = profiles,
                      .nprofiles = 2};
    assert_int_equal(kv_open(&db, path, &o, 2, names, name_profiles, cfs), ND_OK);
    assert_non_null(cfs[0]);
    assert_non_null(cfs[1]);
    return db;
}

static void close_db(kv_db *db, kv_cf *cfs[2])
{
    kv_family_free(cfs[0]);
    kv_family_free(cfs[1]);
    kv_close(db);
}

static void expect_get(kv_db *db, kv_cf *cf, const char *key, const char *want)
{
    char *v = NULL;
    size_t len = 0;
    int rc = kv_get(db, cf, 1, key, strlen(key), &v, &len);
    if (!want) {
        assert_int_equal(rc, ND_ENOTFOUND);
        return;
    }
    assert_int_equal(rc, ND_OK);
    assert_int_equal(len, strlen(want));
    assert_string_equal(v, want); /* NUL-terminated */
    free(v);
}

/* Keys in a family, counted by a walk. */
static int count_keys(kv_db *db, kv_cf *cf)
{
    kv_iter *it = NULL;
    int n = 0;
    assert_int_equal(kv_iter_new_scan(&it, db, cf, NULL), ND_OK);
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it)) n++;
    assert_int_equal(kv_iter_status(it), ND_OK);
    kv_iter_free(it);
    return n;
}

static void test_open_and_families(void **state)
{
    (void)state;
    char dir[64], path[128];
    kv_cf *cfs[2];
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    assert_int_equal(kv_probe(path), 0);
    kv_db *db = open_db(path, 1, 0, cfs);
    assert_int_equal(kv_probe(path), 1);
    assert_int_equal(kv_probe("/etc/passwd"), -1);
    /* A second writer is refused; the lock is RocksDB's. */
    kv_db *db2 = NULL;
    kv_cf *cfs2[2];
    kv_open_opts o = {.profiles = profiles, .nprofiles = 2};
    assert_int_equal(kv_open(&db2, path, &o, 2, names, name_profiles, cfs2), ND_EBUSY);
    assert_null(cfs2[0]);
    kv_cf *c = NULL;
    assert_int_equal(kv_family_create(db, "c", 0, &c), ND_OK);
    kv_family_free(c); /* every family before the database */
    close_db(db, cfs);

    char **list = NULL;
    size_t n = 0;
    assert_int_equal(kv_list_families(path, &list, &n), ND_OK);
    assert_int_equal(n, 4); /* default, a, b, c */
    kv_names_free(list, n);
    /* Opening must name every family. */
    assert_int_equal(kv_open(&db2, path, &o, 2, names, name_profiles, cfs2), ND_EINVAL);
    const char *all[4] = {"default", "a", "b", "c"};
    const unsigned prof[4] = {0, 0, 1, 0};
    kv_cf *cf4[4];
    assert_int_equal(kv_open(&db, path, &o, 4, all, prof, cf4), ND_OK);
    assert_null(cf4[0]); /* "default" is the adapter's */
    assert_int_equal(kv_family_drop(db, cf4[3]), ND_OK);
    for (int i = 0; i < 4; i++) kv_family_free(cf4[i]);
    kv_close(db);
    assert_int_equal(kv_list_families(path, &list, &n), ND_OK);
    assert_int_equal(n, 3);
    kv_names_free(list, n);

    snprintf(path, sizeof path, "%s/absent", dir);
    assert_int_equal(kv_list_families(path, &list, &n), ND_ENOTFOUND);
    tmpdir_remove(dir);
}

static void test_batches_and_iterators(void **state)
{
    (void)state;
    char dir[64], path[128];
    kv_cf *cf[2];
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    kv_db *db = open_db(path, 1, 0, cf);

    /* An indexed batch reads its own writes, before and over the
     * database's; iterators over it too. */
    kv_batch *b = NULL;
    assert_int_equal(kv_batch_new(&b, 1), ND_OK);
    assert_true(kv_batch_indexed(b));
    kv_batch_put(b, cf[0], "k1", 2, "v1", 2);
    kv_batch_put(b, cf[0], "k2", 2, "v2", 2);
    assert_int_equal(kv_batch_count(b), 2);
    char *v = NULL;
    size_t len;
    assert_int_equal(kv_batch_get(db, b, cf[0], 1, "k2", 2, &v, &len), ND_OK);
    assert_string_equal(v, "v2");
    free(v);
    expect_get(db, cf[0], "k2", NULL);
    assert_int_equal(kv_batch_delete_range(b, cf[0], "a", 1, "z", 1), ND_EINVAL);
    assert_int_equal(kv_write(db, b, 1), ND_OK);
    expect_get(db, cf[0], "k1", "v1");
    kv_batch_clear(b);
    kv_batch_delete(b, cf[0], "k1", 2);
    kv_iter *it = NULL;
    assert_int_equal(kv_iter_new(&it, db, cf[0], 1, b), ND_OK);
    kv_iter_seek_first(it);
    assert_true(kv_iter_valid(it));
    size_t klen;
    assert_memory_equal(kv_iter_key(it, &klen), "k2", 2);
    kv_iter_free(it);
    assert_int_equal(kv_write(db, b, 0), ND_OK);
    kv_batch_free(b);

    /* A snapshot keeps what a later write changes. */
    kv_snap *snap = NULL;
    assert_int_equal(kv_snap_new(&snap, db, 1), ND_OK);
    assert_int_equal(kv_batch_new(&b, 0), ND_OK);
    assert_false(kv_batch_indexed(b));
    for (char c = 'a'; c <= 'f'; c++) kv_batch_put(b, cf[1], &c, 1, "x", 1);
    assert_int_equal(kv_batch_delete_range(b, cf[0], "k", 1, "l", 1), ND_OK);
    assert_int_equal(kv_write(db, b, 0), ND_OK);
    kv_batch_free(b);
    expect_get(db, cf[0], "k2", NULL);
    assert_int_equal(kv_iter_new_at(&it, db, cf[0], snap), ND_OK);
    kv_iter_seek_first(it);
    assert_true(kv_iter_valid(it));
    assert_memory_equal(kv_iter_key(it, &klen), "k2", 2);
    kv_iter_free(it);
    assert_int_equal(kv_iter_new_scan(&it, db, cf[1], snap), ND_OK);
    kv_iter_seek_first(it);
    assert_false(kv_iter_valid(it));
    assert_int_equal(kv_iter_status(it), ND_OK);
    kv_iter_free(it);
    kv_snap_free(snap);

    /* Bounded: [b, e) only; a walk; a probe within a prefix. */
    assert_int_equal(kv_iter_new_bounded(&it, db, cf[1], 1, "b", "e", 1, NULL), ND_OK);
    int n = 0;
    for (kv_iter_seek(it, "a", 1); kv_iter_valid(it); kv_iter_next(it)) n++;
    assert_int_equal(n, 3);
    kv_iter_free(it);
    assert_int_equal(kv_iter_new_bounded(&it, db, cf[1], 1, "b", "e", 17, NULL), ND_EINVAL);
    assert_int_equal(count_keys(db, cf[1]), 6);
    assert_int_equal(kv_iter_new_prefix(&it, db, cf[1], 0), ND_OK);
    kv_iter_seek(it, "c", 1);
    assert_true(kv_iter_valid(it));
    assert_memory_equal(kv_iter_key(it, &klen), "c", 1);
    const char *val = kv_iter_value(it, &len);
    assert_int_equal(len, 1);
    assert_memory_equal(val, "x", 1);
    kv_iter_free(it);

    const char *keys[3] = {"a", "q", "f"};
    size_t lens[3] = {1, 1, 1};
    unsigned char found[3];
    assert_int_equal(kv_exists_many(db, cf[1], 1, keys, lens, 3, found), ND_OK);
    assert_int_equal(found[0], 1);
    assert_int_equal(found[1], 0);
    assert_int_equal(found[2], 1);
    close_db(db, cf);

    /* Read-only: the data is there, writes are refused. */
    db = open_db(path, 0, 1, cf);
    expect_get(db, cf[1], "d", "x");
    assert_int_equal(kv_batch_new(&b, 1), ND_OK);
    kv_batch_put(b, cf[1], "g", 1, "x", 1);
    assert_int_not_equal(kv_write(db, b, 0), ND_OK);
    kv_batch_free(b);
    close_db(db, cf);
    tmpdir_remove(dir);
}

/* A copy of the one file a family holds (a second one fails the test). */
static int note_file(void *payload, const kv_file *f)
{
    kv_file *seen = payload;
    assert_null(seen->path);
    char *key = malloc(f->largest_len + 1);
    memcpy(key, f->largest, f->largest_len);
    *seen = (kv_file){strdup(f->path), key, f->largest_len, f->deletions};
    return 0;
}

static int count_file(void *payload, const kv_file *f)
{
    (void)f;
    ++*(int *)payload;
    return 0;
}

static void test_files(void **state)
{
    (void)state;
    char dir[64], path[128], file[160];
    kv_cf *cf[2];
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    snprintf(file, sizeof file, "%s/aside.sst", dir);
    kv_db *db = open_db(path, 1, 0, cf);

    /* A sorted file, ingested whole (moved into the database). */
    kv_sst *w = NULL;
    assert_int_equal(kv_sst_new(&w, db, 1, file, "the test file"), ND_OK);
    assert_int_equal(kv_sst_put(w, "Ra", 2, "1", 1), ND_OK);
    assert_int_equal(kv_sst_put(w, "Rb", 2, "2", 1), ND_OK);
    assert_int_not_equal(kv_sst_put(w, "Ra", 2, "3", 1), ND_OK); /* out of order */
    assert_non_null(strstr(nd_errmsg(), "the test file: "));
    assert_int_equal(kv_sst_finish(w), ND_OK);
    kv_sst_free(w);
    const char *files[1] = {file};
    assert_int_equal(kv_ingest(db, cf[1], files, 1, "ingesting"), ND_OK);
    expect_get(db, cf[1], "Rb", "2");
    assert_true(kv_memtables_empty(db, cf[1]));

    /* The live files of a family, with their largest key. */
    kv_file seen = {0};
    int nfiles = 0;
    assert_int_equal(kv_live_files(db, "b", note_file, &seen), ND_OK);
    assert_int_equal(kv_live_files(db, "a", count_file, &nfiles), ND_OK);
    assert_int_equal(nfiles, 0);
    assert_int_equal(seen.largest_len, 2);
    assert_memory_equal(seen.largest, "Rb", 2);
    assert_int_equal(seen.deletions, 0);
    assert_non_null(strstr(seen.path, path));
    free((char *)seen.path);
    free((char *)seen.largest);
    assert_int_equal(kv_live_files(db, "b", count_file, &nfiles), ND_OK);
    assert_int_equal(nfiles, 1);
    assert_true(kv_live_bytes(db, cf[1]) > 0);
    assert_int_equal(kv_live_bytes(db, cf[0]), 0);
    assert_true(kv_cache_bytes(db) > 0);

    /* Writes, a flush, a compaction, a checkpoint. */
    kv_batch *b = NULL;
    assert_int_equal(kv_batch_new(&b, 0), ND_OK);
    kv_batch_put(b, cf[0], "k", 1, "v", 1);
    assert_int_equal(kv_write(db, b, 0), ND_OK);
    kv_batch_free(b);
    assert_false(kv_memtables_empty(db, cf[0]));
    assert_int_equal(kv_flush(db, cf[0]), ND_OK);
    assert_true(kv_memtables_empty(db, cf[0]));
    assert_int_equal(kv_compact(db, cf[0], 1), ND_OK);
    snprintf(file, sizeof file, "%s/copy", dir);
    assert_int_equal(kv_checkpoint(db, file), ND_OK);
    close_db(db, cf);
    db = open_db(file, 0, 1, cf);
    expect_get(db, cf[0], "k", "v");
    expect_get(db, cf[1], "Ra", "1");
    close_db(db, cf);
    tmpdir_remove(dir);
}

/* Ingests beside writes to the same family's key range: RocksDB refuses
 * an ingest (TryAgain) when a write reaches the memtable between the
 * flush the ingest makes and the ingest; kv_ingest tries again, so every
 * ingest succeeds and every key of each file and of the writer is there
 * (the fuzzed server met it: a mirror flush beside a fold's run). */
typedef struct racer {
    kv_db *db;
    kv_cf *cf;
    atomic_int stop;
    int written, rc;
} racer;

static void *race_writes(void *arg)
{
    racer *r = arg;
    kv_batch *b = NULL;
    if ((r->rc = kv_batch_new(&b, 0)) != ND_OK) return NULL;
    while (!atomic_load(&r->stop) && r->rc == ND_OK) {
        char k[32];
        int n = snprintf(k, sizeof k, "Rw%08d", r->written);
        kv_batch_clear(b);
        kv_batch_put(b, r->cf, k, (size_t)n, "w", 1);
        /* a range deletion over keys no file holds, beside the put */
        r->rc = kv_batch_delete_range(b, r->cf, "Rx", 2, "Ry", 2);
        if (r->rc == ND_OK && (r->rc = kv_write(r->db, b, 0)) == ND_OK) r->written++;
        if (r->rc == ND_OK && r->written % 64 == 0) r->rc = kv_flush(r->db, r->cf);
    }
    kv_batch_free(b);
    return NULL;
}

static void test_ingest_beside_writes(void **state)
{
    (void)state;
    char dir[64], path[128], file[160], k[32];
    kv_cf *cf[2];
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    kv_db *db = open_db(path, 1, 0, cf);
    racer r = {.db = db, .cf = cf[0]};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, race_writes, &r), 0);
    enum { FILES = 200, KEYS = 50 };
    for (int i = 0; i < FILES; i++) {
        kv_sst *w = NULL;
        snprintf(file, sizeof file, "%s/f%d.sst", dir, i);
        assert_int_equal(kv_sst_new(&w, db, 0, file, "a file"), ND_OK);
        /* spanning the writer's keys ("Rw...") and beyond */
        for (int j = 0; j < KEYS; j++) {
            int n = snprintf(k, sizeof k, "R%c%04d%04d", j < KEYS / 2 ? 'a' : 'z', i, j);
            assert_int_equal(kv_sst_put(w, k, (size_t)n, "f", 1), ND_OK);
        }
        assert_int_equal(kv_sst_finish(w), ND_OK);
        kv_sst_free(w);
        const char *files[1] = {file};
        int rc = kv_ingest(db, cf[0], files, 1, "ingesting beside writes");
        if (rc != ND_OK) fail_msg("ingest %d: %s", i, nd_errmsg());
    }
    atomic_store(&r.stop, 1);
    pthread_join(t, NULL);
    assert_int_equal(r.rc, ND_OK);
    assert_true(r.written > 0);
    assert_int_equal(count_keys(db, cf[0]), FILES * KEYS + r.written);
    close_db(db, cf);
    tmpdir_remove(dir);
}

/* A family written with leveled compaction (its files compacted into
 * level 1 and on) opens with universal compaction, as the band family of
 * a store made before the band profile became universal does: every key
 * is read, and ingests of files spanning the key range (past the 8 runs
 * that start a compaction) and a full compaction keep them. */
static void test_leveled_to_universal(void **state)
{
    (void)state;
    static const kv_profile styles[2][1] = {
        {{.compress = 1, .bloom_bits = 10, .prefix_len = 1, .l0_files = 1}},
        {{.compress = 1, .bloom_bits = 10, .prefix_len = 1, .l0_files = 8, .universal = 1}}};
    static const char *const fam[1] = {"bands"};
    static const unsigned fam_profile[1] = {0};
    char dir[64], path[128], file[160], key[32];
    kv_db *db = NULL;
    kv_cf *cf[1];
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    for (int style = 0; style < 2; style++) {
        kv_open_opts o = {.create = 1, .profiles = styles[style], .nprofiles = 1};
        assert_int_equal(kv_open(&db, path, &o, 1, fam, fam_profile, cf), ND_OK);
        assert_int_equal(count_keys(db, cf[0]), style * 10 * 100);
        for (int f = 0; f < 10; f++) {
            kv_sst *w = NULL;
            snprintf(file, sizeof file, "%s/f%d-%d.sst", dir, style, f);
            assert_int_equal(kv_sst_new(&w, db, 0, file, "a band file"), ND_OK);
            for (int i = 0; i < 100; i++) {
                int n = snprintf(key, sizeof key, "R%03d-%d-%02d", i, style, f);
                assert_int_equal(kv_sst_put(w, key, (size_t)n, "", 0), ND_OK);
            }
            assert_int_equal(kv_sst_finish(w), ND_OK);
            kv_sst_free(w);
            const char *files[1] = {file};
            assert_int_equal(kv_ingest(db, cf[0], files, 1, "ingesting"), ND_OK);
        }
        /* Leveled: into level 1 and on; universal: one run. */
        assert_int_equal(kv_compact(db, cf[0], 1), ND_OK);
        assert_int_equal(count_keys(db, cf[0]), (style + 1) * 10 * 100);
        expect_get(db, cf[0], "R042-0-07", "");
        kv_family_free(cf[0]);
        kv_close(db);
    }
    tmpdir_remove(dir);
}

/* Flip one byte in the middle of the family's file. */
static int flip_middle(void *payload, const kv_file *f)
{
    (void)payload;
    FILE *fp = fopen(f->path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long mid = ftell(fp) / 4; /* inside the first data block */
    assert_int_equal(fseek(fp, mid, SEEK_SET), 0);
    int c = fgetc(fp);
    assert_int_equal(fseek(fp, mid, SEEK_SET), 0);
    fputc(c ^ 0x5a, fp);
    fclose(fp);
    return 0;
}

/* A read that meets damage fails with ND_ECORRUPT and marks the handle:
 * every later write is refused, even to another family. */
static void test_damage_marks_handle(void **state)
{
    (void)state;
    char dir[64], path[128], key[16], val[64];
    kv_cf *cf[2];
    kv_batch *b = NULL;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    kv_db *db = open_db(path, 1, 0, cf);
    assert_int_equal(kv_batch_new(&b, 0), ND_OK);
    memset(val, 'v', sizeof val);
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "k%05d", i);
        kv_batch_put(b, cf[0], key, strlen(key), val, sizeof val);
    }
    assert_int_equal(kv_write(db, b, 1), ND_OK);
    assert_int_equal(kv_flush(db, cf[0]), ND_OK);
    close_db(db, cf);
    db = open_db(path, 0, 0, cf);
    assert_int_equal(kv_live_files(db, "a", flip_middle, NULL), ND_OK);
    kv_iter *it = NULL;
    assert_int_equal(kv_iter_new(&it, db, cf[0], 0, NULL), ND_OK);
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it)) continue;
    assert_int_equal(kv_iter_status(it), ND_ECORRUPT);
    kv_iter_free(it);
    kv_batch_clear(b);
    kv_batch_put(b, cf[1], "x", 1, "y", 1);
    assert_int_equal(kv_write(db, b, 0), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "repair"));
    kv_batch_free(b);
    close_db(db, cf);
    tmpdir_remove(dir);
}

/* What the process maps now, in bytes. */
static uint64_t mapped_now(void)
{
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%llu", &pages) != 1) pages = 0;
    if (f) fclose(f);
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The memory plan under RLIMIT_AS (set in a child, which then reports the
 * first check that failed as its exit status). */
static int plan_child(void)
{
    kv_mem m;
    if (kv_mem_plan(&m, 64u << 20, 0) != ND_OK || m.limited) return 1; /* no limit: inert */
    struct rlimit r = {0, 0};
    getrlimit(RLIMIT_AS, &r);
    r.rlim_cur = (rlim_t)(mapped_now() + (600u << 20));
    if (setrlimit(RLIMIT_AS, &r) != 0) return 0; /* cannot limit here: nothing to check */
    if (kv_mem_plan(&m, 64u << 20, 0) != ND_OK || !m.limited) return 2;
    if (m.reserve < (16u << 20) || m.reserve > (64u << 20)) return 3;
    if (m.cache > (64u << 20) || m.memtable > (64u << 20) || m.arena > m.memtable) return 4;
    if (m.compress) return 5; /* under 1 GB of room: LZ4 off */
    if (kv_mem_reserve_take(&m) != ND_OK || kv_mem_check() != ND_OK) return 6;
    kv_mem_reserve_drop(&m);
    kv_mem ro;
    /* a reader: a smaller reserve, small memtables (they hold only the
     * log it replays) */
    if (kv_mem_plan(&ro, 64u << 20, 1) != ND_OK || ro.reserve < (8u << 20) ||
        ro.reserve > (32u << 20) || ro.memtable > (4u << 20) || ro.arena > ro.memtable)
        return 7;
    /* too little room: refused, naming the limit */
    r.rlim_cur = (rlim_t)(mapped_now() + (30u << 20));
    if (setrlimit(RLIMIT_AS, &r) != 0) return 8;
    if (kv_mem_plan(&m, 64u << 20, 0) != ND_ENOMEM) return 9;
    if (!strstr(nd_errmsg(), "ulimit -v")) return 10;
    return 0;
}

static void test_mem_plan(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* the sanitizer's shadow memory leaves no room for any limit */
#endif
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(plan_child());
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}


/* An open that recovers to a sequence below the last synced write's
 * (kv_open_opts.synced_seq, cmp_synced.h) is refused, reader or writer,
 * and the writer's refusal comes before RocksDB replays the log. */
static void test_synced_seq(void **state)
{
    (void)state;
    char dir[64], path[128];
    kv_cf *cfs[2];
    kv_batch *b = NULL;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    kv_db *db = open_db(path, 1, 0, cfs);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kv_batch_new(&b, 0), ND_OK);
        kv_batch_put(b, cfs[0], "k", 1, "v", 1);
        assert_int_equal(kv_write(db, b, 1), ND_OK);
        kv_batch_free(b);
    }
    uint64_t seq = kv_latest_seq(db);
    assert_int_equal(seq, 3);
    close_db(db, cfs);
    for (int ro = 0; ro < 2; ro++) {
        kv_open_opts o = {.readonly = ro, .profiles = profiles, .nprofiles = 2,
                          .synced_seq = seq};
        assert_int_equal(kv_open(&db, path, &o, 2, names, name_profiles, cfs), ND_OK);
        close_db(db, cfs);
        o.synced_seq = seq + 5;
        assert_int_equal(kv_open(&db, path, &o, 2, names, name_profiles, cfs), ND_ECORRUPT);
        assert_non_null(strstr(nd_errmsg(), "acknowledged writes up to sequence 8 are missing"));
        assert_non_null(strstr(nd_errmsg(), "recovers to sequence 3"));
    }
    tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_mapping),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_open_and_families),
        cmocka_unit_test(test_batches_and_iterators),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_leveled_to_universal),
        cmocka_unit_test(test_damage_marks_handle),
        cmocka_unit_test(test_mem_plan),
        cmocka_unit_test(test_synced_seq),
        cmocka_unit_test(test_ingest_beside_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
