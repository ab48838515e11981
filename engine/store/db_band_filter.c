/*
 * db_band_filter.c — which band prefixes the band family may hold
 * (db_band_filter.h).
 *
 * Two bits a prefix in one 64-bit word (a blocked bloom filter of k 2):
 * a check's 12 look-ups are 12 cache misses, as with one bit, and a
 * filter a fifth full answers "may hold" for 4-5% of absent prefixes
 * instead of 11% (10M documents in 2^30 bits), each a seek spared. One
 * bit does better only past about 45M documents, where neither spares
 * much. Bits are set with atomic OR, so a check reads them
 * without a lock; the band memory's lock orders a flush's bits before
 * the clearing of its table, which is what makes a check that no longer
 * finds an entry in memory see its bit.
 */
#include "db_band_filter.h"

#include <stdlib.h>
#include <sys/resource.h>

#include "db_core.h"
#include "nd_endian.h"
#include "nd_error.h"

/* Entries walked between two pauses: a few milliseconds. */
#define SCAN_STEP 65536u

static int address_space_limited(void)
{
    struct rlimit r;
    return getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY;
}

unsigned db_band_filter_size(uint64_t docs)
{
    unsigned l = DB_BAND_FILTER_MIN_LOG2;
    while (l < DB_BAND_FILTER_MAX_LOG2 && ((uint64_t)1 << l) < docs * ND_SKETCH_BANDS * 32) l++;
    return l;
}

int db_band_filter_init(db_band_filter *f, unsigned bits_log2)
{
    *f = (db_band_filter){0};
    atomic_init(&f->ready, 0);
    atomic_init(&f->set, 0);
    if (address_space_limited() || bits_log2 < 7 || bits_log2 > 40) return ND_OK;
    f->words = calloc((size_t)1 << (bits_log2 - 6), sizeof *f->words);
    f->bits_log2 = bits_log2;
    return ND_OK;
}

void db_band_filter_free(db_band_filter *f)
{
    free((void *)f->words);
    f->words = NULL;
}

/* The word of prefix (b, bkey) and its two bits: the band key is a hash
 * already, but the band's number must spread too. The word comes from
 * the product's top bits, the bits from the 12 below them (a
 * multiplicative hash's low bits are weak). */
static uint64_t word_of(const db_band_filter *f, unsigned b, uint32_t bkey, uint64_t *bits)
{
    uint64_t x = ((uint64_t)b << 32 | bkey) * 0x9E3779B97F4A7C15ull;
    unsigned wl = f->bits_log2 - 6, lo = 64 - wl - 12;
    *bits = 1ull << (x >> lo & 63) | 1ull << (x >> (lo + 6) & 63);
    return x >> (64 - wl);
}

void db_band_filter_add(db_band_filter *f, unsigned b, uint32_t bkey)
{
    if (!f->words) return;
    uint64_t bits, w = word_of(f, b, bkey, &bits);
    uint64_t old = atomic_fetch_or_explicit(&f->words[w], bits, memory_order_relaxed);
    unsigned fresh = (unsigned)__builtin_popcountll(bits & ~old);
    if (fresh) atomic_fetch_add_explicit(&f->set, fresh, memory_order_relaxed);
}

unsigned db_band_filter_grow_to(const db_band_filter *f)
{
    if (!f->words || !atomic_load(&f->ready) || f->bits_log2 >= DB_BAND_FILTER_MAX_LOG2) return 0;
    if (atomic_load(&f->set) <= (uint64_t)1 << (f->bits_log2 - 4)) return 0;
    unsigned l = f->bits_log2 + 2;
    return l < DB_BAND_FILTER_MAX_LOG2 ? l : DB_BAND_FILTER_MAX_LOG2;
}

int db_band_filter_may_hold(const db_band_filter *f, unsigned b, uint32_t bkey)
{
    if (!f->words || !atomic_load_explicit(&f->ready, memory_order_acquire)) return 1;
    uint64_t bits, w = word_of(f, b, bkey, &bits);
    return (atomic_load_explicit(&f->words[w], memory_order_relaxed) & bits) == bits;
}

int db_band_filter_scan(db_band_filter *f, st_store *s, int (*pause)(void *arg), void *arg)
{
    if (!f->words) return ND_OK;
    st_iter *it = NULL;
    ND_FORWARD(st_iter_new_scan(&it, s, ST_CF_BAND));
    int rc = ND_OK;
    size_t n = 0;
    for (st_iter_seek_first(it); st_iter_valid(it); st_iter_next(it)) {
        size_t klen;
        const uint8_t *k = (const uint8_t *)st_iter_key(it, &klen);
        if (klen < DB_BAND_PREFIX_LEN) {
            rc = nd_err_set(ND_ECORRUPT, "band family: a key of %zu bytes", klen);
            break;
        }
        db_band_filter_add(f, k[0], nd_load_be32(k + 1));
        if (++n % SCAN_STEP == 0 && pause(arg)) break;
    }
    int done = rc == ND_OK && !st_iter_valid(it);
    if (rc == ND_OK) rc = st_iter_status(it);
    st_iter_free(it);
    if (rc == ND_OK && done) atomic_store_explicit(&f->ready, 1, memory_order_release);
    return rc;
}
