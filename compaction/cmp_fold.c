/*
 * cmp_fold.c — merging sorted values into a table's runs: the fold of
 * fresh entries (compaction) and the bulk merge of an import; and the
 * removal of values, each run rewritten once without those it held.
 *
 * merge_runs() is the one algorithm. For the smallest value x not yet
 * placed it finds the first run whose tail is >= x (one forward seek in
 * the run space: runs are keyed by their last value); the group is every
 * new value up to that tail, or every remaining value when no run ends at
 * or above x. The run (if any) is decoded, merged with the group, deleted
 * and written back as runs of about run_size values; the group lies above
 * the previous run's tail, so runs stay disjoint. Runs untouched by new
 * values are never decoded, so the cost is one seek per touched run plus
 * the values rewritten.
 *
 * A fold is cut into steps. A step holds the engine's writer lock, reads up
 * to FOLD_STEP_READ fresh values, merges whole groups until about
 * FOLD_STEP_REWRITE values were rewritten, deletes the fresh keys it
 * placed, and writes one batch holding exactly the same set: a crash
 * between (or during: the batch is atomic) steps loses nothing. A step only
 * ever reads the database as it was before the step, so groups of one step
 * never overlap runs the step itself wrote.
 *
 * Where fresh entries fall into most runs, a seek and a rewrite through
 * the WAL per run cost more than rewriting the whole table: the refold
 * (st_table_refold) walks the runs of a snapshot once, merges the fresh
 * entries of that snapshot in, and writes a file that deletes the whole
 * run space (a range deletion, which does not cover the file's own runs)
 * and holds the new runs, and one that deletes those fresh keys; both are
 * ingested at once. The writers are held off only to take the snapshot
 * and to ingest; a write between that deleted a fresh entry or changed
 * runs would be undone by the files, so then nothing is ingested and the
 * run-by-run fold takes over.
 */
#include "cmp_fold.h"

#include <stdlib.h>
#include <string.h>

#include "cmp_codec.h"
#include "cmp_layout.h"
#include "cmp_read.h"
#include "cmp_table.h"
#include "nd_error.h"

/* A step holds the writers off: at 100M a run rewrite (seek, decode,
 * encode) costs 10-20 us, so a step of 16384 rewritten values (about 128
 * runs) holds the lock a few ms. Where fresh entries are sparse (one per
 * run) a step places about 128 of the values it read; reading 1024, not
 * 65536 as before, keeps the reads it throws away small. */
#define FOLD_STEP_READ 1024u
#define FOLD_STEP_REWRITE 16384u

/* Where the runs of table t go: batch b, or (b NULL) the file of the new
 * generation g, in ascending key order. */
typedef struct tbl_out {
    st_batch *b;
    st_regen *g;
    unsigned t;
} tbl_out;

/* Put vals[0..n) (ascending, 1 <= n <= CMP_RUN_MAX) as one run keyed by
 * vals[n - 1]. */
