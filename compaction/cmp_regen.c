/*
 * cmp_regen.c — families rewritten through sorted files (cmp_regen.h).
 *
 * A new generation: each family's file is written in key order by
 * kv_sst_* and ingested whole into the family of the new generation
 * (cmp_gen.h) at st_regen_end, or by st_regen_join for a fork's; nothing
 * is visible until the store switches to the generation (st_batch_switch,
 * through st_batch_set_regen). A table rewritten in place writes two
 * files, its runs (with a range deletion of the old ones) and the
 * deletions of the fresh keys it placed, that st_table_ingest_files lays
 * over the table at once.
 *
 * The second half merges new entries into a keyed family (docs, rev)
 * while it is written into a new generation: one forward walk of the
 * family as it is, interleaved with the new entries, in key order.
 */
#include "cmp_regen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmp_carry.h"
#include "cmp_direct.h"
#include "cmp_fresh.h"
#include "cmp_gen.h"
#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "cmp_store_ingest.h"
#include "nd_bytes.h"
#include "nd_error.h"

struct st_regen {
    st_store *s;
    cmp_gen *next; /* the new families (a reference unless a fork's) */
    /* Or a table rewritten in place (st_regen_new_table): which, the view
     * it is read from, the sequences then, and the fresh entries its file
     * deletes (for the mirror). */
    int table;
    st_snap *snap;
    uint64_t runs_seq, dels_seq;
    cmp_flog log;
    cmp_direct *direct; /* its runs read from the file, once ingested */
    /* The deletions of its fresh keys go to a file of their own: a file
     * holding them and the runs would span the fresh keys flushed since
     * the view, and RocksDB would ingest it into level 0 and compact it
     * down level by level, where the runs alone go just above the
     * table's runs. */
    kv_sst *dw;
    char *dfile;
    uint64_t dkeys;
    kv_sst *w;                   /* the family being written, or NULL */
    int cf;                      /* the family being written */
    uint64_t keys;               /* keys put into its file */
    unsigned char written[ST_CF_ALL]; /* families finished */
    char *file;                  /* the file's path */
    /* A fork (st_regen_fork) writes into its parent's next, and keeps the
     * files it finished for st_regen_join to ingest. */
    st_regen *parent;
    char *done[ST_CF_ALL];
    /* A new generation that carries the current docs and rev
     * (st_regen_new_carried): deletions go to their files
     * (cmp_carry.h), which families wrote one (CMP_CARRY_*). */
    int carry;
    unsigned carried;
    st_stop_fn stop; /* st_regen_set_stop */
    uint64_t ticks;  /* st_regen_tick's count */
    void *stop_payload;
};

/* What both kinds of rewrite need: the file's path. */
static int regen_alloc(st_regen **out, st_store *s)
{
    ND_FORWARD(st_store_writable(s));
    st_regen *g = calloc(1, sizeof *g);
    ND_RETURN_IF(!g, ND_ENOMEM, "storage: out of memory");
    g->s = s;
    g->table = -1;
    g->file = st_store_file(s, ST_FILE_REGEN);
    if (!g->file) {
        st_regen_free(g);
        return nd_err_set(ND_ENOMEM, "storage: out of memory");
    }
    *out = g;
    return ND_OK;
}

static int regen_new(st_regen **out, st_store *s, int carry)
{
    int rc;
    st_regen *g;
    ND_FORWARD(regen_alloc(&g, s));
    g->carry = carry;
    ND_TRY(cmp_gen_new(&g->next, st_generation(s) + 1, st_ntables(s)));
    cmp_gen *cur = carry ? st_gen_acquire(s) : NULL;
    rc = cmp_gen_create_families(st_store_kv(s), g->next, cur);
    st_gen_release(s, cur);
    ND_TRY(rc);
    *out = g;
    return ND_OK;
cleanup:
    st_regen_free(g);
    return rc;
}

