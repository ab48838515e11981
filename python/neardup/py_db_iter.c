/*
 * py_db_iter.c — `for doc in db`: every stored document in key order, from
 * one consistent snapshot (nd_db_foreach_doc), in bounded memory.
 *
 * nd_db_foreach_doc calls back for each document and cannot pause, so it runs
 * on a reader thread of the iterator's own, which never touches Python:
 * it copies documents into batches of ITER_BATCH and hands each over
 * through one slot (`ready`), waiting while the slot is full. __next__
 * yields from its own batch (`cur`) and, when that is spent, swaps it with
 * the slot, waiting without the GIL. So at most three batches exist, an
 * abandoned iterator costs nothing but its thread until it is collected,
 * and no Python code ever runs inside the library's callback.
 *
 * Stopping: dropping the iterator, or close() of its database, sets
 * `stop`; the reader returns nonzero from the callback at its next
 * hand-over, which ends nd_db_foreach_doc, and is joined. An iterator counts
 * as a user of the database (pynd_db_enter) until its reader is joined, so
 * close() waits for that. After close(), __next__ raises
 * InvalidArgumentError ("database is closed").
 *
 * States (changed only with the GIL held): RUNNING (reader alive, listed
 * in the database's iterators), JOINING (unlisted; one thread joins the
 * reader without the GIL), FINISHED.
 */
#include "py_neardup.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ITER_BATCH 512

typedef struct docbatch {
    size_t n;
    size_t key_used, key_cap;
    char *keys;
    size_t key_off[ITER_BATCH + 1]; /* key i: keys[key_off[i] .. key_off[i+1]) */
    uint64_t fp[ITER_BATCH];
    double score[ITER_BATCH];
    int64_t time[ITER_BATCH];
} docbatch;

enum { RUNNING, JOINING, FINISHED };

struct pynd_iter {
    PyObject_HEAD
    pynd_db *owner; /* strong reference */
    pynd_iter *prev, *next; /* owner's list of RUNNING iterators */
    pthread_t reader;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    docbatch *fill;  /* the reader's */
    docbatch *ready; /* the slot (mu): n == 0 when empty */
    docbatch *cur;   /* __next__'s */
    size_t pos;      /* next document of cur */
    int stop;        /* (mu) stop the reader */
    int done;        /* (mu) the reader finished */
    int rc;          /* (mu, once done) nd_db_foreach_doc's result */
    char errmsg[512];/* (mu, once done) its message */
    int state;       /* RUNNING, JOINING, FINISHED (GIL) */
    int closed;      /* stopped by close() of the database (GIL) */
    int busy;        /* a __next__ waits without the GIL (GIL) */
};

/* ---- the reader thread (no Python here) ----------------------------------- */

/* Hand the full batch over; 1 when told to stop. */
static int hand_over(pynd_iter *it)
{
    int stop;
    pthread_mutex_lock(&it->mu);
    while (it->ready->n && !it->stop) pthread_cond_wait(&it->cv, &it->mu);
    stop = it->stop;
    if (!stop) {
        docbatch *t = it->ready;
        it->ready = it->fill;
        it->fill = t; /* the empty batch __next__ gave back */
        pthread_cond_broadcast(&it->cv);
    }
    pthread_mutex_unlock(&it->mu);
    return stop;
}

static int reader_cb(const nd_doc *d, void *payload)
{
    pynd_iter *it = payload;
    docbatch *b = it->fill;
    if (b->key_used + d->key_len > b->key_cap) {
        size_t cap = b->key_cap * 2 + d->key_len;
        char *keys = realloc(b->keys, cap);
        if (!keys) return ND_ENOMEM;
        b->keys = keys;
        b->key_cap = cap;
    }
    memcpy(b->keys + b->key_used, d->key, d->key_len);
    b->key_used += d->key_len;
    b->fp[b->n] = d->fp;
    b->score[b->n] = d->score;
    b->time[b->n] = d->time;
    b->key_off[++b->n] = b->key_used;
    return b->n == ITER_BATCH ? hand_over(it) : 0;
}

static void *reader_main(void *payload)
{
    pynd_iter *it = payload;
    int rc = nd_db_foreach_doc(it->owner->db, reader_cb, it);
    if (rc == 0 && it->fill->n) rc = hand_over(it);
    pthread_mutex_lock(&it->mu);
    it->done = 1;
    it->rc = rc;
    if (rc == ND_ENOMEM && !*nd_errmsg())
        snprintf(it->errmsg, sizeof it->errmsg, "iterating: no memory for a batch of keys");
    else if (rc < 0)
        snprintf(it->errmsg, sizeof it->errmsg, "%s", nd_errmsg());
    pthread_cond_broadcast(&it->cv);
    pthread_mutex_unlock(&it->mu);
    return NULL;
}

