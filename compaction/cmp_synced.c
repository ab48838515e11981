/*
 * cmp_synced.c — the record of the last synced write (cmp_synced.h says
 * why and who calls it).
 *
 * The file is 1 KiB: slot i at byte 512 * i, each 36 bytes: "NDSYNC01",
 * the write count n (the newer slot has the larger), the sequence number,
 * the document counter (all big-endian 64-bit), then the CRC32C of those
 * 32 bytes as the log format masks it (cmp_log_crc). Write n goes to slot
 * n % 2 in place: no rename, no metadata change, so its fdatasync is one
 * small write to the device (measured cost: docs/ARCHITECTURE.md,
 * "Durability").
 */
#include "cmp_synced.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmp_logfmt.h"
#include "nd_endian.h"
#include "nd_error.h"

#define MAGIC "NDSYNC01"
#define SLOT 512
#define REC_LEN 36

/* The record reaches the device at most this long after its write
 * (below). */
#ifndef CMP_SYNCED_SYNC_MS
#define CMP_SYNCED_SYNC_MS 100
#endif

struct cmp_synced {
    int fd;
    int64_t synced_ms; /* when the file was last fdatasync'd (CLOCK_MONOTONIC) */
    int dir_synced; /* the directory was fsynced after the file's creation */
    uint64_t n;     /* writes so far (the next goes to slot n % 2) */
    char *dir;
};

static char *file_of(const char *dir)
{
    char *p = malloc(strlen(dir) + sizeof ST_FILE_SYNCED + 1);
    if (p) sprintf(p, "%s/%s", dir, ST_FILE_SYNCED);
    return p;
}

static void encode(uint8_t out[REC_LEN], uint64_t n, const cmp_synced_rec *r)
{
    memcpy(out, MAGIC, 8);
    nd_store_be64(out + 8, n);
    nd_store_be64(out + 16, r->seq);
    nd_store_be64(out + 24, r->docs);
    uint32_t crc = cmp_log_crc(0, out, 32);
    for (int i = 0; i < 4; i++) out[32 + i] = (uint8_t)(crc >> (8 * i));
}

/* 1 when slot p holds a record (its count into *n, the record into *r). */
static int decode(const uint8_t *p, size_t len, uint64_t *n, cmp_synced_rec *r)
{
    if (len < REC_LEN || memcmp(p, MAGIC, 8) != 0) return 0;
    uint32_t crc = 0;
    for (int i = 0; i < 4; i++) crc |= (uint32_t)p[32 + i] << (8 * i);
    if (cmp_log_crc(0, p, 32) != crc) return 0;
    *n = nd_load_be64(p + 8);
    r->seq = nd_load_be64(p + 16);
    r->docs = nd_load_be64(p + 24);
    return 1;
}

int cmp_synced_read(const char *dir, cmp_synced_rec *out, int *present)
{
    uint8_t buf[2 * SLOT] = {0};
    *out = (cmp_synced_rec){0};
    *present = 0;
    char *file = file_of(dir);
    ND_RETURN_IF(!file, ND_ENOMEM, "storage: out of memory");
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        free(file);
        return ND_OK;
    }
    int rc = ND_OK;
    ssize_t got = fd < 0 ? -1 : pread(fd, buf, sizeof buf, 0);
    if (got < 0) {
        rc = nd_err_set(ND_EIO, "cannot read %s: %s", file, strerror(errno));
    } else if (got > 0) {
        uint64_t n[2] = {0, 0};
        cmp_synced_rec r[2];
        int ok0 = decode(buf, (size_t)got, &n[0], &r[0]);
        int ok1 = got > SLOT && decode(buf + SLOT, (size_t)got - SLOT, &n[1], &r[1]);
        if (ok0 || ok1) {
            *out = r[ok1 && (!ok0 || n[1] > n[0])];
            *present = 1;
        } else {
            /* A write killed before its first slot landed leaves zeros. */
            int zeros = 1;
            for (ssize_t i = 0; i < got && zeros; i++) zeros = buf[i] == 0;
            if (!zeros)
                rc = nd_err_set(ND_ECORRUPT,
                                "%s is damaged (no record passes its checksum): a damaged "
                                "database, which `neardup repair` salvages",
                                file);
        }
    }
    if (fd >= 0) close(fd);
    free(file);
    return rc;
}

