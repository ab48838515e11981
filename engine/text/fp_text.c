/*
 * fp_text.c — text -> features -> simhash. The definition of a fingerprint
 * (versions ND_FP_VERSION_OLDEST to ND_FP_VERSION, chosen by
 * fp_resolved.version); any change to what this file computes for any
 * input under a version changes fingerprints and needs a new version.
 *
 * 1. Invalid UTF-8: every byte that does not start a valid, shortest-form
 *    UTF-8 sequence (or a surrogate / > U+10FFFF) is replaced by U+FFFD.
 *    U+FFFD is not a letter, so it separates tokens. NUL is a separator too.
 * 2. Normalisation: Unicode NFKC followed by case folding (utf8proc 2.8,
 *    STABLE|COMPAT|COMPOSE|CASEFOLD). ASCII stretches take a fast path that
 *    only lowercases A-Z, which is exactly what NFKC + case folding does to
 *    them; a stretch is cut only before an ASCII character that is followed
 *    by another ASCII character, where no composition can cross.
 * 3. Tokens: maximal runs of letters (L*), digits (N*) and marks (M*).
 *    Characters of scripts written without spaces — Han (U+2E80..U+2FDF,
 *    U+3400..U+4DBF, U+4E00..U+9FFF, U+F900..U+FAFF, U+20000..U+3134F),
 *    Hiragana and Katakana (U+3040..U+30FF, U+31F0..U+31FF), Thai
 *    (U+0E00..U+0E7F), Lao (U+0E80..U+0EFF), Myanmar (U+1000..U+109F),
 *    Khmer (U+1780..U+17FF) — never join a token: each maximal run of them
 *    yields its overlapping character bigrams as tokens (a run of one
 *    character is one token), unless ND_FP_NO_CJK_BIGRAMS, where they are
 *    letters like any other. That is version 1 (frozen). Version 2 (CJK
 *    runs whole): the CJK characters are Han (with 々 〆 〇 〻 and the
 *    Hangzhou numerals), Hiragana, Katakana (without the punctuation
 *    ゠ and ・), Bopomofo and Hangul (syllables and jamo); between two of
 *    them, any stretch of white space, punctuation, symbols and format
 *    characters (is_gap) does not end the run: the bigram spans it and is
 *    hashed over the two characters alone. So 「数据库」、 数据 库 and a
 *    line break inside a word cost nothing. NUL, U+FFFD, other controls
 *    and any letter or digit of another script still end a run; Thai,
 *    Lao, Myanmar and Khmer keep version 1's runs. A token's hash is
 *    XXH3-64 (seed ND_FEATURE_SEED) of its normalised UTF-8 bytes.
 * 3b. Folding (ND_FP_FOLD_CHINESE, version 2): the normalised text (and
 *    each stop word) goes through OpenCC's Traditional to Simplified
 *    conversion (fp_fold_zh.c) before tokens are formed.
 * 4. Stop words (optional): tokens whose hash equals the hash of a
 *    normalised stop word are dropped before features are formed.
 * 5. Features, each occurrence adding its weight (so weights are term
 *    frequencies):
 *      words        each token, weight w;
 *      shingles:n   each window of n consecutive tokens, hashed as XXH3-64
 *                   (seed ND_FEATURE_SEED) of the n token hashes written as
 *                   little-endian 64-bit words; a text with fewer than n
 *                   tokens (but at least one) uses its tokens as words;
 *      chars:n      each window of n consecutive code points of the
 *                   normalised text in which every run of non-token
 *                   characters became one space, hashed as its UTF-8
 *                   bytes; a shorter (non-empty) text is one feature.
 *    w = 1 for text; for HTML (fp_html.c) the body's features weigh 1 and
 *    the title's (formed separately) weigh title_weight (default 2).
 * 6. Fingerprint: the simhash of the features (fp_simhash.c); bit i is 1
 *    where the weighted vote of bit i of the feature hashes is positive. A
 *    text without features has fingerprint 0.
 *
 * Callers: the public API (nd_features, nd_fingerprint, ...); it calls
 * fp_options.c (fp_resolve), fp_html.c (visible text) and fp_simhash.c.
 */
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "fp_internal.h"
#include "nd_error.h"
#include "sort.h"

