/*
 * dedupe_band.c — min-hash banding (see dedupe_band.h).
 *
 * For each band the documents are sorted by (hash of the band's bins,
 * position) packed in one word; every pair inside a run of equal hashes is
 * checked. A pair is new in a band unless its sketches agree in an earlier
 * one, so each is reported once.
 */
#include "dedupe_band.h"

#include <stdlib.h>
#include <string.h>

static int band_equal(const nd_sketch *a, const nd_sketch *b, unsigned band)
{
    return memcmp(a->bin + band * DEDUPE_BAND_BINS, b->bin + band * DEDUPE_BAND_BINS,
                  DEDUPE_BAND_BINS * sizeof a->bin[0]) == 0;
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

int dedupe_band_join(size_t m, const uint32_t *ids, const uint64_t *fp, const nd_sketch *sk,
                     unsigned join_k, unsigned k, double min_res, dedupe_pair_fn cb,
                     void *payload)
{
#define DOC(x) (ids ? (size_t)ids[x] : (size_t)(x))
    unsigned ibits = 1;
    while (ibits < 64 && ((uint64_t)1 << ibits) < m) ibits++;
    uint64_t imask = ((uint64_t)1 << ibits) - 1;
    uint64_t *a = malloc((m ? m : 1) * sizeof *a), *tmp = malloc((m ? m : 1) * sizeof *tmp);
    int stop = 0;
    if (!a || !tmp) {
        free(a);
        free(tmp);
        return -1;
    }
    for (unsigned band = 0; band < DEDUPE_BANDS && !stop; band++) {
        for (size_t x = 0; x < m; x++) {
            const nd_sketch *s = &sk[DOC(x)];
            uint64_t h = nd_feature_hash(s->bin + band * DEDUPE_BAND_BINS,
                                         DEDUPE_BAND_BINS * sizeof s->bin[0]);
            a[x] = (h & ~imask) | x;
        }
        radix_sort(a, tmp, m);
        for (size_t s = 0; s < m && !stop;) {
            size_t e = s + 1;
            while (e < m && (a[e] & ~imask) == (a[s] & ~imask)) e++;
            for (size_t u = s; u < e && !stop; u++) {
                size_t x = a[u] & imask, i = DOC(x);
                for (size_t v = u + 1; v < e && !stop; v++) {
                    size_t y = a[v] & imask, j = DOC(y); /* x < y: sorted in a run */
                    if (!band_equal(&sk[i], &sk[j], band)) continue;
                    unsigned earlier = 0;
                    while (earlier < band && !band_equal(&sk[i], &sk[j], earlier)) earlier++;
                    if (earlier < band) continue;
                    unsigned dist = nd_hamming(fp[i], fp[j]);
                    if (dist <= join_k || dist > k) continue;
                    if (nd_sketch_resemblance(&sk[i], &sk[j]) < min_res) continue;
                    stop = cb(x, y, dist, payload);
                }
            }
            s = e;
        }
    }
    free(a);
    free(tmp);
    return stop;
#undef DOC
}
