/*
 * db_bands.c — a resemblance store's recent band entries: in memory,
 * logged in meta, written to the band family in bulk (db_bands.h; what
 * checks read of them: db_bands_read.c; the state both share:
 * db_bands_internal.h).
 *
 * Why: a document has 12 band entries (band || band key || key), each a
 * random insert into the band family's memtable (hashed by prefix, so
 * RocksDB's flush copied each memtable into a sorted skip list: 36% of
 * the process's CPU at 200k texts, bench_resemble under perf). A
 * commit now writes one meta record per sketch, "bands." || BE64(n) ->
 * the document key (n counts up: the records are appended), and gives
 * the entries to a hash table in memory, where checks find them at
 * once. Every DB_BANDS_MAX entries the memory is frozen and a flush
 * writes it, sorted, in one file RocksDB takes in whole (st_band_ingest),
 * then deletes its records with one range deletion; before anything
 * counts the band family (stats, verify, compact) and at a writable close
 * everything is written at once.
 *
 * The flush runs on a thread of its own (unless nd_db_options.threads is
 * 1) while the writer goes on filling a second table: sorting and writing
 * 4M entries takes seconds, which one add used to wait for. Checks read
 * both tables and the family. One flush is in flight at most (a writer
 * that fills its table first waits), so memory holds at most twice
 * DB_BANDS_MAX entries. A flush that fails leaves its table and records
 * as they were; the next writer that needs the room writes it on its own
 * thread, and fails with the cause if it fails again.
 *
 * A crash loses nothing: a record is written with its document's sketch,
 * atomically, and the next open reads the document's sketch again for
 * each record and gives its entries to memory (a record whose document
 * is gone adds nothing). The file is not atomic with the records'
 * deletion: a crash between leaves entries both written and logged, and
 * the next flush writes them again (the same keys, harmless). A flush
 * deletes the records of its own table only (numbers below frz_end): the
 * writer's later records, even one staged as the flush began, stay.
 *
 * A removal (a replacement, a deletion, an expiry) stages deletions of
 * the old sketch's entries in the family, whichever of memory or family
 * holds them, and drops them from memory after the write. It first waits
 * for the flush in flight, which may hold the entries: its deletions must
 * be newer than the file, and a file written later holds only what
 * memory still holds then, entries added again since the removal.
 *
 * The flush thread also keeps the band filter (db_band_filter.h): it
 * walks the family of a reopened store to fill it, and builds a larger
 * one when it fills up; a check seeks only the prefixes it may hold.
 *
 * Concurrency: writers (the writer lock) stage, prepare, apply, freeze
 * and write synchronously; the flush thread owns the frozen table while
 * busy (flush_mu) and clears it under the memory's write lock; checks
 * read the memory and the filter under its read lock; filter_mu orders a
 * flush's bits and file against a growth's walk and swap.
 */
#include "db_bands.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "db_bands_internal.h"
#include "db_core.h"
#include "db_results.h"
#include "nd_bytes.h"
#include "nd_endian.h"
#include "nd_error.h"

/* Entries a table holds before it is frozen and written
 * (nd_db.bands_max): 2^22, 349,525 documents, 16 bytes each plus about 4
 * in chains and the keys (8-byte keys: about 85 MB a table, two at most).
 * Fewer entries make more, smaller files, and a check seeks each: at 1M
 * texts (bench_resemble) an add took 134 us with 2^19, 93 with 2^21 and
 * 66 with 2^23 written on the writer's thread (bench/README.md,
 * "Resemblance cost"). */
#define DB_BANDS_MAX (1u << 22)

#define LOG_PREFIX "bands."
#define LOG_PREFIX_LEN 6
#define LOG_LEN (LOG_PREFIX_LEN + 8)

static void link_entry(band_mem *m, uint32_t i)
{
    size_t s = slot(m, ent_band(&m->e[i]));
    m->e[i].next = m->head[s];
    m->head[s] = i;
}

/* Room for entries more entries and bytes more key bytes (write lock
 * held, or the memory not yet shared). */