/* ---- growable byte buffer -------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static int buf_reserve(buf *b, size_t extra)
{
    if (b->n + extra <= b->cap) return ND_OK;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->n + extra) cap *= 2;
    char *p = realloc(b->p, cap);
    ND_RETURN_IF(!p, ND_ENOMEM, "fingerprint: out of memory (%zu bytes)", cap);
    b->p = p;
    b->cap = cap;
    return ND_OK;
}

/* ---- 1 + 2: sanitise and normalise ------------------------------------ */

/* Length of the valid UTF-8 sequence at s, or 0 if invalid. */
static size_t valid_seq(const unsigned char *s, size_t n)
{
    utf8proc_int32_t cp;
    utf8proc_ssize_t l = utf8proc_iterate(s, (utf8proc_ssize_t)(n < 4 ? n : 4), &cp);
    return l > 0 ? (size_t)l : 0;
}

/* Append NFKC+casefold of a non-ASCII stretch, invalid bytes -> U+FFFD. */
static int normalise_slow(buf *out, const unsigned char *s, size_t n)
{
    buf clean = {0};
    int rc = buf_reserve(&clean, n + 16);
    for (size_t i = 0; rc == ND_OK && i < n;) {
        size_t l = valid_seq(s + i, n - i);
        if (l == 0) {
            rc = buf_reserve(&clean, 3);
            if (rc == ND_OK) {
                memcpy(clean.p + clean.n, "\xEF\xBF\xBD", 3);
                clean.n += 3;
            }
            i++;
        } else {
            rc = buf_reserve(&clean, l);
            if (rc == ND_OK) {
                memcpy(clean.p + clean.n, s + i, l);
                clean.n += l;
            }
            i += l;
        }
    }
    if (rc == ND_OK && clean.n) {
        utf8proc_uint8_t *mapped = NULL;
        utf8proc_ssize_t ml = utf8proc_map((const utf8proc_uint8_t *)clean.p,
                                           (utf8proc_ssize_t)clean.n, &mapped,
                                           UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE |
                                               UTF8PROC_CASEFOLD);
        if (ml < 0) {
            rc = nd_err_set(ml == UTF8PROC_ERROR_NOMEM ? ND_ENOMEM : ND_EINTERNAL,
                            "fingerprint: normalisation failed: %s", utf8proc_errmsg(ml));
        } else {
            rc = buf_reserve(out, (size_t)ml);
            if (rc == ND_OK) {
                memcpy(out->p + out->n, mapped, (size_t)ml);
                out->n += (size_t)ml;
            }
        }
        free(mapped);
    }
    free(clean.p);
    return rc;
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

#define ONES 0x0101010101010101ull
#define HIGH (ONES * 0x80)

/* Lower-case A-Z in eight ASCII bytes at once. Every byte is below 0x80,
 * so the additions never carry from one byte into the next: the high bit
 * of byte + (0x80 - 'A') says byte >= 'A', that of byte + (0x80 - 'Z' - 1)
 * says byte > 'Z'; 0x80 >> 2 is the 0x20 that turns A-Z into a-z. */
static inline uint64_t ascii_lower8(uint64_t w)
{
    uint64_t ge_a = w + ONES * (0x80 - 'A');
    uint64_t gt_z = w + ONES * (0x80 - 'Z' - 1);
    return w | ((ge_a & ~gt_z & HIGH) >> 2);
}

static int normalise(buf *out, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    ND_FORWARD(buf_reserve(out, len + 1));
    size_t i = 0;
    while (i < len) {
        /* Fast path: ASCII characters followed by ASCII (or the end),
         * eight at a time while the next nine bytes are ASCII. */
        for (;;) {
            while (i + 9 <= len && !((load64(s + i) | load64(s + i + 1)) & HIGH)) {
                uint64_t w = ascii_lower8(load64(s + i));
                memcpy(out->p + out->n, &w, 8);
                out->n += 8;
                i += 8;
            }
            if (i < len && s[i] < 0x80 && (i + 1 == len || s[i + 1] < 0x80)) {
                unsigned char c = s[i++];
                out->p[out->n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
                continue;
            }
            break;
        }
        if (i == len) break;
        /* Slow stretch: [ASCII char before non-ASCII] + non-ASCII bytes. */
        size_t start = i;
        if (s[i] < 0x80) i++;
        while (i < len && s[i] >= 0x80) i++;
        ND_FORWARD(normalise_slow(out, s + start, i - start));
        ND_FORWARD(buf_reserve(out, len - i + 1));
    }
    return ND_OK;
}

/* ---- 3: tokens -------------------------------------------------------- */

/* Character classes. CL_CJK (version 2 only): Han, kana, Hangul and
 * Bopomofo, whose runs span gaps; CL_SPACELESS: the other scripts written
 * without spaces (in version 1, CJK too). */
enum { CL_SEP = 0, CL_WORD = 1, CL_SPACELESS = 2, CL_CJK = 3 };

/* Tokenizer modes: what fp_text_features passes as `cjk`. */
enum { TK_NO_BIGRAMS = 0, TK_V1 = 1, TK_V2 = 2 };

/* Version 1's spaceless scripts (frozen: Han, kana with U+30A0 and U+30FB,
 * Thai, Lao, Myanmar, Khmer). */
static int is_spaceless(int32_t c)
{
    return (c >= 0x2E80 && c <= 0x2FDF) || (c >= 0x3040 && c <= 0x30FF) ||
           (c >= 0x31F0 && c <= 0x31FF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0x20000 && c <= 0x3134F) || (c >= 0x0E00 && c <= 0x0EFF) ||
           (c >= 0x1000 && c <= 0x109F) || (c >= 0x1780 && c <= 0x17FF);
}

/* Version 2's run characters of normalised text: CL_CJK for Han (with the
 * ideographic marks 々 〆 〇 〻 and the Hangzhou numerals), Hiragana and
 * Katakana (but not the punctuation ゠ U+30A0 and ・ U+30FB), Hangul
 * syllables and jamo, Bopomofo; CL_SPACELESS for Thai, Lao, Myanmar,
 * Khmer; 0 otherwise. */
static int run_class(int32_t c)
{
    if (c < 0x0E00) return 0;
    if (c < 0x3000) {
        if ((c >= 0x0E00 && c <= 0x0EFF) || (c >= 0x1000 && c <= 0x109F) ||
            (c >= 0x1780 && c <= 0x17FF))
            return CL_SPACELESS;
        if ((c >= 0x1100 && c <= 0x11FF) || (c >= 0x2E80 && c <= 0x2FDF)) return CL_CJK;
        return 0;
    }
    if (c < 0x3100) {
        if ((c >= 0x3005 && c <= 0x3007) || (c >= 0x3021 && c <= 0x3029) ||
            (c >= 0x3031 && c <= 0x3035) || c == 0x303B || c == 0x303C ||
            (c >= 0x3040 && c <= 0x309F) || (c >= 0x30A1 && c <= 0x30FF && c != 0x30FB))
            return CL_CJK;
        return 0;
    }
    if ((c <= 0x31BF) || (c >= 0x31F0 && c <= 0x31FF) || (c >= 0x3400 && c <= 0x4DBF) ||
        (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA960 && c <= 0xA97F) ||
        (c >= 0xAC00 && c <= 0xD7FF) || (c >= 0xF900 && c <= 0xFAFF) ||
        (c >= 0x1B000 && c <= 0x1B16F) || (c >= 0x20000 && c <= 0x323AF))
        return CL_CJK;
    return 0;
}

static int classify(int32_t c, int mode)
{
    if (mode == TK_V1 && is_spaceless(c)) return CL_SPACELESS;
    if (mode == TK_V2) {
        int k = run_class(c);
        if (k) return k;
    }
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return CL_WORD;
    default:
        return CL_SEP;
    }
}

/* Version 2: may c stand between two CJK characters of one run? What a
 * reader skips: white space (Z*, tab, line feed, vertical tab, form feed,
 * carriage return, U+0085), punctuation (P*), symbols (S*) and invisible
 * format characters (Cf, such as U+200B). Not NUL, other controls, U+FFFD
 * (the mark of invalid input), private-use or unassigned code points:
 * those end a run. */
static int is_gap(int32_t c)
{
    if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x20 && c <= 0x2F) ||
                         (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
                         (c >= 0x7B && c <= 0x7E);
    if (c == 0x85) return 1;
    if (c == 0xFFFD) return 0;
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC:
    case UTF8PROC_CATEGORY_SK: case UTF8PROC_CATEGORY_SO: case UTF8PROC_CATEGORY_CF:
        return 1;
    default:
        return 0;
    }
}

