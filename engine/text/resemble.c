/*
 * resemble.c — resemblance of documents as sets of shingles (Broder).
 *
 * Exact resemblance and containment on sorted hash arrays, and the
 * shingle set of a text: the truth the sketches (sketch.c) estimate.
 *
 * Callers: the public API only (nd_resemblance, nd_containment,
 * nd_shingle_set).
 */
#include <stdlib.h>
#include <string.h>

#include "neardup.h"
#include "nd_error.h"
#include "sort.h"

static size_t intersect(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    size_t i = 0, j = 0, n = 0;
    while (i < na && j < nb) {
        if (a[i] == b[j]) {
            n++;
            i++;
            j++;
        } else if (a[i] < b[j]) {
            i++;
        } else {
            j++;
        }
    }
    return n;
}

double nd_resemblance(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    if (na + nb == 0) return 1.0;
    size_t in = intersect(a, na, b, nb);
    return (double)in / (double)(na + nb - in);
}

double nd_containment(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    if (na == 0) return 1.0;
    return (double)intersect(a, na, b, nb) / (double)na;
}

typedef struct set_ctx {
    uint64_t *v;
    size_t n, cap;
    int oom;
} set_ctx;

static void set_add(uint64_t h, int32_t w, void *p)
{
    (void)w;
    set_ctx *s = p;
    if (s->oom) return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        uint64_t *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->oom = 1;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = h;
}

int nd_shingle_set(uint64_t **out, size_t *out_n, const char *text, size_t len, unsigned w)
{
    nd_fp_options o = ND_FP_OPTIONS_INIT;
    set_ctx s = {0};
    ND_RETURN_IF(!out || !out_n, ND_EINVAL, "nd_shingle_set: NULL output");
    ND_RETURN_IF(w == 0 || w > 16, ND_EINVAL, "nd_shingle_set: width %u (1..16)", w);
    o.features = w == 1 ? ND_FEATURES_WORDS : ND_FEATURES_SHINGLES;
    o.n = w == 1 ? 0 : w;
    int rc = nd_features(text, len, &o, set_add, &s);
    if (rc == ND_OK && s.oom) rc = nd_err_set(ND_ENOMEM, "nd_shingle_set: out of memory");
    if (rc < 0) {
        free(s.v);
        return rc;
    }
    qsort(s.v, s.n, sizeof *s.v, sort_cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < s.n; i++)
        if (m == 0 || s.v[i] != s.v[m - 1]) s.v[m++] = s.v[i];
    if (m == 0) {
        free(s.v);
        s.v = NULL;
    }
    *out = s.v;
    *out_n = m;
    return ND_OK;
}
