/*
 * dedupe.c — the corpus dedupe's handle: options, documents in, and the
 * walk that hands the documents back (nd_dedupe_docs, to load a store).
 *
 * A text is signed in one pass over its features (fp_feat.c): simhash,
 * min-hash sketch and, when containment is asked for, the count of its
 * distinct features. The document store (dedupe_docs.c) keeps the
 * fingerprints (and priorities) in memory and the rest in scratch files.
 * The joins and clusters live in dedupe_join.c and dedupe_cluster.c;
 * every result call first closes the corpus here (dedupe_close), which is
 * where the default k is settled: 24 when some document had text, else 3,
 * as the self-join alone reaches 8 bits at most.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dedupe_internal.h"
#include "fp_internal.h"
#include "nd_error.h"
#include "nd_options.h"

enum { DOCS_BATCH_DEFAULT = 65536 };

int nd_dedupe_options_init(nd_dedupe_options *opts, unsigned version)
{
    return nd_options_init(opts, sizeof *opts, version, ND_DEDUPE_OPTIONS_VERSION, ND_DEDUPE_OPTIONS_VERSION, "dedupe");
}

static int check_threshold(double v, const char *name)
{
    ND_RETURN_IF(!(v >= 0 && v <= 1), ND_EINVAL, "dedupe options: %s must be in [0, 1], got %g",
                 name, v);
    return ND_OK;
}

static int check_options(const nd_dedupe_options *o)
{
    ND_RETURN_IF(o->version != ND_DEDUPE_OPTIONS_VERSION, ND_EINVAL,
                 "dedupe options: version %u unknown (this build knows %u)", o->version,
                 ND_DEDUPE_OPTIONS_VERSION);
    ND_RETURN_IF(o->flags & ~ND_DEDUPE_SIMHASH_ONLY, ND_EINVAL,
                 "dedupe options: unknown flags 0x%x", o->flags);
    ND_RETURN_IF(o->has_k && o->k > 64, ND_EINVAL, "dedupe options: k must be 0..64, got %u",
                 o->k);
    ND_RETURN_IF((o->flags & ND_DEDUPE_SIMHASH_ONLY) && o->has_k && o->k > DEDUPE_MAX_JOIN_K,
                 ND_EINVAL,
                 "dedupe options: k above %u needs texts and a min_resemblance above 0 "
                 "(fingerprints alone pair within %u bits), got %u",
                 DEDUPE_MAX_JOIN_K, DEDUPE_MAX_JOIN_K, o->k);
    ND_FORWARD(check_threshold(o->min_resemblance, "min_resemblance"));
    ND_FORWARD(check_threshold(o->min_containment, "min_containment"));
    ND_RETURN_IF(o->keep != ND_DEDUPE_KEEP_FIRST && o->keep != ND_DEDUPE_KEEP_SCORE &&
                     o->keep != ND_DEDUPE_KEEP_LONGEST,
                 ND_EINVAL, "dedupe options: unknown keep %d", (int)o->keep);
    ND_RETURN_IF(o->memory && o->memory < ND_DEDUPE_MIN_MEMORY, ND_EINVAL,
                 "dedupe options: memory of %llu bytes, below the least (%u)",
                 (unsigned long long)o->memory, ND_DEDUPE_MIN_MEMORY);
    ND_RETURN_IF(o->memory > SIZE_MAX, ND_EINVAL, "dedupe options: memory of %llu bytes",
                 (unsigned long long)o->memory);
    fp_resolved r;
    return fp_resolve(&r, o->fp);
}

/* d->fp = *fp with its stop words copied into the handle. */
static int copy_fp_options(nd_dedupe *d, const nd_fp_options *fp)
{
    if (!fp) return nd_fp_options_init(&d->fp, ND_FP_OPTIONS_VERSION);
    d->fp = *fp;
    if (fp->n_stopwords == 0) return ND_OK;
    size_t bytes = 0;
    for (size_t i = 0; i < fp->n_stopwords; i++) bytes += strlen(fp->stopwords[i]) + 1;
    d->stop_buf = malloc(bytes);
    d->stop_ptrs = malloc(fp->n_stopwords * sizeof *d->stop_ptrs);
    ND_RETURN_IF(!d->stop_buf || !d->stop_ptrs, ND_ENOMEM, "dedupe: out of memory for stop words");
    char *at = d->stop_buf;
    for (size_t i = 0; i < fp->n_stopwords; i++) {
        size_t len = strlen(fp->stopwords[i]) + 1;
        memcpy(at, fp->stopwords[i], len);
        d->stop_ptrs[i] = at;
        at += len;
    }
    d->fp.stopwords = d->stop_ptrs;
    return ND_OK;
}

