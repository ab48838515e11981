/*
 * brs_gen.c — synthetic texts with planted edited copies for
 * bench_resemble (brs_gen.h).
 *
 * Vocabulary: BRS_VOCAB random lowercase words, rank r drawn with
 * probability proportional to 1 / (r + 1) (Zipf, s = 1) through Walker's
 * alias table (O(1) a word); frequent words are short (2-4 letters), rare
 * ones up to 13. Text i: a generator seeded by (seed, i) decides whether
 * it is a planted copy (copy_permille of texts past the first): then it
 * names a source j < i uniformly and an edit rate e, and its words are
 * j's words with each position edited with probability e (a third each:
 * the word replaced by a fresh draw, a fresh word inserted before it, the
 * word deleted). Otherwise its length is log-uniform in [30, 2000] words
 * (median about 245, mean about 470) and its words are fresh draws. A
 * copy of a copy is rebuilt by walking its chain back to the original.
 * Rendering: words separated by spaces, a sentence ends (". ") after a
 * word with probability 1/14, a paragraph ("\n\n") after one sentence in
 * six; the punctuation does not change the tokens.
 */
#include "brs_gen.h"
#include "bench_alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct rng { uint64_t s; } rng;

static uint64_t rng_next(rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return mix64(r->s);
}

static double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

static rng rng_for(uint64_t seed, uint64_t i, uint64_t stream)
{
    rng r = {mix64(seed * 0x9e3779b97f4a7c15ull ^ mix64(i + 1) ^ (stream << 56))};
    return r;
}

void brs_gen_init(brs_gen *g, uint64_t seed)
{
    g->seed = seed;
    if (!g->copy_permille && !g->max_edit) {
        g->copy_permille = 100;
        g->min_edit = 0.01;
        g->max_edit = 0.10;
    }
    g->words = bench_xmalloc((size_t)BRS_VOCAB * 14);
    g->word_off = bench_xmalloc(BRS_VOCAB * sizeof *g->word_off);
    g->word_len = bench_xmalloc(BRS_VOCAB);
    rng r = rng_for(seed, UINT64_MAX, 1);
    size_t off = 0;
    for (uint32_t w = 0; w < BRS_VOCAB; w++) {
        unsigned len = 2 + (unsigned)(0.6 * log2((double)w + 2)) + (unsigned)(rng_next(&r) % 3);
        if (len > 13) len = 13;
        g->word_off[w] = (uint32_t)off;
        g->word_len[w] = (uint8_t)len;
        for (unsigned c = 0; c < len; c++) g->words[off++] = (char)('a' + rng_next(&r) % 26);
        g->words[off++] = 0;
    }
    /* Walker's alias table (Vose's construction) of p(w) ~ 1 / (w + 1). */
    double *p = bench_xmalloc(BRS_VOCAB * sizeof *p), sum = 0;
    for (uint32_t w = 0; w < BRS_VOCAB; w++) sum += 1.0 / (w + 1);
    uint32_t *small = bench_xmalloc(BRS_VOCAB * sizeof *small), *large = bench_xmalloc(BRS_VOCAB * sizeof *large);
    size_t ns = 0, nl = 0;
    for (uint32_t w = 0; w < BRS_VOCAB; w++) {
        p[w] = BRS_VOCAB / (sum * (w + 1));
        if (p[w] < 1) small[ns++] = w; else large[nl++] = w;
    }
    g->alias_p = bench_xmalloc(BRS_VOCAB * sizeof *g->alias_p);
    g->alias_i = bench_xmalloc(BRS_VOCAB * sizeof *g->alias_i);
    while (ns && nl) {
        uint32_t s = small[--ns], l = large[nl - 1];
        g->alias_p[s] = p[s];
        g->alias_i[s] = l;
        p[l] -= 1 - p[s];
        if (p[l] < 1) { nl--; small[ns++] = l; }
    }
    while (nl) { uint32_t l = large[--nl]; g->alias_p[l] = 1; g->alias_i[l] = l; }
    while (ns) { uint32_t s = small[--ns]; g->alias_p[s] = 1; g->alias_i[s] = s; }
    free(p);
    free(small);
    free(large);
    g->scratch_cap = 4 * (size_t)BRS_MAX_WORDS;
    g->scratch[0] = bench_xmalloc(g->scratch_cap * sizeof(uint32_t));
    g->scratch[1] = bench_xmalloc(g->scratch_cap * sizeof(uint32_t));
}

