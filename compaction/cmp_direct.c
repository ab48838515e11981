/*
 * cmp_direct.c — a table's runs read from its SST file with pread
 * (cmp_direct.h says why and when).
 *
 * The parts of RocksDB's block-based table format read here (each block
 * read with one pread into the reader's buffer):
 *   footer (last 53 bytes): checksum type (1 byte), metaindex and index
 *     block handles (varint64 offset, varint64 size), padding, format
 *     version (fixed32), magic (fixed64);
 *   a block: entries, then restart offsets (fixed32 each) and their count
 *     (fixed32; its top bit set would mean a hash index, not used here),
 *     followed by a 5-byte trailer: compression type (0, none) and the
 *     lower 32 bits of XXH3-64 of the block (the type, 0, mixes in as 0);
 *   an entry: shared key bytes, unshared key bytes and (not in the index
 *     when its values are delta-encoded) value length, as varint32s, then
 *     the unshared key bytes and the value;
 *   data block keys: the user key ('R' || BE64(tail)) and 8 bytes of
 *     sequence number and type (1: a value);
 *   index keys: user keys, each a separator S_i with the last key of
 *     block i <= S_i < the first key of block i + 1; values at restart
 *     points (every entry, as RocksDB writes index blocks) a full handle.
 */
#define _GNU_SOURCE /* O_NOATIME */
#include "cmp_direct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmp_layout.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "nd_hash.h"
#include "nd_varint.h"

#define FOOTER_LEN 53
#define TABLE_MAGIC 0x88e241b785f4cff7ull
#define CHECKSUM_XXH3 4
#define TRAILER_LEN 5
#define DATA_KEY_LEN (TBL_KEY_LEN + 8)
#define TYPE_VALUE 1
#define DIR_BITS 16
/* A walk of a probe reads the blocks up to where it stops at once, up to
 * this many bytes: the runs of one 16-bit prefix at 100M in a plan of
 * 28 tables for k=6 span about 8 blocks of 1 KB, and their 8 preads from
 * the page cache cost several times one of 8 KB. */
#define SPAN_MAX 65536u
/* Bytes of a mapped block a hint asks for: a 1 KB block and its trailer
 * whatever their alignment, and not all of a block of huge runs. */
#define HINT_MAX 2048u

struct cmp_direct {
    _Atomic int refs;
    int fd;
    size_t size;
    const uint8_t *map; /* the whole file mapped (cmp_direct_open's map), or NULL */
    char *path;
    unsigned t;
    size_t n;        /* data blocks */
    uint64_t *bound; /* the first run with tail >= x is in block i or later, i the first with x <= bound[i] */
    uint64_t *off;   /* where block i starts; off[n]: where block n - 1's trailer ends */
    uint32_t dir[(1u << DIR_BITS) + 1]; /* first i with bound[i] >= h << 48 */
};

/* The tested range, [supported_lo, supported_hi] (cmp_direct_set_supported). */
static _Atomic unsigned supported_lo = CMP_DIRECT_ROCKSDB_MIN;
static _Atomic unsigned supported_hi = CMP_DIRECT_ROCKSDB_MAX;

int cmp_direct_supports(unsigned major, unsigned minor)
{
    unsigned v = major * 100 + minor;
    return minor < 100 && v >= atomic_load(&supported_lo) && v <= atomic_load(&supported_hi);
}

void cmp_direct_set_supported(unsigned lo, unsigned hi)
{
    atomic_store(&supported_lo, lo);
    atomic_store(&supported_hi, hi);
}

/* What open found wrong: a format this reader does not know is not an
 * error (RocksDB reads the file instead). */
#define UNSUPPORTED 1

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t load_le64(const uint8_t *p)
{
    return (uint64_t)load_le32(p) | (uint64_t)load_le32(p + 4) << 32;
}

static int corrupt(const cmp_direct *d, const char *what, uint64_t off)
{
    return nd_err_set(ND_ECORRUPT, "table %u, file %s: %s at offset %llu", d->t, d->path, what,
                      (unsigned long long)off);
}

/* Bytes of blocks i.. up to the one where a walk stops at the first run
 * whose tail is >= until (the first block whose bound is >= until), at
 * most SPAN_MAX unless block i alone is larger. until = 0: block i. */