int nd_dedupe_new(nd_dedupe **out, const nd_dedupe_options *opts)
{
    nd_dedupe_options def = ND_DEDUPE_OPTIONS_INIT;
    nd_dedupe *d = NULL;
    int rc;
    ND_RETURN_IF(!out, ND_EINVAL, "nd_dedupe_new: NULL out");
    *out = NULL;
    if (!opts) opts = &def;
    ND_FORWARD(check_options(opts));
    d = calloc(1, sizeof *d);
    ND_RETURN_IF(!d, ND_ENOMEM, "nd_dedupe_new: out of memory");
    d->docs.keys = d->docs.koff = d->docs.recs = d->docs.scores = DEDUPE_SPILL_NONE;
    d->simhash_only = (opts->flags & ND_DEDUPE_SIMHASH_ONLY) != 0;
    d->k_given = opts->has_k;
    d->k = opts->has_k ? opts->k : d->simhash_only ? ND_DEDUPE_DEFAULT_SIMHASH_K : ND_DEDUPE_DEFAULT_K;
    d->join_k = d->k < DEDUPE_MAX_JOIN_K ? d->k : DEDUPE_MAX_JOIN_K;
    d->min_res = d->simhash_only ? 0
                 : opts->min_resemblance > 0 ? opts->min_resemblance
                                             : ND_DEDUPE_DEFAULT_MIN_RESEMBLANCE;
    d->min_cont = opts->min_containment;
    /* Containment: bands of 4 bins, so pairs of lower resemblance meet. */
    d->band_width = d->min_cont > 0 ? DEDUPE_CONTAINMENT_BAND_BINS : DEDUPE_BAND_BINS;
    d->feat.count = d->min_cont > 0;
    d->keep = opts->keep;
    d->memory = opts->memory ? (size_t)opts->memory : (size_t)ND_DEDUPE_DEFAULT_MEMORY;
    ND_TRY(copy_fp_options(d, opts->fp));
    d->scratch_dir = strdup(opts->scratch_dir ? opts->scratch_dir : "/tmp");
    if (!d->scratch_dir) ND_FAIL(ND_ENOMEM, "nd_dedupe_new: out of memory");
    ND_TRY(dedupe_docs_init(&d->docs, d->scratch_dir, d->keep != ND_DEDUPE_KEEP_FIRST));
    *out = d;
    return ND_OK;
cleanup:
    nd_dedupe_free(d);
    return rc;
}

void nd_dedupe_free(nd_dedupe *d)
{
    if (!d) return;
    dedupe_docs_dispose(&d->docs);
    fp_feat_dispose(&d->feat);
    dedupe_key_dispose(&d->key_a);
    dedupe_key_dispose(&d->key_b);
    free(d->group);
    free(d->lead);
    free(d->rep);
    free(d->lorder);
    free(d->cluster);
    free(d->stop_buf);
    free(d->stop_ptrs);
    free(d->scratch_dir);
    free(d);
}

