/*
 * sketch.c — the resemblance sketch: 256 one-permutation min-hash bins
 * filled by rounds, 4 bits kept a bin, and 12 band keys (neardup.h,
 * "nd_sketch", states the function exactly; ND_SKETCH_VERSION 1).
 *
 * Why this design (bench/README.md, "Near-duplicate quality", measured on
 * three corpora of real text with exact truth): the 128-bin sketch filled
 * by rotation that dedupe used before made a short text's empty bins
 * copies of their neighbours, so its estimate was noisy exactly where
 * texts are short; rounds make every bin the minimum of a hash over the
 * whole set, independent of the others. 4 bits a bin keep 256 bins in 128
 * bytes, and chance equality (1/16) is corrected in the estimate. The
 * band keys are taken from the full 64-bit bin values before truncation.
 *
 * Cost: one hash a feature for round 0; a text of n < 256 distinct
 * features needs about (256 / n) ln 256 more rounds of n hashes each, so
 * about 1,400 hashes however short the text. The builder keeps the
 * hashes only while a bin is empty; once every bin is reached (about
 * 1,600 distinct features) it drops them and adding is a compare. The
 * rounds' hashes are computed in branch-free batches (an AVX-512 clone
 * on x86-64) and the bins taken without data-dependent branches: 1.1-1.5
 * times faster than the scalar rounds with branches on random sets of
 * 30-3,000 features (1.05-1.2 without the clone).
 *
 * Callers: the public API (nd_sketch_*), the engine's signature pass
 * (fp_feat.c, the store's nd_db_sign).
 */
#include <stdlib.h>
#include <string.h>

#include "nd_error.h"
#include "neardup.h"
#include "sort.h"

#define ROUND_MIX 0x9e3779b97f4a7c15ull
#define EMPTY UINT64_MAX

/* splitmix64's finaliser: a bijection of 64-bit values that mixes every
 * input bit into every output bit. */
static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void nd_sketch_init(nd_sketch_builder *b)
{
    memset(b, 0, sizeof *b);
    nd_sketch_begin(b);
}

void nd_sketch_begin(nd_sketch_builder *b)
{
    for (unsigned i = 0; i < ND_SKETCH_BINS; i++) b->min[i] = EMPTY;
    b->n_held = 0;
    b->empty = ND_SKETCH_BINS;
    b->oom = 0;
}

void nd_sketch_dispose(nd_sketch_builder *b)
{
    if (!b) return;
    free(b->held);
    b->held = NULL;
    b->n_held = b->cap_held = 0;
}

/* Keep h for the rounds. When the list is full, repeats are dropped
 * first (sort, unique); it grows only when over half of it is distinct,
 * so it holds at most about twice the set's distinct hashes. It starts at
 * HOLD_FIRST hashes (32 KiB): every bin is reached after about 256 ln 256
 * = 1,420 distinct features, so a text without many repeats never sorts
 * (a first list of 1,024 made every text of 1,024 to 1,600 features sort
 * it: about a third of nd_db_sign's time on texts of 30-2,000 words,
 * bench/bench_resemble). */
#define HOLD_FIRST 4096u
static void hold(nd_sketch_builder *b, uint64_t h)
{
    if (b->n_held == b->cap_held) {
        if (b->n_held) {
            qsort(b->held, b->n_held, sizeof *b->held, sort_cmp_u64);
            size_t m = 1;
            for (size_t i = 1; i < b->n_held; i++)
                if (b->held[i] != b->held[m - 1]) b->held[m++] = b->held[i];
            b->n_held = m;
        }
        if (2 * b->n_held >= b->cap_held) {
            size_t cap = b->cap_held ? 2 * b->cap_held : HOLD_FIRST;
            uint64_t *v = realloc(b->held, cap * sizeof *v);
            if (!v) {
                b->oom = 1;
                return;
            }
            b->held = v;
            b->cap_held = cap;
        }
    }
    b->held[b->n_held++] = h;
}

