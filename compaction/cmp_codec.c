/*
 * cmp_codec.c — the run codec. Writes version 2 (Golomb-Rice coded gaps);
 * reads versions 1 (XOR-delta + coded leading-zero counts + zstd where it
 * pays) and 2. The only file that includes <zstd.h>.
 *
 * A run holds n >= 1 strictly ascending permuted fingerprints v_0 < ... <
 * v_{n-1}; v_0 (the head) is implied by the RocksDB key and is not stored
 * (cmp_layout.h: a table's runs hold complemented values in reverse order,
 * keyed by their tail, so the head given here is ~tail). Byte 0
 * names the version, so runs self-describe and a table may mix versions
 * (a database is upgraded run by run as compaction rewrites it).
 *
 * Version 2. For i >= 1 the codec stores the gap g_i = v_i - v_{i-1} - 1
 * (0 .. 2^64-2). Sorted random values have about geometric gaps of mean
 * m = 2^64/N; a geometric variable costs log2 m + log2 e (1.44) bits of
 * entropy. A Rice code with parameter b stores the quotient g >> b in
 * unary and the b low bits: with 2^b / m = x it costs log2 m + log2 x + 1
 * + 1/(e^x - 1) bits, 1.47 over log2 m at x = 0.66 and at most ~1.57 as x
 * runs over [0.47, 0.94], where the best b keeps it: within 0.03..0.13 bit
 * of the entropy. The encoder tries b0 - 1, b0, b0 + 1 with b0 =
 * floor(log2 mean gap) and keeps the one whose exact size is smallest
 * (ties: b0, then the lower). With the header (4 bytes a run) and the key
 * (9 bytes a run, holding the value the run does not store), a table costs
 * about 64 - log2 N + 2 bits per entry at runs of 128.
 *   byte 0        : 0x02 (bits 0..3 the version, as in version 1; the
 *                   other bits 0)
 *   varint n      : number of values, head included (1..CMP_RUN_MAX)
 *   if n > 1:
 *     byte b      : Rice parameter (0..63)
 *     bitstream   : for i = 1..n-1: q_i = g_i >> b as q_i 0-bits and a
 *                   1-bit, then the b low bits of g_i
 * A run's encoding is at most 5 + ceil(66 (n-1) / 8) bytes: with b = b0,
 * sum(q_i) < 2 (n-1), so each gap costs under b0 + 3 <= 66 bits on average.
 * Decoding reads the stream a 64-bit word at a time (refill as in
 * Giesen's "Reading bits in far too many ways", variant 4) and finds each
 * quotient with one count-trailing-zeros: no per-bit loop; the bounds are
 * checked per gap, the words are never read past the end of the value.
 *
 * Version 1 (read only; the encoder writes it when a test asks for it
 * through cmp_codec_write_version). For i >= 1 it stores x_i = v_i XOR
 * v_{i-1} (never 0). With lz_i the number of leading zeros of x_i, x_i is
 * its implicit leading one followed by the r_i = 63 - lz_i residual bits
 * below it. The lz field costs its packed width (usually 3..5 bits) or
 * zstd's ~2.5 bits where the unary quotient of version 2 costs ~1.5:
 * measured 49.0 bits per entry per table at N = 1M, 3.5 above the bound.
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
 *   The version 1 encoder writes both forms when zstd might pay (n >= 64)
 *   and keeps the smaller.
 * In both versions multi-byte integers are little-endian varints, the
 * bitstream is packed LSB-first into bytes, unused bits of the last byte
 * are 0 and nothing follows it. The decoder validates every field and
 * returns ND_ECORRUPT on anything malformed, never reading out of bounds.
 */
#include "cmp_codec.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_format / ZSTD_d_format */
#include <zstd.h>

#include "nd_error.h"
#include "nd_varint.h"

