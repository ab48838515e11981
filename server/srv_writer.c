/*
 * srv_writer.c — one writer thread committing the jobs of many
 * connections in shared groups (see srv_writer.h for the contract).
 *
 * The queue is a FIFO under one mutex. The writer takes the whole queue
 * at once, then walks it in order, cutting it into runs of jobs of one
 * kind of at most max_group documents; each run is one library call, so
 * the order of the queue is the order of the commits (a check-and-add
 * queued after an add of the same text sees it). While the writer commits
 * a run, new jobs queue up: the group grows with the load by itself, with
 * no timer (a lone client waits for no one).
 *
 * A group ends with one nd_db_sync when a job of it asks for sync
 * (srv_job.sync: a store opened without ND_DB_SYNC), before any job of
 * it is answered.
 *
 * A run fails as a whole when its call fails; an ND_EINVAL or ND_ELIMIT
 * is then one bad document (srv_api.c checks keys and sketches before
 * queueing, so this is rare), and the run is retried job by job so that
 * only the bad job fails.
 */
#include "srv_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct srv_writer {
    nd_db *db;
    srv_metrics *m;
    size_t max_group, max_pending, pending;
    pthread_mutex_t mu;
    pthread_cond_t work, answered;
    srv_job *head, *tail;
    int stopping;
    pthread_t thread;
    nd_results *keys;
    nd_doc *docs;           /* the run's documents, concatenated */
    nd_batch_item *items;
    size_t cap;
};

void srv_answers_dispose(srv_answer *a, size_t n)
{
    for (size_t i = 0; a && i < n; i++) {
        free(a[i].match_key);
        a[i].match_key = NULL;
    }
}

static int reserve(srv_writer *w, size_t n)
{
    if (n <= w->cap) return 0;
    size_t cap = n > 2 * w->cap ? n : 2 * w->cap;
    nd_doc *d = realloc(w->docs, cap * sizeof *d);
    if (!d) return -1;
    w->docs = d;
    nd_batch_item *it = realloc(w->items, cap * sizeof *it);
    if (!it) return -1;
    w->items = it;
    w->cap = cap;
    return 0;
}

static void fail_run(srv_job *first, srv_job *end, int rc)
{
    for (srv_job *j = first; j != end; j = j->next) {
        j->rc = rc;
        snprintf(j->errmsg, sizeof j->errmsg, "%s", nd_errmsg());
    }
}

/* The answers of job j, whose documents are items[off .. off + j->n). A
 * match with a document of another job of the run is a stored one for
 * this job's client: it was committed by the same write, before. */
static int fill_answers(srv_job *j, const nd_batch_item *items, size_t off)
{
    for (size_t i = 0; i < j->n; i++) {
        const nd_batch_item *it = &items[off + i];
        srv_answer *a = &j->answers[i];
        memset(a, 0, sizeof *a);
        a->resemblance = -1;
        a->match_index = -1;
        if (!it->dup) continue;
        a->dup = 1;
        a->dist = it->dist;
        a->match_fp = it->match_fp;
        a->resemblance = it->resemblance;
        if (it->match_index != ND_BATCH_STORED && it->match_index >= off &&
            it->match_index < off + j->n)
            a->match_index = (long)(it->match_index - off);
        a->match_key = malloc(it->match_key_len + 1);
        if (!a->match_key) return -1;
        memcpy(a->match_key, it->match_key, it->match_key_len);
        a->match_key[it->match_key_len] = '\0';
        a->match_key_len = it->match_key_len;
    }
    return 0;
}

/* One library call for the jobs first .. end (exclusive), all of kind. */
static int commit_run(srv_writer *w, srv_job *first, srv_job *end, srv_job_kind kind)
{
    size_t n = 0;
    for (srv_job *j = first; j != end; j = j->next) n += j->n;
    if (reserve(w, n)) return ND_ENOMEM;
    size_t off = 0;
    for (srv_job *j = first; j != end; j = j->next) {
        memcpy(w->docs + off, j->docs, j->n * sizeof *j->docs);
        off += j->n;
    }
    int rc;
    size_t added = n;
    if (kind == SRV_JOB_ADD) {
        rc = nd_db_add_many(w->db, w->docs, n);
    } else {
        unsigned k = first->k; /* a run shares its k (see process) */
        rc = nd_db_batch(w->items, w->keys, w->db, w->docs, n, k, ND_BATCH_ADD);
        /* a resemblance store stores every document, near-duplicates too */
        if (rc == ND_OK && nd_db_min_resemblance(w->db) == 0) {
            added = 0;
            for (size_t i = 0; i < n; i++) added += !w->items[i].dup;
        }
    }
    if (rc != ND_OK) return rc;
    srv_metrics_group(w->m, n, added);
    off = 0;
    for (srv_job *j = first; j != end; j = j->next) {
        j->rc = ND_OK;
        if (kind == SRV_JOB_CHECK_ADD && fill_answers(j, w->items, off)) {
            j->rc = ND_ENOMEM;
            snprintf(j->errmsg, sizeof j->errmsg, "out of memory for the answer");
        }
        off += j->n;
    }
    return ND_OK;
}

