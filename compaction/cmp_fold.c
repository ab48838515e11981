/*
 * cmp_fold.c — the compaction that folds fresh entries into runs.
 *
 * A table is a sequence of keys in order; a "group" is a run followed by
 * the fresh entries up to the next run (or, at the start, fresh entries with
 * no run before them). Folding a group merges the run with its fresh
 * entries and writes the result back as runs of about run_size values;
 * groups without fresh entries are left untouched (not even decoded), so a
 * fold costs a walk over the keys plus work proportional to the groups that
 * changed.
 *
 * The work is cut into steps. A step holds the engine's writer lock, folds
 * groups until about FOLD_STEP_ENTRIES values were rewritten, and writes
 * one batch: it deletes the old keys and puts the new runs, which hold
 * exactly the same values. Every step therefore preserves the table's set,
 * and a crash between (or during: the batch is atomic) steps loses nothing.
 * Writers run between steps; their fresh entries wait for the next fold.
 */
#include <stdlib.h>
#include <string.h>

#include "cmp_codec.h"
#include "cmp_table.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "storage.h"

#define FOLD_STEP_ENTRIES 65536u
#define FOLD_STEP_KEYS 262144u /* keys walked per step, even if untouched */

typedef struct fold_state {
    st_store *s;
    unsigned t, run_size;
    cmp_codec *codec;
    st_batch *batch;
    uint64_t *dec;   /* decoded run, CMP_RUN_MAX */
    st_u64s fresh;   /* fresh entries of the current group */
    st_u64s merged;  /* run + fresh, merged */
    int have_run;
    uint64_t run_key;
    char *run_val;   /* copy of the current group's run value */
    size_t run_len, run_cap;
    uint64_t rewritten, folded;
} fold_state;

/* Write group values vals[0..n) as runs of about run_size. */
static int put_runs(fold_state *f, const uint64_t *vals, size_t n)
{
    size_t nruns = (n + f->run_size / 2) / f->run_size;
    if (nruns == 0) nruns = 1;
    while (n / nruns > CMP_RUN_MAX) nruns++;
    size_t base = n / nruns, extra = n % nruns, at = 0;
    for (size_t i = 0; i < nruns; i++) {
        size_t len = base + (i < extra);
        ND_FORWARD(tbl_put_run(f->batch, f->t, f->codec, vals + at, len));
        at += len;
    }
    return ND_OK;
}

/* Fold the current group (if it has fresh entries) into the batch. */
static int flush_group(fold_state *f)
{
    uint8_t kb[8];
    if (f->fresh.n == 0) goto reset;
    size_t nrun = 0;
    if (f->have_run)
        ND_FORWARD(tbl_decode_value(f->codec, f->dec, &nrun, f->t, f->run_key, f->run_val,
                                    f->run_len));
    f->merged.n = 0;
    size_t i = 0, j = 0;
    while (i < nrun || j < f->fresh.n) {
        uint64_t x;
        if (j == f->fresh.n || (i < nrun && f->dec[i] < f->fresh.v[j])) x = f->dec[i++];
        else x = f->fresh.v[j++];
        if (f->merged.n && f->merged.v[f->merged.n - 1] >= x)
            return nd_err_set(ND_ECORRUPT, "table %u: %016llx stored twice or out of order", f->t,
                              (unsigned long long)x);
        ND_FORWARD(st_u64s_push(&f->merged, x));
    }
    /* Deletes first: a new run may reuse an old key, and the later put wins. */
    if (f->have_run) {
        nd_store_be64(kb, f->run_key);
        ND_FORWARD(st_batch_delete(f->batch, ST_CF_TABLE(f->t), kb, 8));
    }
    for (size_t k = 0; k < f->fresh.n; k++) {
        nd_store_be64(kb, f->fresh.v[k]);
        ND_FORWARD(st_batch_delete(f->batch, ST_CF_TABLE(f->t), kb, 8));
    }
    ND_FORWARD(put_runs(f, f->merged.v, f->merged.n));
    f->rewritten += f->merged.n;
    f->folded += f->fresh.n;
reset:
    f->fresh.n = 0;
    f->have_run = 0;
    return ND_OK;
}

