/*
 * db_load.c — the bulk loader (nd_loader): a load larger than memory,
 * written into the store once.
 *
 * nd_loader_add buffers documents; each full chunk is spilled: stored keys
 * are replaced at once (as nd_import does), the others sorted in memory
 * and written to temporary files (load_spill.h): per table the distinct
 * permuted fingerprints, and the chunk's docs and rev entries in key
 * order. nd_loader_commit then writes a new generation in one pass per
 * family, each a k-way merge of the chunks' files with the family as
 * stored (load_commit.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load_internal.h"
#include "load_spill.h"
#include "nd_error.h"
#include "nd_task.h"
#include "sort.h"

/* Prefix of a loader's temporary directory in the database directory. */
#define LOAD_DIR_PREFIX "nd-load-"

enum { LOADER_OPEN, LOADER_DONE };

/* ---- files ------------------------------------------------------------- */

/* Path of chunk c's file for family what ("docs", "rev", "t07", ...);
 * malloc'd. */
char *load_chunk_path(const nd_loader *l, size_t c, const char *what)
{
    size_t len = strlen(l->dir) + strlen(what) + 32;
    char *p = malloc(len);
    if (p) snprintf(p, len, "%s/c%06zu.%s", l->dir, c, what);
    return p;
}

/* Every chunk's file of one family, for a merge; malloc'd array of
 * malloc'd paths. */
int load_chunk_paths(const nd_loader *l, const char *what, char ***out)
{
    char **p = calloc(l->nchunks ? l->nchunks : 1, sizeof *p);
    ND_RETURN_IF(!p, ND_ENOMEM, "load: out of memory");
    for (size_t c = 0; c < l->nchunks; c++) {
        p[c] = load_chunk_path(l, c, what);
        if (!p[c]) {
            for (size_t i = 0; i < c; i++) free(p[i]);
            free(p);
            return nd_err_set(ND_ENOMEM, "load: out of memory");
        }
    }
    *out = p;
    return ND_OK;
}

void load_free_paths(char **p, size_t n)
{
    if (!p) return;
    for (size_t i = 0; i < n; i++) free(p[i]);
    free(p);
}

/* dir/name, malloc'd; NULL when out of memory. */
static char *join(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    if (p) sprintf(p, "%s/%s", dir, name);
    return p;
}

/* Remove a loader's directory and the files in it (it holds no other
 * directory). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char *p = join(dir, e->d_name);
            if (p) unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

void db_load_sweep(nd_db *db)
{
    DIR *d = opendir(db->path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, LOAD_DIR_PREFIX, strlen(LOAD_DIR_PREFIX)) != 0) continue;
        char *p = join(db->path, e->d_name);
        struct stat st;
        if (p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) remove_dir(p);
        free(p);
    }
    closedir(d);
}

/* ---- the chunk in memory ------------------------------------------------ */

int nd_loader_new(nd_loader **out, nd_db *db, size_t chunk_docs)
{
    ND_RETURN_IF(!out || !db, ND_EINVAL, "nd_loader_new: NULL argument");
    ND_FORWARD(db_check_writable(db));
    nd_loader *l = calloc(1, sizeof *l);
    ND_RETURN_IF(!l, ND_ENOMEM, "nd_loader_new: out of memory");
    l->db = db;
    l->chunk_docs = chunk_docs ? chunk_docs : nd_import_step(UINT64_MAX);
    if (l->chunk_docs > UINT32_MAX) l->chunk_docs = UINT32_MAX; /* sort_item's index */
    l->dir = malloc(strlen(db->path) + sizeof "/" LOAD_DIR_PREFIX "XXXXXX");
    if (!l->dir) {
        free(l);
        return nd_err_set(ND_ENOMEM, "nd_loader_new: out of memory");
    }
    sprintf(l->dir, "%s/" LOAD_DIR_PREFIX "XXXXXX", db->path);
    if (!mkdtemp(l->dir)) {
        int err = errno;
        int rc = nd_err_set(err == ENOSPC ? ND_ENOSPC : ND_EIO,
                            "nd_loader_new: cannot create a directory in %s: %s", db->path,
                            strerror(err));
        free(l->dir);
        free(l);
        return rc;
    }
    *out = l;
    return ND_OK;
}