/* Byte classes of normalised text: ASCII separators (and NUL, the
 * sentinel after the text) 0, ASCII letters and digits 1, bytes of
 * non-ASCII characters 2 (decode and classify). */
enum { BC_SEP = 0, BC_WORD = 1, BC_HIGH = 2 };
#define BC8 BC_HIGH, BC_HIGH, BC_HIGH, BC_HIGH, BC_HIGH, BC_HIGH, BC_HIGH, BC_HIGH
#define BC64 BC8, BC8, BC8, BC8, BC8, BC8, BC8, BC8
static const unsigned char byte_class[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
    ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
    ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1,
    /* Upper case never occurs after normalisation, but keep it a letter. */
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
    ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
    ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1,
    [0x80] = BC64, BC64,
};

/* Bit 7 of each byte of the result is set where that byte of w is not an
 * ASCII letter or digit (every byte >= 0x80 included). Works on the low
 * seven bits, so the additions never carry across bytes; x | 0x20 maps
 * exactly A-Z and a-z into a-z. */
static inline uint64_t nonword8(uint64_t w)
{
    uint64_t x = w & ~HIGH;
    uint64_t l = x | (ONES * 0x20);
    uint64_t letter = (l + ONES * (0x80 - 'a')) & ~(l + ONES * (0x80 - 'z' - 1));
    uint64_t digit = (x + ONES * (0x80 - '0')) & ~(x + ONES * (0x80 - '9' - 1));
    return (~(letter | digit) | w) & HIGH;
}

