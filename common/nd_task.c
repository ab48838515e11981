/*
 * nd_task.c — a function on a thread of its own (see nd_task.h).
 */
#include "nd_task.h"

#include <stdio.h>

/* Run t's function and keep its message, on whichever thread runs it. */
static void task_run(nd_task *t)
{
    t->rc = t->fn(t->arg);
    if (t->rc < 0) snprintf(t->msg, sizeof t->msg, "%s", nd_errmsg());
}

static void *task_main(void *arg)
{
    task_run(arg);
    return NULL;
}

void nd_task_start(nd_task *t, nd_task_fn fn, void *arg, int parallel)
{
    t->fn = fn;
    t->arg = arg;
    t->rc = ND_OK;
    t->msg[0] = '\0';
    t->started = parallel && pthread_create(&t->th, NULL, task_main, t) == 0;
    if (!t->started) task_run(t);
}

int nd_task_wait(nd_task *t, int rc)
{
    if (t->started) pthread_join(t->th, NULL);
    t->started = 0;
    if (rc < 0) return rc;
    if (t->rc < 0) return nd_err_set(t->rc, "%s", t->msg);
    return t->rc;
}
