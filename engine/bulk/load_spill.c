/*
 * load_spill.c — the bulk loader's temporary files: written once through
 * stdio with a large buffer, read back through k-way merges. A file is
 * read or written by one thread at a time, so through stdio's _unlocked
 * calls: a 100M load makes billions of them (three writes a record),
 * each of which would otherwise take the FILE's lock.
 *
 * Callers: db_load.c writes a chunk's files, load_commit.c merges them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_spill.h"
#include "nd_error.h"

/* stdio buffer of each file: the merges read many files at once, each in
 * long sequential runs. */
#define SPILL_IO_BUF (1u << 20)
/* Values a fingerprint file's reader holds at a time. */
#define SPILL_U64_BLOCK 8192u

static int io_error(const char *what, const char *path, int err)
{
    return nd_err_set(err == ENOSPC ? ND_ENOSPC : ND_EIO, "load: %s %s: %s", what, path,
                      strerror(err));
}

/* A file with its name (for messages) and its stdio buffer. */
typedef struct spill_file {
    FILE *f;
    char *path, *buf;
} spill_file;

static int file_open(spill_file *sf, const char *path, const char *mode)
{
    sf->path = strdup(path);
    sf->buf = malloc(SPILL_IO_BUF);
    ND_RETURN_IF(!sf->path || !sf->buf, ND_ENOMEM, "load: out of memory opening %s", path);
    sf->f = fopen(path, mode);
    if (!sf->f) return io_error("cannot open", path, errno);
    setvbuf(sf->f, sf->buf, _IOFBF, SPILL_IO_BUF);
    return ND_OK;
}

/* Close; with check, report a failed write or close. */
static int file_close(spill_file *sf, int check)
{
    int rc = ND_OK;
    if (sf->f) {
        int bad = ferror(sf->f), err = errno;
        if (fclose(sf->f) != 0 && !bad) {
            bad = 1;
            err = errno;
        }
        if (check && bad) rc = io_error("cannot write", sf->path, err ? err : EIO);
    }
    free(sf->path);
    free(sf->buf);
    memset(sf, 0, sizeof *sf);
    return rc;
}

/* Read exactly n bytes: 1 done, 0 at a clean end of file (nothing read),
 * or an error (a short read is a truncated file). */
static int file_read(spill_file *sf, void *p, size_t n)
{
    size_t got = fread_unlocked(p, 1, n, sf->f);
    if (got == n) return 1;
    if (ferror(sf->f)) return io_error("cannot read", sf->path, errno ? errno : EIO);
    if (got == 0) return 0;
    return nd_err_set(ND_EIO, "load: %s is truncated", sf->path);
}

/* ---- writing ---------------------------------------------------------- */

struct spill_out {
    spill_file sf;
};

int spill_create(spill_out **out, const char *path)
{
    spill_out *o = calloc(1, sizeof *o);
    ND_RETURN_IF(!o, ND_ENOMEM, "load: out of memory");
    int rc = file_open(&o->sf, path, "wb");
    if (rc < 0) {
        file_close(&o->sf, 0);
        free(o);
        return rc;
    }
    *out = o;
    return ND_OK;
}

static int put_bytes(spill_out *o, const void *p, size_t n)
{
    if (n && fwrite_unlocked(p, 1, n, o->sf.f) != n)
        return io_error("cannot write", o->sf.path, errno);
    return ND_OK;
}

int spill_put_u64s(spill_out *o, const uint64_t *v, size_t n)
{
    return put_bytes(o, v, n * sizeof *v);
}

int spill_put_record(spill_out *o, const void *key, size_t klen, const void *val, size_t vlen)
{
    uint32_t len[2] = {(uint32_t)klen, (uint32_t)vlen};
    ND_FORWARD(put_bytes(o, len, sizeof len));
    ND_FORWARD(put_bytes(o, key, klen));
    return put_bytes(o, val, vlen);
}

int spill_close(spill_out *o)
{
    if (!o) return ND_OK;
    int rc = file_close(&o->sf, 1);
    free(o);
    return rc;
}

/* Restore the min-heap heap[0..n) below h, ordered by before(m, a, b):
 * "the source in slot a comes first" (the merge of record files). */
typedef int (*heap_before_fn)(const void *m, size_t a, size_t b);

