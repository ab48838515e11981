/*
 * expire_drops.c — a resemblance store's expired sketches and band
 * entries as deletion files (expire_drops.h).
 *
 * Memory: the keys (once), and 8 bytes a band entry: about 100 bytes and
 * the key an expired document, where the switch's batch held about 0.5
 * KB (13 deletions and their keys) and one thread inserted them into the
 * memtables (a quarter of an expiry of 10% of 1M texts).
 */
#include "expire_drops.h"

#include <stdlib.h>
#include <string.h>

#include "nd_error.h"
#include "sort.h"

int expire_drops_begin(expire_drops *d, nd_db *db, st_regen *g)
{
    memset(d, 0, sizeof *d);
    d->db = db;
    int rc = st_regen_fork(&d->f, g);
    if (rc == ND_OK) rc = st_regen_begin(d->f, ST_CF_SKETCH);
    if (rc < 0) (void)expire_drops_finish(d, g, 0);
    return rc;
}

int expire_drops_add(expire_drops *d, const char *key, size_t klen)
{
    char *v = NULL;
    size_t vlen;
    nd_sketch sk;
    int rc = st_get(d->db->store, ST_CF_SKETCH, key, klen, &v, &vlen);
    if (rc == ND_ENOTFOUND) {
        nd_err_clear();
        return ND_OK;
    }
    ND_FORWARD(rc);
    rc = db_sketch_decode(v, vlen, &sk);
    free(v);
    if (rc < 0)
        return nd_err_wrap(rc, "the sketch of document '%.*s'", (int)(klen > 80 ? 80 : klen),
                           key);
    uint64_t idx = expire_keys_count(&d->keys);
    ND_RETURN_IF(idx > UINT32_MAX, ND_ELIMIT, "expire: more than 2^32 documents at once");
    ND_FORWARD(expire_keys_push(&d->keys, key, klen));
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++)
        ND_FORWARD(st_u64s_push(&d->band[b], (uint64_t)sk.band[b] << 32 | idx));
    return st_regen_delete(d->f, key, klen);
}

int expire_drops_end(expire_drops *d)
{
    uint8_t bk[DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN];
    ND_FORWARD(st_regen_end(d->f));
    size_t most = d->band[0].n;
    uint64_t *tmp = malloc((most ? most : 1) * sizeof *tmp);
    ND_RETURN_IF(!tmp, ND_ENOMEM, "expire: out of memory sorting %zu band entries", most);
    int rc;
    ND_TRY(st_regen_begin(d->f, ST_CF_BAND));
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) {
        st_u64s *e = &d->band[b];
        sort_u64(e->v, tmp, e->n);
        for (size_t i = 0; i < e->n; i++) {
            size_t at = (size_t)(uint32_t)e->v[i];
            const char *key = d->keys.keys + d->keys.off.v[at];
            size_t klen = (size_t)(d->keys.off.v[at + 1] - d->keys.off.v[at]);
            size_t len = db_band_key_encode(bk, b, (uint32_t)(e->v[i] >> 32), key, klen);
            ND_TRY(st_regen_delete(d->f, bk, len));
        }
        st_u64s_dispose(e); /* what the next band's sort needs, no more */
    }
    ND_TRY(st_regen_end(d->f));
cleanup:
    free(tmp);
    return rc;
}

int expire_drops_finish(expire_drops *d, st_regen *g, int keep)
{
    int rc = d->f ? st_regen_join(g, d->f, keep) : ND_OK;
    expire_keys_dispose(&d->keys);
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) st_u64s_dispose(&d->band[b]);
    memset(d, 0, sizeof *d);
    return rc;
}