static int reserve(band_mem *m, size_t entries, size_t bytes)
{
    if (m->n + entries > m->cap) {
        size_t cap = m->cap ? m->cap : 4096;
        while (cap < m->n + entries) cap *= 2;
        ND_RETURN_IF(cap >= NONE, ND_ELIMIT, "band entries in memory: %zu", cap);
        band_ent *e = realloc(m->e, cap * sizeof *e);
        ND_RETURN_IF(!e, ND_ENOMEM, "out of memory for %zu band entries", cap);
        m->e = e;
        m->cap = cap;
    }
    if (m->kn + bytes > m->kcap) {
        size_t cap = m->kcap ? m->kcap : 65536;
        while (cap < m->kn + bytes) cap *= 2;
        ND_RETURN_IF(cap > UINT32_MAX, ND_ELIMIT, "band keys in memory: %zu bytes", cap);
        char *k = realloc(m->keys, cap);
        ND_RETURN_IF(!k, ND_ENOMEM, "out of memory for %zu bytes of band keys", cap);
        m->keys = k;
        m->kcap = cap;
    }
    if (m->nhead == 0 || m->n + entries > m->nhead) {
        size_t nh = m->nhead ? m->nhead : 8192;
        while (nh < m->n + entries) nh *= 2;
        uint32_t *h = malloc(nh * sizeof *h);
        ND_RETURN_IF(!h, ND_ENOMEM, "out of memory for %zu band chains", nh);
        free(m->head);
        m->head = h;
        m->nhead = nh;
        memset(h, 0xff, nh * sizeof *h);
        for (size_t i = 0; i < m->n; i++)
            if (m->e[i].key_len != DEAD) link_entry(m, (uint32_t)i);
    }
    return ND_OK;
}

/* Unlink entry i from its chain: it is dead. */
static void drop_entry(band_mem *m, uint32_t i)
{
    uint32_t *p = &m->head[slot(m, ent_band(&m->e[i]))];
    while (*p != i) p = &m->e[*p].next;
    *p = m->e[i].next;
    m->e[i].key_len = DEAD;
    m->live--;
}

/* Empty m, keeping its room. */
static void mem_clear(band_mem *m)
{
    m->n = m->live = m->kn = 0;
    if (m->head) memset(m->head, 0xff, m->nhead * sizeof *m->head);
}

static void mem_free(band_mem *m)
{
    free(m->e);
    free(m->head);
    free(m->keys);
    *m = (band_mem){0};
}

/* ---- a transaction's changes ------------------------------------------ */

enum { OP_PUT = 1, OP_DROP = 2 };
/* An op: u8 kind, u32 key length, the band keys (ND_SKETCH_BANDS u32),
 * the key. */
#define OP_HEAD (1 + 4 + 4 * ND_SKETCH_BANDS)

static int ops_push(db_band_ops *ops, int kind, const void *key, size_t klen,
                    const nd_sketch *sk)
{
    size_t need = OP_HEAD + klen;
    if (ops->len + need > ops->cap) {
        size_t cap = ops->cap ? 2 * ops->cap : 4096;
        while (cap < ops->len + need) cap *= 2;
        unsigned char *buf = realloc(ops->buf, cap);
        ND_RETURN_IF(!buf, ND_ENOMEM, "out of memory staging band entries");
        ops->buf = buf;
        ops->cap = cap;
    }
    unsigned char *p = ops->buf + ops->len;
    uint32_t kl = (uint32_t)klen;
    p[0] = (unsigned char)kind;
    memcpy(p + 1, &kl, 4);
    memcpy(p + 5, sk->band, 4 * ND_SKETCH_BANDS);
    memcpy(p + OP_HEAD, key, klen);
    ops->len += need;
    if (kind == OP_PUT) {
        ops->entries += ND_SKETCH_BANDS;
        ops->bytes += klen;
    } else {
        ops->drops++;
    }
    return ND_OK;
}

void db_band_ops_dispose(db_band_ops *ops)
{
    free(ops->buf);
    *ops = (db_band_ops){0};
}