static size_t span_from(const cmp_direct *d, size_t i, uint64_t until)
{
    size_t j = i;
    while (j + 1 < d->n && d->bound[j] < until && d->off[j + 2] - d->off[i] <= SPAN_MAX) j++;
    return (size_t)(d->off[j + 1] - d->off[i]);
}

/* Make *b point at the block at off and its trailer (need bytes) in buf.
 * A read takes buf->ahead bytes, or, for data block i of a walk that
 * stops at the first run whose tail is >= until (0: not known), the
 * blocks up to there (span_from). The buffer keeps what it read and
 * serves the blocks it covers from it. */
static int buffered(const cmp_direct *d, uint64_t off, size_t need, size_t i, uint64_t until,
                    cmp_direct_buf *buf, const uint8_t **b)
{
    /* Bytes held are served again whenever they cover the block (a file
     * never changes): a k=6 query's flipped prefixes, probed in ascending
     * order, often fall into the block the previous probe read. */
    if (buf->wd == d && off >= buf->woff && need <= buf->wlen &&
        off - buf->woff <= buf->wlen - need) {
        *b = buf->p + (off - buf->woff);
        return ND_OK;
    }
    size_t want = need;
    if (buf->ahead > need) want = d->size - off < buf->ahead ? (size_t)(d->size - off) : buf->ahead;
    size_t span = until ? span_from(d, i, until) : 0; /* only when reading */
    if (span > want) want = span;
    if (buf->cap < want) {
        uint8_t *p = realloc(buf->p, want);
        ND_RETURN_IF(!p, ND_ENOMEM, "table %u: out of memory reading %s", d->t, d->path);
        buf->p = p;
        buf->cap = want;
    }
    buf->wd = NULL; /* nothing held while the read is partial */
    buf->checked = 0;
    buf->reads++;
    for (size_t got = 0; got < want;) {
        ssize_t r = pread(d->fd, buf->p + got, want - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return nd_err_set(ND_EIO, "table %u: reading %s at offset %llu: %s", d->t, d->path,
                              (unsigned long long)(off + got),
                              r < 0 ? strerror(errno) : "end of file");
        got += (size_t)r;
    }
    buf->wd = d;
    buf->woff = off;
    buf->wlen = want;
    *b = buf->p;
    return ND_OK;
}

/* The block at off (len bytes) and its trailer, its checksum verified:
 * *blk is where the block starts, *entries_end where its entries end,
 * *nr the count of its restart points (the array starts at
 * *entries_end). Read into buf (buffered), or, from a mapped file, where
 * it lies in the mapping (counted in buf->reads all the same). */
static int block_at(const cmp_direct *d, uint64_t off, uint64_t len, size_t i, uint64_t until,
                    cmp_direct_buf *buf, const uint8_t **blk, const uint8_t **entries_end,
                    uint32_t *nr)
{
    if (off > d->size || len > d->size - off || d->size - off - len < TRAILER_LEN || len < 4)
        return corrupt(d, "block out of the file", off);
    const uint8_t *b = NULL;
    if (d->map) {
        b = d->map + off;
        buf->reads++;
    } else {
        ND_FORWARD(buffered(d, off, (size_t)len + TRAILER_LEN, i, until, buf, &b));
    }
    *blk = b;
    if (b[len] != 0) return corrupt(d, "compressed block", off);
    /* A block served again from buf is the bytes already checked; a
     * mapped one is checked at every look (its page may be read anew). */
    if (d->map || buf->checked != off + 1) {
        if ((uint32_t)nd_xxh3_64(b, (size_t)len) != load_le32(b + len + 1))
            return corrupt(d, "block checksum mismatch", off);
        if (!d->map) buf->checked = off + 1;
    }
    uint32_t n = load_le32(b + len - 4);
    if (n & 0x80000000u) return corrupt(d, "block with a hash index", off);
    if (n == 0 || n > (len - 4) / 4) return corrupt(d, "bad restart count", off);
    *entries_end = b + len - 4 - 4 * (uint64_t)n;
    *nr = n;
    return ND_OK;
}

/* One entry at *p of a block: the key rebuilt in key[0..*klen) (cap
 * bytes), the value; with_len = 0 for delta-encoded index entries, whose
 * value (a handle) the caller parses: *val is where it starts, *vlen 0. */
static int entry_at(const uint8_t **p, const uint8_t *end, int with_len, uint8_t *key,
                    size_t *klen, size_t cap, const uint8_t **val, size_t *vlen)
{
    uint64_t shared, unshared, vl = 0;
    const uint8_t *q = nd_get_varint(*p, end, &shared);
    if (q) q = nd_get_varint(q, end, &unshared);
    if (q && with_len) q = nd_get_varint(q, end, &vl);
    if (!q || shared > *klen || unshared > cap - shared || unshared > (uint64_t)(end - q) ||
        vl > (uint64_t)(end - q) - unshared)
        return -1;
    memcpy(key + shared, q, (size_t)unshared);
    *klen = (size_t)(shared + unshared);
    *val = q + unshared;
    *vlen = (size_t)vl;
    *p = q + unshared + vl;
    return 0;
}

/* The bound of index key S (see struct cmp_direct): x <= bound iff
 * S >= 'R' || BE64(x) bytewise. BELOW when S is below the run space (its
 * block holds fresh entries only: a compaction that ran while they
 * waited for a fold wrote them beside the runs), UNSUPPORTED for a key
 * this reader does not expect. */
#define BELOW 2
static int index_bound(const uint8_t *k, size_t klen, uint64_t *bound)
{
    if (klen && k[0] < TBL_RUN) return BELOW;
    if (klen == 0 || (k[0] == TBL_RUN && (klen == 1 || klen > TBL_KEY_LEN)))
        return UNSUPPORTED;
    if (k[0] > TBL_RUN) {
        *bound = UINT64_MAX;
        return ND_OK;
    }
    uint8_t pad[8] = {0};
    memcpy(pad, k + 1, klen - 1);
    uint64_t s = nd_load_be64(pad);
    if (klen == TBL_KEY_LEN) *bound = s;
    else if (s == 0) return UNSUPPORTED; /* "R" || zeros is below every run key */
    else *bound = s - 1;                 /* a proper prefix: above x exactly when x < s */
    return ND_OK;
}

/* One entry of a block with value lengths: 0 to go on, else stop with it. */
typedef int (*entry_fn)(void *payload, const uint8_t *key, size_t klen, const uint8_t *val,
                        size_t vlen);

/* Visit the entries of the block at off (the metaindex or the properties;
 * what names it in errors). ND_OK after the last, or what cb stopped with. */
static int walk_block(const cmp_direct *d, uint64_t off, uint64_t len, cmp_direct_buf *buf,
                      const char *what, entry_fn cb, void *payload)
{
    const uint8_t *end, *val;
    uint32_t nr;
    uint8_t key[128];
    size_t klen = 0, vlen;
    const uint8_t *b;
    ND_FORWARD(block_at(d, off, len, 0, 0, buf, &b, &end, &nr));
    for (const uint8_t *p = b; p < end;) {
        if (entry_at(&p, end, 1, key, &klen, sizeof key, &val, &vlen) < 0)
            return corrupt(d, what, off);
        int rc = cb(payload, key, klen, val, vlen);
        if (rc) return rc;
    }
    return ND_OK;
}

#define IS(name) (klen == sizeof name - 1 && memcmp(key, name, klen) == 0)

/* The properties this reader relies on, as found. */
typedef struct props {
    int user_key, delta, binary, plain, clean;
    int over; /* deletions allowed (cmp_direct_open) */
} props;

static int note_property(void *payload, const uint8_t *key, size_t klen, const uint8_t *val,
                         size_t vlen)
{
    props *pr = payload;
    uint64_t v = 0;
    if (IS("rocksdb.index.key.is.user.key"))
        pr->user_key = nd_get_varint(val, val + vlen, &v) && v == 1;
    else if (IS("rocksdb.index.value.is.delta.encoded"))
        pr->delta = nd_get_varint(val, val + vlen, &v) && v == 1;
    else if (IS("rocksdb.block.based.table.index.type"))
        pr->binary = vlen == 4 && load_le32(val) == 0;
    else if (IS("rocksdb.compression"))
        pr->plain = vlen == 13 && memcmp(val, "NoCompression", 13) == 0;
    else if (((IS("rocksdb.deleted.keys") || IS("rocksdb.num.range-deletions")) && !pr->over) ||
             IS("rocksdb.merge.operands"))
        pr->clean &= nd_get_varint(val, val + vlen, &v) && v == 0;
    return 0;
}

/* The metaindex entry "rocksdb.properties": its handle (payload: two
 * uint64s), then FOUND, or BAD_HANDLE. */
#define FOUND 2
#define BAD_HANDLE 3
static int note_properties_handle(void *payload, const uint8_t *key, size_t klen,
                                  const uint8_t *val, size_t vlen)
{
    uint64_t *h = payload;
    if (!IS("rocksdb.properties")) return 0;
    const uint8_t *q = nd_get_varint(val, val + vlen, &h[0]);
    return q && nd_get_varint(q, val + vlen, &h[1]) ? FOUND : BAD_HANDLE;
}
#undef IS

/* Through the metaindex at off, the properties block: ND_OK when it has
 * every property this reader relies on, UNSUPPORTED when one differs or
 * it is absent. */
static int check_properties(cmp_direct *d, uint64_t off, uint64_t len, cmp_direct_buf *buf,
                            int over)
{
    uint64_t h[2] = {0, 0};
    props pr = {.clean = 1, .over = over};
    int rc = walk_block(d, off, len, buf, "malformed metaindex", note_properties_handle, h);
    if (rc == BAD_HANDLE) return corrupt(d, "malformed properties handle", off);
    if (rc != FOUND) return rc < 0 ? rc : UNSUPPORTED;
    ND_FORWARD(walk_block(d, h[0], h[1], buf, "malformed properties", note_property, &pr));
    return pr.user_key && pr.delta && pr.binary && pr.plain && pr.clean ? ND_OK : UNSUPPORTED;
}

/* Index entries into bound/off/len, and the direct index over them. */
static int load_index(cmp_direct *d, uint64_t off, uint64_t len, cmp_direct_buf *buf)
{
    const uint8_t *b, *end, *val;
    uint32_t nr;
    uint8_t key[TBL_KEY_LEN + 8];
    size_t klen = 0, vlen, i = 0, n = 0;
    ND_FORWARD(block_at(d, off, len, 0, 0, buf, &b, &end, &nr));
    d->bound = malloc(nr * sizeof *d->bound);
    d->off = malloc((nr + 1) * sizeof *d->off);
    ND_RETURN_IF(!d->bound || !d->off, ND_ENOMEM,
                 "table %u: out of memory indexing %u blocks of %s", d->t, nr, d->path);
    const uint8_t *restarts = end;
    for (const uint8_t *p = b; p < end; i++) {
        /* Every entry a restart point: a full handle, no deltas. */
        if (i >= nr || (uint64_t)(p - b) != load_le32(restarts + 4 * i)) return UNSUPPORTED;
        uint64_t bo, bl;
        if (entry_at(&p, end, 0, key, &klen, sizeof key, &val, &vlen) < 0 ||
            !(val = nd_get_varint(val, end, &bo)) || !(val = nd_get_varint(val, end, &bl)))
            return corrupt(d, "malformed index entry", off);
        p = val;
        int rc = index_bound(key, klen, &d->bound[n]);
        if (rc == BELOW && n == 0) continue; /* fresh entries before the runs */
        if (rc == BELOW) return corrupt(d, "index entry out of order", off);
        if (rc != ND_OK) return rc;
        if (bl > UINT32_MAX || bo > d->size || d->size - bo < TRAILER_LEN ||
            bl > d->size - bo - TRAILER_LEN ||
            (n && (d->bound[n] < d->bound[n - 1] || bo < d->off[n])))
            return corrupt(d, "index entry out of order", off);
        /* Blocks back to back (RocksDB pads them only when asked to align
         * them), so that a block's size is where the next one starts:
         * one array, read from one cache line, where a probe finds both. */
        if (n && bo != d->off[n]) return UNSUPPORTED;
        d->off[n] = bo;
        d->off[++n] = bo + bl + TRAILER_LEN;
    }
    if (i != nr) return corrupt(d, "index restart count", off);
    d->n = n;
    size_t j = 0;
    for (uint64_t h = 0; h <= (1u << DIR_BITS); h++) {
        if (h == (1u << DIR_BITS)) j = d->n;
        else
            while (j < d->n && d->bound[j] < (h << (64 - DIR_BITS))) j++;
        d->dir[h] = (uint32_t)j;
    }
    return ND_OK;
}

static int parse(cmp_direct *d, cmp_direct_buf *buf, int over)
{
    uint8_t f[FOOTER_LEN];
    if (d->size < FOOTER_LEN) return UNSUPPORTED;
    if (pread(d->fd, f, FOOTER_LEN, (off_t)(d->size - FOOTER_LEN)) != FOOTER_LEN)
        return nd_err_set(ND_EIO, "table %u: reading the footer of %s: %s", d->t, d->path,
                          strerror(errno));
    if (load_le64(f + 45) != TABLE_MAGIC) return corrupt(d, "bad table magic", d->size);
    uint32_t version = load_le32(f + 41);
    if (version < 4 || version > 5 || f[0] != CHECKSUM_XXH3) return UNSUPPORTED;
    uint64_t mo, ml, io, il;
    const uint8_t *q = nd_get_varint(f + 1, f + 41, &mo);
    if (q) q = nd_get_varint(q, f + 41, &ml);
    if (q) q = nd_get_varint(q, f + 41, &io);
    if (q) q = nd_get_varint(q, f + 41, &il);
    if (!q) return corrupt(d, "malformed footer", d->size - FOOTER_LEN);
    int rc = check_properties(d, mo, ml, buf, over);
    if (rc == ND_OK) rc = load_index(d, io, il, buf);
    return rc;
}

int cmp_direct_open(cmp_direct **out, const char *path, unsigned t, int over, int map)
{
    struct stat st;
    cmp_direct_buf buf = {0};
    *out = NULL;
    cmp_direct *d = calloc(1, sizeof *d);
    ND_RETURN_IF(!d, ND_ENOMEM, "table %u: out of memory opening %s", t, path);
    d->t = t;
    d->path = strdup(path);
    atomic_init(&d->refs, 1);
    int rc = ND_OK;
    /* No access-time update on each probe's read (2-3% of a k=3 query at
     * 100M); only the file's owner may ask that. */
    d->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
    if (d->fd < 0 && errno == EPERM) d->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (!d->path) ND_FAIL(ND_ENOMEM, "table %u: out of memory opening %s", t, path);
    if (d->fd < 0 || fstat(d->fd, &st) != 0)
        ND_FAIL(ND_EIO, "table %u: cannot open %s: %s", t, path, strerror(errno));
    d->size = (size_t)st.st_size;
    rc = parse(d, &buf, over);
    if (rc == UNSUPPORTED) rc = ND_OK;
    else if (rc == ND_OK) *out = d;
    if (*out && map) {
        /* A mapping that fails leaves the reads to pread: slower, as right. */
        void *m = mmap(NULL, d->size, PROT_READ, MAP_SHARED, d->fd, 0);
        if (m != MAP_FAILED) d->map = m;
    }
cleanup:
    free(buf.p);
    if (!*out) {
        cmp_direct_unref(d);
        if (rc != ND_OK) return rc;
    }
    return ND_OK;
}

void cmp_direct_prefetch(const cmp_direct *d)
{
    /* Not posix_fadvise(WILLNEED): Linux reads ahead at most a few
     * hundred KB of what it is asked (a 100M table is 500 MB). */
    enum { CHUNK = 1 << 20 };
    char *buf = malloc(CHUNK);
    if (!buf) return;
    for (size_t off = 0; off < d->size;) {
        ssize_t r = pread(d->fd, buf, CHUNK, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        off += (size_t)r;
    }
    free(buf);
}

cmp_direct *cmp_direct_ref(cmp_direct *d)
{
    if (d) atomic_fetch_add(&d->refs, 1);
    return d;
}

void cmp_direct_unref(cmp_direct *d)
{
    if (!d || atomic_fetch_sub(&d->refs, 1) != 1) return;
    if (d->map) munmap((void *)d->map, d->size);
    if (d->fd >= 0) close(d->fd);
    free(d->bound);
    free(d->off);
    free(d->path);
    free(d);
}

size_t cmp_direct_blocks(const cmp_direct *d) { return d->n; }

/* Make block i the current one, at its first entry, reading the blocks
 * the walk goes on to with it. */
static int enter_block(cmp_direct_it *it, size_t i)
{
    const cmp_direct *d = it->d;
    uint32_t nr;
    it->block = i;
    it->p = it->end = NULL;
    it->klen = 0;
    if (i >= d->n) return ND_OK;
    ND_FORWARD(block_at(d, d->off[i], d->off[i + 1] - d->off[i] - TRAILER_LEN, i, it->until,
                        it->buf, &it->blk, &it->end, &nr));
    it->p = it->blk;
    return ND_OK;
}

int cmp_direct_next(cmp_direct_it *it, uint64_t *tail, const char **val, size_t *vlen)
{
    const cmp_direct *d = it->d;
    const uint8_t *v;
    uint64_t at;
    do { /* fresh entries (keys below the run space) open the first block */
        while (it->p == it->end) {
            if (it->block >= d->n) return 0;
            ND_FORWARD(enter_block(it, it->block + 1));
            if (it->block >= d->n) return 0;
        }
        at = d->off[it->block] + (uint64_t)(it->p - it->blk);
        if (entry_at(&it->p, it->end, 1, it->key, &it->klen, sizeof it->key, &v, vlen) < 0 ||
            it->klen == 0)
            return corrupt(d, "malformed run entry", at);
    } while (it->key[0] < TBL_RUN && it->block == 0);
    if (it->klen != DATA_KEY_LEN || it->key[0] != TBL_RUN || it->key[TBL_KEY_LEN] != TYPE_VALUE)
        return corrupt(d, "malformed run entry", at);
    *tail = nd_load_be64(it->key + 1);
    *val = (const char *)v;
    return 1;
}

int cmp_direct_beyond(const cmp_direct_it *it, uint64_t x)
{
    return it->block < it->d->n && it->d->bound[it->block] < x;
}

/* The first block whose bound is >= x (n if none): where a seek at x
 * starts. */
static size_t block_of(const cmp_direct *d, uint64_t x)
{
    size_t h = (size_t)(x >> (64 - DIR_BITS));
    size_t lo = d->dir[h], hi = d->dir[h + 1] < d->n ? d->dir[h + 1] : d->n;
    /* The block is at most a few entries past lo: its offsets' cache line
     * is fetched while the bounds are searched (at 100M, each a miss). */
    __builtin_prefetch(&d->off[lo]);
    while (lo < hi) { /* bound[hi] >= x whenever hi < n */
        size_t mid = (lo + hi) / 2;
        if (d->bound[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void cmp_direct_hint(const cmp_direct *d, uint64_t x, int stage)
{
    size_t h = (size_t)(x >> (64 - DIR_BITS));
    if (stage == 1) {
        __builtin_prefetch(&d->dir[h]);
    } else if (stage == 2) {
        size_t lo = d->dir[h];
        __builtin_prefetch(&d->bound[lo]);
        __builtin_prefetch(&d->off[lo]);
    } else if (d->map) {
        /* Every line of the block (up to HINT_MAX bytes; the checksum
         * reads them all): through a mapping, their page walks and misses
         * overlap those of the other tables' blocks. At 100M a k=3 query
         * took 7.1 us with the first and last lines asked for, 5.0 with
         * all. A prefetch of a page not mapped yet is dropped. */
        size_t i = block_of(d, x);
        if (i < d->n) {
            uint64_t end = d->off[i + 1], o = d->off[i] & ~63ull;
            if (end - o > HINT_MAX) end = o + HINT_MAX;
            for (; o < end; o += 64) __builtin_prefetch(d->map + o);
        }
    }
}

int cmp_direct_seek(const cmp_direct *d, uint64_t x, uint64_t until, cmp_direct_buf *buf,
                    cmp_direct_it *it)
{
    size_t lo = block_of(d, x);
    it->d = d;
    it->buf = buf;
    it->until = until;
    ND_FORWARD(enter_block(it, lo));
    /* Step over the runs below x, keeping the first one at or above it
     * unread: the key state before it is saved and restored. */
    for (;;) {
        const uint8_t *p = it->p;
        size_t block = it->block, klen = it->klen;
        uint8_t key[sizeof it->key];
        memcpy(key, it->key, klen);
        uint64_t tail;
        const char *val;
        size_t vlen;
        int rc = cmp_direct_next(it, &tail, &val, &vlen);
        if (rc <= 0) return rc;
        if (tail >= x) {
            if (it->block != block) { /* it was the first of the next block */
                it->p = it->blk;
                it->klen = 0;
            } else {
                it->p = p;
                it->klen = klen;
                memcpy(it->key, key, klen);
            }
            return ND_OK;
        }
    }
}
