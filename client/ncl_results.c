/*
 * ncl_results.c — nd_client_results: a growable array of nd_match
 * (neardup.h's type) whose keys the list owns, one allocation a key with
 * a NUL after it. Clearing frees the keys and keeps the array.
 */
#include "ncl.h"

#include <stdlib.h>
#include <string.h>

struct nd_client_results {
    nd_match *m;
    size_t n, cap;
};

int nd_client_results_new(nd_client_results **out)
{
    if (!out) return ncl_fail(ND_EINVAL, "nd_client_results_new: NULL out");
    *out = calloc(1, sizeof **out);
    return *out ? ND_OK : ncl_fail(ND_ENOMEM, "out of memory");
}

void nd_client_results_clear(nd_client_results *res)
{
    if (!res) return;
    for (size_t i = 0; i < res->n; i++) free((char *)res->m[i].key);
    res->n = 0;
}

void nd_client_results_free(nd_client_results *res)
{
    if (!res) return;
    nd_client_results_clear(res);
    free(res->m);
    free(res);
}

size_t nd_client_results_count(const nd_client_results *res)
{
    return res ? res->n : 0;
}

const nd_match *nd_client_results_get(const nd_client_results *res, size_t i)
{
    return res && i < res->n ? &res->m[i] : NULL;
}

int ncl_results_push(nd_client_results *res, const nd_match *m)
{
    if (res->n == res->cap) {
        size_t cap = res->cap ? 2 * res->cap : 8;
        nd_match *p = realloc(res->m, cap * sizeof *p);
        if (!p) return ncl_fail(ND_ENOMEM, "out of memory");
        res->m = p;
        res->cap = cap;
    }
    char *key = malloc(m->key_len + 1);
    if (!key) return ncl_fail(ND_ENOMEM, "out of memory");
    if (m->key_len) memcpy(key, m->key, m->key_len);
    key[m->key_len] = '\0';
    res->m[res->n] = *m;
    res->m[res->n].key = key;
    res->n++;
    return ND_OK;
}

int ncl_match_order(const nd_match *a, const nd_match *b)
{
    if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
    if (a->fp != b->fp) return a->fp < b->fp ? -1 : 1;
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = n ? memcmp(a->key, b->key, n) : 0;
    if (c) return c;
    return a->key_len < b->key_len ? -1 : a->key_len > b->key_len;
}

static int cmp(const void *a, const void *b)
{
    return ncl_match_order(a, b);
}

static int cmp_resemblance(const void *a, const void *b)
{
    const nd_match *x = a, *y = b;
    if (x->resemblance != y->resemblance) return x->resemblance > y->resemblance ? -1 : 1;
    return ncl_match_order(x, y);
}

void ncl_results_sort(nd_client_results *res, int resemblance)
{
    if (res->n > 1) qsort(res->m, res->n, sizeof *res->m, resemblance ? cmp_resemblance : cmp);
}

void ncl_results_truncate(nd_client_results *res, size_t n)
{
    while (res->n > n) free((char *)res->m[--res->n].key);
}
