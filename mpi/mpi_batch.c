/*
 * mpi_batch.c — `neardup-mpi batch DIR INPUT`: Manku's batch mode over a
 * sharded store, the patent's coordinator and devices on MPI.
 *
 * Steps (every rank runs them in this order; see mpi_comm.h for how a
 * failure travels):
 *  1. rank 0 reads the manifest and broadcasts it;
 *  2. every rank opens its shards (shard s belongs to rank s % size: the
 *     library's nd_shards_open with part = rank, parts = size, which checks
 *     their plan and fingerprint configuration against the manifest)
 *     -> agreement: a missing shard fails the run here, naming it;
 *  3. rank 0 reads the batch (fingerprinting texts with shard 0's
 *     configuration) and broadcasts fingerprints, keys and scores; with
 *     --chunk N, N documents at a time, steps 3-7 running once per chunk;
 *  4. every rank finds, per document, the closest stored match over its
 *     shards: nd_batch without ND_BATCH_ADD (the merge join). nd_batch also
 *     resolves the batch within itself, and a batch match hides the stored
 *     one; those documents alone are checked again (check_shard)
 *     -> agreement;
 *  5. the per-rank best matches go to rank 0, which keeps, per document,
 *     the smallest (distance, fingerprint, key) over all shards;
 *  6. rank 0 decides the batch in input order exactly as nd_batch does on
 *     one database: a document is a duplicate when a stored match or an
 *     earlier *new* document lies within k (pairs from nd_selfjoin), the
 *     closest winning (ties: fingerprint, then key);
 *  7. with --add the decisions are broadcast and every rank stores the new
 *     documents whose key hashes to one of its shards -> agreement; only
 *     then does rank 0 print. Nothing is stored unless every rank passed
 *     steps 2-4.
 * Output is the single-machine `neardup batch`'s: one line per document in
 * input order, `new<TAB>KEY` or `dup<TAB>KEY<TAB>MATCHKEY<TAB>DIST`.
 */
#include "mpi_cmds.h"
#include "mpi_comm.h"
#include "cli_docs.h"
#include "in_reader.h"

#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: neardup-mpi batch DIR [--add] [--format fp|jsonl|tsv] [--k K] [--chunk N]\n"
    "                         [--html] [--time T] [--skip-bad] [--json] INPUT...\n"
    "\n"
    "Check a batch of documents against the sharded store DIR (see `neardup\n"
    "shard`) and against each other, on every rank of the MPI job: shard s\n"
    "is read by rank s % size. Prints per document, in input order:\n"
    "  new<TAB>KEY                       no near-duplicate (stored with --add)\n"
    "  dup<TAB>KEY<TAB>MATCHKEY<TAB>DIST closest stored or earlier new document\n"
    "  --add      store the new documents, each in the shard of its key, once\n"
    "             every rank has checked its shards\n"
    "  --format   fp (default), jsonl or tsv, as for `neardup add`\n"
    "  --k K      distance (default: the store's k)\n"
    "  --html     texts are HTML\n"
    "  --time T   last-seen time to record with --add (default now)\n"
    "  --skip-bad skip malformed records (reported on stderr) instead of failing\n"
    "  --json     JSON lines {\"status\",\"key\",\"match\",\"dist\"}\n"
    "  --chunk N  check N documents per batch (default: the whole input); each\n"
    "             chunk is checked, stored with --add and printed before the next\n"
    "             is read, so later chunks see what earlier ones stored\n"
    "The inputs are read in order as one stream (as `neardup batch`).\n"
    "Exit codes: 0 ok, 1 bad usage or input, 2 a shard failed (nothing stored).\n";

/* The batch as broadcast: one buffer, a header (n, key bytes, last
 * chunk), the 8-byte fields, keys last. */
typedef struct batch {
    void *buf;
    uint64_t len;
    uint64_t n;
    int last;
    uint64_t *fp;
    double *score;
    uint64_t *koff; /* n + 1 offsets into keys */
    char *keys;
} batch;