static int start_group(fold_state *f, uint64_t key, const char *val, size_t len)
{
    if (len > f->run_cap) {
        char *nv = realloc(f->run_val, len);
        ND_RETURN_IF(!nv, ND_ENOMEM, "fold: out of memory");
        f->run_val = nv;
        f->run_cap = len;
    }
    memcpy(f->run_val, val, len);
    f->run_len = len;
    f->run_key = key;
    f->have_run = 1;
    return ND_OK;
}

/* One step from key *pos (inclusive); sets *done at the end of the table. */
static int fold_step(fold_state *f, uint64_t *pos, int *done, int sync)
{
    st_iter *it = NULL;
    uint8_t kb[8];
    size_t keys = 0;
    int rc;
    f->rewritten = 0;
    f->fresh.n = 0;
    f->have_run = 0;
    st_batch_clear(f->batch);
    ND_TRY(st_iter_new(&it, f->s, ST_CF_TABLE(f->t), NULL, 1));
    /* Start at the run covering pos, so a group is never cut in two. */
    nd_store_be64(kb, *pos);
    st_iter_seek_for_prev(it, kb, 8);
    while (st_iter_valid(it)) {
        size_t vlen;
        const char *v = st_iter_value(it, &vlen);
        if (!(vlen == 1 && v[0] == 'F')) break;
        st_iter_prev(it);
    }
    if (!st_iter_valid(it)) st_iter_seek(it, kb, 8);
    *done = 1;
    for (; st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        if (klen != 8) ND_FAIL(ND_ECORRUPT, "table %u: key of %zu bytes", f->t, klen);
        uint64_t key = nd_load_be64(k);
        int fresh = vlen == 1 && v[0] == 'F';
        if (!fresh) {
            ND_TRY(flush_group(f));
            if (f->rewritten >= FOLD_STEP_ENTRIES || keys >= FOLD_STEP_KEYS) {
                *pos = key; /* next step starts at this run */
                *done = 0;
                break;
            }
            ND_TRY(start_group(f, key, v, vlen));
        } else {
            ND_TRY(st_u64s_push(&f->fresh, key));
            if (f->fresh.n >= FOLD_STEP_ENTRIES) {
                /* A long stretch of fresh entries (a bulk load): fold what
                 * we have; the rest lies above it and starts the next step. */
                ND_TRY(flush_group(f));
                st_iter_next(it);
                if (st_iter_valid(it)) {
                    k = st_iter_key(it, &klen);
                    if (klen == 8) {
                        *pos = nd_load_be64(k);
                        *done = 0;
                    }
                }
                break;
            }
        }
        keys++;
    }
    if (*done) ND_TRY(flush_group(f));
    ND_TRY(st_iter_status(it));
    if (st_batch_count(f->batch)) ND_TRY(st_write(f->s, f->batch, sync));
    rc = ND_OK;
cleanup:
    st_iter_free(it);
    return rc;
}

int st_table_fold(st_store *s, unsigned t, unsigned run_size, int sync, st_lock_fn lock,
                  st_lock_fn unlock, void *payload, uint64_t *out_folded)
{
    fold_state f = {0};
    uint64_t pos = 0;
    int done = 0, rc;
    f.s = s;
    f.t = t;
    f.run_size = run_size >= 2 ? (run_size <= CMP_RUN_MAX ? run_size : CMP_RUN_MAX) : 2;
    f.dec = malloc(CMP_RUN_MAX * sizeof *f.dec);
    if (!f.dec) ND_FAIL(ND_ENOMEM, "fold: out of memory");
    ND_TRY(cmp_codec_new(&f.codec));
    ND_TRY(st_batch_new(&f.batch, s));
    while (!done) {
        if (lock) lock(payload);
        rc = fold_step(&f, &pos, &done, sync);
        if (unlock) unlock(payload);
        if (rc < 0) goto cleanup;
    }
    rc = ND_OK;
cleanup:
    if (out_folded) *out_folded = f.folded;
    st_batch_free(f.batch);
    cmp_codec_free(f.codec);
    st_u64s_dispose(&f.fresh);
    st_u64s_dispose(&f.merged);
    free(f.run_val);
    free(f.dec);
    return rc;
}