int st_regen_new(st_regen **out, st_store *s) { return regen_new(out, s, 0); }
int st_regen_new_carried(st_regen **out, st_store *s) { return regen_new(out, s, 1); }

/* A resemblance store's sketch or band family: not generational, so a
 * generation's entries for it are a file laid over it after the switch. */
static int fixed_family(int cf) { return cf == ST_CF_SKETCH || cf == ST_CF_BAND; }

/* Is family cf written as a file the switch records and lays over the
 * store's (docs and rev of a carried generation, deletions only; a
 * resemblance store's sketch and band, deletions or puts)? */
static int carried_family(const st_regen *g, int cf)
{
    return cmp_carry_bit(cf) != 0 && (g->carry || fixed_family(cf));
}

int st_regen_new_table(st_regen **out, st_store *s, unsigned t, const st_snap **snap)
{
    st_regen *g;
    int rc;
    ND_RETURN_IF(t >= st_ntables(s), ND_EINVAL, "storage: no table %u", t);
    ND_FORWARD(regen_alloc(&g, s));
    g->table = (int)t;
    g->dfile = st_store_file(s, ST_FILE_REGEN_DEL);
    if (!g->dfile) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    g->runs_seq = st_runs_seq(s);
    g->dels_seq = st_dels_seq(s);
    ND_TRY(st_snap_new(&g->snap, s));
    *snap = g->snap;
    *out = g;
    return ND_OK;
cleanup:
    st_regen_free(g);
    return rc;
}

int st_regen_fork(st_regen **out, st_regen *g)
{
    st_regen *f;
    ND_RETURN_IF(!g->next || g->parent, ND_EINVAL,
                 "storage: only the writer of a new generation forks");
    ND_FORWARD(regen_alloc(&f, g->s));
    f->parent = g;
    f->next = g->next;
    f->carry = g->carry;
    *out = f;
    return ND_OK;
}

int st_regen_begin(st_regen *g, int cf)
{
    int in_place = g->table >= 0;
    ND_RETURN_IF(g->w || cf < ST_CF_DOCS || cf >= ST_CF_ALL ||
                     (in_place            ? cf != ST_CF_TABLE(g->table)
                      : fixed_family(cf) ? !st_has_family(g->s, cf)
                                          : cf >= ST_CF_TABLE((int)g->next->n)) ||
                     g->written[cf],
                 ND_EINVAL, "storage: family %d cannot be begun here", cf);
    /* a carried family goes to its file (cmp_carry.h); a fork has a file
     * of its own for each family, kept until joined */
    char name[32];
    snprintf(name, sizeof name, ST_FILE_REGEN_FORK, cf);
    char *path = carried_family(g, cf) ? cmp_carry_file(g->s, cf)
                 : g->parent           ? st_store_file(g->s, name)
                                       : st_store_file(g->s, ST_FILE_REGEN);
    ND_RETURN_IF(!path, ND_ENOMEM, "storage: out of memory");
    free(g->file);
    g->file = path;
    g->cf = cf;
    g->keys = 0;
    return kv_sst_new(&g->w, st_store_kv(g->s), cmp_gen_profile(cf), g->file, NULL);
}

void st_regen_set_stop(st_regen *g, st_stop_fn stop, void *payload)
{
    g->stop = stop;
    g->stop_payload = payload;
}

int st_regen_put(st_regen *g, const void *key, size_t klen, const void *val, size_t vlen)
{
    ND_RETURN_IF(carried_family(g, g->cf) && !fixed_family(g->cf), ND_EINVAL,
                 "storage: a carried family takes deletions only");
    g->keys++;
    ND_FORWARD(st_regen_tick(g));
    return kv_sst_put(g->w, key, klen, val, vlen);
}

int st_regen_tick(st_regen *g)
{
    if (g->stop && (++g->ticks & (ST_REGEN_STOP_EVERY - 1)) == 0)
        return g->stop(g->stop_payload);
    return ND_OK;
}

