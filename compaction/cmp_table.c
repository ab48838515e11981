/*
 * cmp_table.c — reading one permuted table (cmp_table.h): range reads,
 * hints, fresh counts, inserts and forward cursors, over the key layout
 * of cmp_layout.h.
 *
 * A range read [lo, hi] is one forward seek in the run space (the first
 * run whose tail is >= lo; the runs up to hi follow) and a look-up of
 * [lo, hi] in the in-memory mirror of the fresh space (cmp_fresh.h). The
 * two sorted lists are merged. Reads go through st_iter, so this file
 * never sees RocksDB.
 *
 * Runs change only at folds, imports and removals from a run, so a
 * reader keeps its run iterator across the inserts of a stream and
 * remakes it only when st_runs_seq moved (or after READER_MAX_WRITES
 * writes, so that it does not pin old memtables for long). The mirror is
 * read between two readings of st_runs_seq: equal and even, the runs and
 * the mirror come from one side of every run-space write (cmp_store.c,
 * st_write), so a value a fold moved from the fresh space to a run is
 * seen in exactly one of them. Otherwise (a run-space write in progress,
 * an invalid mirror) both spaces are read from one RocksDB snapshot.
 */
#include "cmp_table.h"

#include <stdlib.h>
#include <string.h>

#include "cmp_codec.h"
#include "cmp_direct.h"
#include "cmp_fresh.h"
#include "cmp_layout.h"
#include "cmp_read.h"
#include "nd_error.h"

struct st_reader {
    st_store *store;
    cmp_codec *codec;
    uint64_t *buf;  /* decoded run, CMP_RUN_MAX values */
    st_u64s fresh;  /* scratch: fresh entries of one range */
    /* Creating a RocksDB iterator costs about as much as a seek; a table's
     * iterator is kept and reused while the runs did not change. */
    st_iter *it[ND_MAX_TABLES];
    /* Or, while table t's runs are one file, its direct reader. */
    cmp_direct *dir[ND_MAX_TABLES];
    cmp_direct_buf dbuf; /* their block buffer */
    /* buf holds run_tail's run of run_d's file, every value >= run_lo
     * (run_d NULL: nothing known). A k=6 query's ascending probes of one
     * table often fall into the run the previous one decoded. */
    const cmp_direct *run_d;
    uint64_t run_tail, run_lo;
    size_t run_n;
    uint64_t it_seq[ND_MAX_TABLES];  /* st_runs_seq when it was made */
    uint64_t it_wseq[ND_MAX_TABLES]; /* st_write_seq when it was made */
};

/* Writes after which a reader remakes a run iterator anyway. */
#define READER_MAX_WRITES 4096u
/* Mirror reads raced by run-space writes before a reader uses a snapshot. */
#define READER_TRIES 3

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
    st_u64s_dispose(&r->fresh);
    for (unsigned t = 0; t < ND_MAX_TABLES; t++) {
        st_iter_free(r->it[t]);
        cmp_direct_unref(r->dir[t]);
    }
    free(r->dbuf.p);
    free(r->buf);
    free(r);
}

/* ---- reads ------------------------------------------------------------ */

/* Where runs_range reads the run space: a RocksDB iterator, or the
 * table's file through its direct reader (cmp_direct.h). */
typedef struct run_src {
    st_iter *it;
    cmp_direct *d;
    cmp_direct_buf *buf;
    cmp_direct_it dit;
    int first; /* no step before the entry under the iterator */
} run_src;

/* Position src before the first run whose tail is >= x, for a walk that
 * stops at the first run whose tail is >= until. */
static int src_seek(run_src *src, uint64_t x, uint64_t until)
{
    uint8_t kb[TBL_KEY_LEN];
    if (src->d) return cmp_direct_seek(src->d, x, until, src->buf, &src->dit);
    tbl_key(kb, TBL_RUN, x);
    st_iter_seek(src->it, kb, sizeof kb);
    src->first = 1;
    return ND_OK;
}

/* The next run: 1 with its tail and bytes, 0 past the run space, or an
 * error. The iterator steps only when asked for the next run. */