static int tbl_put_run(const tbl_out *o, cmp_codec *c, const uint64_t *vals, size_t n)
{
    uint8_t kb[TBL_KEY_LEN];
    size_t cap = cmp_run_bound(n), len;
    uint8_t *buf = malloc(cap);
    uint64_t *rev = malloc(n * sizeof *rev);
    int rc = ND_OK;
    if (!buf || !rev) {
        rc = nd_err_set(ND_ENOMEM, "storage: out of memory encoding a run of %zu", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) rev[i] = ~vals[n - 1 - i];
    rc = cmp_run_encode(c, buf, cap, &len, rev, n);
    tbl_key(kb, TBL_RUN, vals[n - 1]);
    if (rc == ND_OK)
        rc = o->b ? st_batch_put(o->b, ST_CF_TABLE(o->t), kb, sizeof kb, buf, len)
                  : st_regen_put(o->g, kb, sizeof kb, buf, len);
out:
    free(buf);
    free(rev);
    return rc;
}

/* Put vals[0..n) as consecutive runs of about run_size values each. */
static int tbl_put_runs(const tbl_out *o, cmp_codec *c, unsigned run_size, const uint64_t *vals,
                 size_t n)
{
    if (run_size < 1) run_size = 1;
    size_t nruns = (n + run_size / 2) / run_size;
    if (nruns == 0) nruns = 1;
    while (n / nruns > CMP_RUN_MAX) nruns++;
    size_t base = n / nruns, extra = n % nruns, at = 0;
    for (size_t i = 0; i < nruns; i++) {
        size_t len = base + (i < extra);
        ND_FORWARD(tbl_put_run(o, c, vals + at, len));
        at += len;
    }
    return ND_OK;
}

typedef struct merger {
    st_store *s;
    unsigned t, run_size;
    cmp_codec *codec;
    uint64_t *dec;  /* decoded run, CMP_RUN_MAX */
    st_u64s merged; /* run + group, merged */
} merger;

static int merger_init(merger *m, st_store *s, unsigned t, unsigned run_size)
{
    memset(m, 0, sizeof *m);
    m->s = s;
    m->t = t;
    m->run_size = run_size >= 2 ? (run_size <= CMP_RUN_MAX ? run_size : CMP_RUN_MAX) : 2;
    m->dec = malloc(CMP_RUN_MAX * sizeof *m->dec);
    ND_RETURN_IF(!m->dec, ND_ENOMEM, "fold: out of memory");
    return cmp_codec_new(&m->codec);
}

static void merger_dispose(merger *m)
{
    cmp_codec_free(m->codec);
    free(m->dec);
    st_u64s_dispose(&m->merged);
}

/* Key value (the tail) of the run-space entry under the iterator; 0 if it
 * is not on one (then *rc may hold a corruption error). */
static int on_run(st_iter *it, unsigned t, uint64_t *tail, int *rc)
{
    return st_iter_table_key(it, TBL_RUN, t, tail, rc);
}

/* Merge the decoded run entries run[0..nrun) with the group g[0..ng) (both
 * ascending) into m->merged; *put_new counts the group's values that were
 * not in the run. With skip, values equal to a run value are skipped (and
 * the others appended to added, if given); without, an equal value is
 * corruption. */
static int merge_group(merger *m, const uint64_t *run, size_t nrun, const uint64_t *g, size_t ng,
                       int skip, st_u64s *added, size_t *put_new)
{
    size_t a = 0, i = 0;
    m->merged.n = 0;
    *put_new = 0;
    while (a < nrun || i < ng) {
        uint64_t v;
        if (i == ng || (a < nrun && run[a] < g[i])) {
            v = run[a++];
        } else if (skip && a < nrun && run[a] == g[i]) {
            i++; /* already stored */
            continue;
        } else {
            v = g[i++];
            if (added) ND_FORWARD(st_u64s_push(added, v));
            (*put_new)++;
        }
        if (m->merged.n && m->merged.v[m->merged.n - 1] >= v)
            return nd_err_set(ND_ECORRUPT, "table %u: %016llx stored twice or out of order", m->t,
                              (unsigned long long)v);
        ND_FORWARD(st_u64s_push(&m->merged, v));
    }
    return ND_OK;
}

/* Stage into b the merge of vals[0..n) (ascending, distinct, none stored in
 * the table) into the runs read through it. Stops after the group that
 * makes the rewritten values reach max_rewrite; *consumed = values placed.
 * With added, values equal to a run value are skipped, the rest appended
 * to added; without, they are corruption. */
static int merge_runs(merger *m, st_batch *b, st_iter *it, const uint64_t *vals, size_t n,
                      uint64_t max_rewrite, size_t *consumed, st_u64s *added)
{
    uint8_t kb[TBL_KEY_LEN];
    uint64_t rewritten = 0;
    size_t i = 0;
    int rc = ND_OK;
    while (i < n && rewritten < max_rewrite) {
        uint64_t x = vals[i], tail = 0;
        size_t nrun = 0, vlen;
        tbl_key(kb, TBL_RUN, x);
        st_iter_seek(it, kb, sizeof kb);
        int have_run = on_run(it, m->t, &tail, &rc);
        ND_FORWARD(rc);
        ND_FORWARD(st_iter_status(it));
        if (have_run) {
            const char *val = st_iter_value(it, &vlen);
            ND_FORWARD(tbl_decode_run(m->codec, m->dec, &nrun, m->t, tail, 0, val, vlen));
        }
        size_t j = i;
        while (j < n && (!have_run || vals[j] <= tail)) j++;
        size_t put_new = 0;
        ND_FORWARD(merge_group(m, m->dec, nrun, vals + i, j - i, added != NULL, added, &put_new));
        if (put_new == 0) { /* every value was there already: leave the run */
            i = j;
            continue;
        }
        /* Delete first: a new run may reuse the old key, and the later put
         * of a batch wins. */
        if (have_run) {
            tbl_key(kb, TBL_RUN, tail);
            ND_FORWARD(st_batch_delete(b, ST_CF_TABLE(m->t), kb, sizeof kb));
        }
        tbl_out o = {.b = b, .t = m->t};
        ND_FORWARD(tbl_put_runs(&o, m->codec, m->run_size, m->merged.v, m->merged.n));
        rewritten += m->merged.n;
        i = j;
    }
    *consumed = i;
    return ND_OK;
}

int st_table_merge(st_store *s, st_batch *b, unsigned t, unsigned run_size,
                   const uint64_t *vals, size_t n, st_u64s *added)
{
    merger m;
    st_iter *it = NULL;
    size_t consumed;
    int rc;
    ND_TRY(merger_init(&m, s, t, run_size));
    ND_TRY(st_iter_new(&it, s, ST_CF_TABLE(t), NULL, 1));
    ND_TRY(merge_runs(&m, b, it, vals, n, UINT64_MAX, &consumed, added));
cleanup:
    st_iter_free(it);
    merger_dispose(&m);
    return rc;
}

/* ---- rewrite: the table as it is, merged with a stream of values ------ */

/* A window onto the source: w.v[i..w.n) are read and not yet placed. */
typedef struct rewrite_src {
    st_u64_read_fn read;
    void *payload;
    st_u64s w;
    size_t i;
    int eof;
    unsigned t;
} rewrite_src;

/* Values placed per piece: a group larger than this (many new values
 * between two stored runs, or above the last) is merged piece by piece,
 * so memory does not grow with the load. A multiple of the run size keeps
 * the cut into runs even. */
static size_t piece_cap(const merger *m) { return (size_t)m->run_size * 1024; }

/* Read until the window holds more than cap unplaced values, one above
 * tail, or everything left. */
static int src_fill(rewrite_src *r, uint64_t tail, size_t cap)
{
    while (!r->eof && r->w.n - r->i <= cap && (r->w.n == r->i || r->w.v[r->w.n - 1] <= tail)) {
        if (r->i) { /* drop the placed values */
            memmove(r->w.v, r->w.v + r->i, (r->w.n - r->i) * sizeof *r->w.v);
            r->w.n -= r->i;
            r->i = 0;
        }
        if (r->w.cap < r->w.n + cap) {
            uint64_t *v = realloc(r->w.v, (r->w.n + cap) * sizeof *v);
            ND_RETURN_IF(!v, ND_ENOMEM, "table %u: out of memory for a rewrite", r->t);
            r->w.v = v;
            r->w.cap = r->w.n + cap;
        }
        size_t got = 0, at = r->w.n;
        ND_FORWARD(r->read(r->payload, r->w.v + at, cap, &got));
        ND_RETURN_IF(got > cap, ND_EINVAL, "table %u: the source gave too many values", r->t);
        if (got == 0) r->eof = 1;
        for (size_t k = at ? at : 1; k < at + got; k++)
            ND_RETURN_IF(r->w.v[k - 1] >= r->w.v[k], ND_EINVAL,
                         "table %u: new values out of order or repeated", r->t);
        r->w.n += got;
    }
    return ND_OK;
}

/* Merge the run stored as run_val with tail (have_run 0: above the last
 * run) with the source's values up to tail, piece by piece. *as_stored
 * is set when no value fell into it and the run must be copied as is. */
static int rewrite_group(merger *m, const tbl_out *o, rewrite_src *r, const char *run_val,
                         size_t run_len, int have_run, uint64_t tail, int skip, st_u64s *added,
                         uint64_t *put, int *as_stored)
{
    size_t cap = piece_cap(m), nrun = 0, a = 0;
    int decoded = 0;
    *as_stored = 0;
    if (!have_run) tail = UINT64_MAX;
    for (;;) {
        ND_FORWARD(src_fill(r, tail, cap));
        size_t avail = r->w.n - r->i, span = avail < cap ? avail : cap;
        size_t k = st_u64_lower_bound(r->w.v + r->i, span, tail);
        if (k < span && r->w.v[r->i + k] == tail) k++; /* <= tail */
        /* The whole rest of the group is in this piece? */
        int whole = k < cap || (avail > cap && r->w.v[r->i + cap] > tail) || (avail == cap && r->eof);
        if (k == 0 && (decoded || !have_run)) break;
        if (k == 0) { /* no value falls into this run */
            *as_stored = 1;
            return ND_OK;
        }
        if (have_run && !decoded) {
            ND_FORWARD(tbl_decode_run(m->codec, m->dec, &nrun, m->t, tail, 0, run_val, run_len));
            decoded = 1;
        }
        const uint64_t *g = r->w.v + r->i;
        /* The run entries up to the piece's last value go with it. */
        size_t a2 = nrun;
        if (!whole) {
            a2 = a + st_u64_lower_bound(m->dec + a, nrun - a, g[k - 1]);
            if (a2 < nrun && m->dec[a2] == g[k - 1]) a2++;
        }
        size_t put_new = 0;
        ND_FORWARD(merge_group(m, m->dec + a, a2 - a, g, k, skip, added, &put_new));
        r->i += k;
        *put += put_new;
        if (whole && a == 0 && have_run && put_new == 0) { /* every value was stored */
            *as_stored = 1;
            return ND_OK;
        }
        ND_FORWARD(tbl_put_runs(o, m->codec, m->run_size, m->merged.v, m->merged.n));
        a = a2;
        if (whole) break;
    }
    if (a < nrun) /* run entries above the last piece */
        ND_FORWARD(tbl_put_runs(o, m->codec, m->run_size, m->dec + a, nrun - a));
    return ND_OK;
}

/* Write into o the runs read through it (from the first) merged with the
 * source: one forward walk, runs no new value falls into are copied as
 * they are stored, the others decoded, merged and re-cut. */
static int walk_runs(merger *m, const tbl_out *o, st_iter *it, rewrite_src *r, int skip,
                     st_u64s *added, uint64_t *put)
{
    uint8_t kb[TBL_KEY_LEN];
    uint64_t tail;
    int rc = ND_OK, as_stored;
    *put = 0;
    tbl_key(kb, TBL_RUN, 0);
    for (st_iter_seek(it, kb, sizeof kb); on_run(it, m->t, &tail, &rc); st_iter_next(it)) {
        size_t klen, vlen;
        const char *val = st_iter_value(it, &vlen);
        ND_FORWARD(rewrite_group(m, o, r, val, vlen, 1, tail, skip, added, put, &as_stored));
        if (!as_stored) continue;
        const char *key = st_iter_key(it, &klen);
        ND_FORWARD(st_regen_put(o->g, key, klen, val, vlen));
    }
    ND_FORWARD(rc);
    ND_FORWARD(st_iter_status(it));
    if (st_iter_valid(it))
        return nd_err_set(ND_ECORRUPT, "table %u: key outside the table's spaces", m->t);
    /* above the last run */
    return rewrite_group(m, o, r, NULL, 0, 0, 0, skip, added, put, &as_stored);
}

/* A walk over a table's runs into o (walk_merge or walk_without). */
typedef int (*runs_walk_fn)(merger *m, const tbl_out *o, st_iter *it, void *arg);

/* Write g's table t by walk over the table as it is (no fresh entries). */
static int rewrite_by(st_regen *g, st_store *s, unsigned t, unsigned run_size, runs_walk_fn walk,
                      void *arg)
{
    merger m;
    st_iter *it = NULL;
    uint64_t fresh = 0;
    tbl_out o = {.g = g, .t = t};
    int rc;
    ND_TRY(merger_init(&m, s, t, run_size));
    ND_TRY(st_table_fresh_count(s, t, &fresh));
    if (fresh)
        ND_FAIL(ND_EINVAL, "table %u: %llu fresh entries; fold them before a rewrite", t,
                (unsigned long long)fresh);
    ND_TRY(st_regen_begin(g, ST_CF_TABLE(t)));
    ND_TRY(st_iter_new_scan(&it, s, ST_CF_TABLE(t)));
    ND_TRY(walk(&m, &o, it, arg));
    ND_TRY(st_regen_end(g));
cleanup:
    st_iter_free(it);
    merger_dispose(&m);
    return rc;
}

/* walk_runs' arguments. */
typedef struct merge_walk {
    rewrite_src *r;
    int skip;
    st_u64s *added;
    uint64_t *put;
} merge_walk;

static int walk_merge(merger *m, const tbl_out *o, st_iter *it, void *arg)
{
    merge_walk *w = arg;
    return walk_runs(m, o, it, w->r, w->skip, w->added, w->put);
}

static int rewrite(st_regen *g, st_store *s, unsigned t, unsigned run_size, rewrite_src *r,
                   int skip, st_u64s *added, uint64_t *put)
{
    merge_walk w = {r, skip, added, put};
    return rewrite_by(g, s, t, run_size, walk_merge, &w);
}

/* The values to remove: vals[0..n), ascending. */
typedef struct without_walk {
    const uint64_t *vals;
    size_t n;
} without_walk;

/* The runs as stored, less the values to remove (each in a run): runs
 * that lose none are copied as stored, the others decoded and put back
 * without them (none when they lose all). */
static int walk_without(merger *m, const tbl_out *o, st_iter *it, void *arg)
{
    const without_walk *w = arg;
    const uint64_t *vals = w->vals;
    size_t n = w->n;
    uint8_t kb[TBL_KEY_LEN];
    uint64_t tail;
    size_t at = 0;
    int rc = ND_OK;
    tbl_key(kb, TBL_RUN, 0);
    for (st_iter_seek(it, kb, sizeof kb); on_run(it, m->t, &tail, &rc); st_iter_next(it)) {
        size_t klen, vlen, nrun, kept = 0;
        const char *key = st_iter_key(it, &klen), *val = st_iter_value(it, &vlen);
        if (at == n || vals[at] > tail) {
            ND_FORWARD(st_regen_put(o->g, key, klen, val, vlen));
            continue;
        }
        ND_FORWARD(tbl_decode_run(m->codec, m->dec, &nrun, m->t, tail, 0, val, vlen));
        for (size_t i = 0; i < nrun; i++) {
            if (at < n && vals[at] == m->dec[i]) at++;
            else m->dec[kept++] = m->dec[i];
        }
        if (at < n && vals[at] <= tail) break; /* not stored */
        if (kept) ND_FORWARD(tbl_put_runs(o, m->codec, m->run_size, m->dec, kept));
    }
    ND_FORWARD(rc);
    ND_FORWARD(st_iter_status(it));
    if (at < n)
        return nd_err_set(ND_ECORRUPT, "table %u: value %016llx to remove is not stored", m->t,
                          (unsigned long long)vals[at]);
    if (st_iter_valid(it))
        return nd_err_set(ND_ECORRUPT, "table %u: key outside the table's spaces", m->t);
    return ND_OK;
}

int st_table_rewrite_without(st_regen *g, st_store *s, unsigned t, unsigned run_size,
                             const uint64_t *vals, size_t n)
{
    for (size_t i = 1; i < n; i++)
        ND_RETURN_IF(vals[i - 1] >= vals[i], ND_EINVAL,
                     "table %u: values to remove out of order or repeated", t);
    without_walk w = {vals, n};
    return rewrite_by(g, s, t, run_size, walk_without, &w);
}

/* An array as a source. */
typedef struct array_src {
    const uint64_t *v;
    size_t n, i;
} array_src;

static int array_read(void *payload, uint64_t *buf, size_t cap, size_t *got)
{
    array_src *a = payload;
    size_t k = a->n - a->i < cap ? a->n - a->i : cap;
    if (k) memcpy(buf, a->v + a->i, k * sizeof *buf); /* v may be NULL when n is 0 */
    a->i += k;
    *got = k;
    return ND_OK;
}

int st_table_rewrite(st_regen *g, st_store *s, unsigned t, unsigned run_size,
                     const uint64_t *vals, size_t n, st_u64s *added)
{
    array_src a = {vals, n, 0};
    rewrite_src r = {.read = array_read, .payload = &a, .t = t};
    uint64_t put;
    int rc = rewrite(g, s, t, run_size, &r, added != NULL, added, &put);
    st_u64s_dispose(&r.w);
    return rc;
}

int st_table_rewrite_stream(st_regen *g, st_store *s, unsigned t, unsigned run_size,
                            st_u64_read_fn read, void *payload, uint64_t *put)
{
    rewrite_src r = {.read = read, .payload = payload, .t = t};
    int rc = rewrite(g, s, t, run_size, &r, 1, NULL, put);
    st_u64s_dispose(&r.w);
    return rc;
}

/* Append to out table t's fresh values from `from` on, ascending, read
 * through it: up to max of them. */
static int read_fresh(st_iter *it, unsigned t, uint64_t from, size_t max, st_u64s *out)
{
    uint8_t kb[TBL_KEY_LEN];
    size_t n = 0;
    tbl_key(kb, TBL_FRESH, from);
    for (st_iter_seek(it, kb, sizeof kb); n < max && st_iter_valid(it); st_iter_next(it), n++) {
        size_t klen;
        char tag;
        uint64_t v;
        const char *k = st_iter_key(it, &klen);
        if (klen == 0 || k[0] != TBL_FRESH) break;
        ND_FORWARD(tbl_parse_key(&tag, &v, t, k, klen));
        ND_FORWARD(st_u64s_push(out, v));
    }
    return st_iter_status(it);
}

/* One fold step from fresh value *pos; sets *done when no fresh entry is
 * left at or above it. */
static int fold_step(merger *m, st_batch *b, st_u64s *fresh, uint64_t *pos, int *done,
                     int sync, uint64_t *folded)
{
    st_iter *fit = NULL, *rit = NULL;
    uint8_t kb[TBL_KEY_LEN];
    size_t consumed = 0;
    int rc = ND_OK;
    st_batch_clear(b);
    fresh->n = 0;
    ND_TRY(st_iter_new(&fit, m->s, ST_CF_TABLE(m->t), NULL, 1));
    ND_TRY(read_fresh(fit, m->t, *pos, FOLD_STEP_READ, fresh));
    if (fresh->n == 0) {
        *done = 1;
        /* Writers are excluded here: a table whose mirror was given up
         * (cmp_fresh.h) is reloaded from its fresh space. */
        (void)st_mirror_repair(m->s, m->t);
        goto cleanup;
    }
    ND_TRY(st_iter_new(&rit, m->s, ST_CF_TABLE(m->t), NULL, 1));
    ND_TRY(merge_runs(m, b, rit, fresh->v, fresh->n, FOLD_STEP_REWRITE, &consumed, NULL));
    for (size_t i = 0; i < consumed; i++) {
        tbl_key(kb, TBL_FRESH, fresh->v[i]);
        ND_TRY(st_batch_delete(b, ST_CF_TABLE(m->t), kb, sizeof kb));
    }
    ND_TRY(st_write(m->s, b, sync));
    *folded += consumed;
    uint64_t last = fresh->v[consumed - 1];
    *done = last == UINT64_MAX;
    *pos = last + 1;
cleanup:
    st_iter_free(fit);
    st_iter_free(rit);
    return rc;
}

int st_table_fold(st_store *s, unsigned t, unsigned run_size, int sync, st_lock_fn lock,
                  st_lock_fn unlock, void *payload, uint64_t *out_folded)
{
    merger m;
    st_batch *b = NULL;
    st_u64s fresh = {0};
    uint64_t pos = 0, folded = 0;
    int done = 0, rc;
    ND_TRY(merger_init(&m, s, t, run_size));
    ND_TRY(st_batch_new(&b, s));
    while (!done) {
        if (lock) lock(payload);
        rc = fold_step(&m, b, &fresh, &pos, &done, sync, &folded);
        if (unlock) unlock(payload);
        if (rc < 0) goto cleanup;
    }
    rc = ND_OK;
cleanup:
    if (out_folded) *out_folded = folded;
    st_batch_free(b);
    st_u64s_dispose(&fresh);
    merger_dispose(&m);
    return rc;
}

/* ---- refold: the fold as one sequential rewrite of the table ---------- */

/* Table t's fresh values as of snap, ascending, into out; each one's key
 * deleted in g's file. */
static int take_fresh(st_regen *g, st_store *s, unsigned t, const st_snap *snap, st_u64s *out)
{
    st_iter *it = NULL;
    uint8_t kb[TBL_KEY_LEN];
    int rc;
    ND_TRY(st_iter_new_scan_at(&it, s, ST_CF_TABLE(t), snap));
    ND_TRY(read_fresh(it, t, 0, SIZE_MAX, out));
    for (size_t i = 0; i < out->n; i++) {
        tbl_key(kb, TBL_FRESH, out->v[i]);
        ND_TRY(st_regen_delete(g, kb, sizeof kb));
    }
cleanup:
    st_iter_free(it);
    return rc;
}

int st_table_refold(st_store *s, unsigned t, unsigned run_size, st_lock_fn lock,
                    st_lock_fn unlock, void *payload, uint64_t *folded)
{
    merger m;
    st_regen *g = NULL;
    const st_snap *snap = NULL;
    st_iter *it = NULL;
    st_u64s fresh = {0};
    tbl_out o = {.t = t};
    /* The whole run space, ['R', 'S'): replaced by the file's runs, which
     * a range deletion in the same file does not cover (it shares their
     * sequence number). */
    const char run_lo[1] = {TBL_RUN}, run_hi[1] = {TBL_RUN + 1};
    uint64_t put = 0;
    int rc, applied = 0;
    *folded = 0;
    ND_TRY(merger_init(&m, s, t, run_size));
    if (lock) lock(payload);
    rc = st_regen_new_table(&g, s, t, &snap);
    if (unlock) unlock(payload);
    ND_TRY(rc);
    o.g = g;
    ND_TRY(st_regen_begin(g, ST_CF_TABLE(t)));
    ND_TRY(take_fresh(g, s, t, snap, &fresh));
    if (fresh.n == 0) goto cleanup; /* nothing to fold: the file is dropped */
    ND_TRY(st_regen_delete_range(g, run_lo, sizeof run_lo, run_hi, sizeof run_hi));
    array_src a = {fresh.v, fresh.n, 0};
    rewrite_src r = {.read = array_read, .payload = &a, .t = t};
    ND_TRY(st_iter_new_scan_at(&it, s, ST_CF_TABLE(t), snap));
    rc = walk_runs(&m, &o, it, &r, 0, NULL, &put);
    st_u64s_dispose(&r.w);
    ND_TRY(rc);
    st_iter_free(it);
    it = NULL;
    ND_TRY(st_regen_end(g));
    if (lock) lock(payload);
    rc = st_regen_apply_table(g, &applied);
    if (unlock) unlock(payload);
    ND_TRY(rc);
    if (applied) *folded = put;
cleanup:
    st_iter_free(it);
    st_regen_free(g);
    st_u64s_dispose(&fresh);
    merger_dispose(&m);
    return rc;
}

/* ---- removal: each run rewritten once without the values it held ------- */

/* Remove the values of vals[*at..n) that the run of tail (its value val,
 * read from the table) holds, up to that tail: the run is rewritten once without
 * them, re-keyed when its tail goes. *at moves past them. */
static int run_remove_group(st_batch *b, cmp_codec *c, unsigned t, uint64_t tail,
                            const char *val, size_t vlen, uint64_t *buf, const uint64_t *vals,
                            size_t n, size_t *at)
{
    uint8_t kb[TBL_KEY_LEN];
    size_t len;
    ND_FORWARD(tbl_decode_run(c, buf, &len, t, tail, 0, val, vlen));
    size_t end = *at, i = *at, kept = 0;
    while (end < n && vals[end] <= tail) end++;
    for (size_t j = 0; j < len; j++) {
        if (i < end && vals[i] == buf[j]) i++;
        else if (i < end && vals[i] < buf[j]) break; /* not in the run */
        else buf[kept++] = buf[j];
    }
    if (i < end)
        return nd_err_set(ND_ENOTFOUND, "table %u: %016llx not stored", t,
                          (unsigned long long)vals[i]);
    *at = end;
    if (kept == len) return ND_OK;
    if (kept == 0 || buf[kept - 1] != tail) { /* the tail goes: the run moves to a new key */
        tbl_key(kb, TBL_RUN, tail);
        ND_FORWARD(st_batch_delete(b, ST_CF_TABLE(t), kb, sizeof kb));
    }
    tbl_out o = {.b = b, .t = t};
    return kept ? tbl_put_run(&o, c, buf, kept) : ND_OK;
}

int st_table_remove_many(st_store *s, st_batch *b, unsigned t, uint64_t *vals, size_t n)
{
    uint8_t kb[TBL_KEY_LEN];
    st_iter *it = NULL;
    cmp_codec *c = NULL;
    uint64_t *buf = NULL, tail;
    char *fv = NULL;
    size_t flen, vlen, runs = 0;
    int rc = ND_OK;
    /* Fresh entries: their keys deleted; the others wait for their runs. */
    for (size_t i = 0; i < n; i++) {
        tbl_key(kb, TBL_FRESH, vals[i]);
        rc = st_batch_get(s, b, ST_CF_TABLE(t), kb, sizeof kb, &fv, &flen);
        free(fv);
        fv = NULL;
        if (rc == ND_OK) ND_TRY(st_batch_delete(b, ST_CF_TABLE(t), kb, sizeof kb));
        else if (rc == ND_ENOTFOUND) vals[runs++] = vals[i];
        else goto cleanup;
    }
    rc = ND_OK;
    if (runs == 0) goto cleanup;
    buf = malloc(CMP_RUN_MAX * sizeof *buf);
    if (!buf || cmp_codec_new(&c) < 0) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    /* Then each run holding some, read through the batch (a fresh
     * iterator each: the batch changed), in ascending order: a rewritten
     * run keeps below the values still to come. */
    for (size_t at = 0; at < runs;) {
        ND_TRY(st_iter_new(&it, s, ST_CF_TABLE(t), b, 1));
        tbl_key(kb, TBL_RUN, vals[at]);
        st_iter_seek(it, kb, sizeof kb); /* the first run whose tail is >= vals[at] */
        if (!st_iter_table_key(it, TBL_RUN, t, &tail, &rc)) {
            ND_TRY(rc);
            ND_TRY(st_iter_status(it));
            ND_FAIL(ND_ENOTFOUND, "table %u: %016llx not stored", t, (unsigned long long)vals[at]);
        }
        const char *val = st_iter_value(it, &vlen);
        ND_TRY(run_remove_group(b, c, t, tail, val, vlen, buf, vals, runs, &at));
        st_iter_free(it);
        it = NULL;
    }
cleanup:
    st_iter_free(it);
    cmp_codec_free(c);
    free(buf);
    return rc;
}

int st_table_remove(st_store *s, st_batch *b, unsigned t, uint64_t pfp)
{
    return st_table_remove_many(s, b, t, &pfp, 1);
}
