/*
 * db_batch.c — Manku's batch mode: a batch checked against the stored set
 * and against itself.
 *
 * Stored matches, for k up to the plan's k: for each table the batch is
 * sorted by permuted fingerprint (radix sort) and the table is read by one
 * forward cursor, one range per distinct prefix of the batch — a merge join
 * that reads each table once, in order, instead of n independent probes.
 * Every candidate within k updates the best stored match of each batch
 * document of that prefix (smallest distance, then fingerprint). The
 * tables are read on up to 8 threads (stored_merge).
 *
 * A small batch (db->batch_probes_max, DB_BATCH_PROBES_MAX documents), and
 * any batch for k above the plan's k, probes each document on its own
 * instead (db_match_fps, as nd_db_query), slices of the batch on up to 8
 * threads (stored_probes). At 100M a block read costs about the same
 * either way when the batch is sparse, and the merge has fixed costs the
 * probes do not: its cursors need the mirror's waiting entries written to
 * the tables first (db_mirrored_flush: ten files), which, with ND_BATCH_ADD,
 * every batch would do for the previous one's. Check-only batches against
 * the kept 100M store, read-only (so no flush either way; bench_fold
 * --check 1 --probes 0 or 1000000; bench/results/2026-11-database-notebook.md,
 * "What moved at f3cfc3d"), median of 3: 256 a call 88k docs/s merged,
 * 104k probed; 4096, 109k and 107k; 65536, 153k and 118k.
 *
 * Within the batch, nd_selfjoin gives every pair within k of the batch's
 * distinct fingerprints (the documents grouped by fingerprint: m copies of
 * one page would otherwise be m^2 / 2 pairs, 20,000 copies 13 s). The
 * documents are then decided in input order, as nd_db_add_if_new one by
 * one would: a document is a duplicate when its best stored match or an
 * earlier *new* document lies within k; the closest wins (ties:
 * fingerprint, then key). A group holds at most one new document (a
 * later copy lies at distance 0 of it), so a document's candidates are
 * the new document of its own group and of each group paired with it.
 *
 * With ND_BATCH_ADD the writer lock is held from the first read to the
 * last write, so the check and the insert are one atomic step for other
 * writers; the new documents are stored by one atomic write, their table
 * entries waiting in the mirror as a single add's do (db_mirrored_stage)
 * when there are at most DB_MIRRORED_CALL of them.
 *
 * Callers: the public API only (nd_db_batch). It reads through the query
 * path (db_query.h) and writes through one transaction (db_txn.h).
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_core.h"
#include "db_mirrored.h"
#include "db_query.h"
#include "db_results.h"
#include "db_similar.h"
#include "db_txn.h"
#include "nd_error.h"
#include "sort.h"

typedef struct best {
    unsigned dist; /* UINT_MAX: none */
    uint64_t fp;
} best;

static void consider(best *b, unsigned d, uint64_t fp)
{
    if (d < b->dist || (d == b->dist && fp < b->fp)) {
        b->dist = d;
        b->fp = fp;
    }
}

/* A batch is dense when it has a document for every this many runs. */
#define BATCH_DENSE_RUNS 8

static uint64_t prefix_mask(unsigned p)
{
    return p == 0 ? 0 : (p >= 64 ? ~0ull : ~0ull << (64 - p));
}

/* Table t's part of the merge join: every candidate within k of a batch
 * document updates bs. a and tmp are n items of scratch. */
static int merge_table(nd_db *db, unsigned t, const nd_doc *docs, size_t n, unsigned k,
                       sort_item *a, sort_item *tmp, st_u64s *cand, best *bs)
{
    const nd_perm *p = &db->plan.table[t];
    uint64_t mask = prefix_mask(p->prefix_bits);
    st_cursor *cur = NULL;
    int rc = ND_OK;
    for (size_t i = 0; i < n; i++) a[i] = (sort_item){nd_perm_apply(p, docs[i].fp), (uint32_t)i};
    sort_items(a, tmp, n);
    /* Dense (a document for every few runs of the table): the walk reads
     * most blocks, so read ahead. 1M documents against 100M stored, warm:
     * 15.1 s reading block by block. */
    double runs = (double)db->write.fps / db->run_size;
    ND_TRY(st_cursor_new(&cur, db->store, t, (double)n * BATCH_DENSE_RUNS >= runs));
    for (size_t g = 0; g < n;) {
        uint64_t lo = a[g].key & mask, hi = lo | ~mask;
        size_t e = g + 1;
        while (e < n && (a[e].key & mask) == lo) e++;
        cand->n = 0;
        ND_TRY(st_cursor_range(cur, lo, hi, cand));
        for (size_t c = 0; c < cand->n; c++)
            for (size_t i = g; i < e; i++) {
                unsigned d = (unsigned)__builtin_popcountll(cand->v[c] ^ a[i].key);
                if (d <= k) consider(&bs[a[i].idx], d, nd_perm_invert(p, cand->v[c]));
            }
        g = e;
    }
cleanup:
    st_cursor_free(cur);
    return rc;
}

