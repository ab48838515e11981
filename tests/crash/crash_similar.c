/*
 * crash_similar.c — kill -9 a process writing into a resemblance store
 * through the C API from two threads, reopen, and check that every
 * acknowledged document is there with its sketch and band entries, and
 * nothing is half-written (the sketch and band families are written in
 * the document's atomic write: engine/store/db_txn.c).
 *
 * usage: crash_similar KILLS [SEED]
 *
 * The store is created with min_resemblance 0.85. Each round forks a
 * child that opens it with ND_DB_SYNC and a small fold threshold and runs
 * two writer threads:
 *   A  single documents: nd_db_add_doc_if_new (half of them near-copies
 *      of an earlier document's sketch, so checks find matches), a
 *      replacement of a recent key by nd_db_add_many (new fingerprint and
 *      sketch: its old band entries must go), nd_db_delete of a recent key;
 *   B  groups of 16 through nd_db_batch with ND_BATCH_ADD (every document
 *      stored), and every fourth group through nd_db_import instead.
 * Sketches are synthetic (random bins and band keys from the seed): the
 * store does not recompute them. After an operation returns, its thread
 * appends one line to its log (the acknowledgement), as crash_api does.
 * After each kill the parent reopens and checks:
 *   - nd_db_verify passes (every document has its sketch and band
 *     entries, and no sketch or band entry belongs to no document);
 *   - each thread's keys hold exactly the state after its acknowledged
 *     operations, or after those plus the one in flight, applied whole:
 *     present with the expected fingerprint, and nd_db_query_doc with the
 *     expected sketch (its fingerprint moved far away, so the bands alone
 *     can find it) returns the key with resemblance 1;
 *   - the document count and the stats' sketches and band keys agree.
 * Prints one line per round and "N passed, N failed"; exits non-zero on
 * any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <neardup.h>

#define GROUP 16
#define MAX_OPS 20000
#define R 0.85

static char g_dir[256], g_db[300];
static uint64_t g_seed;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t rnd(int round, int thread, uint64_t i, uint64_t salt)
{
    return mix(g_seed ^ mix(((uint64_t)round << 40) ^ ((uint64_t)thread << 32) ^ i ^ mix(salt)));
}

/* ---- documents (deterministic from seed, round, thread, index) -------- */

/* The sketch of version v of a thread's document source s: random, or
 * (every other s of thread A) a near-copy of source s - 1: 6 bins and one
 * band key changed. */
static void make_sketch(nd_sketch *sk, int round, int thread, uint64_t s)
{
    uint64_t base = thread == 0 && s % 2 && s > 0 ? s - 1 : s;
    for (unsigned i = 0; i < ND_SKETCH_BYTES; i += 8) {
        uint64_t v = rnd(round, thread, base, 100 + i);
        memcpy(sk->bin + i, &v, 8);
    }
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++)
        sk->band[b] = (uint32_t)rnd(round, thread, base, 200 + b);
    if (base != s) {
        for (int j = 0; j < 6; j++)
            sk->bin[rnd(round, thread, s, 300 + (uint64_t)j) % ND_SKETCH_BYTES] ^= 0x11;
        sk->band[rnd(round, thread, s, 400) % ND_SKETCH_BANDS] ^= 1;
    }
}

static uint64_t make_fp(int round, int thread, uint64_t s)
{
    return rnd(round, thread, s, 7);
}

enum { OP_ADD_IF_NEW, OP_REPLACE, OP_DELETE, OP_BATCH, OP_IMPORT };

typedef struct op {
    int kind;
    uint64_t key;    /* A: the document; B: the group's first */
    uint64_t source; /* A: the sketch's source (ADD_IF_NEW: key; REPLACE: a new one) */
} op;

static void op_a(op *o, int round, uint64_t i)
{
    uint64_t r = rnd(round, 0, i, 1);
    *o = (op){OP_ADD_IF_NEW, i, i};
    if (i >= 8 && r % 10 == 0) *o = (op){OP_DELETE, i - 1 - rnd(round, 0, i, 2) % 7, 0};
    else if (i >= 8 && r % 10 == 1)
        *o = (op){OP_REPLACE, i - 1 - rnd(round, 0, i, 2) % 7, MAX_OPS + i};
}

static void op_b(op *o, uint64_t i)
{
    *o = (op){i % 4 == 3 ? OP_IMPORT : OP_BATCH, i * GROUP, 0};
}

static void key_name(char *buf, size_t cap, int round, int thread, uint64_t n)
{
    snprintf(buf, cap, "r%d-%c-%" PRIu64, round, thread ? 'b' : 'a', n);
}

/* ---- the child -------------------------------------------------------- */

typedef struct worker {
    nd_db *db;
    int round, thread, log;
} worker;

static void die(const char *what, int rc)
{
    fprintf(stderr, "crash_similar child: %s: %s: %s\n", what, nd_strerror(rc), nd_errmsg());
    _exit(3);
}

static void ack(int fd, uint64_t i)
{
    char line[32];
    int n = snprintf(line, sizeof line, "%" PRIu64 "\n", i);
    if (write(fd, line, (size_t)n) != n) _exit(3);
}

