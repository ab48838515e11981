/*
 * cmp_sstfile.c — a repair's reader of RocksDB's table files
 * (cmp_sstfile.h says what for).
 *
 * Why: RocksDB's repair keeps a table file only if it reads every entry
 * of it, and only if its properties name a family. So one flipped byte in
 * a documents file lost the whole file, and a file written aside and
 * ingested whole (a bulk import's documents; its properties name no
 * family) was set aside as damage even when intact: a healthy store
 * written by `import` came out of a repair empty (issue 44). Here a file
 * is read block by block: the repair learns which files were ingested
 * whole and puts them back into their families itself, and a file with
 * damaged data blocks is rewritten without them, so that only those
 * blocks' entries are lost.
 *
 * The parts of the format read here (RocksDB 7.8, format versions 2-5;
 * table/format.h):
 *   footer (last 53 bytes): checksum type (1 byte), metaindex and index
 *     handles (varint64 offset and size each) padded to 40 bytes, format
 *     version (fixed32), magic (fixed64);
 *   a block, then its 5-byte trailer: compression type (0 none, 4 or 5
 *     LZ4: a varint32 of the plain size, then an LZ4 block) and a fixed32
 *     checksum: for XXH3 (type 4) the low 32 bits of XXH3-64 of the block
 *     xor the compression type times 0x6b9083d9;
 *   a block's entries: shared key bytes, unshared key bytes and (not in
 *     an index whose values are delta-encoded) the value's length, as
 *     varint32s, the unshared key bytes, the value; then the restart
 *     offsets (fixed32 each) and their count (fixed32);
 *   the metaindex: meta block name -> handle ("rocksdb.properties", the
 *     filter, "rocksdb.range_del", ...);
 *   the properties: name -> value; integers as varint64, the external
 *     file's version and global sequence number as fixed32 and fixed64;
 *   the index: separator key -> handle of a data block, in block order;
 *     delta-encoded (an entry sharing key bytes with the one before holds
 *     only the signed change of the size: its block follows the one
 *     before).
 * The mended file's index has every entry whole (no shared key bytes, a
 * full handle): what RocksDB writes at a restart point, readable whether
 * the index is delta-encoded or not.
 */
#include "cmp_sstfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nd_error.h"
#include "nd_hash.h"
#include "nd_varint.h"

#define FOOTER_LEN 53
#define TABLE_MAGIC 0x88e241b785f4cff7ull
#define CHECKSUM_XXH3 4
#define TRAILER_LEN 5
#define NO_COMPRESSION 0
#define LZ4 4
#define LZ4HC 5
#define BLOCK_MAX (256u << 20) /* a larger block is taken for damage */

typedef struct handle {
    uint64_t off, size;
} handle;

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

typedef struct sst {
    int fd;
    uint64_t size;
    uint8_t footer[FOOTER_LEN];
    handle metaindex, index, filter;
    int delta_values; /* the index's values are delta-encoded */
    cmp_sst_info info;
    bytes raw, plain, key; /* a block as read, as decompressed; a key rebuilt */
} sst;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int reserve(bytes *b, size_t n)
{
    if (n <= b->cap) return ND_OK;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < n) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    ND_RETURN_IF(!p, ND_ENOMEM, "repair: out of memory reading a table file");
    b->p = p;
    b->cap = cap;
    return ND_OK;
}

static int append(bytes *b, const void *src, size_t n)
{
    ND_FORWARD(reserve(b, b->n + n));
    memcpy(b->p + b->n, src, n);
    b->n += n;
    return ND_OK;
}

static int append_varint(bytes *b, uint64_t v)
{
    uint8_t tmp[10];
    return append(b, tmp, nd_put_varint(tmp, v));
}

/* The checksum RocksDB stores after a block of n bytes and its
 * compression type. */
static uint32_t block_checksum(const uint8_t *b, size_t n, uint8_t type)
{
    return (uint32_t)nd_xxh3_64(b, n) ^ (uint32_t)type * 0x6b9083d9u;
}

