/*
 * cmp_regen.c — merging new entries into a keyed family (docs, rev) while
 * it is written into a new generation (st_regen): one forward walk of the
 * family as it is, interleaved with the new entries, in key order.
 */
#include <stdlib.h>
#include <string.h>

#include "nd_error.h"
#include "storage.h"

/* RocksDB's bytewise order: memcmp over the shorter, then the shorter. */
static int key_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

/* The new entries, one at a time: the current one (have: there is one),
 * and a copy of the previous key (next may reuse its buffers) to check
 * their order. */
typedef struct new_entries {
    int cf, have;
    size_t i;
    st_next_fn next;
    void *payload;
    const void *key, *val;
    size_t klen, vlen;
    char *prev;
    size_t plen, pcap;
} new_entries;

/* Fetch the next new entry, checking it comes after the current one. */
static int advance(new_entries *nw)
{
    if (nw->have) {
        if (nw->klen > nw->pcap) {
            char *p = realloc(nw->prev, nw->klen);
            ND_RETURN_IF(!p, ND_ENOMEM, "storage: out of memory");
            nw->prev = p;
            nw->pcap = nw->klen;
        }
        memcpy(nw->prev, nw->key, nw->klen);
        nw->plen = nw->klen;
        nw->i++;
    }
    int rc = nw->next(nw->payload, &nw->key, &nw->klen, &nw->val, &nw->vlen);
    if (rc < 0) return rc;
    int had = nw->have;
    nw->have = rc > 0;
    ND_RETURN_IF(had && nw->have && key_cmp(nw->prev, nw->plen, nw->key, nw->klen) >= 0,
                 ND_EINVAL, "storage: new entry %zu of family %d is out of order", nw->i,
                 nw->cf);
    return ND_OK;
}

int st_family_merge_stream(st_regen *g, st_store *s, int cf, st_next_fn next,
                           st_clash_fn clash, void *payload)
{
    st_iter *it = NULL;
    new_entries nw = {.cf = cf, .next = next, .payload = payload};
    int rc;
    ND_RETURN_IF(cf != ST_CF_DOCS && cf != ST_CF_REV, ND_EINVAL,
                 "storage: family %d is not merged by key", cf);
    ND_TRY(st_regen_begin(g, cf));
    ND_TRY(st_iter_new_scan(&it, s, cf));
    ND_TRY(advance(&nw));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t olen, ovlen;
        const char *okey = st_iter_key(it, &olen);
        /* The new entries below this stored key come first. */
        while (nw.have && key_cmp(nw.key, nw.klen, okey, olen) < 0) {
            ND_TRY(st_regen_put(g, nw.key, nw.klen, nw.val, nw.vlen));
            ND_TRY(advance(&nw));
        }
        if (nw.have && key_cmp(nw.key, nw.klen, okey, olen) == 0) {
            if (!clash)
                ND_FAIL(ND_ECORRUPT, "storage: family %d already holds new entry %zu", cf, nw.i);
            ND_TRY(clash(payload, nw.key, nw.klen, nw.val, nw.vlen));
            ND_TRY(advance(&nw));
        }
        const char *oval = st_iter_value(it, &ovlen);
        ND_TRY(st_regen_put(g, okey, olen, oval, ovlen));
    }
    ND_TRY(st_iter_status(it));
    while (nw.have) {
        ND_TRY(st_regen_put(g, nw.key, nw.klen, nw.val, nw.vlen));
        ND_TRY(advance(&nw));
    }
    ND_TRY(st_regen_end(g));
cleanup:
    st_iter_free(it);
    free(nw.prev);
    return rc;
}

/* st_family_merge's n indexed entries as a stream. */
typedef struct counted {
    st_kv_fn kv;
    void *payload;
    size_t i, n;
} counted;

static int counted_next(void *payload, const void **key, size_t *klen, const void **val,
                        size_t *vlen)
{
    counted *c = payload;
    if (c->i == c->n) return 0;
    ND_FORWARD(c->kv(c->payload, c->i++, key, klen, val, vlen));
    return 1;
}

int st_family_merge(st_regen *g, st_store *s, int cf, size_t n, st_kv_fn kv, void *payload)
{
    counted c = {kv, payload, 0, n};
    return st_family_merge_stream(g, s, cf, counted_next, NULL, &c);
}