/* The closest stored match of one document; key points into an arena. */
typedef struct match {
    unsigned dist; /* UINT_MAX: none */
    uint64_t fp;
    const char *key;
    size_t key_len;
} match;

/* (dist, fp, key) order: < 0 when a comes first. */
static int match_cmp(unsigned da, uint64_t fa, const char *ka, size_t la, unsigned db,
                     uint64_t fb, const char *kb, size_t lb)
{
    if (da != db) return da < db ? -1 : 1;
    if (fa != fb) return fa < fb ? -1 : 1;
    int c = memcmp(ka, kb, la < lb ? la : lb);
    if (c) return c;
    return la < lb ? -1 : la > lb;
}

static void consider(match *m, unsigned d, uint64_t fp, const char *key, size_t len)
{
    if (m->dist == UINT_MAX || match_cmp(d, fp, key, len, m->dist, m->fp, m->key, m->key_len) < 0)
        *m = (match){d, fp, key, len};
}

/* Point the batch's arrays into its buffer. */
static void batch_layout(batch *b)
{
    uint64_t *h = b->buf;
    b->n = h[0];
    b->last = h[2] != 0;
    b->fp = h + 3;
    b->score = (double *)(b->fp + b->n);
    b->koff = (uint64_t *)(b->score + b->n);
    b->keys = (char *)(b->koff + b->n + 1);
}

/* ---- step 3: rank 0 reads the batch -------------------------------------- */


/* Rank 0's reader: the inputs in order, read a chunk at a time. */
typedef struct batch_reader {
    in_format fmt;
    char **inputs;
    int ninputs, next; /* next input to open */
    in_reader *r;
    nd_fp_options fo;
    int html, skip_bad;
    uint64_t bad;
} batch_reader;

/* Read up to max documents (0 = all) into b; header word 2 says whether
 * the inputs are exhausted. */
static int read_batch(batch *b, batch_reader *br, uint64_t max)
{
    mpi_buf fps = {0}, scores = {0}, koff = {0}, keys = {0};
    int rc = 0, last = 0;
    uint64_t zero = 0;
    if (mpi_buf_put(&koff, &zero, 8)) goto oom;
    for (;;) {
        in_record rec;
        if (max && fps.len / 8 == max) break;
        if (!br->r) {
            if (br->next == br->ninputs) {
                last = 1;
                break;
            }
            if (in_reader_open(&br->r, br->fmt, br->inputs[br->next++], NULL) < 0) {
                rc = mpi_note(CLI_EXIT_USAGE, "%s", in_reader_error(NULL));
                goto done;
            }
        }
        int got = in_reader_next(br->r, &rec);
        if (got == 0) {
            in_reader_close(br->r);
            br->r = NULL;
            continue;
        }
        if (got == -1 && br->skip_bad) {
            fprintf(stderr, "neardup-mpi: %s\n", in_reader_error(br->r));
            br->bad++;
            continue;
        }
        if (got < 0) {
            rc = mpi_note(CLI_EXIT_USAGE, "%s", in_reader_error(br->r));
            goto done;
        }
        uint64_t fp = rec.fp;
        if (!rec.has_fp) {
            nd_fp_options o = br->fo;
            if (br->html || rec.is_html) o.flags |= ND_FP_HTML;
            int nrc = nd_fingerprint(&fp, rec.text, rec.text_len, &o);
            if (nrc < 0) {
                rc = mpi_note(CLI_EXIT_USAGE, "%s:%llu: fingerprint: %s: %s", rec.file,
                              (unsigned long long)rec.line, nd_strerror(nrc), nd_errmsg());
                goto done;
            }
        }
        double score = rec.has_score ? rec.score : 0.0;
        uint64_t end = keys.len + rec.key_len;
        if (mpi_buf_put(&fps, &fp, 8) || mpi_buf_put(&scores, &score, 8) ||
            mpi_buf_put(&keys, rec.key, rec.key_len) || mpi_buf_put(&koff, &end, 8))
            goto oom;
    }
    uint64_t n = fps.len / 8;
    b->len = 24 + fps.len + scores.len + koff.len + keys.len;
    b->buf = malloc(b->len);
    if (!b->buf) goto oom;
    uint64_t *h = b->buf;
    h[0] = n;
    h[1] = keys.len;
    h[2] = (uint64_t)last;
    batch_layout(b);
    if (n) {
        memcpy(b->fp, fps.p, fps.len);
        memcpy(b->score, scores.p, scores.len);
    }
    memcpy(b->koff, koff.p, koff.len);
    if (keys.len) memcpy(b->keys, keys.p, keys.len);
    goto done;
oom:
    rc = mpi_note(CLI_EXIT_DB, "batch: out of memory reading the batch");
done:
    free(fps.p);
    free(scores.p);
    free(koff.p);
    free(keys.p);
    return rc;
}