static int src_next(run_src *src, unsigned t, uint64_t *tail, const char **val, size_t *vlen)
{
    int rc = ND_OK;
    if (src->d) return cmp_direct_next(&src->dit, tail, val, vlen);
    if (!src->first) st_iter_next(src->it);
    src->first = 0;
    if (!st_iter_table_key(src->it, TBL_RUN, t, tail, &rc)) return rc < 0 ? rc : st_iter_status(src->it);
    *val = st_iter_value(src->it, vlen);
    return 1;
}

/* Decode into r->buf the values >= lo of the run (tail, val) that src
 * stands on, unless r->buf holds them from the previous decode (a file
 * read directly never changes; runs read through RocksDB are decoded
 * anew). */
static int decode_run(st_reader *r, const run_src *src, unsigned t, uint64_t tail, uint64_t lo,
                      const char *val, size_t vlen, size_t *n)
{
    if (src->d && r->run_d == src->d && r->run_tail == tail && r->run_lo <= lo) {
        *n = r->run_n;
        return ND_OK;
    }
    r->run_d = NULL;
    ND_FORWARD(tbl_decode_run(r->codec, r->buf, n, t, tail, lo, val, vlen));
    if (src->d) {
        r->run_d = src->d;
        r->run_tail = tail;
        r->run_lo = lo;
        r->run_n = *n;
    }
    return ND_OK;
}

/* Append the values of run[0..n) (ascending) within [lo, hi] to out: one
 * slice of it, copied at once. */
static int append_slice(st_u64s *out, const uint64_t *run, size_t n, uint64_t lo, uint64_t hi)
{
    size_t i = 0, j;
    while (i < n && run[i] < lo) i++;
    for (j = i; j < n && run[j] <= hi; j++) {}
    return st_u64s_append(out, run + i, j - i);
}

/* Append the run entries e of table t with lo <= e <= hi, read from src,
 * to out. */
static int runs_range(st_reader *r, run_src *src, unsigned t, uint64_t lo, uint64_t hi,
                      st_u64s *out)
{
    uint64_t v;
    const char *val;
    size_t vlen, n;
    int rc;
    /* Runs: the first whose tail is >= lo, then onwards while they start
     * at or below hi. */
    ND_FORWARD(src_seek(src, lo, hi));
    while ((rc = src_next(src, t, &v, &val, &vlen)) > 0) {
        ND_FORWARD(decode_run(r, src, t, v, lo, val, vlen, &n));
        if (r->buf[0] > hi) break;
        ND_FORWARD(append_slice(out, r->buf, n, lo, hi));
        if (v >= hi) break; /* the next run starts above this tail */
    }
    return rc < 0 ? rc : ND_OK;
}

/* Append the fresh entries in [lo, hi] as of snap to out, through an
 * iterator bounded to exactly that range: the deletions a fold leaves in
 * the fresh space are not walked over. */
static int fresh_range_at(st_store *s, unsigned t, uint64_t lo, uint64_t hi, const st_snap *snap,
                          st_u64s *out)
{
    uint8_t kb[TBL_KEY_LEN], hb[TBL_KEY_LEN];
    st_iter *fit = NULL;
    uint64_t v;
    int rc = ND_OK;
    tbl_key(kb, TBL_FRESH, lo);
    if (hi == UINT64_MAX) tbl_key(hb, TBL_FRESH + 1, 0);
    else tbl_key(hb, TBL_FRESH, hi + 1);
    ND_FORWARD(st_iter_new_bounded(&fit, s, ST_CF_TABLE(t), kb, hb, sizeof kb, snap));
    for (st_iter_seek(fit, kb, sizeof kb); st_iter_table_key(fit, TBL_FRESH, t, &v, &rc);
         st_iter_next(fit)) {
        rc = st_u64s_push(out, v);
        if (rc < 0) break;
    }
    if (rc == ND_OK) rc = st_iter_status(fit);
    st_iter_free(fit);
    return rc;
}

