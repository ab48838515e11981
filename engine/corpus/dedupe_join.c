/*
 * dedupe_join.c — the pairs of the corpus dedupe: the self-join, then
 * min-hash banding, and the walk that streams the pairs (nd_dedupe_pairs).
 *
 * Candidates come from two sources. The self-join of the fingerprints
 * (nd_selfjoin_stream, within the memory budget) finds every pair within
 * min(k, 8) bits, exhaustively. Banding (dedupe_band.c) finds the pairs
 * whose sketches agree in a whole band, of which it keeps those more than
 * min(k, 8) and at most k bits apart: templated texts of resemblance 0.9
 * lie up to 25 bits apart, beyond any self-join. A candidate is a pair
 * when its sketches estimate a resemblance >= R, or, with containment on,
 * a containment >= C (estimated from the resemblance and the counts of
 * distinct features: Broder's "roughly contained", |A n B| / min(|A|,
 * |B|)): verify_pair decides, the one decision of the library. With R = 0 (ND_DEDUPE_SIMHASH_ONLY), or when no document had
 * text, the self-join alone answers, by distance. bench/README.md, "Dedupe
 * quality", has the measurement that chose the defaults (k = 24, R =
 * 0.85, C off).
 *
 * Which contained pairs can be found: every one within min(k, 8) bits,
 * and those banding finds. With C > 0 the bands are 32 of 4 bins instead
 * of 16 of 8, so pairs of lower resemblance meet (a page with half as much
 * again appended, J about 0.67: 0.999 instead of 0.47); a short page
 * inside a much longer one (J below 0.3: 0.23 or less) is mostly not
 * found, and its estimate would be too coarse to trust anyway. C stays
 * off by default: contained pairs are not near-duplicates by the
 * resemblance measure the defaults are judged on.
 *
 * Each pair is reported once: the self-join reports a pair from its first
 * table only; banding skips a pair the self-join already saw (within
 * min(k, 8) bits) and a pair that also agrees in an earlier band.
 *
 * Sketches stay on disk: the self-join's candidates read theirs through
 * the store's cache; each band pass reads the sketch file once in order.
 */
#include <string.h>

#include "dedupe_band.h"
#include "dedupe_internal.h"
#include "nd_error.h"
#include "plan.h"

typedef struct join_state {
    nd_dedupe *d;
    const uint32_t *ids; /* the documents joined (NULL: all, in order) */
    int estimates;
    dedupe_found_fn found;
    void *payload;
    int rc;                  /* why the joins stopped: found's value or an nd_error */
    dedupe_spill_reader seq; /* the band passes' reads of the sketch file */
    uint64_t done, total;    /* the phase's progress: records read, estimated total */
} join_state;

#define DOC(js, x) ((js)->ids ? (size_t)(js)->ids[x] : (size_t)(x))

/* One side of a candidate for verify_pair: no record (the corpus has no
 * sketch, or the distance alone decides) or a record without a sketch is
 * a document known by its fingerprint. */
static verify_doc as_doc(uint64_t fp, const dedupe_rec *r)
{
    if (!r || r->size == DEDUPE_NO_SKETCH) return (verify_doc){fp, NULL, 0};
    return (verify_doc){fp, &r->sk, r->size};
}

/* Count and hand on a pair; nonzero stops the joins (js->rc says why). */
static int report(join_state *js, size_t x, size_t y, const verify_result *f)
{
    js->d->pairs++;
    js->d->by_containment += (uint64_t)f->by_containment;
    int rc = js->found(x, y, f, js->payload);
    if (rc) {
        js->rc = rc;
        return 1;
    }
    return 0;
}

/* A candidate x < y: reported when verify_pair says so. */
static int check(join_state *js, size_t x, size_t y, const dedupe_rec *a, const dedupe_rec *b)
{
    const uint64_t *fp = js->d->docs.fp;
    verify_doc va = as_doc(fp[DOC(js, x)], a), vb = as_doc(fp[DOC(js, y)], b);
    verify_result f;
    return verify_pair(&f, &va, &vb, &js->d->rule) ? report(js, x, y, &f) : 0;
}

static int join_cb(size_t x, size_t y, unsigned dist, void *payload)
{
    join_state *js = payload;
    nd_dedupe *d = js->d;
    (void)dist;
    if (!d->docs.has_sk || (d->simhash_only && !js->estimates)) return check(js, x, y, NULL, NULL);
    dedupe_rec a, b;
    int rc = dedupe_docs_rec(&d->docs, DOC(js, x), &a);
    if (rc == ND_OK) rc = dedupe_docs_rec(&d->docs, DOC(js, y), &b);
    if (rc < 0) {
        js->rc = rc;
        return 1;
    }
    return check(js, x, y, &a, &b);
}

