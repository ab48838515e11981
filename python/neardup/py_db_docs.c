/*
 * py_db_docs.c — Database methods over many documents at once:
 * batch() (nd_db_batch: check, and with add=True store, a group of documents
 * against the store and each other) and add_many() (nd_db_add_many: one
 * atomic write, one fsync with sync=True).
 *
 * The documents come as an iterable of tuples (key, fingerprint) or
 * (key, fingerprint, score) or (key, fingerprint, score, time), or
 * (key, fingerprint, score, time, sketch) with Database.sign's sketch
 * (which a store created with min_resemblance requires). They are
 * converted into an nd_doc array while the GIL is held; the array points
 * into Python objects that a list keeps alive while the GIL is released
 * for the library call.
 */
#include "py_neardup.h"

#include <time.h>

/* The documents of iterable as n nd_doc (PyMem_Free *out), their
 * sketches in *sketches (PyMem_Free; NULL when none has one); *keep is a
 * new list owning every object the array points into. A missing time is
 * now. @return 0, or -1 with an exception set. */
static int docs_from(PyObject *iterable, nd_doc **out, nd_sketch **sketches, size_t *n,
                     PyObject **keep)
{
    *out = NULL;
    *sketches = NULL;
    *n = 0;
    *keep = PyList_New(0);
    PyObject *seq = PySequence_Fast(
        iterable, "documents: expected an iterable of (key, fingerprint[, score[, time[, "
                  "sketch]]])");
    if (!*keep || !seq || PyList_Append(*keep, seq) < 0) goto fail;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    nd_doc *docs = PyMem_Malloc((size_t)(count ? count : 1) * sizeof *docs);
    if (!docs) {
        PyErr_NoMemory();
        goto fail;
    }
    *out = docs;
    int64_t now = (int64_t)time(NULL);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i), *key_keep = NULL;
        PyObject *fields = PySequence_Fast(item, "a document is a tuple (key, fingerprint[, "
                                                 "score[, time[, sketch]]])");
        if (!fields) goto fail;
        if (fields != item && PyList_Append(*keep, fields) < 0) {
            Py_DECREF(fields);
            goto fail;
        }
        Py_DECREF(fields); /* held by item (a tuple or list), or by *keep */
        Py_ssize_t m = PySequence_Fast_GET_SIZE(fields);
        if (m < 2 || m > 5) {
            PyErr_Format(PyExc_TypeError,
                         "document %zd: expected (key, fingerprint[, score[, time[, sketch]]]), "
                         "got %zd items",
                         i, m);
            goto fail;
        }
        PyObject **f = PySequence_Fast_ITEMS(fields);
        nd_doc *d = &docs[i];
        d->sketch = NULL;
        if (m > 4 && f[4] != Py_None) {
            if (!*sketches && !(*sketches = PyMem_Malloc((size_t)count * sizeof **sketches))) {
                PyErr_NoMemory();
                goto fail;
            }
            char what[64];
            snprintf(what, sizeof what, "document %zd: sketch", i);
            if (pynd_sketch_from(f[4], &(*sketches)[i], what) < 0) goto fail;
            d->sketch = &(*sketches)[i];
        }
        if (pynd_key(f[0], (const char **)&d->key, &d->key_len, &key_keep) < 0) goto fail;
        if (key_keep) {
            int r = PyList_Append(*keep, key_keep);
            Py_DECREF(key_keep);
            if (r < 0) goto fail;
        }
        d->time = now;
        if (pynd_fp(f[1], &d->fp) < 0 || pynd_score(m > 2 ? f[2] : NULL, &d->score) < 0 ||
            (m > 3 && f[3] != Py_None && pynd_time(f[3], &d->time) < 0))
            goto fail;
    }
    Py_DECREF(seq);
    *n = (size_t)count;
    return 0;
fail:
    Py_XDECREF(seq);
    Py_CLEAR(*keep);
    PyMem_Free(*out);
    PyMem_Free(*sketches);
    *out = NULL;
    *sketches = NULL;
    return -1;
}