int nd_dedupe_sign(nd_signature *out, nd_dedupe *d, const char *text, size_t len, unsigned flags)
{
    ND_RETURN_IF(!out || !d, ND_EINVAL, "nd_dedupe_sign: NULL argument");
    ND_RETURN_IF(flags & ~ND_FP_HTML, ND_EINVAL, "nd_dedupe_sign: unknown flags 0x%x", flags);
    nd_fp_options o = d->fp;
    o.flags |= flags;
    fp_feat_begin(&d->feat);
    int rc = nd_features(text, len, &o, fp_feat_add, &d->feat);
    memset(out, 0, sizeof *out);
    out->fp = fp_feat_end(&d->feat, &out->sketch, &out->distinct); /* also empties the set */
    int oom = d->feat.oom;
    out->length = len;
    if (rc < 0) return rc;
    ND_RETURN_IF(oom, ND_ENOMEM, "dedupe: out of memory counting the features of a text of %zu bytes",
                 len);
    return ND_OK;
}

static int add_doc(nd_dedupe *d, const char *key, size_t key_len, uint64_t fp,
                   const nd_signature *sig, double score)
{
    ND_RETURN_IF(!d, ND_EINVAL, "nd_dedupe_add: NULL handle");
    ND_RETURN_IF(d->closed, ND_EINVAL,
                 "nd_dedupe_add: the corpus is closed (results were read)");
    ND_RETURN_IF(d->broken, ND_EINVAL, "nd_dedupe_add: an earlier add failed");
    ND_RETURN_IF(!key && key_len, ND_EINVAL, "nd_dedupe_add: NULL key of %zu bytes", key_len);
    ND_RETURN_IF(isnan(score), ND_EINVAL, "nd_dedupe_add: the score is NaN");
    ND_RETURN_IF(d->docs.n >= UINT32_MAX, ND_ELIMIT, "nd_dedupe_add: more than %u documents",
                 UINT32_MAX);
    double prio = d->keep == ND_DEDUPE_KEEP_SCORE                ? score
                  : d->keep == ND_DEDUPE_KEEP_LONGEST && sig ? (double)sig->length
                                                                 : 0;
    dedupe_rec rec;
    if (sig) {
        rec.sk = sig->sketch;
        rec.size = sig->distinct;
    }
    int rc = dedupe_docs_push(&d->docs, key ? key : "", key_len, fp, sig ? &rec : NULL, prio, score);
    if (rc < 0) {
        d->broken = 1;
        return rc;
    }
    d->texts += sig != NULL;
    return ND_OK;
}

int nd_dedupe_add_signature(nd_dedupe *d, const char *key, size_t key_len,
                            const nd_signature *sig, double score)
{
    ND_RETURN_IF(!sig, ND_EINVAL, "nd_dedupe_add_signature: NULL signature");
    return add_doc(d, key, key_len, sig->fp, sig, score);
}

int nd_dedupe_add_text(nd_dedupe *d, const char *key, size_t key_len, const char *text,
                       size_t len, double score)
{
    nd_signature sig;
    ND_RETURN_IF(!d, ND_EINVAL, "nd_dedupe_add_text: NULL handle");
    ND_RETURN_IF(d->closed, ND_EINVAL,
                 "nd_dedupe_add: the corpus is closed (results were read)");
    ND_FORWARD(nd_dedupe_sign(&sig, d, text, len, 0));
    return add_doc(d, key, key_len, sig.fp, &sig, score);
}

int nd_dedupe_add_fp(nd_dedupe *d, const char *key, size_t key_len, uint64_t fp, double score)
{
    return add_doc(d, key, key_len, fp, NULL, score);
}

int dedupe_close(nd_dedupe *d)
{
    if (d->closed) return ND_OK;
    ND_RETURN_IF(d->broken, ND_EINVAL, "dedupe: an earlier add failed");
    int rc = dedupe_docs_finish(&d->docs);
    if (rc < 0) {
        d->broken = 1;
        return rc;
    }
    /* Only fingerprints: the self-join alone, so k <= 8. */
    if (!d->docs.has_sk && d->k > DEDUPE_MAX_JOIN_K) {
        ND_RETURN_IF(d->k_given && d->docs.n > 0, ND_EINVAL,
                     "dedupe: k above %u needs texts (no document had one)", DEDUPE_MAX_JOIN_K);
        d->k = d->join_k = ND_DEDUPE_DEFAULT_SIMHASH_K;
    }
    d->rule = (verify_rule){d->k, d->join_k, d->simhash_only ? 0 : d->min_res, d->min_cont};
    d->closed = 1;
    return ND_OK;
}