/* ---- step 4: stored matches on this rank's shards ------------------------ */

/* Local best matches; keys copied into an arena (offsets until the end). */
typedef struct local {
    match *m;
    mpi_buf arena;
} local;

static int local_consider(local *l, size_t i, unsigned d, uint64_t fp, const char *key,
                          size_t len)
{
    match *m = &l->m[i];
    const char *cur = m->dist == UINT_MAX ? NULL : l->arena.p + (uintptr_t)m->key;
    if (m->dist != UINT_MAX && match_cmp(d, fp, key, len, m->dist, m->fp, cur, m->key_len) >= 0)
        return 0;
    size_t off = l->arena.len;
    if (mpi_buf_put(&l->arena, key, len)) return -1;
    *m = (match){d, fp, (const char *)(uintptr_t)off, len};
    return 0;
}

/* The closest stored match on one shard of every document. nd_batch also
 * decides the batch against itself, and where an earlier new document
 * lies closer than anything stored, that batch match is all it reports.
 * Those documents go round again as a smaller batch (the first of them
 * always gets its stored answer, and usually nearly all do); a few left
 * over are probed one by one with nd_query. One probe costs about as much
 * as a thousand documents of a merge, hence the rounds. */
enum { CHECK_PROBE_BELOW = 64, CHECK_MAX_ROUNDS = 16 };

static int check_shard(local *l, nd_db *db, const char *path, const batch *b, const nd_doc *docs,
                       unsigned k)
{
    size_t n = b->n, m = n;
    nd_batch_item *items = malloc((n ? n : 1) * sizeof *items);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    nd_doc *sub = NULL;
    nd_results *keys = NULL, *res = NULL;
    int rc = 0, nrc;
    if (!items || !idx || nd_results_new(&keys) < 0 || nd_results_new(&res) < 0) goto oom;
    for (size_t i = 0; i < n; i++) idx[i] = i;
    for (unsigned round = 0; m >= CHECK_PROBE_BELOW && round < CHECK_MAX_ROUNDS; round++) {
        const nd_doc *d = docs;
        if (round > 0) {
            if (!sub && !(sub = malloc(m * sizeof *sub))) goto oom;
            for (size_t j = 0; j < m; j++) sub[j] = docs[idx[j]];
            d = sub;
        }
        nrc = nd_batch(items, keys, db, d, m, k, 0);
        if (nrc < 0) {
            rc = mpi_note(CLI_EXIT_DB, "batch: checking shard '%s': %s: %s", path,
                          nd_strerror(nrc), nd_errmsg());
            goto done;
        }
        size_t next = 0;
        for (size_t j = 0; j < m; j++) {
            const nd_batch_item *it = &items[j];
            if (!it->dup) continue;
            if (it->match_index != ND_BATCH_STORED) {
                idx[next++] = idx[j];
                continue;
            }
            if (local_consider(l, idx[j], it->dist, it->match_fp, it->match_key,
                               it->match_key_len))
                goto oom;
        }
        m = next;
    }
    for (size_t j = 0; j < m; j++) {
        size_t i = idx[j];
        nrc = nd_query(res, db, b->fp[i], k, NULL);
        if (nrc < 0) {
            rc = mpi_note(CLI_EXIT_DB, "batch: querying shard '%s': %s: %s", path,
                          nd_strerror(nrc), nd_errmsg());
            goto done;
        }
        if (nd_results_count(res)) {
            const nd_match *mt = nd_results_get(res, 0);
            if (local_consider(l, i, mt->dist, mt->fp, mt->key, mt->key_len)) goto oom;
        }
    }
    goto done;
oom:
    rc = mpi_note(CLI_EXIT_DB, "batch: out of memory checking shard '%s'", path);
done:
    free(items);
    free(idx);
    free(sub);
    nd_results_free(keys);
    nd_results_free(res);
    return rc;
}

