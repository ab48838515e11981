/*
 * db_similar.h — the check of a document with its sketch in a resemblance
 * store (db_similar.c; engine internal): what nd_db_add_doc_if_new and
 * nd_db_batch call in such a store. Declares what db_similar.c defines
 * besides the public calls.
 */
#ifndef ND_DB_SIMILAR_H
#define ND_DB_SIMILAR_H

#include <stddef.h>
#include <stdint.h>

#include "neardup.h"

/* nd_db_add_doc_if_new in a resemblance store (out, db and doc not NULL:
 * checked by the caller): check doc by resemblance and store it, whatever
 * was found, under the writer lock. */
int db_similar_add_if_new(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k);

/* nd_db_batch of a resemblance store (arguments checked by the caller,
 * sketches not yet): the documents decided one by one as
 * nd_db_add_doc_if_new would, every earlier document of the batch a
 * candidate too; with ND_BATCH_ADD all stored. */
int db_similar_batch(nd_batch_item *out, nd_results *keys, nd_db *db, const nd_doc *docs,
                     size_t n, unsigned k, unsigned flags);

/* Decide a batch of documents with sketches (checked by the caller) in
 * input order, as a resemblance store of threshold r does: items[j]
 * holds document j's best stored match (dup 1, ND_BATCH_STORED, its key
 * and resemblance) or none (dup 0); it is replaced by an earlier batch
 * document (any: every document is indexed) sharing a band key with it
 * or within k whose resemblance is >= r and better (higher, then
 * nd_match_order). Used by the batch above and sharded stores. */
int db_similar_decide(nd_batch_item *items, const nd_doc *docs, size_t n, unsigned k, double r);

#endif /* ND_DB_SIMILAR_H */