static void log_key(uint8_t out[LOG_LEN], uint64_t n)
{
    memcpy(out, LOG_PREFIX, LOG_PREFIX_LEN);
    nd_store_be64(out + LOG_PREFIX_LEN, n);
}

int db_bands_stage_put(nd_db *db, st_batch *b, db_band_ops *ops, const void *key, size_t klen,
                       const nd_sketch *sk)
{
    uint8_t rk[LOG_LEN];
    log_key(rk, db->bands->seq);
    ND_FORWARD(st_batch_put(b, ST_CF_META, rk, sizeof rk, key, klen));
    db->bands->seq++;
    db->bands->logged++;
    return ops_push(ops, OP_PUT, key, klen, sk);
}

int db_bands_stage_drop(st_batch *b, db_band_ops *ops, const void *key, size_t klen,
                        const nd_sketch *sk)
{
    uint8_t bk[DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN];
    for (unsigned i = 0; i < ND_SKETCH_BANDS; i++)
        ND_FORWARD(st_batch_delete(b, ST_CF_BAND, bk,
                                   db_band_key_encode(bk, i, sk->band[i], key, klen)));
    return ops ? ops_push(ops, OP_DROP, key, klen, sk) : ND_OK;
}

/* ---- the flush ---------------------------------------------------------- */

static _Thread_local const band_mem *sort_m;

/* By the entry's key in the family: band, band key, document key. */
static int ent_cmp(const void *a, const void *b)
{
    const band_ent *x = &sort_m->e[*(const uint32_t *)a], *y = &sort_m->e[*(const uint32_t *)b];
    uint64_t bx = ent_band(x), by = ent_band(y);
    if (bx != by) return bx < by ? -1 : 1;
    return nd_bytes_cmp(sort_m->keys + x->key_off, x->key_len, sort_m->keys + y->key_off,
                        y->key_len);
}

typedef struct flush_walk {
    const band_mem *m;
    const uint32_t *idx;
    size_t n, at;
    uint8_t key[DB_BAND_PREFIX_LEN + ND_MAX_KEY_LEN];
} flush_walk;

static int flush_next(void *payload, const void **key, size_t *klen)
{
    flush_walk *w = payload;
    if (w->at == w->n) return 0;
    const band_ent *x = &w->m->e[w->idx[w->at++]];
    *klen = db_band_key_encode(w->key, x->band, x->bkey, w->m->keys + x->key_off, x->key_len);
    *key = w->key;
    return 1;
}

/* Raise one of the flush thread's requests (busy, scan_pending,
 * grow_pending) and wake it. */
static void kick(db_bands *m, int *request)
{
    pthread_mutex_lock(&m->flush_mu);
    *request = 1;
    pthread_cond_signal(&m->flush_cv);
    pthread_mutex_unlock(&m->flush_mu);
}

/* Write frz to the family, delete its records, empty it. Runs on the
 * flush thread (frz is its own while busy) or on a writer with nothing
 * in flight. On failure frz and its records stay: checks still find its
 * entries, and the next settle tries again. */
