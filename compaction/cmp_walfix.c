/*
 * cmp_walfix.c — before a repair replays the write-ahead logs, rewrite
 * each one with exactly its intact records (st_repair, cmp_repair.c).
 *
 * Why: RocksDB's log reader, even in its most forgiving recovery mode
 * (kSkipAnyCorruptedRecords), drops the rest of a 32 KiB block after a
 * record whose checksum fails, since the damaged length could point
 * anywhere: one flipped byte lost 10 to 160 acknowledged documents of a
 * `add --sync` log (measured, 130-byte records). Every record carries its
 * own CRC, so the records after the damage can be found again: scan the
 * block byte by byte for the next header whose length fits and whose CRC
 * holds (a false match has odds of 2^-32), and keep going from there.
 *
 * The log format is cmp_logfmt.h's (pinned to what RocksDB 7.8 writes,
 * like cmp_direct.c for table files); a logical record here is one write
 * batch. Recyclable records (types 5-8, an 11-byte header) and any other
 * type stop the rewrite of that log: it is left as it is for RocksDB.
 *
 * The rewritten log holds the intact logical records in their order,
 * framed anew; a logical record any of whose fragments is damaged is
 * dropped whole. Written beside the log and renamed over it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_logfmt.h"
#include "cmp_walfix.h"
#include "nd_error.h"
#include "nd_grow.h"

#define BLOCK CMP_LOG_BLOCK
#define HEADER CMP_LOG_HEADER
enum { T_ZERO = CMP_LOG_ZERO, T_FULL = CMP_LOG_FULL, T_FIRST = CMP_LOG_FIRST,
       T_MIDDLE = CMP_LOG_MIDDLE, T_LAST = CMP_LOG_LAST };

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static int buf_put(buf *b, const void *src, size_t n)
{
    uint8_t *p = nd_grow(b->p, &b->cap, b->n + n, 1, 65536);
    if (!p) return nd_err_set(ND_ENOMEM, "repair: out of memory rewriting a log");
    b->p = p;
    memcpy(b->p + b->n, src, n);
    b->n += n;
    return ND_OK;
}

/* Frame one logical record into out, whose length is its offset. */
static int frame(buf *out, const uint8_t *rec, size_t len)
{
    int first = 1;
    do {
        size_t left = BLOCK - out->n % BLOCK;
        if (left < HEADER) {
            static const uint8_t zeros[HEADER];
            ND_FORWARD(buf_put(out, zeros, left));
            left = BLOCK;
        }
        size_t frag = len < left - HEADER ? len : left - HEADER;
        int last = frag == len;
        uint8_t type = first && last ? T_FULL : first ? T_FIRST : last ? T_LAST : T_MIDDLE;
        uint32_t crc = cmp_log_crc(type, rec, frag);
        uint8_t h[HEADER] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16),
                             (uint8_t)(crc >> 24), (uint8_t)frag, (uint8_t)(frag >> 8), type};
        ND_FORWARD(buf_put(out, h, HEADER));
        ND_FORWARD(buf_put(out, rec, frag));
        rec += frag;
        len -= frag;
        first = 0;
    } while (len > 0);
    return ND_OK;
}

/* Parse log bytes in[0..n) into out (framed anew). *dropped counts the
 * logical records (or runs of damaged bytes) left out; *foreign is set
 * for a record type this file does not know (out is then not to be
 * used). */
