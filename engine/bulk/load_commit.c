/*
 * load_commit.c — the bulk loader's commit: every spilled chunk merged
 * with the store into a new generation, one pass per family (see
 * db_load.c for the whole, load_spill.h for the files).
 *
 *   1. docs: of equal keys from several chunks the last chunk's wins; the
 *      others are "skipped". A marker (the chunk replaced the key in the
 *      store when it was spilled) wins the same way, and writes nothing. A key the store holds by now (another writer
 *      stored it after its chunk was spilled) keeps its stored entry for
 *      the switch and is replaced by the loader's document right after it
 *      ("late"); its entry is skipped too.
 *   2. rev: the entries of skipped documents are left out, and a
 *      fingerprint left with no new entry is "dead" (unless stored, no
 *      table may hold it).
 *   3. every table: the chunks' values without the dead ones, merged into
 *      the stored runs (values already stored are skipped).
 *   4. in a resemblance store, the sketches and band entries of the
 *      documents docs wrote (load_sketches.c), as files the switch lays
 *      over those families; the band filter learns their prefixes first
 *      and does not grow until they are in.
 * One atomic write switches to the generation with the new counters;
 * then the late documents go through the replacement path. Skipped
 * entries are few in a normal load (a key repeated in a later chunk);
 * they are kept in memory.
 *
 * When the database may use several threads (db_threads: by default, on a
 * machine of several cores; nd_task.h) the passes overlap: rev is
 * written beside docs as if nothing were skipped, and written again after
 * docs when something was (its first file dropped); then the tables are
 * shared between two threads. At 10M documents the docs and rev passes
 * take about 6 s each, a table 0.7 s.
 *
 * Callers: db_load.c (nd_loader_finish), with db_exclusive_lock held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_bands.h"
#include "db_core.h"
#include "db_fold.h"
#include "db_import.h"
#include "db_txn.h"
#include "load_commit.h"
#include "load_files.h"
#include "load_internal.h"
#include "load_sketches.h"
#include "load_spill.h"
#include "nd_bytes.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "nd_task.h"

/* Late replacements go through the staged path in batches of this many. */
#define LATE_BATCH 65536u

/* A record copied out of a merge (the merge reuses its buffers). */
typedef struct rec_copy {
    char *buf; /* key then value */
    size_t klen, vlen, cap, src;
} rec_copy;

static int rec_set(rec_copy *r, const void *key, size_t klen, const void *val, size_t vlen,
                   size_t src)
{
    ND_FORWARD(load_grow((void **)&r->buf, &r->cap, klen + vlen, 1));
    memcpy(r->buf, key, klen);
    memcpy(r->buf + klen, val, vlen);
    r->klen = klen;
    r->vlen = vlen;
    r->src = src;
    return ND_OK;
}

/* The chunks' records of one family grouped by key: a group holds every
 * chunk's record of one key, in chunk order. */
typedef struct grouper {
    spill_rec_merge *m;
    rec_copy *occ;
    size_t nocc, cap;
    rec_copy pend; /* read ahead: the first record of the next group */
    int have_pend;
} grouper;

/* The next group into occ[0..nocc): 1, 0 at the end, or an error. */
static int grouper_next(grouper *g)
{
    const void *k, *v;
    size_t klen, vlen, src;
    int r;
    g->nocc = 0;
    if (g->cap == 0) {
        g->occ = calloc(4, sizeof *g->occ);
        ND_RETURN_IF(!g->occ, ND_ENOMEM, "load: out of memory");
        g->cap = 4;
    }
    if (g->have_pend) {
        rec_copy t = g->occ[0];
        g->occ[0] = g->pend;
        g->pend = t;
        g->have_pend = 0;
    } else {
        r = spill_rec_merge_next(g->m, &k, &klen, &v, &vlen, &src);
        if (r <= 0) return r;
        ND_FORWARD(rec_set(&g->occ[0], k, klen, v, vlen, src));
    }
    g->nocc = 1;
    while ((r = spill_rec_merge_next(g->m, &k, &klen, &v, &vlen, &src)) > 0) {
        if (klen != g->occ[0].klen || memcmp(k, g->occ[0].buf, klen) != 0) {
            ND_FORWARD(rec_set(&g->pend, k, klen, v, vlen, src));
            g->have_pend = 1;
            break;
        }
        if (g->nocc == g->cap) {
            rec_copy *o = realloc(g->occ, 2 * g->cap * sizeof *o);
            ND_RETURN_IF(!o, ND_ENOMEM, "load: out of memory");
            memset(o + g->cap, 0, g->cap * sizeof *o);
            g->occ = o;
            g->cap *= 2;
        }
        ND_FORWARD(rec_set(&g->occ[g->nocc++], k, klen, v, vlen, src));
    }
    return r < 0 ? r : 1;
}