/* ---- the iterator ---------------------------------------------------------- */

static void batch_reset(docbatch *b)
{
    b->n = 0;
    b->key_used = 0;
    b->key_off[0] = 0;
}

/* Stop (when asked) and join the reader, unlisted first; then leave the
 * database. The GIL is released while joining. */
static void join_reader(pynd_iter *it, int stop)
{
    it->state = JOINING;
    if (it->prev) it->prev->next = it->next;
    else it->owner->iters = it->next;
    if (it->next) it->next->prev = it->prev;
    it->prev = it->next = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (stop) {
        pthread_mutex_lock(&it->mu);
        it->stop = 1;
        pthread_cond_broadcast(&it->cv);
        pthread_mutex_unlock(&it->mu);
    }
    pthread_join(it->reader, NULL);
    Py_END_ALLOW_THREADS
    it->state = FINISHED;
    pynd_db_leave(it->owner);
}

void pynd_db_stop_iters(pynd_db *self)
{
    while (self->iters) {
        pynd_iter *it = self->iters;
        Py_INCREF(it); /* join_reader releases the GIL: keep it alive */
        it->closed = 1;
        join_reader(it, 1);
        Py_DECREF(it);
    }
}

static PyObject *iter_next(pynd_iter *it)
{
    if (it->closed) return pynd_raise_msg(ND_EINVAL, "the database is closed");
    if (it->pos == it->cur->n) {
        if (it->state != RUNNING) return NULL; /* exhausted */
        if (it->busy) {
            PyErr_SetString(PyExc_ValueError, "neardup iterator already running in another thread");
            return NULL;
        }
        int got;
        it->busy = 1;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&it->mu);
        while (!it->ready->n && !it->done) pthread_cond_wait(&it->cv, &it->mu);
        got = it->ready->n != 0;
        if (got) {
            docbatch *t = it->cur;
            batch_reset(t);
            it->cur = it->ready;
            it->ready = t;
            it->pos = 0;
            pthread_cond_broadcast(&it->cv);
        }
        pthread_mutex_unlock(&it->mu);
        Py_END_ALLOW_THREADS
        it->busy = 0;
        if (it->closed) return pynd_raise_msg(ND_EINVAL, "the database is closed");
        if (!got) {
            if (it->state == RUNNING) join_reader(it, 0);
            if (it->rc < 0) return pynd_raise_msg(it->rc, it->errmsg);
            return NULL;
        }
    }
    docbatch *b = it->cur;
    size_t i = it->pos++;
    return pynd_document_new(b->keys + b->key_off[i], b->key_off[i + 1] - b->key_off[i],
                             b->fp[i], b->score[i], b->time[i], it->owner->bytes_keys);
}

static void iter_dealloc(pynd_iter *it)
{
    if (it->state == RUNNING) join_reader(it, 1);
    pthread_mutex_destroy(&it->mu);
    pthread_cond_destroy(&it->cv);
    docbatch *b[3] = {it->fill, it->ready, it->cur};
    for (int i = 0; i < 3; i++) {
        if (b[i]) free(b[i]->keys);
        free(b[i]);
    }
    Py_XDECREF(it->owner);
    PyObject_Free(it);
}

PyObject *pynd_db_iter(PyObject *obj)
{
    pynd_db *self = (pynd_db *)obj;
    if (pynd_db_enter(self) < 0) return NULL;
    pynd_iter *it = PyObject_New(pynd_iter, &pynd_IterType);
    if (!it) {
        pynd_db_leave(self);
        return NULL;
    }
    char *fields = (char *)it + offsetof(pynd_iter, owner);
    memset(fields, 0, sizeof *it - offsetof(pynd_iter, owner));
    pthread_mutex_init(&it->mu, NULL);
    pthread_cond_init(&it->cv, NULL);
    it->owner = (pynd_db *)Py_NewRef(obj);
    it->state = FINISHED; /* until the reader runs */
    it->fill = calloc(1, sizeof(docbatch));
    it->ready = calloc(1, sizeof(docbatch));
    it->cur = calloc(1, sizeof(docbatch));
    if (!it->fill || !it->ready || !it->cur) {
        pynd_db_leave(self);
        Py_DECREF(it);
        return PyErr_NoMemory();
    }
    int err = pthread_create(&it->reader, NULL, reader_main, it);
    if (err) {
        pynd_db_leave(self);
        Py_DECREF(it);
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    it->state = RUNNING;
    it->next = self->iters;
    if (self->iters) self->iters->prev = it;
    self->iters = it;
    return (PyObject *)it;
}

PyTypeObject pynd_IterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "neardup._DocumentIterator",
    .tp_basicsize = sizeof(pynd_iter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Iterator over a Database's documents (Document tuples, in key order).",
    .tp_dealloc = (destructor)iter_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)iter_next,
};
