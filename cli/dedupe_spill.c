/*
 * dedupe_spill.c — append-only scratch files (see dedupe_spill.h).
 *
 * Writes go through a 256 KB buffer; random reads are plain pread (the
 * kernel's page cache is the cache); sequential reads refill a 1 MB buffer
 * with one pread each, so a pass over a file costs size / 1 MB calls.
 */
#include "dedupe_spill.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { WRITE_BUF = 256 * 1024, READ_BUF = 1024 * 1024 };

static char errbuf[512];

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return -1;
}

const char *dedupe_spill_error(void)
{
    return errbuf;
}

int dedupe_spill_init(dedupe_spill *s, const char *what)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    *s = (dedupe_spill){.fd = -1, .what = what};
    size_t len = strlen(dir) + sizeof "/neardup-dedupe-XXXXXX";
    char *path = malloc(len);
    s->buf = malloc(WRITE_BUF);
    if (!path || !s->buf) {
        free(path);
        free(s->buf);
        s->buf = NULL;
        return fail("out of memory for the %s scratch file", what);
    }
    snprintf(path, len, "%s/neardup-dedupe-XXXXXX", dir);
    s->fd = mkstemp(path);
    if (s->fd < 0) {
        int e = errno;
        free(path);
        free(s->buf);
        s->buf = NULL;
        return fail("cannot create the %s scratch file in '%s' (set TMPDIR): %s", what, dir,
                    strerror(e));
    }
    unlink(path); /* gone from the directory; the data lives until close */
    free(path);
    return 0;
}

static int write_all(dedupe_spill *s, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return fail("writing the %s scratch file: %s", s->what,
                        w < 0 ? strerror(errno) : "no space written");
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int dedupe_spill_write(dedupe_spill *s, const void *p, size_t n)
{
    if (s->blen + n > WRITE_BUF) {
        if (write_all(s, s->buf, s->blen)) return -1;
        s->blen = 0;
        if (n > WRITE_BUF) {
            s->size += n;
            return write_all(s, p, n);
        }
    }
    memcpy(s->buf + s->blen, p, n);
    s->blen += n;
    s->size += n;
    return 0;
}

int dedupe_spill_finish(dedupe_spill *s)
{
    if (!s->buf) return 0;
    int rc = write_all(s, s->buf, s->blen);
    free(s->buf);
    s->buf = NULL;
    s->blen = 0;
    return rc;
}

int dedupe_spill_pread(const dedupe_spill *s, void *out, size_t n, uint64_t off)
{
    char *p = out;
    while (n > 0) {
        ssize_t got = pread(s->fd, p, n, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            return fail("reading the %s scratch file: %s", s->what,
                        got < 0 ? strerror(errno) : "unexpected end of file");
        p += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return 0;
}

void dedupe_spill_dispose(dedupe_spill *s)
{
    if (s->fd >= 0) close(s->fd);
    free(s->buf);
    s->fd = -1;
    s->buf = NULL;
}

void dedupe_spill_reader_init(dedupe_spill_reader *r, const dedupe_spill *s)
{
    *r = (dedupe_spill_reader){.s = s};
}

const void *dedupe_spill_reader_get(dedupe_spill_reader *r, uint64_t off, size_t n)
{
    if (off >= r->at && off + n <= r->at + r->len) return r->buf + (off - r->at);
    size_t want = n > READ_BUF ? n : READ_BUF;
    if (want > r->cap) {
        char *b = realloc(r->buf, want);
        if (!b) {
            fail("out of memory reading the %s scratch file", r->s->what);
            return NULL;
        }
        r->buf = b;
        r->cap = want;
    }
    uint64_t left = r->s->size - off;
    size_t len = left < r->cap ? (size_t)left : r->cap;
    if (len < n) {
        fail("reading the %s scratch file: span beyond its end", r->s->what);
        return NULL;
    }
    if (dedupe_spill_pread(r->s, r->buf, len, off)) return NULL;
    r->at = off;
    r->len = len;
    return r->buf;
}

void dedupe_spill_reader_dispose(dedupe_spill_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
}