static int write_frozen(nd_db *db)
{
    db_bands *m = db->bands;
    band_mem *f = &m->frz;
    st_batch *b = NULL;
    flush_walk *w = malloc(sizeof *w);
    uint32_t *idx = malloc((f->live ? f->live : 1) * sizeof *idx);
    uint8_t lo[LOG_LEN], hi[LOG_LEN];
    int rc;
    if (!w || !idx) ND_FAIL(ND_ENOMEM, "out of memory");
    size_t n = 0;
    /* The bits before the file; a growth's walk starts before them (and
     * the larger filter gets them too) or after the file is in. */
    pthread_mutex_lock(&m->filter_mu);
    int growing = atomic_load(&m->growing);
    for (size_t i = 0; i < f->n; i++) {
        if (f->e[i].key_len == DEAD) continue;
        idx[n++] = (uint32_t)i;
        db_band_filter_add(&m->filter, f->e[i].band, f->e[i].bkey);
        if (growing) db_band_filter_add(&m->next, f->e[i].band, f->e[i].bkey);
    }
    sort_m = f;
    qsort(idx, n, sizeof *idx, ent_cmp);
    *w = (flush_walk){.m = f, .idx = idx, .n = n};
    rc = st_band_ingest(db->store, flush_next, w);
    int grow = db_band_filter_grow_to(&m->filter) != 0;
    pthread_mutex_unlock(&m->filter_mu);
    ND_TRY(rc);
    ND_TRY(st_batch_new_plain(&b, db->store));
    log_key(lo, 0);
    log_key(hi, m->frz_end);
    ND_TRY(st_batch_delete_range(b, ST_CF_META, lo, sizeof lo, hi, sizeof hi));
    ND_TRY(st_write(db->store, b, db->sync));
    pthread_rwlock_wrlock(&m->lock);
    mem_clear(f);
    pthread_rwlock_unlock(&m->lock);
    m->frozen = 0;
    if (grow) kick(m, &m->grow_pending); /* the thread's, if any */
cleanup:
    if (rc < 0) rc = nd_err_wrap(rc, "writing %zu band entries", f->live);
    st_batch_free(b);
    free(idx);
    free(w);
    return rc;
}

/* The flush in flight, on the flush thread (flush_mu held). */
static void flush_frozen(nd_db *db)
{
    db_bands *m = db->bands;
    pthread_mutex_unlock(&m->flush_mu);
    (void)write_frozen(db); /* a failure: settle tries again, and tells */
    pthread_mutex_lock(&m->flush_mu);
    m->busy = 0;
    pthread_cond_broadcast(&m->flush_cv);
}

/* Between steps of the filter's walk: a flush waits for none. Nonzero:
 * the store is closing, give up. */
static int scan_pause(void *p)
{
    nd_db *db = p;
    db_bands *m = db->bands;
    pthread_mutex_lock(&m->flush_mu);
    if (m->busy) flush_frozen(db);
    int stop = m->stop;
    pthread_mutex_unlock(&m->flush_mu);
    return stop;
}

/* Build a larger filter by a walk of the family while the current one
 * serves, then put it in place (on the flush thread). A failed walk
 * keeps the current one. */
static void grow_filter(nd_db *db)
{
    db_bands *m = db->bands;
    db_band_filter next, old;
    unsigned l = db_band_filter_grow_to(&m->filter);
    if (!l || db_band_filter_init(&next, l) != ND_OK || !next.words) return;
    pthread_mutex_lock(&m->filter_mu);
    if (m->loads) { /* after the load's file is in (db_bands_load_end) */
        m->grow_deferred = 1;
        pthread_mutex_unlock(&m->filter_mu);
        db_band_filter_free(&next);
        return;
    }
    m->next = next;
    atomic_store(&m->growing, 1);
    pthread_mutex_unlock(&m->filter_mu);
    int rc = db_band_filter_scan(&m->next, db->store, scan_pause, db);
    pthread_mutex_lock(&m->filter_mu);
    pthread_rwlock_wrlock(&m->lock); /* no check reads either meanwhile */
    if (rc == ND_OK && atomic_load(&m->next.ready)) {
        old = m->filter;
        m->filter = m->next;
    } else {
        old = m->next;
    }
    m->next = (db_band_filter){0};
    atomic_store(&m->growing, 0);
    pthread_rwlock_unlock(&m->lock);
    pthread_mutex_unlock(&m->filter_mu);
    db_band_filter_free(&old);
}

static void *flush_main(void *p)
{
    nd_db *db = p;
    db_bands *m = db->bands;
    pthread_mutex_lock(&m->flush_mu);
    for (;;) {
        if (m->busy) {
            flush_frozen(db);
        } else if (m->stop) {
            break;
        } else if (m->scan_pending) {
            m->scan_pending = 0;
            pthread_mutex_unlock(&m->flush_mu);
            /* A failed walk leaves the filter not ready: checks seek. */
            (void)db_band_filter_scan(&m->filter, db->store, scan_pause, db);
            pthread_mutex_lock(&m->flush_mu);
        } else if (m->grow_pending) {
            m->grow_pending = 0;
            pthread_mutex_unlock(&m->flush_mu);
            grow_filter(db);
            pthread_mutex_lock(&m->flush_mu);
        } else {
            pthread_cond_wait(&m->flush_cv, &m->flush_mu);
        }
    }
    pthread_mutex_unlock(&m->flush_mu);
    return NULL;
}