int st_regen_delete(st_regen *g, const void *key, size_t klen)
{
    if (g->w && carried_family(g, g->cf)) {
        g->keys++;
        ND_FORWARD(st_regen_tick(g));
        return kv_sst_delete(g->w, key, klen);
    }
    ND_RETURN_IF(g->table < 0 || !g->w, ND_EINVAL,
                 "storage: only a table rewritten in place or a carried family deletes");
    if (!g->dw)
        ND_FORWARD(kv_sst_new(&g->dw, st_store_kv(g->s), CMP_PROFILE_TABLE, g->dfile, NULL));
    ND_FORWARD(kv_sst_delete(g->dw, key, klen));
    g->dkeys++;
    return cmp_flog_note(&g->log, (unsigned)g->table, key, klen, 0);
}

int st_regen_delete_range(st_regen *g, const void *lo, size_t lolen, const void *hi,
                          size_t hilen)
{
    ND_RETURN_IF(g->table < 0 || !g->w, ND_EINVAL,
                 "storage: only a table rewritten in place deletes");
    g->keys++;
    return kv_sst_delete_range(g->w, lo, lolen, hi, hilen);
}

static void regen_drop_writer(st_regen *g)
{
    if (g->dw) {
        kv_sst_free(g->dw);
        g->dw = NULL;
        (void)unlink(g->dfile);
    }
    if (!g->w) return;
    kv_sst_free(g->w);
    g->w = NULL;
    if (g->file) (void)unlink(g->file);
}

/* st_regen_end in place: the files are ingested later
 * (st_regen_apply_table), with the writers held off. */
static int regen_end_table(st_regen *g)
{
    kv_db *kv = st_store_kv(g->s);
    if (g->keys) ND_FORWARD(kv_sst_finish(g->w));
    if (g->dkeys) ND_FORWARD(kv_sst_finish(g->dw));
    kv_sst_free(g->w);
    g->w = NULL;
    kv_sst_free(g->dw);
    g->dw = NULL;
    g->written[g->cf] = 1;
    /* Flushing the memtables now leaves that ingest less to flush first
     * (a file overlapping them waits for their flush). */
    kv_cf *cf = st_snap_gen(g->snap)->cf[g->cf];
    if (!kv_memtables_empty(kv, cf)) (void)kv_flush(kv, cf);
    /* Opened now, read once ingested: the ingest links the file into the
     * database (the same inode) and unlinks this name. If it cannot be
     * read directly, RocksDB reads it. */
    if (g->keys) g->direct = st_direct_open(g->s, g->file, (unsigned)g->table, 1);
    if (g->direct) cmp_direct_prefetch(g->direct);
    return ND_OK;
}

/* Ingest file into family cf of g's new generation. */
static int regen_ingest(st_regen *g, int cf, const char *file)
{
    const char *files[1] = {file};
    int rc = kv_ingest(st_store_kv(g->s), g->next->cf[cf], files, 1,
                       "ingesting a rewritten family");
    if (rc == ND_OK && cf >= ST_CF_TABLE0)
        st_direct_remake(g->s, g->next, 1ull << (cf - ST_CF_TABLE0));
    return rc;
}

int st_regen_end(st_regen *g)
{
    int rc = ND_OK;
    ND_RETURN_IF(!g->w, ND_EINVAL, "storage: no family is being written");
    if (g->table >= 0) return regen_end_table(g);
    if (g->keys) { /* an empty family needs no file (RocksDB refuses one) */
        rc = kv_sst_finish(g->w);
        if (rc == ND_OK && carried_family(g, g->cf)) { /* the switch ingests it */
            g->carried |= cmp_carry_bit(g->cf);
            free(g->file);
            g->file = NULL;
        } else if (rc == ND_OK && g->parent) { /* st_regen_join ingests it */
            g->done[g->cf] = g->file;
            g->file = NULL;
        } else if (rc == ND_OK) {
            rc = regen_ingest(g, g->cf, g->file);
        }
    }
    regen_drop_writer(g);
    if (rc == ND_OK) g->written[g->cf] = 1;
    return rc;
}