/* An LZ4 block (lz4's block format: sequences of a token, literals, a
 * 2-byte offset and a match) into out, exactly cap bytes. 0 or -1. */
static int lz4_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    const uint8_t *end = in + n;
    size_t o = 0;
    while (in < end) {
        unsigned token = *in++;
        size_t lit = token >> 4;
        if (lit == 15) {
            unsigned c;
            do {
                if (in >= end) return -1;
                c = *in++;
                lit += c;
            } while (c == 255);
        }
        if (lit > (size_t)(end - in) || lit > cap - o) return -1;
        memcpy(out + o, in, lit);
        in += lit;
        o += lit;
        if (in == end) break; /* the last sequence: literals only */
        if (end - in < 2) return -1;
        size_t off = (size_t)in[0] | (size_t)in[1] << 8;
        in += 2;
        size_t len = (token & 15) + 4;
        if ((token & 15) == 15) {
            unsigned c;
            do {
                if (in >= end) return -1;
                c = *in++;
                len += c;
            } while (c == 255);
        }
        if (off == 0 || off > o || len > cap - o) return -1;
        for (size_t i = 0; i < len; i++, o++) out[o] = out[o - off]; /* may overlap */
    }
    return o == cap ? 0 : -1;
}

static int read_at(sst *f, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(f->fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return nd_err_set(ND_EIO, "repair: cannot read a table file: %s",
                              r < 0 ? strerror(errno) : "short read");
        got += (size_t)r;
    }
    return ND_OK;
}

/* Read block h with its trailer into f->raw: 1 if its checksum holds,
 * CMP_SST_DAMAGED if not (or it lies outside the file), or an error. */
static int block_read(sst *f, handle h)
{
    if (h.off > f->size || h.size > BLOCK_MAX || h.size + TRAILER_LEN > f->size - h.off)
        return CMP_SST_DAMAGED;
    size_t n = (size_t)h.size;
    ND_FORWARD(reserve(&f->raw, n + TRAILER_LEN));
    ND_FORWARD(read_at(f, f->raw.p, n + TRAILER_LEN, h.off));
    f->raw.n = n;
    return block_checksum(f->raw.p, n, f->raw.p[n]) == le32(f->raw.p + n + 1) ? 1
                                                                                 : CMP_SST_DAMAGED;
}

/* Read block h and make its plain bytes f->plain: 1, CMP_SST_DAMAGED, 0
 * if compressed in a way not read here, or an error. */
static int block_load(sst *f, handle h)
{
    int ok = block_read(f, h);
    if (ok != 1) return ok;
    uint8_t type = f->raw.p[f->raw.n];
    f->plain.n = 0;
    if (type == NO_COMPRESSION) {
        ND_FORWARD(append(&f->plain, f->raw.p, f->raw.n));
        return 1;
    }
    if (type != LZ4 && type != LZ4HC) return 0;
    uint64_t plain;
    const uint8_t *p = nd_get_varint(f->raw.p, f->raw.p + f->raw.n, &plain);
    if (!p || plain > BLOCK_MAX) return 0;
    ND_FORWARD(reserve(&f->plain, (size_t)plain));
    if (lz4_decode(p, (size_t)(f->raw.p + f->raw.n - p), f->plain.p, (size_t)plain) < 0) return 0;
    f->plain.n = (size_t)plain;
    return 1;
}

/* The entries of the plain block b[0..n): fn(payload, key, klen, value,
 * vlen, shared) for each (with_len 0: values without a length, each a
 * handle or, when shared > 0, a size delta, handed on whole to the block's
 * end, which fn parses). 0 when the block is malformed, else 1 or fn's
 * error. */
typedef int (*entry_fn)(void *payload, const uint8_t *key, size_t klen, const uint8_t *val,
                        size_t vlen, uint64_t shared, const uint8_t **next);