static int resync(buf *out, const uint8_t *in, size_t n, uint64_t *dropped, int *foreign)
{
    buf rec = {0};
    int in_rec = 0, broken = 0, in_damage = 0, rc = ND_OK;
    size_t pos = 0;
    while (rc == ND_OK && pos + HEADER <= n) {
        size_t block_end = (pos / BLOCK + 1) * BLOCK;
        if (block_end > n) block_end = n;
        if (block_end - pos < HEADER) { /* the block's zero trailer */
            pos = block_end;
            continue;
        }
        const uint8_t *h = in + pos;
        uint32_t crc = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                       (uint32_t)h[3] << 24;
        size_t len = (size_t)h[4] | (size_t)h[5] << 8;
        uint8_t type = h[6];
        /* Zeros where a header belongs: preallocated space, the block's
         * rest unused — if the rest is all zeros; else a zeroed header,
         * damage, past which the records are found again (skipping the
         * block lost the 10 to 250 records after it). Not while scanning
         * past damage: a payload holds runs of zeros too. */
        if (type == T_ZERO && len == 0 && crc == 0 && !in_damage) {
            size_t z = pos + HEADER;
            while (z < block_end && in[z] == 0) z++;
            if (z == block_end) {
                pos = block_end;
                continue;
            }
        }
        int fits = pos + HEADER + len <= block_end;
        if (fits && type >= 5 && type <= 8 && cmp_log_crc(type, h + HEADER, len) == crc) {
            *foreign = 1; /* recyclable records: not this file's to rewrite */
            break;
        }
        if (!fits || type < T_FULL || type > T_LAST || cmp_log_crc(type, h + HEADER, len) != crc) {
            if (!in_damage) (*dropped)++;
            in_damage = 1;
            broken = 1;
            pos++;
            continue;
        }
        in_damage = 0;
        const uint8_t *payload = h + HEADER;
        pos += HEADER + len;
        if (type == T_FULL || type == T_FIRST) {
            if (in_rec) (*dropped)++; /* a record whose last fragment never came */
            rec.n = 0;
            in_rec = 1;
            broken = 0;
        } else if (!in_rec) { /* a middle or last whose first is gone */
            continue;
        }
        if (broken) continue;
        rc = buf_put(&rec, payload, len);
        if (rc == ND_OK && (type == T_FULL || type == T_LAST)) {
            rc = frame(out, rec.p, rec.n);
            in_rec = 0;
        }
    }
    free(rec.p);
    return rc;
}

static int read_file(const char *path, uint8_t **out, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return nd_err_set(ND_EIO, "repair: cannot open %s: %s", path, strerror(errno));
    buf b = {0};
    uint8_t chunk[65536];
    size_t got;
    int rc = ND_OK;
    while (rc == ND_OK && (got = fread(chunk, 1, sizeof chunk, f)) > 0) rc = buf_put(&b, chunk, got);
    if (rc == ND_OK && ferror(f)) rc = nd_err_set(ND_EIO, "repair: cannot read %s", path);
    fclose(f);
    if (rc < 0) {
        free(b.p);
        return rc;
    }
    *out = b.p;
    *n = b.n;
    return ND_OK;
}

static int write_file(const char *path, const uint8_t *p, size_t n)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.walfix", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return nd_err_set(ND_EIO, "repair: cannot create %s: %s", tmp, strerror(errno));
    int ok = fwrite(p, 1, n, f) == n;
    ok = fflush(f) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, path) == 0) return ND_OK;
    int e = errno;
    remove(tmp);
    return nd_err_set(e == ENOSPC ? ND_ENOSPC : ND_EIO, "repair: cannot write %s: %s", path,
                      strerror(e));
}

int cmp_wal_resync(const char *dir, uint64_t *dropped)
{
    *dropped = 0;
    DIR *d = opendir(dir);
    if (!d) return nd_err_set(ND_EIO, "repair: cannot list %s: %s", dir, strerror(errno));
    int rc = ND_OK;
    for (struct dirent *e; rc == ND_OK && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".log") != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        uint8_t *in = NULL;
        size_t n = 0;
        buf out = {0};
        uint64_t lost = 0;
        int foreign = 0;
        rc = read_file(path, &in, &n);
        if (rc == ND_OK) rc = resync(&out, in, n, &lost, &foreign);
        /* Rewrite only a log that had damage: an intact one stays byte
         * for byte what RocksDB wrote. */
        if (rc == ND_OK && lost && !foreign) rc = write_file(path, out.p, out.n);
        if (!foreign) *dropped += lost;
        free(in);
        free(out.p);
    }
    closedir(d);
    return rc;
}