/* Into fresh: the values of fresh or of also (both ascending) that are
 * not in runs[0..nruns) (ascending), each once. */
static int fresh_union(st_u64s *fresh, const st_u64s *also, const uint64_t *runs, size_t nruns)
{
    st_u64s u = {0};
    size_t i = 0, j = 0, k = 0;
    int rc = st_u64s_reserve(&u, fresh->n + also->n);
    while (rc == ND_OK && (i < fresh->n || j < also->n)) {
        uint64_t v;
        if (j == also->n || (i < fresh->n && fresh->v[i] <= also->v[j])) {
            v = fresh->v[i++];
            if (j < also->n && also->v[j] == v) j++;
        } else {
            v = also->v[j++];
        }
        while (k < nruns && runs[k] < v) k++;
        if (k == nruns || runs[k] != v) u.v[u.n++] = v;
    }
    if (rc == ND_OK) {
        st_u64s_dispose(fresh);
        *fresh = u;
    }
    return rc;
}

/* Both spaces from one snapshot: while a run-space write is applied, or
 * when the mirror cannot answer. The mirror is read too, before the
 * snapshot: it holds the entries whose keys are not written yet
 * (st_table_insert_mirrored), and one that a fold moves meanwhile is then
 * in the mirror's answer, in the snapshot's, or in both (counted once). */
static int range_at_snapshot(st_reader *r, unsigned t, uint64_t lo, uint64_t hi, int with_fresh,
                             st_u64s *out)
{
    st_snap *snap = NULL;
    st_iter *it = NULL;
    st_u64s mirrored = {0};
    size_t start = out->n;
    int rc;
    r->fresh.n = 0;
    if (with_fresh) { /* 0: no mirror for this table now */
        rc = cmp_fresh_range(st_store_fresh(r->store), t, lo, hi, &mirrored);
        ND_TRY(rc < 0 ? rc : ND_OK);
    }
    ND_TRY(st_snap_new(&snap, r->store));
    ND_TRY(st_iter_new_at(&it, r->store, ST_CF_TABLE(t), snap));
    run_src src = {.it = it};
    ND_TRY(runs_range(r, &src, t, lo, hi, out));
    if (with_fresh) {
        ND_TRY(fresh_range_at(r->store, t, lo, hi, snap, &r->fresh));
        ND_TRY(fresh_union(&r->fresh, &mirrored, out->v + start, out->n - start));
    }
cleanup:
    st_iter_free(it);
    st_snap_free(snap);
    st_u64s_dispose(&mirrored);
    return rc;
}

void st_table_hint(const st_reader *r, unsigned t, uint64_t lo, int with_fresh, int stage)
{
    if (r->dir[t]) cmp_direct_hint(r->dir[t], lo, stage);
    if (with_fresh) cmp_fresh_hint(st_store_fresh(r->store), t, lo, stage);
}