/* The answer of batch document i: None, or a BatchMatch. */
static PyObject *batch_answer(const nd_batch_item *it, int as_bytes)
{
    if (!it->dup) return Py_NewRef(Py_None);
    PyObject *seq = PyStructSequence_New(pynd_BatchMatchType);
    PyObject *key = pynd_key_object(it->match_key, it->match_key_len, as_bytes);
    PyObject *fp = PyLong_FromUnsignedLongLong(it->match_fp);
    PyObject *dist = PyLong_FromUnsignedLong(it->dist);
    PyObject *index = it->match_index == ND_BATCH_STORED
                          ? Py_NewRef(Py_None)
                          : PyLong_FromSize_t(it->match_index);
    PyObject *res = it->resemblance >= 0 ? PyFloat_FromDouble(it->resemblance)
                                         : Py_NewRef(Py_None);
    if (!seq || !key || !fp || !dist || !index || !res) {
        Py_XDECREF(seq);
        Py_XDECREF(key);
        Py_XDECREF(fp);
        Py_XDECREF(dist);
        Py_XDECREF(index);
        Py_XDECREF(res);
        return NULL;
    }
    PyStructSequence_SET_ITEM(seq, 0, key);
    PyStructSequence_SET_ITEM(seq, 1, fp);
    PyStructSequence_SET_ITEM(seq, 2, dist);
    PyStructSequence_SET_ITEM(seq, 3, index);
    PyStructSequence_SET_ITEM(seq, 4, res); /* beyond the tuple: an attribute */
    return seq;
}

PyObject *pynd_db_batch(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    static const char *const names[] = {"documents", "k", "add", NULL};
    PyObject *a[3], *keep = NULL, *list = NULL;
    nd_doc *docs = NULL;
    nd_sketch *sketches = NULL;
    nd_batch_item *items = NULL;
    size_t n = 0;
    unsigned k;
    int add = 0, rc;
    if (pynd_parse("batch", args, nargs, kwnames, names, 1, 3, a) < 0 ||
        pynd_k(a[1], self->k, &k) < 0 || (a[2] && (add = PyObject_IsTrue(a[2])) < 0) ||
        docs_from(a[0], &docs, &sketches, &n, &keep) < 0)
        return NULL;
    items = PyMem_Malloc((n ? n : 1) * sizeof *items);
    nd_results *keys = items ? pynd_db_enter_results(self) : NULL;
    if (!items && !PyErr_Occurred()) PyErr_NoMemory();
    if (keys) {
        Py_BEGIN_ALLOW_THREADS
        rc = n ? nd_db_batch(items, keys, self->db, docs, n, k, add ? ND_BATCH_ADD : 0) : ND_OK;
        Py_END_ALLOW_THREADS
        pynd_db_leave(self);
        if (rc < 0) pynd_raise(rc);
        else list = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; list && i < n; i++) {
            PyObject *answer = batch_answer(&items[i], self->bytes_keys);
            if (!answer) Py_CLEAR(list);
            else PyList_SET_ITEM(list, (Py_ssize_t)i, answer);
        }
        pynd_db_results_done(self, keys);
    }
    PyMem_Free(items);
    PyMem_Free(docs);
    PyMem_Free(sketches);
    Py_XDECREF(keep);
    return list;
}

PyObject *pynd_db_add_many(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"documents", NULL};
    PyObject *a[1], *keep = NULL;
    nd_doc *docs = NULL;
    nd_sketch *sketches = NULL;
    size_t n = 0;
    int rc;
    if (pynd_parse("add_many", args, nargs, kwnames, names, 1, 1, a) < 0 ||
        docs_from(a[0], &docs, &sketches, &n, &keep) < 0)
        return NULL;
    if (pynd_db_enter(self) < 0) {
        PyMem_Free(docs);
        PyMem_Free(sketches);
        Py_DECREF(keep);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = n ? nd_db_add_many(self->db, docs, n) : ND_OK;
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    PyMem_Free(docs);
    PyMem_Free(sketches);
    Py_DECREF(keep);
    if (rc < 0) return pynd_raise(rc);
    Py_RETURN_NONE;
}
