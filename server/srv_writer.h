/*
 * srv_writer.h — the server's single writer (group commit).
 *
 * Connection threads hand their writes to one writer thread as jobs and
 * wait. The writer takes every job queued meanwhile and commits them
 * together: a run of check-and-add jobs as one nd_db_batch with
 * ND_BATCH_ADD (the check of every document against the store and
 * against the earlier documents of the group, and one atomic write of
 * the new ones: one fsync when the store is opened with ND_DB_SYNC), a
 * run of add jobs as one nd_db_add_many. So two clients sending the same
 * near-duplicate at once get exactly one "new": in one group the later
 * document matches the earlier, in two groups the second group's check
 * sees the first's write. A job is answered after its group's write has
 * returned: its acknowledgement is as durable as the store's writes.
 * On a store opened without ND_DB_SYNC, a group that holds a job asking
 * for sync ends with one nd_db_sync before any of its jobs is answered:
 * that job's write, and every earlier one, survive a crash of the
 * machine, for one fsync a group however many jobs ask.
 * Callers: srv_api.c (submit), srv_http.c (new, free).
 */
#ifndef ND_SRV_WRITER_H
#define ND_SRV_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include <neardup.h>

#include "srv_metrics.h"

typedef enum srv_job_kind { SRV_JOB_CHECK_ADD, SRV_JOB_ADD } srv_job_kind;

/** One document's answer of a check-and-add job. */
typedef struct srv_answer {
    int dup;             /**< 1: a near-duplicate was found */
    unsigned dist;       /**< with dup: its distance */
    uint64_t match_fp;   /**< with dup: its fingerprint */
    long match_index;    /**< with dup: the earlier document of the same job
                              matched; -1: a stored document (or one of
                              another request committed just before) */
    double resemblance;  /**< with dup in a resemblance store; else -1 */
    char *match_key;     /**< with dup: malloc'd, NUL-terminated */
    size_t match_key_len;
} srv_answer;

typedef struct srv_job {
    srv_job_kind kind;
    const nd_doc *docs;  /**< n documents; read until the job is answered */
    size_t n;
    unsigned k;          /**< check-and-add distance */
    int sync;            /**< make the group durable before answering
                              (nd_db_sync; set on a store opened without
                              ND_DB_SYNC, where writes are not fsynced) */
    srv_answer *answers; /**< n, the caller's (check-and-add), filled */
    int rc;              /**< ND_OK or the library's error */
    char errmsg[256];    /**< nd_errmsg() of a failure */
    /* the writer's */
    int done;
    struct srv_job *next;
} srv_job;

typedef struct srv_writer srv_writer;

/** Start the writer thread. max_group: most documents committed together
 *  (a longer job is one group of its own); max_pending: most documents
 *  queued at once (srv_writer_submit refuses more).
 *  @return ND_OK or ND_ENOMEM. */
int srv_writer_new(srv_writer **out, nd_db *db, srv_metrics *m, size_t max_group,
                   size_t max_pending);

/** Queue job and wait for its group's commit.
 *  @return 0: answered (job->rc says how); 1: the queue is full (answer
 *          429); 2: the writer is stopping (answer 503). */
int srv_writer_submit(srv_writer *w, srv_job *job);

/** Commit every job queued, stop the thread and free. Accepts NULL. */
void srv_writer_free(srv_writer *w);

/** Free the match keys of n answers. */
void srv_answers_dispose(srv_answer *a, size_t n);

#endif /* ND_SRV_WRITER_H */
