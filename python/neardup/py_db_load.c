/*
 * py_db_load.c — Database.load() (the bulk path: one nd_loader, as
 * `neardup import` loads) and Database.sign_many() (texts signed in
 * groups with the GIL released once a group).
 *
 * load() streams: it reads a group of records (GIL held), hands it to the
 * loader with the GIL released (texts signed first), then checks for
 * signals, so memory stays that of a group plus the loader's chunks (see
 * nd_loader in neardup.h) whatever the input. nd_loader_finish writes the
 * store at the end, in one call that runs to its end (as the CLI's
 * commit does). Nothing is committed before that, in any store: an
 * interrupt or a failure imports nothing new (keys already stored may
 * have been replaced).
 *
 * One load() runs on a Database at a time. close() (from another thread,
 * or from the generator feeding the load) frees the loader between groups
 * (pynd_db_drop_loader): the load then raises InvalidArgumentError.
 */
#include "py_neardup.h"

#include <string.h>

/* The total a load's progress names: the input's length when known, else
 * the records read so far. */
#define SEEN (total >= 0 ? total : (Py_ssize_t)read)

void pynd_db_drop_loader(pynd_db *self)
{
    nd_loader *l = self->loader;
    if (!l) return;
    self->loader = NULL; /* before the GIL goes: the load sees it gone */
    Py_BEGIN_ALLOW_THREADS
    nd_loader_free(l);
    Py_END_ALLOW_THREADS
}

/* Hand b's documents to the loader l (texts signed first, GIL released).
 * @return 0, or -1 with an exception. */
static int load_group(pynd_db *self, nd_loader *l, pynd_docs *b, double *secs)
{
    size_t bad = (size_t)-1;
    int rc;
    if (pynd_db_enter(self) < 0) return -1;
    if (self->loader != l) { /* closed and reopened meanwhile cannot happen; dropped can */
        pynd_db_leave(self);
        pynd_raise_msg(ND_EINVAL, "the database was closed during load()");
        return -1;
    }
    double t0 = pynd_clock();
    Py_BEGIN_ALLOW_THREADS
    rc = pynd_docs_prepare(b, self->db, 0, b->n, &bad);
    if (rc >= 0) rc = nd_loader_add(l, b->d, b->n);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    *secs = pynd_clock() - t0;
    if (rc < 0) {
        pynd_docs_raise(rc, bad);
        return -1;
    }
    return 0;
}

