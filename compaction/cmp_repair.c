/*
 * cmp_repair.c — salvage of a damaged database in place, before the engine
 * rebuilds its tables (nd_db_repair, engine/bulk/db_repair.c): the logs are
 * rewritten with their intact records (cmp_walfix.c), which are replayed into table files, every family is given a file of
 * its own, then RocksDB's repair sets damaged files aside (kv_repair). It
 * works on a closed database, through the key-value adapter only.
 */
#include <stdlib.h>

#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "cmp_repair.h"
#include "cmp_walfix.h"
#include "nd_error.h"

/* Replay what the log holds intact, skipping damaged records, into every
 * family's table files, and give every family a file of its own (a
 * deleted empty key) so that kv_repair keeps it. Fails when the manifest
 * is unreadable. */
static int salvage_log(const char *path)
{
    char **names = NULL;
    size_t n = 0;
    kv_db *kv = NULL;
    kv_batch *b = NULL;
    ND_FORWARD(kv_list_families(path, &names, &n));
    kv_cf **cfs = calloc(n, sizeof *cfs);
    unsigned *prof = calloc(n, sizeof *prof);
    kv_open_opts o = {.salvage = 1};
    int rc = cfs && prof ? ND_OK : nd_err_set(ND_ENOMEM, "repair: out of memory");
    if (rc == ND_OK) rc = kv_open(&kv, path, &o, n, (const char *const *)names, prof, cfs);
    if (rc == ND_OK) rc = kv_batch_new(&b, 0);
    for (size_t i = 0; rc == ND_OK && i < n; i++) {
        if (!cfs[i]) continue; /* RocksDB's "default", which the repair keeps */
        kv_batch_clear(b);
        kv_batch_put(b, cfs[i], "", 0, "", 0);
        kv_batch_delete(b, cfs[i], "", 0);
        rc = kv_write(kv, b, 0);
        if (rc == ND_OK) rc = kv_flush(kv, cfs[i]);
    }
    kv_batch_free(b);
    for (size_t i = 0; kv && i < n; i++) kv_family_free(cfs[i]);
    kv_close(kv);
    free(cfs);
    free(prof);
    kv_names_free(names, n);
    return rc;
}

int st_repair(const char *path)
{
    ND_RETURN_IF(kv_probe(path) != 1, ND_ENOTFOUND, "%s is not a database", path);
    /* RocksDB's reader would drop the rest of a block after a damaged
     * record: give it logs whose damage is cut out. */
    uint64_t damaged = 0;
    ND_FORWARD(cmp_wal_resync(path, &damaged));
    /* A failed salvage (a damaged manifest) leaves all to the repair. */
    (void)salvage_log(path);
    return kv_repair(path);
}
