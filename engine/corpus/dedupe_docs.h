/*
 * dedupe_docs.h — the document store of the corpus dedupe (nd_dedupe).
 *
 * Holds what the joins and the outputs need about each document, in input
 * order (document i is the i-th added): its fingerprint (and priority, for
 * ND_DEDUPE_KEEP_SCORE|LONGEST) in memory, 8 (16) bytes a document; its
 * key, its score and, once some document had text, its sketch and
 * distinct-feature count (a dedupe_rec, 260 bytes) in unlinked scratch
 * files (dedupe_spill.h), read back where needed: records through a
 * direct-mapped cache of 16384 (4 MB), keys one at a time or in order
 * through a dedupe_docs_walk.
 *
 * Errors: functions return ND_OK or a negative nd_error (ND_EIO, ND_ENOSPC,
 * ND_ENOMEM) with nd_errmsg() set.
 */
#ifndef ND_DEDUPE_DOCS_H
#define ND_DEDUPE_DOCS_H

#include <stddef.h>
#include <stdint.h>

#include "dedupe_band.h"
#include "dedupe_spill.h"

typedef struct dedupe_docs {
    uint64_t *fp;        /* n fingerprints */
    double *prio;        /* n priorities (with_prio); else NULL */
    size_t n, cap;
    const char *dir;     /* the scratch directory (not owned) */
    dedupe_spill keys;   /* the keys' bytes, back to back */
    dedupe_spill koff;   /* n + 1 uint64: key i is keys[koff[i] .. koff[i+1]) */
    dedupe_spill recs;   /* n dedupe_rec, once a document had text */
    dedupe_spill scores; /* n doubles */
    int has_sk;
    uint64_t klen;
    dedupe_rec *cache;   /* records read back: slot i % cache size holds document tag[slot] */
    uint32_t *tag;
} dedupe_docs;

/* An empty store whose scratch files go to directory dir (kept by
 * pointer: it must outlive the store); priorities are kept when
 * with_prio. On failure the store is still safe to dispose. */
int dedupe_docs_init(dedupe_docs *d, const char *dir, int with_prio);
/* Append a document: r is its record (NULL when it had no text). */
int dedupe_docs_push(dedupe_docs *d, const char *key, size_t key_len, uint64_t fp,
                     const dedupe_rec *r, double prio, double score);
/* After the last push: the scratch files flushed; reads may begin. */
int dedupe_docs_finish(dedupe_docs *d);
/* Document i's record (has_sk only). */
int dedupe_docs_rec(dedupe_docs *d, size_t i, dedupe_rec *out);

/* A buffer for one key read back. */
typedef struct dedupe_key {
    char *p;
    size_t len, cap;
} dedupe_key;

/* Key i into out->p[0 .. out->len) (a NUL follows). */
int dedupe_docs_key(dedupe_key *out, const dedupe_docs *d, size_t i);
/* len bytes into out (a NUL follows). */
int dedupe_key_set(dedupe_key *out, const char *bytes, size_t len);
void dedupe_key_dispose(dedupe_key *k);

/* Release everything; a no-op on a disposed store. */
void dedupe_docs_dispose(dedupe_docs *d);

/* Resize *p to cap elements of size bytes (realloc); ND_ENOMEM, *p
 * untouched, when out of memory (the message names what). */
int dedupe_grow(void **p, size_t cap, size_t size, const char *what);

/* Keys in document order (i non-decreasing), read in large chunks. */
typedef struct dedupe_docs_walk {
    dedupe_spill_reader off, bytes;
} dedupe_docs_walk;

void dedupe_docs_walk_init(dedupe_docs_walk *w, const dedupe_docs *d);
/* *out = key i (*len bytes, valid until the next call). */
int dedupe_docs_walk_key(const char **out, size_t *len, dedupe_docs_walk *w, size_t i);
void dedupe_docs_walk_dispose(dedupe_docs_walk *w);

#endif
