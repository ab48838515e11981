/*
 * db_expire.h — retention (db_expire.c; engine internal): the two ways
 * nd_db_expire deletes, which tests also call one by one.
 */
#ifndef ND_DB_EXPIRE_H
#define ND_DB_EXPIRE_H

#include <stdint.h>

#include "neardup.h"

/* How db_expire deletes. */
enum {
    DB_EXPIRE_AUTO,    /* nd_db_expire's choice (db_expire.c) */
    DB_EXPIRE_GROUPS,  /* in atomic groups, writers going on between them */
    DB_EXPIRE_REWRITE, /* one new generation of the tables without the
                        * expired documents, carrying docs and rev with
                        * their deletions (and a resemblance store's
                        * sketches' and band entries'), switched to in
                        * one write */
};

/* nd_db_expire(out_deleted, db, before), deleting as how says. */
int db_expire(uint64_t *out_deleted, nd_db *db, int64_t before, int how);

#endif /* ND_DB_EXPIRE_H */