/* Start the flush thread if this handle may use one more thread
 * (nd_db_options.threads): 1 when it runs. */
static int start_thread(nd_db *db)
{
    db_bands *m = db->bands;
    if (!m->started && db_threads(db) > 1 &&
        pthread_create(&m->thread, NULL, flush_main, db) == 0)
        m->started = 1;
    return m->started;
}

/* Wait for the flush in flight; write frz here if that flush failed
 * (writer lock held). After ND_OK nothing is frozen. */
static int settle(nd_db *db)
{
    db_bands *m = db->bands;
    pthread_mutex_lock(&m->flush_mu);
    while (m->busy) pthread_cond_wait(&m->flush_cv, &m->flush_mu);
    pthread_mutex_unlock(&m->flush_mu);
    return m->frozen ? write_frozen(db) : ND_OK;
}

/* Make act's entries frz's (writer lock held, nothing frozen). pending:
 * the records a transaction has staged and not yet written (the last
 * numbers): they stay act's. */
static void freeze(db_bands *m, uint64_t pending)
{
    pthread_rwlock_wrlock(&m->lock);
    band_mem t = m->frz; /* empty, its room kept */
    m->frz = m->act;
    m->act = t;
    pthread_rwlock_unlock(&m->lock);
    m->frz_end = m->seq - pending;
    m->logged = pending;
    m->frozen = 1;
}

/* Start writing frz: on the flush thread when this handle may use one
 * more thread (nd_db_options.threads), else here (writer lock held). */
static int start_write(nd_db *db)
{
    db_bands *m = db->bands;
    if (!start_thread(db)) return write_frozen(db);
    kick(m, &m->busy);
    return ND_OK;
}

int db_bands_flush(nd_db *db)
{
    db_bands *m = db->bands;
    if (!m) return ND_OK;
    ND_FORWARD(settle(db));
    if (m->act.live == 0 && m->logged == 0) return ND_OK;
    freeze(m, 0);
    return write_frozen(db);
}

int db_bands_flush_now(nd_db *db)
{
    if (!db->bands || db->readonly) return ND_OK;
    db_write_lock(db);
    int rc = db_bands_flush(db);
    db_write_unlock(db);
    return rc;
}

/* ---- a bulk load's file ------------------------------------------------- */

void db_bands_load_begin(nd_db *db)
{
    db_bands *m = db->bands;
    if (!m) return;
    pthread_mutex_lock(&m->filter_mu);
    m->loads++;
    pthread_mutex_unlock(&m->filter_mu);
}

void db_bands_load_note(nd_db *db, const uint64_t *prefixes, size_t n)
{
    db_bands *m = db->bands;
    if (!m || !m->filter.words) return;
    pthread_mutex_lock(&m->filter_mu);
    int growing = atomic_load(&m->growing); /* begun before the load */
    for (size_t i = 0; i < n; i++) {
        unsigned b = (unsigned)(prefixes[i] >> 32);
        uint32_t bkey = (uint32_t)prefixes[i];
        db_band_filter_add(&m->filter, b, bkey);
        if (growing) db_band_filter_add(&m->next, b, bkey);
    }
    pthread_mutex_unlock(&m->filter_mu);
}

void db_bands_load_end(nd_db *db)
{
    db_bands *m = db->bands;
    if (!m) return;
    pthread_mutex_lock(&m->filter_mu);
    int grow = --m->loads == 0 && (m->grow_deferred || (m->filter.words &&
                                                         db_band_filter_grow_to(&m->filter)));
    if (m->loads == 0) m->grow_deferred = 0;
    pthread_mutex_unlock(&m->filter_mu);
    if (grow) kick(m, &m->grow_pending);
}

/* ---- a transaction's write ---------------------------------------------- */

