/*
 * quality_sketch.c — sketch designs and band keys for bench/quality_sim
 * (see quality_sketch.h). Uses only <neardup.h>: nd_sketch for today's
 * design, nd_resemblance for the exact one, nd_feature_hash to hash band
 * rows.
 *
 * One-permutation hashing: feature hash h goes to bin h mod B and the bin
 * keeps the minimum of h / B. A bin no feature reached takes the value of
 * the next filled bin to its right (circularly), mixed with the distance,
 * as engine/text/resemble.c does: two documents then agree on an empty bin
 * about as often as on a filled one, and short texts still compare.
 */
#include "quality_sketch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <neardup.h>

#define MIX 0x9e3779b97f4a7c15ull

int qs_parse(qs_design *out, const char *spec)
{
    unsigned a = 0, b = 0;
    char tail;
    if (strcmp(spec, "lib") == 0) {
        *out = (qs_design){QS_LIB, ND_SKETCH_BINS, ND_SKETCH_BIN_BITS, QS_FILL_ROUNDS};
        return 0;
    }
    if (strcmp(spec, "exact") == 0) {
        *out = (qs_design){QS_EXACT, 0, 0, QS_FILL_ROTATE};
        return 0;
    }
    static const struct {
        const char *prefix;
        qs_fill fill;
    } oph[] = {{"ophs", QS_FILL_SPREAD}, {"oph", QS_FILL_ROTATE}, {"fss", QS_FILL_ROUNDS}};
    for (unsigned x = 0; x < sizeof oph / sizeof oph[0]; x++) {
        size_t l = strlen(oph[x].prefix);
        if (strncmp(spec, oph[x].prefix, l) != 0) continue;
        if (sscanf(spec + l, "%ux%u%c", &a, &b, &tail) == 2 && a >= 1 && a <= 4096 && b >= 1 && b <= 16) {
            *out = (qs_design){QS_OPH, a, b, oph[x].fill};
            return 0;
        }
    }
    if (sscanf(spec, "bottom%u%c", &a, &tail) == 1 && a >= 1 && a <= 65535) {
        *out = (qs_design){QS_BOTTOM, a, 32, QS_FILL_ROTATE};
        return 0;
    }
    return -1;
}

size_t qs_bytes(const qs_design *d)
{
    return ((size_t)d->size * d->bits + 7) / 8;
}

static uint64_t mix64(uint64_t x) /* splitmix64's finaliser */
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Spread densification (Shrivastava, ICML 2017, "optimal densification"):
 * empty bin i probes bins h(i, 1), h(i, 2), ... (the same sequence for
 * every document) and takes the first filled one's minimum. Two documents
 * then agree on bin i with probability J, and a differing feature spoils
 * bins scattered over the sketch, not a run of neighbours. */
static void densify_spread(uint64_t *out, unsigned bins)
{
    uint64_t *raw = malloc(bins * sizeof *raw);
    if (!raw) abort();
    memcpy(raw, out, bins * sizeof *raw);
    for (unsigned i = 0; i < bins; i++) {
        if (raw[i] != UINT64_MAX) continue;
        for (uint64_t t = 1;; t++) {
            unsigned j = (unsigned)(mix64((uint64_t)i << 32 | t) % bins);
            if (raw[j] != UINT64_MAX) {
                out[i] = raw[j];
                break;
            }
        }
    }
    free(raw);
}

/* Rounds (in the spirit of Dahlgaard, Knudsen and Thorup's fast similarity
 * sketching, FOCS 2017): round 0 is one-permutation hashing; while a bin
 * is empty, round r hashes every feature again, h_r(x) = mix(x ^ r), into
 * bin h_r mod B with value h_r / B, and an empty bin takes the round's
 * minimum. A bin's value is thus the minimum of (round, value) over the
 * features, whose argument is uniform over the union of two sets: two
 * documents agree on a bin with probability J, bins almost independent.
 * Cost: n features a round, about (B / n) ln B rounds for n < B, so
 * about B ln B hashes however short the text. */
