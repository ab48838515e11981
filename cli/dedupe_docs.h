/*
 * dedupe_docs.h — the document store of `neardup dedupe`.
 *
 * Holds what the joins and the outputs need about each document, in input
 * order (document i is the i-th read): its fingerprint (and priority, for
 * --keep score|longest) in memory, 8 (16) bytes a document; its key, its
 * score (with --db) and, once some document had text, its sketch and
 * distinct-feature count (a dedupe_rec, 260 bytes) in unlinked scratch
 * files (dedupe_spill.h), read back where needed: records through a
 * direct-mapped cache of 16384 (4 MB), keys one at a time or in order
 * through a dedupe_docs_walk.
 *
 * Errors: functions return 0, DEDUPE_DOCS_EIO (a scratch file failed:
 * dedupe_spill_error() says how) or DEDUPE_DOCS_ENOMEM.
 */
#ifndef ND_DEDUPE_DOCS_H
#define ND_DEDUPE_DOCS_H

#include <stddef.h>
#include <stdint.h>

#include "dedupe_band.h"
#include "dedupe_spill.h"

enum { DEDUPE_DOCS_EIO = -1, DEDUPE_DOCS_ENOMEM = -2 };

typedef struct dedupe_docs {
    uint64_t *fp;        /* n fingerprints */
    double *prio;        /* n priorities, with --keep score|longest; else NULL */
    size_t n, cap;
    dedupe_spill keys;   /* the keys' bytes, back to back */
    dedupe_spill koff;   /* n + 1 uint64: key i is keys[koff[i] .. koff[i+1]) */
    dedupe_spill recs;   /* n dedupe_rec, once a document had text */
    dedupe_spill scores; /* n doubles, with_score */
    int has_sk, has_score;
    uint64_t klen;
    char *kbuf;          /* one key read back */
    size_t kbuf_cap;
    dedupe_rec *cache;   /* records read back: slot i % cache size holds document tag[slot] */
    uint32_t *tag;
} dedupe_docs;

/* An empty store: keys (and scores, when with_score) go to scratch files,
 * priorities are kept when with_prio. */
int dedupe_docs_init(dedupe_docs *d, int with_prio, int with_score);
/* Append a document: r is its record (NULL when it had no text). */
int dedupe_docs_push(dedupe_docs *d, const char *key, size_t key_len, uint64_t fp,
                     const dedupe_rec *r, double prio, double score);
/* After the last push: the scratch files flushed; reads may begin. */
int dedupe_docs_finish(dedupe_docs *d);
/* Document i's record (has_sk only). */
int dedupe_docs_rec(dedupe_docs *d, size_t i, dedupe_rec *out);
/* Key i into d->kbuf (valid until the next call), its length in *len. */
int dedupe_docs_key(dedupe_docs *d, size_t i, size_t *len);
/* Release everything; a no-op on a disposed store, and safe after a failed
 * init. */
void dedupe_docs_dispose(dedupe_docs *d);

/* Resize *p to cap elements of size bytes (realloc); -1, *p untouched,
 * when out of memory. */
int dedupe_grow(void **p, size_t cap, size_t size);

/* Keys in document order (i non-decreasing), read in large chunks. */
typedef struct dedupe_docs_walk {
    dedupe_spill_reader off, bytes;
} dedupe_docs_walk;

void dedupe_docs_walk_init(dedupe_docs_walk *w, const dedupe_docs *d);
/* Key i (len bytes, valid until the next call), or NULL when a read
 * failed (dedupe_spill_error) or memory ran out. */
const char *dedupe_docs_walk_key(dedupe_docs_walk *w, size_t i, size_t *len);
void dedupe_docs_walk_dispose(dedupe_docs_walk *w);

#endif