int db_bands_prepare(nd_db *db, const db_band_ops *ops)
{
    db_bands *m = db->bands;
    if (!m || ops->len == 0) return ND_OK;
    size_t max = db->bands_max ? db->bands_max : DB_BANDS_MAX;
    if (m->act.live && m->act.live + ops->entries > max) {
        ND_FORWARD(settle(db)); /* one flush in flight at most: memory stays bounded */
        freeze(m, ops->entries / ND_SKETCH_BANDS);
        ND_FORWARD(start_write(db));
    }
    /* A removal's deletions must come after the file of any entry it
     * removes, or the file would bring the entry back. */
    if (ops->drops) ND_FORWARD(settle(db));
    pthread_rwlock_wrlock(&m->lock);
    int rc = reserve(&m->act, ops->entries, ops->bytes);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

/* Apply ops to act (write lock held, room reserved; nothing frozen if
 * ops remove). */
static void apply(band_mem *m, const db_band_ops *ops)
{
    for (size_t at = 0; at < ops->len;) {
        const unsigned char *p = ops->buf + at;
        uint32_t klen, band[ND_SKETCH_BANDS];
        memcpy(&klen, p + 1, 4);
        memcpy(band, p + 5, sizeof band);
        const char *key = (const char *)p + OP_HEAD;
        at += OP_HEAD + klen;
        uint32_t off = (uint32_t)m->kn;
        int copied = 0;
        for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) {
            uint32_t i = find(m, (uint64_t)b << 32 | band[b], key, klen);
            if (p[0] == OP_DROP) {
                if (i != NONE) drop_entry(m, i);
                continue;
            }
            if (i != NONE) continue; /* logged twice (an open reads every record) */
            if (!copied) {
                memcpy(m->keys + m->kn, key, klen);
                m->kn += klen;
                copied = 1;
            }
            i = (uint32_t)m->n++;
            m->e[i] = (band_ent){band[b], off, NONE, (uint16_t)klen, (uint8_t)b, 0};
            link_entry(m, i);
            m->live++;
        }
    }
}

void db_bands_apply(nd_db *db, const db_band_ops *ops)
{
    db_bands *m = db->bands;
    if (!m || ops->len == 0) return;
    pthread_rwlock_wrlock(&m->lock);
    apply(&m->act, ops);
    pthread_rwlock_unlock(&m->lock);
}

/* ---- open and free ------------------------------------------------------ */

void db_bands_free(nd_db *db)
{
    db_bands *m = db->bands;
    if (!m) return;
    if (m->started) { /* after its flush, if one is in flight */
        pthread_mutex_lock(&m->flush_mu);
        m->stop = 1;
        pthread_cond_signal(&m->flush_cv);
        pthread_mutex_unlock(&m->flush_mu);
        pthread_join(m->thread, NULL);
    }
    pthread_mutex_destroy(&m->flush_mu);
    pthread_cond_destroy(&m->flush_cv);
    pthread_rwlock_destroy(&m->lock);
    mem_free(&m->act);
    mem_free(&m->frz);
    db_band_filter_free(&m->filter);
    db_band_filter_free(&m->next);
    pthread_mutex_destroy(&m->filter_mu);
    free(m);
    db->bands = NULL;
}

/* Record k (klen bytes) -> key v: its sketch's entries into ops. */
static int reload_record(nd_db *db, db_band_ops *ops, const char *k, size_t klen, const char *v,
                         size_t vlen)
{
    char *sv = NULL;
    size_t slen;
    nd_sketch sk;
    if (klen != LOG_LEN || vlen == 0 || vlen > ND_MAX_KEY_LEN)
        return nd_err_set(ND_ECORRUPT, "database %s: malformed band record in meta (%zu, %zu bytes)",
                          db->path, klen, vlen);
    uint64_t n = nd_load_be64(k + LOG_PREFIX_LEN);
    if (n >= db->bands->seq) db->bands->seq = n + 1;
    db->bands->logged++;
    int rc = st_get(db->store, ST_CF_SKETCH, v, vlen, &sv, &slen);
    if (rc == ND_ENOTFOUND) return ND_OK; /* deleted since */
    ND_FORWARD(rc);
    rc = db_sketch_decode(sv, slen, &sk);
    free(sv);
    if (rc < 0) return nd_err_wrap(rc, "the sketch of document '%.*s'", (int)(vlen > 80 ? 80 : vlen), v);
    return ops_push(ops, OP_PUT, v, vlen, &sk);
}

