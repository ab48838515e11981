/*
 * crash_api.c — kill -9 a process writing through the C API from two
 * threads, reopen, and check that every acknowledged write survived and
 * nothing is half-written (DESIGN.md promise 2).
 *
 * usage: crash_api KILLS [SEED]
 *
 * Each round forks a child that opens the database with ND_DB_SYNC and a
 * small fold threshold (so background folds run, and get killed, too) and
 * runs two writer threads:
 *   A  single documents: nd_db_add, nd_db_add_if_new (near-duplicates of its own
 *      documents), exact repeats of an earlier fingerprint under a new key
 *      (several documents per fingerprint), nd_db_add replacing a recent key's
 *      fingerprint and nd_db_delete of its own acknowledged documents (the
 *      old fingerprint often still waiting in the fresh mirror);
 *   B  groups of 16 through nd_db_add_many, the last entry of each group
 *      re-using the group's first key (later entries win).
 * After an operation returns, its thread appends one line "OP OUTCOME\n" to
 * its own log file: that line is the acknowledgement. The parent kills the
 * child after a random delay (early kills hit open and recovery), then
 * opens the database and checks:
 *   - nd_db_verify passes (all tables hold the same set; docs and rev agree);
 *   - for each thread, the round's keys hold exactly the state after its
 *     acknowledged operations, or after those plus the one operation that
 *     was in flight, applied whole (a group is all or nothing);
 *   - the document count equals what all rounds left.
 * The log is written with write(2) on O_APPEND files, which a SIGKILL does
 * not lose (the page cache belongs to the kernel); a torn last line is not
 * an acknowledgement.
 *
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <neardup.h>

#define GROUP 16
#define MAX_OPS 20000 /* per thread and round: far more than a round reaches */

static char g_dir[256], g_db[300];
static uint64_t g_seed;
static int g_fail;

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

/* ---- the operations (deterministic from seed, round, thread, index) --- */

enum { OP_ADD, OP_ADD_IF_NEW, OP_DELETE, OP_GROUP };

typedef struct op {
    int kind;
    uint64_t key;   /* A: document index; B: first document index */
    uint64_t fp;    /* A */
    uint64_t fps[GROUP];
} op;

/* Thread A's op i. Keys are "rR-a-N" for add ops N = i; deletes and
 * replacements name an earlier add's key. */
static void op_a(op *o, int round, uint64_t i)
{
    memset(o, 0, sizeof *o);
    o->key = i;
    uint64_t r = rnd(round, 0, i, 1);
    if (i >= 8 && r % 10 == 0) {
        o->kind = OP_DELETE;
        o->key = i - 1 - rnd(round, 0, i, 2) % 7; /* may be a delete or a dup: then ENOTFOUND */
        return;
    }
    o->fp = rnd(round, 0, i, 3);
    if (i >= 4 && r % 10 <= 2) {
        o->kind = OP_ADD_IF_NEW;
        if (r % 10 == 1) o->fp = rnd(round, 0, i - 1 - r % 3, 3) ^ (1ull << (r >> 58)); /* dist 1 */
        return;
    }
    o->kind = OP_ADD;
    if (i >= 4 && r % 10 == 3) o->fp = rnd(round, 0, i - 2, 3); /* same fp as an earlier key */
    if (i >= 8 && r % 10 == 4) o->key = i - 1 - rnd(round, 0, i, 2) % 7; /* a replacement */
}

static void op_b(op *o, int round, uint64_t i)
{
    memset(o, 0, sizeof *o);
    o->kind = OP_GROUP;
    o->key = i * GROUP;
    for (int j = 0; j < GROUP; j++) o->fps[j] = rnd(round, 1, i * GROUP + (uint64_t)j, 4);
}

static void key_name(char *buf, size_t cap, int round, int thread, uint64_t n)
{
    snprintf(buf, cap, "r%d-%c-%" PRIu64, round, thread ? 'b' : 'a', n);
}

/* ---- the child: two writer threads ----------------------------------- */

typedef struct worker {
    nd_db *db;
    int round, thread, log;
} worker;

static void ack(int fd, uint64_t i, int outcome)
{
    char line[64];
    int n = snprintf(line, sizeof line, "%" PRIu64 " %d\n", i, outcome);
    if (write(fd, line, (size_t)n) != n) _exit(3);
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "crash_api child: %s: %s: %s\n", what, nd_strerror(rc), nd_errmsg());
    _exit(3);
}

