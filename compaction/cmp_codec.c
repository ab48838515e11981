/*
 * cmp_codec.c — the run codec: XOR-delta + coded leading-zero counts +
 * zstd where it pays. The only file that includes <zstd.h>.
 *
 * A run holds n >= 1 strictly ascending permuted fingerprints v_0 < ... <
 * v_{n-1}; v_0 (the head) is the RocksDB key and is not stored. For i >= 1
 * the codec stores x_i = v_i XOR v_{i-1} (never 0). With lz_i the number of
 * leading zeros of x_i, x_i is its implicit leading one followed by the
 * r_i = 63 - lz_i "residual" bits below it. In a sorted random set of N
 * values consecutive gaps are about 2^64/N, so lz_i concentrates around
 * log2 N (about 2 bits of entropy) and the residual bits are random: the
 * whole run costs about 64 - log2 N + 2..3 bits per entry, against the
 * entropy bound 64 - log2 N + 1.44 (DESIGN.md).
 *
 * Format (version 1), all multi-byte integers little-endian varints:
 *   byte 0        : bits 0..3 format version (1); bit 4 set = the lz section
 *                   is zstd-compressed; other bits 0
 *   varint n      : number of values, head included (1..CMP_RUN_MAX)
 *   if n > 1 and bit 4 clear ("packed"):
 *     byte base   : smallest lz_i (0..63)
 *     byte width  : bits per (lz_i - base) (0..6)
 *     bitstream   : for i = 1..n-1: `width` bits of lz_i - base, then the
 *                   r_i residual bits (most significant first as a number,
 *                   written LSB-first into the stream)
 *   if n > 1 and bit 4 set ("zstd"):
 *     varint c    : length of the zstd frame
 *     c bytes     : magicless zstd frame, no checksum, no content size, of the
 *                   n-1 bytes lz_1..lz_{n-1}
 *     bitstream   : for i = 1..n-1: the r_i residual bits
 *   The bitstream is packed LSB-first into bytes; unused bits of the last
 *   byte are 0 and nothing follows it.
 * The encoder writes both forms when zstd might pay (n >= 64) and keeps the
 * smaller; the decoder validates every field and returns ND_ECORRUPT on
 * anything malformed, never reading out of bounds.
 */
#include "cmp_codec.h"

#include <stdlib.h>
#include <string.h>

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_format / ZSTD_d_format */
#include <zstd.h>

#include "nd_error.h"

#define CODEC_VERSION 1u
#define FLAG_ZSTD 0x10u
#define ZSTD_MIN_N 64 /* below this the frame overhead never pays */
#define ZSTD_LEVEL 3

struct cmp_codec {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    uint8_t lz[CMP_RUN_MAX];   /* scratch: lz bytes */
    uint8_t tmp[CMP_RUN_MAX + 64]; /* scratch: zstd frame */
};

int cmp_codec_new(cmp_codec **out)
{
    cmp_codec *c = calloc(1, sizeof *c);
    ND_RETURN_IF(!c, ND_ENOMEM, "codec: out of memory");
    *out = c;
    return ND_OK;
}

void cmp_codec_free(cmp_codec *c)
{
    if (!c) return;
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    free(c);
}

/* ---- bit writer / reader ------------------------------------------- */

typedef struct bitw {
    uint8_t *p, *end;
    uint64_t acc;
    unsigned n; /* bits in acc */
} bitw;

/* Append the low `bits` (<= 32) bits of v. Caller guarantees capacity. */
static inline void bw_put(bitw *w, uint64_t v, unsigned bits)
{
    if (bits == 0) return;
    w->acc |= (v & ((1ull << bits) - 1)) << w->n;
    w->n += bits;
    while (w->n >= 8) {
        *w->p++ = (uint8_t)w->acc;
        w->acc >>= 8;
        w->n -= 8;
    }
}

static inline void bw_put64(bitw *w, uint64_t v, unsigned bits)
{
    if (bits > 32) {
        bw_put(w, v, 32);
        bw_put(w, v >> 32, bits - 32);
    } else {
        bw_put(w, v, bits);
    }
}

static inline void bw_flush(bitw *w)
{
    if (w->n) *w->p++ = (uint8_t)w->acc;
    w->acc = 0;
    w->n = 0;
}

typedef struct bitr {
    const uint8_t *p, *end;
    uint64_t acc;
    unsigned n;
} bitr;

/* Read `bits` (<= 32) bits; returns -1 past the end. */
static inline int br_get(bitr *r, unsigned bits, uint64_t *out)
{
    while (r->n < bits) {
        if (r->p == r->end) return -1;
        r->acc |= (uint64_t)*r->p++ << r->n;
        r->n += 8;
    }
    *out = bits ? r->acc & ((1ull << bits) - 1) : 0;
    r->acc = bits ? r->acc >> bits : r->acc;
    r->n -= bits;
    return 0;
}