int st_table_range(st_reader *r, unsigned t, uint64_t lo, uint64_t hi, int with_fresh,
                   st_u64s *out)
{
    size_t start = out->n;
    int rc = ND_OK, done = 0;
    cmp_fresh *mirror = st_store_fresh(r->store);
    for (int tries = 0; !done && tries < READER_TRIES; tries++) {
        uint64_t seq = st_runs_seq(r->store);
        if (seq & 1) break; /* a run-space write is being applied */
        /* The sequences are read before the iterator is made: a write
         * finishing in between only makes the next call remake it. */
        uint64_t wseq = st_write_seq(r->store);
        if ((!r->it[t] && !r->dir[t]) || r->it_seq[t] != seq ||
            wseq - r->it_wseq[t] > READER_MAX_WRITES) {
            st_iter_free(r->it[t]);
            r->it[t] = NULL;
            cmp_direct_unref(r->dir[t]);
            r->dbuf.wd = NULL; /* they may have held that file's block and run */
            r->run_d = NULL;
            r->dir[t] = st_table_direct(r->store, t);
            if (!r->dir[t]) ND_TRY(st_iter_new_probe(&r->it[t], r->store, t));
            r->it_seq[t] = seq;
            r->it_wseq[t] = wseq;
        }
        out->n = start;
        r->fresh.n = 0;
        run_src src = {.it = r->it[t], .d = r->dir[t], .buf = &r->dbuf};
        ND_TRY(runs_range(r, &src, t, lo, hi, out));
        if (with_fresh) {
            rc = cmp_fresh_range(mirror, t, lo, hi, &r->fresh);
            ND_TRY(rc);
            if (rc == 0) break; /* no mirror for this table now */
        }
        rc = ND_OK;
        done = st_runs_seq(r->store) == seq;
    }
    if (!done) {
        out->n = start;
        ND_TRY(range_at_snapshot(r, t, lo, hi, with_fresh, out));
    }
    if (r->fresh.n) { /* merge the two ascending lists in place, from the back */
        size_t nr = out->n - start, nf = r->fresh.n;
        ND_TRY(st_u64s_reserve(out, nf));
        out->n += nf;
        uint64_t *a = out->v + start;
        size_t i = nr, j = nf, w = nr + nf;
        while (j > 0) {
            if (i > 0 && a[i - 1] > r->fresh.v[j - 1]) a[--w] = a[--i];
            else a[--w] = r->fresh.v[--j];
        }
    }
cleanup:
    if (rc < 0) { /* an iterator that failed is not kept */
        st_iter_free(r->it[t]);
        r->it[t] = NULL;
    }
    return rc;
}

int st_table_fresh_count(st_store *s, unsigned t, uint64_t *out)
{
    uint8_t lo[TBL_KEY_LEN], hi[TBL_KEY_LEN];
    st_iter *it = NULL;
    int rc;
    *out = 0;
    if (cmp_fresh_count(st_store_fresh(s), t, out)) return ND_OK;
    tbl_key(lo, TBL_FRESH, 0);
    tbl_key(hi, TBL_FRESH + 1, 0);
    ND_FORWARD(st_iter_new_bounded(&it, s, ST_CF_TABLE(t), lo, hi, sizeof lo, NULL));
    for (st_iter_seek(it, lo, sizeof lo); st_iter_valid(it); st_iter_next(it)) (*out)++;
    rc = st_iter_status(it);
    st_iter_free(it);
    return rc;
}

int st_table_insert(st_store *s, st_batch *b, unsigned t, uint64_t pfp)
{
    (void)s;
    uint8_t kb[TBL_KEY_LEN];
    tbl_key(kb, TBL_FRESH, pfp);
    return st_batch_put(b, ST_CF_TABLE(t), kb, sizeof kb, "", 0);
}

/* ---- forward cursor --------------------------------------------------- */

/* How many runs (or fresh entries) a cursor steps over with next() before
 * it seeks instead. */
#define CURSOR_MAX_STEPS 8
/* What a scanning cursor reads of a table's file at once when it reads
 * the file directly (RocksDB's scans read ahead SCAN_READAHEAD). */
#define CURSOR_AHEAD (256u << 10)

/* The run iterator stands on the current run: the first whose tail is >=
 * the last lo asked for. Runs only ever come after it, so the cursor moves
 * with next() alone (a few steps, else one forward seek) and decodes a run
 * once however many ranges it serves. */
struct st_cursor {
    unsigned t;
    st_store *s;
    st_snap *snap;
    st_iter *runs, *fresh; /* fresh: made when the mirror cannot serve */
    /* Fresh entries come from the store's mirror while st_runs_seq still
     * reads seq, its even value from before the snapshot: no run-space
     * write (a fold, a removal from a run) began since, so every value the
     * snapshot holds in the fresh space is still there or deleted, never
     * moved into a run this cursor does not read. What the mirror holds
     * beyond the snapshot was inserted since, as a query would see it. A
     * cursor reads the snapshot's fresh space once that fails. */
    int mirror;
    uint64_t seq;
    /* Or the table's file, when it holds the run space of the snapshot. */
    cmp_direct *d;
    cmp_direct_buf dbuf;
    run_src src;        /* reads runs from either */
    /* The run under the cursor (val valid until it moves). */
    int on, src_rc;     /* on a run; the error that ended the walk */
    uint64_t tail;
    const char *val;
    size_t vlen;
    cmp_codec *codec;
    uint64_t *buf;      /* the decoded run under the iterator, if have_buf */
    size_t nbuf;
    int have_buf;
    uint64_t buf_tail;
    int fresh_done;     /* the fresh space holds nothing at or above here */
};