static void grouper_reset(grouper *g)
{
    spill_rec_merge_close(g->m);
    g->m = NULL;
    g->nocc = 0;
    g->have_pend = 0;
}

static void grouper_dispose(grouper *g)
{
    grouper_reset(g);
    for (size_t i = 0; i < g->cap; i++) free(g->occ[i].buf);
    free(g->occ);
    free(g->pend.buf);
}

/* A chunk's rev entry left out: its key (fp || document key) in the
 * arena, and the chunk. */
typedef struct skip_ent {
    size_t off, len, src;
} skip_ent;

/* A document whose key the store held by the commit: its chunk, and in
 * a resemblance store its sketch (from the sketch pass). */
typedef struct late_ent {
    size_t off, len, src;
    uint64_t fp;
    double score;
    int64_t time;
    int has_sketch;
    nd_sketch sketch;
} late_ent;

typedef struct commit_ctx {
    nd_loader *l;
    grouper gr;
    size_t cur_src;       /* chunk of the docs entry last handed out */
    uint64_t ndocs_new;   /* docs entries written */
    char *arena;          /* keys of skipped and late entries */
    size_t alen, acap;
    skip_ent *skip;
    size_t nskip, skip_cap, skip_at;
    size_t *by_doc;       /* skip's indices by document key, then chunk */
    late_ent *late;
    size_t nlate, late_cap;
    /* rev walk: the fingerprint at hand, whether one of its entries was
     * left out and whether one was written */
    uint64_t fp;
    int fp_any, fp_skipped, fp_kept;
    st_u64s dead;         /* ascending */
} commit_ctx;

/* A walk through one table's chunk files, without the dead fingerprints. */
typedef struct table_walk {
    spill_u64_merge *um;
    const nd_perm *perm;
    const st_u64s *dead;
} table_walk;

static int arena_put(commit_ctx *c, const void *p, size_t n, size_t *off)
{
    ND_FORWARD(load_grow((void **)&c->arena, &c->acap, c->alen + n, 1));
    memcpy(c->arena + c->alen, p, n);
    *off = c->alen;
    c->alen += n;
    return ND_OK;
}

/* Leave out chunk src's rev entry of the document key with value val. */
static int skip_add(commit_ctx *c, const void *key, size_t klen, const char *val, size_t vlen,
                    size_t src)
{
    ND_RETURN_IF(vlen != DB_DOC_VALUE_LEN, ND_ECORRUPT, "load: a spilled document is malformed");
    uint8_t rk[8 + ND_MAX_KEY_LEN];
    ND_RETURN_IF(klen > ND_MAX_KEY_LEN, ND_ECORRUPT, "load: a spilled key is too long");
    size_t rlen = db_rev_key_encode(rk, nd_load_be64(val), key, klen); /* val: BE64 fp first */
    ND_FORWARD(load_grow((void **)&c->skip, &c->skip_cap, c->nskip + 1, sizeof *c->skip));
    skip_ent *e = &c->skip[c->nskip];
    ND_FORWARD(arena_put(c, rk, rlen, &e->off));
    e->len = rlen;
    e->src = src;
    c->nskip++;
    return ND_OK;
}