int st_regen_join(st_regen *g, st_regen *part, int keep)
{
    int rc = ND_OK;
    if (part->parent != g)
        rc = nd_err_set(ND_EINVAL, "storage: a fork joined to another writer");
    else if (keep && part->w)
        rc = nd_err_set(ND_EINVAL, "storage: family %d of a fork is still being written", part->cf);
    for (int cf = ST_CF_DOCS; rc == ND_OK && keep && cf < ST_CF_ALL; cf++) {
        if (!part->written[cf]) continue;
        if (g->written[cf] || (g->w && g->cf == cf)) {
            rc = nd_err_set(ND_EINVAL, "storage: family %d of the new generation written twice",
                            cf);
            break;
        }
        if (part->done[cf]) rc = regen_ingest(g, cf, part->done[cf]);
        if (rc == ND_OK) g->written[cf] = 1;
    }
    if (rc == ND_OK && keep) {
        g->carried |= part->carried;
        part->carried = 0;
    }
    st_regen_free(part);
    return rc;
}

int st_regen_apply_table(st_regen *g, int *applied)
{
    int cf = ST_CF_TABLE(g->table);
    *applied = 0;
    ND_RETURN_IF(g->table < 0 || !g->written[cf], ND_EINVAL,
                 "storage: no table rewritten in place to apply");
    /* Key order: the fresh space ('F') below the runs ('R'). */
    const char *files[2];
    size_t n = 0;
    if (g->dkeys) files[n++] = g->dfile;
    if (g->keys) files[n++] = g->file;
    return st_table_ingest_files(g->s, st_snap_gen(g->snap), (unsigned)g->table, files, n,
                                 &g->log, g->direct, g->runs_seq, g->dels_seq, applied);
}

int st_batch_set_regen(st_batch *b, st_regen *g)
{
    ND_RETURN_IF(!g->next, ND_EINVAL, "storage: a table rewritten in place switches nothing");
    ND_RETURN_IF(g->w, ND_EINVAL, "storage: family %d is still being written", g->cf);
    for (int cf = ST_CF_DOCS; cf < ST_CF_TABLE((int)g->next->n); cf++)
        ND_RETURN_IF(!g->written[cf], ND_EINVAL,
                     "storage: family %d of the new generation was not written", cf);
    return st_batch_switch(b, g->next, g->carried);
}

void st_regen_free(st_regen *g)
{
    if (!g) return;
    regen_drop_writer(g);
    for (int cf = 0; cf < ST_CF_ALL; cf++) {
        if (g->done[cf]) (void)unlink(g->done[cf]); /* a fork's, not ingested */
        free(g->done[cf]);
    }
    int switched = g->next && g->next->made_current;
    if (g->next && !g->parent) {
        /* Never made current: its families go (not those it carries). */
        if (!switched) {
            cmp_gen *cur = st_gen_acquire(g->s);
            cmp_gen_drop_families(st_store_kv(g->s), g->next, cur);
            st_gen_release(g->s, cur);
        }
        st_gen_release(g->s, g->next);
    }
    /* deletions not switched to (a fork's go when its parent's do not:
     * join takes them over) */
    if (!switched) cmp_carry_unlink(g->s, g->carried);
    if (g->table >= 0) { /* not ingested */
        if (g->file) (void)unlink(g->file);
        if (g->dfile) (void)unlink(g->dfile);
    }
    st_snap_free(g->snap);
    cmp_flog_dispose(&g->log);
    cmp_direct_unref(g->direct);
    free(g->file);
    free(g->dfile);
    free(g);
}

/* ---- merging new entries into a keyed family ---------------------------- */