void nd_sketch_add(nd_sketch_builder *b, uint64_t h)
{
    unsigned bin = (unsigned)(h % ND_SKETCH_BINS);
    uint64_t v = h / ND_SKETCH_BINS, old = b->min[bin];
    /* no branches on the bin: whether it was empty, or is lowered, is
     * close to a coin toss while a text's first few hundred hashes come */
    b->empty -= old == EMPTY;
    b->min[bin] = v < old ? v : old;
    if (b->empty == 0) { /* every bin reached: the rounds will not run */
        b->n_held = 0;
        b->oom = 0;
        return;
    }
    if (b->n_held < b->cap_held && !b->oom)
        b->held[b->n_held++] = h;
    else if (!b->oom)
        hold(b, h);
}

/* Fill the bins round 0 left empty (neardup.h states the rule).
 *
 * The rounds' hashes are computed in batches by round_hashes, with no
 * branch or table look-up so that it vectorises, then taken bin by bin
 * without a data-dependent branch (the bins still open change every
 * round, so such a branch is hard to predict): a closed bin's mask turns
 * the value into EMPTY, which never lowers it, and a bin still open holds
 * EMPTY, so the round's least value lands in it directly. The bins a
 * round reached are listed (with repeats) and closed when the round ends,
 * not before: a round is one minimum over all held hashes. A short text
 * hashes several rounds in one batch, as a round of 30 hashes is too
 * short a loop to pay for itself; the hashes of rounds after the last
 * are wasted (half a batch on average). */
#define BATCH 256u

/* A clone for AVX-512 (x86-64-v4), chosen at load time: its 64-bit
 * multiply hashes 8 values at once (signing about 3 us a text faster in
 * bench_resemble); baseline x86-64 has no such multiply, so the default
 * clone stays scalar. target_clones needs ifunc (glibc on ELF) and GCC 11
 * or clang 14 for the arch name, and no sanitizer in this file's build:
 * the resolver runs before a sanitizer's runtime starts (a TSan build of
 * test_bands crashed at load). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ND_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ND_SANITIZED 1
#endif
#if defined(__x86_64__) && defined(__ELF__) && defined(__GLIBC__) && !defined(ND_SANITIZED) && \
    (defined(__clang__) ? __clang_major__ >= 14 : __GNUC__ >= 11)
#define HASH_CLONES __attribute__((target_clones("default", "arch=x86-64-v4")))
#else
#define HASH_CLONES
#endif
HASH_CLONES
static void round_hashes(uint64_t *restrict out, const uint64_t *restrict held, size_t n,
                         unsigned first_round, unsigned rounds)
{
    for (unsigned j = 0; j < rounds; j++) {
        uint64_t salt = (uint64_t)(first_round + j) * ROUND_MIX;
        uint64_t *o = out + j * n;
        size_t f = 0;
        /* blocks of a fixed 8 hashes: -O2's cheap vectoriser takes them */
        for (; f + 8 <= n; f += 8)
            for (unsigned k = 0; k < 8; k++) o[f + k] = mix64(held[f + k] ^ salt);
        for (; f < n; f++) o[f] = mix64(held[f] ^ salt);
    }
}

/* Lower val by the hashes that fall in an open bin; list those bins. */
static size_t take_hashes(uint64_t *restrict val, uint8_t *restrict reached,
                          const uint64_t *restrict closed, const uint64_t *restrict hash,
                          size_t n)
{
    size_t n_reached = 0;
    for (size_t f = 0; f < n; f++) {
        unsigned bin = (unsigned)(hash[f] % ND_SKETCH_BINS);
        uint64_t v = hash[f] / ND_SKETCH_BINS | closed[bin];
        val[bin] = v < val[bin] ? v : val[bin];
        reached[n_reached] = (uint8_t)bin;
        n_reached += closed[bin] == 0;
    }
    return n_reached;
}