static int docs_next(void *payload, const void **key, size_t *klen, const void **val,
                     size_t *vlen)
{
    commit_ctx *c = payload;
    for (;;) {
        int r = grouper_next(&c->gr);
        if (r <= 0) return r;
        const rec_copy *occ = c->gr.occ, *last = &occ[c->gr.nocc - 1];
        /* Of a key in several chunks the last chunk's document wins; a
         * marker has no rev entry to leave out. */
        for (size_t i = 0; i + 1 < c->gr.nocc; i++)
            if (occ[i].vlen)
                ND_FORWARD(skip_add(c, occ[i].buf, occ[i].klen, occ[i].buf + occ[i].klen,
                                    occ[i].vlen, occ[i].src));
        if (last->vlen == 0) continue; /* a marker: replaced in the store */
        ND_RETURN_IF(last->vlen != DB_DOC_VALUE_LEN, ND_ECORRUPT,
                     "load: a spilled document is malformed");
        c->cur_src = last->src;
        c->ndocs_new++;
        *key = last->buf;
        *klen = last->klen;
        *val = last->buf + last->klen;
        *vlen = last->vlen;
        return 1;
    }
}

/* The store holds the key by now: replace it after the switch. */
static int docs_clash(void *payload, const void *key, size_t klen, const void *val, size_t vlen)
{
    commit_ctx *c = payload;
    c->ndocs_new--;
    ND_FORWARD(skip_add(c, key, klen, val, vlen, c->cur_src));
    ND_FORWARD(load_grow((void **)&c->late, &c->late_cap, c->nlate + 1, sizeof *c->late));
    late_ent *e = &c->late[c->nlate];
    ND_FORWARD(arena_put(c, key, klen, &e->off));
    e->len = klen;
    e->src = c->cur_src;
    e->has_sketch = 0;
    ND_FORWARD(db_doc_decode(val, vlen, &e->fp, &e->score, &e->time));
    c->nlate++;
    return ND_OK;
}

/* skip_ent order: key bytes, then chunk. qsort has no context: the
 * arena of the sort in progress on this thread. */
static _Thread_local const char *skip_arena;

static int skip_cmp_key(const char *a, size_t alen, size_t asrc, const char *b, size_t blen,
                        size_t bsrc)
{
    int r = nd_bytes_cmp(a, alen, b, blen);
    if (r == 0) r = (asrc > bsrc) - (asrc < bsrc);
    return r;
}

static int skip_cmp(const void *x, const void *y)
{
    const skip_ent *a = x, *b = y;
    return skip_cmp_key(skip_arena + a->off, a->len, a->src, skip_arena + b->off, b->len, b->src);
}

/* Is chunk src's rev entry key left out? Asked in ascending (key, src). */
static int skipped(commit_ctx *c, const char *key, size_t klen, size_t src)
{
    while (c->skip_at < c->nskip) {
        const skip_ent *e = &c->skip[c->skip_at];
        int r = skip_cmp_key(c->arena + e->off, e->len, e->src, key, klen, src);
        if (r > 0) return 0;
        c->skip_at++;
        if (r == 0) return 1;
    }
    return 0;
}

/* The fingerprint at hand is done: dead if an entry of it was left out
 * and none written. */
static int fp_done(commit_ctx *c)
{
    if (c->fp_any && c->fp_skipped && !c->fp_kept) ND_FORWARD(st_u64s_push(&c->dead, c->fp));
    c->fp_skipped = c->fp_kept = 0;
    return ND_OK;
}

static int rev_next(void *payload, const void **key, size_t *klen, const void **val,
                    size_t *vlen)
{
    commit_ctx *c = payload;
    for (;;) {
        int r = grouper_next(&c->gr);
        if (r < 0) return r;
        if (r == 0) {
            ND_FORWARD(fp_done(c));
            return 0;
        }
        const rec_copy *occ = c->gr.occ;
        ND_RETURN_IF(occ[0].klen < 8, ND_ECORRUPT, "load: a spilled rev entry is malformed");
        uint64_t fp = nd_load_be64(occ[0].buf);
        if (!c->fp_any || fp != c->fp) {
            ND_FORWARD(fp_done(c));
            c->fp = fp;
            c->fp_any = 1;
        }
        /* The occurrence kept is the chunk whose document won: its value
         * holds that document's score and time. */
        const rec_copy *kept = NULL;
        for (size_t i = 0; i < c->gr.nocc; i++) {
            if (skipped(c, occ[i].buf, occ[i].klen, occ[i].src)) c->fp_skipped = 1;
            else kept = &occ[i];
        }
        if (!kept) continue;
        c->fp_kept = 1;
        *key = kept->buf;
        *klen = kept->klen;
        *val = kept->buf + kept->klen;
        *vlen = kept->vlen;
        return 1;
    }
}