/* Index, in memory order, of the first byte flagged in m (m != 0). */
static inline size_t first_flagged(uint64_t m)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (size_t)__builtin_clzll(m) >> 3;
#else
    return (size_t)__builtin_ctzll(m) >> 3;
#endif
}

/* Decode the code point at s (normalised text is valid UTF-8). */
static size_t next_cp(const unsigned char *s, size_t n, int32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    utf8proc_ssize_t l = utf8proc_iterate(s, (utf8proc_ssize_t)(n < 4 ? n : 4), cp);
    if (l <= 0) {
        *cp = 0xFFFD;
        return 1;
    }
    return (size_t)l;
}

typedef void (*token_fn)(uint64_t hash, const char *bytes, size_t len, void *ctx);

/* The tokens of the run of spaceless-script characters whose first
 * character (of class cl) is t[i, i + l): its overlapping character
 * bigrams, or the character alone in a run of one. Characters next to each
 * other always pair. In version 2 a CJK character also pairs with the next
 * CJK character across a gap of characters a reader skips (is_gap); that
 * bigram is hashed over the two characters' bytes, without the gap.
 * Returns the index where tokenizing goes on. */
static size_t spaceless_run(const char *t, size_t n, size_t i, size_t l, int cl, int mode,
                            token_fn fn, void *ctx)
{
    const unsigned char *s = (const unsigned char *)t;
    size_t prev = i, prev_len = l, run = 1;
    int32_t cp;
    i += l;
    for (;;) {
        int ncl = CL_SEP;
        if (i < n && s[i] >= 0x80) {
            l = next_cp(s + i, n - i, &cp);
            ncl = classify(cp, mode);
            if (ncl == CL_SPACELESS || ncl == CL_CJK) {
                fn(nd_feature_hash(t + prev, i + l - prev), t + prev, i + l - prev, ctx);
                prev = i;
                prev_len = l;
                cl = ncl;
                i += l;
                run++;
                continue;
            }
        }
        if (mode != TK_V2 || cl != CL_CJK) break;
        /* Skip a gap; a CJK character after it goes on with the run. */
        size_t j = i;
        while (j < n) {
            l = next_cp(s + j, n - j, &cp);
            if (!is_gap(cp)) break;
            j += l;
        }
        if (j == i || j >= n || s[j] < 0x80) {
            i = j;
            break;
        }
        l = next_cp(s + j, n - j, &cp);
        if (classify(cp, mode) != CL_CJK) {
            i = j;
            break;
        }
        char pair[8];
        memcpy(pair, t + prev, prev_len);
        memcpy(pair + prev_len, t + j, l);
        fn(nd_feature_hash(pair, prev_len + l), pair, prev_len + l, ctx);
        prev = j;
        prev_len = l;
        i = j + l;
        run++;
    }
    if (run == 1) fn(nd_feature_hash(t + prev, prev_len), t + prev, prev_len, ctx);
    return i;
}