void brs_gen_dispose(brs_gen *g)
{
    free(g->words);
    free(g->word_off);
    free(g->word_len);
    free(g->alias_p);
    free(g->alias_i);
    free(g->scratch[0]);
    free(g->scratch[1]);
    memset(g, 0, sizeof *g);
}

static uint32_t draw_word(const brs_gen *g, rng *r)
{
    uint64_t x = rng_next(r);
    uint32_t w = (uint32_t)((x >> 32) % BRS_VOCAB);
    double u = (double)(x & 0xffffffffu) * 0x1.0p-32;
    return u < g->alias_p[w] ? w : g->alias_i[w];
}

/* The first draws of text i's generator: copy or not, source, edit rate. */
static void head_of(const brs_gen *g, uint64_t i, brs_info *info, rng *r)
{
    *r = rng_for(g->seed, i, 0);
    memset(info, 0, sizeof *info);
    info->is_copy = i > 0 && rng_next(r) % 1000 < g->copy_permille;
    if (info->is_copy) {
        info->source = rng_next(r) % i;
        info->edit = g->min_edit + (g->max_edit - g->min_edit) * rng_unit(r);
    }
}

void brs_info_of(const brs_gen *g, uint64_t i, brs_info *info)
{
    rng r;
    head_of(g, i, info, &r);
    uint64_t root = i;
    brs_info up = *info;
    while (up.is_copy) {
        root = up.source;
        head_of(g, root, &up, &r);
    }
    info->root = root;
}

/* The words of text i into g->scratch[*which]; returns their count. */
static size_t words_of(brs_gen *g, uint64_t i, int *which)
{
    uint64_t chain[256];
    size_t depth = 0;
    brs_info info;
    rng r;
    uint64_t at = i;
    for (;;) {
        head_of(g, at, &info, &r);
        if (!info.is_copy || depth == 256) break;
        chain[depth++] = at;
        at = info.source;
    }
    /* The original at: fresh words. */
    double lo = log(BRS_MIN_WORDS), hi = log(BRS_MAX_WORDS + 1.0);
    size_t n = (size_t)exp(lo + (hi - lo) * rng_unit(&r));
    if (n > BRS_MAX_WORDS) n = BRS_MAX_WORDS;
    int cur = 0;
    uint32_t *w = g->scratch[cur];
    for (size_t k = 0; k < n; k++) w[k] = draw_word(g, &r);
    /* Each copy down the chain edits its source's words. */
    while (depth) {
        head_of(g, chain[--depth], &info, &r);
        const uint32_t *src = g->scratch[cur];
        uint32_t *dst = g->scratch[cur ^ 1];
        size_t m = 0, cap = g->scratch_cap;
        for (size_t k = 0; k < n && m < cap; k++) {
            if (rng_unit(&r) >= info.edit) { dst[m++] = src[k]; continue; }
            switch (rng_next(&r) % 3) {
            case 0: dst[m++] = draw_word(g, &r); break;            /* substitute */
            case 1: dst[m++] = draw_word(g, &r);                   /* insert */
                    if (m < cap) dst[m++] = src[k];
                    break;
            default: break;                                        /* delete */
            }
        }
        if (m == 0) dst[m++] = draw_word(g, &r);
        n = m;
        cur ^= 1;
    }
    *which = cur;
    return n;
}

size_t brs_text(brs_gen *g, uint64_t i, char *buf, brs_info *info)
{
    int which;
    size_t n = words_of(g, i, &which);
    if (n > BRS_MAX_TEXT / 16) n = BRS_MAX_TEXT / 16;
    const uint32_t *w = g->scratch[which];
    rng r = rng_for(g->seed, i, 2);
    char *p = buf;
    unsigned sentences = 0;
    for (size_t k = 0; k < n; k++) {
        memcpy(p, g->words + g->word_off[w[k]], g->word_len[w[k]]);
        p += g->word_len[w[k]];
        if (k + 1 == n) { *p++ = '.'; break; }
        uint64_t x = rng_next(&r);
        if (x % 14 == 0) {
            *p++ = '.';
            if (++sentences % 6 == 0) { *p++ = '\n'; *p++ = '\n'; }
            else *p++ = ' ';
        } else {
            *p++ = ' ';
        }
    }
    if (info) brs_info_of(g, i, info);
    return (size_t)(p - buf);
}