static void heap_sift_down(const void *m, size_t *heap, size_t n, size_t h, heap_before_fn before)
{
    for (;;) {
        size_t l = 2 * h + 1, r = l + 1, min = h;
        if (l < n && before(m, l, min)) min = l;
        if (r < n && before(m, r, min)) min = r;
        if (min == h) return;
        size_t t = heap[h];
        heap[h] = heap[min];
        heap[min] = t;
        h = min;
    }
}

/* A merge's n sources (size bytes each, zeroed) and its heap. */
static int merge_alloc(void **src, size_t size, size_t **heap, size_t n)
{
    *src = calloc(n ? n : 1, size);
    *heap = calloc(n ? n : 1, sizeof **heap);
    ND_RETURN_IF(!*src || !*heap, ND_ENOMEM, "load: out of memory for a merge of %zu files", n);
    return ND_OK;
}

/* ---- merging fingerprint files ---------------------------------------- */

typedef struct u64_src {
    spill_file sf;
    uint64_t *v;
    size_t at, n; /* v[at..n) not yet handed to the heap */
} u64_src;

/* A heap slot: a source's smallest value not yet handed out, held in the
 * slot itself so that the sift compares values without following the
 * source (a 100M load merges about a billion values this way). */
typedef struct u64_top {
    uint64_t v;
    size_t s;
} u64_top;

struct spill_u64_merge {
    u64_src *src;
    size_t nsrc;
    u64_top *heap; /* sources with values left, a min-heap on v */
    size_t nheap;
    int any;
    uint64_t last; /* the last value handed out (when any) */
};

static void u64_sift_down(spill_u64_merge *m, size_t h)
{
    u64_top *heap = m->heap, x = heap[h];
    size_t n = m->nheap;
    for (;;) {
        size_t c = 2 * h + 1;
        if (c >= n) break;
        if (c + 1 < n && heap[c + 1].v < heap[c].v) c++;
        if (heap[c].v >= x.v) break;
        heap[h] = heap[c];
        h = c;
    }
    heap[h] = x;
}

/* Make source s hold a value: 1, 0 when it has none left, or an error. */
static int u64_fill(u64_src *s)
{
    if (s->at < s->n) return 1;
    size_t got = fread_unlocked(s->v, sizeof *s->v, SPILL_U64_BLOCK, s->sf.f);
    if (got == 0 && ferror(s->sf.f)) return io_error("cannot read", s->sf.path, errno ? errno : EIO);
    s->at = 0;
    s->n = got;
    return got > 0;
}

int spill_u64_merge_open(spill_u64_merge **out, char *const *paths, size_t n)
{
    spill_u64_merge *m = calloc(1, sizeof *m);
    int rc = ND_OK;
    ND_RETURN_IF(!m, ND_ENOMEM, "load: out of memory");
    m->src = calloc(n ? n : 1, sizeof *m->src);
    m->heap = calloc(n ? n : 1, sizeof *m->heap);
    if (!m->src || !m->heap) ND_FAIL(ND_ENOMEM, "load: out of memory for a merge of %zu files", n);
    m->nsrc = n;
    for (size_t i = 0; i < n; i++) {
        u64_src *s = &m->src[i];
        ND_TRY(file_open(&s->sf, paths[i], "rb"));
        s->v = malloc(SPILL_U64_BLOCK * sizeof *s->v);
        if (!s->v) ND_FAIL(ND_ENOMEM, "load: out of memory");
        ND_TRY(u64_fill(s));
        if (rc) m->heap[m->nheap++] = (u64_top){s->v[s->at++], i};
    }
    for (size_t h = m->nheap; h-- > 0;) u64_sift_down(m, h);
    *out = m;
    return ND_OK;
cleanup:
    spill_u64_merge_close(m);
    return rc;
}

int spill_u64_merge_read(void *merge, uint64_t *buf, size_t cap, size_t *got)
{
    spill_u64_merge *m = merge;
    size_t k = 0;
    while (k < cap && m->nheap) {
        u64_top *top = &m->heap[0];
        uint64_t v = top->v;
        u64_src *s = &m->src[top->s];
        ND_RETURN_IF(m->any && v < m->last, ND_ECORRUPT, "load: %s is out of order", s->sf.path);
        if (!m->any || v != m->last) buf[k++] = v;
        m->any = 1;
        m->last = v;
        int more = u64_fill(s);
        if (more < 0) return more;
        if (more) top->v = s->v[s->at++];
        else *top = m->heap[--m->nheap];
        if (m->nheap) u64_sift_down(m, 0);
    }
    *got = k;
    return ND_OK;
}

