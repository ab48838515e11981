/*
 * cmp_store_impl.h — the fields of a store (st_store, cmp_store.h), for
 * the files that implement it: cmp_store.c, cmp_store_ingest.c. Nothing
 * else reads them.
 */
#ifndef CMP_STORE_IMPL_H
#define CMP_STORE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cmp_fresh.h"
#include "cmp_gen.h"
#include "cmp_kv.h"

struct st_store {
    kv_db *kv;
    /* The families outside the generations: meta, then a resemblance
     * store's sketch and band (NULL in other stores); FIXED(cf) indexes. */
    kv_cf *fixed[3];
    _Atomic int fill;  /* point reads fill the block cache (st_fills_cache) */
    pthread_mutex_t gen_mu;
    cmp_gen *cur;      /* the current generation; swapped by st_write only */
    unsigned ntables;
    int readonly;
    const char *scratch_dir; /* st_open_opts.scratch_dir, during st_open */
    int map_tables;    /* st_open_opts */
    int direct_ok;     /* the direct reader knows this RocksDB's files */
    _Atomic int stop_compacting; /* st_stop_compacting */
    _Atomic int carry_unapplied; /* cmp_carry.h: no writes until reopened */
    char *path;
    _Atomic uint64_t write_seq; /* successful writes so far (st_write_seq) */
    _Atomic uint64_t runs_seq;  /* odd while a run-space write is applied */
    _Atomic uint64_t dels_seq;  /* writes that deleted fresh entries */
    cmp_fresh *fresh;           /* the fresh spaces in memory (cmp_fresh.h) */
    struct cmp_synced *synced;  /* the record of the last synced write, once written */
    uint64_t synced_docs;       /* the document counter the last write recorded */
    pthread_mutex_t synced_mu;  /* serialises the record's writes */
    char *synced_failed;        /* the first failed write of the record, said at close */
};

#endif /* CMP_STORE_IMPL_H */