#define CODEC_V1 1u
#define CODEC_V2 2u
#define FLAG_ZSTD 0x10u /* version 1 only */
#define ZSTD_MIN_N 64 /* below this the frame overhead never pays */
#define ZSTD_LEVEL 3

/* The version the encoder writes (process-wide; tests set 1 to build the
 * databases an older build wrote). */
static _Atomic unsigned write_version = CODEC_V2;

unsigned cmp_codec_write_version(unsigned version)
{
    if (version != CODEC_V1 && version != CODEC_V2) return atomic_load(&write_version);
    return atomic_exchange(&write_version, version);
}

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

/* ---- encode --------------------------------------------------------- */

size_t cmp_run_bound(size_t n)
{
    /* header + per entry at most 6 lz bits + 63 residual bits (version 1),
     * which also covers version 2's 66 bits per gap */
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

static int encode_v1(cmp_codec *c, void *out, size_t cap, size_t *out_len,
                     const uint64_t *vals, size_t n)
{
    uint8_t *o = out;
    size_t pos = 0;
    unsigned base = 63, top = 0;
    o[pos++] = CODEC_V1;
    pos += nd_put_varint(o + pos, n);
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
        use_zstd = nd_put_varint(vb, zlen) + zlen + (resid_bits + 7) / 8 < packed;
    }
    /* Residuals follow the zstd-packed lz codes, or each follows its
     * lz code packed in `width` bits above `base`. */
    if (use_zstd) {
        o[0] |= FLAG_ZSTD;
        pos += nd_put_varint(o + pos, zlen);
        memcpy(o + pos, c->tmp, zlen);
        pos += zlen;
    } else {
        o[pos++] = (uint8_t)base;
        o[pos++] = (uint8_t)width;
    }
    bitw w = {o + pos, o + cap, 0, 0};
    for (size_t i = 1; i < n; i++) {
        unsigned lz, r;
        uint64_t res;
        split_xor(vals[i] ^ vals[i - 1], &lz, &r, &res);
        if (!use_zstd) bw_put(&w, lz - base, width);
        bw_put64(&w, res, r);
    }
    bw_flush(&w);
    *out_len = (size_t)(w.p - o);
    return ND_OK;
}

/* Bits of the Rice codes of gaps v_i - v_{i-1} - 1 with parameter b. */
static uint64_t rice_bits(const uint64_t *vals, size_t n, unsigned b)
{
    uint64_t q = 0;
    for (size_t i = 1; i < n; i++) q += (vals[i] - vals[i - 1] - 1) >> b;
    return q + (uint64_t)(n - 1) * (b + 1);
}

/* The Rice parameter with the smallest encoding among floor(log2 mean
 * gap) and its two neighbours (the optimum for geometric gaps is one of
 * the first two; trying the third costs one more pass, at compaction). */
static unsigned rice_param(const uint64_t *vals, size_t n)
{
    uint64_t mean = (vals[n - 1] - vals[0] - (n - 1)) / (n - 1);
    unsigned b0 = mean ? 63u - (unsigned)__builtin_clzll(mean) : 0;
    unsigned best = b0;
    uint64_t best_bits = rice_bits(vals, n, b0);
    for (int d = -1; d <= 1; d += 2) {
        int b = (int)b0 + d;
        if (b < 0 || b > 63) continue;
        uint64_t bits = rice_bits(vals, n, (unsigned)b);
        if (bits < best_bits) {
            best_bits = bits;
            best = (unsigned)b;
        }
    }
    return best;
}

