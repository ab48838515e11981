/*
 * db_results.h — the result set of queries and batches (db_results.c;
 * engine internal): matches plus an arena holding their keys. Declares
 * what db_results.c defines besides the public nd_results_* calls.
 */
#ifndef ND_DB_RESULTS_H
#define ND_DB_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "neardup.h"

/* nd_results internals: matches plus an arena holding their keys. */
struct nd_results {
    nd_match *m;
    size_t *koff; /* key offset in arena, or SIZE_MAX for no key */
    size_t n, cap;
    char *arena;
    size_t alen, acap;
};

/* Append a match (key copied, NUL-terminated; resemblance -1, which the
 * caller may set on r->m[r->n - 1]); pointers are resolved by
 * results_finish. */
int results_push(nd_results *r, uint64_t fp, unsigned dist, const char *key, size_t klen,
                 double score, int64_t time);
/* Sort by (dist, fp, key), keep `limit` (0 = all), resolve key pointers. */
int results_finish(nd_results *r, size_t limit);
/* As results_finish, most resemblant first (then by dist, fp, key: the
 * order of nd_match_order). */
int results_finish_resemblance(nd_results *r, size_t limit);
/* Resolve key pointers in push order (no sort). */
void results_resolve(nd_results *r);
#endif /* ND_DB_RESULTS_H */