int nd_dedupe_docs(nd_dedupe *d, size_t batch, nd_dedupe_docs_cb cb, void *payload)
{
    ND_RETURN_IF(!d || !cb, ND_EINVAL, "nd_dedupe_docs: NULL argument");
    ND_FORWARD(dedupe_close(d));
    if (batch == 0) batch = DOCS_BATCH_DEFAULT;
    size_t n = d->docs.n, cap = n < batch ? (n ? n : 1) : batch, kb_cap = 0;
    nd_doc *docs = malloc(cap * sizeof *docs);
    uint64_t *off = malloc((cap + 1) * sizeof *off);
    double *score = malloc(cap * sizeof *score);
    dedupe_rec *recs = d->docs.has_sk ? malloc(cap * sizeof *recs) : NULL;
    char *kb = NULL;
    int rc = ND_OK;
    if (!docs || !off || !score || (d->docs.has_sk && !recs))
        ND_FAIL(ND_ENOMEM, "nd_dedupe_docs: out of memory");
    /* A batch at a time: its key offsets, scores and keys in one read each. */
    for (size_t s = 0; s < n; s += cap) {
        size_t m = n - s < cap ? n - s : cap;
        ND_TRY(dedupe_spill_pread(&d->docs.koff, off, (m + 1) * sizeof *off, (uint64_t)s * 8));
        ND_TRY(dedupe_spill_pread(&d->docs.scores, score, m * sizeof *score,
                                  (uint64_t)s * sizeof *score));
        size_t klen = (size_t)(off[m] - off[0]);
        if (klen > kb_cap) {
            ND_TRY(dedupe_grow((void **)&kb, klen, 1, "bytes of keys"));
            kb_cap = klen;
        }
        if (klen) ND_TRY(dedupe_spill_pread(&d->docs.keys, kb, klen, off[0]));
        /* The sketches too, so that a resemblance store can take them. */
        if (recs)
            ND_TRY(dedupe_spill_pread(&d->docs.recs, recs, m * sizeof *recs,
                                      (uint64_t)s * sizeof *recs));
        for (size_t i = 0; i < m; i++) {
            docs[i] = (nd_doc){kb ? kb + (off[i] - off[0]) : "", (size_t)(off[i + 1] - off[i]),
                               d->docs.fp[s + i], score[i], 0};
            if (recs && recs[i].size != DEDUPE_NO_SKETCH) docs[i].sketch = &recs[i].sk;
        }
        if ((rc = dedupe_stop(cb(docs, m, payload)))) goto cleanup;
    }
cleanup:
    free(docs);
    free(off);
    free(score);
    free(recs);
    free(kb);
    return rc;
}

int nd_dedupe_set_progress(nd_dedupe *d, nd_dedupe_progress_cb cb, void *payload)
{
    ND_RETURN_IF(!d, ND_EINVAL, "nd_dedupe_set_progress: NULL handle");
    d->progress = cb;
    d->progress_payload = payload;
    return ND_OK;
}

void dedupe_progress(const nd_dedupe *d, const char *phase, const char *unit, uint64_t done,
                     uint64_t total)
{
    if (!d->progress) return;
    nd_dedupe_progress p = {phase, unit, done, total};
    d->progress(&p, d->progress_payload);
}

int nd_dedupe_stats_get(nd_dedupe_stats *out, const nd_dedupe *d)
{
    ND_RETURN_IF(!out || !d, ND_EINVAL, "nd_dedupe_stats_get: NULL argument");
    *out = (nd_dedupe_stats){.documents = d->docs.n,
                             .texts = d->texts,
                             .distinct = d->clustered ? d->m : 0,
                             .pairs = d->pairs,
                             .by_containment = d->by_containment,
                             .k = d->k};
    return ND_OK;
}