/* Call fn for each token of normalised text t. t[n..n+7] must be NUL (a
 * separator): ASCII stretches are scanned eight bytes at a time, and a scan
 * over word bytes stops at t[n] without a bounds check. */
static void tokenize(const char *t, size_t n, int mode, token_fn fn, void *ctx)
{
    const unsigned char *s = (const unsigned char *)t;
    size_t i = 0;
    while (i < n) {
        /* Skip ASCII separators up to a word byte or a non-ASCII byte. */
        uint64_t w = load64(s + i);
        uint64_t stop = (~nonword8(w) | w) & HIGH;
        if (!stop) {
            i += 8;
            continue;
        }
        i += first_flagged(stop);
        if (i >= n) break;
        size_t start = i, l;
        int32_t cp;
        if (byte_class[s[i]] == BC_WORD) {
            /* ASCII words: the common case, without decoding. */
            uint64_t m;
            i++;
            while (!(m = nonword8(load64(s + i)))) i += 8;
            i += first_flagged(m);
            if (byte_class[s[i]] == BC_SEP) {
                fn(nd_feature_hash(t + start, i - start), t + start, i - start, ctx);
                continue;
            }
            /* A non-ASCII character follows: the general loop decides. */
        } else {
            l = next_cp(s + i, n - i, &cp);
            int cl = classify(cp, mode);
            if (cl == CL_SEP) {
                i += l;
                continue;
            }
            if (cl == CL_SPACELESS || cl == CL_CJK) {
                i = spaceless_run(t, n, i, l, cl, mode, fn, ctx);
                continue;
            }
            i += l;
        }
        /* The rest of a word that has (or is followed by) non-ASCII. */
        while (i < n) {
            unsigned char bc = byte_class[s[i]];
            if (bc == BC_WORD) {
                i++;
                continue;
            }
            if (bc == BC_SEP) break;
            l = next_cp(s + i, n - i, &cp);
            if (classify(cp, mode) != CL_WORD) break;
            i += l;
        }
        fn(nd_feature_hash(t + start, i - start), t + start, i - start, ctx);
    }
}

/* ---- 4 + 5: features -------------------------------------------------- */

typedef struct feat_ctx {
    const fp_resolved *o;
    int32_t weight;
    nd_feature_cb cb;
    void *payload;
    const uint64_t *stop; /* sorted stop-word hashes */
    size_t nstop;
    uint64_t ring[16];    /* last n token hashes */
    size_t ntok;          /* tokens seen */
    buf chars;            /* chars:n: the space-collapsed text */
} feat_ctx;

static int is_stop(const feat_ctx *f, uint64_t h)
{
    size_t lo = 0, hi = f->nstop;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->stop[mid] < h) lo = mid + 1;
        else hi = mid;
    }
    return lo < f->nstop && f->stop[lo] == h;
}

