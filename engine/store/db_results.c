/*
 * db_results.c — nd_results: a growable list of matches and the bytes of
 * their keys.
 *
 * Keys live in one arena; while a list is being filled the arena may move,
 * so matches remember offsets and results_finish turns them into pointers
 * once, after sorting. Every producer (query, get, add_if_new) finishes.
 *
 * Callers: the public API (nd_results_*), db_query.c and db_batch.c
 * (results_push, _finish, _resolve).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "db_results.h"
#include "nd_bytes.h"
#include "nd_error.h"

int nd_results_new(nd_results **out)
{
    ND_RETURN_IF(!out, ND_EINVAL, "results: NULL output");
    nd_results *r = calloc(1, sizeof *r);
    ND_RETURN_IF(!r, ND_ENOMEM, "results: out of memory");
    *out = r;
    return ND_OK;
}

void nd_results_free(nd_results *r)
{
    if (!r) return;
    free(r->m);
    free(r->koff);
    free(r->arena);
    free(r);
}

size_t nd_results_count(const nd_results *r) { return r ? r->n : 0; }

const nd_match *nd_results_get(const nd_results *r, size_t i)
{
    return r && i < r->n ? &r->m[i] : NULL;
}

void nd_results_clear(nd_results *r)
{
    if (!r) return;
    r->n = 0;
    r->alen = 0;
}

int results_push(nd_results *r, uint64_t fp, unsigned dist, const char *key, size_t klen,
                 double score, int64_t time)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        nd_match *m = realloc(r->m, cap * sizeof *m);
        if (!m) return nd_err_set(ND_ENOMEM, "results: out of memory");
        r->m = m;
        size_t *ko = realloc(r->koff, cap * sizeof *ko);
        if (!ko) return nd_err_set(ND_ENOMEM, "results: out of memory");
        r->koff = ko;
        r->cap = cap;
    }
    size_t off = SIZE_MAX;
    if (key) {
        if (r->alen + klen + 1 > r->acap) {
            size_t cap = r->acap ? r->acap : 256;
            while (cap < r->alen + klen + 1) cap *= 2;
            char *a = realloc(r->arena, cap);
            if (!a) return nd_err_set(ND_ENOMEM, "results: out of memory");
            r->arena = a;
            r->acap = cap;
        }
        off = r->alen;
        memcpy(r->arena + off, key, klen);
        r->arena[off + klen] = '\0';
        r->alen += klen + 1;
    }
    r->m[r->n] = (nd_match){.fp = fp, .dist = dist, .key = NULL, .key_len = key ? klen : 0,
                            .score = score, .time = time, .resemblance = -1};
    r->koff[r->n] = off;
    r->n++;
    return ND_OK;
}

/* Sort order needs the arena and C11 qsort has no context argument, so
 * an index is sorted under a mutex that guards the context pointer (and
 * whether resemblance ranks first). */
static const nd_results *sort_ctx;
static int sort_by_resemblance;

static int cmp_idx(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const nd_match *x = &sort_ctx->m[i], *y = &sort_ctx->m[j];
    if (sort_by_resemblance && x->resemblance != y->resemblance)
        return x->resemblance > y->resemblance ? -1 : 1;
    if (x->dist != y->dist) return x->dist < y->dist ? -1 : 1;
    if (x->fp != y->fp) return x->fp < y->fp ? -1 : 1;
    size_t ox = sort_ctx->koff[i], oy = sort_ctx->koff[j];
    if (ox == SIZE_MAX || oy == SIZE_MAX) return (ox == SIZE_MAX) - (oy == SIZE_MAX);
    return nd_bytes_cmp(sort_ctx->arena + ox, x->key_len, sort_ctx->arena + oy, y->key_len);
}

static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;

static int finish(nd_results *r, size_t limit, int by_resemblance)
{
    if (r->n > 1) {
        size_t *idx = malloc(r->n * sizeof *idx);
        nd_match *m = malloc(r->n * sizeof *m);
        size_t *ko = malloc(r->n * sizeof *ko);
        if (!idx || !m || !ko) {
            free(idx);
            free(m);
            free(ko);
            r->n = 0;
            return nd_err_set(ND_ENOMEM, "results: out of memory sorting matches");
        }
        {
            for (size_t i = 0; i < r->n; i++) idx[i] = i;
            pthread_mutex_lock(&sort_mu);
            sort_ctx = r;
            sort_by_resemblance = by_resemblance;
            qsort(idx, r->n, sizeof *idx, cmp_idx);
            pthread_mutex_unlock(&sort_mu);
            for (size_t i = 0; i < r->n; i++) {
                m[i] = r->m[idx[i]];
                ko[i] = r->koff[idx[i]];
            }
            memcpy(r->m, m, r->n * sizeof *m);
            memcpy(r->koff, ko, r->n * sizeof *ko);
        }
        free(idx);
        free(m);
        free(ko);
    }
    if (limit && r->n > limit) r->n = limit;
    results_resolve(r);
    return ND_OK;
}

int results_finish(nd_results *r, size_t limit) { return finish(r, limit, 0); }

int results_finish_resemblance(nd_results *r, size_t limit) { return finish(r, limit, 1); }

void results_resolve(nd_results *r)
{
    for (size_t i = 0; i < r->n; i++)
        r->m[i].key = r->koff[i] == SIZE_MAX ? NULL : r->arena + r->koff[i];
}

int nd_match_order(const nd_match *a, const nd_match *b)
{
    if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
    if (a->fp != b->fp) return a->fp < b->fp ? -1 : 1;
    return nd_bytes_cmp(a->key, a->key_len, b->key, b->key_len);
}