static int encode_v2(void *out, size_t *out_len, const uint64_t *vals, size_t n)
{
    uint8_t *o = out;
    size_t pos = 0;
    o[pos++] = CODEC_V2;
    pos += nd_put_varint(o + pos, n);
    if (n == 1) {
        *out_len = pos;
        return ND_OK;
    }
    unsigned b = rice_param(vals, n);
    o[pos++] = (uint8_t)b;
    bitw w = {.p = o + pos};
    for (size_t i = 1; i < n; i++) {
        uint64_t g = vals[i] - vals[i - 1] - 1, q = g >> b;
        for (; q >= 32; q -= 32) bw_put(&w, 0, 32);
        bw_put(&w, 1ull << q, (unsigned)q + 1);
        bw_put64(&w, g, b);
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
    if (atomic_load(&write_version) == CODEC_V2) return encode_v2(out, out_len, vals, n);
    cmp_codec *own = NULL;
    if (!c) {
        ND_FORWARD(cmp_codec_new(&own));
        c = own;
    }
    int rc = encode_v1(c, out, cap, out_len, vals, n);
    cmp_codec_free(own);
    return rc;
}

/* ---- decode --------------------------------------------------------- */

static int read_header(const uint8_t **p, const uint8_t *end, unsigned *flags, uint64_t *n)
{
    if (*p == end) return nd_err_set(ND_ECORRUPT, "run: empty value");
    *flags = *(*p)++;
    if (!(*flags == CODEC_V2 || *flags == CODEC_V1 || *flags == (CODEC_V1 | FLAG_ZSTD)))
        return nd_err_set(ND_ECORRUPT, "run: unknown format byte 0x%02x", *flags);
    if (!(*p = nd_get_varint(*p, end, n)) || *n == 0 || *n > CMP_RUN_MAX)
        return nd_err_set(ND_ECORRUPT, "run: bad entry count");
    return ND_OK;
}

int cmp_run_count(size_t *out, const void *data, size_t len)
{
    const uint8_t *p = data;
    unsigned flags = 0;
    uint64_t n = 0;
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

static int decode_v1(cmp_codec *c, uint64_t *out, size_t n, unsigned flags,
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
    if (!(p = nd_get_varint(p, end, &zlen)) || zlen > (uint64_t)(end - p))
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

/* Version 2's reader (rr_*) works on a bitr with a looser invariant than
 * br_get's: acc holds the next n (<= 63) stream bits in its low bits; the
 * bits above them are the stream's following bits or 0 (never bits past
 * the end), so re-loading overlapping bytes is harmless. The two readers
 * are never mixed on one stream. */
static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* Top up acc to >= 56 bits, or to the end of the stream. One unaligned
 * 8-byte load while 8 bytes remain; bytes one by one near the end. */
static inline void rr_refill(bitr *r)
{
    if (r->end - r->p >= 8) {
        r->acc |= load_le64(r->p) << r->n;
        r->p += (63 - r->n) >> 3;
        r->n |= 56;
    } else {
        while (r->n < 56 && r->p < r->end) {
            r->acc |= (uint64_t)*r->p++ << r->n;
            r->n += 8;
        }
    }
}

/* Read bits (<= 56) bits; -1 past the end. */
static inline int rr_get(bitr *r, unsigned bits, uint64_t *out)
{
    if (r->n < bits) {
        rr_refill(r);
        if (r->n < bits) return -1;
    }
    *out = r->acc & ((1ull << bits) - 1);
    r->acc >>= bits;
    r->n -= bits;
    return 0;
}

/* A unary quotient longer than the bits at hand: count whole words of
 * zeros. Gives up past qmax (the value would pass 2^64 - 1) or the end. */
static int rr_unary_slow(bitr *r, uint64_t qmax, uint64_t *out)
{
    uint64_t q = 0;
    for (;;) {
        uint64_t valid = r->acc & ((1ull << r->n) - 1);
        if (valid) {
            unsigned z = (unsigned)__builtin_ctzll(valid);
            r->acc >>= z + 1;
            r->n -= z + 1;
            *out = q + z;
            return 0;
        }
        q += r->n;
        r->acc >>= r->n;
        r->n = 0;
        if (q > qmax)
            return nd_err_set(ND_ECORRUPT, "run: unary quotient past 2^64 (%llu zero bits)",
                              (unsigned long long)q);
        if (r->p == r->end) return nd_err_set(ND_ECORRUPT, "run: bitstream truncated");
        rr_refill(r);
    }
}

/* Decode up to n values; past stop (the first value above it is not kept)
 * leave early with *got the values kept, the rest of the stream unread. */
static int decode_v2(uint64_t *out, size_t n, size_t *got, uint64_t stop, const uint8_t *p,
                     const uint8_t *end)
{
    if (p == end) return nd_err_set(ND_ECORRUPT, "run: truncated header");
    unsigned b = *p++;
    if (b > 63) return nd_err_set(ND_ECORRUPT, "run: Rice parameter %u (0..63 allowed)", b);
    const uint64_t mask = (1ull << b) - 1;
    bitr r = {.p = p, .end = end};
    uint64_t prev = out[0];
    for (size_t i = 1; i < n; i++) {
        if (prev == UINT64_MAX) return nd_err_set(ND_ECORRUPT, "run: values past 2^64 - 1");
        uint64_t limit = UINT64_MAX - prev - 1, qmax = limit >> b, q = 0, low;
        rr_refill(&r);
        /* ctz(0) is undefined: acc == 0 takes the slow path like a long
         * quotient does. */
        unsigned z = r.acc ? (unsigned)__builtin_ctzll(r.acc) : 64;
        if (__builtin_expect(z < r.n, 1)) {
            q = z;
            r.acc >>= z + 1;
            r.n -= z + 1;
        } else {
            ND_FORWARD(rr_unary_slow(&r, qmax, &q));
        }
        if (b <= 56) {
            if (__builtin_expect(r.n < b, 0)) {
                rr_refill(&r);
                if (r.n < b) goto truncated;
            }
            low = r.acc & mask;
            r.acc >>= b;
            r.n -= b;
        } else {
            uint64_t hi;
            if (rr_get(&r, 32, &low) || rr_get(&r, b - 32, &hi)) goto truncated;
            low |= hi << 32;
        }
        if (q > qmax || (q << b | low) > limit)
            return nd_err_set(ND_ECORRUPT, "run: gap past 2^64 - 1 at entry %zu", i);
        prev += (q << b | low) + 1;
        if (prev > stop) {
            *got = i;
            return ND_OK;
        }
        out[i] = prev;
    }
    *got = n;
    return finish_stream(&r);
truncated:
    return nd_err_set(ND_ECORRUPT, "run: bitstream truncated");
}

int cmp_run_decode(cmp_codec *c, uint64_t *out, size_t cap, size_t *out_n,
                   uint64_t head, const void *data, size_t len)
{
    return cmp_run_decode_upto(c, out, cap, out_n, head, data, len, UINT64_MAX);
}

int cmp_run_decode_upto(cmp_codec *c, uint64_t *out, size_t cap, size_t *out_n,
                        uint64_t head, const void *data, size_t len, uint64_t stop)
{
    const uint8_t *p = data, *end = p + len;
    unsigned flags = 0;
    uint64_t n = 0;
    ND_FORWARD(read_header(&p, end, &flags, &n));
    ND_RETURN_IF(n > cap, ND_ELIMIT, "run: %llu values do not fit in %zu",
                 (unsigned long long)n, cap);
    out[0] = head;
    if (n == 1) {
        ND_RETURN_IF(p != end, ND_ECORRUPT, "run: trailing bytes");
        *out_n = 1;
        return ND_OK;
    }
    if (flags == CODEC_V2) {
        size_t got = 0;
        int rc = decode_v2(out, (size_t)n, &got, stop, p, end);
        if (rc == ND_OK) *out_n = got;
        return rc;
    }
    cmp_codec *own = NULL;
    if (!c && (flags & FLAG_ZSTD)) {
        ND_FORWARD(cmp_codec_new(&own));
        c = own;
    }
    int rc = decode_v1(c, out, (size_t)n, flags, p, end);
    cmp_codec_free(own);
    if (rc == ND_OK) *out_n = (size_t)n;
    return rc;
}