static void *worker_main(void *p)
{
    worker *w = p;
    nd_results *res;
    char keys[GROUP][64];
    nd_sketch sk[GROUP];
    nd_doc docs[GROUP];
    nd_batch_item out[GROUP];
    op o;
    if (nd_results_new(&res) < 0) die("results", ND_ENOMEM);
    for (uint64_t i = 0; i < MAX_OPS; i++) {
        int rc = ND_OK;
        if (w->thread == 0) {
            op_a(&o, w->round, i);
            key_name(keys[0], sizeof keys[0], w->round, 0, o.key);
            make_sketch(&sk[0], w->round, 0, o.source);
            docs[0] = (nd_doc){keys[0], strlen(keys[0]), make_fp(w->round, 0, o.source), 1.0,
                               1000, &sk[0]};
            if (o.kind == OP_ADD_IF_NEW) rc = nd_db_add_doc_if_new(res, w->db, &docs[0], 3);
            else if (o.kind == OP_REPLACE) rc = nd_db_add_many(w->db, docs, 1);
            else if ((rc = nd_db_delete(w->db, keys[0], strlen(keys[0]))) == ND_ENOTFOUND)
                rc = ND_OK;
            if (rc < 0) die("thread A", rc);
        } else {
            op_b(&o, i);
            for (int j = 0; j < GROUP; j++) {
                key_name(keys[j], sizeof keys[j], w->round, 1, o.key + (uint64_t)j);
                make_sketch(&sk[j], w->round, 1, o.key + (uint64_t)j);
                docs[j] = (nd_doc){keys[j], strlen(keys[j]),
                                   make_fp(w->round, 1, o.key + (uint64_t)j), 0.0, 3000, &sk[j]};
            }
            rc = o.kind == OP_IMPORT ? nd_db_import(w->db, docs, GROUP)
                                     : nd_db_batch(out, res, w->db, docs, GROUP, 3, ND_BATCH_ADD);
            if (rc < 0) die("thread B", rc);
        }
        ack(w->log, i);
    }
    nd_results_free(res);
    return NULL;
}

static void log_path(char *buf, size_t cap, int round, int thread)
{
    snprintf(buf, cap, "%s/log-%d-%d", g_dir, round, thread);
}

static void child(int round)
{
    nd_db_options o = ND_DB_OPTIONS_INIT;
    nd_db *db;
    o.flags = ND_DB_SYNC;
    o.fold_threshold = 600;
    o.run_size = 16;
    int rc = nd_db_open(&db, g_db, &o);
    if (rc < 0) die("nd_db_open", rc);
    worker w[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        char lp[400];
        log_path(lp, sizeof lp, round, t);
        w[t] = (worker){db, round, t, open(lp, O_WRONLY | O_CREAT | O_APPEND, 0644)};
        if (w[t].log < 0) _exit(3);
        pthread_create(&th[t], NULL, worker_main, &w[t]);
    }
    for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
    nd_db_close(db);
    _exit(0);
}

/* ---- the parent ------------------------------------------------------- */

typedef struct docstate {
    int present;
    uint64_t source; /* of fp and sketch */
} docstate;

/* Acknowledged ops of a thread: how many (lines 0..n-1 in order; a torn
 * last line is not one). -1 on a malformed log. */
static long read_log(int round, int thread)
{
    char lp[400], line[64];
    long n = 0;
    log_path(lp, sizeof lp, round, thread);
    FILE *f = fopen(lp, "rb");
    if (!f) return errno == ENOENT ? 0 : -1;
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') break;
        if (strtol(line, NULL, 10) != n) {
            n = -1;
            break;
        }
        n++;
    }
    fclose(f);
    return n;
}

static void apply(docstate *st, int round, int thread, uint64_t i)
{
    op o;
    if (thread == 0) {
        op_a(&o, round, i);
        if (o.kind == OP_DELETE) st[o.key].present = 0;
        else st[o.key] = (docstate){1, o.source};
    } else {
        op_b(&o, i);
        for (uint64_t j = 0; j < GROUP; j++) st[o.key + j] = (docstate){1, o.key + j};
    }
}

/* Mismatches between the store and st for documents [0, n). */
static int compare(nd_db *db, nd_results *res, const docstate *st, size_t n, int round,
                   int thread, uint64_t *present, int report)
{
    char key[64];
    int bad = 0;
    *present = 0;
    for (size_t d = 0; d < n; d++) {
        key_name(key, sizeof key, round, thread, d);
        int rc = nd_db_get(res, db, key, strlen(key));
        if (rc < 0 && rc != ND_ENOTFOUND) {
            fprintf(stderr, "FAIL: round %d: nd_db_get %s: %s\n", round, key, nd_errmsg());
            return 1000000;
        }
        int have = rc == ND_OK, ok = have == st[d].present;
        *present += (uint64_t)have;
        if (have && ok) {
            /* its fingerprint, and its sketch through the bands alone */
            nd_sketch sk;
            make_sketch(&sk, round, thread, st[d].source);
            uint64_t fp = make_fp(round, thread, st[d].source);
            ok = nd_results_get(res, 0)->fp == fp;
            nd_doc q = {key, strlen(key), ~fp, 0, 0, &sk};
            rc = nd_db_query_doc(res, db, &q, 3, NULL);
            int found = 0;
            for (size_t j = 0; rc == ND_OK && j < nd_results_count(res); j++) {
                const nd_match *m = nd_results_get(res, j);
                found |= strcmp(m->key, key) == 0 && m->resemblance == 1.0;
            }
            ok = ok && found;
        }
        if (!ok) {
            if (report && bad < 3)
                fprintf(stderr, "  round %d %s: stored=%d expected=%d (source %" PRIu64 ")\n",
                        round, key, have, st[d].present, st[d].source);
            bad++;
        }
    }
    return bad;
}