static int cursor_seek(st_cursor *c, uint64_t x);

/* Read the fresh space from the snapshot from now on, positioned at the
 * first entry >= lo. */
static int cursor_fresh_at_snapshot(st_cursor *c, uint64_t lo)
{
    uint8_t kb[TBL_KEY_LEN];
    c->mirror = 0;
    ND_FORWARD(st_iter_new_at(&c->fresh, c->s, ST_CF_TABLE(c->t), c->snap));
    tbl_key(kb, TBL_FRESH, lo);
    st_iter_seek(c->fresh, kb, sizeof kb);
    return ND_OK;
}

int st_cursor_new(st_cursor **out, st_store *s, unsigned t, int scan)
{
    int rc;
    st_cursor *c = calloc(1, sizeof *c);
    ND_RETURN_IF(!c, ND_ENOMEM, "storage: out of memory");
    c->t = t;
    c->buf = malloc(CMP_RUN_MAX * sizeof *c->buf);
    if (!c->buf) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    ND_TRY(cmp_codec_new(&c->codec));
    /* The table's direct reader holds the snapshot's runs when no
     * run-space write began (runs_seq moves first) from before the reader
     * was taken until the snapshot was: its file never changes. */
    uint64_t seq = st_runs_seq(s), nfresh = 0;
    c->s = s;
    c->seq = seq;
    if (!(seq & 1)) c->d = st_table_direct(s, t);
    ND_TRY(st_snap_new(&c->snap, s));
    /* An empty mirror means an empty fresh space at the snapshot only if
     * no run-space write began before the count was read, either. */
    int counted = cmp_fresh_count(st_store_fresh(s), t, &nfresh);
    if (st_runs_seq(s) != seq) {
        cmp_direct_unref(c->d);
        c->d = NULL;
    } else if (!(seq & 1) && counted) {
        c->mirror = 1;
        c->fresh_done = nfresh == 0;
    }
    if (!c->d)
        ND_TRY((scan ? st_iter_new_scan_at : st_iter_new_at)(&c->runs, s, ST_CF_TABLE(t), c->snap));
    if (!c->mirror) ND_TRY(cursor_fresh_at_snapshot(c, 0));
    c->dbuf.ahead = scan ? CURSOR_AHEAD : 0;
    c->src = (run_src){.it = c->runs, .d = c->d, .buf = &c->dbuf};
    ND_TRY(cursor_seek(c, 0));
    *out = c;
    return ND_OK;
cleanup:
    st_cursor_free(c);
    return rc;
}

void st_cursor_free(st_cursor *c)
{
    if (!c) return;
    st_iter_free(c->runs);
    st_iter_free(c->fresh);
    st_snap_free(c->snap);
    cmp_direct_unref(c->d);
    free(c->dbuf.p);
    cmp_codec_free(c->codec);
    free(c->buf);
    free(c);
}

/* Is the cursor on a run? 1 with its tail; 0 past the last run or on an
 * error (then in *rc). */
static int cursor_on(st_cursor *c, uint64_t *tail, int *rc)
{
    *rc = c->src_rc;
    *tail = c->tail;
    return c->on;
}

static void cursor_next(st_cursor *c)
{
    int rc = src_next(&c->src, c->t, &c->tail, &c->val, &c->vlen);
    c->on = rc > 0;
    c->src_rc = rc < 0 ? rc : ND_OK;
}

/* Onto the first run whose tail is >= x. */
static int cursor_seek(st_cursor *c, uint64_t x)
{
    c->on = 0;
    c->src_rc = src_seek(&c->src, x, 0);
    if (c->src_rc == ND_OK) cursor_next(c);
    return c->src_rc;
}

