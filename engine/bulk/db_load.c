/*
 * db_load.c — the bulk loader (nd_loader): a load larger than memory,
 * written into the store once.
 *
 * nd_loader_add buffers documents; each full chunk is spilled: stored keys
 * are replaced at once (as nd_db_import does), the others sorted in memory
 * and written to temporary files (load_spill.h): per table the distinct
 * permuted fingerprints, and the chunk's docs and rev entries in key
 * order. A writer task writes one chunk's files while the caller fills
 * the next chunk in a second set of buffers. nd_loader_finish then writes
 * a new generation in one pass per family, each a k-way merge of the
 * chunks' files with the family as stored (load_commit.c).
 *
 * A resemblance store's chunk holds each document's sketch too; its
 * spill adds the new documents' sketches and band entries
 * (load_sketches.c), which the commit merges into files laid over the
 * sketch and band families by its switch. Its chunks are smaller by
 * default (ND_LOADER_SKETCH_CHUNK): a sketch is 176 bytes a document.
 *
 * Invariants: at most one chunk is being written while the next fills;
 * the replacements of a spill and the commit run under db_exclusive_lock
 * (no fold, no other writer). Callers: the public API only (nd_loader_*,
 * and nd_db_import, here for a resemblance store's sake); the files go
 * through load_files.c and load_spill.c, the commit is load_commit.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_core.h"
#include "db_fold.h"
#include "db_import.h"
#include "db_load_dirs.h"
#include "load_commit.h"
#include "load_files.h"
#include "load_internal.h"
#include "load_sketches.h"
#include "load_spill.h"
#include "nd_error.h"
#include "nd_task.h"
#include "sort.h"

enum { LOADER_OPEN, LOADER_DONE };

/* ---- the chunk in memory ------------------------------------------------ */

int nd_loader_new(nd_loader **out, nd_db *db, size_t chunk_docs)
{
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_loader_new: NULL argument");
    ND_FORWARD(db_check_writable(db));
    nd_loader *l = calloc(1, sizeof *l);
    ND_RETURN_IF(!l, ND_ENOMEM, "nd_loader_new: out of memory");
    l->db = db;
    l->chunk_docs = chunk_docs                ? chunk_docs
                    : db->min_resemblance > 0 ? ND_LOADER_SKETCH_CHUNK
                                              : nd_db_import_step(UINT64_MAX);
    if (l->chunk_docs > UINT32_MAX) l->chunk_docs = UINT32_MAX; /* sort_item's index */
    int rc = db_load_dir_create(db, &l->dir);
    if (rc < 0) {
        free(l);
        return rc;
    }
    *out = l;
    return ND_OK;
}

static int reserve_doc(const nd_loader *l, load_chunk *c)
{
    if (c->n < c->dcap) return ND_OK;
    size_t cap = c->dcap ? 2 * c->dcap : 4096;
    if (cap > l->chunk_docs) cap = l->chunk_docs;
    nd_doc *d = realloc(c->docs, cap * sizeof *d);
    ND_RETURN_IF(!d, ND_ENOMEM, "load: out of memory for %zu documents", cap);
    c->docs = d;
    if (l->db->min_resemblance > 0) {
        nd_sketch *sk = realloc(c->sk, cap * sizeof *sk);
        ND_RETURN_IF(!sk, ND_ENOMEM, "load: out of memory for %zu sketches", cap);
        c->sk = sk;
    }
    size_t *k = realloc(c->koff, cap * sizeof *k);
    ND_RETURN_IF(!k, ND_ENOMEM, "load: out of memory for %zu documents", cap);
    c->koff = k;
    c->dcap = cap;
    return ND_OK;
}

/* Point the chunk's documents at their keys and sketches (the arena no
 * longer moves until the chunk is emptied). */
static void point_keys(load_chunk *c)
{
    for (size_t i = 0; i < c->n; i++) {
        c->docs[i].key = c->arena + c->koff[i];
        c->docs[i].sketch = c->sk ? &c->sk[i] : NULL;
    }
}