/*
 * The work is shared among threads: the merge's worker w takes tables w,
 * w + nw, w + 2 nw, ... (tables cost about the same, and a fixed share
 * makes a failure reproducible); the probes' worker w takes the w-th of nw
 * equal slices of the batch. Each merge worker has its own sort arrays,
 * cursor (its own snapshot, iterators and codec), candidates and best
 * array; the calling thread is worker 0 and writes the caller's best
 * array. consider() keeps the smallest (dist, fp) pair, a total order, so
 * folding the workers' arrays in at the end gives the same result as one
 * thread reading every table. A probe worker writes its slice of the
 * caller's array (slices are disjoint). An extra merge worker costs 48
 * bytes a document; one whose memory or thread cannot be had is not
 * started and the calling thread does its share after its own.
 */
/* Documents a probe worker takes at least: a thread costs tens of us, a
 * document's probes about 15 us at 100M. */
#define PROBES_PER_WORKER 32

typedef struct merge_worker merge_worker;

typedef struct merge_job {
    nd_db *db;
    const nd_doc *docs;
    size_t n;
    unsigned k, nw;
    best *bs;                /* the caller's (probes write their slice of it) */
    int (*share)(merge_worker *w, unsigned part);
    atomic_int stop;         /* a worker failed: the others give up */
    pthread_mutex_t mu;
    int rc;                  /* the first failure (mu) */
    char msg[ND_ERRMSG_CAP]; /* and its message (nd_errmsg is per thread) */
} merge_job;

struct merge_worker {
    merge_job *job;
    unsigned first;          /* its share: part `first` */
    sort_item *a, *tmp;      /* the merge's */
    best *bs;
    pthread_t th;
    int ready, started;
};

/* Note the job's first failure and stop the other workers. */
static int job_fail(merge_job *j, int rc)
{
    pthread_mutex_lock(&j->mu);
    if (j->rc == ND_OK) {
        j->rc = rc;
        snprintf(j->msg, sizeof j->msg, "%s", nd_errmsg());
    }
    pthread_mutex_unlock(&j->mu);
    atomic_store(&j->stop, 1);
    return rc;
}

static int merge_share(merge_worker *w, unsigned first)
{
    merge_job *j = w->job;
    st_u64s cand = {0};
    int rc = ND_OK;
    for (unsigned t = first; t < j->db->plan.info.tables; t += j->nw) {
        if (atomic_load(&j->stop)) break;
        rc = merge_table(j->db, t, j->docs, j->n, j->k, w->a, w->tmp, &cand, w->bs);
        if (rc < 0) {
            job_fail(j, rc);
            break;
        }
    }
    st_u64s_dispose(&cand);
    return rc;
}

/* Best stored match of every document of [from, to) by its own probes. */
static int probe_docs(merge_job *j, size_t from, size_t to)
{
    st_u64s fps = {0};
    int rc = ND_OK;
    for (size_t i = from; i < to && !atomic_load(&j->stop); i++) {
        rc = db_match_fps(j->db, j->docs[i].fp, j->k, 0, &fps);
        if (rc < 0) {
            job_fail(j, rc);
            break;
        }
        for (size_t f = 0; f < fps.n; f++)
            consider(&j->bs[i], (unsigned)__builtin_popcountll(fps.v[f] ^ j->docs[i].fp),
                     fps.v[f]);
    }
    st_u64s_dispose(&fps);
    return rc;
}

static int probe_share(merge_worker *w, unsigned part)
{
    merge_job *j = w->job;
    return probe_docs(j, j->n * part / j->nw, j->n * (part + 1) / j->nw);
}

static void *worker_main(void *arg)
{
    merge_worker *w = arg;
    w->job->share(w, w->first);
    return NULL;
}

/* Threads: db_threads (the option nd_db_options.threads, else one a CPU
 * up to DB_MAX_THREADS); at most `most`, at least 1. */