void spill_u64_merge_close(spill_u64_merge *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nsrc; i++) {
        file_close(&m->src[i].sf, 0);
        free(m->src[i].v);
    }
    free(m->src);
    free(m->heap);
    free(m);
}

/* ---- merging record files --------------------------------------------- */

typedef struct rec_src {
    spill_file sf;
    char *rec; /* key then value */
    size_t klen, vlen, cap;
} rec_src;

struct spill_rec_merge {
    rec_src *src;
    size_t nsrc;
    size_t *heap; /* sources holding a record, a min-heap on (key, index) */
    size_t nheap;
    int advance; /* the top's record was handed out: read its next first */
};

/* Read source s's next record: 1, 0 at its end, or an error. */
static int rec_fill(rec_src *s)
{
    uint32_t len[2];
    int r = file_read(&s->sf, len, sizeof len);
    if (r <= 0) return r;
    size_t need = (size_t)len[0] + len[1];
    if (need > s->cap) {
        char *p = realloc(s->rec, need);
        ND_RETURN_IF(!p, ND_ENOMEM, "load: out of memory");
        s->rec = p;
        s->cap = need;
    }
    if (need) {
        r = file_read(&s->sf, s->rec, need);
        if (r < 0) return r;
        ND_RETURN_IF(r == 0, ND_EIO, "load: %s is truncated", s->sf.path);
    }
    s->klen = len[0];
    s->vlen = len[1];
    return 1;
}

/* Does heap entry a come before b: smaller key, or equal keys and a's
 * file first. */
static int rec_before(const void *merge, size_t a, size_t b)
{
    const spill_rec_merge *m = merge;
    const rec_src *x = &m->src[m->heap[a]], *y = &m->src[m->heap[b]];
    size_t l = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->rec, y->rec, l);
    if (c == 0) c = (x->klen > y->klen) - (x->klen < y->klen);
    return c < 0 || (c == 0 && m->heap[a] < m->heap[b]);
}

static void rec_sift_down(spill_rec_merge *m, size_t h)
{
    heap_sift_down(m, m->heap, m->nheap, h, rec_before);
}

int spill_rec_merge_open(spill_rec_merge **out, char *const *paths, size_t n)
{
    spill_rec_merge *m = calloc(1, sizeof *m);
    int rc = ND_OK;
    ND_RETURN_IF(!m, ND_ENOMEM, "load: out of memory");
    ND_TRY(merge_alloc((void **)&m->src, sizeof *m->src, &m->heap, n));
    m->nsrc = n;
    for (size_t i = 0; i < n; i++) {
        ND_TRY(file_open(&m->src[i].sf, paths[i], "rb"));
        ND_TRY(rec_fill(&m->src[i]));
        if (rc) m->heap[m->nheap++] = i;
    }
    for (size_t h = m->nheap; h-- > 0;) rec_sift_down(m, h);
    *out = m;
    return ND_OK;
cleanup:
    spill_rec_merge_close(m);
    return rc;
}

int spill_rec_merge_next(spill_rec_merge *m, const void **key, size_t *klen, const void **val,
                         size_t *vlen, size_t *src)
{
    if (m->advance && m->nheap) {
        int more = rec_fill(&m->src[m->heap[0]]);
        if (more < 0) return more;
        if (!more) m->heap[0] = m->heap[--m->nheap];
        rec_sift_down(m, 0);
    }
    m->advance = 0;
    if (!m->nheap) return 0;
    const rec_src *s = &m->src[m->heap[0]];
    *key = s->rec;
    *klen = s->klen;
    *val = s->rec + s->klen;
    *vlen = s->vlen;
    *src = m->heap[0];
    m->advance = 1;
    return 1;
}

void spill_rec_merge_close(spill_rec_merge *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nsrc; i++) {
        file_close(&m->src[i].sf, 0);
        free(m->src[i].rec);
    }
    free(m->src);
    free(m->heap);
    free(m);
}