static void fill_rounds(uint64_t *out, unsigned bins, const uint64_t *feat, size_t n)
{
    uint64_t *v = malloc(bins * sizeof *v);
    unsigned *round = malloc(bins * sizeof *round);
    if (!v || !round) abort();
    unsigned filled = 0;
    for (unsigned i = 0; i < bins; i++) {
        round[i] = UINT32_MAX;
        filled += out[i] != UINT64_MAX;
        if (out[i] != UINT64_MAX) {
            v[i] = out[i];
            round[i] = 0;
        }
    }
    for (unsigned r = 1; filled < bins; r++) {
        for (size_t f = 0; f < n; f++) {
            uint64_t h = mix64(feat[f] ^ ((uint64_t)r * MIX));
            unsigned bin = (unsigned)(h % bins);
            if (round[bin] < r) continue; /* filled in an earlier round */
            if (round[bin] == UINT32_MAX) {
                round[bin] = r;
                v[bin] = h / bins;
                filled++;
            } else if (h / bins < v[bin]) {
                v[bin] = h / bins;
            }
        }
    }
    for (unsigned i = 0; i < bins; i++) out[i] = round[i] ? mix64(v[i] ^ ((uint64_t)round[i] << 58)) : v[i];
    free(v);
    free(round);
}

/* Densified one-permutation minima of a set: out[0..bins), empty bins
 * filled by rotation (engine/text/resemble.c's), spread or rounds. An empty set
 * leaves every bin UINT64_MAX. */
static void oph_minima(uint64_t *out, unsigned bins, qs_fill fill, const uint64_t *feat, size_t n)
{
    for (unsigned i = 0; i < bins; i++) out[i] = UINT64_MAX;
    for (size_t f = 0; f < n; f++) {
        unsigned bin = (unsigned)(feat[f] % bins);
        uint64_t v = feat[f] / bins;
        if (v < out[bin]) out[bin] = v;
    }
    if (n == 0) return;
    if (fill == QS_FILL_SPREAD) {
        densify_spread(out, bins);
        return;
    }
    if (fill == QS_FILL_ROUNDS) {
        fill_rounds(out, bins, feat, n);
        return;
    }
    /* From a filled bin f0 leftwards round the circle: each empty bin
     * takes the source of its right neighbour, one step further away. */
    uint64_t *src = malloc(bins * sizeof *src);
    unsigned *dist = malloc(bins * sizeof *dist);
    if (!src || !dist) abort();
    unsigned f0 = 0;
    while (out[f0] == UINT64_MAX) f0++;
    src[f0] = out[f0];
    dist[f0] = 0;
    for (unsigned s = 1, last = f0; s < bins; s++) {
        unsigned k = (f0 + bins - s) % bins;
        if (out[k] != UINT64_MAX) {
            src[k] = out[k];
            dist[k] = 0;
        } else {
            src[k] = src[last];
            dist[k] = dist[last] + 1;
        }
        last = k;
    }
    for (unsigned k = 0; k < bins; k++) out[k] = src[k] ^ ((uint64_t)dist[k] * MIX);
    free(src);
    free(dist);
}

/* The library's nd_sketch: its 256 4-bit bins, one a uint16_t. */
static void lib_sketch(uint16_t *out, const uint64_t *feat, size_t n)
{
    nd_sketch sk;
    if (nd_sketch_of(&sk, feat, n) < 0) abort();
    for (unsigned i = 0; i < ND_SKETCH_BINS; i++) out[i] = (sk.bin[i / 2] >> (4 * (i & 1))) & 0xf;
}

