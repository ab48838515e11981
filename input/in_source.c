/*
 * in_source.c — the bytes of a stream input (every format but files):
 * read(2) into one buffer, gzip or zstd decoded on the way, lines and
 * blocks handed out as views into the buffer.
 *
 * Not zlib's gzread, for two reasons. gzread fills its buffer before it
 * returns (it loops on read(2) until the request is met, 128 KiB here),
 * so on a live pipe — a crawler that writes a line and waits for the
 * answer — it waits for bytes that never come; and reading a line with
 * gzgetc costs a call per byte. Here a read(2) returns what the pipe
 * holds, a line is found with memchr, and gzip is told by the first two
 * bytes (read as they come, so detection waits for nothing more), then
 * inflated from whatever has arrived.
 *
 * gzip: members may be concatenated, each starting with the magic; bytes
 * after a member that do not start another are ignored, as gzread does.
 * Input that ends inside a member is corrupt ("truncated").
 *
 * zstd (magic 28 b5 2f fd, or a skippable frame's 5? 2a 4d 18): frames may
 * be concatenated, skippable frames are passed over, as `zstd -d` does;
 * unlike gzip, bytes after the last frame that do not start another are
 * corrupt data, as they are to `zstd -d`. Decoded with the streaming
 * decompressor (ZSTD_decompressStream) from whatever has arrived, like
 * gzip. A frame's window may be at most 2^IN_ZSTD_WINDOW_LOG bytes
 * (128 MiB, libzstd's own default limit): the decoder's memory is bounded
 * whatever the frame header claims, and the output goes into the same
 * buffer and line limit as plain input, so a small file that expands
 * without end (a "zstd bomb") costs time, not memory: its over-long line
 * is reported like any other.
 *
 * The buffer holds buf_cap bytes plus IN_PAD + 1 spare ones, and the
 * IN_PAD bytes after the last byte read are kept zeroed, so every view is
 * followed by IN_PAD initialised bytes and a line can be NUL-terminated in
 * place. It starts at 128 KiB and doubles while one line needs more, up
 * to the 64 MiB limit (plus one read).
 *
 * Also the reader's messages (in_fail, in_fail_file) and its record
 * copies (in_copy): this file is the layer under every format (see
 * in_source.h) and calls nothing of input/ itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <neardup.h>

#include "in_source.h"

#define IN_BUF_START (1u << 17)
#define IN_ZIN_CAP (1u << 16)
#define IN_ZSTD_WINDOW_LOG 27

enum { GZ_UNKNOWN = -1, GZ_PLAIN = 0, GZ_MEMBER = 1, GZ_BETWEEN = 2, GZ_ZSTD = 3 };

/* A compressed input's decoder and the compressed bytes read ahead of
 * it: gzip's inflater (the pending bytes are zs.next_in, zs.avail_in) or
 * zstd's decompressor (the pending bytes are zin[zpos, zlen)). */
struct in_gz {
    int inflating; /* zs is initialised */
    z_stream zs;
    ZSTD_DCtx *zd; /* zstd: the decompressor */
    size_t zpos, zlen;
    int frame_open; /* zstd: inside a frame (its end not yet decoded) */
    int out_full;   /* zstd: the last call filled the output: the decoder
                       may hold more, to be had without reading */
    unsigned char *zin; /* compressed bytes read, not yet decoded */
    size_t zin_cap;
};

