/*
 * cmp_fresh.c — the in-memory mirror of the tables' fresh spaces (see
 * cmp_fresh.h for what it promises) and the change log of a batch.
 *
 * One table's set is a sorted list of chunks of at most FRESH_CHUNK values
 * with an array of their first values: an insert or erase is a binary
 * search over the chunk heads, one inside the chunk and a move of at most
 * FRESH_CHUNK values (a full chunk splits in two), so its cost does not
 * grow with the set the way a flat sorted array's would; a range read is
 * the same search and a walk. Memory is at most about twice the values.
 *
 * Applying a batch: the log is reduced to the last change of each (table,
 * value) — a batch may delete a fresh value and put it back — and the net
 * puts and deletes are applied under the table's write lock. Inserting an
 * existing value or erasing a missing one changes nothing, so the net
 * change is correct whatever the set held.
 */
#include "cmp_fresh.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_layout.h"
#include "nd_endian.h"
#include "nd_error.h"

#define FRESH_CHUNK 256u
#define FRESH_LOAD_FILL (FRESH_CHUNK * 3 / 4) /* room for inserts after a load */

typedef struct fchunk {
    uint32_t n;
    uint64_t v[FRESH_CHUNK];
} fchunk;

typedef struct fset {
    pthread_rwlock_t lock;
    fchunk **c;      /* ascending, none empty */
    uint64_t *first; /* first[i] == c[i]->v[0] */
    size_t nc, cap;
    uint64_t count;
    int valid;
} fset;

struct cmp_fresh {
    unsigned ntables;
    fset t[ND_MAX_TABLES];
};

/* ---- the change log of a batch ----------------------------------------- */

int cmp_flog_note(cmp_flog *l, unsigned t, const void *key, size_t klen, int put)
{
    const uint8_t *k = key;
    if (klen != TBL_KEY_LEN || k[0] != TBL_FRESH) {
        /* A run key, or one no reader expects: readers of the run space
         * must look again; a malformed fresh key makes the mirror unsure. */
        l->runs |= 1ull << t;
        if (klen && k[0] == TBL_FRESH) l->bad |= 1ull << t;
        return ND_OK;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        cmp_fop *op = realloc(l->op, cap * sizeof *op);
        ND_RETURN_IF(!op, ND_ENOMEM, "storage: out of memory logging a batch");
        l->op = op;
        l->cap = cap;
    }
    l->op[l->n++] = (cmp_fop){nd_load_be64(k + 1), t, put != 0};
    if (!put) l->dels |= 1ull << t;
    return ND_OK;
}

void cmp_flog_clear(cmp_flog *l)
{
    l->n = 0;
    l->runs = 0;
    l->bad = 0;
    l->dels = 0;
}

void cmp_flog_dispose(cmp_flog *l)
{
    free(l->op);
    memset(l, 0, sizeof *l);
}

/* ---- one table's sorted set (writers hold the write lock) --------------- */

static void set_drop(fset *s)
{
    for (size_t i = 0; i < s->nc; i++) free(s->c[i]);
    free(s->c);
    free(s->first);
    s->c = NULL;
    s->first = NULL;
    s->nc = s->cap = 0;
    s->count = 0;
}

static void set_invalidate(fset *s)
{
    set_drop(s);
    s->valid = 0;
}

/* Where v would lie among n uniform values from lo_v to hi_v: 0..n-1. */
static size_t interp_guess(size_t n, uint64_t v, uint64_t lo_v, uint64_t hi_v)
{
    if (n == 0 || v <= lo_v) return 0;
    if (v >= hi_v) return n - 1;
    size_t g = (size_t)((double)(v - lo_v) / (double)(hi_v - lo_v) * (double)(n - 1));
    return g < n ? g : n - 1;
}

/* Index of the first of a[0..n) (ascending) that is >= v, n if none;
 * lo_v <= a[0] and a[n - 1] <= hi_v, or about: a table's values are
 * uniform (permuted fingerprints), so a guess interpolated between them
 * lands within a few places, one or two cache lines where a bisection of
 * a 256-value chunk reads about five (at 100M the bisections were 7% of
 * a stream's add). A gallop from the guess, then a bisection, keep the
 * worst case O(log n). The bounds may come from elsewhere: a chunk's head
 * and the next one's spare the reads of the chunk's ends (at 100M those
 * two misses were a third of the look-ups' samples each). */
