/*
 * test_synced.c — the record of the last synced write (cmp_synced.c):
 * absent, written, read back newest first; a damaged slot leaves the
 * other; both damaged is ND_ECORRUPT naming the file; zeros (a write
 * killed before its first slot) are no record; the loss message names the
 * newest log, or says every log is gone; nd_db_sync on a store opened
 * without ND_DB_SYNC moves the record over the writes before it (a log
 * then deleted is a refused open, not a silent loss), and refuses a
 * read-only handle.
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmp_synced.h"
#include "neardup.h"
#include "nd_error.h"
#include "tmpdir.h"

static void poke(const char *dir, off_t at, const void *bytes, size_t n)
{
    char file[128];
    snprintf(file, sizeof file, "%s/%s", dir, ST_FILE_SYNCED);
    int fd = open(file, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, bytes, n, at), (ssize_t)n);
    close(fd);
}

static void test_record(void **state)
{
    (void)state;
    char dir[64];
    cmp_synced_rec r;
    int present = 1;
    cmp_synced *w = NULL;
    tmpdir_make(dir);
    assert_int_equal(cmp_synced_read(dir, &r, &present), ND_OK);
    assert_int_equal(present, 0);
    assert_int_equal(cmp_synced_open(&w, dir), ND_OK);
    /* opened, nothing written: an empty file is no record */
    assert_int_equal(cmp_synced_read(dir, &r, &present), ND_OK);
    assert_int_equal(present, 0);
    cmp_synced_rec a = {10, 5}, b = {20, 7};
    assert_int_equal(cmp_synced_put(w, &a), ND_OK);
    assert_int_equal(cmp_synced_put(w, &b), ND_OK);
    assert_int_equal(cmp_synced_close(w, 1), ND_OK);
    assert_int_equal(cmp_synced_read(dir, &r, &present), ND_OK);
    assert_int_equal(present, 1);
    assert_int_equal(r.seq, 20);
    assert_int_equal(r.docs, 7);
    /* A new writer goes on from the newest slot: its write replaces a. */
    assert_int_equal(cmp_synced_open(&w, dir), ND_OK);
    cmp_synced_rec c = {30, CMP_SYNCED_NO_DOCS};
    assert_int_equal(cmp_synced_put(w, &c), ND_OK);
    assert_int_equal(cmp_synced_close(w, 1), ND_OK);
    assert_int_equal(cmp_synced_read(dir, &r, &present), ND_OK);
    assert_int_equal(r.seq, 30);
    assert_true(r.docs == CMP_SYNCED_NO_DOCS);
    /* c is in slot 0 (the third write); damaged, b in slot 1 is read */
    poke(dir, 17, "x", 1);
    assert_int_equal(cmp_synced_read(dir, &r, &present), ND_OK);
    assert_int_equal(present, 1);
    assert_int_equal(r.seq, 20);
    poke(dir, 512 + 17, "x", 1);
    assert_int_equal(cmp_synced_read(dir, &r, &present), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), ST_FILE_SYNCED));
    /* zeros: a write killed before its first slot */
    uint8_t zeros[1024] = {0};
    poke(dir, 0, zeros, sizeof zeros);
    assert_int_equal(cmp_synced_read(dir, &r, &present), ND_OK);
    assert_int_equal(present, 0);
    assert_int_equal(cmp_synced_remove(dir), ND_OK);
    assert_int_equal(cmp_synced_remove(dir), ND_OK); /* none: nothing to do */
    tmpdir_remove(dir);
}

static void test_loss_message(void **state)
{
    (void)state;
    char dir[64], file[128];
    tmpdir_make(dir);
    assert_int_equal(cmp_synced_loss(dir, 12006, 6), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "acknowledged writes up to sequence 12006 are missing"));
    assert_non_null(strstr(nd_errmsg(), "every write-ahead log was deleted"));
    const char *logs[2] = {"000022.log", "000026.log"};
    for (int i = 0; i < 2; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, logs[i]);
        close(open(file, O_CREAT | O_WRONLY, 0644));
    }
    assert_int_equal(cmp_synced_loss(dir, 12006, 6038), ND_ECORRUPT);
    assert_non_null(strstr(nd_errmsg(), "recovers to sequence 6038"));
    assert_non_null(strstr(nd_errmsg(), "000026.log (or one before it) was deleted or cut"));
    tmpdir_remove(dir);
}