static unsigned batch_workers(const nd_db *db, unsigned most)
{
    unsigned nw = db_threads(db);
    return nw < most ? nw : most ? most : 1;
}

/* Run the job's shares: workers 1.. whose memory is ready on threads of
 * their own, worker 0's and every unstarted worker's share on the calling
 * thread; the first failure, with its message. */
static int run_job(merge_job *job, merge_worker *w)
{
    for (unsigned i = 1; i < job->nw; i++)
        w[i].started = w[i].ready && pthread_create(&w[i].th, NULL, worker_main, &w[i]) == 0;
    job->share(&w[0], 0);
    for (unsigned i = 1; i < job->nw; i++)
        if (!w[i].started) job->share(&w[0], i);
    for (unsigned i = 1; i < job->nw; i++)
        if (w[i].started) pthread_join(w[i].th, NULL);
    return job->rc < 0 ? nd_err_set(job->rc, "%s", job->msg) : ND_OK;
}

static void job_init(merge_job *job, merge_worker *w, nd_db *db, const nd_doc *docs, size_t n,
                     unsigned k, best *bs, unsigned nw)
{
    *job = (merge_job){.db = db, .docs = docs, .n = n, .k = k, .nw = nw, .bs = bs, .rc = ND_OK};
    atomic_init(&job->stop, 0);
    pthread_mutex_init(&job->mu, NULL);
    for (unsigned i = 0; i < nw; i++) w[i] = (merge_worker){.job = job, .first = i};
}

static void merge_worker_dispose(merge_worker *w)
{
    free(w->a);
    free(w->tmp);
}

/* Best stored match of every document through the merge join. */
static int stored_merge(nd_db *db, const nd_doc *docs, size_t n, unsigned k, best *bs)
{
    unsigned tables = db->plan.info.tables, nw = batch_workers(db, tables);
    merge_job job;
    merge_worker w[ND_MAX_TABLES];
    int rc = ND_OK;
    job_init(&job, w, db, docs, n, k, bs, nw);
    job.share = merge_share;
    w[0].a = malloc(n * sizeof *w[0].a);
    w[0].tmp = malloc(n * sizeof *w[0].tmp);
    w[0].bs = bs;
    if (!w[0].a || !w[0].tmp) ND_FAIL(ND_ENOMEM, "batch: out of memory for %zu documents", n);
    for (unsigned i = 1; i < nw; i++) {
        w[i].a = malloc(n * sizeof *w[i].a);
        w[i].tmp = malloc(n * sizeof *w[i].tmp);
        w[i].bs = malloc(n * sizeof *w[i].bs);
        w[i].ready = w[i].a && w[i].tmp && w[i].bs;
        if (w[i].ready)
            for (size_t j = 0; j < n; j++) w[i].bs[j] = (best){UINT_MAX, 0};
    }
    ND_TRY(run_job(&job, w));
    for (unsigned i = 1; i < nw; i++)
        if (w[i].started)
            for (size_t j = 0; j < n; j++)
                if (w[i].bs[j].dist != UINT_MAX) consider(&bs[j], w[i].bs[j].dist, w[i].bs[j].fp);
cleanup:
    for (unsigned i = 0; i < nw; i++) {
        merge_worker_dispose(&w[i]);
        if (i > 0) free(w[i].bs);
    }
    pthread_mutex_destroy(&job.mu);
    return rc;
}

/* Best stored match of every document by its own probes (db_match_fps,
 * as nd_db_query: no snapshot, no cursor), the batch cut into slices. */
static int stored_probes(nd_db *db, const nd_doc *docs, size_t n, unsigned k, best *bs)
{
    unsigned nw = batch_workers(db, (unsigned)(n / PROBES_PER_WORKER < ND_MAX_TABLES
                                                   ? n / PROBES_PER_WORKER : ND_MAX_TABLES));
    merge_job job;
    merge_worker w[ND_MAX_TABLES];
    job_init(&job, w, db, docs, n, k, bs, nw);
    job.share = probe_share;
    for (unsigned i = 1; i < nw; i++) w[i].ready = 1;
    int rc = run_job(&job, w);
    pthread_mutex_destroy(&job.mu);
    return rc;
}

/* Pairs of the batch's fingerprint groups within k, as adjacency lists
 * (CSR, both ways: group g's neighbours are other[start[g] ..
 * start[g + 1])). */
