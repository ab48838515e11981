/*
 * expire_walk.c — the walk of rev that finds what an expiry by a new
 * generation removes (expire_walk.h).
 *
 * Eight parts by the top 3 bits of the fingerprint, taken in turn by the
 * two walkers, so that a skewed store still shares the work; a part never
 * splits a fingerprint's documents, so that it alone can tell a dead one.
 * Memory: each expired document's rev key and 8 bytes (its offset), 8
 * bytes a dead fingerprint; a part's sort takes 36 bytes more an expired
 * document of the part, for its length, and its layout in docs' order a
 * copy of the part's keys, which then keep 20 bytes each (offset,
 * fingerprint, rank).
 */
#include "expire_walk.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nd_bytes.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "nd_task.h"
#include "sort.h"

#define PARTS 8
#define PART_SHIFT 61
/* The stop is asked at each part and every WALK_ASK_EVERY entries; the
 * caller's walker, its parts done, asks while the other walks its last
 * (db_stop_wait: at 100M documents a part takes about 2 s). */
#define WALK_ASK_EVERY 65536u
#define PREFETCH_AHEAD 16

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

/* Keys read out of their order, key idx[i] of n at step i: fetched
 * PREFETCH_AHEAD steps ahead, and their offsets twice as far (a step's
 * work, an SST writer's call, hides no miss of the next). */
static inline void prefetch_key(const expire_keys *k, const uint32_t *idx, size_t i, size_t n)
{
    if (i + 2 * PREFETCH_AHEAD < n) __builtin_prefetch(&k->off.v[idx[i + 2 * PREFETCH_AHEAD]]);
    if (i + PREFETCH_AHEAD < n) __builtin_prefetch(k->keys + k->off.v[idx[i + PREFETCH_AHEAD]]);
}

/* Part out's keys, gathered in rev's order, laid out in docs' order:
 * each one's fingerprint and place kept in fp and rank. */
static int sort_part(expire_part *out)
{
    expire_keys *rev = &out->keys, docs = {0};
    size_t n = expire_keys_count(rev);
    ND_RETURN_IF(n > UINT32_MAX, ND_ELIMIT, "expire: more than 2^32 documents in a part");
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    sort_item *items = malloc((n ? n : 1) * sizeof *items);
    sort_item *tmp = malloc((n ? n : 1) * sizeof *tmp);
    out->rank = malloc((n ? n : 1) * sizeof *out->rank);
    int rc = ND_OK;
    if (!order || !items || !tmp || !out->rank) {
        rc = nd_err_set(ND_ENOMEM, "expire: out of memory to sort %zu keys", n);
        goto cleanup;
    }
    sort_strings(rev->keys, rev->off.v, 8, n, order, items, tmp);
    free(items);
    free(tmp);
    items = tmp = NULL;
    ND_TRY(st_u64s_reserve(&out->fp, n));
    for (size_t i = 0; i < n; i++)
        ND_TRY(st_u64s_push(&out->fp, nd_load_be64(rev->keys + rev->off.v[i])));
    for (size_t j = 0; j < n; j++) {
        prefetch_key(rev, order, j, n);
        uint64_t at = rev->off.v[order[j]];
        size_t dlen = (size_t)(rev->off.v[order[j] + 1] - at) - 8;
        ND_TRY(expire_keys_push(&docs, rev->keys + at + 8, dlen));
        out->rank[order[j]] = (uint32_t)j;
    }
    expire_keys_dispose(rev);
    *rev = docs;
    docs = (expire_keys){0};
cleanup:
    expire_keys_dispose(&docs);
    free(order);
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
    ND_FORWARD(db_stop_check(w->stop, w->asks));
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
        if ((++seen & (WALK_ASK_EVERY - 1)) == 0) ND_TRY(db_stop_check(w->stop, w->asks));
        ND_TRY(expire_rev_time(w->db, k, klen, v, vlen, &time));
        if (!db_doc_expired(time, w->before)) kept = 1;
        else ND_TRY(expire_keys_push(&out->keys, k, klen));
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
    return rc == ND_OK && w->asks ? db_stop_wait(w->stop, w->walking) : rc;
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
    for (unsigned p = 0; p < PARTS; p++) n += expire_keys_count(&w->part[p].keys);
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

/* Document key i of part p, in docs' order. */
static const char *part_key(const expire_part *p, size_t i, size_t *klen)
{
    *klen = (size_t)(p->keys.off.v[i + 1] - p->keys.off.v[i]);
    return p->keys.keys + p->keys.off.v[i];
}

int expire_walk_each_rev(const expire_walk *w, expire_key_fn fn, void *arg)
{
    char *key = NULL;
    size_t cap = 0;
    int rc = ND_OK;
    for (unsigned p = 0; p < PARTS && rc == ND_OK; p++)
        for (size_t i = 0, n = w->part[p].fp.n; i < n && rc == ND_OK; i++) {
            const expire_part *part = &w->part[p];
            size_t dlen;
            prefetch_key(&part->keys, part->rank, i, n);
            const char *d = part_key(part, part->rank[i], &dlen);
            if (8 + dlen > cap) {
                char *grown = realloc(key, cap = 2 * (8 + dlen));
                if (!grown) {
                    rc = nd_err_set(ND_ENOMEM, "expire: out of memory for a key");
                    break;
                }
                key = grown;
            }
            nd_store_be64(key, part->fp.v[i]);
            memcpy(key + 8, d, dlen);
            rc = fn(arg, key, 8 + dlen);
        }
    free(key);
    return rc;
}

/* Part p's next document key in docs' order, or none once all are given. */
typedef struct merge_head {
    const char *key;
    size_t len, at;
} merge_head;

static void head_load(merge_head *h, const expire_part *part)
{
    h->key = h->at < expire_keys_count(&part->keys) ? part_key(part, h->at, &h->len) : NULL;
}

/* Head a before head b: an exhausted head is after every other. */
static int head_less(const merge_head *a, const merge_head *b)
{
    return a->key && (!b->key || nd_bytes_cmp(a->key, a->len, b->key, b->len) < 0);
}

int expire_walk_each_doc(const expire_walk *w, expire_key_fn fn, void *arg)
{
    merge_head head[PARTS];
    for (unsigned p = 0; p < PARTS; p++) {
        head[p].at = 0;
        head_load(&head[p], &w->part[p]);
    }
    for (;;) { /* the smallest of the parts' next keys */
        unsigned best = 0;
        for (unsigned p = 1; p < PARTS; p++)
            if (head_less(&head[p], &head[best])) best = p;
        if (!head[best].key) return ND_OK;
        ND_FORWARD(fn(arg, head[best].key, head[best].len));
        head[best].at++;
        head_load(&head[best], &w->part[best]);
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
        expire_keys_dispose(&w->part[p].keys);
        st_u64s_dispose(&w->part[p].fp);
        free(w->part[p].rank);
        st_u64s_dispose(&w->part[p].dead);
    }
    memset(w, 0, sizeof *w);
}