/* Empty the chunk for filling again, keeping its buffers. */
static void chunk_clear(load_chunk *c)
{
    free(c->fresh);
    free(c->rep);
    c->fresh = c->rep = NULL;
    c->nfresh = c->nrep = 0;
    c->n = 0;
    c->alen = 0;
}

static void chunk_dispose(load_chunk *c)
{
    chunk_clear(c);
    free(c->docs);
    free(c->sk);
    free(c->koff);
    free(c->arena);
}

/* ---- spilling a chunk --------------------------------------------------- */

/* The chunk's distinct new fingerprints, permuted and sorted per table. */
static int spill_tables(const nd_loader *l, const load_chunk *c)
{
    nd_db *db = l->db;
    size_t n = c->nfresh;
    uint64_t *fps = malloc((n ? n : 1) * sizeof *fps), *perm = malloc((n ? n : 1) * sizeof *perm),
             *tmp = malloc((n ? n : 1) * sizeof *tmp);
    spill_out *o = NULL;
    char *path = NULL;
    int rc = ND_OK;
    if (!fps || !perm || !tmp) ND_FAIL(ND_ENOMEM, "load: out of memory for %zu documents", n);
    for (size_t i = 0; i < n; i++) fps[i] = c->docs[c->fresh[i]].fp;
    size_t nfp = sort_u64_unique(fps, tmp, n);
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        char what[16];
        snprintf(what, sizeof what, "t%02u", t);
        for (size_t i = 0; i < nfp; i++) perm[i] = nd_perm_apply(&db->plan.table[t], fps[i]);
        sort_u64(perm, tmp, nfp);
        path = load_chunk_path(l, c->index, what);
        if (!path) ND_FAIL(ND_ENOMEM, "load: out of memory");
        ND_TRY(spill_create(&o, path));
        ND_TRY(spill_put_u64s(o, perm, nfp));
        rc = spill_close(o);
        o = NULL;
        ND_TRY(rc);
        free(path);
        path = NULL;
    }
cleanup:
    spill_close(o);
    free(path);
    free(fps);
    free(perm);
    free(tmp);
    return rc;
}

static int spill_tables_task(void *arg)
{
    const nd_loader *l = arg;
    return spill_tables(l, &l->out);
}

/* The chunk's docs or (rev) rev entries of the documents idx, in key
 * order. idx is in key order already unless it holds replaced keys too
 * (replaced non-NULL flags them: new keys, then replaced ones). */
static int spill_family(const nd_loader *l, const load_chunk *c, const size_t *idx, size_t n,
                        int rev, const unsigned char *replaced)
{
    const nd_doc *docs = c->docs;
    sort_item *order = NULL;
    spill_out *o = NULL;
    char *path = load_chunk_path(l, c->index, rev ? "rev" : "docs");
    uint8_t buf[8 + ND_MAX_KEY_LEN], val[DB_DOC_VALUE_LEN];
    int rc;
    if (!path) ND_FAIL(ND_ENOMEM, "load: out of memory");
    ND_TRY(db_import_order(docs, idx, n,
                           rev ? DB_ORDER_FP : replaced ? DB_ORDER_KEY : DB_ORDER_GIVEN, &order));
    ND_TRY(spill_create(&o, path));
    for (size_t i = 0; i < n; i++) {
        /* In key order the documents are visited at random: fetch a
         * document ahead, and its key once the document is in. */
        if (i + 16 < n) __builtin_prefetch(&docs[order[i + 16].idx]);
        if (i + 8 < n) __builtin_prefetch(docs[order[i + 8].idx].key);
        const nd_doc *d = &docs[order[i].idx];
        if (rev) {
            db_doc_encode(val, d->fp, d->score, d->time);
            ND_TRY(spill_put_record(o, buf, db_rev_key_encode(buf, d->fp, d->key, d->key_len),
                                    DB_REV_VALUE(val), DB_REV_VALUE_LEN));
        } else if (replaced && replaced[order[i].idx]) {
            ND_TRY(spill_put_record(o, d->key, d->key_len, "", 0)); /* a marker */
        } else {
            db_doc_encode(val, d->fp, d->score, d->time);
            ND_TRY(spill_put_record(o, d->key, d->key_len, val, sizeof val));
        }
    }
    rc = spill_close(o);
    o = NULL;
cleanup:
    spill_close(o);
    free(order);
    free(path);
    return rc;
}