typedef struct pairs {
    size_t *start; /* n + 1 */
    uint32_t *other;
    unsigned char *dist;
    size_t n, cap, count; /* n groups */
    uint32_t (*raw)[2]; /* collected (i, j), i != j */
    unsigned char *rawd;
} pairs;

static int pair_cb(size_t i, size_t j, unsigned d, void *payload)
{
    pairs *p = payload;
    if (p->count == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 1024;
        uint32_t(*r)[2] = realloc(p->raw, cap * sizeof *r);
        if (!r) return nd_err_set(ND_ENOMEM, "batch: out of memory for %zu pairs", cap);
        p->raw = r;
        unsigned char *rd = realloc(p->rawd, cap);
        if (!rd) return nd_err_set(ND_ENOMEM, "batch: out of memory for %zu pairs", cap);
        p->rawd = rd;
        p->cap = cap;
    }
    p->raw[p->count][0] = (uint32_t)i;
    p->raw[p->count][1] = (uint32_t)j;
    p->rawd[p->count++] = (unsigned char)d;
    return 0;
}

/* Index the pairs by each of their two groups. */
static int pairs_index(pairs *p)
{
    size_t ends = 2 * p->count;
    p->start = calloc(p->n + 1, sizeof *p->start);
    p->other = malloc((ends ? ends : 1) * sizeof *p->other);
    p->dist = malloc(ends ? ends : 1);
    ND_RETURN_IF(!p->start || !p->other || !p->dist, ND_ENOMEM, "batch: out of memory");
    for (size_t e = 0; e < p->count; e++) {
        p->start[p->raw[e][0] + 1]++;
        p->start[p->raw[e][1] + 1]++;
    }
    for (size_t g = 0; g < p->n; g++) p->start[g + 1] += p->start[g];
    size_t *fill = malloc((p->n + 1) * sizeof *fill);
    ND_RETURN_IF(!fill, ND_ENOMEM, "batch: out of memory");
    memcpy(fill, p->start, (p->n + 1) * sizeof *fill);
    for (size_t e = 0; e < p->count; e++)
        for (int end = 0; end < 2; end++) {
            size_t at = fill[p->raw[e][end]]++;
            p->other[at] = p->raw[e][!end];
            p->dist[at] = p->rawd[e];
        }
    free(fill);
    return ND_OK;
}

/* The documents grouped by fingerprint: *gid (gid[j] the group of
 * document j) and *gfp (the groups' fingerprints, ascending; *ng). */
static int group_fps(const nd_doc *docs, size_t n, uint32_t **gid, uint64_t **gfp, size_t *ng)
{
    sort_item *a = malloc(n * sizeof *a), *tmp = malloc(n * sizeof *tmp);
    *gid = malloc(n * sizeof **gid);
    *gfp = malloc(n * sizeof **gfp);
    int rc = a && tmp && *gid && *gfp ? ND_OK
                                      : nd_err_set(ND_ENOMEM, "batch: out of memory for %zu documents", n);
    if (rc == ND_OK) {
        for (size_t i = 0; i < n; i++) a[i] = (sort_item){docs[i].fp, (uint32_t)i};
        sort_items(a, tmp, n);
        size_t g = 0;
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || a[i].key != a[i - 1].key) (*gfp)[g++] = a[i].key;
            (*gid)[a[i].idx] = (uint32_t)(g - 1);
        }
        *ng = g;
    }
    free(a);
    free(tmp);
    return rc;
}

static void pairs_dispose(pairs *p)
{
    free(p->start);
    free(p->other);
    free(p->dist);
    free(p->raw);
    free(p->rawd);
}

static int key_less(const nd_doc *a, const nd_doc *b)
{
    size_t l = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, l);
    return c ? c < 0 : a->key_len < b->key_len;
}

/* Keys of the stored matches, looked up in fingerprint order in one walk
 * of rev: *uf (sorted distinct fingerprints) and *uat (their index in
 * keys, or SIZE_MAX) */
static int stored_keys(nd_db *db, const best *bs, size_t n, nd_results *keys, uint64_t **uf,
                       size_t **uat, size_t *nu)
{
    uint64_t *f = malloc((n ? n : 1) * sizeof *f), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    size_t m = 0;
    int rc = ND_OK;
    *uf = f;
    *uat = NULL;
    if (!f || !tmp) ND_FAIL(ND_ENOMEM, "batch: out of memory");
    for (size_t j = 0; j < n; j++)
        if (bs[j].dist != UINT_MAX) f[m++] = bs[j].fp;
    m = sort_u64_unique(f, tmp, m);
    *uat = malloc((m ? m : 1) * sizeof **uat);
    if (!*uat) ND_FAIL(ND_ENOMEM, "batch: out of memory");
    *nu = m;
    rc = db_first_keys(db, f, m, keys, *uat);
cleanup:
    free(tmp);
    return rc;
}

