/*
 * db_import.h — the import's internal calls, shared with the bulk loader
 * (db_import.c; engine internal). Declares what db_import.c defines
 * besides the public nd_db_import and nd_db_import_step.
 *
 * Room: bulk/. It may call: store/, index/, text/ (and
 * compaction/storage.h, common/).
 * The room writes many documents at once and rebuilds stores: nd_db_import
 * (db_import.c), the bulk loader's spilled chunks and generations
 * (db_load.c, load_*.c) and nd_db_repair (db_repair.c).
 */
#ifndef ND_DB_IMPORT_H
#define ND_DB_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "neardup.h"
#include "sort.h"

/* The last document of each key of docs[0..n): indexes of those whose key
 * is stored into *rep, of the others into *fresh (both malloc'd, both in
 * key order). */
int db_import_split(nd_db *db, const nd_doc *docs, size_t n, size_t **rep, size_t *nrep,
                    size_t **fresh, size_t *nfresh);
/* nd_db_import with fold.mu and write.mu held; *out_new (may be NULL) gets
 * the number of documents new to the store. stoppable: the handle's
 * progress callback hears of each family written ("importing") and may
 * stop the call before its write (nd_db_import); the loader's commit,
 * which runs to its end, passes 0. */
int db_import_locked(nd_db *db, const nd_doc *docs, size_t n, int stoppable, uint64_t *out_new);
/* Replace the stored documents docs[idx[0..n)] through the staged path,
 * one atomic write, then fold (fold.mu and write.mu held). */
int db_import_replace(nd_db *db, const nd_doc *docs, const size_t *idx, size_t n);
/* How db_import_order orders: by key; by fingerprint, then key (rev's
 * order); or as given (idx is in key order already). */
enum { DB_ORDER_KEY, DB_ORDER_FP, DB_ORDER_GIVEN };
/* docs[idx[0..n)] (idx NULL: docs[0..n)) ordered as how says, as a
 * malloc'd array of n items (indexes fit in 32 bits). Equal keys come in
 * the order of their indexes. */
int db_import_order(const nd_doc *docs, const size_t *idx, size_t n, int how, sort_item **out);

#endif /* ND_DB_IMPORT_H */
