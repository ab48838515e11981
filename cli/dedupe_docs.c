/*
 * dedupe_docs.c — the document store of `neardup dedupe` (see
 * dedupe_docs.h).
 *
 * The sketch file is created at the first document with text; the
 * documents before it get an empty record, so record i is always at
 * i * sizeof(dedupe_rec). The record cache is direct-mapped: the two
 * documents of a near-duplicate pair meet again in later bands and in the
 * self-join, and a slot costs one pread to refill.
 */
#include "dedupe_docs.h"

#include <stdlib.h>
#include <string.h>

enum { REC_CACHE = 16384 };

int dedupe_grow(void **p, size_t cap, size_t size)
{
    void *q = realloc(*p, cap * size);
    if (!q) return -1;
    *p = q;
    return 0;
}

int dedupe_docs_init(dedupe_docs *d, int with_prio, int with_score)
{
    memset(d, 0, sizeof *d);
    d->keys.fd = d->koff.fd = d->recs.fd = d->scores.fd = -1;
    if (with_prio && !(d->prio = malloc(1))) return DEDUPE_DOCS_ENOMEM;
    if (dedupe_spill_init(&d->keys, "keys") || dedupe_spill_init(&d->koff, "key offsets") ||
        (with_score && dedupe_spill_init(&d->scores, "scores")))
        return DEDUPE_DOCS_EIO;
    d->has_score = with_score;
    return 0;
}

int dedupe_docs_push(dedupe_docs *d, const char *key, size_t key_len, uint64_t fp,
                     const dedupe_rec *r, double prio, double score)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        if (dedupe_grow((void **)&d->fp, cap, sizeof *d->fp) ||
            (d->prio && dedupe_grow((void **)&d->prio, cap, sizeof *d->prio)))
            return DEDUPE_DOCS_ENOMEM;
        d->cap = cap;
    }
    dedupe_rec none;
    memset(&none, 0, sizeof none);
    if (r && !d->has_sk) { /* the first text: earlier documents had none */
        if (dedupe_spill_init(&d->recs, "sketches")) return DEDUPE_DOCS_EIO;
        d->has_sk = 1;
        for (size_t i = 0; i < d->n; i++)
            if (dedupe_spill_write(&d->recs, &none, sizeof none)) return DEDUPE_DOCS_EIO;
    }
    uint64_t off = d->klen;
    if (dedupe_spill_write(&d->koff, &off, sizeof off) ||
        dedupe_spill_write(&d->keys, key, key_len))
        return DEDUPE_DOCS_EIO;
    d->klen += key_len;
    if (d->has_score && dedupe_spill_write(&d->scores, &score, sizeof score)) return DEDUPE_DOCS_EIO;
    if (d->has_sk && dedupe_spill_write(&d->recs, r ? r : &none, sizeof none)) return DEDUPE_DOCS_EIO;
    d->fp[d->n] = fp;
    if (d->prio) d->prio[d->n] = prio;
    d->n++;
    return 0;
}

int dedupe_docs_finish(dedupe_docs *d)
{
    if (dedupe_spill_write(&d->koff, &d->klen, sizeof d->klen) || dedupe_spill_finish(&d->koff) ||
        dedupe_spill_finish(&d->keys) || (d->has_sk && dedupe_spill_finish(&d->recs)) ||
        (d->has_score && dedupe_spill_finish(&d->scores)))
        return DEDUPE_DOCS_EIO;
    if (d->has_sk) {
        d->cache = malloc(REC_CACHE * sizeof *d->cache);
        d->tag = malloc(REC_CACHE * sizeof *d->tag);
        if (!d->cache || !d->tag) return DEDUPE_DOCS_ENOMEM;
        for (size_t i = 0; i < REC_CACHE; i++) d->tag[i] = UINT32_MAX; /* no document has it */
    }
    return 0;
}

int dedupe_docs_rec(dedupe_docs *d, size_t i, dedupe_rec *out)
{
    size_t slot = i % REC_CACHE;
    if (d->tag[slot] != i) {
        if (dedupe_spill_pread(&d->recs, &d->cache[slot], sizeof *out, (uint64_t)i * sizeof *out)) {
            d->tag[slot] = UINT32_MAX;
            return DEDUPE_DOCS_EIO;
        }
        d->tag[slot] = (uint32_t)i;
    }
    *out = d->cache[slot];
    return 0;
}

int dedupe_docs_key(dedupe_docs *d, size_t i, size_t *len)
{
    uint64_t off[2];
    if (dedupe_spill_pread(&d->koff, off, sizeof off, (uint64_t)i * 8)) return DEDUPE_DOCS_EIO;
    *len = (size_t)(off[1] - off[0]);
    if (*len > d->kbuf_cap) {
        size_t cap = *len < 256 ? 256 : *len;
        if (dedupe_grow((void **)&d->kbuf, cap, 1)) return DEDUPE_DOCS_ENOMEM;
        d->kbuf_cap = cap;
    }
    if (*len && dedupe_spill_pread(&d->keys, d->kbuf, *len, off[0])) return DEDUPE_DOCS_EIO;
    return 0;
}

void dedupe_docs_dispose(dedupe_docs *d)
{
    free(d->fp);
    free(d->prio);
    free(d->kbuf);
    free(d->cache);
    free(d->tag);
    d->fp = NULL;
    d->prio = NULL;
    d->kbuf = NULL;
    d->cache = NULL;
    d->tag = NULL;
    dedupe_spill_dispose(&d->keys);
    dedupe_spill_dispose(&d->koff);
    dedupe_spill_dispose(&d->recs);
    dedupe_spill_dispose(&d->scores);
}

void dedupe_docs_walk_init(dedupe_docs_walk *w, const dedupe_docs *d)
{
    dedupe_spill_reader_init(&w->off, &d->koff);
    dedupe_spill_reader_init(&w->bytes, &d->keys);
}

const char *dedupe_docs_walk_key(dedupe_docs_walk *w, size_t i, size_t *len)
{
    const uint64_t *off = dedupe_spill_reader_get(&w->off, (uint64_t)i * 8, 16);
    if (!off) return NULL;
    uint64_t o[2];
    memcpy(o, off, sizeof o);
    *len = (size_t)(o[1] - o[0]);
    return *len ? dedupe_spill_reader_get(&w->bytes, o[0], *len) : "";
}

void dedupe_docs_walk_dispose(dedupe_docs_walk *w)
{
    dedupe_spill_reader_dispose(&w->off);
    dedupe_spill_reader_dispose(&w->bytes);
}
