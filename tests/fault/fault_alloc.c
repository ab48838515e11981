/*
 * fault_alloc.c — failing allocations, in the spirit of SQLite's
 * malloc tests: each scenario step (create, open, add, add_if_new,
 * add_many, query, batch with ND_BATCH_ADD, delete, import, loader,
 * expire, compact, verify, backup, close, dedupe) runs again and again
 * with the library's Nth allocation failed (alloc_hook.c), N = 1, 2, 3 ...
 * (every stride-th N: argv[1], default 1), until it completes without
 * an injected failure. At each N the call must return ND_ENOMEM (and
 * not crash or leak: ASan's build runs this too); then the store is
 * reopened without injection, nd_db_verify must pass, and every document
 * acknowledged so far must be there with its fingerprint and every
 * acknowledged delete gone, while a document of the failed call is
 * either absent or whole.
 * Prints one line per step: the allocations it makes and the N tried.
 *
 * usage: fault_alloc [STRIDE [resemblance]]: with "resemblance", the
 * store verifies by resemblance (every document with a synthetic sketch,
 * add_if_new and query through their document forms), so the sketch and
 * band entries must be all or nothing with their document too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc_hook.h"
#include "neardup.h"
#include "../tmpdir.h"

#define MAX_DOCS 20000
#define STEP_DOCS 12 /* documents one step stores at most */

/* What the store must hold: acknowledged documents (present 1), deletes
 * (present 0), and the failed call's documents (present -1: either). */
typedef struct entry {
    char key[32];
    uint64_t fp;
    nd_sketch sketch; /* a resemblance store's: random, from fp */
    int64_t time;
    int present;
} entry;