/* Decide documents in order; fills out (batch matches' keys point into
 * docs, stored ones are pushed to keys and resolved at the end). */
static int decide(nd_batch_item *out, nd_results *keys, nd_db *db, const nd_doc *docs, size_t n,
                  const best *bs, const pairs *pr, const uint32_t *gid)
{
    size_t *stored_at = malloc((n ? n : 1) * sizeof *stored_at), *uat = NULL, nu = 0;
    /* each group's new document so far (SIZE_MAX: none) */
    size_t *new_of = malloc((pr->n ? pr->n : 1) * sizeof *new_of);
    uint64_t *uf = NULL;
    int rc = ND_OK;
    if (!stored_at || !new_of) ND_FAIL(ND_ENOMEM, "batch: out of memory");
    for (size_t g = 0; g < pr->n; g++) new_of[g] = SIZE_MAX;
    ND_TRY(stored_keys(db, bs, n, keys, &uf, &uat, &nu));
    for (size_t j = 0; j < n; j++) {
        nd_batch_item *it = &out[j];
        memset(it, 0, sizeof *it);
        it->resemblance = -1;
        stored_at[j] = SIZE_MAX;
        uint32_t f = gid[j];
        size_t bi = new_of[f]; /* best earlier new document: a copy first */
        unsigned bd = bi == SIZE_MAX ? UINT_MAX : 0;
        for (size_t e = pr->start[f]; e < pr->start[f + 1]; e++) {
            size_t i = new_of[pr->other[e]];
            if (i == SIZE_MAX) continue;
            unsigned d = pr->dist[e];
            if (bi == SIZE_MAX || d < bd ||
                (d == bd && (docs[i].fp < docs[bi].fp ||
                             (docs[i].fp == docs[bi].fp && key_less(&docs[i], &docs[bi]))))) {
                bi = i;
                bd = d;
            }
        }
        int use_stored = bs[j].dist != UINT_MAX;
        if (use_stored && bi != SIZE_MAX &&
            (bd < bs[j].dist || (bd == bs[j].dist && docs[bi].fp < bs[j].fp)))
            use_stored = 0;
        if (use_stored) {
            size_t at = uat[st_u64_lower_bound(uf, nu, bs[j].fp)];
            if (at == SIZE_MAX) use_stored = 0; /* deleted meanwhile (no lock held) */
            else stored_at[j] = at;
        }
        /* (A new batch document never shares a stored fingerprint: it
         * would have matched it at distance 0. So (dist, fp) decides.) */
        if (use_stored) {
            it->dup = 1;
            it->dist = bs[j].dist;
            it->match_fp = bs[j].fp;
            it->match_index = ND_BATCH_STORED;
        } else if (bi != SIZE_MAX) {
            it->dup = 1;
            it->dist = bd;
            it->match_fp = docs[bi].fp;
            it->match_index = bi;
            it->match_key = docs[bi].key;
            it->match_key_len = docs[bi].key_len;
        }
        if (!it->dup) new_of[f] = j;
    }
    results_resolve(keys);
    for (size_t j = 0; j < n; j++)
        if (stored_at[j] != SIZE_MAX) {
            const nd_match *m = nd_results_get(keys, stored_at[j]);
            out[j].match_key = m->key;
            out[j].match_key_len = m->key_len;
        }
cleanup:
    free(stored_at);
    free(new_of);
    free(uf);
    free(uat);
    return rc;
}

/* Store the new documents and refresh the last-seen time of stored
 * matches that carry the document's own key: one atomic write. */