/* The chunks' values of one table, without the dead fingerprints. */
static int table_read(void *payload, uint64_t *buf, size_t cap, size_t *got)
{
    table_walk *w = payload;
    const st_u64s *dead = w->dead;
    for (;;) {
        ND_FORWARD(spill_u64_merge_read(w->um, buf, cap, got));
        if (dead->n == 0 || *got == 0) return ND_OK;
        size_t k = 0;
        for (size_t i = 0; i < *got; i++) {
            uint64_t fp = nd_perm_invert(w->perm, buf[i]);
            size_t at = st_u64_lower_bound(dead->v, dead->n, fp);
            if (at == dead->n || dead->v[at] != fp) buf[k++] = buf[i];
        }
        *got = k;
        if (k) return ND_OK;
    }
}

/* One family's merge of every chunk's file with the stored family. */
static int merge_family(commit_ctx *c, st_regen *g, int cf, st_next_fn next, st_clash_fn clash)
{
    nd_loader *l = c->l;
    char **paths = NULL;
    int rc;
    ND_TRY(load_chunk_paths(l, cf == ST_CF_DOCS ? "docs" : "rev", &paths));
    ND_TRY(spill_rec_merge_open(&c->gr.m, paths, l->nchunks));
    ND_TRY(st_family_merge_stream(g, l->db->store, cf, next, clash, c));
cleanup:
    grouper_reset(&c->gr);
    load_free_paths(paths, l->nchunks);
    return rc;
}

static int merge_table(nd_loader *l, const st_u64s *dead, st_regen *g, unsigned t,
                       uint64_t *put)
{
    table_walk w = {.perm = &l->db->plan.table[t], .dead = dead};
    char what[16], **paths = NULL;
    int rc;
    snprintf(what, sizeof what, "t%02u", t);
    ND_TRY(load_chunk_paths(l, what, &paths));
    ND_TRY(spill_u64_merge_open(&w.um, paths, l->nchunks));
    ND_TRY(st_table_rewrite_stream(g, l->db->store, t, l->db->run_size, table_read, &w, put));
    load_unlink_paths(paths, l->nchunks);
cleanup:
    spill_u64_merge_close(w.um);
    load_free_paths(paths, l->nchunks);
    return rc;
}

/* Tables first, first + step, ... into g; *put: table first's new values. */
typedef struct tables_job {
    nd_loader *l;
    const st_u64s *dead;
    st_regen *g;
    unsigned first, step;
    uint64_t put;
} tables_job;

static int merge_tables(void *arg)
{
    tables_job *j = arg;
    for (unsigned t = j->first; t < j->l->db->plan.info.tables; t += j->step) {
        uint64_t put = 0;
        ND_FORWARD(merge_table(j->l, j->dead, j->g, t, &put));
        if (t == j->first) j->put = put;
    }
    return ND_OK;
}

/* Every table; *added: table 0's new values (the new fingerprints). The
 * odd tables go to a fork of g on a thread of its own. */
static int commit_tables(commit_ctx *c, st_regen *g, uint64_t *added)
{
    tables_job even = {c->l, &c->dead, g, 0, 2, 0}, odd = {c->l, &c->dead, NULL, 1, 2, 0};
    nd_task task;
    int rc;
    if (db_threads(c->l->db) < 2) {
        even.step = 1;
        ND_FORWARD(merge_tables(&even));
        *added = even.put;
        return ND_OK;
    }
    ND_FORWARD(st_regen_fork(&odd.g, g));
    nd_task_start(&task, merge_tables, &odd, 1);
    rc = nd_task_wait(&task, merge_tables(&even));
    int jrc = st_regen_join(g, odd.g, rc == ND_OK);
    ND_FORWARD(rc);
    ND_FORWARD(jrc);
    *added = even.put;
    return ND_OK;
}

