/*
 * ncl_fleet.h — the fleet router's internals, shared by ncl_fleet.c (open,
 * single-document calls, queries, stats) and ncl_fleet_batch.c (batches).
 */
#ifndef NCL_FLEET_H
#define NCL_FLEET_H

#include "ncl.h"

struct nd_fleet {
    size_t n;          /* shards, servers */
    nd_client **c;     /* c[i] serves shard i */
    ncl_parallel *par; /* the requests to several servers at once */
    int resemblance;   /* the store verifies by resemblance */
    unsigned k;        /* the servers' k */
    size_t next_decider; /* the server that answers the next /v1/decide */
};

/* method path with body (borrowed; NULL: none) on every server at once:
 * outs[i] server i's answer (f->n of them). */
int ncl_fleet_fan(nd_fleet *f, json_t **outs, const char *method, const char *path,
                  json_t *body);
/* An array of f->n answers, NULL each (NULL and the message: ENOMEM). */
json_t **ncl_fleet_answers(nd_fleet *f);
/* Release each answer and the array; accepts NULL. */
void ncl_fleet_answers_free(nd_fleet *f, json_t **a);
/* The best of n matches (JSON objects; NULL or null ones skipped) by the
 * store's rule; NULL when none. Borrowed from ms. */
json_t *ncl_fleet_best(nd_fleet *f, json_t *const *ms, size_t n);

#endif