static inline int br_get64(bitr *r, unsigned bits, uint64_t *out)
{
    if (bits <= 32) return br_get(r, bits, out);
    uint64_t lo, hi;
    if (br_get(r, 32, &lo) || br_get(r, bits - 32, &hi)) return -1;
    *out = lo | (hi << 32);
    return 0;
}

/* ---- varints -------------------------------------------------------- */

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p == end) return -1;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* ---- encode --------------------------------------------------------- */

size_t cmp_run_bound(size_t n)
{
    /* header + per entry at most 6 lz bits + 63 residual bits, rounded up */
    return 16 + (n * 69 + 7) / 8;
}

static unsigned bit_width(unsigned v)
{
    unsigned w = 0;
    while (v >> w) w++;
    return w;
}

/* Residual bits of x below its leading one, and their count. */
static inline void split_xor(uint64_t x, unsigned *lz, unsigned *r, uint64_t *res)
{
    *lz = (unsigned)__builtin_clzll(x);
    *r = 63 - *lz;
    *res = *r ? x & ((1ull << *r) - 1) : 0;
}

static int zstd_lz(cmp_codec *c, size_t m, size_t *out_len)
{
    if (!c->cctx) {
        c->cctx = ZSTD_createCCtx();
        if (!c->cctx) return nd_err_set(ND_ENOMEM, "codec: cannot create zstd context");
        ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
        ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
        ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 0);
        ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 0);
        ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_dictIDFlag, 0);
    }
    size_t r = ZSTD_compress2(c->cctx, c->tmp, sizeof c->tmp, c->lz, m);
    if (ZSTD_isError(r)) return nd_err_set(ND_EINTERNAL, "codec: zstd: %s", ZSTD_getErrorName(r));
    *out_len = r;
    return ND_OK;
}

static int encode_with(cmp_codec *c, void *out, size_t cap, size_t *out_len,
                       const uint64_t *vals, size_t n)
{
    uint8_t *o = out;
    size_t pos = 0;
    unsigned base = 63, top = 0;
    o[pos++] = CODEC_VERSION;
    pos += put_varint(o + pos, n);
    if (n == 1) {
        *out_len = pos;
        return ND_OK;
    }
    for (size_t i = 1; i < n; i++) {
        unsigned lz = (unsigned)__builtin_clzll(vals[i] ^ vals[i - 1]);
        c->lz[i - 1] = (uint8_t)lz;
        if (lz < base) base = lz;
        if (lz > top) top = lz;
    }
    unsigned width = bit_width(top - base);

    /* The packed form's size is known in advance: compare with zstd's. */
    size_t resid_bits = 0;
    for (size_t i = 0; i + 1 < n; i++) resid_bits += 63u - c->lz[i];
    size_t packed = 2 + (resid_bits + (n - 1) * width + 7) / 8;
    size_t zlen = 0;
    int use_zstd = 0;
    if (n >= ZSTD_MIN_N) {
        ND_FORWARD(zstd_lz(c, n - 1, &zlen));
        uint8_t vb[10];
        use_zstd = put_varint(vb, zlen) + zlen + (resid_bits + 7) / 8 < packed;
    }
    bitw w = {0};
    if (use_zstd) {
        o[0] |= FLAG_ZSTD;
        pos += put_varint(o + pos, zlen);
        memcpy(o + pos, c->tmp, zlen);
        pos += zlen;
        w.p = o + pos;
        w.end = o + cap;
        for (size_t i = 1; i < n; i++) {
            unsigned lz, r;
            uint64_t res;
            split_xor(vals[i] ^ vals[i - 1], &lz, &r, &res);
            bw_put64(&w, res, r);
        }
    } else {
        o[pos++] = (uint8_t)base;
        o[pos++] = (uint8_t)width;
        w.p = o + pos;
        w.end = o + cap;
        for (size_t i = 1; i < n; i++) {
            unsigned lz, r;
            uint64_t res;
            split_xor(vals[i] ^ vals[i - 1], &lz, &r, &res);
            bw_put(&w, lz - base, width);
            bw_put64(&w, res, r);
        }
    }
    bw_flush(&w);
    *out_len = (size_t)(w.p - o);
    return ND_OK;
}

int cmp_run_encode(cmp_codec *c, void *out, size_t cap, size_t *out_len,
                   const uint64_t *vals, size_t n)
{
    ND_RETURN_IF(n == 0 || n > CMP_RUN_MAX, ND_EINVAL, "codec: run of %zu values (1..%u allowed)",
                 n, CMP_RUN_MAX);
    ND_RETURN_IF(cap < cmp_run_bound(n), ND_ELIMIT, "codec: output buffer too small");
    for (size_t i = 1; i < n; i++)
        ND_RETURN_IF(vals[i] <= vals[i - 1], ND_EINVAL,
                     "codec: run not strictly ascending at index %zu", i);
    cmp_codec *own = NULL;
    if (!c) {
        ND_FORWARD(cmp_codec_new(&own));
        c = own;
    }
    int rc = encode_with(c, out, cap, out_len, vals, n);
    cmp_codec_free(own);
    return rc;
}

/* ---- decode --------------------------------------------------------- */