/* The run under the cursor, decoded (once). 0 when past the last run. */
static int cursor_run(st_cursor *c, uint64_t *tail, int *rc)
{
    if (!cursor_on(c, tail, rc)) return 0;
    if (!c->have_buf || c->buf_tail != *tail) {
        c->have_buf = 0;
        *rc = tbl_decode_run(c->codec, c->buf, &c->nbuf, c->t, *tail, 0, c->val, c->vlen);
        if (*rc < 0) return 0;
        c->have_buf = 1;
        c->buf_tail = *tail;
    }
    return 1;
}

int st_cursor_range(st_cursor *c, uint64_t lo, uint64_t hi, st_u64s *out)
{
    uint64_t v, tail;
    uint8_t kb[TBL_KEY_LEN];
    size_t start = out->n, nfresh = 0;
    int rc = ND_OK, steps = 0;
    /* Forward to the first run whose tail is >= lo: a few steps, else a
     * seek; at once when a cursor reading a block at a time (ranges far
     * apart) would read another block on the way. */
    if (cursor_on(c, &tail, &rc) && tail < lo && c->d && !c->dbuf.ahead &&
        cmp_direct_beyond(&c->src.dit, lo))
        ND_FORWARD(cursor_seek(c, lo));
    while (cursor_on(c, &tail, &rc) && tail < lo) {
        if (++steps > CURSOR_MAX_STEPS) {
            ND_FORWARD(cursor_seek(c, lo));
            break;
        }
        cursor_next(c);
    }
    ND_FORWARD(rc);
    while (cursor_run(c, &tail, &rc)) {
        if (c->buf[0] > hi) break; /* it may serve a later range */
        ND_FORWARD(append_slice(out, c->buf, c->nbuf, lo, hi));
        if (tail >= hi) break;
        cursor_next(c);
    }
    ND_FORWARD(rc);
    /* Fresh entries in [lo, hi], merged in. */
    if (!c->fresh_done && c->mirror) {
        size_t before = out->n;
        rc = cmp_fresh_range(st_store_fresh(c->s), c->t, lo, hi, out);
        ND_FORWARD(rc < 0 ? rc : ND_OK);
        if (rc == 1 && st_runs_seq(c->s) == c->seq) {
            nfresh = out->n - before;
        } else { /* raced a run-space write, or the mirror gave up */
            out->n = before;
            ND_FORWARD(cursor_fresh_at_snapshot(c, lo));
        }
    }
    if (!c->fresh_done && !c->mirror) {
        /* As the runs: a few steps (each far cheaper than a seek through
         * the memtables and files), else a seek. */
        for (steps = 0; st_iter_table_key(c->fresh, TBL_FRESH, c->t, &v, &rc) && v < lo; steps++) {
            if (steps == CURSOR_MAX_STEPS) {
                tbl_key(kb, TBL_FRESH, lo);
                st_iter_seek(c->fresh, kb, sizeof kb);
                break;
            }
            st_iter_next(c->fresh);
        }
        ND_FORWARD(rc);
        size_t before = out->n;
        for (; st_iter_table_key(c->fresh, TBL_FRESH, c->t, &v, &rc) && v <= hi; st_iter_next(c->fresh))
            ND_FORWARD(st_u64s_push(out, v));
        ND_FORWARD(rc);
        ND_FORWARD(st_iter_status(c->fresh));
        if (!st_iter_table_key(c->fresh, TBL_FRESH, c->t, &v, &rc)) c->fresh_done = 1;
        nfresh = out->n - before;
    }
    if (nfresh && out->n - nfresh > start) { /* both kinds: sort the range */
        uint64_t *a = out->v + start;
        size_t n = out->n - start;
        for (size_t i = 1; i < n; i++) { /* insertion sort: short, nearly sorted */
            uint64_t x = a[i];
            size_t j = i;
            while (j > 0 && a[j - 1] > x) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
    }
    return ND_OK;
}
