/*
 * dedupe_spill.c — append-only scratch files (see dedupe_spill.h).
 *
 * Writes go through a 256 KB buffer; random reads are plain pread (the
 * kernel's page cache is the cache); sequential reads refill a 1 MB buffer
 * with one pread each, so a pass over a file costs size / 1 MB calls.
 */
#include "dedupe_spill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nd_error.h"

enum { WRITE_BUF = 256 * 1024, READ_BUF = 1024 * 1024 };

int dedupe_spill_init(dedupe_spill *s, const char *dir, const char *what)
{
    *s = (dedupe_spill){.fd = -1, .what = what};
    size_t len = strlen(dir) + sizeof "/neardup-dedupe-XXXXXX";
    char *path = malloc(len);
    s->buf = malloc(WRITE_BUF);
    if (!path || !s->buf) {
        free(path);
        free(s->buf);
        s->buf = NULL;
        return nd_err_set(ND_ENOMEM, "out of memory for the %s scratch file", what);
    }
    snprintf(path, len, "%s/neardup-dedupe-XXXXXX", dir);
    s->fd = mkstemp(path);
    if (s->fd < 0) {
        int e = errno;
        free(path);
        free(s->buf);
        s->buf = NULL;
        return nd_err_set(ND_EIO, "cannot create the %s scratch file in '%s': %s", what, dir,
                          strerror(e));
    }
    unlink(path); /* gone from the directory; the data lives until close */
    free(path);
    return ND_OK;
}

static int write_all(dedupe_spill *s, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : 0;
            return nd_err_set(e == ENOSPC ? ND_ENOSPC : ND_EIO, "writing the %s scratch file: %s",
                              s->what, e ? strerror(e) : "no space written");
        }
        p += w;
        n -= (size_t)w;
    }
    return ND_OK;
}

int dedupe_spill_write(dedupe_spill *s, const void *p, size_t n)
{
    if (s->blen + n > WRITE_BUF) {
        int rc = write_all(s, s->buf, s->blen);
        if (rc < 0) return rc;
        s->blen = 0;
        if (n > WRITE_BUF) {
            s->size += n;
            return write_all(s, p, n);
        }
    }
    memcpy(s->buf + s->blen, p, n);
    s->blen += n;
    s->size += n;
    return ND_OK;
}

int dedupe_spill_finish(dedupe_spill *s)
{
    if (!s->buf) return ND_OK;
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
            return nd_err_set(ND_EIO, "reading the %s scratch file: %s", s->what,
                              got < 0 ? strerror(errno) : "unexpected end of file");
        p += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return ND_OK;
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

int dedupe_spill_reader_get(const void **out, dedupe_spill_reader *r, uint64_t off, size_t n)
{
    if (off >= r->at && off + n <= r->at + r->len) {
        *out = r->buf + (off - r->at);
        return ND_OK;
    }
    size_t want = n > READ_BUF ? n : READ_BUF;
    if (want > r->cap) {
        char *b = realloc(r->buf, want);
        ND_RETURN_IF(!b, ND_ENOMEM, "out of memory reading the %s scratch file", r->s->what);
        r->buf = b;
        r->cap = want;
    }
    uint64_t left = off < r->s->size ? r->s->size - off : 0;
    size_t len = left < r->cap ? (size_t)left : r->cap;
    ND_RETURN_IF(len < n, ND_EINTERNAL, "reading the %s scratch file: span beyond its end",
                 r->s->what);
    ND_FORWARD(dedupe_spill_pread(r->s, r->buf, len, off));
    r->at = off;
    r->len = len;
    *out = r->buf;
    return ND_OK;
}

void dedupe_spill_reader_dispose(dedupe_spill_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
}