static void commit_dispose(commit_ctx *c)
{
    grouper_dispose(&c->gr);
    free(c->arena);
    free(c->skip);
    free(c->by_doc);
    free(c->late);
    st_u64s_dispose(&c->dead);
}

/* rev after docs: without the entries docs left out. */
static int commit_rev(commit_ctx *c, st_regen *g)
{
    skip_arena = c->arena;
    if (c->nskip) qsort(c->skip, c->nskip, sizeof *c->skip, skip_cmp);
    return merge_family(c, g, ST_CF_REV, rev_next, NULL);
}

/* rev as if docs left nothing out, into a fork, for a task. */
typedef struct rev_job {
    commit_ctx c;
    st_regen *g;
} rev_job;

static int rev_guess(void *arg)
{
    rev_job *j = arg;
    return merge_family(&j->c, j->g, ST_CF_REV, rev_next, NULL);
}

/* docs, and rev: beside docs on a thread of its own as if nothing were
 * left out (no key in two chunks, none stored meanwhile: then no rev
 * entry is skipped and no fingerprint dead), again after docs if
 * something was. */
static int commit_docs_rev(commit_ctx *c, st_regen *g)
{
    rev_job guess = {.c = {.l = c->l}};
    nd_task task;
    if (db_threads(c->l->db) < 2) {
        ND_FORWARD(merge_family(c, g, ST_CF_DOCS, docs_next, docs_clash));
        return commit_rev(c, g);
    }
    ND_FORWARD(st_regen_fork(&guess.g, g));
    nd_task_start(&task, rev_guess, &guess, 1);
    int drc = merge_family(c, g, ST_CF_DOCS, docs_next, docs_clash);
    int grc = nd_task_wait(&task, drc); /* docs' failure, else the guess's result */
    /* Is the guess what rev after docs would be? Not when docs left an
     * entry out: then it may even have failed (on a rev entry stored by a
     * writer since the spill, which rev after docs leaves out). */
    int right = drc == ND_OK && c->nskip == 0;
    int jrc = st_regen_join(g, guess.g, right && grc == ND_OK);
    commit_dispose(&guess.c);
    ND_FORWARD(drc);
    if (right) ND_FORWARD(grc);
    ND_FORWARD(jrc);
    return right ? ND_OK : commit_rev(c, g);
}

/* Documents the store held by the commit, through the replacement path. */
static int replace_late(commit_ctx *c)
{
    nd_doc *docs = malloc(LATE_BATCH * sizeof *docs);
    size_t *idx = malloc(LATE_BATCH * sizeof *idx);
    int rc = ND_OK;
    if (!docs || !idx) ND_FAIL(ND_ENOMEM, "load: out of memory");
    for (size_t at = 0; at < c->nlate; at += LATE_BATCH) {
        size_t n = c->nlate - at < LATE_BATCH ? c->nlate - at : LATE_BATCH;
        for (size_t i = 0; i < n; i++) {
            const late_ent *e = &c->late[at + i];
            docs[i] = (nd_doc){c->arena + e->off, e->len, e->fp, e->score, e->time};
            if (c->l->db->min_resemblance > 0) {
                if (!e->has_sketch)
                    ND_FAIL(ND_ECORRUPT, "load: no sketch spilled for document '%.*s'",
                            (int)(e->len > 80 ? 80 : e->len), c->arena + e->off);
                docs[i].sketch = &e->sketch;
            }
            idx[i] = i;
        }
        ND_TRY(db_import_replace(c->l->db, docs, idx, n));
    }
cleanup:
    free(docs);
    free(idx);
    return rc;
}

/* ---- a resemblance store's sketches and band entries -------------------- */

static _Thread_local const commit_ctx *by_doc_ctx;