/* Write h as 8 little-endian bytes (one store on little-endian hosts). */
static inline void store_le64(unsigned char *p, uint64_t h)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &h, 8);
#else
    for (unsigned b = 0; b < 8; b++) p[b] = (unsigned char)(h >> (8 * b));
#endif
}

static uint64_t shingle_hash(const feat_ctx *f, size_t end)
{
    unsigned char bytes[16 * 8];
    unsigned n = f->o->n;
    for (unsigned j = 0; j < n; j++) store_le64(bytes + j * 8, f->ring[(end - n + j) % 16]);
    return nd_feature_hash(bytes, n * 8u);
}

static void on_token(uint64_t h, const char *bytes, size_t len, void *ctx)
{
    feat_ctx *f = ctx;
    (void)bytes;
    (void)len;
    if (f->nstop && is_stop(f, h)) return;
    if (f->o->features == ND_FEATURES_WORDS) {
        f->cb(h, f->weight, f->payload);
        return;
    }
    f->ring[f->ntok % 16] = h;
    f->ntok++;
    if (f->ntok >= f->o->n) f->cb(shingle_hash(f, f->ntok), f->weight, f->payload);
}

/* chars:n — rebuild the text as tokens separated by single spaces. */
static void on_token_chars(uint64_t h, const char *bytes, size_t len, void *ctx)
{
    feat_ctx *f = ctx;
    if (f->nstop && is_stop(f, h)) return;
    if (buf_reserve(&f->chars, len + 1) < 0) return; /* reported by the caller */
    if (f->chars.n) f->chars.p[f->chars.n++] = ' ';
    memcpy(f->chars.p + f->chars.n, bytes, len);
    f->chars.n += len;
}

static void emit_char_grams(feat_ctx *f)
{
    const unsigned char *s = (const unsigned char *)f->chars.p;
    size_t n = f->chars.n, cps = 0;
    size_t starts[17];
    unsigned gram = f->o->n;
    if (n == 0) return;
    /* Sliding window over code point boundaries. */
    for (size_t i = 0; i < n;) {
        starts[cps % 17] = i;
        int32_t cp;
        i += next_cp(s + i, n - i, &cp);
        cps++;
        if (cps >= gram) {
            size_t from = starts[(cps - gram) % 17];
            f->cb(nd_feature_hash(s + from, i - from), f->weight, f->payload);
        }
    }
    if (cps < gram) f->cb(nd_feature_hash(s, n), f->weight, f->payload);
}

/* A text shorter than one shingle: its tokens become word features. */
static void replay_words(uint64_t h, const char *bytes, size_t len, void *ctx)
{
    feat_ctx *f = ctx;
    (void)bytes;
    (void)len;
    if (f->nstop && is_stop(f, h)) return;
    f->cb(h, f->weight, f->payload);
}

/* Normalised stop-word hashes, sorted. */
static int stop_hashes(const fp_resolved *o, uint64_t **out)
{
    *out = NULL;
    if (!o->n_stopwords) return ND_OK;
    uint64_t *h = malloc(o->n_stopwords * sizeof *h);
    ND_RETURN_IF(!h, ND_ENOMEM, "fingerprint: out of memory");
    for (size_t i = 0; i < o->n_stopwords; i++) {
        buf nb = {0};
        int rc = normalise(&nb, o->stopwords[i], strlen(o->stopwords[i]));
        if (rc < 0) {
            free(nb.p);
            free(h);
            return rc;
        }
        if (rc == ND_OK && (o->flags & ND_FP_FOLD_CHINESE)) {
            char *f;
            size_t fl;
            rc = fp_fold_chinese(&f, &fl, nb.p, nb.n);
            if (rc == ND_OK && f) {
                free(nb.p);
                nb.p = f;
                nb.n = nb.cap = fl;
            }
        }
        if (rc < 0) {
            free(nb.p);
            free(h);
            return rc;
        }
        h[i] = nd_feature_hash(nb.p, nb.n);
        free(nb.p);
    }
    qsort(h, o->n_stopwords, sizeof *h, sort_cmp_u64);
    *out = h;
    return ND_OK;
}