static size_t interp_lower_bound(const uint64_t *a, size_t n, uint64_t v, uint64_t lo_v,
                                 uint64_t hi_v)
{
    if (n == 0) return 0;
    size_t g = interp_guess(n, v, lo_v, hi_v);
    size_t lo, hi, step = 1; /* the answer is in [lo, hi] */
    if (a[g] >= v) {
        for (hi = g;; hi -= step, step *= 2) {
            if (hi < step) {
                lo = 0;
                break;
            }
            if (a[hi - step] < v) {
                lo = hi - step + 1;
                break;
            }
        }
    } else {
        for (lo = g + 1;; lo += step, step *= 2) {
            if (lo + step - 1 >= n) {
                hi = n;
                break;
            }
            if (a[lo + step - 1] >= v) {
                hi = lo + step - 1;
                break;
            }
        }
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static size_t near_lower_bound(const uint64_t *a, size_t n, uint64_t v)
{
    return n ? interp_lower_bound(a, n, v, a[0], a[n - 1]) : 0;
}

/* Above every value of chunk i: the next chunk's head, or the top. */
static uint64_t chunk_above(const fset *s, size_t i)
{
    return i + 1 < s->nc ? s->first[i + 1] : UINT64_MAX;
}

/* Where a search of chunk i for v starts: between its head and the next
 * chunk's, already read (the chunk's ends are not). */
static size_t chunk_lower_bound(const fset *s, size_t i, uint64_t v)
{
    return interp_lower_bound(s->c[i]->v, s->c[i]->n, v, s->first[i], chunk_above(s, i));
}

/* The chunk that holds or would hold v: the last whose first value is <= v,
 * or 0. */
static size_t set_find(const fset *s, uint64_t v)
{
    size_t above = v == UINT64_MAX ? s->nc : near_lower_bound(s->first, s->nc, v + 1);
    return above ? above - 1 : 0;
}

/* Make room for a chunk at index i. */
static int set_open_slot(fset *s, size_t i)
{
    if (s->nc == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        fchunk **c = realloc(s->c, cap * sizeof *c);
        if (!c) return ND_ENOMEM;
        s->c = c;
        uint64_t *first = realloc(s->first, cap * sizeof *first);
        if (!first) return ND_ENOMEM;
        s->first = first;
        s->cap = cap;
    }
    memmove(s->c + i + 1, s->c + i, (s->nc - i) * sizeof *s->c);
    memmove(s->first + i + 1, s->first + i, (s->nc - i) * sizeof *s->first);
    s->nc++;
    return ND_OK;
}

static int set_insert(fset *s, uint64_t v)
{
    if (s->nc == 0) {
        fchunk *c = malloc(sizeof *c);
        if (!c || set_open_slot(s, 0) < 0) {
            free(c);
            return ND_ENOMEM;
        }
        c->n = 1;
        c->v[0] = v;
        s->c[0] = c;
        s->first[0] = v;
        s->count = 1;
        return ND_OK;
    }
    size_t i = set_find(s, v);
    fchunk *c = s->c[i];
    size_t at = chunk_lower_bound(s, i, v);
    if (at < c->n && c->v[at] == v) return ND_OK; /* already there */
    if (c->n == FRESH_CHUNK) { /* split: the upper half moves to a new chunk */
        fchunk *d = malloc(sizeof *d);
        if (!d || set_open_slot(s, i + 1) < 0) {
            free(d);
            return ND_ENOMEM;
        }
        d->n = FRESH_CHUNK / 2;
        memcpy(d->v, c->v + FRESH_CHUNK / 2, d->n * sizeof *d->v);
        c->n = FRESH_CHUNK / 2;
        s->c[i + 1] = d;
        s->first[i + 1] = d->v[0];
        if (at > c->n) {
            c = d;
            at -= FRESH_CHUNK / 2;
            i++;
        }
    }
    memmove(c->v + at + 1, c->v + at, (c->n - at) * sizeof *c->v);
    c->v[at] = v;
    c->n++;
    if (at == 0) s->first[i] = v;
    s->count++;
    return ND_OK;
}

static void set_erase(fset *s, uint64_t v)
{
    if (s->nc == 0) return;
    size_t i = set_find(s, v);
    fchunk *c = s->c[i];
    size_t at = chunk_lower_bound(s, i, v);
    if (at == c->n || c->v[at] != v) return;
    memmove(c->v + at, c->v + at + 1, (c->n - at - 1) * sizeof *c->v);
    c->n--;
    s->count--;
    if (c->n == 0) {
        free(c);
        memmove(s->c + i, s->c + i + 1, (s->nc - i - 1) * sizeof *s->c);
        memmove(s->first + i, s->first + i + 1, (s->nc - i - 1) * sizeof *s->first);
        s->nc--;
    } else if (at == 0) {
        s->first[i] = c->v[0];
    }
}

/* ---- loading ------------------------------------------------------------ */

int cmp_fresh_valid(cmp_fresh *f, unsigned t)
{
    fset *set = &f->t[t];
    pthread_rwlock_rdlock(&set->lock);
    int valid = set->valid;
    pthread_rwlock_unlock(&set->lock);
    return valid;
}

/* Chunks of v[0..n) (ascending, distinct) into an empty set. */
static int set_fill(fset *into, const uint64_t *v, size_t n)
{
    fchunk *c = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!c || c->n == FRESH_LOAD_FILL) {
            c = malloc(sizeof *c);
            if (!c || set_open_slot(into, into->nc) < 0) {
                free(c);
                set_drop(into);
                return ND_ENOMEM;
            }
            c->n = 0;
            into->c[into->nc - 1] = c;
            into->first[into->nc - 1] = v[i];
        }
        c->v[c->n++] = v[i];
        into->count++;
    }
    return ND_OK;
}

