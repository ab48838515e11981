/*
 * expire_walk.c — the walk of rev that finds what an expiry by a new
 * generation removes (expire_walk.h).
 *
 * Eight parts by the top 3 bits of the fingerprint, taken in turn by the
 * two walkers, so that a skewed store still shares the work; a part never
 * splits a fingerprint's documents, so that it alone can tell a dead one.
 * Memory: each expired document's rev key and 12 bytes (its offset and
 * place in the order), and 8 bytes a dead fingerprint; a part's sort
 * takes 32 bytes more an expired document of the part, for its length.
 */
#include "expire_walk.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nd_endian.h"
#include "nd_error.h"
#include "nd_task.h"
#include "sort.h"

#define PARTS 8
#define PART_SHIFT 61
/* The stop is asked at each part and every WALK_ASK_EVERY entries; the
 * caller's walker, its parts done, asks every WALK_WAIT_US while the
 * other walks its last (at 100M documents a part takes about 2 s). */
#define WALK_ASK_EVERY 65536u
#define WALK_WAIT_US 50000

int expire_keys_push(expire_keys *k, const char *key, size_t klen)
{
    if (k->off.n == 0) ND_FORWARD(st_u64s_push(&k->off, 0));
    if (k->len + klen > k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 1u << 20;
        while (cap < k->len + klen) cap *= 2;
        char *grown = realloc(k->keys, cap);
        ND_RETURN_IF(!grown, ND_ENOMEM, "expire: out of memory for the expired keys (%zu bytes)",
                     cap);
        k->keys = grown;
        k->cap = cap;
    }
    memcpy(k->keys + k->len, key, klen);
    k->len += klen;
    return st_u64s_push(&k->off, k->len);
}

size_t expire_keys_count(const expire_keys *k) { return k->off.n ? k->off.n - 1 : 0; }

void expire_keys_dispose(expire_keys *k)
{
    free(k->keys);
    st_u64s_dispose(&k->off);
    memset(k, 0, sizeof *k);
}

int expire_rev_time(nd_db *db, const char *k, size_t klen, const char *v, size_t vlen,
                    int64_t *time)
{
    char *dv = NULL;
    size_t dlen;
    int rc = db_rev_decode(v, vlen, NULL, time);
    if (rc != 0) return rc < 0 ? rc : ND_OK;
    ND_RETURN_IF(klen <= 8, ND_ECORRUPT, "rev entry of %zu bytes has no document key", klen);
    rc = st_get(db->store, ST_CF_DOCS, k + 8, klen - 8, &dv, &dlen);
    if (rc == ND_ENOTFOUND)
        return nd_err_set(ND_ECORRUPT, "rev entry names a document docs does not hold");
    if (rc == ND_OK) rc = db_doc_decode(dv, dlen, NULL, NULL, time);
    free(dv);
    return rc;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct walker {
    nd_db *db;
    db_stop *stop;
    int asks; /* on the caller's thread: asks the callback; else reads its answer */
    int64_t before;
    expire_walk *w;
    atomic_uint *next;    /* the next part to take */
    atomic_uint *walking; /* walkers not yet done */
} walker;

static int walker_stop(const walker *w)
{
    return w->asks ? db_stop_ask(w->stop) : db_stop_seen(w->stop);
}

/* Part p's document keys sorted: out->order. */
static int sort_part(expire_part *out)
{
    size_t n = expire_keys_count(&out->rev);
    ND_RETURN_IF(n > UINT32_MAX, ND_ELIMIT, "expire: more than 2^32 documents in a part");
    out->order = malloc((n ? n : 1) * sizeof *out->order);
    sort_item *items = malloc((n ? n : 1) * sizeof *items);
    sort_item *tmp = malloc((n ? n : 1) * sizeof *tmp);
    int rc = ND_OK;
    if (!out->order || !items || !tmp)
        rc = nd_err_set(ND_ENOMEM, "expire: out of memory to sort %zu keys", n);
    else
        sort_strings(out->rev.keys, out->rev.off.v, 8, n, out->order, items, tmp);
    free(items);
    free(tmp);
    return rc;
}

/* Part p of rev into out. */
static int walk_part(const walker *w, unsigned p, expire_part *out)
{
    st_iter *it = NULL;
    uint8_t lo[8];
    uint64_t cur = 0, seen = 0;
    int have = 0, kept = 0, rc;
    nd_store_be64(lo, (uint64_t)p << PART_SHIFT);
    ND_FORWARD(walker_stop(w));
    ND_TRY(st_iter_new_scan(&it, w->db->store, ST_CF_REV));
    for (st_iter_seek(it, lo, sizeof lo); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen), *v = st_iter_value(it, &vlen);
        int64_t time;
        if (klen < 8) ND_FAIL(ND_ECORRUPT, "rev key of %zu bytes", klen);
        uint64_t fp = nd_load_be64(k);
        if (fp >> PART_SHIFT != p) break;
        if (!have || fp != cur) {
            if (have && !kept) ND_TRY(st_u64s_push(&out->dead, cur));
            cur = fp;
            have = 1;
            kept = 0;
        }
        if ((++seen & (WALK_ASK_EVERY - 1)) == 0) ND_TRY(walker_stop(w));
        ND_TRY(expire_rev_time(w->db, k, klen, v, vlen, &time));
        if (!db_doc_expired(time, w->before)) kept = 1;
        else ND_TRY(expire_keys_push(&out->rev, k, klen));
    }
    ND_TRY(st_iter_status(it));
    if (have && !kept) ND_TRY(st_u64s_push(&out->dead, cur));
    ND_TRY(sort_part(out));
cleanup:
    st_iter_free(it);
    return rc;
}