PyObject *pynd_db_load(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    static const char *const names[] = {"records", "html", NULL};
    PyObject *a[2], *it = NULL, *item;
    pynd_docs b;
    pynd_pace pace;
    nd_loader *l = NULL;
    uint64_t added = 0;
    size_t read = 0, committed = 0;
    int rc, html = 0;
    char detail[160] = "";
    if (pynd_parse("load", args, nargs, kwnames, names, 1, 1, a) < 0 ||
        (a[1] && (html = PyObject_IsTrue(a[1])) < 0))
        return NULL;
    Py_ssize_t total = pynd_known_len(a[0]);
    if (!(it = PyObject_GetIter(a[0]))) return NULL;
    if (pynd_docs_init(&b, html) < 0) {
        Py_DECREF(it);
        return NULL;
    }
    if (self->loader) {
        pynd_raise_msg(ND_EINVAL, "another load() of this Database is in progress");
        goto fail;
    }
    if (pynd_db_enter(self) < 0) goto fail;
    Py_BEGIN_ALLOW_THREADS
    rc = nd_loader_new(&l, self->db, 0);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    if (rc < 0) {
        pynd_raise(rc);
        goto fail;
    }
    self->loader = l;
    snprintf(detail, sizeof detail, "nothing new imported (a load commits at its end)");
    pynd_pace_init(&pace, 1024, 1u << 17);
    for (;;) {
        while (b.n < pace.group && (item = PyIter_Next(it))) {
            rc = pynd_docs_add(&b, item, (Py_ssize_t)read++);
            Py_DECREF(item);
            if (rc < 0 || ((read & 4095) == 0 &&
                           pynd_check_signals(committed, SEEN, "committed", detail) < 0))
                goto fail;
        }
        if (PyErr_Occurred()) goto fail;
        if (b.n == 0) break;
        double secs;
        if (load_group(self, l, &b, &secs) < 0) goto fail;
        pynd_pace_done(&pace, b.n, secs);
        pynd_docs_reset(&b);
        if (pynd_check_signals(committed, SEEN, "committed", detail) < 0) goto fail;
    }
    /* the commit: one call, which runs to its end */
    if (pynd_db_enter(self) < 0) goto fail;
    if (self->loader != l) {
        pynd_db_leave(self);
        pynd_raise_msg(ND_EINVAL, "the database was closed during load()");
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = nd_loader_finish(&added, l);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    if (rc < 0) {
        pynd_raise(rc);
        goto fail;
    }
    committed = read;
    pynd_db_drop_loader(self);
    Py_DECREF(it);
    pynd_docs_free(&b);
    if (pynd_check_signals(read, (Py_ssize_t)read, "committed",
                           "the signal came while the store was written, which finished") < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(added);
fail:
    pynd_note(committed, SEEN, "committed", detail[0] ? detail : NULL);
    if (l && self->loader == l) pynd_db_drop_loader(self); /* removes its files */
    Py_DECREF(it);
    pynd_docs_free(&b);
    return NULL;
}

/* ---- sign_many ------------------------------------------------------------ */

PyObject *pynd_db_sign_many(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"texts", "html", NULL};
    PyObject *a[2], *it, *item, *hold = NULL, *out = NULL;
    pynd_text *t = NULL;
    nd_signature *sig = NULL;
    pynd_pace pace;
    size_t done = 0, n = 0, bad = 0;
    int html = 0, rc = ND_OK;
    if (pynd_parse("sign_many", args, nargs, kwnames, names, 1, 2, a) < 0 ||
        (a[1] && (html = PyObject_IsTrue(a[1])) < 0))
        return NULL;
    Py_ssize_t total = pynd_known_len(a[0]);
    if (!(it = PyObject_GetIter(a[0]))) return NULL;
    pynd_pace_init(&pace, PYND_SIGN_MIN, 16384);
    t = PyMem_Calloc(pace.max, sizeof *t);
    sig = PyMem_Malloc(pace.max * sizeof *sig);
    if (!t || !sig) {
        PyErr_NoMemory();
        goto fail;
    }
    if (!(hold = PyList_New(0)) || !(out = PyList_New(0))) goto fail;
    for (;;) {
        for (n = 0; n < pace.group && (item = PyIter_Next(it));) {
            rc = PyList_Append(hold, item) < 0 ? -1 : pynd_text_get(item, &t[n]);
            Py_DECREF(item);
            if (rc < 0) {
                pynd_record_error((Py_ssize_t)(done + n));
                goto fail;
            }
            n++;
        }
        if (PyErr_Occurred()) goto fail;
        if (n == 0) break;
        if (pynd_db_enter(self) < 0) goto fail;
        double t0 = pynd_clock();
        Py_BEGIN_ALLOW_THREADS
        for (size_t i = 0; i < n && rc >= 0; i++) {
            rc = nd_db_sign(&sig[i], self->db, t[i].ptr, t[i].len, html ? ND_FP_HTML : 0);
            bad = i;
        }
        Py_END_ALLOW_THREADS
        pynd_db_leave(self);
        pynd_pace_done(&pace, n, pynd_clock() - t0);
        if (rc < 0) {
            pynd_docs_raise(rc, done + bad);
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            PyObject *sk = pynd_sketch_bytes(&sig[i].sketch);
            PyObject *pair = sk ? Py_BuildValue("(KN)", (unsigned long long)sig[i].fp, sk) : NULL;
            if (!pair || PyList_Append(out, pair) < 0) {
                Py_XDECREF(pair);
                goto fail;
            }
            Py_DECREF(pair);
        }
        for (size_t i = 0; i < n; i++) pynd_text_release(&t[i]);
        done += n;
        n = 0;
        PyList_SetSlice(hold, 0, PyList_GET_SIZE(hold), NULL);
        if (pynd_check_signals(done, total, "signed", NULL) < 0) goto fail;
    }
    Py_DECREF(it);
    Py_DECREF(hold);
    PyMem_Free(t);
    PyMem_Free(sig);
    return out;
fail:
    pynd_note(done, total, "signed", NULL);
    for (size_t i = 0; t && i < n; i++) pynd_text_release(&t[i]);
    Py_DECREF(it);
    Py_XDECREF(hold);
    Py_XDECREF(out);
    PyMem_Free(t);
    PyMem_Free(sig);
    return NULL;
}