static int add_new(db_txn *t, const nd_batch_item *out, const nd_doc *docs, size_t n)
{
    nd_db *db = t->db;
    for (size_t i = 0; i < n; i++) {
        const nd_doc *d = &docs[i];
        if (!out[i].dup) {
            /* fp is not stored: nothing stored lies within k >= 0 of it,
             * and an earlier new document with fp would make this one a
             * duplicate; so no rev probe for its other documents. */
            ND_FORWARD(db_txn_stage_add(t, d, 1));
        } else if (out[i].match_index == ND_BATCH_STORED && out[i].match_key_len == d->key_len &&
                   memcmp(out[i].match_key, d->key, d->key_len) == 0) {
            /* Seen again: the stored document keeps its score. */
            nd_doc seen = {d->key, d->key_len, out[i].match_fp, 0, d->time};
            char *v = NULL;
            size_t vlen;
            int rc = st_get(db->store, ST_CF_DOCS, d->key, d->key_len, &v, &vlen);
            if (rc == ND_OK) rc = db_doc_decode(v, vlen, NULL, &seen.score, NULL);
            free(v);
            ND_FORWARD(rc);
            ND_FORWARD(db_txn_stage_add(t, &seen, 0));
        }
    }
    /* Nothing staged (every document a duplicate of another key): no
     * write. */
    return st_batch_count(t->b) ? db_txn_commit(t) : ND_OK;
}

int nd_db_batch(nd_batch_item *out, nd_results *keys, nd_db *db, const nd_doc *docs, size_t n,
                unsigned k, unsigned flags)
{
    best *bs = NULL;
    pairs pr = {0};
    uint64_t *gfp = NULL;
    uint32_t *gid = NULL;
    size_t ng = 0;
    db_txn txn = {0};
    int add = (flags & ND_BATCH_ADD) != 0, rc = ND_OK;
    ND_RETURN_IF(!db || !keys || (n && (!out || !docs)), ND_EINVAL, "nd_db_batch: NULL argument");
    ND_RETURN_IF(k > ND_MAX_K, ND_EINVAL, "distance k=%u (0..%u allowed)", k, ND_MAX_K);
    ND_RETURN_IF(n > UINT32_MAX, ND_ELIMIT, "nd_db_batch: %zu documents (limit 2^32-1)", n);
    ND_RETURN_IF(flags & ~ND_BATCH_ADD, ND_EINVAL, "nd_db_batch: unknown flags 0x%x", flags);
    if (add) {
        ND_FORWARD(db_check_writable(db));
        ND_FORWARD(db_check_docs(docs, n));
    }
    nd_results_clear(keys);
    /* A resemblance store decides document by document (db_similar.c). */
    if (db->min_resemblance > 0) return db_similar_batch(out, keys, db, docs, n, k, flags);
    if (n == 0) return ND_OK;
    bs = malloc(n * sizeof *bs);
    if (!bs) ND_FAIL(ND_ENOMEM, "batch: out of memory for %zu documents", n);
    for (size_t i = 0; i < n; i++) bs[i] = (best){UINT_MAX, 0};
    ND_TRY(group_fps(docs, n, &gid, &gfp, &ng));
    pr.n = ng;
    if (k <= ND_MAX_PLAN_K) {
        rc = nd_selfjoin(gfp, ng, k, pair_cb, &pr);
        /* pair_cb fails only for memory; the join reports ND_ESTOPPED */
        if (rc == ND_ESTOPPED) rc = nd_err_set(ND_ENOMEM, "batch: out of memory for pairs");
        if (rc) goto cleanup;
    } else { /* beyond every plan: compare all pairs (rare; k > 8) */
        for (size_t j = 1; j < ng; j++)
            for (size_t i = 0; i < j; i++) {
                unsigned d = (unsigned)__builtin_popcountll(gfp[i] ^ gfp[j]);
                if (d <= k) ND_TRY(pair_cb(i, j, d, &pr));
            }
    }
    ND_TRY(pairs_index(&pr));
    int probes = k > db->plan.info.k || n <= db->batch_probes_max;
    /* With ND_BATCH_ADD the writer lock is held from here to the write.
     * A cursor whose table is folded meanwhile reads its snapshot, which
     * must hold the keys of the entries waiting in the mirror; probes
     * read the mirror itself. */
    if (add) {
        ND_TRY(db_txn_begin(&txn, db, 0));
        if (!probes) ND_TRY(db_mirrored_flush(db));
    } else if (!db->readonly && !probes) {
        ND_TRY(db_mirrored_flush_now(db));
    }
    if (probes) ND_TRY(stored_probes(db, docs, n, k, bs));
    else ND_TRY(stored_merge(db, docs, n, k, bs));
    ND_TRY(decide(out, keys, db, docs, n, bs, &pr, gid));
    if (add) ND_TRY(add_new(&txn, out, docs, n));
cleanup:
    rc = db_txn_end(&txn, rc);
    if (rc < 0) nd_results_clear(keys);
    pairs_dispose(&pr);
    free(bs);
    free(gfp);
    free(gid);
    return rc;
}