/* A writable store's filter: ready at once over an empty family, else
 * after the flush thread's walk (none with one thread: checks seek). */
static int filter_open(nd_db *db)
{
    db_bands *m = db->bands;
    st_iter *it = NULL;
    ND_FORWARD(db_band_filter_init(&m->filter, db_band_filter_size(db->write.docs)));
    if (!m->filter.words) return ND_OK;
    ND_FORWARD(st_iter_new_scan(&it, db->store, ST_CF_BAND));
    st_iter_seek_first(it);
    int empty = !st_iter_valid(it), rc = st_iter_status(it);
    st_iter_free(it);
    ND_FORWARD(rc);
    if (empty) {
        atomic_store(&m->filter.ready, 1);
    } else {
        m->scan_pending = 1; /* before the thread can look */
        (void)start_thread(db);
    }
    return ND_OK;
}

unsigned db_bands_filter_log2(nd_db *db)
{
    db_bands *m = db->bands;
    if (!m || !m->filter.words || !atomic_load(&m->filter.ready)) return 0;
    pthread_rwlock_rdlock(&m->lock);
    unsigned l = m->filter.bits_log2;
    pthread_rwlock_unlock(&m->lock);
    return l;
}

int db_bands_filter_reset(nd_db *db, unsigned bits_log2)
{
    db_bands *m = db->bands;
    db_band_filter f, old;
    ND_RETURN_IF(!m || !m->started, ND_EINVAL, "no band thread to walk the family");
    ND_FORWARD(db_band_filter_init(&f, bits_log2));
    pthread_mutex_lock(&m->filter_mu);
    pthread_rwlock_wrlock(&m->lock);
    old = m->filter;
    m->filter = f;
    pthread_rwlock_unlock(&m->lock);
    pthread_mutex_unlock(&m->filter_mu);
    db_band_filter_free(&old);
    kick(m, &m->scan_pending);
    return ND_OK;
}

int db_bands_open(nd_db *db)
{
    if (db->min_resemblance <= 0) return ND_OK;
    db_bands *m = calloc(1, sizeof *m);
    ND_RETURN_IF(!m, ND_ENOMEM, "nd_db_open: out of memory");
    pthread_rwlock_init(&m->lock, NULL);
    pthread_mutex_init(&m->flush_mu, NULL);
    pthread_cond_init(&m->flush_cv, NULL);
    pthread_mutex_init(&m->filter_mu, NULL);
    atomic_init(&m->growing, 0);
    db->bands = m;
    db_band_ops ops = {0};
    st_iter *it = NULL;
    uint8_t lo[LOG_LEN], hi[LOG_LEN];
    int rc;
    log_key(lo, 0);
    memcpy(hi, lo, LOG_LEN);
    hi[LOG_PREFIX_LEN - 1]++;
    ND_TRY(reserve(&m->act, 0, 0));
    ND_TRY(st_iter_new_bounded(&it, db->store, ST_CF_META, lo, hi, sizeof lo, NULL));
    for (st_iter_seek(it, lo, sizeof lo); st_iter_valid(it); st_iter_next(it)) {
        size_t klen, vlen;
        const char *k = st_iter_key(it, &klen);
        const char *v = st_iter_value(it, &vlen);
        ND_TRY(reload_record(db, &ops, k, klen, v, vlen));
    }
    ND_TRY(st_iter_status(it));
    ND_TRY(reserve(&m->act, ops.entries, ops.bytes));
    apply(&m->act, &ops); /* not shared yet */
    if (!db->readonly) ND_TRY(filter_open(db));
    rc = ND_OK;
cleanup:
    st_iter_free(it);
    db_band_ops_dispose(&ops);
    return rc;
}
