/*
 * cmp_table.c — operations on one permuted table: range reads, inserts,
 * removals and full scans, over the key/value layout of storage.h.
 *
 * A table family maps BE64(v) to 'F' (a fresh single entry v) or to 'R' +
 * an encoded run whose head is v. Runs cover disjoint ranges; a fresh entry
 * may lie between the values of a run (until the fold merges it) but never
 * equals one. Reads go through st_iter, so this file never sees RocksDB.
 */
#include <stdlib.h>
#include <string.h>

#include "cmp_codec.h"
#include "cmp_table.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "storage.h"

struct st_reader {
    st_store *store;
    cmp_codec *codec;
    uint64_t *buf; /* decoded run, CMP_RUN_MAX values */
};

int st_u64s_push(st_u64s *a, uint64_t x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        uint64_t *v = realloc(a->v, cap * sizeof *v);
        ND_RETURN_IF(!v, ND_ENOMEM, "out of memory growing an array to %zu entries", cap);
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return ND_OK;
}

void st_u64s_dispose(st_u64s *a)
{
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

int st_reader_new(st_reader **out, st_store *s)
{
    st_reader *r = calloc(1, sizeof *r);
    ND_RETURN_IF(!r, ND_ENOMEM, "storage: out of memory");
    r->store = s;
    r->buf = malloc(CMP_RUN_MAX * sizeof *r->buf);
    if (!r->buf || cmp_codec_new(&r->codec) < 0) {
        st_reader_free(r);
        return nd_err_set(ND_ENOMEM, "storage: out of memory");
    }
    *out = r;
    return ND_OK;
}

void st_reader_free(st_reader *r)
{
    if (!r) return;
    cmp_codec_free(r->codec);
    free(r->buf);
    free(r);
}

int tbl_decode_value(cmp_codec *c, uint64_t *buf, size_t *n, unsigned t, uint64_t key,
                     const char *val, size_t vlen)
{
    if (vlen == 1 && val[0] == 'F') {
        buf[0] = key;
        *n = 1;
        return ND_OK;
    }
    if (vlen >= 1 && val[0] == 'R') {
        int rc = cmp_run_decode(c, buf, CMP_RUN_MAX, n, key, val + 1, vlen - 1);
        if (rc < 0)
            return nd_err_wrap(rc == ND_ELIMIT ? ND_ECORRUPT : rc,
                               "table %u, run %016llx", t, (unsigned long long)key);
        return ND_OK;
    }
    return nd_err_set(ND_ECORRUPT, "table %u, key %016llx: unknown value tag", t,
                      (unsigned long long)key);
}

/* Position it on the entry that may hold x: x's own key, else the run
 * starting at or before x. Fresh entries below x are stepped over, since a
 * run further back may still cover x. Invalid if nothing starts <= x. */
static void seek_covering(st_iter *it, uint64_t x)
{
    uint8_t kb[8];
    nd_store_be64(kb, x);
    st_iter_seek_for_prev(it, kb, 8);
    while (st_iter_valid(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        if (!(vlen == 1 && v[0] == 'F') || klen != 8 || nd_load_be64(k) == x) return;
        st_iter_prev(it);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int st_table_range(st_reader *r, unsigned t, uint64_t lo, uint64_t hi, st_u64s *out)
{
    st_iter *it = NULL;
    uint8_t kb[8];
    size_t start = out->n;
    int rc, sorted = 1;
    ND_FORWARD(st_iter_new(&it, r->store, ST_CF_TABLE(t), NULL, 1));
    /* The run that may hold lo starts at or before lo. */
    nd_store_be64(kb, lo);
    seek_covering(it, lo);
    if (!st_iter_valid(it)) st_iter_seek(it, kb, 8);
    for (; st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen, n;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        if (klen != 8) ND_FAIL(ND_ECORRUPT, "table %u: key of %zu bytes", t, klen);
        uint64_t key = nd_load_be64(k);
        if (key > hi) break;
        if (vlen == 1 && v[0] == 'F') {
            if (key < lo) continue;
            if (out->n > start && out->v[out->n - 1] > key) sorted = 0;
            ND_TRY(st_u64s_push(out, key));
            continue;
        }
        ND_TRY(tbl_decode_value(r->codec, r->buf, &n, t, key, v, vlen));
        for (size_t i = 0; i < n; i++) {
            if (r->buf[i] < lo) continue;
            if (r->buf[i] > hi) break;
            if (out->n > start && out->v[out->n - 1] > r->buf[i]) sorted = 0;
            ND_TRY(st_u64s_push(out, r->buf[i]));
        }
    }
    ND_TRY(st_iter_status(it));
    if (!sorted) qsort(out->v + start, out->n - start, sizeof *out->v, cmp_u64);
    rc = ND_OK;
cleanup:
    st_iter_free(it);
    return rc;
}

int st_table_insert(st_store *s, st_batch *b, unsigned t, uint64_t pfp)
{
    (void)s;
    uint8_t kb[8];
    nd_store_be64(kb, pfp);
    return st_batch_put(b, ST_CF_TABLE(t), kb, 8, "F", 1);
}

int tbl_put_run(st_batch *b, unsigned t, cmp_codec *c, const uint64_t *vals, size_t n)
{
    uint8_t kb[8];
    nd_store_be64(kb, vals[0]);
    if (n == 1) return st_batch_put(b, ST_CF_TABLE(t), kb, 8, "F", 1);
    size_t cap = cmp_run_bound(n) + 1, len;
    uint8_t *buf = malloc(cap);
    ND_RETURN_IF(!buf, ND_ENOMEM, "storage: out of memory encoding a run of %zu", n);
    buf[0] = 'R';
    int rc = cmp_run_encode(c, buf + 1, cap - 1, &len, vals, n);
    if (rc == ND_OK) rc = st_batch_put(b, ST_CF_TABLE(t), kb, 8, buf, len + 1);
    free(buf);
    return rc;
}

int st_table_remove(st_store *s, st_batch *b, unsigned t, uint64_t pfp)
{
    uint8_t kb[8];
    st_iter *it = NULL;
    cmp_codec *c = NULL;
    uint64_t *vals = NULL;
    int rc;
    nd_store_be64(kb, pfp);
    /* Through the batch: earlier changes of the same batch are seen. */
    ND_TRY(st_iter_new(&it, s, ST_CF_TABLE(t), b, 1));
    seek_covering(it, pfp);
    if (!st_iter_valid(it)) {
        ND_TRY(st_iter_status(it));
        ND_FAIL(ND_ENOTFOUND, "table %u: %016llx not stored", t, (unsigned long long)pfp);
    }
    size_t klen, vlen, n;
    const char *k = st_iter_key(it, &klen);
    const char *v = st_iter_value(it, &vlen);
    if (klen != 8) ND_FAIL(ND_ECORRUPT, "table %u: key of %zu bytes", t, klen);
    uint64_t key = nd_load_be64(k);
    if (vlen == 1 && v[0] == 'F') {
        if (key != pfp)
            ND_FAIL(ND_ENOTFOUND, "table %u: %016llx not stored", t, (unsigned long long)pfp);
        rc = st_batch_delete(b, ST_CF_TABLE(t), kb, 8);
        goto cleanup;
    }
    vals = malloc(CMP_RUN_MAX * sizeof *vals);
    if (!vals || cmp_codec_new(&c) < 0) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    ND_TRY(tbl_decode_value(c, vals, &n, t, key, v, vlen));
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (vals[mid] < pfp) lo = mid + 1;
        else hi = mid;
    }
    if (lo == n || vals[lo] != pfp)
        ND_FAIL(ND_ENOTFOUND, "table %u: %016llx not stored", t, (unsigned long long)pfp);
    memmove(vals + lo, vals + lo + 1, (n - lo - 1) * sizeof *vals);
    n--;
    if (lo == 0) { /* the head goes: the run moves to a new key */
        uint8_t old[8];
        nd_store_be64(old, key);
        ND_TRY(st_batch_delete(b, ST_CF_TABLE(t), old, 8));
    }
    rc = n ? tbl_put_run(b, t, c, vals, n) : ND_OK;
cleanup:
    st_iter_free(it);
    cmp_codec_free(c);
    free(vals);
    return rc;
}

int st_table_scan(st_store *s, unsigned t, st_table_cb cb, void *payload)
{
    st_iter *it = NULL;
    cmp_codec *c = NULL;
    uint64_t *vals = malloc(CMP_RUN_MAX * sizeof *vals);
    uint64_t *last = malloc(CMP_RUN_MAX * sizeof *last); /* previous run */
    size_t nlast = 0;
    int rc, have_prev = 0;
    uint64_t prev_max = 0;
    if (!vals || !last) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    ND_TRY(cmp_codec_new(&c));
    ND_TRY(st_iter_new(&it, s, ST_CF_TABLE(t), NULL, 1));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen, n;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        if (klen != 8) ND_FAIL(ND_ECORRUPT, "table %u: key of %zu bytes", t, klen);
        uint64_t key = nd_load_be64(k);
        int is_run = !(vlen == 1 && v[0] == 'F');
        ND_TRY(tbl_decode_value(c, vals, &n, t, key, v, vlen));
        if (is_run) {
            if (have_prev && key <= prev_max)
                ND_FAIL(ND_ECORRUPT, "table %u: run %016llx overlaps the previous run", t,
                        (unsigned long long)key);
            have_prev = 1;
            prev_max = vals[n - 1];
            memcpy(last, vals, n * sizeof *vals);
            nlast = n;
        } else if (have_prev && key <= prev_max) {
            /* A fresh entry inside the previous run's range must not
             * duplicate one of its values. */
            size_t lo = 0, hi = nlast;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (last[mid] < key) lo = mid + 1;
                else hi = mid;
            }
            if (lo < nlast && last[lo] == key)
                ND_FAIL(ND_ECORRUPT, "table %u: %016llx stored twice", t, (unsigned long long)key);
        }
        rc = cb(vals, n, is_run, klen + vlen, payload);
        if (rc) goto cleanup;
    }
    rc = st_iter_status(it);
cleanup:
    st_iter_free(it);
    cmp_codec_free(c);
    free(vals);
    free(last);
    return rc;
}