/* Serialise local matches: u64 index, u64 fp, u32 dist, u32 key_len, key. */
static int pack_local(mpi_buf *out, const local *l, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        const match *m = &l->m[i];
        if (m->dist == UINT_MAX) continue;
        uint32_t d = m->dist, kl = (uint32_t)m->key_len;
        if (mpi_buf_put(out, &i, 8) || mpi_buf_put(out, &m->fp, 8) || mpi_buf_put(out, &d, 4) ||
            mpi_buf_put(out, &kl, 4) ||
            mpi_buf_put(out, l->arena.p + (uintptr_t)m->key, m->key_len))
            return -1;
    }
    return 0;
}

/* Rank 0: the best over all ranks' records (keys point into all). */
static void merge_matches(match *best, const char *all, uint64_t total, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) best[i].dist = UINT_MAX;
    for (uint64_t off = 0; off + 24 <= total;) {
        uint64_t i, fp;
        uint32_t d, kl;
        memcpy(&i, all + off, 8);
        memcpy(&fp, all + off + 8, 8);
        memcpy(&d, all + off + 16, 4);
        memcpy(&kl, all + off + 20, 4);
        consider(&best[i], d, fp, all + off + 24, kl);
        off += 24 + kl;
    }
}

/* ---- step 6: rank 0 decides in input order ------------------------------- */

typedef struct pair {
    uint32_t i, j;
    uint8_t dist;
} pair;

typedef struct pairs {
    pair *p;
    size_t n, cap;
} pairs;

static int pair_cb(size_t i, size_t j, unsigned dist, void *payload)
{
    pairs *ps = payload;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 4096;
        pair *p = realloc(ps->p, cap * sizeof *p);
        if (!p) return 1;
        ps->p = p;
        ps->cap = cap;
    }
    ps->p[ps->n++] = (pair){(uint32_t)i, (uint32_t)j, (uint8_t)dist};
    return 0;
}

/* Every pair within k: nd_selfjoin up to its limit, beyond it a plain
 * quadratic scan (exact, meant for small batches at large k). */
static int batch_pairs(pairs *ps, const uint64_t *fp, size_t n, unsigned k)
{
    if (k <= ND_MAX_PLAN_K) {
        int rc = nd_selfjoin(fp, n, k, pair_cb, ps);
        return rc == 1 ? ND_ENOMEM : rc;
    }
    for (size_t j = 1; j < n; j++)
        for (size_t i = 0; i < j; i++) {
            unsigned d = nd_hamming(fp[i], fp[j]);
            if (d <= k && pair_cb(i, j, d, ps)) return ND_ENOMEM;
        }
    return ND_OK;
}