static int read_header(const uint8_t **p, const uint8_t *end, unsigned *flags, uint64_t *n)
{
    if (*p == end) return nd_err_set(ND_ECORRUPT, "run: empty value");
    *flags = *(*p)++;
    if ((*flags & 0x0f) != CODEC_VERSION || (*flags & ~(0x0fu | FLAG_ZSTD)))
        return nd_err_set(ND_ECORRUPT, "run: unknown format byte 0x%02x", *flags);
    if (get_varint(p, end, n) || *n == 0 || *n > CMP_RUN_MAX)
        return nd_err_set(ND_ECORRUPT, "run: bad entry count");
    return ND_OK;
}

int cmp_run_count(size_t *out, const void *data, size_t len)
{
    const uint8_t *p = data;
    unsigned flags;
    uint64_t n;
    ND_FORWARD(read_header(&p, p + len, &flags, &n));
    *out = (size_t)n;
    return ND_OK;
}

/* Append value i from x = leading one at bit r plus residual. */
static inline int step(uint64_t *out, size_t i, unsigned r, uint64_t res)
{
    uint64_t x = (1ull << r) | res;
    uint64_t prev = out[i - 1];
    if (prev & (1ull << r)) return -1; /* would not ascend */
    out[i] = prev ^ x;
    return 0;
}

static int finish_stream(const bitr *r)
{
    if (r->p != r->end || (r->acc & ((1ull << r->n) - 1)) != 0 || r->n >= 8)
        return nd_err_set(ND_ECORRUPT, "run: trailing bytes or bits");
    return ND_OK;
}

static int decode_with(cmp_codec *c, uint64_t *out, size_t n, unsigned flags,
                       const uint8_t *p, const uint8_t *end)
{
    bitr r = {0};
    if (!(flags & FLAG_ZSTD)) {
        if (end - p < 2) return nd_err_set(ND_ECORRUPT, "run: truncated header");
        unsigned base = p[0], width = p[1];
        if (base > 63 || width > 6) return nd_err_set(ND_ECORRUPT, "run: bad lz base/width");
        r.p = p + 2;
        r.end = end;
        for (size_t i = 1; i < n; i++) {
            uint64_t d, res;
            if (br_get(&r, width, &d)) goto truncated;
            unsigned lz = base + (unsigned)d;
            if (lz > 63) return nd_err_set(ND_ECORRUPT, "run: leading-zero count %u", lz);
            if (br_get64(&r, 63 - lz, &res)) goto truncated;
            if (step(out, i, 63 - lz, res)) goto order;
        }
        return finish_stream(&r);
    }
    uint64_t zlen;
    if (get_varint(&p, end, &zlen) || zlen > (uint64_t)(end - p))
        return nd_err_set(ND_ECORRUPT, "run: bad zstd section length");
    if (!c->dctx) {
        c->dctx = ZSTD_createDCtx();
        if (!c->dctx) return nd_err_set(ND_ENOMEM, "codec: cannot create zstd context");
        ZSTD_DCtx_setParameter(c->dctx, ZSTD_d_format, ZSTD_f_zstd1_magicless);
    }
    size_t got = ZSTD_decompressDCtx(c->dctx, c->lz, n - 1, p, (size_t)zlen);
    if (ZSTD_isError(got) || got != n - 1)
        return nd_err_set(ND_ECORRUPT, "run: zstd section: %s",
                          ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong length");
    r.p = p + zlen;
    r.end = end;
    for (size_t i = 1; i < n; i++) {
        unsigned lz = c->lz[i - 1];
        uint64_t res;
        if (lz > 63) return nd_err_set(ND_ECORRUPT, "run: leading-zero count %u", lz);
        if (br_get64(&r, 63 - lz, &res)) goto truncated;
        if (step(out, i, 63 - lz, res)) goto order;
    }
    return finish_stream(&r);
truncated:
    return nd_err_set(ND_ECORRUPT, "run: bitstream truncated");
order:
    return nd_err_set(ND_ECORRUPT, "run: values not ascending");
}

int cmp_run_decode(cmp_codec *c, uint64_t *out, size_t cap, size_t *out_n,
                   uint64_t head, const void *data, size_t len)
{
    const uint8_t *p = data, *end = p + len;
    unsigned flags;
    uint64_t n;
    ND_FORWARD(read_header(&p, end, &flags, &n));
    ND_RETURN_IF(n > cap, ND_ELIMIT, "run: %llu values do not fit in %zu",
                 (unsigned long long)n, cap);
    out[0] = head;
    if (n == 1) {
        ND_RETURN_IF(p != end, ND_ECORRUPT, "run: trailing bytes");
        *out_n = 1;
        return ND_OK;
    }
    cmp_codec *own = NULL;
    if (!c && (flags & FLAG_ZSTD)) {
        ND_FORWARD(cmp_codec_new(&own));
        c = own;
    }
    int rc = decode_with(c, out, (size_t)n, flags, p, end);
    cmp_codec_free(own);
    if (rc == ND_OK) *out_n = (size_t)n;
    return rc;
}