static int band_cand(size_t x, size_t y, unsigned dist, const dedupe_rec *a, const dedupe_rec *b,
                     void *payload)
{
    (void)dist;
    return check(payload, x, y, a, b);
}

/* The band join's source: a pass reads the sketch file in order; a run's
 * documents come through the cache. */
static int band_src_read(dedupe_rec *out, const uint32_t *docs, size_t n, int sequential,
                         void *payload)
{
    join_state *js = payload;
    if (sequential) {
        js->done += n;
        dedupe_progress(js->d, "banding", "sketches", js->done, js->total);
    }
    for (size_t i = 0; i < n; i++) {
        if (!sequential) {
            ND_FORWARD(dedupe_docs_rec(&js->d->docs, docs[i], &out[i]));
            continue;
        }
        const void *r;
        ND_FORWARD(dedupe_spill_reader_get(&r, &js->seq, (uint64_t)docs[i] * sizeof *out,
                                           sizeof *out));
        memcpy(&out[i], r, sizeof *out);
    }
    return ND_OK;
}

/* The self-join's source: the fingerprints of ids[start ..). */
static int read_fps(uint64_t *out, size_t start, size_t count, void *payload)
{
    join_state *js = payload;
    const uint64_t *fp = js->d->docs.fp;
    js->done += count;
    dedupe_progress(js->d, "self-join", "fingerprints", js->done, js->total);
    if (!js->ids) memcpy(out, fp + start, count * sizeof *out);
    else
        for (size_t x = 0; x < count; x++) out[x] = fp[js->ids[start + x]];
    return 0;
}

/* The fingerprints nd_selfjoin_stream will read for m documents within k
 * bits and memory bytes, estimated as engine/index/join.c passes: per
 * table one pass when they fit (32 bytes a fingerprint), else one to
 * count and one a partition (about m / (memory / 32) of them). For the
 * progress callback only. */
static uint64_t selfjoin_reads(size_t m, unsigned k, size_t memory)
{
    nd_plan plan;
    if (nd_plan_choose(&plan, k, m, 0) < 0) return 0;
    size_t per = memory / 32;
    uint64_t passes = 1;
    if (memory && per < m) passes = 1 + (m + (per ? per : 1) - 1) / (per ? per : 1);
    return (uint64_t)plan.info.tables * passes * m;
}

int dedupe_join(nd_dedupe *d, const uint32_t *ids, size_t m, int estimates, dedupe_found_fn found,
                void *payload)
{
    join_state js = {d, ids, estimates, found, payload, ND_OK, {0}, 0, 0};
    d->pairs = d->by_containment = 0;
    if (m < 2) return ND_OK;
    js.total = selfjoin_reads(m, d->join_k, d->memory);
    dedupe_progress(d, "self-join", "fingerprints", 0, js.total);
    int rc = nd_selfjoin_stream(m, d->join_k, d->memory, read_fps, &js, join_cb, &js);
    if (js.rc) return js.rc;
    if (rc < 0) return nd_err_wrap(rc, "dedupe: self-join");
    if (!d->docs.has_sk || d->simhash_only) return ND_OK;
    dedupe_band_src src = {band_src_read, &js};
    js.done = 0;
    js.total = (uint64_t)m * dedupe_band_count(d->band_width);
    dedupe_progress(d, "banding", "sketches", 0, js.total);
    dedupe_spill_reader_init(&js.seq, &d->docs.recs);
    rc = dedupe_band_scan(m, ids, d->docs.fp, &src, d->band_width, d->join_k, d->k, band_cand, &js);
    dedupe_spill_reader_dispose(&js.seq);
    if (js.rc) return js.rc;
    return rc < 0 ? rc : ND_OK;
}

/* ---- nd_dedupe_pairs ------------------------------------------------------ */

typedef struct pair_walk {
    nd_dedupe *d;
    nd_dedupe_pair_cb cb;
    void *payload;
} pair_walk;

static int pair_found(size_t x, size_t y, const verify_result *f, void *payload)
{
    pair_walk *w = payload;
    nd_dedupe *d = w->d;
    ND_FORWARD(dedupe_docs_key(&d->key_a, &d->docs, x));
    ND_FORWARD(dedupe_docs_key(&d->key_b, &d->docs, y));
    nd_dedupe_pair p = {x, y, d->key_a.p, d->key_a.len, d->key_b.p, d->key_b.len, f->dist,
                        f->resemblance, f->containment, f->by_containment};
    return dedupe_stop(w->cb(&p, w->payload));
}

int nd_dedupe_pairs(nd_dedupe *d, nd_dedupe_pair_cb cb, void *payload)
{
    ND_RETURN_IF(!d || !cb, ND_EINVAL, "nd_dedupe_pairs: NULL argument");
    ND_FORWARD(dedupe_close(d));
    pair_walk w = {d, cb, payload};
    return dedupe_join(d, NULL, d->docs.n, 1, pair_found, &w);
}