/* decide: best[] holds stored matches in, final matches out; is_new[] out. */
static int decide(match *best, uint8_t *is_new, const batch *b, unsigned k)
{
    pairs ps = {0};
    size_t n = b->n, *start = NULL;
    uint32_t *earlier = NULL;
    uint8_t *edist = NULL;
    int rc = batch_pairs(&ps, b->fp, n, k);
    if (rc < 0) goto done;
    /* CSR of each document's earlier neighbours. */
    start = calloc(n + 1, sizeof *start);
    earlier = malloc((ps.n ? ps.n : 1) * sizeof *earlier);
    edist = malloc((ps.n ? ps.n : 1) * sizeof *edist);
    if (!start || !earlier || !edist) {
        rc = ND_ENOMEM;
        goto done;
    }
    for (size_t e = 0; e < ps.n; e++) {
        size_t lo = ps.p[e].i < ps.p[e].j ? ps.p[e].i : ps.p[e].j;
        size_t hi = ps.p[e].i ^ ps.p[e].j ^ lo;
        ps.p[e].i = (uint32_t)lo;
        ps.p[e].j = (uint32_t)hi;
        start[hi + 1]++;
    }
    for (size_t i = 0; i < n; i++) start[i + 1] += start[i];
    for (size_t e = 0; e < ps.n; e++) {
        size_t at = start[ps.p[e].j]++;
        earlier[at] = ps.p[e].i;
        edist[at] = ps.p[e].dist;
    }
    for (size_t i = n; i > 0; i--) start[i] = start[i - 1];
    start[0] = 0;
    for (size_t j = 0; j < n; j++) {
        match *m = &best[j];
        for (size_t e = start[j]; e < start[j + 1]; e++) {
            size_t i = earlier[e];
            if (!is_new[i]) continue;
            consider(m, edist[e], b->fp[i], b->keys + b->koff[i], b->koff[i + 1] - b->koff[i]);
        }
        is_new[j] = m->dist == UINT_MAX;
    }
done:
    free(ps.p);
    free(start);
    free(earlier);
    free(edist);
    return rc;
}

/* ---- step 7: store the new documents ------------------------------------- */

/* flags[i]: 1 store (new), 2 refresh the last-seen time of the stored
 * document of the same key (its closest match), 0 nothing. */
static int add_shard(nd_db *db, const char *path, unsigned s, const nd_shards *sh,
                     const batch *b, const uint8_t *flags, int64_t now)
{
    nd_doc *docs = malloc((b->n ? b->n : 1) * sizeof *docs);
    nd_results *res = NULL;
    size_t nd = 0;
    int rc = 0, nrc = ND_OK;
    if (!docs || nd_results_new(&res) < 0) {
        rc = mpi_note(CLI_EXIT_DB, "batch: out of memory adding to shard '%s'", path);
        goto done;
    }
    for (size_t i = 0; i < b->n && nrc >= 0; i++) {
        if (!flags[i]) continue;
        const char *key = b->keys + b->koff[i];
        size_t len = b->koff[i + 1] - b->koff[i];
        if (nd_shards_place(sh, key, len) != s) continue;
        if (flags[i] == 1) {
            docs[nd++] = (nd_doc){key, len, b->fp[i], b->score[i], now};
        } else if ((nrc = nd_get(res, db, key, len)) >= 0) {
            const nd_match *m = nd_results_get(res, 0);
            nrc = nd_add(db, key, len, m->fp, m->score, now);
        }
    }
    /* One atomic write per shard; a bulk import where it pays. */
    if (nrc >= 0 && nd) nrc = nd >= 100000 ? nd_import(db, docs, nd) : nd_add_many(db, docs, nd);
    if (nrc < 0)
        rc = mpi_note(CLI_EXIT_DB, "batch: adding to shard %u '%s': %s: %s", s, path,
                      nd_strerror(nrc), nd_errmsg());
done:
    free(docs);
    nd_results_free(res);
    return rc;
}

/* ---- the command ---------------------------------------------------------- */

/* What every chunk of a run shares. */
typedef struct run_ctx {
    const char *dir;
    nd_shards *sh;
    nd_shards_info man;
    unsigned k;
    int add, json;
    int64_t now;
    uint64_t docs, nnew;
    double t_bcast, t_check, t_reduce, t_decide, t_add;
} run_ctx;

/* Steps 4 to 7 and the output for one broadcast chunk b. Every rank
 * returns the same exit code. */
