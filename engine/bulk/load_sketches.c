/*
 * load_sketches.c — a resemblance store's loader: the chunks' sketch and
 * band files, and their merge at the commit (load_sketches.h).
 *
 * A chunk spills, beside its docs, rev and table files, its new
 * documents' sketch values keyed by document key (the docs file's order)
 * and their band entries keyed as the band family is (band, band key,
 * document key; one band at a time, a stable radix sort of the band keys
 * over documents already in key order). The commit merges each family's
 * files, leaving out the documents the docs pass did not write (a key
 * won by a later chunk, or stored by another writer meanwhile), into
 * one file of puts each, laid over the family after the switch. Why:
 * through transactions an import into a resemblance store ran at 32K
 * documents a second at 1M texts (18K at 10M), every document one
 * sketch put, a log record and 12 entries into the band memory, its
 * flushes and the families' compactions.
 *
 * Callers: db_load.c (spill), load_commit.c (commit).
 */
#include "load_sketches.h"

#include <stdlib.h>
#include <string.h>

#include "db_bands.h"
#include "db_core.h"
#include "load_files.h"
#include "load_spill.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "sort.h"

/* Band prefixes noted to the filter at once (one lock a batch). */
#define NOTE_BATCH 4096u

static int spill_sketch_file(const nd_loader *l, const load_chunk *c)
{
    spill_out *o = NULL;
    char *path = load_chunk_path(l, c->index, "sketch");
    uint8_t val[DB_SKETCH_VALUE_LEN];
    int rc;
    if (!path) ND_FAIL(ND_ENOMEM, "load: out of memory");
    ND_TRY(spill_create(&o, path));
    for (size_t i = 0; i < c->nfresh; i++) {
        const nd_doc *d = &c->docs[c->fresh[i]];
        db_sketch_encode(val, d->sketch);
        ND_TRY(spill_put_record(o, d->key, d->key_len, val, sizeof val));
    }
    rc = spill_close(o);
    o = NULL;
cleanup:
    spill_close(o);
    free(path);
    return rc;
}

/* A new document's key, in the order of fresh (key order). */
typedef struct key_ref {
    const char *key;
    size_t len;
} key_ref;

/* The band file: per band the entries sorted by band key. Read in that
 * order the documents come at random: their keys and band keys are
 * gathered once in key order (one random read a document, not one a
 * band entry: at 1M texts the spill's gather was a third of the load). */
static int spill_band_file(const nd_loader *l, const load_chunk *c)
{
    size_t n = c->nfresh;
    sort_item *items = malloc((n ? n : 1) * sizeof *items);
    sort_item *tmp = malloc((n ? n : 1) * sizeof *tmp);
    key_ref *keys = malloc((n ? n : 1) * sizeof *keys);
    uint32_t *bands = malloc((n ? n : 1) * ND_SKETCH_BANDS * sizeof *bands);
    spill_out *o = NULL;
    char *path = load_chunk_path(l, c->index, "band");
    uint8_t bk[DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN];
    int rc;
    if (!items || !tmp || !keys || !bands || !path)
        ND_FAIL(ND_ENOMEM, "load: out of memory for %zu documents", n);
    for (size_t i = 0; i < n; i++) {
        if (i + 8 < n) __builtin_prefetch(&c->docs[c->fresh[i + 8]]);
        const nd_doc *d = &c->docs[c->fresh[i]];
        keys[i] = (key_ref){d->key, d->key_len};
        memcpy(bands + i * ND_SKETCH_BANDS, d->sketch->band, sizeof d->sketch->band);
    }
    ND_TRY(spill_create(&o, path));
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) {
        /* in key order: a stable sort keeps it within a band key */
        for (size_t i = 0; i < n; i++)
            items[i] = (sort_item){bands[i * ND_SKETCH_BANDS + b], (uint32_t)i};
        sort_items(items, tmp, n);
        for (size_t i = 0; i < n; i++) {
            if (i + 16 < n) __builtin_prefetch(&keys[items[i + 16].idx]);
            if (i + 8 < n) __builtin_prefetch(keys[items[i + 8].idx].key);
            const key_ref *k = &keys[items[i].idx];
            size_t len = db_band_key_encode(bk, b, (uint32_t)items[i].key, k->key, k->len);
            ND_TRY(spill_put_record(o, bk, len, "", 0));
        }
    }
    rc = spill_close(o);
    o = NULL;
cleanup:
    spill_close(o);
    free(path);
    free(items);
    free(tmp);
    free(keys);
    free(bands);
    return rc;
}

int load_spill_sketches(const nd_loader *l, const load_chunk *c)
{
    ND_FORWARD(spill_sketch_file(l, c));
    return spill_band_file(l, c);
}

/* One family's chunk files merged into g: the sketch family (sketch
 * values), or the band family (band entries, their prefixes noted). */
static int merge_one(nd_loader *l, st_regen *g, int cf, load_keep_fn keep, void *payload)
{
    int band = cf == ST_CF_BAND;
    char **paths = NULL;
    spill_rec_merge *m = NULL;
    uint64_t notes[NOTE_BATCH];
    size_t nnotes = 0;
    char *last = malloc(DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN);
    size_t last_len = SIZE_MAX; /* none yet */
    int rc;
    if (!last) ND_FAIL(ND_ENOMEM, "load: out of memory");
    ND_TRY(load_chunk_paths(l, band ? "band" : "sketch", &paths));
    ND_TRY(spill_rec_merge_open(&m, paths, l->nchunks));
    ND_TRY(st_regen_begin(g, cf));
    for (;;) {
        const void *k, *v;
        size_t klen, vlen, src;
        int r = spill_rec_merge_next(m, &k, &klen, &v, &vlen, &src);
        ND_TRY(r);
        if (r == 0) break;
        size_t skip = band ? DB_BAND_PREFIX_LEN : 0;
        if (klen < skip || klen - skip > ND_MAX_KEY_LEN || (!band && vlen != DB_SKETCH_VALUE_LEN))
            ND_FAIL(ND_ECORRUPT, "load: a spilled %s entry is malformed", band ? "band" : "sketch");
        r = keep(payload, (const char *)k + skip, klen - skip, src, band ? NULL : v, vlen);
        ND_TRY(r);
        /* of a key in several chunks one document is written at most */
        if (r == 0 || (klen == last_len && memcmp(k, last, klen) == 0)) continue;
        memcpy(last, k, klen);
        last_len = klen;
        ND_TRY(st_regen_put(g, k, klen, v, vlen));
        if (!band) continue;
        const uint8_t *p = k;
        notes[nnotes++] = (uint64_t)p[0] << 32 | nd_load_be32(p + 1);
        if (nnotes == NOTE_BATCH) {
            db_bands_load_note(l->db, notes, nnotes);
            nnotes = 0;
        }
    }
    db_bands_load_note(l->db, notes, nnotes);
    ND_TRY(st_regen_end(g));
    load_unlink_paths(paths, l->nchunks);
cleanup:
    spill_rec_merge_close(m);
    load_free_paths(paths, l->nchunks);
    free(last);
    return rc;
}

int load_commit_sketches(nd_loader *l, st_regen *g, load_keep_fn keep, void *payload)
{
    ND_FORWARD(merge_one(l, g, ST_CF_SKETCH, keep, payload));
    return merge_one(l, g, ST_CF_BAND, keep, payload);
}
