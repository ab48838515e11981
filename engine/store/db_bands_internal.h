/*
 * db_bands_internal.h — the band memory's state (engine internal), shared
 * by its two files: db_bands.c (tables, transactions' changes, the flush
 * thread, the filter's upkeep, open) and db_bands_read.c (what checks,
 * stats and verify read). It declares no function beyond the small
 * look-ups both use; db_bands.h declares what both define.
 */
#ifndef ND_DB_BANDS_INTERNAL_H
#define ND_DB_BANDS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "db_band_filter.h"

#define NONE UINT32_MAX
/* key_len of an entry removed (it has left its chain). */
#define DEAD UINT16_MAX
/* A band entry in memory, 16 bytes: band b and its band key, its
 * document's key (shared by its 12 entries) in keys. */
typedef struct band_ent {
    uint32_t bkey;
    uint32_t key_off;
    uint32_t next;    /* the next entry of its hash chain, or NONE */
    uint16_t key_len; /* or DEAD (ND_MAX_KEY_LEN < DEAD) */
    uint8_t band;
    uint8_t unused;
} band_ent;

/* One table of entries: a hash table by band, chained. */
typedef struct band_mem {
    band_ent *e;       /* appended; a removed entry leaves its chain (DEAD) */
    size_t n, cap, live;
    uint32_t *head;    /* chains by band; nhead a power of 2, >= n */
    size_t nhead;
    char *keys;
    size_t kn, kcap;
} band_mem;

struct db_bands {
    /* Readers take it to read act and frz, writers to change them. */
    pthread_rwlock_t lock;
    band_mem act;      /* entries logged since the last flush began */
    band_mem frz;      /* entries being written to the family (frozen) */
    int frozen;        /* frz waits to be written, or is being written */
    uint64_t seq;      /* the next record's number */
    uint64_t logged;   /* records of act */
    uint64_t frz_end;  /* the records below this number are frz's */
    /* The flush thread: busy while it writes frz (flush_mu). */
    pthread_mutex_t flush_mu;
    pthread_cond_t flush_cv;
    pthread_t thread;
    int started, stop, busy;
    /* Which prefixes the family may hold (a writable store's); whether
     * the flush thread is to walk the family to learn them, or to build
     * a larger filter (next, while growing). filter_mu orders a flush's
     * bits and file against the start and end of a growth. */
    db_band_filter filter, next;
    int scan_pending, grow_pending;
    atomic_int growing;
    pthread_mutex_t filter_mu;
    /* Bulk loads noting the prefixes of a file not yet ingested
     * (db_bands_load_begin): no growth starts meanwhile (its walk would
     * miss the file), one asked for waits (grow_deferred). */
    unsigned loads;
    int grow_deferred;
};

static inline uint64_t ent_band(const band_ent *x) { return (uint64_t)x->band << 32 | x->bkey; }

static inline size_t slot(const band_mem *m, uint64_t band)
{
    return (size_t)((band * 0x9E3779B97F4A7C15ull) >> 40) & (m->nhead - 1);
}

static inline int same_key(const band_mem *m, const band_ent *x, const void *key, size_t klen)
{
    return x->key_len == klen && memcmp(m->keys + x->key_off, key, klen) == 0;
}

/* The live entry (band, key), or NONE. */
static inline uint32_t find(const band_mem *m, uint64_t band, const void *key, size_t klen)
{
    if (m->nhead == 0) return NONE;
    for (uint32_t i = m->head[slot(m, band)]; i != NONE; i = m->e[i].next)
        if (ent_band(&m->e[i]) == band && same_key(m, &m->e[i], key, klen)) return i;
    return NONE;
}

#endif /* ND_DB_BANDS_INTERNAL_H */