static int block_entries(sst *f, const uint8_t *b, size_t n, int with_len, entry_fn fn,
                         void *payload)
{
    if (n < 4) return 0;
    uint32_t nr = le32(b + n - 4);
    if (nr == 0 || nr > (n - 4) / 4) return 0;
    const uint8_t *p = b, *end = b + n - 4 - 4 * (size_t)nr;
    f->key.n = 0;
    while (p < end) {
        uint64_t shared, unshared, vlen = 0;
        p = nd_get_varint(p, end, &shared);
        if (p) p = nd_get_varint(p, end, &unshared);
        if (p && with_len) p = nd_get_varint(p, end, &vlen);
        if (!p || shared > f->key.n || unshared > (size_t)(end - p)) return 0;
        f->key.n = (size_t)shared;
        ND_FORWARD(append(&f->key, p, (size_t)unshared));
        p += unshared;
        if (with_len && vlen > (size_t)(end - p)) return 0;
        const uint8_t *next = with_len ? p + vlen : NULL;
        int rc = fn(payload, f->key.p, f->key.n, p, with_len ? (size_t)vlen : (size_t)(end - p),
                    shared, &next);
        if (rc != 1) return rc;
        if (!next || next < p || next > end) return 0;
        p = next;
    }
    return 1;
}

/* ---- the metaindex and the properties ------------------------------------ */

typedef struct meta_walk {
    sst *f;
    handle blocks[16]; /* the meta blocks, properties first */
    size_t n;
    int props; /* the properties block was found */
    bytes *out; /* a metaindex without the filter, or NULL */
    bytes restarts;
} meta_walk;

static int is(const uint8_t *key, size_t klen, const char *name)
{
    return klen == strlen(name) && memcmp(key, name, klen) == 0;
}

static int meta_entry(void *payload, const uint8_t *key, size_t klen, const uint8_t *val,
                      size_t vlen, uint64_t shared, const uint8_t **next)
{
    (void)shared;
    (void)next;
    meta_walk *w = payload;
    handle h;
    const uint8_t *p = nd_get_varint(val, val + vlen, &h.off);
    if (p) p = nd_get_varint(p, val + vlen, &h.size);
    if (!p || w->n == sizeof w->blocks / sizeof w->blocks[0]) return 0;
    int filter = klen > 11 && memcmp(key, "fullfilter.", 11) == 0;
    if (w->out) { /* the mended metaindex: whole entries, the filter left out */
        if (filter) return 1;
        uint8_t r[4];
        put_le32(r, (uint32_t)w->out->n);
        ND_FORWARD(append(&w->restarts, r, 4));
        ND_FORWARD(append_varint(w->out, 0));
        ND_FORWARD(append_varint(w->out, klen));
        ND_FORWARD(append_varint(w->out, vlen));
        ND_FORWARD(append(w->out, key, klen));
        ND_FORWARD(append(w->out, val, vlen));
        return 1;
    }
    if (filter) {
        w->f->filter = h;
        return 1;
    }
    if (is(key, klen, "rocksdb.properties")) {
        w->blocks[w->n++] = w->blocks[0];
        w->blocks[0] = h;
        w->props = 1;
    } else {
        w->blocks[w->n++] = h;
    }
    return 1;
}

static int prop_entry(void *payload, const uint8_t *key, size_t klen, const uint8_t *val,
                      size_t vlen, uint64_t shared, const uint8_t **next)
{
    (void)shared;
    (void)next;
    sst *f = payload;
    uint64_t v = 0;
    if (is(key, klen, "rocksdb.external_sst_file.version")) {
        if (vlen != 4) return 0;
        f->info.external = 1;
    } else if (is(key, klen, "rocksdb.external_sst_file.global_seqno")) {
        if (vlen != 8) return 0;
        f->info.global_seqno = le64(val);
    } else if (is(key, klen, "rocksdb.num.entries")) {
        if (!nd_get_varint(val, val + vlen, &f->info.entries)) return 0;
    } else if (is(key, klen, "rocksdb.deleted.keys")) {
        if (!nd_get_varint(val, val + vlen, &f->info.deletions)) return 0;
    } else if (is(key, klen, "rocksdb.raw.key.size")) {
        if (!nd_get_varint(val, val + vlen, &f->info.key_bytes)) return 0;
    } else if (is(key, klen, "rocksdb.raw.value.size")) {
        if (!nd_get_varint(val, val + vlen, &f->info.value_bytes)) return 0;
    } else if (is(key, klen, "rocksdb.index.value.is.delta.encoded")) {
        if (!nd_get_varint(val, val + vlen, &v)) return 0;
        f->delta_values = v != 0;
    } else if (is(key, klen, "rocksdb.block.based.table.index.type")) {
        if (vlen != 4 || le32(val) != 0) return 0; /* a binary-search index only */
    } else if (is(key, klen, "rocksdb.index.partitions")) {
        if (!nd_get_varint(val, val + vlen, &v) || v != 0) return 0;
    }
    return 1;
}

