/*
 * db_import.c — bulk import: many documents in one pass per table.
 *
 * nd_db_add_many stages every document through an indexed batch and leaves
 * its fingerprints as fresh entries for a later fold: fine for a stream,
 * slow for a crawl of millions. nd_db_import instead
 *   1. keeps the last document of each key (the keys sorted: a key's
 *      documents are then neighbours),
 *   2. sends keys that are already stored through the ordinary staged path
 *      (they move from an old fingerprint: rev and tables change), one
 *      atomic write, then folds their fresh entries,
 *   3. for the new keys: sorts their distinct fingerprints under table 0's
 *      permutation and merges them into table 0's runs, which also tells
 *      which fingerprints were not stored before; those alone are sorted
 *      and merged into the other tables,
 *   4. writes docs, rev, every table's rewritten runs and the counters in
 *      one plain (unindexed) atomic batch.
 * When the new fingerprints are many next to those stored (at least
 * 1/IMPORT_REWRITE_SHARE of them, or one for every run), most runs change
 * anyway: steps 3 and 4
 * then write every table, docs and rev anew as SST files of a new
 * generation (st_regen, st_table_rewrite, st_family_merge), and the write
 * of step 4 (counters only) switches to it. Nothing then goes through the
 * WAL, the memtables and compaction, and the memory an import needs no
 * longer grows with the store.
 * The writer lock and the fold lock are held throughout, so no fresh entry
 * can appear while runs are merged (a fresh value must never equal a run
 * value).
 *
 * nd_db_import reports to the handle's progress callback ("importing":
 * between the look-ups of stored keys, after each family, and every
 * 65,536 keys within a family of a new generation), and a stop ends it
 * before its write; the loader's commit does not ask.
 *
 * A resemblance store's import is a load (nd_loader) of one chunk: its
 * sketches and band entries are written by the loader's commit, as files
 * laid over their families by the same switch (the public nd_db_import
 * is in db_load.c, which calls db_import_locked otherwise).
 *
 * Callers: nd_db_import (public, db_load.c), and the loader (db_load.c,
 * load_commit.c), which shares db_import_split, _order, _replace and
 * _locked.
 */
#include <stdlib.h>
#include <string.h>

#include "db_core.h"
#include "db_fold.h"
#include "db_import.h"
#include "db_txn.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "sort.h"

/* Rewrite every table when new fingerprints are at least 1/this of those
 * stored (the first import of an empty store always does), or when they
 * would change most runs anyway: m new among N stored reach a run of R
 * entries with probability 1 - exp(-m R / N), 63% of the runs or more at
 * m R >= N. Merged through the batch, those runs would go through the
 * WAL, the memtables and later a compaction of the whole table (at 100M,
 * a last step of 3% took longer than a rewrite, and nd_db_compact after it
 * rewrote 8.9 GB in 188 s). */
#define IMPORT_REWRITE_SHARE 16