static int run_chunk(run_ctx *c, const batch *b)
{
    local l = {0};
    nd_doc *docs = NULL;
    match *best = NULL;
    uint8_t *flags = NULL;
    void *gathered = NULL;
    uint64_t *lens = NULL;
    mpi_buf packed = {0};
    int rc = 0;
    double t = mpi_now(), t1;

    /* 4. Stored matches on this rank's shards. */
    mpi_step("checking", 0);
    docs = malloc((b->n ? b->n : 1) * sizeof *docs);
    l.m = malloc((b->n ? b->n : 1) * sizeof *l.m);
    if (!docs || !l.m) {
        rc = mpi_note(CLI_EXIT_DB, "batch: out of memory for %llu documents",
                      (unsigned long long)b->n);
    } else {
        for (uint64_t i = 0; i < b->n; i++) {
            docs[i] = (nd_doc){b->keys + b->koff[i], b->koff[i + 1] - b->koff[i], b->fp[i],
                               b->score[i], c->now};
            l.m[i].dist = UINT_MAX;
        }
        for (unsigned s = (unsigned)mpi_rank; s < c->man.shards && !rc; s += (unsigned)mpi_size) {
            char path[4096];
            nd_shards_path(path, sizeof path, c->sh, s);
            rc = check_shard(&l, nd_shards_db(c->sh, s), path, b, docs, c->k);
        }
    }
    if (!rc && pack_local(&packed, &l, b->n))
        rc = mpi_note(CLI_EXIT_DB, "batch: out of memory packing matches");
    if ((rc = mpi_agree(rc))) goto cleanup;
    t1 = mpi_now();
    c->t_check += t1 - t;
    t = t1;

    /* 5. Reduce to rank 0. */
    lens = calloc((size_t)mpi_size, sizeof *lens);
    if (mpi_gather_bytes(&gathered, lens, packed.p, packed.len) < 0) {
        rc = mpi_agree(mpi_note(CLI_EXIT_DB, "batch: out of memory gathering matches"));
        goto cleanup;
    }
    flags = calloc(b->n ? b->n : 1, 1);
    if (mpi_rank == 0) {
        uint64_t total = 0;
        for (int r = 0; r < mpi_size; r++) total += lens[r];
        best = malloc((b->n ? b->n : 1) * sizeof *best);
        if (!best || !flags) {
            rc = mpi_note(CLI_EXIT_DB, "batch: out of memory");
        } else {
            merge_matches(best, gathered, total, b->n);
            t1 = mpi_now();
            c->t_reduce += t1 - t;
            t = t1;
            /* 6. Decide in input order. */
            int nrc = decide(best, flags, b, c->k);
            if (nrc < 0)
                rc = mpi_note(nrc == ND_ENOMEM ? CLI_EXIT_DB : CLI_EXIT_USAGE,
                              "batch: pairs within the batch: %s: %s", nd_strerror(nrc),
                              nd_errmsg());
            for (uint64_t i = 0; i < b->n && !rc; i++) {
                if (flags[i] || best[i].dist == UINT_MAX) continue;
                /* A stored match of the same key: refresh its time. */
                const char *key = b->keys + b->koff[i];
                size_t len = b->koff[i + 1] - b->koff[i];
                if (best[i].key >= (const char *)gathered &&
                    best[i].key < (const char *)gathered + total && best[i].key_len == len &&
                    memcmp(best[i].key, key, len) == 0)
                    flags[i] = 2;
            }
            t1 = mpi_now();
            c->t_decide += t1 - t;
            t = t1;
        }
    } else if (!flags) {
        rc = mpi_note(CLI_EXIT_DB, "batch: out of memory");
    }
    if ((rc = mpi_agree(rc))) goto cleanup;

    /* 7. Store, only now that every rank has reported. */
    if (c->add) {
        mpi_step("adding", 1);
        for (uint64_t off = 0; off < b->n; off += 1u << 30)
            MPI_Bcast(flags + off, (int)(b->n - off < (1u << 30) ? b->n - off : 1u << 30),
                      MPI_BYTE, 0, MPI_COMM_WORLD);
        for (unsigned s = (unsigned)mpi_rank; s < c->man.shards && !rc; s += (unsigned)mpi_size) {
            char path[4096];
            nd_shards_path(path, sizeof path, c->sh, s);
            rc = add_shard(nd_shards_db(c->sh, s), path, s, c->sh, b, flags, c->now);
        }
        if ((rc = mpi_agree(rc))) {
            if (mpi_rank == 0)
                fprintf(stderr, "neardup-mpi: batch: storing failed on the shard named above; "
                                "the other shards hold their new documents of this chunk\n");
            goto cleanup;
        }
        t1 = mpi_now();
        c->t_add += t1 - t;
        mpi_step("between chunks", 0);
    }
    if (mpi_rank == 0) {
        for (uint64_t i = 0; i < b->n; i++) {
            const match *m = &best[i];
            cli_print_decision(stdout, c->json, b->keys + b->koff[i], b->koff[i + 1] - b->koff[i],
                               m->dist != UINT_MAX, m->key, m->key_len, m->dist);
            c->nnew += m->dist == UINT_MAX;
        }
        fflush(stdout);
    }
    c->docs += b->n;
cleanup:
    free(docs);
    free(l.m);
    free(l.arena.p);
    free(packed.p);
    free(gathered);
    free(lens);
    free(best);
    free(flags);
    return rc;
}