int load_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return ND_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * size);
    ND_RETURN_IF(!q, ND_ENOMEM, "load: out of memory for %zu documents", need);
    *p = q;
    *cap = c;
    return ND_OK;
}

/* Room for one more document in the chunk: doubling up to chunk_docs. */
static int reserve_doc(nd_loader *l)
{
    if (l->n < l->dcap) return ND_OK;
    size_t c = l->dcap ? 2 * l->dcap : 4096;
    if (c > l->chunk_docs) c = l->chunk_docs;
    nd_doc *d = realloc(l->docs, c * sizeof *d);
    ND_RETURN_IF(!d, ND_ENOMEM, "load: out of memory for %zu documents", c);
    l->docs = d;
    size_t *k = realloc(l->koff, c * sizeof *k);
    ND_RETURN_IF(!k, ND_ENOMEM, "load: out of memory for %zu documents", c);
    l->koff = k;
    l->dcap = c;
    return ND_OK;
}

/* Point the chunk's documents at their keys (the arena no longer moves
 * until the chunk is spilled or committed). */
static void point_keys(nd_loader *l)
{
    for (size_t i = 0; i < l->n; i++) l->docs[i].key = l->arena + l->koff[i];
}

/* ---- spilling a chunk --------------------------------------------------- */

/* The chunk's distinct fingerprints, permuted and sorted per table. */
static int spill_tables(nd_loader *l, const nd_doc *docs, const size_t *idx, size_t n)
{
    nd_db *db = l->db;
    uint64_t *fps = malloc((n ? n : 1) * sizeof *fps), *perm = malloc((n ? n : 1) * sizeof *perm),
             *tmp = malloc((n ? n : 1) * sizeof *tmp);
    spill_out *o = NULL;
    char *path = NULL;
    int rc = ND_OK;
    if (!fps || !perm || !tmp) ND_FAIL(ND_ENOMEM, "load: out of memory for %zu documents", n);
    for (size_t i = 0; i < n; i++) fps[i] = docs[idx[i]].fp;
    size_t nfp = sort_u64_unique(fps, tmp, n);
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        char what[16];
        snprintf(what, sizeof what, "t%02u", t);
        for (size_t i = 0; i < nfp; i++) perm[i] = nd_perm_apply(&db->plan.table[t], fps[i]);
        sort_u64(perm, tmp, nfp);
        path = load_chunk_path(l, l->nchunks, what);
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

/* spill_tables' arguments, for a task. */
typedef struct tables_job {
    nd_loader *l;
    const nd_doc *docs;
    const size_t *idx;
    size_t n;
} tables_job;

static int spill_tables_task(void *arg)
{
    tables_job *j = arg;
    return spill_tables(j->l, j->docs, j->idx, j->n);
}

/* The chunk's docs or (rev) rev entries, in key order. idx is in key
 * order already unless it holds replaced keys too (replaced non-NULL
 * flags them: new keys, then replaced ones). */
static int spill_family(nd_loader *l, const nd_doc *docs, const size_t *idx, size_t n, int rev,
                        const unsigned char *replaced)
{
    sort_item *order = NULL;
    spill_out *o = NULL;
    char *path = load_chunk_path(l, l->nchunks, rev ? "rev" : "docs");
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

/* The chunk's docs file (fresh documents, and a marker for each of the
 * rep keys replaced) and rev file (fresh documents). */
static int spill_docs_rev(nd_loader *l, const size_t *fresh, size_t nfresh, const size_t *rep,
                          size_t nrep)
{
    size_t *all = NULL;
    unsigned char *replaced = NULL;
    int rc;
    if (nrep) {
        all = malloc((nfresh + nrep) * sizeof *all);
        replaced = calloc(l->n, 1);
        if (!all || !replaced) ND_FAIL(ND_ENOMEM, "load: out of memory");
        memcpy(all, fresh, nfresh * sizeof *all);
        memcpy(all + nfresh, rep, nrep * sizeof *all);
        for (size_t i = 0; i < nrep; i++) replaced[rep[i]] = 1;
    }
    ND_TRY(spill_family(l, l->docs, all ? all : fresh, nfresh + nrep, 0, replaced));
    ND_TRY(spill_family(l, l->docs, fresh, nfresh, 1, NULL));
cleanup:
    free(all);
    free(replaced);
    return rc;
}

/* Replace the chunk's stored keys, then write the rest out as chunk
 * nchunks. The docs file also holds a marker (an empty value) for each
 * key replaced: the commit's merge drops that key's documents of earlier
 * chunks, which this replacement superseded. */
static int spill_chunk(nd_loader *l)
{
    nd_db *db = l->db;
    size_t *rep = NULL, *fresh = NULL, nrep = 0, nfresh = 0;
    int rc;
    point_keys(l);
    pthread_mutex_lock(&db->fold_mu);
    pthread_mutex_lock(&db->write_mu);
    rc = db_import_split(db, l->docs, l->n, &rep, &nrep, &fresh, &nfresh);
    if (rc == ND_OK && nrep) {
        rc = db_fold_locked(db);
        if (rc == ND_OK) rc = db_import_replace(db, l->docs, rep, nrep);
    }
    pthread_mutex_unlock(&db->write_mu);
    pthread_mutex_unlock(&db->fold_mu);
    ND_TRY(rc);
    /* The tables' files on a thread of their own beside docs and rev: the
     * two halves read the chunk and write files of their own (about 7 s
     * against 5 s for 8M documents and 10 tables). */
    tables_job tj = {l, l->docs, fresh, nfresh};
    nd_task tables;
    nd_task_start(&tables, spill_tables_task, &tj);
    rc = spill_docs_rev(l, fresh, nfresh, rep, nrep);
    ND_TRY(nd_task_wait(&tables, rc));
    l->nchunks++;
    l->n = 0;
    l->alen = 0;
cleanup:
    free(rep);
    free(fresh);
    return rc;
}

int nd_loader_add(nd_loader *l, const nd_doc *docs, size_t n)
{
    ND_RETURN_IF(!l, ND_EINVAL, "nd_loader_add: NULL loader");
    ND_RETURN_IF(n && !docs, ND_EINVAL, "nd_loader_add: NULL documents");
    ND_RETURN_IF(l->state != LOADER_OPEN, ND_EINVAL,
                 "nd_loader_add: the loader was committed or failed");
    ND_FORWARD(db_check_docs(docs, n));
    for (size_t i = 0; i < n; i++) {
        int rc = reserve_doc(l);
        if (rc == ND_OK) rc = load_grow((void **)&l->arena, &l->acap, l->alen + docs[i].key_len, 1);
        if (rc < 0) {
            l->state = LOADER_DONE;
            return rc;
        }
        l->docs[l->n] = docs[i];
        l->docs[l->n].key = NULL;
        l->koff[l->n++] = l->alen;
        memcpy(l->arena + l->alen, docs[i].key, docs[i].key_len);
        l->alen += docs[i].key_len;
        if (l->n == l->chunk_docs && (rc = spill_chunk(l)) < 0) {
            l->state = LOADER_DONE;
            return rc;
        }
    }
    return ND_OK;
}

int nd_loader_commit(nd_loader *l, uint64_t *out_new)
{
    ND_RETURN_IF(!l, ND_EINVAL, "nd_loader_commit: NULL loader");
    ND_RETURN_IF(l->state != LOADER_OPEN, ND_EINVAL,
                 "nd_loader_commit: the loader was committed or failed");
    nd_db *db = l->db;
    int rc = ND_OK;
    if (out_new) *out_new = 0;
    l->state = LOADER_DONE;
    if (l->nchunks && l->n) rc = spill_chunk(l);
    if (rc == ND_OK) {
        point_keys(l);
        pthread_mutex_lock(&db->fold_mu);
        pthread_mutex_lock(&db->write_mu);
        rc = l->nchunks ? load_commit_locked(l, out_new) : db_import_locked(db, l->docs, l->n, out_new);
        pthread_mutex_unlock(&db->write_mu);
        pthread_mutex_unlock(&db->fold_mu);
    }
    remove_dir(l->dir);
    return rc;
}

void nd_loader_free(nd_loader *l)
{
    if (!l) return;
    remove_dir(l->dir);
    free(l->dir);
    free(l->docs);
    free(l->koff);
    free(l->arena);
    free(l);
}