/* The chunk's docs file: its new documents, and a marker for each key
 * replaced. */
static int spill_docs(const nd_loader *l, const load_chunk *c)
{
    size_t *all = NULL;
    unsigned char *replaced = NULL;
    int rc;
    if (c->nrep) {
        all = malloc((c->nfresh + c->nrep) * sizeof *all);
        replaced = calloc(c->n, 1);
        if (!all || !replaced) ND_FAIL(ND_ENOMEM, "load: out of memory");
        memcpy(all, c->fresh, c->nfresh * sizeof *all);
        memcpy(all + c->nfresh, c->rep, c->nrep * sizeof *all);
        for (size_t i = 0; i < c->nrep; i++) replaced[c->rep[i]] = 1;
    }
    ND_TRY(spill_family(l, c, all ? all : c->fresh, c->nfresh + c->nrep, 0, replaced));
cleanup:
    free(all);
    free(replaced);
    return rc;
}

/* The chunk's rev file: its new documents. */
static int spill_rev_task(void *arg)
{
    const nd_loader *l = arg;
    return spill_family(l, &l->out, l->out.fresh, l->out.nfresh, 1, NULL);
}

/* The writer task: chunk out's files, its three parts (docs, and in a
 * resemblance store the sketches and band entries; rev, which sorts the
 * chunk by fingerprint and visits it in that order; the tables) on
 * threads of their own, each writing files of its own. For 8M documents
 * and 10 tables they take about 1.2, 2.3 and 1.5 s. */
static int write_chunk(void *arg)
{
    nd_loader *l = arg;
    nd_task tables, rev;
    int parallel = db_threads(l->db) > 1;
    nd_task_start(&tables, spill_tables_task, l, parallel);
    nd_task_start(&rev, spill_rev_task, l, parallel);
    int rc = spill_docs(l, &l->out);
    if (rc == ND_OK && l->db->min_resemblance > 0) rc = load_spill_sketches(l, &l->out);
    rc = nd_task_wait(&rev, rc);
    return nd_task_wait(&tables, rc);
}

/* Wait for the writer task, if one was started: its result. */
static int writer_wait(nd_loader *l)
{
    if (!l->writing) return ND_OK;
    l->writing = 0;
    int rc = nd_task_wait(&l->writer, ND_OK);
    chunk_clear(&l->out);
    return rc;
}

/* The full chunk: its stored keys replaced now; the rest handed to the
 * writer task as chunk nchunks, which writes its files while the caller
 * fills the next chunk (in the buffers of the chunk written before). The
 * docs file also holds a marker (an empty value) for each key replaced:
 * the commit's merge drops that key's documents of earlier chunks, which
 * this replacement superseded. */
static int spill_chunk(nd_loader *l)
{
    nd_db *db = l->db;
    load_chunk *c = &l->fill;
    point_keys(c);
    db_exclusive_lock(db);
    int rc = db_import_split(db, c->docs, c->n, &c->rep, &c->nrep, &c->fresh, &c->nfresh);
    if (rc == ND_OK && c->nrep) {
        rc = db_fold_locked(db);
        if (rc == ND_OK) rc = db_import_replace(db, c->docs, c->rep, c->nrep);
    }
    db_exclusive_unlock(db);
    ND_FORWARD(rc);
    ND_FORWARD(writer_wait(l));
    load_chunk written = l->out;
    l->out = l->fill;
    l->fill = written;
    l->out.index = l->nchunks++;
    nd_task_start(&l->writer, write_chunk, l, db_threads(db) > 1);
    l->writing = 1;
    return ND_OK;
}

