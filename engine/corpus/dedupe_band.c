/*
 * dedupe_band.c — min-hash banding (see dedupe_band.h).
 *
 * For each band the documents are sorted by (hash of the band's bins,
 * position) packed in one word; every pair inside a run of equal hashes is
 * checked against the bins themselves (the hash keeps only the top bits).
 * A pair is new in a band unless its sketches agree in an earlier one, so
 * each is reported once. Only runs of two or more documents read their
 * records back from the source, so a pass over sketches on disk reads each
 * one once in order plus the few that collide.
 */
#include "dedupe_band.h"

#include <stdlib.h>
#include <string.h>

#include "nd_error.h"

enum { CHUNK = 4096 }; /* records read at once in the hashing pass */

static unsigned bin_at(const nd_sketch *s, unsigned i)
{
    return (s->bin[i / 2] >> (4 * (i & 1))) & 0xfu;
}

/* Band `band`'s key: the sketch's own band key (width 0), or the band's
 * 4-bit bins packed (width bins, at most 16). */
static uint64_t band_value(const nd_sketch *s, unsigned band, unsigned width)
{
    if (width == 0) return s->band[band];
    uint64_t v = 0;
    for (unsigned i = 0; i < width; i++) v = v << 4 | bin_at(s, band * width + i);
    return v;
}

static int band_equal(const nd_sketch *a, const nd_sketch *b, unsigned band, unsigned width)
{
    return band_value(a, band, width) == band_value(b, band, width);
}

/* Band values are already hashes (width 0) or uniform bins; mixing spreads
 * them over the word's top bits, which the sort keys on. */
static uint64_t mix_band(uint64_t v)
{
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
    return v ^ (v >> 31);
}

/* LSD radix sort of n 64-bit values, 8 passes of 8 bits. */
static void radix_sort(uint64_t *a, uint64_t *tmp, size_t n)
{
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[((a[i] >> shift) & 0xff) + 1]++;
        for (unsigned b = 0; b < 256; b++) count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) tmp[count[(a[i] >> shift) & 0xff]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

unsigned dedupe_band_count(unsigned width)
{
    return width == 0 ? ND_SKETCH_BANDS : ND_SKETCH_BINS / width;
}

int dedupe_band_scan(size_t m, const uint32_t *ids, const uint64_t *fp, const dedupe_band_src *src,
                     unsigned width, unsigned join_k, unsigned k, dedupe_cand_fn cb, void *payload)
{
#define DOC(x) (ids ? ids[x] : (uint32_t)(x))
    unsigned ibits = 1, bands = dedupe_band_count(width);
    while (ibits < 64 && ((uint64_t)1 << ibits) < m) ibits++;
    uint64_t imask = ((uint64_t)1 << ibits) - 1;
    uint64_t *a = malloc((m ? m : 1) * sizeof *a), *tmp = malloc((m ? m : 1) * sizeof *tmp);
    dedupe_rec *rec = NULL; /* a chunk of the pass, then a run */
    uint32_t *docs = NULL;
    size_t rcap = 0, dcap = 0;
    int stop = ND_OK;
    if (!a || !tmp || grow((void **)&rec, &rcap, CHUNK, sizeof *rec) ||
        grow((void **)&docs, &dcap, CHUNK, sizeof *docs)) {
        stop = nd_err_set(ND_ENOMEM, "dedupe: out of memory in the band join");
        goto done;
    }
    for (unsigned band = 0; band < bands && !stop; band++) {
        for (size_t s = 0; s < m; s += CHUNK) {
            size_t n = m - s < CHUNK ? m - s : CHUNK;
            for (size_t x = 0; x < n; x++) docs[x] = DOC(s + x);
            if ((stop = src->read(rec, docs, n, 1, src->payload)) < 0) goto done;
            for (size_t x = 0; x < n; x++) {
                /* Without a sketch: a hash of its own, so that such
                 * documents do not form one long run of zero sketches. */
                uint64_t h = rec[x].size == DEDUPE_NO_SKETCH
                                 ? nd_feature_hash(&docs[x], sizeof docs[x])
                                 : mix_band(band_value(&rec[x].sk, band, width));
                a[s + x] = (h & ~imask) | (s + x);
            }
        }
        radix_sort(a, tmp, m);
        for (size_t s = 0; s < m && !stop;) {
            size_t e = s + 1;
            while (e < m && (a[e] & ~imask) == (a[s] & ~imask)) e++;
            if (e - s > 1) { /* positions increase inside a run: so do documents */
                if (grow((void **)&rec, &rcap, e - s, sizeof *rec) ||
                    grow((void **)&docs, &dcap, e - s, sizeof *docs)) {
                    stop = nd_err_set(ND_ENOMEM, "dedupe: out of memory in the band join");
                    goto done;
                }
                for (size_t u = s; u < e; u++) docs[u - s] = DOC(a[u] & imask);
                if ((stop = src->read(rec, docs, e - s, 0, src->payload)) < 0) goto done;
            }
            for (size_t u = s; u < e && !stop; u++) {
                size_t x = a[u] & imask;
                const dedupe_rec *ri = &rec[u - s];
                for (size_t v = u + 1; v < e && !stop; v++) {
                    size_t y = a[v] & imask; /* x < y: sorted in a run */
                    const dedupe_rec *rj = &rec[v - s];
                    if (ri->size == DEDUPE_NO_SKETCH || rj->size == DEDUPE_NO_SKETCH ||
                        !band_equal(&ri->sk, &rj->sk, band, width))
                        continue;
                    unsigned earlier = 0;
                    while (earlier < band && !band_equal(&ri->sk, &rj->sk, earlier, width)) earlier++;
                    if (earlier < band) continue;
                    unsigned dist = nd_hamming(fp[DOC(x)], fp[DOC(y)]);
                    if (dist <= join_k || dist > k) continue;
                    stop = cb(x, y, dist, ri, rj, payload);
                }
            }
            s = e;
        }
    }
done:
    free(a);
    free(tmp);
    free(rec);
    free(docs);
    return stop;
#undef DOC
}