int in_fail(in_reader *r, int code, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(r->err, sizeof r->err, "%s:%llu: ", r->path, (unsigned long long)r->lineno);
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

int in_fail_file(in_reader *r, int code, const char *name, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(r->err, sizeof r->err, "%s: ", name);
    if (n < 0 || (size_t)n >= sizeof r->err) n = 0;
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

int in_copy(char **dst, size_t *cap, const char *src, size_t n)
{
    if (n + 1 > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < n + 1) c *= 2;
        char *p = realloc(*dst, c);
        if (!p) return -2;
        *dst = p;
        *cap = c;
    }
    memcpy(*dst, src, n);
    (*dst)[n] = '\0';
    return 0;
}

int in_buf_reserve(in_reader *r, size_t need)
{
    if (need <= r->buf_cap) return 0;
    size_t c = r->buf_cap ? r->buf_cap : IN_BUF_START;
    while (c < need) c *= 2;
    char *p = realloc(r->buf, c + IN_PAD + 1);
    if (!p) return -1;
    r->buf = p;
    r->buf_cap = c;
    return 0;
}

static int (*read_stop)(void);

void in_source_set_stop(int (*stop)(void)) { read_stop = stop; }

static ssize_t read_some(int fd, void *p, size_t n)
{
    for (;;) {
        ssize_t k = read(fd, p, n);
        if (k >= 0 || errno != EINTR || (read_stop && read_stop())) return k;
    }
}

/* Take fd (owned from now on, closed by in_source_close) as the source. */
static int open_fd(in_reader *r, int fd)
{
    struct stat st;
    r->fd = fd;
    r->gzip = GZ_UNKNOWN;
    if (fstat(fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return in_fail_file(r, -2, r->path, "cannot open: %s", strerror(EISDIR));
        r->live = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode);
    }
    if (in_buf_reserve(r, IN_BUF_START)) return in_fail_file(r, -2, r->path, "out of memory");
    return 0;
}

int in_source_open(in_reader *r, const char *path)
{
    int fd = strcmp(path, "-") == 0 ? fcntl(0, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return in_fail_file(r, -2, r->path, "cannot open: %s", strerror(errno));
    return open_fd(r, fd);
}

void in_source_close(in_reader *r)
{
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
    if (r->gz) {
        if (r->gz->inflating) inflateEnd(&r->gz->zs);
        ZSTD_freeDCtx(r->gz->zd); /* accepts NULL */
        free(r->gz->zin);
        free(r->gz);
        r->gz = NULL;
    }
    free(r->buf);
    r->buf = NULL;
}

/* Read more compressed bytes after those not yet inflated. 1 some,
 * 0 end of input, -2 error. */
static int read_compressed(in_reader *r)
{
    struct in_gz *g = r->gz;
    if (r->raw_eof) return 0;
    if (g->zs.avail_in && g->zs.next_in != g->zin) memmove(g->zin, g->zs.next_in, g->zs.avail_in);
    g->zs.next_in = g->zin;
    ssize_t k = read_some(r->fd, g->zin + g->zs.avail_in, g->zin_cap - g->zs.avail_in);
    if (k < 0) return in_fail(r, -2, "read error: %s", strerror(errno));
    if (k == 0) {
        r->raw_eof = 1;
        return 0;
    }
    r->raw_bytes += (uint64_t)k;
    g->zs.avail_in += (uInt)k;
    return 1;
}

static const unsigned char zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

/* Do the n first bytes p leave a compressed stream possible? gzip's magic
 * is 1f 8b, zstd's 28 b5 2f fd, a zstd skippable frame's 5? 2a 4d 18. */
static int magic_pending(const unsigned char *p, size_t n)
{
    static const unsigned char skippable[3] = {0x2a, 0x4d, 0x18};
    if (n == 0) return 1;
    if (n == 1 && p[0] == 0x1f) return 1;
    if (n >= 4) return 0;
    if (memcmp(p, zstd_magic, n) == 0) return 1;
    return (p[0] & 0xf0) == 0x50 && memcmp(p + 1, skippable, n - 1) == 0;
}

static int is_zstd(const unsigned char *p, size_t n)
{
    return n >= 4 && (memcmp(p, zstd_magic, 4) == 0 ||
                      ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18));
}

/* The first bytes: gzip's magic 1f 8b, zstd's, or plain (copied to buf). */
static int detect(in_reader *r)
{
    if (!r->gz && !(r->gz = calloc(1, sizeof *r->gz))) return in_fail(r, -2, "out of memory");
    struct in_gz *g = r->gz;
    if (!g->zin && !(g->zin = malloc(IN_ZIN_CAP))) return in_fail(r, -2, "out of memory");
    g->zin_cap = IN_ZIN_CAP;
    g->zs.next_in = g->zin;
    g->zs.avail_in = 0;
    while (magic_pending(g->zin, g->zs.avail_in)) {
        int rc = read_compressed(r);
        if (rc < 0) return rc;
        if (rc == 0) break;
    }
    if (g->zs.avail_in >= 2 && g->zin[0] == 0x1f && g->zin[1] == 0x8b) {
        if (inflateInit2(&g->zs, 15 + 16) != Z_OK) return in_fail(r, -2, "out of memory");
        g->inflating = 1;
        r->gzip = GZ_MEMBER;
        return 0;
    }
    if (is_zstd(g->zin, g->zs.avail_in)) {
        if (!(g->zd = ZSTD_createDCtx()) ||
            ZSTD_isError(ZSTD_DCtx_setParameter(g->zd, ZSTD_d_windowLogMax, IN_ZSTD_WINDOW_LOG)))
            return in_fail(r, -2, "out of memory");
        g->zpos = 0; /* the bytes read so far start at zin: next_in == zin */
        g->zlen = g->zs.avail_in;
        g->zs.avail_in = 0;
        r->gzip = GZ_ZSTD;
        return 0;
    }
    r->gzip = GZ_PLAIN;
    memcpy(r->buf + r->end, g->zin, g->zs.avail_in); /* end == 0: the first fill */
    r->end += g->zs.avail_in;
    g->zs.avail_in = 0;
    free(g->zin);
    free(g);
    r->gz = NULL;
    return 0;
}

/* Inflate into buf[end, buf_cap); with may_read, read(2) when the
 * compressed bytes run out. 1 bytes added, 0 none (end of input, or
 * nothing pending without may_read), -2 error. */
static int inflate_some(in_reader *r, int may_read)
{
    struct in_gz *g = r->gz;
    for (;;) {
        if (r->gzip == GZ_BETWEEN) { /* another member, or the end */
            while (g->zs.avail_in < 2 && may_read) {
                int rc = read_compressed(r);
                if (rc < 0) return rc;
                if (rc == 0) break;
            }
            if (g->zs.avail_in < 2 && !r->raw_eof) return 0; /* !may_read */
            if (g->zs.avail_in < 2 || g->zs.next_in[0] != 0x1f || g->zs.next_in[1] != 0x8b) {
                g->zs.avail_in = 0; /* trailing bytes: ignored */
                r->eof = 1;
                return 0;
            }
            inflateReset(&g->zs);
            r->gzip = GZ_MEMBER;
        }
        if (g->zs.avail_in == 0) {
            if (!may_read) return 0;
            int rc = read_compressed(r);
            if (rc < 0) return rc;
            if (rc == 0) return in_fail(r, -2, "corrupt or truncated gzip data: unexpected end of file");
        }
        size_t room = r->buf_cap - r->end;
        g->zs.next_out = (Bytef *)r->buf + r->end;
        g->zs.avail_out = (uInt)(room > (1u << 30) ? (1u << 30) : room);
        uInt before = g->zs.avail_out;
        int zr = inflate(&g->zs, Z_NO_FLUSH);
        size_t got = before - g->zs.avail_out;
        r->end += got;
        if (zr == Z_STREAM_END) r->gzip = GZ_BETWEEN;
        else if (zr == Z_MEM_ERROR) return in_fail(r, -2, "out of memory");
        else if (zr != Z_OK && zr != Z_BUF_ERROR)
            return in_fail(r, -2, "corrupt or truncated gzip data: %s",
                           g->zs.msg ? g->zs.msg : "invalid stream");
        if (got) return 1;
    }
}

/* zstd: read more compressed bytes after those not yet decoded. 1 some,
 * 0 end of input, -2 error. */
static int read_zstd(in_reader *r)
{
    struct in_gz *g = r->gz;
    if (r->raw_eof) return 0;
    if (g->zpos) {
        memmove(g->zin, g->zin + g->zpos, g->zlen - g->zpos);
        g->zlen -= g->zpos;
        g->zpos = 0;
    }
    ssize_t k = read_some(r->fd, g->zin + g->zlen, g->zin_cap - g->zlen);
    if (k < 0) return in_fail(r, -2, "read error: %s", strerror(errno));
    if (k == 0) {
        r->raw_eof = 1;
        return 0;
    }
    r->raw_bytes += (uint64_t)k;
    g->zlen += (size_t)k;
    return 1;
}

/* Decode zstd into buf[end, buf_cap); with may_read, read(2) when the
 * compressed bytes run out. inflate_some's codes. */
static int unzstd_some(in_reader *r, int may_read)
{
    struct in_gz *g = r->gz;
    for (;;) {
        if (g->zpos == g->zlen && !g->out_full) {
            if (!may_read) return 0;
            int rc = read_zstd(r);
            if (rc < 0) return rc;
            if (rc == 0) {
                if (g->frame_open)
                    return in_fail(r, -2, "corrupt or truncated zstd data: unexpected end of file");
                return 0;
            }
        }
        ZSTD_inBuffer in = {g->zin, g->zlen, g->zpos};
        ZSTD_outBuffer out = {r->buf + r->end, r->buf_cap - r->end, 0};
        size_t ret = ZSTD_decompressStream(g->zd, &out, &in);
        g->zpos = in.pos;
        if (ZSTD_isError(ret)) {
            if (ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation)
                return in_fail(r, -2, "out of memory");
            if (ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge)
                return in_fail(r, -2, "zstd frame needs a window above the %u MiB limit "
                               "(decompress it with zstd -d --long=31 first)",
                               1u << (IN_ZSTD_WINDOW_LOG - 20));
            return in_fail(r, -2, "corrupt or truncated zstd data: %s", ZSTD_getErrorName(ret));
        }
        g->frame_open = ret != 0;
        g->out_full = out.pos == out.size;
        r->end += out.pos;
        if (out.pos) return 1;
    }
}

static int fill_raw(in_reader *r);

/* Append bytes at buf[end] (end < buf_cap). 1 some, 0 end of input
 * (r->eof set), -2 error. */
static int fill(in_reader *r)
{
    /* Every read asks first whether a signal asked the command to stop,
     * so that no input (an endless line, /dev/zero) keeps it reading. */
    if (read_stop && read_stop()) return in_fail(r, -2, "interrupted");
    int rc = fill_raw(r);
    memset(r->buf + r->end, 0, IN_PAD + 1);
    return rc;
}

static int fill_raw(in_reader *r)
{
    if (r->eof) return 0;
    if (r->gzip == GZ_UNKNOWN) {
        int rc = detect(r);
        if (rc < 0) return rc;
        if (r->gzip == GZ_PLAIN && r->end > 0) return 1;
    }
    if (r->gzip != GZ_PLAIN) {
        int rc = r->gzip == GZ_ZSTD ? unzstd_some(r, 1) : inflate_some(r, 1);
        if (rc == 0) r->eof = 1;
        return rc;
    }
    if (r->raw_eof) {
        r->eof = 1;
        return 0;
    }
    ssize_t k = read_some(r->fd, r->buf + r->end, r->buf_cap - r->end);
    if (k < 0) return in_fail(r, -2, "read error: %s", strerror(errno));
    if (k == 0) {
        r->raw_eof = r->eof = 1;
        return 0;
    }
    r->raw_bytes += (uint64_t)k;
    r->end += (size_t)k;
    return 1;
}

/* Move the unread bytes to the front of buf; returns how far they moved. */
static size_t compact(in_reader *r)
{
    size_t moved = r->beg;
    if (moved) {
        memmove(r->buf, r->buf + r->beg, r->end - r->beg);
        r->end -= moved;
        r->beg = 0;
    }
    r->ready_ok = 0;
    return moved;
}

/* After a line over the limit was reported: drop the rest of it, up to
 * its newline or the end, in bounded memory. 0, or in_read_line's -2. */
static int skip_rest_of_line(in_reader *r)
{
    for (;;) {
        char *nl = r->end > r->beg ? memchr(r->buf + r->beg, '\n', r->end - r->beg) : NULL;
        if (nl) {
            r->beg = (size_t)(nl - r->buf) + 1;
            break;
        }
        r->beg = r->end = 0;
        if (r->eof) break;
        int rc = fill(r);
        if (rc < 0) return rc;
    }
    r->skip_line = 0;
    return 0;
}

int in_read_line(in_reader *r)
{
    size_t scan = r->beg; /* no newline in buf[beg, scan) */
    int too_long = 0;
    r->len = 0;
    if (r->skip_line) {
        int rc = skip_rest_of_line(r);
        if (rc < 0) return rc;
        scan = r->beg;
    }
    r->lineno++;
    for (;;) {
        char *nl = scan < r->end ? memchr(r->buf + scan, '\n', r->end - scan) : NULL;
        if (nl) {
            size_t e = (size_t)(nl - r->buf);
            if (!too_long && e - r->beg > ND_MAX_DOC_BYTES) too_long = 1;
            r->line = r->buf + r->beg;
            r->len = e - r->beg;
            r->beg = e + 1;
            break;
        }
        scan = r->end;
        if (!too_long && r->end - r->beg > ND_MAX_DOC_BYTES) {
            /* Reported now, not at its newline, which may never come (an
             * endless input): the next read drops the rest of the line. */
            r->beg = r->end = 0;
            r->skip_line = 1;
            return in_fail(r, -1, "line longer than the %u MiB limit", ND_MAX_DOC_BYTES >> 20);
        }
        if (r->eof) {
            if (r->end == r->beg && !too_long) {
                r->lineno--;
                return 0;
            }
            r->line = r->buf + r->beg;
            r->len = r->end - r->beg;
            r->beg = r->end;
            break;
        }
        scan -= compact(r);
        if (r->end == r->buf_cap && in_buf_reserve(r, r->buf_cap * 2))
            return in_fail(r, -2, "out of memory");
        int rc = fill(r);
        if (rc < 0) return rc;
    }
    if (too_long) {
        r->len = 0;
        return in_fail(r, -1, "line longer than the %u MiB limit", ND_MAX_DOC_BYTES >> 20);
    }
    if (r->len && r->line[r->len - 1] == '\r') r->len--;
    /* A UTF-8 byte order mark opening the input (as some editors and
     * spreadsheets write) is no part of the first key or record. */
    if (r->lineno == 1 && r->len >= 3 && memcmp(r->line, "\xEF\xBB\xBF", 3) == 0) {
        r->line += 3;
        r->len -= 3;
    }
    r->line[r->len] = '\0';
    return 1;
}

int in_read_bytes(in_reader *r, size_t n)
{
    while (r->end - r->beg < n) {
        if (r->eof)
            return in_fail(r, -2, "record claims %zu bytes but the input ends after %zu", n,
                           r->end - r->beg);
        compact(r);
        if (in_buf_reserve(r, n)) return in_fail(r, -2, "out of memory");
        int rc = fill(r);
        if (rc < 0) return rc;
    }
    r->line = r->buf + r->beg;
    r->len = n;
    r->beg += n;
    return 1;
}

int in_skip_bytes(in_reader *r, size_t n)
{
    for (;;) {
        size_t have = r->end - r->beg;
        if (have >= n) {
            r->beg += n;
            return 1;
        }
        n -= have;
        r->beg = r->end = 0;
        r->ready_ok = 0;
        if (r->eof) return 1; /* the input ends inside: nothing left to read */
        int rc = fill(r);
        if (rc < 0) return rc;
    }
}

int in_source_would_block(in_reader *r)
{
    if (!r->live || r->eof || r->fd < 0) return 0;
    for (;;) {
        /* A complete line that is not blank (blank lines are skipped)?
         * r->ready remembers the newline found last, so a line is looked
         * at once however often this is asked. */
        if (r->ready_ok && r->ready >= r->beg) return 0;
        size_t ls = r->beg;
        while (ls < r->end) {
            char *nl = memchr(r->buf + ls, '\n', r->end - ls);
            if (!nl) break;
            size_t e = (size_t)(nl - r->buf);
            if (e > ls && !(e == ls + 1 && r->buf[ls] == '\r')) {
                r->ready = e;
                r->ready_ok = 1;
                return 0;
            }
            ls = e + 1;
        }
        if (r->gzip != GZ_MEMBER && r->gzip != GZ_BETWEEN && r->gzip != GZ_ZSTD) break;
        /* gzip or zstd: decode what has come, without reading */
        if (r->end == r->buf_cap) return 0; /* full: the reader makes room */
        int rc = r->gzip == GZ_ZSTD ? unzstd_some(r, 0) : inflate_some(r, 0);
        memset(r->buf + r->end, 0, IN_PAD + 1); /* as fill() keeps it */
        if (rc < 0 || r->eof) return 0; /* the reader reports or ends */
        if (rc == 0) break;
    }
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    return poll(&p, 1, 0) == 0;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

int in_source_peek(in_reader *r, size_t max)
{
    for (;;) {
        size_t i = r->beg;
        while (i < r->end && is_blank(r->buf[i])) i++;
        if (i < r->end && memchr(r->buf + i, '\n', r->end - i)) break;
        if (r->end - r->beg >= max || r->eof || r->end == r->buf_cap) break;
        int rc = fill(r);
        if (rc < 0) return rc;
    }
    r->line = r->buf + r->beg;
    r->len = r->end - r->beg;
    if (r->len >= 3 && memcmp(r->line, "\xEF\xBB\xBF", 3) == 0) { /* as in_read_line */
        r->line += 3;
        r->len -= 3;
    }
    return 0;
}

int in_read_all(in_reader *r)
{
    int too_long = 0;
    for (;;) {
        if (r->end - r->beg > ND_MAX_DOC_BYTES) { /* only the end matters now */
            too_long = 1;
            r->beg = r->end = 0;
        }
        if (r->eof) break;
        if (r->end == r->buf_cap) {
            compact(r);
            if (r->end == r->buf_cap && in_buf_reserve(r, r->buf_cap * 2))
                return in_fail_file(r, -2, r->path, "out of memory");
        }
        int rc = fill(r);
        if (rc < 0) return rc;
    }
    if (too_long)
        return in_fail_file(r, -1, r->path, "larger than the %u MiB document limit",
                            ND_MAX_DOC_BYTES >> 20);
    r->line = r->buf + r->beg;
    r->len = r->end - r->beg;
    r->beg = r->end;
    return 1;
}