void cmp_fresh_load(cmp_fresh *f, unsigned t, const uint64_t *v, size_t n)
{
    if (t >= f->ntables) return;
    fset fresh = {0};
    int rc = n <= FRESH_MIRROR_MAX ? set_fill(&fresh, v, n) : ND_ELIMIT;
    fset *set = &f->t[t];
    pthread_rwlock_wrlock(&set->lock);
    set_drop(set);
    if (rc == ND_OK) {
        set->c = fresh.c;
        set->first = fresh.first;
        set->nc = fresh.nc;
        set->cap = fresh.cap;
        set->count = fresh.count;
        set->valid = 1;
    }
    pthread_rwlock_unlock(&set->lock);
}

int cmp_fresh_new(cmp_fresh **out, unsigned ntables)
{
    cmp_fresh *f = calloc(1, sizeof *f);
    ND_RETURN_IF(!f, ND_ENOMEM, "storage: out of memory");
    f->ntables = ntables;
    for (unsigned t = 0; t < ntables; t++) pthread_rwlock_init(&f->t[t].lock, NULL);
    *out = f;
    return ND_OK;
}

void cmp_fresh_free(cmp_fresh *f)
{
    if (!f) return;
    for (unsigned t = 0; t < f->ntables; t++) {
        set_drop(&f->t[t]);
        pthread_rwlock_destroy(&f->t[t].lock);
    }
    free(f);
}

/* ---- applying a batch --------------------------------------------------- */

/* A copy of the log whose put fields also carry the log position, so the
 * sort by (table, value, position) keeps each value's changes in order. */
static cmp_fop *sorted_log(const cmp_flog *l)
{
    cmp_fop *s = malloc(l->n * sizeof *s);
    if (!s) return NULL;
    memcpy(s, l->op, l->n * sizeof *s);
    for (size_t i = 0; i < l->n; i++) s[i].put = (uint32_t)(i << 1) | s[i].put;
    return s;
}

static int fop_cmp(const void *a, const void *b)
{
    const cmp_fop *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return (x->put >> 1) < (y->put >> 1) ? -1 : (x->put >> 1) > (y->put >> 1);
}

