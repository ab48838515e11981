/*
 * db_txn.h — the write transaction every writer uses (db_txn.c; engine
 * internal). Declares what db_txn.c defines.
 *
 *     db_txn t;
 *     ND_TRY(db_txn_begin(&t, db, 0));         // the writer lock
 *     ND_TRY(db_txn_stage_add(&t, &doc, 0));   // puts and deletes
 *     ND_TRY(db_txn_commit(&t));               // write, publish to the mirror
 * cleanup:
 *     rc = db_txn_end(&t, rc);                 // unlock, wake the fold
 *
 * A transaction is one atomic write (one commit at most). Its batch reads
 * its own writes, so staged documents see each other. db_txn_end is safe
 * on a zeroed transaction whose begin was never reached or failed.
 */
#ifndef ND_DB_TXN_H
#define ND_DB_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "db_bands.h"
#include "neardup.h"
#include "storage.h"

/* Flags of db_txn_begin. */
enum {
    /* The caller holds the writer lock (and fold.mu: db_exclusive_lock)
     * across several transactions: begin takes nothing, end releases
     * nothing and wakes no fold (the bulk paths fold themselves). */
    DB_TXN_HELD = 1,
    /* An unindexed batch (st_batch_new_plain), for bulk writes the caller
     * stages into t->b itself and that read nothing back: no
     * db_txn_stage_* then but db_txn_stage_drop_sketch. */
    DB_TXN_PLAIN = 2,
    /* Stage each new fingerprint's table keys with its document, in call
     * order, never deferred nor logged for the mirror (a fold follows). */
    DB_TXN_TABLES_NOW = 4,
    /* The band memory was just flushed and stays empty (the writer lock
     * held): a sketch dropped deletes its band entries from the family
     * and leaves the memory nothing to look for (a whole expiry's
     * switch write: 65 bytes a document less). */
    DB_TXN_BANDS_FLUSHED = 8,
};

typedef struct db_txn {
    nd_db *db;
    st_batch *b;        /* the one write; bulk callers stage into it too */
    uint64_t docs, fps; /* the counters as the staged changes leave them */
    uint64_t fresh;     /* table entries the staged changes add */
    st_u64s defer;      /* new fingerprints whose table entries wait for the commit */
    st_u64s adopt;      /* those the commit logged for the mirror */
    st_u64s gone;       /* logged fingerprints the staged changes remove */
    db_band_ops bands;  /* sketches staged and dropped, for the band memory */
    unsigned flags;
    int locked;         /* begin took the writer lock */
    int committed;
} db_txn;

/* Begin: a batch, the writer lock (unless DB_TXN_HELD), the counters. */
int db_txn_begin(db_txn *t, nd_db *db, unsigned flags);

/* Stage adding document d (a new document, or a new fingerprint, score,
 * time or sketch for a stored key). In a resemblance store d carries a
 * sketch (else ND_EINVAL naming the key), written with its band entries
 * in place of the key's old ones. fp_absent: the caller knows d->fp has no
 * document (stored or staged), which saves a rev probe. */
int db_txn_stage_add(db_txn *t, const nd_doc *d, int fp_absent);
/* Stage a new score and time for the stored document key of fingerprint
 * fp (its fingerprint and sketch unchanged: no counter moves). */
int db_txn_stage_refresh(db_txn *t, const void *key, size_t klen, uint64_t fp, double score,
                         int64_t time);
/* Stage deleting the document key (its sketch and band entries with it):
 * ND_ENOTFOUND when there is none. */
int db_txn_stage_delete(db_txn *t, const void *key, size_t klen);
/* Stage deleting the documents keys[0..n) (lengths lens; distinct) at
 * once, as db_txn_stage_delete does each, skipping those not stored and,
 * with before non-NULL, those last seen at or after *before (refreshed
 * since the caller chose them): each fingerprint's rev prefix is probed
 * once and each table run that loses values is rewritten once, so a
 * large group costs far less than n single deletions. *deleted = the
 * documents staged. On an error the batch holds part of it: end the
 * transaction. */
int db_txn_stage_delete_many(db_txn *t, const char *const *keys, const size_t *lens, size_t n,
                             const int64_t *before, size_t *deleted);
/* Stage deleting document key's sketch and band entries alone (a
 * resemblance store; a key without a sketch stages nothing): for a bulk
 * caller that writes docs, rev and the tables itself, an expiry by a
 * generation. Reads the sketch through t->b, so a plain batch may use it
 * for keys it has not staged. */
int db_txn_stage_drop_sketch(db_txn *t, const void *key, size_t klen);
/* Count documents and fingerprints a bulk caller staged into t->b itself
 * (or into the generation the batch switches to). */
void db_txn_count(db_txn *t, uint64_t docs, uint64_t fps);

/* Commit: the new fingerprints' table entries to the mirror or the
 * tables (db_mirrored_stage; may flush the mirror first, a write of its
 * own), the counters record, one atomic write (synced with ND_DB_SYNC),
 * then the handle's counters, the mirror's list (less the logged
 * fingerprints removed, plus those logged) and the fold backlog follow
 * it. On failure nothing of the transaction is visible. */
int db_txn_commit(db_txn *t);
/* The commit of nd_db_add_if_new, whose transaction adds exactly the one
 * new fingerprint fp: noted for the checks that run without the lock. */
int db_txn_commit_checked(db_txn *t, uint64_t fp);
/* Write what was staged as it is, no counters and no epoch: for
 * refreshes only (db_txn_stage_refresh), which move no counter and add
 * no fingerprint. */
int db_txn_write(db_txn *t);

/* nd_db_add_if_new's check without the writer lock: the epoch before it
 * begins (db_txn_epoch), then, under the lock, whether it still stands:
 * is every commit since that epoch a fingerprint add_if_new stored that
 * the ring still holds, none of them within k of fp? */
uint64_t db_txn_epoch(const nd_db *db);
int db_txn_check_stands(const nd_db *db, uint64_t since, uint64_t fp, unsigned k);

/* End: release the lock begin took, free the batch, wake the fold when a
 * commit added fresh table entries and rc is ND_OK. Returns rc. */
int db_txn_end(db_txn *t, int rc);

#endif /* ND_DB_TXN_H */