int nd_loader_add(nd_loader *l, const nd_doc *docs, size_t n)
{
    ND_RETURN_IF(!l, ND_EINVAL, "nd_loader_add: NULL loader");
    ND_RETURN_IF(n && !docs, ND_EINVAL, "nd_loader_add: NULL documents");
    ND_RETURN_IF(l->state != LOADER_OPEN, ND_EINVAL,
                 "nd_loader_add: the loader was committed or failed");
    ND_FORWARD(db_check_docs(docs, n));
    ND_FORWARD(db_check_sketches(l->db, docs, n, "nd_loader_add"));
    for (size_t i = 0; i < n; i++) {
        load_chunk *c = &l->fill; /* spill_chunk swaps it */
        int rc = reserve_doc(l, c);
        if (rc == ND_OK) rc = load_grow((void **)&c->arena, &c->acap, c->alen + docs[i].key_len, 1);
        if (rc == ND_OK) {
            c->docs[c->n] = docs[i];
            c->docs[c->n].key = NULL;
            if (c->sk) c->sk[c->n] = *docs[i].sketch;
            c->koff[c->n++] = c->alen;
            memcpy(c->arena + c->alen, docs[i].key, docs[i].key_len);
            c->alen += docs[i].key_len;
            if (c->n == l->chunk_docs) rc = spill_chunk(l);
        }
        if (rc < 0) {
            l->state = LOADER_DONE;
            return rc;
        }
    }
    return ND_OK;
}

int nd_loader_finish(uint64_t *out_new, nd_loader *l)
{
    ND_RETURN_IF(!l, ND_EINVAL, "nd_loader_finish: NULL loader");
    ND_RETURN_IF(l->state != LOADER_OPEN, ND_EINVAL,
                 "nd_loader_finish: the loader was committed or failed");
    nd_db *db = l->db;
    int rc = ND_OK;
    if (out_new) *out_new = 0;
    l->state = LOADER_DONE;
    rc = writer_wait(l);
    /* a resemblance store's sketches have no in-memory import: its last
     * chunk spills even when it is the first */
    int spill_last = l->nchunks || db->min_resemblance > 0;
    if (rc == ND_OK && spill_last && l->fill.n) rc = spill_chunk(l);
    if (rc == ND_OK) rc = writer_wait(l);
    if (rc == ND_OK) {
        load_chunk *c = &l->fill; /* a load that never filled a chunk */
        point_keys(c);
        db_exclusive_lock(db);
        rc = l->nchunks ? load_commit_locked(l, out_new)
                        : db_import_locked(db, c->docs, c->n, 0, out_new);
        db_exclusive_unlock(db);
    }
    db_load_dir_remove(l->dir);
    return rc;
}

void nd_loader_free(nd_loader *l)
{
    if (!l) return;
    (void)writer_wait(l); /* its files go with the directory */
    db_load_dir_remove(l->dir);
    free(l->dir);
    chunk_dispose(&l->fill);
    chunk_dispose(&l->out);
    free(l);
}

/* ---- nd_db_import ------------------------------------------------------ */

/* Here, not in db_import.c: a resemblance store's import is a loader's
 * load of one chunk (db_import.c stays below the loader). */
int nd_db_import(nd_db *db, const nd_doc *docs, size_t n)
{
    int rc;
    ND_FORWARD(db_check_writable(db));
    ND_RETURN_IF(n && !docs, ND_EINVAL, "nd_db_import: NULL documents");
    ND_FORWARD(db_check_docs(docs, n));
    ND_FORWARD(db_check_sketches(db, docs, n, "nd_db_import"));
    if (n == 0) return ND_OK;
    /* A resemblance store's sketches and band entries: the loader's files,
     * laid over their families by its commit (load_sketches.c). */
    if (db->min_resemblance > 0) {
        nd_loader *l = NULL;
        ND_FORWARD(nd_loader_new(&l, db, n));
        rc = nd_loader_add(l, docs, n);
        if (rc == ND_OK) rc = nd_loader_finish(NULL, l);
        nd_loader_free(l);
        return rc;
    }
    db_exclusive_lock(db);
    rc = db_import_locked(db, docs, n, 1, NULL);
    db_exclusive_unlock(db);
    return rc;
}