int qs_build(qs_sketches *out, const qs_design *d, size_t n, uint64_t *const *feat,
             const size_t *nfeat)
{
    memset(out, 0, sizeof *out);
    out->d = *d;
    out->n = n;
    if (d->kind == QS_EXACT) {
        out->feat = feat;
        out->nfeat = nfeat;
        return 0;
    }
    if (d->kind == QS_BOTTOM) {
        out->vals = malloc((n ? n : 1) * d->size * sizeof *out->vals);
        out->len = malloc((n ? n : 1) * sizeof *out->len);
        if (!out->vals || !out->len) goto oom;
        for (size_t i = 0; i < n; i++) {
            uint32_t *v = out->vals + i * d->size;
            unsigned m = 0;
            /* feat is ascending: its first values are the smallest; cut
             * to 32 bits, equal neighbours become one. */
            for (size_t f = 0; f < nfeat[i] && m < d->size; f++) {
                uint32_t x = (uint32_t)(feat[i][f] >> 32);
                if (m == 0 || v[m - 1] != x) v[m++] = x;
            }
            out->len[i] = (uint16_t)m;
        }
        return 0;
    }
    out->bins = malloc((n ? n : 1) * d->size * sizeof *out->bins);
    uint64_t *mins = malloc(d->size * sizeof *mins);
    if (!out->bins || !mins) {
        free(mins);
        goto oom;
    }
    uint16_t mask = (uint16_t)((1u << d->bits) - 1);
    for (size_t i = 0; i < n; i++) {
        uint16_t *b = out->bins + i * d->size;
        if (d->kind == QS_LIB) {
            lib_sketch(b, feat[i], nfeat[i]);
            continue;
        }
        oph_minima(mins, d->size, d->fill, feat[i], nfeat[i]);
        for (unsigned k = 0; k < d->size; k++) b[k] = (uint16_t)(mins[k] & mask);
    }
    free(mins);
    return 0;
oom:
    qs_free(out);
    return -1;
}

static double bottom_estimate(const uint32_t *a, unsigned na, const uint32_t *b, unsigned nb,
                              unsigned k)
{
    unsigned i = 0, j = 0, seen = 0, both = 0;
    while (seen < k && (i < na || j < nb)) {
        if (j >= nb || (i < na && a[i] < b[j])) {
            i++;
        } else if (i >= na || b[j] < a[i]) {
            j++;
        } else {
            both++;
            i++;
            j++;
        }
        seen++;
    }
    return seen ? (double)both / seen : 1.0;
}

double qs_estimate(const qs_sketches *s, size_t a, size_t b)
{
    unsigned size = s->d.size;
    if (s->d.kind == QS_EXACT) return nd_resemblance(s->feat[a], s->nfeat[a], s->feat[b], s->nfeat[b]);
    if (s->d.kind == QS_BOTTOM)
        return bottom_estimate(s->vals + a * size, s->len[a], s->vals + b * size, s->len[b], size);
    const uint16_t *x = s->bins + a * size, *y = s->bins + b * size;
    unsigned eq = 0;
    for (unsigned k = 0; k < size; k++) eq += x[k] == y[k];
    double e = (double)eq / size;
    double chance = ldexp(1.0, -(int)s->d.bits);
    e = (e - chance) / (1.0 - chance);
    return e < 0 ? 0 : e;
}

void qs_free(qs_sketches *s)
{
    free(s->bins);
    free(s->vals);
    free(s->len);
    memset(s, 0, sizeof *s);
}

void qs_band_keys(uint64_t *out, unsigned bands, unsigned rows, unsigned bins, int interleaved,
                  qs_fill fill, const uint64_t *feat, size_t nfeat)
{
    if (bins < bands * rows) bins = bands * rows;
    uint64_t *mins = malloc(bins * sizeof *mins), row[64];
    if (!mins || rows > 64) abort();
    oph_minima(mins, bins, fill, feat, nfeat);
    for (unsigned b = 0; b < bands; b++) {
        for (unsigned r = 0; r < rows; r++) row[r] = mins[interleaved ? r * bands + b : b * rows + r];
        out[b] = nd_feature_hash(row, rows * sizeof *row) ^ ((uint64_t)(b + 1) * MIX);
    }
    free(mins);
}

double qs_band_catch(double j, unsigned bands, unsigned rows)
{
    return 1.0 - pow(1.0 - pow(j, rows), bands);
}