static entry oracle[MAX_DOCS];
static size_t n_oracle;
static char dir[64], path[128], backup_path[160];
static unsigned failures;
static int resemblance; /* the store verifies by resemblance */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_fp(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fail(const char *step, uint64_t n, const char *what, int rc)
{
    fprintf(stderr, "FAIL %s, allocation %llu failed: %s (rc %d %s: %s)\n", step,
            (unsigned long long)n, what, rc, nd_strerror(rc), nd_errmsg());
    failures++;
}

/* A new document of the step: in the oracle as pending (-1). */
static nd_doc new_doc(int64_t time)
{
    entry *e = &oracle[n_oracle++];
    snprintf(e->key, sizeof e->key, "doc-%zu", n_oracle);
    e->fp = next_fp();
    e->time = time;
    e->present = -1;
    uint64_t z = e->fp;
    for (unsigned i = 0; i < ND_SKETCH_BYTES; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        e->sketch.bin[i] = (uint8_t)(z >> 56);
    }
    for (unsigned b = 0; b < ND_SKETCH_BANDS; b++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        e->sketch.band[b] = (uint32_t)(z >> 32);
    }
    return (nd_doc){ e->key, strlen(e->key), e->fp, 1.0, time, resemblance ? &e->sketch : NULL };
}

/* nd_db_add, or in a resemblance store the document with its sketch. */
static int add_one(nd_db *db, const nd_doc *d)
{
    return resemblance ? nd_db_add_many(db, d, 1)
                       : nd_db_add(db, d->key, d->key_len, d->fp, d->score, d->time);
}

/* Settle the pending documents: acknowledged (ok) or unknown. */
static void settle(size_t from, int ok)
{
    for (size_t i = from; i < n_oracle; i++)
        if (oracle[i].present == -1 && ok) oracle[i].present = 1;
}

static int open_db(nd_db **db, const char *p, unsigned flags)
{
    nd_db_options o;
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    o.flags = flags | ND_DB_NO_BACKGROUND;
    o.k = 3;
    o.expected_docs = 1000;
    o.threads = 1;
    o.min_resemblance = resemblance && (flags & ND_DB_CREATE) ? 0.85 : 0;
    if (!resemblance) o.flags |= ND_DB_FINGERPRINT_ONLY;
    return nd_db_open(db, p, &o);
}

/* Reopen p without injection, verify it, and check the oracle; a pending
 * document found becomes acknowledged (it is durable), else forgotten. */
static void check_store(const char *step, uint64_t n, const char *p)
{
    nd_db *db = NULL;
    nd_results *res = NULL;
    int rc = open_db(&db, p, 0);
    if (rc != ND_OK) {
        fail(step, n, "reopen", rc);
        return;
    }
    if ((rc = nd_db_verify(db)) != ND_OK) fail(step, n, "verify after reopen", rc);
    if (nd_results_new(&res) != ND_OK) abort();
    for (size_t i = 0; i < n_oracle; i++) {
        entry *e = &oracle[i];
        rc = nd_db_get(res, db, e->key, strlen(e->key));
        int found = rc == ND_OK && nd_results_get(res, 0)->fp == e->fp;
        if (rc != ND_OK && rc != ND_ENOTFOUND) fail(step, n, "get", rc);
        else if (rc == ND_OK && !found) fail(step, n, "a document with a wrong fingerprint", rc);
        else if (e->present == 1 && !found) fail(step, n, e->key, ND_ENOTFOUND);
        else if (e->present == 0 && found) fail(step, n, "a deleted document is back", rc);
        else if (e->present == -1) e->present = found;
    }
    nd_results_free(res);
    if ((rc = nd_db_close(db)) != ND_OK) fail(step, n, "close after check", rc);
}

/* One run of a step against the open store db (*db: the step may close
 * it). Returns the call's code; documents it acknowledges are settled. */
typedef int (*step_fn)(nd_db **db);

static int step_add(nd_db **db)
{
    nd_doc d = new_doc(1000);
    return add_one(*db, &d);
}

static int step_add_if_new(nd_db **db)
{
    nd_results *res = NULL;
    int rc = nd_results_new(&res);
    if (rc != ND_OK) return rc;
    nd_doc d = new_doc(1000);
    rc = resemblance ? nd_db_add_doc_if_new(res, *db, &d, 3)
                     : nd_db_add_if_new(res, *db, d.key, d.key_len, d.fp, d.score, d.time, 3);
    if (rc == ND_OK && nd_results_count(res) != 0) rc = ND_EINTERNAL; /* fps are far apart */
    nd_results_free(res);
    return rc;
}

static int step_add_many(nd_db **db)
{
    nd_doc docs[3];
    for (int i = 0; i < 3; i++) docs[i] = new_doc(1000);
    return nd_db_add_many(*db, docs, 3);
}

static int step_import(nd_db **db)
{
    nd_doc docs[5];
    for (int i = 0; i < 5; i++) docs[i] = new_doc(1000);
    return nd_db_import(*db, docs, 5);
}

static int step_loader(nd_db **db)
{
    nd_loader *l = NULL;
    nd_doc docs[10];
    for (int i = 0; i < 10; i++) docs[i] = new_doc(1000);
    int rc = nd_loader_new(&l, *db, 4);
    for (int i = 0; rc == ND_OK && i < 10; i += 5) rc = nd_loader_add(l, docs + i, 5);
    if (rc == ND_OK) rc = nd_loader_finish(NULL, l);
    nd_loader_free(l);
    return rc;
}

static int step_batch(nd_db **db)
{
    nd_doc docs[4];
    nd_batch_item items[4];
    nd_results *keys = NULL;
    for (int i = 0; i < 4; i++) docs[i] = new_doc(1000);
    docs[3].fp = docs[2].fp ^ 1; /* a duplicate of the batch's third */
    oracle[n_oracle - 1].fp = docs[3].fp;
    docs[3].sketch = docs[2].sketch; /* (resemblance 1; such a store keeps it too) */
    if (!resemblance) oracle[n_oracle - 1].present = 0;
    int rc = nd_results_new(&keys);
    if (rc == ND_OK) rc = nd_db_batch(items, keys, *db, docs, 4, 3, ND_BATCH_ADD);
    if (rc == ND_OK && (items[3].dup != 1 || items[0].dup || items[1].dup || items[2].dup))
        rc = ND_EINTERNAL;
    nd_results_free(keys);
    return rc;
}

static int query_fp(nd_db *db, uint64_t fp)
{
    nd_results *res = NULL;
    int rc = nd_results_new(&res);
    if (rc == ND_OK) rc = nd_db_query(res, db, fp ^ 3, 3, NULL);
    if (rc == ND_OK && (nd_results_count(res) != 1 || nd_results_get(res, 0)->fp != fp))
        rc = ND_EINTERNAL;
    if (rc == ND_OK && resemblance) { /* by its sketch, far from its fingerprint */
        nd_doc q = {"q", 1, ~fp, 0, 0, &oracle[0].sketch};
        rc = nd_db_query_doc(res, db, &q, 3, NULL);
        if (rc == ND_OK && (nd_results_count(res) != 1 || nd_results_get(res, 0)->fp != fp))
            rc = ND_EINTERNAL;
    }
    nd_results_free(res);
    return rc;
}

static int step_query(nd_db **db) { return query_fp(*db, oracle[0].fp); }

/* Before delete and expire, without injection: one document to remove
 * (for expire, time 1: before = 2 expires it, and it alone). */
static entry *victim;

static int prepare_victim(nd_db *db, int64_t time)
{
    nd_doc d = new_doc(time);
    victim = &oracle[n_oracle - 1];
    int rc = add_one(db, &d);
    victim->present = rc == ND_OK;
    return rc;
}

static int prepare_delete(nd_db *db) { return prepare_victim(db, 1000); }

/* One expirable document at a time: a victim a failed run left is
 * reused, so the step's allocations do not grow with N. */
static int prepare_expire(nd_db *db)
{
    for (size_t i = 0; i < n_oracle; i++)
        if (oracle[i].time < 2 && oracle[i].present) return ND_OK;
    return prepare_victim(db, 1);
}

/* A removal's outcome: gone when acknowledged, else either. */
static void settle_victim(int rc) { victim->present = rc == ND_OK ? 0 : -1; }

static int step_delete(nd_db **db)
{
    int rc = nd_db_delete(*db, victim->key, strlen(victim->key));
    settle_victim(rc);
    return rc;
}

/* Every document of time 1 goes (victims of earlier failed runs too). */
static int step_expire(nd_db **db)
{
    uint64_t gone = 0;
    int rc = nd_db_expire(&gone, *db, 2);
    if (rc == ND_OK && gone == 0) rc = ND_EINTERNAL;
    for (size_t i = 0; i < n_oracle; i++)
        if (oracle[i].time < 2 && oracle[i].present) oracle[i].present = rc == ND_OK ? 0 : -1;
    return rc;
}

static int step_compact(nd_db **db) { return nd_db_compact(*db); }

static int step_verify(nd_db **db) { return nd_db_verify(*db); }

static int step_backup(nd_db **db) { return nd_db_backup(*db, backup_path); }

static int step_close(nd_db **db)
{
    int rc = nd_db_close(*db);
    *db = NULL;
    return rc;
}

static int step_open(nd_db **db)
{
    nd_db_close(*db);
    *db = NULL;
    return open_db(db, path, 0);
}

static int count_pair(const nd_dedupe_pair *pair, void *payload)
{
    (void)pair;
    ++*(int *)payload;
    return 0;
}

/* Not a store step: a corpus dedupe of four texts (two near-duplicates). */
static int step_dedupe(nd_db **db)
{
    (void)db;
    static const char *texts[] = {
        "the quick brown fox jumps over the lazy dog near the river bank today",
        "the quick brown fox jumps over the lazy dog near the river bank today!",
        "an entirely different sentence about databases and their fingerprints",
        "fault injection finds the error paths that ordinary tests never reach",
    };
    nd_dedupe_options o;
    nd_dedupe_options_init(&o, ND_DEDUPE_OPTIONS_VERSION);
    o.memory = ND_DEDUPE_MIN_MEMORY;
    o.scratch_dir = dir;
    nd_dedupe *d = NULL;
    int pairs = 0;
    int rc = nd_dedupe_new(&d, &o);
    for (int i = 0; rc == ND_OK && i < 4; i++)
        rc = nd_dedupe_add_text(d, texts[i], 4, texts[i], strlen(texts[i]), 0);
    if (rc == ND_OK) rc = nd_dedupe_pairs(d, count_pair, &pairs);
    if (rc == ND_OK && pairs != 1) rc = ND_EINTERNAL;
    nd_dedupe_free(d);
    return rc;
}

typedef struct step {
    const char *name;
    step_fn run;
    int needs_db; /* opened before the run, closed after it */
    int (*prepare)(nd_db *db); /* run before, without injection (or NULL) */
} step;

static const step steps[] = {
    { "add", step_add, 1, NULL },         { "add_if_new", step_add_if_new, 1, NULL },
    { "add_many", step_add_many, 1, NULL }, { "batch_add", step_batch, 1, NULL },
    { "import", step_import, 1, NULL },   { "loader", step_loader, 1, NULL },
    { "query", step_query, 1, NULL },     { "delete", step_delete, 1, prepare_delete },
    { "expire", step_expire, 1, prepare_expire },   { "compact", step_compact, 1, NULL },
    { "verify", step_verify, 1, NULL },   { "backup", step_backup, 1, NULL },
    { "open", step_open, 1, NULL },       { "close", step_close, 1, NULL },
    { "dedupe", step_dedupe, 0, NULL },
};

/* Run one step at N = 1, 1 + stride, ... until a run fails none. */
static void run_step(const step *s, uint64_t stride)
{
    uint64_t n = 1, total = 0, tried = 0;
    for (;; n += stride) {
        nd_db *db = NULL;
        int rc;
        if (s->needs_db && (rc = open_db(&db, path, 0)) != ND_OK) {
            fail(s->name, n, "open before the step", rc);
            return;
        }
        if (s->prepare && (rc = s->prepare(db)) != ND_OK) {
            fail(s->name, n, "prepare", rc);
            nd_db_close(db);
            return;
        }
        size_t from = n_oracle;
        alloc_hook_arm(n);
        rc = s->run(&db);
        uint64_t count = alloc_hook_count();
        int injected = alloc_hook_disarm();
        tried++;
        if (rc != ND_OK && !injected) fail(s->name, n, "an error without an injected failure", rc);
        else if (rc != ND_OK && rc != ND_ENOMEM) fail(s->name, n, "an error other than ND_ENOMEM", rc);
        settle(from, rc == ND_OK);
        int cr = nd_db_close(db);
        if (cr != ND_OK) fail(s->name, n, "close after the step", cr);
        if (s->run == step_backup) {
            struct stat st;
            if (rc == ND_OK) check_store(s->name, n, backup_path);
            else if (stat(backup_path, &st) == 0) fail(s->name, n, "a failed backup left its directory", rc);
            char cmd[200];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", backup_path);
            if (system(cmd) != 0) abort();
        }
        if (s->needs_db) check_store(s->name, n, path);
        if (!injected) {
            total = count;
            break;
        }
        if (n_oracle + STEP_DOCS >= MAX_DOCS) {
            fail(s->name, n, "too many runs for the oracle", 0);
            break;
        }
    }
    printf("%-11s %5llu allocations, %5llu runs\n", s->name, (unsigned long long)total,
           (unsigned long long)tried);
    fflush(stdout);
}

/* The store's creation, N by N, each in a new directory. */
static void run_create(uint64_t stride)
{
    uint64_t n = 1, tried = 0;
    for (int injected = 1; injected; n += stride, tried++) {
        char p[160];
        snprintf(p, sizeof p, "%s/create-%llu", dir, (unsigned long long)n);
        nd_db *db = NULL;
        alloc_hook_arm(n);
        int rc = open_db(&db, p, ND_DB_CREATE);
        injected = alloc_hook_disarm();
        if (rc != ND_OK && !injected) fail("create", n, "an error without an injected failure", rc);
        else if (rc != ND_OK && rc != ND_ENOMEM) fail("create", n, "an error other than ND_ENOMEM", rc);
        nd_db_close(db);
        /* whatever a failed creation left, creating again works */
        if ((rc = open_db(&db, p, ND_DB_CREATE)) != ND_OK) fail("create", n, "create again", rc);
        else if ((rc = nd_db_verify(db)) != ND_OK) fail("create", n, "verify", rc);
        nd_db_close(db);
    }
    printf("%-11s %5s             %5llu runs\n", "create", "", (unsigned long long)tried);
}

int main(int argc, char **argv)
{
    uint64_t stride = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    resemblance = argc > 2 && strcmp(argv[2], "resemblance") == 0;
    if (stride == 0) stride = 1;
    tmpdir_make(dir);
    snprintf(path, sizeof path, "%s/db", dir);
    snprintf(backup_path, sizeof backup_path, "%s/backup", dir);
    run_create(stride);
    nd_db *db = NULL;
    if (open_db(&db, path, ND_DB_CREATE) != ND_OK) abort();
    /* a few documents, folded into the tables, for the steps to meet */
    for (int i = 0; i < 8; i++) {
        nd_doc d = new_doc(1000);
        if (add_one(db, &d) != ND_OK) abort();
    }
    settle(0, 1);
    if (nd_db_compact(db) != ND_OK || nd_db_close(db) != ND_OK) abort();
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) run_step(&steps[i], stride);
    if (failures == 0) tmpdir_remove(dir);
    else fprintf(stderr, "kept %s\n", dir);
    printf("%u failures\n", failures);
    return failures ? 1 : 0;
}