static nd_db *open_db(const char *path, unsigned flags)
{
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = flags | ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    o.expected_docs = 1000;
    int rc = nd_db_open(&db, path, &o);
    if (rc != ND_OK) fail_msg("open %s: %s", path, nd_errmsg());
    return db;
}

static void add(nd_db *db, const char *key, uint64_t fp)
{
    assert_int_equal(nd_db_add(db, key, strlen(key), fp, 0.0, 1), ND_OK);
}

/* A child writes without ND_DB_SYNC, syncs, writes once more unsynced
 * and dies without closing (kill -9's state: no flush, no clean close). */
static void write_and_die(const char *path, int sync)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nd_db *db = open_db(path, ND_DB_CREATE);
        add(db, "a", 0x1111);
        add(db, "b", 0x2222);
        add(db, "c", 0x3333);
        if (sync && nd_db_sync(db) != ND_OK) _exit(3);
        add(db, "d", 0x4444);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void remove_logs(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *e;
    char file[256];
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".log") == 0) {
            snprintf(file, sizeof file, "%s/%s", path, e->d_name);
            assert_int_equal(unlink(file), 0);
        }
    }
    closedir(d);
}

static void test_db_sync(void **state)
{
    (void)state;
    char dir[64], path[128];
    cmp_synced_rec r0, r1, r2;
    int present;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    assert_int_equal(nd_db_sync(NULL), ND_EINVAL);
    nd_db *db = open_db(path, ND_DB_CREATE);
    /* the open's own synced writes may have left a record: the baseline */
    assert_int_equal(cmp_synced_read(path, &r0, &present), ND_OK);
    if (!present) r0 = (cmp_synced_rec){0, 0};
    add(db, "a", 0x1111);
    add(db, "b", 0x2222);
    /* unsynced writes do not move it */
    assert_int_equal(cmp_synced_read(path, &r1, &present), ND_OK);
    assert_true(!present || r1.seq == r0.seq);
    assert_int_equal(nd_db_sync(db), ND_OK);
    assert_int_equal(cmp_synced_read(path, &r1, &present), ND_OK);
    assert_int_equal(present, 1);
    assert_true(r1.seq > r0.seq);
    assert_int_equal(r1.docs, 2);
    add(db, "c", 0x3333);
    assert_int_equal(nd_db_sync(db), ND_OK);
    assert_int_equal(cmp_synced_read(path, &r2, &present), ND_OK);
    assert_true(r2.seq > r1.seq);
    assert_int_equal(r2.docs, 3);
    assert_int_equal(nd_db_sync(db), ND_OK); /* nothing new: fine */
    assert_int_equal(nd_db_close(db), ND_OK);
    /* a read-only handle has nothing to sync and says so */
    db = open_db(path, ND_DB_READONLY);
    assert_int_equal(nd_db_sync(db), ND_EREADONLY);
    assert_non_null(strstr(nd_errmsg(), "read-only"));
    assert_int_equal(nd_db_close(db), ND_OK);
    tmpdir_remove(dir);
}

/* What the record is for: after nd_db_sync and a crash, a store whose
 * log was deleted lost acknowledged-durable writes, and its open says so.
 * Without the sync the record stays at the store's creation (whose
 * writes are synced), below the three documents. */
static void test_db_sync_loss(void **state)
{
    (void)state;
    char dir[64], path[128];
    cmp_synced_rec r, unsynced;
    int present;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    write_and_die(path, 0);
    assert_int_equal(cmp_synced_read(path, &unsynced, &present), ND_OK);
    assert_true(!present || unsynced.docs != 3);
    if (!present) unsynced.seq = 0;
    tmpdir_remove(dir);

    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    write_and_die(path, 1);
    assert_int_equal(cmp_synced_read(path, &r, &present), ND_OK);
    assert_int_equal(present, 1);
    assert_int_equal(r.docs, 3); /* the sync's, not "d" written after it */
    assert_true(r.seq > unsynced.seq);
    remove_logs(path);
    nd_db *db = NULL;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_FINGERPRINT_ONLY | ND_DB_NO_BACKGROUND;
    assert_int_equal(nd_db_open(&db, path, &o), ND_ECORRUPT);
    char want[64];
    snprintf(want, sizeof want, "acknowledged writes up to sequence %llu ",
             (unsigned long long)r.seq);
    assert_non_null(strstr(nd_errmsg(), want));
    tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_loss_message),
        cmocka_unit_test(test_db_sync),
        cmocka_unit_test(test_db_sync_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