static int keys_equal(const nd_doc *a, const nd_doc *b)
{
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

/* The 8 bytes of a key at offset off, big-endian, zero-padded: a
 * radix-sortable word of the key. */
static uint64_t key_word(const nd_doc *d, size_t off)
{
    const unsigned char *k = d->key;
    if (off + 8 <= d->key_len) return nd_load_be64(k + off);
    uint64_t v = 0;
    for (size_t i = off; i < off + 8; i++) v = v << 8 | (i < d->key_len ? k[i] : 0);
    return v;
}

/* Groups of at most this many items are sorted by comparisons. */
#define KEY_SORT_SMALL 16

/* Key order from byte off on (the bytes before are equal), then index. */
static int item_key_cmp(const nd_doc *docs, const sort_item *x, const sort_item *y, size_t off)
{
    const nd_doc *a = &docs[x->idx], *b = &docs[y->idx];
    size_t l = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = l > off ? memcmp((const char *)a->key + off, (const char *)b->key + off, l - off) : 0;
    if (c == 0) c = (a->key_len > b->key_len) - (a->key_len < b->key_len);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static void insertion_sort_keys(sort_item *a, size_t n, const nd_doc *docs, size_t off)
{
    for (size_t i = 1; i < n; i++) {
        sort_item x = a[i];
        size_t j = i;
        while (j > 0 && item_key_cmp(docs, &a[j - 1], &x, off) > 0) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static void sort_key_group(sort_item *a, sort_item *tmp, size_t n, const nd_doc *docs,
                           size_t off);

/* a[0..n) is sorted on .key: put each run of equal .key in key order from
 * byte off on (the keys of a run agree before off). */
static void sort_equal_runs(sort_item *a, sort_item *tmp, size_t n, const nd_doc *docs, size_t off)
{
    for (size_t g = 0; g < n;) {
        size_t e = g + 1;
        while (e < n && a[e].key == a[g].key) e++;
        if (e - g > 1) sort_key_group(a + g, tmp, e - g, docs, off);
        g = e;
    }
}

/* Put a[0..n), whose keys agree on their bytes before off (zero-padded),
 * in key order, equal keys by index: a radix sort on the key's next
 * 8-byte word, then the same within each group of equal words. Keys such
 * as URLs share long prefixes, which a comparison sort would compare
 * again at every step (it took half of an import of URL keys). */
static void sort_key_group(sort_item *a, sort_item *tmp, size_t n, const nd_doc *docs, size_t off)
{
    for (;;) {
        if (n <= KEY_SORT_SMALL) {
            insertion_sort_keys(a, n, docs, off);
            return;
        }
        int longer = 0; /* does any key go on at off? */
        for (size_t i = 0; i < n; i++) {
            /* In key order the documents are visited at random. */
            if (i + 8 < n) __builtin_prefetch((const char *)docs[a[i + 8].idx].key + off);
            const nd_doc *d = &docs[a[i].idx];
            a[i].key = key_word(d, off);
            longer |= d->key_len > off;
        }
        if (!longer) { /* equal but for their lengths: by length, then index */
            for (size_t i = 0; i < n; i++)
                a[i].key = (uint64_t)docs[a[i].idx].key_len << 32 | a[i].idx;
            sort_items(a, tmp, n);
            return;
        }
        sort_items(a, tmp, n);
        if (a[0].key == a[n - 1].key) { /* one word: on to the next */
            off += 8;
            continue;
        }
        sort_equal_runs(a, tmp, n, docs, off + 8);
        return;
    }
}

/* The new documents' entries of docs and rev, in key order (order holds
 * them sorted for the family at hand). */
typedef struct kv_state {
    const nd_doc *docs;
    const sort_item *order;
    size_t n;
    uint8_t val[DB_DOC_VALUE_LEN];
    uint8_t *rk; /* 8 + ND_MAX_KEY_LEN */
} kv_state;

/* Entry i's document; in key order the documents are visited at random,
 * so one a little further on is fetched meanwhile. */
static const nd_doc *kv_doc(const kv_state *st, size_t i)
{
    if (i + 16 < st->n) __builtin_prefetch(&st->docs[st->order[i + 16].idx]);
    if (i + 8 < st->n) __builtin_prefetch(st->docs[st->order[i + 8].idx].key);
    return &st->docs[st->order[i].idx];
}

static int doc_kv(void *payload, size_t i, const void **key, size_t *klen, const void **val,
                  size_t *vlen)
{
    kv_state *st = payload;
    const nd_doc *d = kv_doc(st, i);
    db_doc_encode(st->val, d->fp, d->score, d->time);
    *key = d->key;
    *klen = d->key_len;
    *val = st->val;
    *vlen = sizeof st->val;
    return ND_OK;
}

static int rev_kv(void *payload, size_t i, const void **key, size_t *klen, const void **val,
                  size_t *vlen)
{
    kv_state *st = payload;
    const nd_doc *d = kv_doc(st, i);
    db_doc_encode(st->val, d->fp, d->score, d->time);
    *key = st->rk;
    *klen = db_rev_key_encode(st->rk, d->fp, d->key, d->key_len);
    *val = DB_REV_VALUE(st->val);
    *vlen = DB_REV_VALUE_LEN;
    return ND_OK;
}

/* The n new entries of family cf (from kv, in key order) into the new
 * generation g, or else into the batch. */
static int put_family(nd_db *db, st_batch *b, st_regen *g, int cf, size_t n, st_kv_fn kv,
                      void *payload)
{
    if (g) return st_family_merge(g, db->store, cf, n, kv, payload);
    for (size_t i = 0; i < n; i++) {
        const void *k, *v;
        size_t klen, vlen;
        ND_FORWARD(kv(payload, i, &k, &klen, &v, &vlen));
        ND_FORWARD(st_batch_put(b, cf, k, klen, v, vlen));
    }
    return ND_OK;
}

/* Documents whose key is already stored go through the staged path. */
int db_import_replace(nd_db *db, const nd_doc *docs, const size_t *idx, size_t n)
{
    db_txn t = {0};
    int rc;
    if (n == 0) return ND_OK;
    ND_TRY(db_txn_begin(&t, db, DB_TXN_HELD | DB_TXN_TABLES_NOW));
    for (size_t i = 0; i < n; i++) ND_TRY(db_txn_stage_add(&t, &docs[idx[i]], 0));
    ND_TRY(db_txn_commit(&t));
    ND_TRY(db_fold_locked(db));
cleanup:
    return db_txn_end(&t, rc);
}

/* Merge the distinct fingerprints fps[0..n) into every table, through b or
 * (g non-NULL) into g's new tables; *added gets how many were not stored
 * before; stop hears of each table written. */
static int import_tables(nd_db *db, st_batch *b, st_regen *g, uint64_t *fps, size_t n,
                         db_stop *stop, uint64_t *added)
{
    uint64_t *perm = malloc((n ? n : 1) * sizeof *perm), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    st_u64s fresh0 = {0};
    int rc;
    if (!perm || !tmp) ND_FAIL(ND_ENOMEM, "import: out of memory for %zu fingerprints", n);
    for (unsigned t = 0; t < db->plan.info.tables; t++) {
        const nd_perm *p = &db->plan.table[t];
        size_t m = t == 0 ? n : fresh0.n;
        for (size_t i = 0; i < m; i++) perm[i] = nd_perm_apply(p, fps[i]);
        sort_u64(perm, tmp, m);
        st_u64s *add = t == 0 ? &fresh0 : NULL;
        if (g) ND_TRY(st_table_rewrite(g, db->store, t, db->run_size, perm, m, add));
        else ND_TRY(st_table_merge(db->store, b, t, db->run_size, perm, m, add));
        if (t == 0) { /* from here on only the fingerprints new to the store */
            for (size_t i = 0; i < fresh0.n; i++) fps[i] = nd_perm_invert(p, fresh0.v[i]);
            *added = fresh0.n;
        }
        if ((rc = db_stop_report(stop, t + 1)) != 0) goto cleanup;
    }
    rc = ND_OK;
cleanup:
    free(perm);
    free(tmp);
    st_u64s_dispose(&fresh0);
    return rc;
}

/* Keys a look-up of the stored ones asks at once: a stoppable import
 * reports between the pieces (1M look-ups take about half a second). */
#define SPLIT_PIECE 65536

/* db_import_split; stop non-NULL: reports between the look-ups' pieces,
 * and a nonzero answer (returned) stops it. */
static int import_split(nd_db *db, const nd_doc *docs, size_t n, db_stop *stop,
                        size_t **rep, size_t *nrep, size_t **fresh, size_t *nfresh)
{
    size_t *f = malloc((n ? n : 1) * sizeof *f), *r = NULL, nu = 0;
    sort_item *order = NULL;
    const char **ukeys = NULL;
    size_t *ulens = NULL;
    unsigned char *found = NULL;
    int rc;
    *nrep = *nfresh = 0;
    if (!f) ND_FAIL(ND_ENOMEM, "import: out of memory for %zu documents", n);
    /* In key order a key's documents are neighbours: the last one stays.
     * f: the unique keys' documents, in key order. */
    ND_TRY(db_import_order(docs, NULL, n, DB_ORDER_KEY, &order));
    for (size_t i = 0; i < n; i++) {
        if (i + 8 < n) __builtin_prefetch(&docs[order[i + 8].idx]);
        if (i + 4 < n) __builtin_prefetch(docs[order[i + 4].idx].key);
        size_t d = order[i].idx;
        if (nu && keys_equal(&docs[f[nu - 1]], &docs[d])) {
            if (d > f[nu - 1]) f[nu - 1] = d;
        } else {
            f[nu++] = d;
        }
    }
    r = malloc((nu ? nu : 1) * sizeof *r);
    if (!r) ND_FAIL(ND_ENOMEM, "import: out of memory");
    /* Which of the unique keys are stored already. */
    if (db->write.docs) {
        ukeys = malloc((nu ? nu : 1) * sizeof *ukeys);
        ulens = malloc((nu ? nu : 1) * sizeof *ulens);
        found = malloc(nu ? nu : 1);
        if (!ukeys || !ulens || !found) ND_FAIL(ND_ENOMEM, "import: out of memory");
        for (size_t i = 0; i < nu; i++) {
            ukeys[i] = docs[f[i]].key;
            ulens[i] = docs[f[i]].key_len;
        }
        for (size_t at = 0; at < nu; at += SPLIT_PIECE) {
            size_t m = nu - at < SPLIT_PIECE ? nu - at : SPLIT_PIECE;
            ND_TRY(st_exists_many(db->store, ST_CF_DOCS, ukeys + at, ulens + at, m, found + at));
            if (stop && (rc = db_stop_report(stop, 0)) != 0) goto cleanup;
        }
    }
    for (size_t i = 0; i < nu; i++) {
        if (found && found[i]) r[(*nrep)++] = f[i];
        else f[(*nfresh)++] = f[i]; /* *nfresh <= i: in place */
    }
    *rep = r;
    *fresh = f;
    r = f = NULL;
cleanup:
    free(f);
    free(r);
    free(order);
    free(ukeys);
    free(ulens);
    free(found);
    return rc;
}

int db_import_split(nd_db *db, const nd_doc *docs, size_t n, size_t **rep, size_t *nrep,
                    size_t **fresh, size_t *nfresh)
{
    return import_split(db, docs, n, NULL, rep, nrep, fresh, nfresh);
}

int db_import_order(const nd_doc *docs, const size_t *idx, size_t n, int how, sort_item **out)
{
    sort_item *order = malloc((n ? n : 1) * sizeof *order);
    sort_item *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!order || !tmp) {
        free(order);
        free(tmp);
        return nd_err_set(ND_ENOMEM, "import: out of memory for %zu documents", n);
    }
    for (size_t i = 0; i < n; i++) order[i] = (sort_item){0, (uint32_t)(idx ? idx[i] : i)};
    if (how == DB_ORDER_FP) { /* rev: by fingerprint, then by key */
        for (size_t i = 0; i < n; i++) order[i].key = docs[order[i].idx].fp;
        sort_items(order, tmp, n);
        sort_equal_runs(order, tmp, n, docs, 0);
    } else if (how == DB_ORDER_KEY) {
        sort_key_group(order, tmp, n, docs, 0);
    }
    free(tmp);
    *out = order;
    return ND_OK;
}

int db_import_locked(nd_db *db, const nd_doc *docs, size_t n, int stoppable, uint64_t *out_new)
{
    size_t nrep = 0, nnew = 0;
    size_t *rep = NULL, *newdocs = NULL;
    uint64_t *fps = NULL, *tmp = NULL, added = 0;
    sort_item *order = NULL;
    db_txn t = {0};
    st_regen *g = NULL;
    uint8_t *rk = NULL;
    /* "importing": families written of the tables, docs and rev */
    db_stop stop;
    db_stop_init(&stop, stoppable ? db : NULL, "importing", "families", db->plan.info.tables + 2);
    int rc;
    if (out_new) *out_new = 0;
    ND_TRY(db_fold_locked(db));
    rc = import_split(db, docs, n, &stop, &rep, &nrep, &newdocs, &nnew);
    if (rc != 0) goto cleanup;
    ND_TRY(db_import_replace(db, docs, rep, nrep));
    if (nnew == 0) goto cleanup;
    if ((rc = db_stop_report(&stop, 0)) != 0) goto cleanup;
    rk = malloc(8 + ND_MAX_KEY_LEN);
    if (!rk) ND_FAIL(ND_ENOMEM, "import: out of memory");
    /* Distinct fingerprints of the new documents into the tables. */
    fps = malloc(nnew * sizeof *fps);
    tmp = malloc(nnew * sizeof *tmp);
    if (!fps || !tmp) ND_FAIL(ND_ENOMEM, "import: out of memory for %zu documents", nnew);
    for (size_t i = 0; i < nnew; i++) fps[i] = docs[newdocs[i]].fp;
    size_t nfp = sort_u64_unique(fps, tmp, nnew);
    ND_TRY(db_txn_begin(&t, db, DB_TXN_HELD | DB_TXN_PLAIN));
    st_batch *b = t.b;
    if ((uint64_t)nfp * IMPORT_REWRITE_SHARE >= db->write.fps ||
        (uint64_t)nfp * db->run_size >= db->write.fps) {
        ND_TRY(st_regen_new(&g, db->store));
        if (stoppable) st_regen_set_stop(g, db_stop_ask, &stop);
    }
    if ((rc = import_tables(db, b, g, fps, nfp, &stop, &added)) != 0) goto cleanup;
    /* docs and rev in key order: a generation's files need it, and
     * RocksDB's memtable skiplist inserts a sorted sequence several times
     * faster than a random one. */
    ND_TRY(db_import_order(docs, newdocs, nnew, DB_ORDER_GIVEN, &order));
    kv_state kvs = {docs, order, nnew, {0}, rk};
    ND_TRY(put_family(db, b, g, ST_CF_DOCS, nnew, doc_kv, &kvs));
    if ((rc = db_stop_report(&stop, db->plan.info.tables + 1)) != 0) goto cleanup;
    free(order);
    order = NULL;
    ND_TRY(db_import_order(docs, newdocs, nnew, DB_ORDER_FP, &order));
    kvs.order = order;
    ND_TRY(put_family(db, b, g, ST_CF_REV, nnew, rev_kv, &kvs));
    /* the last chance to stop: the write below is the import */
    if ((rc = db_stop_report(&stop, db->plan.info.tables + 2)) != 0) goto cleanup;
    if (g) ND_TRY(st_batch_set_regen(b, g));
    db_txn_count(&t, nnew, added);
    ND_TRY(db_txn_commit(&t));
    if (out_new) *out_new = nnew;
cleanup:
    rc = db_stop_result(&stop, rc);
    free(rep);
    free(newdocs);
    free(fps);
    free(tmp);
    free(rk);
    free(order);
    rc = db_txn_end(&t, rc);
    st_regen_free(g);
    return rc;
}

size_t nd_db_import_step(uint64_t stored)
{
    const uint64_t lo = 1000000, hi = 8000000;
    uint64_t next = stored / 2;
    return (size_t)(next < lo ? lo : next > hi ? hi : next);
}