static int check_thread(nd_db *db, nd_results *res, int round, int thread, uint64_t *present,
                        long *acked)
{
    long n = read_log(round, thread);
    if (n < 0) return -1;
    *acked = n;
    size_t ndocs = ((size_t)n + 4) * (thread ? GROUP : 1);
    docstate *st = calloc(ndocs, sizeof *st);
    for (long i = 0; i < n; i++) apply(st, round, thread, (uint64_t)i);
    int bad = compare(db, res, st, ndocs, round, thread, present, 0);
    if (bad) { /* the op in flight may have been applied whole */
        apply(st, round, thread, (uint64_t)n);
        bad = compare(db, res, st, ndocs, round, thread, present, 1);
    }
    free(st);
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: crash_similar KILLS [SEED]\n");
        return 2;
    }
    int kills = atoi(argv[1]), fails = 0, pass = 0;
    g_seed = argc > 2 ? strtoull(argv[2], NULL, 10) : (uint64_t)time(NULL);
    const char *base = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/ndcrash.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(g_db, sizeof g_db, "%s/db", g_dir);
    printf("crash_similar: seed %" PRIu64 ", %d kills, in %s\n", g_seed, kills, g_dir);
    fflush(stdout);

    nd_db *db;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_EXCL;
    o.k = 3;
    o.has_k = 1;
    o.expected_docs = 1000000;
    o.min_resemblance = R;
    int rc = nd_db_open(&db, g_db, &o);
    if (rc < 0) {
        fprintf(stderr, "create: %s: %s\n", nd_strerror(rc), nd_errmsg());
        return 2;
    }
    nd_db_close(db);

    nd_results *res;
    nd_results_new(&res);
    srand((unsigned)g_seed);
    uint64_t total = 0;
    for (int round = 1; round <= kills; round++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) child(round);
        long us = rand() % 4 == 0 ? 1000 + rand() % 40000 : 20000 + rand() % 380000;
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
            fprintf(stderr, "FAIL: round %d: child ended by itself (status %d)\n", round, status);
            fails++;
            continue;
        }
        nd_db_options ro = ND_DB_OPTIONS_INIT;
        ro.flags = ND_DB_NO_BACKGROUND;
        rc = nd_db_open(&db, g_db, &ro);
        if (rc < 0) {
            fprintf(stderr, "FAIL: round %d: reopen: %s: %s\n", round, nd_strerror(rc),
                    nd_errmsg());
            fails++;
            break;
        }
        int ok = 1;
        if ((rc = nd_db_verify(db)) < 0) {
            fprintf(stderr, "FAIL: round %d: verify: %s: %s\n", round, nd_strerror(rc),
                    nd_errmsg());
            ok = 0;
        }
        uint64_t present[2] = {0, 0};
        long acked[2] = {0, 0};
        for (int t = 0; t < 2; t++)
            if (check_thread(db, res, round, t, &present[t], &acked[t]) < 0) {
                fprintf(stderr, "FAIL: round %d thread %c: stored documents differ from the "
                                "acknowledged operations (+ the one in flight)\n",
                        round, t ? 'B' : 'A');
                ok = 0;
            }
        total += present[0] + present[1];
        nd_stats st;
        rc = nd_db_stats(&st, db);
        if (rc < 0 || st.documents != total || st.sketches != total ||
            st.band_keys != total * ND_SKETCH_BANDS) {
            fprintf(stderr, "FAIL: round %d: %" PRIu64 " documents, %" PRIu64 " sketches, %" PRIu64
                            " band keys; %" PRIu64 " documents expected\n",
                    round, st.documents, st.sketches, st.band_keys, total);
            ok = 0;
            if (rc == ND_OK) total = st.documents;
        }
        nd_db_close(db);
        printf("round %d: killed after %ld ms; acknowledged ops A %ld, B %ld; %s\n", round,
               us / 1000, acked[0], acked[1], ok ? "ok" : "FAILED");
        fflush(stdout);
        if (ok) pass++;
        else fails++;
    }
    nd_results_free(res);
    printf("%d passed, %d failed\n", pass, fails);
    if (fails == 0) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", g_dir);
    } else {
        fprintf(stderr, "crash_similar: kept %s for inspection\n", g_dir);
    }
    return fails ? 1 : 0;
}