void cmp_fresh_commit(cmp_fresh *f, const cmp_flog *l)
{
    if (!f) return;
    for (unsigned t = 0; t < f->ntables; t++)
        if (l->bad >> t & 1) {
            pthread_rwlock_wrlock(&f->t[t].lock);
            set_invalidate(&f->t[t]);
            pthread_rwlock_unlock(&f->t[t].lock);
        }
    if (l->n == 0) return;
    const cmp_fop *op = l->op;
    cmp_fop *sorted = NULL;
    int ordered = 1; /* a single add logs one put per table, in table order */
    for (size_t i = 1; i < l->n && ordered; i++)
        ordered = op[i - 1].t < op[i].t || (op[i - 1].t == op[i].t && op[i - 1].v < op[i].v);
    if (!ordered) {
        sorted = l->n < ((size_t)1 << 31) ? sorted_log(l) : NULL;
        if (!sorted) { /* cannot order the log: no table it touches is sure */
            for (size_t i = 0; i < l->n; i++) {
                fset *s = &f->t[op[i].t];
                pthread_rwlock_wrlock(&s->lock);
                set_invalidate(s);
                pthread_rwlock_unlock(&s->lock);
            }
            return;
        }
        qsort(sorted, l->n, sizeof *sorted, fop_cmp);
        for (size_t i = 0; i < l->n; i++) sorted[i].put &= 1;
        op = sorted;
    }
    for (size_t i = 0; i < l->n;) {
        unsigned t = op[i].t;
        fset *s = &f->t[t];
        pthread_rwlock_wrlock(&s->lock);
        for (; i < l->n && op[i].t == t; i++) {
            if (i + 1 < l->n && op[i + 1].t == t && op[i + 1].v == op[i].v) continue;
            if (!s->valid) continue;
            if (!op[i].put) {
                set_erase(s, op[i].v);
            } else if (s->count >= FRESH_MIRROR_MAX || set_insert(s, op[i].v) < 0) {
                set_invalidate(s); /* readers go back to RocksDB until repaired */
            }
        }
        pthread_rwlock_unlock(&s->lock);
    }
    free(sorted);
}

/* ---- reading ------------------------------------------------------------ */

int cmp_fresh_range(cmp_fresh *f, unsigned t, uint64_t lo, uint64_t hi, st_u64s *out)
{
    fset *s = &f->t[t];
    int rc = 1;
    pthread_rwlock_rdlock(&s->lock);
    if (!s->valid) {
        rc = 0;
    } else if (s->nc) {
        size_t i = set_find(s, lo), at = chunk_lower_bound(s, i, lo);
        for (; i < s->nc && rc == 1; i++, at = 0) {
            const fchunk *c = s->c[i];
            for (; at < c->n; at++) {
                if (c->v[at] > hi) goto done;
                int prc = st_u64s_push(out, c->v[at]);
                if (prc < 0) {
                    rc = prc;
                    break;
                }
            }
        }
    }
done:
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

void cmp_fresh_hint(cmp_fresh *f, unsigned t, uint64_t x, int stage)
{
    fset *s = &f->t[t];
    pthread_rwlock_rdlock(&s->lock);
    if (s->valid && s->nc) {
        if (stage == 1) { /* the heads where set_find's search starts */
            size_t g = interp_guess(s->nc, x, s->first[0], s->first[s->nc - 1]);
            __builtin_prefetch(&s->first[g]);
            __builtin_prefetch(&s->c[g]);
        } else {
            size_t i = set_find(s, x);
            const fchunk *c = s->c[i];
            if (stage == 2) { /* the chunk's count */
                __builtin_prefetch(c);
            } else { /* the line where chunk_lower_bound's search starts */
                __builtin_prefetch(&c->v[interp_guess(c->n, x, s->first[i], chunk_above(s, i))]);
            }
        }
    }
    pthread_rwlock_unlock(&s->lock);
}

int cmp_fresh_count(cmp_fresh *f, unsigned t, uint64_t *count)
{
    fset *s = &f->t[t];
    pthread_rwlock_rdlock(&s->lock);
    int valid = s->valid;
    if (valid) *count = s->count;
    pthread_rwlock_unlock(&s->lock);
    return valid;
}

int cmp_fresh_room(cmp_fresh *f, unsigned t, uint64_t n)
{
    fset *s = &f->t[t];
    pthread_rwlock_rdlock(&s->lock);
    int room = s->valid && n <= FRESH_MIRROR_MAX && s->count <= FRESH_MIRROR_MAX - n;
    pthread_rwlock_unlock(&s->lock);
    return room;
}