static int seqno_entry(void *payload, const uint8_t *key, size_t klen, const uint8_t *val,
                       size_t vlen, uint64_t shared, const uint8_t **next)
{
    (void)shared;
    (void)next;
    if (is(key, klen, "rocksdb.external_sst_file.global_seqno") && vlen == 8)
        *(const uint8_t **)payload = val;
    return 1;
}

/* The properties block h into f->plain: as block_load, and intact too
 * when its checksum holds with the global sequence number zeroed. RocksDB
 * writes the sequence number of a file ingested above others into the
 * file's properties in place, leaving the checksum as the writer computed
 * it (with 0 there), and its reader checks the block so
 * (table/meta_blocks.cc, ReadTablePropertiesHelper): such a file, a
 * second import's, was judged damaged here and set aside. */
static int props_load(sst *f, handle h)
{
    int ok = block_load(f, h);
    if (ok != CMP_SST_DAMAGED || h.off > f->size || h.size > BLOCK_MAX ||
        h.size + TRAILER_LEN > f->size - h.off || f->raw.p[f->raw.n] != NO_COMPRESSION)
        return ok;
    const uint8_t *val = NULL;
    int found = block_entries(f, f->raw.p, f->raw.n, 1, seqno_entry, &val);
    if (found < 0) return found;
    if (found != 1 || !val) return CMP_SST_DAMAGED;
    uint8_t *at = f->raw.p + (val - f->raw.p), saved[8];
    memcpy(saved, at, 8);
    memset(at, 0, 8);
    int same = block_checksum(f->raw.p, f->raw.n, NO_COMPRESSION) == le32(f->raw.p + f->raw.n + 1);
    memcpy(at, saved, 8);
    if (!same) return CMP_SST_DAMAGED;
    f->plain.n = 0;
    ND_FORWARD(append(&f->plain, f->raw.p, f->raw.n));
    return 1;
}

/* Footer, metaindex, properties and every other meta block: 1 when all
 * are intact and in a form read here, 0 if not, or an error. */
static int read_meta(sst *f)
{
    if (f->size < FOOTER_LEN) return 0;
    ND_FORWARD(read_at(f, f->footer, FOOTER_LEN, f->size - FOOTER_LEN));
    const uint8_t *ft = f->footer;
    uint32_t version = le32(ft + 41);
    if (le64(ft + 45) != TABLE_MAGIC || version < 2 || version > 5 || ft[0] != CHECKSUM_XXH3)
        return 0;
    const uint8_t *q = nd_get_varint(ft + 1, ft + 41, &f->metaindex.off);
    if (q) q = nd_get_varint(q, ft + 41, &f->metaindex.size);
    if (q) q = nd_get_varint(q, ft + 41, &f->index.off);
    if (q) q = nd_get_varint(q, ft + 41, &f->index.size);
    if (!q) return CMP_SST_DAMAGED;
    meta_walk w = {.f = f};
    int ok = block_load(f, f->metaindex);
    if (ok == 1) ok = block_entries(f, f->plain.p, f->plain.n, 1, meta_entry, &w);
    if (ok != 1 || !w.props) return ok != 1 ? ok : 0;
    for (size_t i = 0; i < w.n; i++) { /* damaged range deletions or the like: not mended */
        ok = i == 0 ? props_load(f, w.blocks[i]) : block_read(f, w.blocks[i]);
        if (ok == 1 && i == 0) ok = block_entries(f, f->plain.p, f->plain.n, 1, prop_entry, f);
        if (ok != 1) return ok;
    }
    if (f->filter.size) {
        ok = block_read(f, f->filter);
        if (ok < 0) return ok;
        f->info.bad_filter = ok == CMP_SST_DAMAGED;
    }
    return 1;
}

