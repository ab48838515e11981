/*
 * dedupe_docs.c — the document store of the corpus dedupe (see
 * dedupe_docs.h).
 *
 * The sketch file is created at the first document with text; the
 * documents before it get an empty record (DEDUPE_NO_SKETCH), so record i is always at
 * i * sizeof(dedupe_rec). The record cache is direct-mapped: the two
 * documents of a near-duplicate pair meet again in later bands and in the
 * self-join, and a slot costs one pread to refill.
 */
#include "dedupe_docs.h"

#include <stdlib.h>
#include <string.h>

#include "nd_error.h"

enum { REC_CACHE = 16384 };

int dedupe_grow(void **p, size_t cap, size_t size, const char *what)
{
    void *q = cap <= SIZE_MAX / size ? realloc(*p, cap * size) : NULL;
    ND_RETURN_IF(!q, ND_ENOMEM, "dedupe: out of memory for %zu %s", cap, what);
    *p = q;
    return ND_OK;
}

int dedupe_docs_init(dedupe_docs *d, const char *dir, int with_prio)
{
    memset(d, 0, sizeof *d);
    d->keys = d->koff = d->recs = d->scores = DEDUPE_SPILL_NONE;
    d->dir = dir;
    ND_RETURN_IF(with_prio && !(d->prio = malloc(1)), ND_ENOMEM, "dedupe: out of memory");
    ND_FORWARD(dedupe_spill_init(&d->keys, dir, "keys"));
    ND_FORWARD(dedupe_spill_init(&d->koff, dir, "key offsets"));
    ND_FORWARD(dedupe_spill_init(&d->scores, dir, "scores"));
    return ND_OK;
}

int dedupe_docs_push(dedupe_docs *d, const char *key, size_t key_len, uint64_t fp,
                     const dedupe_rec *r, double prio, double score)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        ND_FORWARD(dedupe_grow((void **)&d->fp, cap, sizeof *d->fp, "fingerprints"));
        if (d->prio) ND_FORWARD(dedupe_grow((void **)&d->prio, cap, sizeof *d->prio, "priorities"));
        d->cap = cap;
    }
    dedupe_rec none;
    memset(&none, 0, sizeof none);
    none.size = DEDUPE_NO_SKETCH;
    if (r && !d->has_sk) { /* the first text: earlier documents had none */
        ND_FORWARD(dedupe_spill_init(&d->recs, d->dir, "sketches"));
        d->has_sk = 1;
        for (size_t i = 0; i < d->n; i++) ND_FORWARD(dedupe_spill_write(&d->recs, &none, sizeof none));
    }
    uint64_t off = d->klen;
    ND_FORWARD(dedupe_spill_write(&d->koff, &off, sizeof off));
    ND_FORWARD(dedupe_spill_write(&d->keys, key, key_len));
    d->klen += key_len;
    ND_FORWARD(dedupe_spill_write(&d->scores, &score, sizeof score));
    if (d->has_sk) ND_FORWARD(dedupe_spill_write(&d->recs, r ? r : &none, sizeof none));
    d->fp[d->n] = fp;
    if (d->prio) d->prio[d->n] = prio;
    d->n++;
    return ND_OK;
}

int dedupe_docs_finish(dedupe_docs *d)
{
    ND_FORWARD(dedupe_spill_write(&d->koff, &d->klen, sizeof d->klen));
    ND_FORWARD(dedupe_spill_finish(&d->koff));
    ND_FORWARD(dedupe_spill_finish(&d->keys));
    ND_FORWARD(dedupe_spill_finish(&d->scores));
    if (d->has_sk) {
        ND_FORWARD(dedupe_spill_finish(&d->recs));
        d->cache = malloc(REC_CACHE * sizeof *d->cache);
        d->tag = malloc(REC_CACHE * sizeof *d->tag);
        ND_RETURN_IF(!d->cache || !d->tag, ND_ENOMEM, "dedupe: out of memory for the sketch cache");
        for (size_t i = 0; i < REC_CACHE; i++) d->tag[i] = UINT32_MAX; /* no document has it */
    }
    return ND_OK;
}

int dedupe_docs_rec(dedupe_docs *d, size_t i, dedupe_rec *out)
{
    size_t slot = i % REC_CACHE;
    if (d->tag[slot] != i) {
        int rc = dedupe_spill_pread(&d->recs, &d->cache[slot], sizeof *out,
                                    (uint64_t)i * sizeof *out);
        if (rc < 0) {
            d->tag[slot] = UINT32_MAX;
            return rc;
        }
        d->tag[slot] = (uint32_t)i;
    }
    *out = d->cache[slot];
    return ND_OK;
}

static int key_reserve(dedupe_key *out, size_t len)
{
    if (len + 1 > out->cap) {
        size_t cap = len + 1 < 256 ? 256 : len + 1;
        ND_FORWARD(dedupe_grow((void **)&out->p, cap, 1, "bytes of a key"));
        out->cap = cap;
    }
    out->p[len] = '\0';
    out->len = len;
    return ND_OK;
}

int dedupe_docs_key(dedupe_key *out, const dedupe_docs *d, size_t i)
{
    uint64_t off[2];
    ND_FORWARD(dedupe_spill_pread(&d->koff, off, sizeof off, (uint64_t)i * 8));
    size_t len = (size_t)(off[1] - off[0]);
    ND_FORWARD(key_reserve(out, len));
    if (len) ND_FORWARD(dedupe_spill_pread(&d->keys, out->p, len, off[0]));
    return ND_OK;
}

int dedupe_key_set(dedupe_key *out, const char *bytes, size_t len)
{
    ND_FORWARD(key_reserve(out, len));
    memcpy(out->p, bytes, len);
    return ND_OK;
}

void dedupe_key_dispose(dedupe_key *k)
{
    free(k->p);
    *k = (dedupe_key){0};
}

void dedupe_docs_dispose(dedupe_docs *d)
{
    free(d->fp);
    free(d->prio);
    free(d->cache);
    free(d->tag);
    d->fp = NULL;
    d->prio = NULL;
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

int dedupe_docs_walk_key(const char **out, size_t *len, dedupe_docs_walk *w, size_t i)
{
    const void *p;
    uint64_t o[2];
    ND_FORWARD(dedupe_spill_reader_get(&p, &w->off, (uint64_t)i * 8, 16));
    memcpy(o, p, sizeof o);
    *len = (size_t)(o[1] - o[0]);
    if (*len == 0) {
        *out = "";
        return ND_OK;
    }
    ND_FORWARD(dedupe_spill_reader_get(&p, &w->bytes, o[0], *len));
    *out = p;
    return ND_OK;
}

void dedupe_docs_walk_dispose(dedupe_docs_walk *w)
{
    dedupe_spill_reader_dispose(&w->off);
    dedupe_spill_reader_dispose(&w->bytes);
}
