/*
 * test_synced.c — the record of the last synced write (cmp_synced.c):
 * absent, written, read back newest first; a damaged slot leaves the
 * other; both damaged is ND_ECORRUPT naming the file; zeros (a write
 * killed before its first slot) are no record; the loss message names the
 * newest log, or says every log is gone.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_loss_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
