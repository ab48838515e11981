/*
 * cmp_scan.c — a full scan of one table (st_table_scan): every value
 * once, each run decoded and checked whole, for verify and stats.
 *
 * The scan walks both key spaces of one snapshot side by side, so the
 * callback sees every value once and in nearly ascending order: the fresh
 * entries below a run come before it, those inside its range right after
 * it. Fresh values inside a run's range are checked against the run.
 */
#include "cmp_scan.h"

#include <stdlib.h>

#include "cmp_codec.h"
#include "cmp_layout.h"
#include "cmp_read.h"
#include "nd_error.h"

typedef struct scan_state {
    unsigned t;
    st_iter *fresh;      /* positioned in the fresh space */
    const uint64_t *run; /* the previous run's values, for the overlap check */
    size_t nrun;
    st_table_cb cb;
    void *payload;
} scan_state;

static int in_sorted(const uint64_t *a, size_t n, uint64_t x)
{
    size_t i = st_u64_lower_bound(a, n, x);
    return i < n && a[i] == x;
}

/* Emit fresh entries below limit (all when have_limit is 0). */
static int emit_fresh(scan_state *st, int have_limit, uint64_t limit)
{
    uint64_t v;
    int rc = ND_OK;
    for (; st_iter_table_key(st->fresh, TBL_FRESH, st->t, &v, &rc); st_iter_next(st->fresh)) {
        if (have_limit && v >= limit) return ND_OK;
        if (st->nrun && v <= st->run[st->nrun - 1] && in_sorted(st->run, st->nrun, v))
            return nd_err_set(ND_ECORRUPT, "table %u: %016llx stored twice", st->t,
                              (unsigned long long)v);
        rc = st->cb(&v, 1, 0, TBL_KEY_LEN, st->payload);
        if (rc) return rc;
    }
    ND_FORWARD(rc);
    return st_iter_status(st->fresh);
}

int st_table_scan(st_store *s, unsigned t, st_table_cb cb, void *payload)
{
    st_snap *snap = NULL;
    st_iter *it = NULL;
    cmp_codec *c = NULL;
    uint8_t kb[TBL_KEY_LEN];
    uint64_t *bufs[2] = {malloc(CMP_RUN_MAX * sizeof(uint64_t)),
                         malloc(CMP_RUN_MAX * sizeof(uint64_t))};
    scan_state st = {.t = t, .cb = cb, .payload = payload};
    int rc, cur = 0, have_prev = 0;
    uint64_t tail, prev_max = 0;
    if (!bufs[0] || !bufs[1]) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    ND_TRY(cmp_codec_new(&c));
    ND_TRY(st_snap_new(&snap, s));
    ND_TRY(st_iter_new_at(&it, s, ST_CF_TABLE(t), snap));
    ND_TRY(st_iter_new_at(&st.fresh, s, ST_CF_TABLE(t), snap));
    /* Keys outside the two spaces are corruption: one sorting before the
     * fresh space is first, one between the spaces ends the fresh walk,
     * one after the run space ends the run walk. */
    st_iter_seek_first(it);
    if (st_iter_valid(it)) {
        size_t klen;
        char tag;
        const char *k = st_iter_key(it, &klen);
        ND_TRY(tbl_parse_key(&tag, &tail, t, k, klen));
    }
    ND_TRY(st_iter_status(it));
    tbl_key(kb, TBL_FRESH, 0);
    st_iter_seek(st.fresh, kb, sizeof kb);
    tbl_key(kb, TBL_RUN, 0);
    rc = ND_OK;
    for (st_iter_seek(it, kb, sizeof kb); st_iter_table_key(it, TBL_RUN, t, &tail, &rc);
         st_iter_next(it)) {
        size_t vlen, n;
        const char *val = st_iter_value(it, &vlen);
        ND_TRY(tbl_decode_run(c, bufs[cur], &n, t, tail, 0, val, vlen));
        uint64_t head = bufs[cur][0];
        rc = emit_fresh(&st, 1, head); /* checked against the previous run */
        if (rc) goto cleanup;          /* an error, or the callback's stop */
        if (have_prev && head <= prev_max)
            ND_FAIL(ND_ECORRUPT, "table %u: run %016llx overlaps the previous run", t,
                    (unsigned long long)head);
        have_prev = 1;
        prev_max = bufs[cur][n - 1];
        st.run = bufs[cur];
        st.nrun = n;
        cur ^= 1;
        rc = cb(st.run, n, 1, TBL_KEY_LEN + vlen, payload);
        if (rc) goto cleanup;
    }
    ND_TRY(rc);
    ND_TRY(st_iter_status(it));
    if (st_iter_valid(it)) ND_FAIL(ND_ECORRUPT, "table %u: key outside the table's spaces", t);
    rc = emit_fresh(&st, 0, 0);
    if (rc) goto cleanup;
    if (st_iter_table_key(st.fresh, TBL_RUN, t, &tail, &rc) == 0 && st_iter_valid(st.fresh))
        ND_FAIL(ND_ECORRUPT, "table %u: key outside the table's spaces", t);
    ND_TRY(rc);
cleanup:
    st_iter_free(it);
    st_iter_free(st.fresh);
    st_snap_free(snap);
    cmp_codec_free(c);
    free(bufs[0]);
    free(bufs[1]);
    return rc;
}