/* The metaindex block without the filter, into out (entries, restarts). */
static int meta_without_filter(sst *f, bytes *out)
{
    meta_walk w = {.f = f, .out = out};
    int ok = block_load(f, f->metaindex);
    if (ok == 1) ok = block_entries(f, f->plain.p, f->plain.n, 1, meta_entry, &w);
    if (ok == 1) {
        uint8_t r[4];
        put_le32(r, (uint32_t)(w.restarts.n / 4));
        ok = append(out, w.restarts.p, w.restarts.n);
        if (ok == ND_OK) ok = append(out, r, 4);
        if (ok == ND_OK) ok = 1;
    }
    free(w.restarts.p);
    return ok;
}

/* ---- the index ------------------------------------------------------------- */

typedef struct index_walk {
    sst *f;
    handle prev;
    int have_prev;
    bytes *out; /* the mended index's entries, or NULL */
    bytes restarts;
} index_walk;

static int index_entry(void *payload, const uint8_t *key, size_t klen, const uint8_t *val,
                       size_t vlen, uint64_t shared, const uint8_t **next)
{
    index_walk *w = payload;
    sst *f = w->f;
    const uint8_t *end = val + vlen;
    handle h;
    if (f->delta_values && shared > 0) {
        uint64_t z;
        const uint8_t *p = nd_get_varint(val, end, &z);
        if (!p || !w->have_prev) return 0;
        int64_t delta = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
        h.off = w->prev.off + w->prev.size + TRAILER_LEN;
        h.size = (uint64_t)((int64_t)w->prev.size + delta);
        *next = p;
    } else {
        const uint8_t *p = nd_get_varint(val, end, &h.off);
        if (p) p = nd_get_varint(p, end, &h.size);
        if (!p) return 0;
        if (f->delta_values) *next = p;
    }
    w->prev = h;
    w->have_prev = 1;
    f->info.blocks++;
    int ok = block_read(f, h);
    if (ok < 0) return ok;
    if (ok == CMP_SST_DAMAGED) {
        f->info.bad_blocks++;
        return 1;
    }
    if (!w->out) return 1;
    /* kept: a whole entry, a restart point */
    uint8_t r[4];
    put_le32(r, (uint32_t)w->out->n);
    ND_FORWARD(append(&w->restarts, r, 4));
    ND_FORWARD(append_varint(w->out, 0));
    ND_FORWARD(append_varint(w->out, klen));
    uint8_t hv[20];
    size_t hn = nd_put_varint(hv, h.off);
    hn += nd_put_varint(hv + hn, h.size);
    if (!f->delta_values) ND_FORWARD(append_varint(w->out, hn));
    ND_FORWARD(append(w->out, key, klen));
    ND_FORWARD(append(w->out, hv, hn));
    return 1;
}

/* Walk the index (its entries read into a copy: the walk reads data
 * blocks into f->raw, f->plain stays the index), checking each data
 * block; with out, the mended index's block (entries and restarts). */
static int walk_index(sst *f, bytes *out)
{
    int ok = block_load(f, f->index);
    if (ok != 1) return ok;
    bytes idx = {0};
    int rc = append(&idx, f->plain.p, f->plain.n);
    index_walk w = {.f = f, .out = out};
    f->info.blocks = f->info.bad_blocks = 0;
    if (rc == ND_OK) rc = block_entries(f, idx.p, idx.n, !f->delta_values, index_entry, &w);
    if (rc == 1 && out) {
        uint8_t r[4];
        put_le32(r, (uint32_t)(w.restarts.n / 4));
        rc = append(out, w.restarts.p, w.restarts.n);
        if (rc == ND_OK) rc = append(out, r, 4);
        if (rc == ND_OK) rc = 1;
    }
    free(idx.p);
    free(w.restarts.p);
    return rc;
}

