/*
 * cmp_read.c — point reads, snapshots and iterators of a store's
 * families (cmp_read.h), over the key-value adapter.
 *
 * A read of a generational family (docs, rev, tables) holds a reference
 * to the current generation while it reads (a snapshot for its whole
 * life), so that an import's switch cannot free the family under it; an
 * iterator needs it only while it is made: RocksDB's iterator keeps its
 * family alive itself. Point reads and probes fill the block cache only
 * while the store says so (st_fills_cache).
 */
#include "cmp_read.h"

#include <stdlib.h>

#include "cmp_gen.h"
#include "cmp_kv.h"
#include "nd_error.h"

struct st_snap {
    st_store *store;
    cmp_gen *gen; /* the generation current when it was taken */
    kv_snap *snap;
};


int st_get(st_store *s, int cf, const void *key, size_t klen, char **out_val, size_t *out_len)
{
    cmp_gen *g = ST_CF_GENERATIONAL(cf) ? st_gen_acquire(s) : NULL;
    int rc = kv_get(st_store_kv(s), st_family(s, g, cf), st_fills_cache(s), key, klen, out_val,
                    out_len);
    st_gen_release(s, g);
    return rc;
}

int st_exists_many(st_store *s, int cf, const char *const *keys, const size_t *lens, size_t n,
                   unsigned char *found)
{
    cmp_gen *g = ST_CF_GENERATIONAL(cf) ? st_gen_acquire(s) : NULL;
    int rc = kv_exists_many(st_store_kv(s), st_family(s, g, cf), st_fills_cache(s), keys, lens,
                            n, found);
    st_gen_release(s, g);
    return rc;
}

int st_snap_new(st_snap **out, st_store *s)
{
    st_snap *sn = calloc(1, sizeof *sn);
    ND_RETURN_IF(!sn, ND_ENOMEM, "storage: out of memory");
    sn->store = s;
    sn->gen = st_gen_acquire(s);
    int rc = kv_snap_new(&sn->snap, st_store_kv(s), st_fills_cache(s));
    if (rc < 0) {
        st_snap_free(sn);
        return rc;
    }
    *out = sn;
    return ND_OK;
}

void st_snap_free(st_snap *sn)
{
    if (!sn) return;
    kv_snap_free(sn->snap);
    st_gen_release(sn->store, sn->gen);
    free(sn);
}

cmp_gen *st_snap_gen(const st_snap *sn) { return sn->gen; }

/* The kinds of iterator. */
enum { IT_POINT, IT_PROBE, IT_SCAN, IT_AT, IT_BOUNDED };

/* Make an iterator of kind over family cf, in snap's generation or (snap
 * NULL) the current one, referenced while the iterator is made. */
static int iter_open(st_iter **out, st_store *s, int cf, int kind, const st_snap *snap,
                     st_batch *b, const void *lo, const void *hi, size_t blen)
{
    cmp_gen *g = !snap && ST_CF_GENERATIONAL(cf) ? st_gen_acquire(s) : NULL;
    kv_db *kv = st_store_kv(s);
    kv_cf *fam = st_family(s, snap ? snap->gen : g, cf);
    const kv_snap *ks = snap ? snap->snap : NULL;
    int fill = st_fills_cache(s), rc;
    switch (kind) {
    case IT_POINT: rc = kv_iter_new(out, kv, fam, fill, b ? st_batch_kv(b) : NULL); break;
    case IT_PROBE: rc = kv_iter_new_prefix(out, kv, fam, fill); break;
    case IT_SCAN: rc = kv_iter_new_scan(out, kv, fam, ks); break;
    case IT_AT: rc = kv_iter_new_at(out, kv, fam, ks); break;
    default: rc = kv_iter_new_bounded(out, kv, fam, fill, lo, hi, blen, ks); break;
    }
    st_gen_release(s, g);
    return rc;
}

int st_iter_new(st_iter **out, st_store *s, int cf, st_batch *b, int consistent)
{
    /* A RocksDB iterator already reads one implicit snapshot taken when it
     * is created, so `consistent` needs nothing more. */
    (void)consistent;
    return iter_open(out, s, cf, IT_POINT, NULL, b, NULL, NULL, 0);
}

int st_iter_new_probe(st_iter **out, st_store *s, unsigned t)
{
    return iter_open(out, s, ST_CF_TABLE(t), IT_PROBE, NULL, NULL, NULL, NULL, 0);
}

int st_iter_new_band(st_iter **out, st_store *s)
{
    return iter_open(out, s, ST_CF_BAND, IT_PROBE, NULL, NULL, NULL, NULL, 0);
}

int st_iter_new_scan(st_iter **out, st_store *s, int cf)
{
    return iter_open(out, s, cf, IT_SCAN, NULL, NULL, NULL, NULL, 0);
}

int st_iter_new_at(st_iter **out, st_store *s, int cf, const st_snap *snap)
{
    return iter_open(out, s, cf, IT_AT, snap, NULL, NULL, NULL, 0);
}

int st_iter_new_scan_at(st_iter **out, st_store *s, int cf, const st_snap *snap)
{
    return iter_open(out, s, cf, IT_SCAN, snap, NULL, NULL, NULL, 0);
}

int st_iter_new_bounded(st_iter **out, st_store *s, int cf, const void *lo, const void *hi,
                        size_t klen, const st_snap *snap)
{
    return iter_open(out, s, cf, IT_BOUNDED, snap, NULL, lo, hi, klen);
}

void st_iter_free(st_iter *it) { kv_iter_free(it); }
void st_iter_seek(st_iter *it, const void *key, size_t klen) { kv_iter_seek(it, key, klen); }
void st_iter_seek_first(st_iter *it) { kv_iter_seek_first(it); }
void st_iter_next(st_iter *it) { kv_iter_next(it); }
int st_iter_valid(const st_iter *it) { return kv_iter_valid(it); }
const char *st_iter_key(const st_iter *it, size_t *klen) { return kv_iter_key(it, klen); }
const char *st_iter_value(const st_iter *it, size_t *vlen) { return kv_iter_value(it, vlen); }
int st_iter_status(const st_iter *it) { return kv_iter_status(it); }

int st_iter_table_key(const st_iter *it, char tag, unsigned t, uint64_t *v, int *rc)
{
    size_t klen;
    if (!kv_iter_valid(it)) return 0;
    const char *k = kv_iter_key(it, &klen);
    return tbl_key_in(tag, t, k, klen, v, rc);
}
