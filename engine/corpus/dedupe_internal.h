/*
 * dedupe_internal.h — the nd_dedupe handle, shared by the files of the
 * corpus dedupe: dedupe.c (options, documents in, the docs walk),
 * dedupe_join.c (the joins and the pairs walk), dedupe_cluster.c (the
 * clusters and roles walks).
 *
 * Room: corpus/. It may call: index/, text/ (and common/).
 * The room works on corpora without a store: the corpus dedupe in bounded
 * memory (dedupe*.c: nd_dedupe_*) and the query-biased clustering of
 * search results (cluster.c: nd_cluster).
 *
 * Life of a handle: documents are added (the corpus is open); the first
 * result call closes it (dedupe_close: scratch files flushed, the default
 * k resolved), after which only results are read.
 */
#ifndef ND_DEDUPE_INTERNAL_H
#define ND_DEDUPE_INTERNAL_H

#include "dedupe_docs.h"
#include "fp_feat.h"
#include "neardup.h"
#include "verify_pair.h"

/* The self-join's reach: pairs beyond it come from banding only. */
enum { DEDUPE_MAX_JOIN_K = ND_MAX_PLAN_K };

struct nd_dedupe {
    /* options, resolved */
    unsigned k, join_k, band_width;
    int k_given, simhash_only;
    double min_res, min_cont;
    nd_dedupe_keep keep;
    size_t memory;
    verify_rule rule;        /* the pair decision, settled by dedupe_close */
    nd_fp_options fp;        /* stopwords point into stop_ptrs / stop_buf */
    char *stop_buf;
    const char **stop_ptrs;
    char *scratch_dir;
    /* documents */
    dedupe_docs docs;
    fp_feat feat;        /* the features of the text being signed */
    uint64_t texts;
    int closed;              /* results were read: no more adds */
    int broken;              /* an add failed past its checks: only free */
    /* the clustering, once computed (dedupe_cluster.c) */
    int clustered;
    size_t m;                /* groups of identical documents */
    uint32_t *group;         /* n: the group of each document */
    uint32_t *lead;          /* m: each group's first document in keep order; NULL when m == n */
    uint32_t *rep;           /* m: the group kept for each group */
    uint32_t *lorder;        /* m: the groups in keep order of their leaders */
    uint32_t *cluster;       /* m: cluster number of a kept group (0: alone) */
    /* counts of the last join */
    uint64_t pairs, by_containment;
    /* keys read back for the callbacks */
    dedupe_key key_a, key_b;
    /* nd_dedupe_set_progress */
    nd_dedupe_progress_cb progress;
    void *progress_payload;
};

/* Tell the progress callback, if any, where phase is. */
void dedupe_progress(const nd_dedupe *d, const char *phase, const char *unit, uint64_t done,
                     uint64_t total);

/* Close the corpus on the first result call (idempotent). @return ND_OK,
 * ND_EINVAL (k above 8 asked without texts) or the store's error. */
int dedupe_close(nd_dedupe *d);

/* A pair found by the joins: positions x < y into the joined documents,
 * with the estimates. A positive return stops the joins and is returned
 * by dedupe_join; a negative nd_error too. */
typedef int (*dedupe_found_fn)(size_t x, size_t y, const verify_result *f, void *payload);

/* Every pair of the documents ids[0..m) (all n in order when ids is NULL;
 * ids increase): the self-join within the memory budget, then banding.
 * estimates: compute the estimates even where the distance alone decides.
 * Counts d->pairs and d->by_containment from 0.
 * @return ND_OK, found's positive value, or a negative nd_error. */
int dedupe_join(nd_dedupe *d, const uint32_t *ids, size_t m, int estimates, dedupe_found_fn found,
                void *payload);

/* The walk's callback said stop: ND_DEDUPE_STOPPED. */
static inline int dedupe_stop(int cb_rc)
{
    return cb_rc ? ND_DEDUPE_STOPPED : ND_OK;
}

#endif