static void fill_rounds(uint64_t *val, const nd_sketch_builder *b)
{
    unsigned round[ND_SKETCH_BINS], empty = b->empty, n_filled = 0;
    uint64_t closed[ND_SKETCH_BINS]; /* 0 while a bin is open, else EMPTY */
    uint64_t hash[BATCH];
    uint8_t reached[BATCH], filled[ND_SKETCH_BINS];
    for (unsigned i = 0; i < ND_SKETCH_BINS; i++) {
        val[i] = b->min[i];
        round[i] = b->min[i] == EMPTY ? UINT32_MAX : 0;
        closed[i] = b->min[i] == EMPTY ? 0 : EMPTY;
    }
    size_t n = b->n_held;
    /* several rounds a batch for a short text, else a round in batches
     * (n is 0 when round 0 reached every bin: no round runs) */
    unsigned rounds = n && n < BATCH ? (unsigned)(BATCH / n) : 1;
    size_t part = n < BATCH ? n : BATCH;
    for (unsigned r = 1; empty > 0; r += rounds) {
        for (size_t start = 0; start < n; start += part) {
            size_t len = n - start < part ? n - start : part;
            round_hashes(hash, b->held + start, len, r, rounds);
            for (unsigned j = 0; j < rounds && empty > 0; j++) {
                size_t n_reached = take_hashes(val, reached, closed, hash + j * len, len);
                for (size_t i = 0; i < n_reached; i++) {
                    unsigned bin = reached[i];
                    if (round[bin] == UINT32_MAX) {
                        round[bin] = r + j;
                        filled[n_filled++] = (uint8_t)bin;
                    }
                }
                if (start + len < n) continue; /* the round goes on */
                /* closed only now: a bin stays open to the round's later batches */
                for (unsigned i = 0; i < n_filled; i++) closed[filled[i]] = EMPTY;
                empty -= n_filled;
                n_filled = 0;
            }
        }
    }
    for (unsigned i = 0; i < ND_SKETCH_BINS; i++)
        if (round[i] > 0) val[i] = mix64(val[i] ^ ((uint64_t)round[i] << 58));
}

static void band_keys(uint32_t *out, const uint64_t *val)
{
    for (unsigned band = 0; band < ND_SKETCH_BANDS; band++) {
        uint8_t bytes[8 * ND_SKETCH_ROWS];
        for (unsigned r = 0; r < ND_SKETCH_ROWS; r++) {
            uint64_t v = val[band * ND_SKETCH_ROWS + r];
            for (unsigned i = 0; i < 8; i++) bytes[8 * r + i] = (uint8_t)(v >> (8 * i));
        }
        out[band] = (uint32_t)(nd_feature_hash(bytes, sizeof bytes) >> 32);
    }
}

int nd_sketch_finish(nd_sketch *out, nd_sketch_builder *b)
{
    uint64_t val[ND_SKETCH_BINS];
    int oom = b->oom;
    if (b->empty == ND_SKETCH_BINS) { /* the empty set */
        memset(out->bin, 0xff, sizeof out->bin);
        memset(out->band, 0, sizeof out->band);
    } else if (!oom) {
        fill_rounds(val, b);
        for (unsigned i = 0; i < ND_SKETCH_BYTES; i++)
            out->bin[i] = (uint8_t)((val[2 * i] & 0xf) | (val[2 * i + 1] & 0xf) << 4);
        band_keys(out->band, val);
    }
    nd_sketch_begin(b);
    ND_RETURN_IF(oom, ND_ENOMEM, "sketch: out of memory keeping the hashes of a text");
    return ND_OK;
}

double nd_sketch_resemblance(const nd_sketch *a, const nd_sketch *b)
{
    unsigned eq = 0;
    for (unsigned i = 0; i < ND_SKETCH_BYTES; i++) {
        unsigned x = a->bin[i] ^ b->bin[i];
        eq += (x & 0xf) == 0;
        eq += (x >> 4) == 0;
    }
    const double chance = 1.0 / (1u << ND_SKETCH_BIN_BITS);
    double e = ((double)eq / ND_SKETCH_BINS - chance) / (1.0 - chance);
    return e < 0 ? 0 : e;
}

int nd_sketch_of(nd_sketch *out, const uint64_t *hashes, size_t n)
{
    ND_RETURN_IF(!out || (!hashes && n > 0), ND_EINVAL, "nd_sketch_of: NULL argument");
    nd_sketch_builder b;
    nd_sketch_init(&b);
    for (size_t i = 0; i < n; i++) nd_sketch_add(&b, hashes[i]);
    int rc = nd_sketch_finish(out, &b);
    nd_sketch_dispose(&b);
    return rc;
}