int cmp_synced_open(cmp_synced **out, const char *dir)
{
    cmp_synced_rec r;
    int present;
    cmp_synced *w = calloc(1, sizeof *w);
    char *file = file_of(dir);
    int rc = ND_OK;
    if (w) w->fd = -1;
    if (!w || !file || !(w->dir = strdup(dir))) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    /* Go on from the newest slot: a record damaged (refused at open, so
     * only after a repair's removal) starts again at slot 0. */
    if (cmp_synced_read(dir, &r, &present) < 0) nd_err_clear();
    w->fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (w->fd < 0) ND_FAIL(ND_EIO, "cannot open %s: %s", file, strerror(errno));
    uint8_t b[SLOT];
    for (int i = 0; i < 2 && present; i++) {
        uint64_t n;
        cmp_synced_rec x;
        if (pread(w->fd, b, sizeof b, (off_t)i * SLOT) >= REC_LEN && decode(b, REC_LEN, &n, &x) &&
            n + 1 > w->n)
            w->n = n + 1;
    }
    *out = w;
    w = NULL;
cleanup:
    (void)cmp_synced_close(w, 0);
    free(file);
    return rc;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int cmp_synced_put(cmp_synced *w, const cmp_synced_rec *r)
{
    uint8_t b[SLOT] = {0};
    encode(b, w->n, r);
    /* The first write fills the whole file, so that later ones change no
     * size (fdatasync then writes no metadata). */
    if (w->n == 0 && pwrite(w->fd, b, sizeof b, SLOT) != (ssize_t)sizeof b)
        return nd_err_set(ND_EIO, "cannot write %s/%s: %s", w->dir, ST_FILE_SYNCED, strerror(errno));
    /* Written at once, synced at most every CMP_SYNCED_SYNC_MS: an fsync
     * per write halved the rate of `add --sync` (each document its own
     * commit). A kill -9 loses nothing of the page cache; a power cut may
     * leave the record of a write up to that long before it, a weaker
     * check, never a false one. */
    int64_t now = now_ms();
    int sync = w->n == 0 || now - w->synced_ms >= CMP_SYNCED_SYNC_MS;
    if (pwrite(w->fd, b, sizeof b, (off_t)(w->n % 2) * SLOT) != (ssize_t)sizeof b ||
        (sync && fdatasync(w->fd) != 0))
        return nd_err_set(ND_EIO, "cannot write %s/%s: %s", w->dir, ST_FILE_SYNCED, strerror(errno));
    if (!w->dir_synced) {
        int dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        w->dir_synced = dfd >= 0 && fsync(dfd) == 0;
        if (dfd >= 0) close(dfd);
    }
    if (sync) w->synced_ms = now;
    w->n++;
    return ND_OK;
}

int cmp_synced_close(cmp_synced *w, int sync)
{
    if (!w) return ND_OK;
    int rc = ND_OK;
    if (sync && w->fd >= 0 && w->n && fdatasync(w->fd) != 0) /* the last record, on its way */
        rc = nd_err_set(ND_EIO, "cannot write %s/%s: %s", w->dir, ST_FILE_SYNCED, strerror(errno));
    if (w->fd >= 0) close(w->fd);
    free(w->dir);
    free(w);
    return rc;
}

int cmp_synced_remove(const char *dir)
{
    char *file = file_of(dir);
    ND_RETURN_IF(!file, ND_ENOMEM, "storage: out of memory");
    int rc = unlink(file) == 0 || errno == ENOENT
                 ? ND_OK
                 : nd_err_set(ND_EIO, "cannot remove %s: %s", file, strerror(errno));
    free(file);
    return rc;
}

int cmp_synced_loss(const char *dir, uint64_t want, uint64_t got)
{
    char newest[64] = "";
    unsigned long long best = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        unsigned long long n;
        int end = 0;
        if (sscanf(e->d_name, "%llu.log%n", &n, &end) == 1 && e->d_name[end] == '\0' &&
            (!newest[0] || n > best)) {
            best = n;
            snprintf(newest, sizeof newest, "%06llu.log", n);
        }
    }
    if (d) closedir(d);
    char which[128];
    if (newest[0]) snprintf(which, sizeof which, "the write-ahead log %s (or one before it) was "
                            "deleted or cut", newest);
    else snprintf(which, sizeof which, "every write-ahead log was deleted");
    return nd_err_set(ND_ECORRUPT,
                      "%s: acknowledged writes up to sequence %" PRIu64 " are missing (the store "
                      "recovers to sequence %" PRIu64 "; %s records the last synced write): %s; "
                      "restore a backup, or run `neardup repair` (which accepts the loss)",
                      dir, want, got, ST_FILE_SYNCED, which);
}