int mpi_cmd_batch(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"add", no_argument, 0, 'a'},  {"format", required_argument, 0, 'f'},
        {"k", required_argument, 0, 'k'}, {"html", no_argument, 0, 'H'},
        {"time", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
        {"skip-bad", no_argument, 0, 'b'}, {"chunk", required_argument, 0, 'c'},
        {0, 0, 0, 0}};
    run_ctx c = {0};
    batch_reader br = {0};
    int have_k = 0, opt, rc = 0;
    unsigned long v;
    uint64_t chunk = 0, chunks = 0;
    double t0 = mpi_now(), t;

    if (cli_wants_help(argc, argv)) {
        if (mpi_rank == 0) cli_usage(stdout, usage);
        return CLI_EXIT_OK;
    }
    br.fmt = IN_FORMAT_FP;
    c.now = (int64_t)time(NULL);
    optind = 1;
    opterr = mpi_rank == 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'a': c.add = 1; break;
        case 'f':
            if (in_format_parse(optarg, &br.fmt) || br.fmt == IN_FORMAT_FILES ||
                br.fmt == IN_FORMAT_WARC)
                return mpi_usage_error(usage, "batch: --format must be fp, jsonl or tsv, got '%s'",
                                       optarg);
            break;
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_K, &v))
                return mpi_usage_error(usage, "batch: --k must be 0..%u, got '%s'", ND_MAX_K,
                                       optarg);
            c.k = (unsigned)v;
            have_k = 1;
            break;
        case 'H': br.html = 1; break;
        case 't':
            if (cli_parse_duration(optarg, &c.now))
                return mpi_usage_error(usage, "batch: --time must be seconds since the epoch, "
                                       "got '%s'", optarg);
            break;
        case 'j': c.json = 1; break;
        case 'b': br.skip_bad = 1; break;
        case 'c':
            if (cli_parse_count(optarg, &chunk) || chunk == 0 || chunk > 1000000000)
                return mpi_usage_error(usage, "batch: --chunk must be 1..1e9, got '%s'", optarg);
            break;
        default: return mpi_usage_error(usage, NULL);
        }
    }
    if (argc - optind < 2)
        return mpi_usage_error(usage, "batch: expected a sharded store DIR and an INPUT");
    c.dir = argv[optind];
    br.inputs = argv + optind + 1;
    br.ninputs = argc - optind - 1;

    /* 1. The manifest, read once and broadcast. */
    char text[ND_SHARDS_MANIFEST_MAX + 1] = "";
    void *buf = text;
    uint64_t len = 0;
    if (mpi_rank == 0) {
        nd_shards *man = NULL;
        nd_shards_options mo;
        nd_shards_options_init(&mo, ND_SHARDS_OPTIONS_VERSION);
        mo.flags = ND_SHARDS_MANIFEST_ONLY;
        int nrc = nd_shards_open(&man, c.dir, &mo);
        if (nrc == ND_OK) nrc = nd_shards_manifest(text, sizeof text, man);
        if (nrc < 0) rc = mpi_note(CLI_EXIT_USAGE, "batch: %s", nd_errmsg());
        nd_shards_close(man);
        len = strlen(text) + 1;
    }
    if ((rc = mpi_agree(rc))) goto cleanup;
    if (mpi_bcast_bytes(&buf, &len) < 0) {
        rc = CLI_EXIT_DB;
        goto cleanup;
    }

    /* 2. Every rank opens its shards, checked against the manifest. */
    mpi_step("opening", 0);
    {
        nd_shards_options o;
        nd_shards_options_init(&o, ND_SHARDS_OPTIONS_VERSION);
        o.db_flags = c.add ? 0 : ND_DB_READONLY;
        o.part = (unsigned)mpi_rank;
        o.parts = (unsigned)mpi_size;
        o.manifest = buf;
        int nrc = nd_shards_open(&c.sh, c.dir, &o);
        if (nrc < 0) rc = mpi_note(CLI_EXIT_DB, "batch: %s", nd_errmsg());
        else nd_shards_info_get(&c.man, c.sh);
        if (buf != text) free(buf);
    }
    if (c.sh) mpi_step_shards(c.dir, c.man.shards);
    if ((rc = mpi_agree(rc))) {
        if (mpi_rank == 0)
            fprintf(stderr, "neardup-mpi: batch: a shard of '%s' is unavailable: run failed, "
                            "nothing %s\n", c.dir, c.add ? "stored" : "checked");
        goto cleanup;
    }
    if (!have_k) c.k = c.man.k;
    if (mpi_rank == 0) nd_db_fp_options(&br.fo, nd_shards_db(c.sh, 0));

    /* 3. Rank 0 reads a chunk (by default the whole input); everyone gets
     * it; steps 4-7 follow; until the inputs end. */
    for (;;) {
        batch b = {0};
        t = mpi_now();
        if (mpi_rank == 0) rc = read_batch(&b, &br, chunk);
        if ((rc = mpi_agree(rc))) {
            free(b.buf);
            break;
        }
        if (mpi_bcast_bytes(&b.buf, &b.len) < 0) {
            rc = mpi_agree(mpi_note(CLI_EXIT_DB, "batch: out of memory receiving the batch"));
            free(b.buf);
            break;
        }
        batch_layout(&b);
        c.t_bcast += mpi_now() - t;
        if (b.n) {
            rc = run_chunk(&c, &b);
            chunks++;
        }
        int last = b.last;
        free(b.buf);
        if (rc || last) break;
    }
    mpi_step("closing", c.add);
    if (mpi_rank == 0 && !rc) {
        if (br.bad)
            fprintf(stderr, "neardup-mpi: batch: %llu bad records skipped\n",
                    (unsigned long long)br.bad);
        fprintf(stderr,
                "neardup-mpi: batch: %llu documents, %llu new, %llu dup; %d ranks, %u shards, "
                "%llu chunks; read %.3f s, check %.3f s, reduce %.3f s, decide %.3f s, add "
                "%.3f s, total %.3f s\n",
                (unsigned long long)c.docs, (unsigned long long)c.nnew,
                (unsigned long long)(c.docs - c.nnew), mpi_size, c.man.shards,
                (unsigned long long)chunks, c.t_bcast, c.t_check, c.t_reduce, c.t_decide,
                c.t_add, mpi_now() - t0);
    }

cleanup:
    in_reader_close(br.r);
    int crc = nd_shards_close(c.sh);
    if (crc < 0 && rc == 0) {
        fprintf(stderr, "neardup-mpi: rank %d: %s: %s\n", mpi_rank, nd_strerror(crc), nd_errmsg());
        rc = CLI_EXIT_DB;
    }
    return rc;
}