/* The new entries, one at a time: the current one (have: there is one),
 * and a copy of the previous key (next may reuse its buffers) to check
 * their order. */
typedef struct new_entries {
    int cf, have;
    size_t i;
    st_next_fn next;
    void *payload;
    const void *key, *val;
    size_t klen, vlen;
    char *prev;
    size_t plen, pcap;
} new_entries;

/* Fetch the next new entry, checking it comes after the current one. */
static int advance(new_entries *nw)
{
    if (nw->have) {
        if (nw->klen > nw->pcap) {
            char *p = realloc(nw->prev, nw->klen);
            ND_RETURN_IF(!p, ND_ENOMEM, "storage: out of memory");
            nw->prev = p;
            nw->pcap = nw->klen;
        }
        memcpy(nw->prev, nw->key, nw->klen);
        nw->plen = nw->klen;
        nw->i++;
    }
    int rc = nw->next(nw->payload, &nw->key, &nw->klen, &nw->val, &nw->vlen);
    if (rc < 0) return rc;
    int had = nw->have;
    nw->have = rc > 0;
    ND_RETURN_IF(had && nw->have && nd_bytes_cmp(nw->prev, nw->plen, nw->key, nw->klen) >= 0,
                 ND_EINVAL, "storage: new entry %zu of family %d is out of order", nw->i,
                 nw->cf);
    return ND_OK;
}

int st_family_merge_stream(st_regen *g, st_store *s, int cf, st_next_fn next,
                           st_clash_fn clash, void *payload)
{
    st_iter *it = NULL;
    new_entries nw = {.cf = cf, .next = next, .payload = payload};
    int rc;
    ND_RETURN_IF(cf != ST_CF_DOCS && cf != ST_CF_REV, ND_EINVAL,
                 "storage: family %d is not merged by key", cf);
    ND_TRY(st_regen_begin(g, cf));
    ND_TRY(st_iter_new_scan(&it, s, cf));
    ND_TRY(advance(&nw));
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t olen, ovlen;
        const char *okey = st_iter_key(it, &olen);
        /* The new entries below this stored key come first. */
        while (nw.have && nd_bytes_cmp(nw.key, nw.klen, okey, olen) < 0) {
            ND_TRY(st_regen_put(g, nw.key, nw.klen, nw.val, nw.vlen));
            ND_TRY(advance(&nw));
        }
        if (nw.have && nd_bytes_cmp(nw.key, nw.klen, okey, olen) == 0) {
            if (!clash)
                ND_FAIL(ND_ECORRUPT, "storage: family %d already holds new entry %zu", cf, nw.i);
            ND_TRY(clash(payload, nw.key, nw.klen, nw.val, nw.vlen));
            ND_TRY(advance(&nw));
        }
        const char *oval = st_iter_value(it, &ovlen);
        ND_TRY(st_regen_put(g, okey, olen, oval, ovlen));
    }
    ND_TRY(st_iter_status(it));
    while (nw.have) {
        ND_TRY(st_regen_put(g, nw.key, nw.klen, nw.val, nw.vlen));
        ND_TRY(advance(&nw));
    }
    ND_TRY(st_regen_end(g));
cleanup:
    st_iter_free(it);
    free(nw.prev);
    return rc;
}

/* st_family_merge's n indexed entries as a stream. */
typedef struct counted {
    st_kv_fn kv;
    void *payload;
    size_t i, n;
} counted;

static int counted_next(void *payload, const void **key, size_t *klen, const void **val,
                        size_t *vlen)
{
    counted *c = payload;
    if (c->i == c->n) return 0;
    ND_FORWARD(c->kv(c->payload, c->i++, key, klen, val, vlen));
    return 1;
}

int st_family_merge(st_regen *g, st_store *s, int cf, size_t n, st_kv_fn kv, void *payload)
{
    counted c = {kv, payload, 0, n};
    return st_family_merge_stream(g, s, cf, counted_next, NULL, &c);
}
