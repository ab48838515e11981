/*
 * db_bands_read.c — what is read of a resemblance store's band entries
 * (db_bands.h): a check's candidates from the band memory and the family
 * merged in key order (the family seeked only where the band filter
 * allows), one entry's presence, and the entries memory holds that the
 * family lacks (stats and verify of a read-only store).
 */
#include <stdlib.h>
#include <string.h>

#include "db_bands.h"
#include "db_bands_internal.h"
#include "db_core.h"
#include "db_results.h"
#include "nd_error.h"

/* A document key in memory. */
typedef struct key_ref {
    const char *key;
    size_t len;
} key_ref;

static int ref_cmp(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    size_t l = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, l);
    if (c) return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* Add (key, len) to refs[0..*n), kept sorted and at most most long:
 * the smallest keys only (a band key shared by m documents, a text copied
 * m times, costs a check one comparison each, not a sort of m). */
static void keep_smallest(key_ref *refs, size_t *n, size_t most, key_ref r)
{
    if (*n == most && ref_cmp(&r, &refs[most - 1]) >= 0) return;
    size_t lo = 0, hi = *n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ref_cmp(&refs[mid], &r) < 0) lo = mid + 1;
        else hi = mid;
    }
    size_t last = *n < most ? *n : most - 1;
    memmove(refs + lo + 1, refs + lo, (last - lo) * sizeof *refs);
    refs[lo] = r;
    if (*n < most) (*n)++;
}

/* Keep, of the documents of band bk in m, the smallest keys in refs. */
static void collect(const band_mem *m, uint64_t bk, key_ref *refs, size_t *n)
{
    if (m->nhead == 0) return;
    for (uint32_t i = m->head[slot(m, bk)]; i != NONE; i = m->e[i].next)
        if (ent_band(&m->e[i]) == bk)
            keep_smallest(refs, n, ND_DB_BAND_CANDIDATES,
                          (key_ref){m->keys + m->e[i].key_off, m->e[i].key_len});
}

/* Memory's first ND_DB_BAND_CANDIDATES documents of band bk in key order
 * (act's and frz's), into refs (room for that many): a check reads no
 * more of a band. */
static void memory_band(const db_bands *m, uint64_t bk, key_ref *refs, size_t *n)
{
    *n = 0;
    collect(&m->act, bk, refs, n);
    collect(&m->frz, bk, refs, n);
}

int db_bands_candidates(nd_db *db, const nd_sketch *sk, nd_results *c, unsigned dist_unknown)
{
    db_bands *m = db->bands;
    st_iter *it = NULL;
    uint8_t prefix[DB_BAND_PREFIX_LEN];
    key_ref mk[ND_DB_BAND_CANDIDATES];
    size_t nm = 0;
    int rc = ND_OK;
    /* The memory first, then the family's view: a flush clears the
     * memory only after its file is in, so what a clear removes is in a
     * view taken after it. */
    if (m) pthread_rwlock_rdlock(&m->lock);
    for (unsigned b = 0; b < ND_SKETCH_BANDS && rc == ND_OK; b++) {
        unsigned taken = 0;
        size_t at = 0;
        if (m) memory_band(m, (uint64_t)b << 32 | sk->band[b], mk, &nm);
        /* the family only where the filter leaves the prefix possible */
        int seek = !m || db_band_filter_may_hold(&m->filter, b, sk->band[b]);
        if (seek && !it && (rc = st_iter_new_band(&it, db->store)) < 0) break;
        db_band_key_encode(prefix, b, sk->band[b], NULL, 0);
        if (seek) st_iter_seek(it, prefix, sizeof prefix);
        /* The two sources merged in key order, each document once. */
        while (rc == ND_OK && taken < ND_DB_BAND_CANDIDATES) {
            const char *fk = NULL, *k;
            size_t fl = 0, kl;
            if (seek && st_iter_valid(it)) {
                const char *ik = st_iter_key(it, &fl);
                if (fl > sizeof prefix && memcmp(ik, prefix, sizeof prefix) == 0) {
                    fk = ik + sizeof prefix;
                    fl -= sizeof prefix;
                } else if (fl == sizeof prefix && memcmp(ik, prefix, sizeof prefix) == 0) {
                    rc = nd_err_set(ND_ECORRUPT, "band family: an entry of band %u without a key",
                                    b);
                    break;
                }
            }
            const key_ref *x = at < nm ? &mk[at] : NULL;
            if (!fk && !x) break;
            int cmp = !x ? -1 : !fk ? 1 : 0; /* < 0: the family's is first */
            if (fk && x) cmp = ref_cmp(&(key_ref){fk, fl}, x);
            if (cmp < 0) {
                k = fk;
                kl = fl;
            } else {
                k = x->key;
                kl = x->len;
                at++;
            }
            rc = results_push(c, 0, dist_unknown, k, kl, 0, 0);
            if (cmp <= 0) st_iter_next(it); /* the family's taken (or in both) */
            taken++;
        }
    }
    if (m) pthread_rwlock_unlock(&m->lock);
    if (rc == ND_OK && it) rc = st_iter_status(it);
    st_iter_free(it);
    return rc;
}

int db_bands_has(nd_db *db, unsigned b, uint32_t band, const void *key, size_t klen, int *out)
{
    db_bands *m = db->bands;
    uint8_t bk[DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN];
    *out = 0;
    if (m) {
        uint64_t full = (uint64_t)b << 32 | band;
        pthread_rwlock_rdlock(&m->lock);
        *out = find(&m->act, full, key, klen) != NONE || find(&m->frz, full, key, klen) != NONE;
        pthread_rwlock_unlock(&m->lock);
        if (*out) return ND_OK;
    }
    char *v = NULL;
    size_t vlen;
    int rc = st_get(db->store, ST_CF_BAND, bk, db_band_key_encode(bk, b, band, key, klen), &v,
                    &vlen);
    free(v);
    if (rc == ND_ENOTFOUND) return ND_OK;
    ND_FORWARD(rc);
    *out = 1;
    return ND_OK;
}

/* Count m's live entries the family lacks into *n and *bytes. */
static int unflushed(nd_db *db, const band_mem *m, uint64_t *n, uint64_t *bytes)
{
    uint8_t bk[DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN];
    for (size_t i = 0; i < m->n; i++) {
        const band_ent *x = &m->e[i];
        if (x->key_len == DEAD) continue;
        size_t kl = db_band_key_encode(bk, x->band, x->bkey, m->keys + x->key_off, x->key_len);
        char *v = NULL;
        size_t vlen;
        int rc = st_get(db->store, ST_CF_BAND, bk, kl, &v, &vlen);
        free(v);
        if (rc == ND_ENOTFOUND) {
            (*n)++;
            *bytes += kl;
        } else if (rc < 0) {
            return rc;
        }
    }
    return ND_OK;
}

int db_bands_unflushed(nd_db *db, uint64_t *n, uint64_t *bytes)
{
    db_bands *m = db->bands;
    *n = *bytes = 0;
    if (!m) return ND_OK;
    pthread_rwlock_rdlock(&m->lock);
    int rc = unflushed(db, &m->act, n, bytes);
    if (rc == ND_OK) rc = unflushed(db, &m->frz, n, bytes);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}
