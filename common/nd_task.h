/*
 * nd_task.h — one function run on a thread of its own beside the caller
 * (library internal), with its failure handed back to the caller's
 * thread the way nd_error.h describes.
 *
 * The bulk loader overlaps two independent halves of its work this way on
 * a machine of several cores. ND_LOAD_THREADS=1 in the environment, or a
 * machine with one online CPU, or a thread that cannot be created, runs the
 * function in the caller at nd_task_start instead: the result is the same,
 * only later.
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

/* May tasks run on threads of their own here (several online CPUs and
 * ND_LOAD_THREADS is not 1)? */
int nd_task_parallel(void);

/* Run fn(arg): on a new thread when nd_task_parallel() allows and one can
 * be made, else here and now. Either way nd_task_wait must follow. */
void nd_task_start(nd_task *t, nd_task_fn fn, void *arg);

/* Wait for t to finish, the caller's own work having returned rc: an
 * error rc is returned as is (its message stays); else t's result, and
 * when that is an error the same message is set on the calling thread. */
int nd_task_wait(nd_task *t, int rc);

#endif /* ND_TASK_H */