static const char *skip_doc(const commit_ctx *c, size_t i, size_t *len)
{
    const skip_ent *e = &c->skip[i];
    *len = e->len - 8; /* a rev key: BE64 fingerprint || document key */
    return c->arena + e->off + 8;
}

static int by_doc_cmp(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y, ilen, jlen;
    const char *a = skip_doc(by_doc_ctx, i, &ilen), *b = skip_doc(by_doc_ctx, j, &jlen);
    return skip_cmp_key(a, ilen, by_doc_ctx->skip[i].src, b, jlen, by_doc_ctx->skip[j].src);
}

/* Is chunk src's document of key among those docs left out? */
static int doc_left_out(const commit_ctx *c, const char *key, size_t klen, size_t src)
{
    size_t lo = 0, hi = c->nskip;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, mlen;
        const char *m = skip_doc(c, c->by_doc[mid], &mlen);
        int r = skip_cmp_key(m, mlen, c->skip[c->by_doc[mid]].src, key, klen, src);
        if (r == 0) return 1;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* The late document of key from chunk src, or NULL (late is in key order:
 * docs found them in its order). */
static late_ent *late_of(commit_ctx *c, const char *key, size_t klen, size_t src)
{
    size_t lo = 0, hi = c->nlate;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        late_ent *e = &c->late[mid];
        int r = nd_bytes_cmp(c->arena + e->off, e->len, key, klen);
        if (r == 0) return e->src == src ? e : NULL;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* load_keep_fn: written unless docs left it out; a late document's
 * sketch is kept for its replacement after the switch. */
static int sketch_keep(void *payload, const char *key, size_t klen, size_t src,
                       const char *sketch_val, size_t vlen)
{
    commit_ctx *c = payload;
    if (!doc_left_out(c, key, klen, src)) return 1;
    late_ent *e = sketch_val ? late_of(c, key, klen, src) : NULL;
    if (e) {
        ND_FORWARD(db_sketch_decode(sketch_val, vlen, &e->sketch));
        e->has_sketch = 1;
    }
    return 0;
}

static int commit_sketches(commit_ctx *c, st_regen *g)
{
    if (c->nskip) {
        c->by_doc = malloc(c->nskip * sizeof *c->by_doc);
        ND_RETURN_IF(!c->by_doc, ND_ENOMEM, "load: out of memory");
        for (size_t i = 0; i < c->nskip; i++) c->by_doc[i] = i;
        by_doc_ctx = c;
        qsort(c->by_doc, c->nskip, sizeof *c->by_doc, by_doc_cmp);
    }
    return load_commit_sketches(c->l, g, sketch_keep, c);
}

/* The commit of a load that spilled (fold.mu and write.mu held). */
int load_commit_locked(nd_loader *l, uint64_t *out_new)
{
    nd_db *db = l->db;
    commit_ctx c = {.l = l};
    st_regen *g = NULL;
    db_txn t = {0};
    uint64_t added = 0;
    int noting = 0, rc;
    ND_TRY(db_fold_locked(db));
    ND_TRY(st_regen_new(&g, db->store));
    ND_TRY(commit_docs_rev(&c, g));
    ND_TRY(load_drop_family(l, "docs"));
    ND_TRY(load_drop_family(l, "rev"));
    ND_TRY(commit_tables(&c, g, &added));
    if (db->min_resemblance > 0) {
        db_bands_load_begin(db);
        noting = 1;
        ND_TRY(commit_sketches(&c, g));
    }
    ND_TRY(db_txn_begin(&t, db, DB_TXN_HELD | DB_TXN_PLAIN));
    ND_TRY(st_batch_set_regen(t.b, g));
    db_txn_count(&t, c.ndocs_new, added);
    ND_TRY(db_txn_commit(&t));
    if (out_new) *out_new = c.ndocs_new;
    ND_TRY(replace_late(&c));
cleanup:
    rc = db_txn_end(&t, rc);
    st_regen_free(g);
    if (noting) db_bands_load_end(db); /* the band file in, or dropped */
    commit_dispose(&c);
    return rc;
}