static int walker_run(void *arg)
{
    const walker *w = arg;
    int rc = ND_OK;
    for (unsigned p; rc == ND_OK && (p = atomic_fetch_add(w->next, 1)) < PARTS;)
        rc = walk_part(w, p, &w->w->part[p]);
    atomic_fetch_sub(w->walking, 1);
    while (rc == ND_OK && w->asks && atomic_load(w->walking) > 0) {
        usleep(WALK_WAIT_US);
        rc = walker_stop(w);
    }
    return rc;
}

int expire_walk_rev(expire_walk *w, nd_db *db, db_stop *stop, int two, int64_t before)
{
    atomic_uint next = 0, walking = two ? 2 : 1;
    nd_task task;
    memset(w, 0, sizeof *w);
    walker mine = {db, stop, 1, before, w, &next, &walking};
    walker other = {db, stop, 0, before, w, &next, &walking};
    if (two) nd_task_start(&task, walker_run, &other, 1);
    int rc = walker_run(&mine);
    return two ? nd_task_wait(&task, rc) : rc;
}

uint64_t expire_walk_count(const expire_walk *w)
{
    uint64_t n = 0;
    for (unsigned p = 0; p < PARTS; p++) n += expire_keys_count(&w->part[p].rev);
    return n;
}

int expire_walk_dead(expire_walk *w, st_u64s *dead)
{
    size_t n = 0;
    for (unsigned p = 0; p < PARTS; p++) n += w->part[p].dead.n;
    ND_FORWARD(st_u64s_reserve(dead, n));
    for (unsigned p = 0; p < PARTS; p++) {
        ND_FORWARD(st_u64s_append(dead, w->part[p].dead.v, w->part[p].dead.n));
        st_u64s_dispose(&w->part[p].dead);
    }
    return ND_OK;
}

/* ---- the keys ------------------------------------------------------------ */

/* Rev key i of part p, or with skip 8 its document key. */
static const char *part_key(const expire_part *p, size_t i, size_t skip, size_t *klen)
{
    *klen = (size_t)(p->rev.off.v[i + 1] - p->rev.off.v[i]) - skip;
    return p->rev.keys + p->rev.off.v[i] + skip;
}

int expire_walk_each_rev(const expire_walk *w, expire_key_fn fn, void *arg)
{
    for (unsigned p = 0; p < PARTS; p++)
        for (size_t i = 0, n = expire_keys_count(&w->part[p].rev); i < n; i++) {
            size_t klen;
            const char *k = part_key(&w->part[p], i, 0, &klen);
            ND_FORWARD(fn(arg, k, klen));
        }
    return ND_OK;
}

static int key_less(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c < 0 || (c == 0 && alen < blen);
}

int expire_walk_each_doc(const expire_walk *w, expire_key_fn fn, void *arg)
{
    size_t at[PARTS] = {0};
    for (;;) { /* the smallest of the parts' next keys: 8 compares, a few ns each */
        const char *best = NULL;
        size_t best_len = 0;
        unsigned from = 0;
        for (unsigned p = 0; p < PARTS; p++) {
            const expire_part *part = &w->part[p];
            if (at[p] == expire_keys_count(&part->rev)) continue;
            size_t klen;
            const char *k = part_key(part, part->order[at[p]], 8, &klen);
            if (!best || key_less(k, klen, best, best_len)) {
                best = k;
                best_len = klen;
                from = p;
            }
        }
        if (!best) return ND_OK;
        at[from]++;
        ND_FORWARD(fn(arg, best, best_len));
    }
}

#define SAMPLE_SPOTS 64
#define SAMPLE_RUN 1024

int expire_walk_sample(nd_db *db, int64_t before, uint64_t *seen, uint64_t *expired)
{
    st_iter *it = NULL;
    int rc;
    *seen = *expired = 0;
    ND_TRY(st_iter_new_scan(&it, db->store, ST_CF_REV));
    for (unsigned spot = 0; spot < SAMPLE_SPOTS; spot++) {
        uint8_t at[8];
        nd_store_be64(at, (uint64_t)spot << 58);
        st_iter_seek(it, at, sizeof at);
        for (unsigned i = 0; i < SAMPLE_RUN && st_iter_valid(it); i++, st_iter_next(it)) {
            size_t klen, vlen;
            const char *k = st_iter_key(it, &klen), *v = st_iter_value(it, &vlen);
            int64_t time;
            ND_TRY(expire_rev_time(db, k, klen, v, vlen, &time));
            ++*seen;
            *expired += db_doc_expired(time, before);
        }
    }
    ND_TRY(st_iter_status(it));
cleanup:
    st_iter_free(it);
    return rc;
}

void expire_walk_dispose(expire_walk *w)
{
    for (unsigned p = 0; p < PARTS; p++) {
        expire_keys_dispose(&w->part[p].rev);
        free(w->part[p].order);
        st_u64s_dispose(&w->part[p].dead);
    }
    memset(w, 0, sizeof *w);
}