/* Features of one text (body or title) with a weight. */
int fp_text_features(const fp_resolved *o, const char *text, size_t len, int32_t weight,
                     nd_feature_cb cb, void *payload)
{
    buf norm = {0};
    uint64_t *stop = NULL;
    int rc;
    int cjk = (o->flags & ND_FP_NO_CJK_BIGRAMS) ? TK_NO_BIGRAMS
              : o->version == 1                  ? TK_V1
                                                 : TK_V2;
    feat_ctx f = {.o = o, .weight = weight, .cb = cb, .payload = payload};
    ND_TRY(stop_hashes(o, &stop));
    f.stop = stop;
    f.nstop = o->n_stopwords;
    ND_TRY(normalise(&norm, text, len));
    if (o->flags & ND_FP_FOLD_CHINESE) {
        char *folded;
        size_t fl;
        ND_TRY(fp_fold_chinese(&folded, &fl, norm.p, norm.n));
        if (folded) {
            free(norm.p);
            norm.p = folded;
            norm.n = norm.cap = fl;
        }
    }
    ND_TRY(buf_reserve(&norm, 8));
    memset(norm.p + norm.n, 0, 8); /* tokenize's sentinel */
    if (o->features == ND_FEATURES_CHARS) {
        tokenize(norm.p, norm.n, cjk, on_token_chars, &f);
        if (f.chars.n && !f.chars.p) ND_FAIL(ND_ENOMEM, "fingerprint: out of memory");
        emit_char_grams(&f);
    } else {
        tokenize(norm.p, norm.n, cjk, on_token, &f);
        if (o->features == ND_FEATURES_SHINGLES && f.ntok > 0 && f.ntok < o->n)
            tokenize(norm.p, norm.n, cjk, replay_words, &f);
    }
    rc = ND_OK;
cleanup:
    free(norm.p);
    free(f.chars.p);
    free(stop);
    return rc;
}

/* Features of an HTML document: its visible text (fp_html.c), the body
 * with weight 1, the title with title_weight. */
static int fp_html_features(const fp_resolved *o, const char *html, size_t len,
                            nd_feature_cb cb, void *payload)
{
    nd_html_text t;
    ND_FORWARD(nd_html_extract(&t, html, len));
    int rc = fp_text_features(o, t.body, t.body_len, 1, cb, payload);
    if (rc == ND_OK && t.title_len)
        rc = fp_text_features(o, t.title, t.title_len, (int32_t)o->title_weight, cb, payload);
    nd_html_text_dispose(&t);
    return rc;
}

/* ---- public entry points ---------------------------------------------- */

static void acc_cb(uint64_t h, int32_t w, void *payload) { nd_simhash_add_hash(payload, h, w); }

int nd_features(const char *text, size_t len, const nd_fp_options *opts, nd_feature_cb cb,
                void *payload)
{
    fp_resolved o;
    ND_RETURN_IF(!cb, ND_EINVAL, "nd_features: NULL callback");
    ND_RETURN_IF(!text && len, ND_EINVAL, "nd_features: NULL text of length %zu", len);
    ND_RETURN_IF(len > ND_MAX_DOC_BYTES, ND_ELIMIT, "document of %zu bytes (limit %u)", len,
                 ND_MAX_DOC_BYTES);
    ND_FORWARD(fp_resolve(&o, opts));
    if (o.flags & ND_FP_HTML) return fp_html_features(&o, text, len, cb, payload);
    return fp_text_features(&o, text ? text : "", len, 1, cb, payload);
}

int nd_fingerprint(uint64_t *out, const char *text, size_t len, const nd_fp_options *opts)
{
    nd_simhash acc;
    ND_RETURN_IF(!out, ND_EINVAL, "nd_fingerprint: NULL output");
    nd_simhash_init(&acc);
    ND_FORWARD(nd_features(text, len, opts, acc_cb, &acc));
    *out = nd_simhash_final(&acc);
    return ND_OK;
}
