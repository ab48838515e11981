/*
 * nd_task.h — one function run on a thread of its own beside the caller
 * (library internal), with its failure handed back to the caller's
 * thread the way nd_error.h describes.
 *
 * The bulk loader overlaps two independent halves of its work this way
 * when its database may use more than one thread (nd_db_options.threads,
 * by default one per online CPU). Otherwise, or when a thread cannot be
 * created, nd_task_start runs the function in the caller instead: the
 * result is the same, only later.
 */
#ifndef ND_TASK_H
#define ND_TASK_H

#include <pthread.h>

#include "nd_error.h"

typedef int (*nd_task_fn)(void *arg);

typedef struct nd_task {
    nd_task_fn fn;
    void *arg;
    pthread_t th;
    int started; /* on a thread of its own (else run already) */
    int rc;
    char msg[ND_ERRMSG_CAP]; /* its message when rc < 0 */
} nd_task;

/* Run fn(arg): on a new thread when parallel is nonzero and one can be
 * made, else here and now. Either way nd_task_wait must follow. */
void nd_task_start(nd_task *t, nd_task_fn fn, void *arg, int parallel);

/* Wait for t to finish, the caller's own work having returned rc: an
 * error rc is returned as is (its message stays); else t's result, and
 * when that is an error the same message is set on the calling thread. */
int nd_task_wait(nd_task *t, int rc);

#endif /* ND_TASK_H */