/* ---- the mended copy ------------------------------------------------------- */

static int write_all(int fd, const void *p, size_t n, const char *out)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const uint8_t *)p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return nd_err_set(errno == ENOSPC ? ND_ENOSPC : ND_EIO, "repair: cannot write %s: %s",
                              out, strerror(errno));
        done += (size_t)w;
    }
    return ND_OK;
}

static int write_block(int fd, const bytes *b, const char *out)
{
    uint8_t trailer[TRAILER_LEN] = {NO_COMPRESSION};
    put_le32(trailer + 1, block_checksum(b->p, b->n, NO_COMPRESSION));
    ND_FORWARD(write_all(fd, b->p, b->n, out));
    return write_all(fd, trailer, TRAILER_LEN, out);
}

/* out: f's bytes up to its footer, the block index and (meta->n > 0) a
 * metaindex (uncompressed, each with its trailer), a footer naming them. */
static int write_mended(sst *f, const bytes *index, const bytes *meta, const char *out)
{
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return nd_err_set(ND_EIO, "repair: cannot create %s: %s", out, strerror(errno));
    int rc = ND_OK;
    uint64_t body = f->size - FOOTER_LEN;
    ND_TRY(reserve(&f->raw, 1u << 20));
    for (uint64_t off = 0; off < body;) {
        size_t n = body - off < (1u << 20) ? (size_t)(body - off) : (1u << 20);
        ND_TRY(read_at(f, f->raw.p, n, off));
        ND_TRY(write_all(fd, f->raw.p, n, out));
        off += n;
    }
    ND_TRY(write_block(fd, index, out));
    handle mi = f->metaindex;
    if (meta->n) {
        mi = (handle){body + index->n + TRAILER_LEN, meta->n};
        ND_TRY(write_block(fd, meta, out));
    }
    /* The footer as it was, the handles changed. */
    uint8_t ft[FOOTER_LEN] = {0};
    ft[0] = f->footer[0];
    size_t n = 1 + nd_put_varint(ft + 1, mi.off);
    n += nd_put_varint(ft + n, mi.size);
    n += nd_put_varint(ft + n, body);
    nd_put_varint(ft + n, index->n);
    memcpy(ft + 41, f->footer + 41, FOOTER_LEN - 41);
    ND_TRY(write_all(fd, ft, FOOTER_LEN, out));
    if (fsync(fd) != 0) ND_FAIL(ND_EIO, "repair: cannot sync %s: %s", out, strerror(errno));
cleanup:
    if (close(fd) != 0 && rc == ND_OK)
        rc = nd_err_set(ND_EIO, "repair: cannot write %s: %s", out, strerror(errno));
    if (rc < 0) unlink(out);
    return rc;
}

int cmp_sst_mend(const char *path, const char *out, cmp_sst_info *info)
{
    sst f = {.fd = -1};
    struct stat st;
    bytes index = {0}, meta = {0};
    int rc = ND_OK;
    memset(info, 0, sizeof *info);
    f.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f.fd < 0 || fstat(f.fd, &st) != 0)
        ND_FAIL(ND_EIO, "repair: cannot open %s: %s", path, strerror(errno));
    f.size = (uint64_t)st.st_size;
    rc = read_meta(&f);
    if (rc == 1) rc = walk_index(&f, NULL);
    if (rc == 1 && (f.info.bad_blocks || f.info.bad_filter) && out) {
        if (f.info.bad_blocks == f.info.blocks) rc = CMP_SST_DAMAGED;
        else rc = walk_index(&f, &index);
        if (rc == 1 && f.info.bad_filter) rc = meta_without_filter(&f, &meta);
        if (rc == 1) {
            rc = write_mended(&f, &index, &meta, out);
            if (rc == ND_OK) rc = 1;
        }
    }
    if (rc == 1 || rc == CMP_SST_DAMAGED) *info = f.info;
cleanup:
    if (f.fd >= 0) close(f.fd);
    free(f.raw.p);
    free(f.plain.p);
    free(f.key.p);
    free(index.p);
    free(meta.p);
    return rc;
}