/* Commit the taken queue list in runs, in order. */
static void process(srv_writer *w, srv_job *list)
{
    srv_job *j = list;
    while (j) {
        srv_job *first = j, *end;
        size_t n = j->n;
        for (end = j->next; end && end->kind == first->kind && end->k == first->k &&
                            n + end->n <= w->max_group;
             end = end->next)
            n += end->n;
        int rc = commit_run(w, first, end, first->kind);
        if (rc != ND_OK && first->next != end && (rc == ND_EINVAL || rc == ND_ELIMIT)) {
            for (srv_job *one = first; one != end; one = one->next) {
                srv_job *after = one->next;
                int orc = commit_run(w, one, after, one->kind);
                if (orc != ND_OK) fail_run(one, after, orc);
            }
        } else if (rc != ND_OK) {
            fail_run(first, end, rc);
        }
        j = end;
    }
    /* One fsync for the whole group, after its last commit: it covers the
     * jobs that asked and, incidentally, the others. A failure fails the
     * jobs that asked (their writes stand, not their durability). */
    int want = 0;
    for (j = list; j; j = j->next) want |= j->sync && j->rc == ND_OK;
    if (want) {
        int rc = nd_db_sync(w->db);
        if (rc != ND_OK)
            for (j = list; j; j = j->next)
                if (j->sync && j->rc == ND_OK) {
                    j->rc = rc;
                    snprintf(j->errmsg, sizeof j->errmsg, "%s", nd_errmsg());
                }
    }
}

static void *writer_main(void *arg)
{
    srv_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stopping) pthread_cond_wait(&w->work, &w->mu);
        if (!w->head) break; /* stopping, and nothing left */
        srv_job *list = w->head;
        w->head = w->tail = NULL;
        pthread_mutex_unlock(&w->mu);
        process(w, list);
        pthread_mutex_lock(&w->mu);
        for (srv_job *j = list, *next; j; j = next) {
            next = j->next; /* the waiter may free j once done is set */
            w->pending -= j->n;
            j->done = 1;
        }
        pthread_cond_broadcast(&w->answered);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int srv_writer_new(srv_writer **out, nd_db *db, srv_metrics *m, size_t max_group,
                   size_t max_pending)
{
    *out = NULL;
    srv_writer *w = calloc(1, sizeof *w);
    if (!w) return ND_ENOMEM;
    w->db = db;
    w->m = m;
    w->max_group = max_group ? max_group : 4096;
    w->max_pending = max_pending;
    if (nd_results_new(&w->keys) < 0) {
        free(w);
        return ND_ENOMEM;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->answered, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        nd_results_free(w->keys);
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->work);
        pthread_cond_destroy(&w->answered);
        free(w);
        return ND_ENOMEM;
    }
    *out = w;
    return ND_OK;
}

int srv_writer_submit(srv_writer *w, srv_job *job)
{
    job->done = 0;
    job->next = NULL;
    job->rc = ND_OK;
    job->errmsg[0] = '\0';
    pthread_mutex_lock(&w->mu);
    if (w->stopping) {
        pthread_mutex_unlock(&w->mu);
        return 2;
    }
    /* A job larger than the whole queue is taken when the queue is empty. */
    if (w->pending && w->pending + job->n > w->max_pending) {
        pthread_mutex_unlock(&w->mu);
        return 1;
    }
    w->pending += job->n;
    if (w->tail) w->tail->next = job;
    else w->head = job;
    w->tail = job;
    pthread_cond_signal(&w->work);
    while (!job->done) pthread_cond_wait(&w->answered, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

void srv_writer_free(srv_writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->stopping = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    nd_results_free(w->keys);
    free(w->docs);
    free(w->items);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->answered);
    free(w);
}