static void *worker_main(void *p)
{
    worker *w = p;
    nd_results *res;
    char key[64], keys[GROUP][64];
    op o;
    if (nd_results_new(&res) < 0) die("results", ND_ENOMEM);
    for (uint64_t i = 0; i < MAX_OPS; i++) {
        int rc, outcome = 0;
        if (w->thread == 0) {
            op_a(&o, w->round, i);
            key_name(key, sizeof key, w->round, 0, o.key);
            switch (o.kind) {
            case OP_ADD:
                rc = nd_db_add(w->db, key, strlen(key), o.fp, (double)i, 1000 + (int64_t)i);
                if (rc < 0) die("nd_db_add", rc);
                break;
            case OP_ADD_IF_NEW:
                rc = nd_db_add_if_new(res, w->db, key, strlen(key), o.fp, 0.5, 2000, 3);
                if (rc < 0) die("nd_db_add_if_new", rc);
                outcome = nd_results_count(res) ? 0 : 1; /* 1 = stored */
                break;
            case OP_DELETE:
                rc = nd_db_delete(w->db, key, strlen(key));
                if (rc < 0 && rc != ND_ENOTFOUND) die("nd_db_delete", rc);
                outcome = rc == ND_OK;
                break;
            }
        } else {
            nd_doc docs[GROUP];
            op_b(&o, w->round, i);
            for (int j = 0; j < GROUP; j++) {
                /* The last entry re-uses the first key: later entries win. */
                key_name(keys[j], sizeof keys[j], w->round, 1, o.key + (j == GROUP - 1 ? 0 : (uint64_t)j));
                docs[j] = (nd_doc){keys[j], strlen(keys[j]), o.fps[j], 0.0, 3000};
            }
            rc = nd_db_add_many(w->db, docs, GROUP);
            if (rc < 0) die("nd_db_add_many", rc);
        }
        ack(w->log, i, outcome);
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
    o.fold_threshold = 600; /* table entries: a background fold every ~150 documents */
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

/* ---- the parent: expected states and checks -------------------------- */

typedef struct docstate {
    int present;
    uint64_t fp;
} docstate;

/* Acknowledged ops of one thread: outcomes[0..n). Lines must number 0..n-1
 * in order; a torn last line is dropped. */
static int read_log(int round, int thread, int **out, size_t *out_n)
{
    char lp[400];
    log_path(lp, sizeof lp, round, thread);
    FILE *f = fopen(lp, "rb");
    *out = calloc(MAX_OPS, sizeof **out);
    *out_n = 0;
    if (!f) return errno == ENOENT ? 0 : -1;
    char line[128];
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') break; /* torn: not acknowledged */
        uint64_t i;
        int oc;
        if (sscanf(line, "%" SCNu64 " %d", &i, &oc) != 2 || i != *out_n) {
            fprintf(stderr, "FAIL: round %d thread %d: log line %zu is '%s'\n", round, thread,
                    *out_n, line);
            fclose(f);
            return -1;
        }
        (*out)[(*out_n)++] = oc;
    }
    fclose(f);
    return 0;
}

/* Apply op i of a thread to state (indexed by document number). For an
 * acknowledged op, outcome is the logged one; for the in-flight op, -1
 * means "applied as a store". */
static void apply(docstate *st, int round, int thread, uint64_t i, int outcome)
{
    op o;
    if (thread == 0) {
        op_a(&o, round, i);
        switch (o.kind) {
        case OP_ADD: st[o.key] = (docstate){1, o.fp}; break;
        case OP_ADD_IF_NEW:
            if (outcome != 0) st[o.key] = (docstate){1, o.fp};
            break;
        case OP_DELETE: st[o.key].present = 0; break;
        }
    } else {
        op_b(&o, round, i);
        for (int j = 0; j < GROUP - 1; j++) st[o.key + (uint64_t)j] = (docstate){1, o.fps[j]};
        st[o.key].fp = o.fps[GROUP - 1];
    }
}

static size_t docs_of_op(int thread) { return thread == 0 ? 1 : GROUP; }

/* Compare the database with state for documents [0, n). Returns the number
 * of mismatches and counts present documents. */
static int compare(nd_db *db, nd_results *res, const docstate *st, size_t n, int round,
                   int thread, uint64_t *present, int report)
{
    char key[64];
    int bad = 0;
    *present = 0;
    for (size_t d = 0; d < n; d++) {
        key_name(key, sizeof key, round, thread, d);
        int rc = nd_db_get(res, db, key, strlen(key));
        int have = rc == ND_OK;
        if (rc < 0 && rc != ND_ENOTFOUND) {
            fprintf(stderr, "FAIL: round %d: nd_db_get %s: %s: %s\n", round, key, nd_strerror(rc),
                    nd_errmsg());
            return 1000000;
        }
        if (have) (*present)++;
        if (have != st[d].present ||
            (have && nd_results_get(res, 0)->fp != st[d].fp)) {
            if (report && bad < 3)
                fprintf(stderr, "  round %d %s: stored=%d (fp %016" PRIx64 ") expected=%d (fp %016" PRIx64 ")\n",
                        round, key, have, have ? nd_results_get(res, 0)->fp : 0, st[d].present,
                        st[d].fp);
            bad++;
        }
    }
    return bad;
}

static int check_thread(nd_db *db, nd_results *res, int round, int thread, uint64_t *present,
                        size_t *acked)
{
    int *oc;
    size_t n;
    if (read_log(round, thread, &oc, &n) < 0) {
        free(oc);
        return -1;
    }
    *acked = n;
    /* Documents that ops 0..n+1 can touch, plus a margin that must be absent. */
    size_t ndocs = (n + 4) * docs_of_op(thread);
    docstate *st = calloc(ndocs, sizeof *st);
    for (size_t i = 0; i < n; i++) apply(st, round, thread, i, oc[i]);
    int bad = compare(db, res, st, ndocs, round, thread, present, 0);
    if (bad) { /* the op in flight may have been applied whole */
        apply(st, round, thread, n, -1);
        bad = compare(db, res, st, ndocs, round, thread, present, 1);
    }
    free(st);
    free(oc);
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: crash_api KILLS [SEED]\n");
        return 2;
    }
    int kills = atoi(argv[1]);
    g_seed = argc > 2 ? strtoull(argv[2], NULL, 10) : (uint64_t)time(NULL);
    const char *base = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/ndcrash.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(g_db, sizeof g_db, "%s/db", g_dir);
    printf("crash_api: seed %" PRIu64 ", %d kills, in %s\n", g_seed, kills, g_dir);
    fflush(stdout);

    nd_db *db;
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_FINGERPRINT_ONLY | ND_DB_EXCL;
    o.k = 3;
    o.has_k = 1;
    o.expected_docs = 1000000;
    int rc = nd_db_open(&db, g_db, &o);
    if (rc < 0) {
        fprintf(stderr, "create: %s: %s\n", nd_strerror(rc), nd_errmsg());
        return 2;
    }
    nd_db_close(db);

    nd_results *res;
    nd_results_new(&res);
    srand((unsigned)g_seed);
    uint64_t total = 0; /* documents all rounds left */
    int pass = 0;
    for (int round = 1; round <= kills; round++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) child(round);
        /* A quarter of the kills within 40 ms (open, recovery, first
         * writes), the rest up to 400 ms. */
        long us = rand() % 4 == 0 ? 1000 + rand() % 40000 : 20000 + rand() % 380000;
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
            fprintf(stderr, "FAIL: round %d: child ended by itself (status %d)\n", round, status);
            g_fail++;
            continue;
        }

        nd_db_options ro = ND_DB_OPTIONS_INIT;
        ro.flags = ND_DB_NO_BACKGROUND;
        rc = nd_db_open(&db, g_db, &ro);
        if (rc < 0) {
            fprintf(stderr, "FAIL: round %d: reopen: %s: %s\n", round, nd_strerror(rc), nd_errmsg());
            g_fail++;
            break;
        }
        int ok = 1;
        rc = nd_db_verify(db);
        if (rc < 0) {
            fprintf(stderr, "FAIL: round %d: verify: %s: %s\n", round, nd_strerror(rc), nd_errmsg());
            ok = 0;
        }
        uint64_t present[2] = {0, 0};
        size_t acked[2] = {0, 0};
        for (int t = 0; t < 2; t++)
            if (check_thread(db, res, round, t, &present[t], &acked[t]) < 0) {
                fprintf(stderr, "FAIL: round %d thread %c: stored documents differ from the "
                                "acknowledged operations (+ the one in flight)\n",
                        round, t ? 'B' : 'A');
                ok = 0;
            }
        total += present[0] + present[1];
        nd_stats stats;
        rc = nd_db_stats(&stats, db);
        if (rc < 0 || stats.documents != total) {
            fprintf(stderr, "FAIL: round %d: %" PRIu64 " documents stored, %" PRIu64 " expected\n",
                    round, rc < 0 ? 0 : stats.documents, total);
            ok = 0;
            if (rc == ND_OK) total = stats.documents;
        }
        nd_db_close(db);
        printf("round %d: killed after %ld ms; acknowledged ops A %zu, B %zu; table 0: %" PRIu64
               " runs, %" PRIu64 " fresh; %s\n", round, us / 1000, acked[0], acked[1],
               rc == ND_OK ? stats.table[0].runs : 0, rc == ND_OK ? stats.table[0].fresh : 0,
               ok ? "ok" : "FAILED");
        fflush(stdout);
        if (ok) pass++;
        else g_fail++;
    }
    nd_results_free(res);
    printf("%d passed, %d failed\n", pass, g_fail);
    if (g_fail == 0) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", g_dir);
    } else {
        fprintf(stderr, "crash_api: kept %s for inspection\n", g_dir);
    }
    return g_fail ? 1 : 0;
}
