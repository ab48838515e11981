/*
 * py_db_docs.c — Database methods over many documents at once: add_many()
 * (nd_db_add_many, the group commit) and batch() (nd_db_batch: check, and
 * with add=True store, documents against the store and each other), and
 * the documents array both (and load(), py_db_load.c) fill from records.
 *
 * The records (py_records.c) are converted into an nd_doc array while
 * the GIL is held; a `hold` list keeps alive every object the array
 * points into while the GIL is released for the library. A text record is
 * signed (nd_db_sign: fingerprint and sketch under the store's options)
 * with the GIL released, group by group, just before its group is written.
 *
 * add_many and batch(add=True) read every record first (a bad record
 * raises before anything is written), then write in groups: a call of at
 * most PYND_ATOMIC_DOCS documents is one group, so one atomic write; a
 * longer one is written in atomic groups sized for about 50 ms of work
 * each, checking for signals between groups. An interrupt (or a failure)
 * between groups raises with what was committed (pynd_note). batch()
 * without add is one library call (a merge over the store that cannot be
 * split without changing its answers); its texts are signed in groups.
 */
#include "py_neardup.h"

#include <string.h>
#include <time.h>

enum { DOC_FP, DOC_SKETCH, DOC_TEXT };

/* ---- the documents array ------------------------------------------------ */

int pynd_docs_init(pynd_docs *b, int html)
{
    memset(b, 0, sizeof *b);
    b->html = html;
    b->now = (int64_t)time(NULL);
    b->hold = PyList_New(0);
    return b->hold ? 0 : -1;
}

void pynd_docs_reset(pynd_docs *b)
{
    b->n = 0;
    if (b->hold) PyList_SetSlice(b->hold, 0, PyList_GET_SIZE(b->hold), NULL);
}

void pynd_docs_free(pynd_docs *b)
{
    PyMem_Free(b->d);
    PyMem_Free(b->kind);
    PyMem_Free(b->sk);
    PyMem_Free(b->txt);
    Py_CLEAR(b->hold);
    memset(b, 0, sizeof *b);
}

/* Grow *p (of cap items of size sz) to cap2 items. */
static int regrow(void **p, size_t sz, size_t cap2)
{
    void *q = PyMem_Realloc(*p, cap2 * sz);
    if (!q) return -1;
    *p = q;
    return 0;
}

static int grow(pynd_docs *b)
{
    size_t cap = b->cap ? 2 * b->cap : 1024;
    if (regrow((void **)&b->d, sizeof *b->d, cap) < 0 ||
        regrow((void **)&b->kind, sizeof *b->kind, cap) < 0 ||
        (b->sk && regrow((void **)&b->sk, sizeof *b->sk, cap) < 0) ||
        (b->txt && regrow((void **)&b->txt, sizeof *b->txt, cap) < 0)) {
        PyErr_NoMemory();
        return -1;
    }
    b->cap = cap;
    return 0;
}

/* The sketch (and, with text, the text) arrays, made on first need. */
static int need(pynd_docs *b, int text)
{
    if (!b->sk && !(b->sk = PyMem_Malloc(b->cap * sizeof *b->sk))) goto nomem;
    if (text && !b->txt && !(b->txt = PyMem_Malloc(b->cap * sizeof *b->txt))) goto nomem;
    return 0;
nomem:
    PyErr_NoMemory();
    return -1;
}

int pynd_docs_add(pynd_docs *b, PyObject *item, Py_ssize_t index)
{
    pynd_rec r;
    char msg[120];
    if (b->n == b->cap && grow(b) < 0) return -1;
    if (pynd_record(item, index, PYND_REC_DB, &r, b->hold) < 0) return -1;
    size_t i = b->n;
    nd_doc *d = &b->d[i];
    if (r.key_len == 0 || r.key_len > ND_MAX_KEY_LEN) {
        snprintf(msg, sizeof msg, "records[%zd]: a key is 1 to %d bytes, not %zu", index,
                 ND_MAX_KEY_LEN, r.key_len);
        pynd_raise_msg(r.key_len ? ND_ELIMIT : ND_EINVAL, msg);
        return -1;
    }
    *d = (nd_doc){.key = r.key, .key_len = r.key_len, .fp = r.fp, .score = r.score,
                  .time = r.has_time ? r.time : b->now};
    if (r.text) {
        if (r.sketch) {
            PyErr_Format(PyExc_TypeError,
                         "records[%zd]: a sketch goes with a fingerprint, not with a text "
                         "(which is signed)",
                         index);
            return -1;
        }
        if (r.text_len > ND_MAX_DOC_BYTES) {
            snprintf(msg, sizeof msg, "records[%zd]: a text of %zu bytes (at most %d)", index,
                     r.text_len, ND_MAX_DOC_BYTES);
            pynd_raise_msg(ND_ELIMIT, msg);
            return -1;
        }
        if (need(b, 1) < 0) return -1;
        b->txt[i].ptr = r.text;
        b->txt[i].len = r.text_len;
        b->txt[i].html = (unsigned char)(r.html >= 0 ? r.html : b->html);
        b->kind[i] = DOC_TEXT;
    } else if (r.sketch) {
        snprintf(msg, sizeof msg, "records[%zd]: sketch", index);
        if (need(b, 0) < 0 || pynd_sketch_from(r.sketch, &b->sk[i], msg) < 0) return -1;
        b->kind[i] = DOC_SKETCH;
    } else {
        b->kind[i] = DOC_FP;
    }
    b->n++;
    return 0;
}

int pynd_docs_prepare(pynd_docs *b, nd_db *db, size_t from, size_t to, size_t *bad)
{
    for (size_t i = from; i < to; i++) {
        nd_doc *d = &b->d[i];
        d->sketch = b->kind[i] == DOC_FP ? NULL : &b->sk[i];
        if (b->kind[i] != DOC_TEXT) continue;
        nd_signature sig;
        int rc = nd_db_sign(&sig, db, b->txt[i].ptr, b->txt[i].len,
                            b->txt[i].html ? ND_FP_HTML : 0);
        if (rc < 0) {
            *bad = i;
            return rc;
        }
        d->fp = sig.fp;
        b->sk[i] = sig.sketch;
    }
    return ND_OK;
}

PyObject *pynd_docs_raise(int rc, size_t bad)
{
    char msg[600];
    if (bad == (size_t)-1) return pynd_raise(rc);
    snprintf(msg, sizeof msg, "records[%zu]: %s", bad, nd_errmsg());
    return pynd_raise_msg(rc, msg);
}

Py_ssize_t pynd_known_len(PyObject *obj)
{
    return PyList_Check(obj) || PyTuple_Check(obj) ? PySequence_Fast_GET_SIZE(obj) : -1;
}

/* Every record of iterable into b, checking for signals as it goes.
 * @return 0, or -1 with an exception (noting that nothing was `what`). */
static int read_all(pynd_docs *b, PyObject *iterable, const char *what, const char *detail)
{
    Py_ssize_t total = pynd_known_len(iterable), i = 0;
    PyObject *it = PyObject_GetIter(iterable), *item;
    if (!it) return -1;
    int rc = 0;
    while (rc == 0 && (item = PyIter_Next(it))) {
        rc = pynd_docs_add(b, item, i++);
        Py_DECREF(item);
        if (rc == 0 && (i & 4095) == 0) rc = pynd_check_signals(0, total, what, detail);
    }
    Py_DECREF(it);
    if (rc == 0 && PyErr_Occurred()) rc = -1;
    if (rc < 0) pynd_note(0, total, what, detail);
    return rc;
}

/* ---- add_many ------------------------------------------------------------ */

/* Parse html=, read the records. @return 0 or -1. */
static int start(pynd_docs *b, PyObject *records, PyObject *html_obj, const char *what,
                 const char *detail)
{
    int html = html_obj ? PyObject_IsTrue(html_obj) : 0;
    if (html < 0 || pynd_docs_init(b, html) < 0) return -1;
    if (read_all(b, records, what, detail) < 0) {
        pynd_docs_free(b);
        return -1;
    }
    return 0;
}

PyObject *pynd_db_add_many(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"documents", "html", NULL};
    PyObject *a[2];
    pynd_docs b;
    pynd_pace pace;
    size_t done = 0, bad = (size_t)-1;
    int rc = ND_OK;
    if (pynd_parse("add_many", args, nargs, kwnames, names, 1, 1, a) < 0 ||
        start(&b, a[0], a[1], "committed", NULL) < 0)
        return NULL;
    pynd_pace_init(&pace, PYND_ATOMIC_DOCS, PYND_GROUP_MAX);
    while (done < b.n) {
        size_t g = b.n - done < pace.group ? b.n - done : pace.group;
        if (pynd_db_enter(self) < 0) goto fail;
        double t0 = pynd_clock();
        Py_BEGIN_ALLOW_THREADS
        rc = pynd_docs_prepare(&b, self->db, done, done + g, &bad);
        if (rc >= 0) rc = nd_db_add_many(self->db, b.d + done, g);
        Py_END_ALLOW_THREADS
        pynd_db_leave(self);
        if (rc < 0) {
            pynd_docs_raise(rc, bad);
            goto fail;
        }
        pynd_pace_done(&pace, g, pynd_clock() - t0);
        done += g;
        if (pynd_check_signals(done, (Py_ssize_t)b.n, "committed", NULL) < 0) goto fail;
    }
    pynd_docs_free(&b);
    Py_RETURN_NONE;
fail:
    pynd_note(done, (Py_ssize_t)b.n, "committed", NULL);
    pynd_docs_free(&b);
    return NULL;
}

/* ---- batch ------------------------------------------------------------------ */

/* The answer of a batch document: None, or a BatchMatch; index is the
 * matched document's position in the call (None: a stored one). */
static PyObject *batch_answer(const nd_batch_item *it, PyObject *index, double res_v,
                              int as_bytes)
{
    PyObject *seq = PyStructSequence_New(pynd_BatchMatchType);
    PyObject *key = pynd_key_object(it->match_key, it->match_key_len, as_bytes);
    PyObject *fp = PyLong_FromUnsignedLongLong(it->match_fp);
    PyObject *dist = PyLong_FromUnsignedLong(it->dist);
    PyObject *res = res_v >= 0 ? PyFloat_FromDouble(res_v) : Py_NewRef(Py_None);
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

/* The answers of documents [from, from + g) into list. A stored match is
 * looked up in `stored` (key bytes -> position of a document of this call
 * that earlier groups stored): when its fingerprint is the match's, the
 * answer names that position, as one batch of the whole call would. */
static int answers(PyObject *list, const pynd_docs *b, const nd_batch_item *items, size_t from,
                   size_t g, PyObject *stored, int as_bytes)
{
    for (size_t i = 0; i < g; i++) {
        const nd_batch_item *it = &items[i];
        PyObject *ans, *index = NULL;
        if (!it->dup) {
            PyList_SET_ITEM(list, (Py_ssize_t)(from + i), Py_NewRef(Py_None));
            continue;
        }
        if (it->match_index != ND_BATCH_STORED) {
            index = PyLong_FromSize_t(from + it->match_index);
        } else if (stored) {
            PyObject *k = PyBytes_FromStringAndSize(it->match_key, (Py_ssize_t)it->match_key_len);
            PyObject *j = k ? PyDict_GetItemWithError(stored, k) : NULL;
            Py_XDECREF(k);
            if (!j && PyErr_Occurred()) return -1;
            size_t jj = j ? PyLong_AsSize_t(j) : 0;
            index = j && b->d[jj].fp == it->match_fp ? Py_NewRef(j) : Py_NewRef(Py_None);
        } else {
            index = Py_NewRef(Py_None);
        }
        if (!(ans = batch_answer(it, index, it->resemblance, as_bytes))) return -1;
        PyList_SET_ITEM(list, (Py_ssize_t)(from + i), ans);
    }
    return 0;
}

/* Record in `stored` the documents of [from, from + g) that the group
 * stored: the new ones, or every one in a store verifying by resemblance
 * (which indexes every document). */
static int remember(PyObject *stored, const pynd_docs *b, const nd_batch_item *items,
                    size_t from, size_t g, int all)
{
    for (size_t i = 0; i < g; i++) {
        if (items[i].dup && !all) continue;
        const nd_doc *d = &b->d[from + i];
        PyObject *k = PyBytes_FromStringAndSize(d->key, (Py_ssize_t)d->key_len);
        PyObject *j = PyLong_FromSize_t(from + i);
        int rc = k && j ? PyDict_SetItem(stored, k, j) : -1;
        Py_XDECREF(k);
        Py_XDECREF(j);
        if (rc < 0) return -1;
    }
    return 0;
}

PyObject *pynd_db_batch(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    static const char *const names[] = {"documents", "k", "add", "html", NULL};
    PyObject *a[4], *list = NULL, *stored = NULL;
    pynd_docs b;
    pynd_pace pace;
    nd_batch_item *items = NULL;
    nd_results *keys = NULL;
    size_t done = 0, bad = (size_t)-1;
    unsigned k;
    int add = 0, rc = ND_OK;
    if (pynd_parse("batch", args, nargs, kwnames, names, 1, 3, a) < 0 ||
        pynd_k(a[1], self->k, &k) < 0 || (a[2] && (add = PyObject_IsTrue(a[2])) < 0))
        return NULL;
    const char *what = "committed", *detail = add ? NULL : "a batch without add stores nothing";
    if (start(&b, a[0], a[3], what, detail) < 0) return NULL;
    /* Without add: one call of every document, its texts signed first in
     * groups. With add: groups, each checked and stored atomically. */
    pynd_pace_init(&pace, add ? PYND_ATOMIC_DOCS : PYND_SIGN_MIN, PYND_GROUP_MAX);
    items = PyMem_Malloc((b.n ? b.n : 1) * sizeof *items);
    list = items ? PyList_New((Py_ssize_t)b.n) : NULL;
    if (!items) PyErr_NoMemory();
    if (!list || !(keys = pynd_db_results(self))) goto fail;
    if (!add) { /* sign the texts (and point at the sketches) */
        for (size_t s = 0; s < b.n;) {
            size_t g = b.n - s < pace.group ? b.n - s : pace.group;
            if (pynd_db_enter(self) < 0) goto fail;
            double t0 = pynd_clock();
            Py_BEGIN_ALLOW_THREADS
            rc = pynd_docs_prepare(&b, self->db, s, s + g, &bad);
            Py_END_ALLOW_THREADS
            pynd_db_leave(self);
            if (rc < 0) {
                pynd_docs_raise(rc, bad);
                goto fail;
            }
            pynd_pace_done(&pace, g, pynd_clock() - t0);
            s += g;
            if (pynd_check_signals(0, (Py_ssize_t)b.n, what, detail) < 0) goto fail;
        }
    }
    int all = add && nd_db_min_resemblance(self->db) > 0;
    while (done < b.n) {
        size_t g = !add || b.n - done < pace.group ? b.n - done : pace.group;
        if (pynd_db_enter(self) < 0) goto fail;
        double t0 = pynd_clock();
        Py_BEGIN_ALLOW_THREADS
        rc = add ? pynd_docs_prepare(&b, self->db, done, done + g, &bad) : ND_OK;
        if (rc >= 0)
            rc = nd_db_batch(items, keys, self->db, b.d + done, g, k, add ? ND_BATCH_ADD : 0);
        Py_END_ALLOW_THREADS
        pynd_db_leave(self);
        if (rc < 0) {
            pynd_docs_raise(rc, bad);
            goto fail;
        }
        pynd_pace_done(&pace, g, pynd_clock() - t0);
        if (answers(list, &b, items, done, g, stored, self->bytes_keys) < 0) goto fail;
        if (done + g < b.n && !stored && !(stored = PyDict_New())) goto fail;
        if (done + g < b.n && remember(stored, &b, items, done, g, all) < 0) goto fail;
        nd_results_clear(keys);
        done += g;
        if (add && pynd_check_signals(done, (Py_ssize_t)b.n, what, NULL) < 0) goto fail;
    }
    if (!add && pynd_check_signals(0, (Py_ssize_t)b.n, what, detail) < 0) goto fail;
    pynd_db_results_done(self, keys);
    PyMem_Free(items);
    Py_XDECREF(stored);
    pynd_docs_free(&b);
    return list;
fail:
    pynd_note(add ? done : 0, (Py_ssize_t)b.n, what, detail);
    if (keys) pynd_db_results_done(self, keys);
    PyMem_Free(items);
    Py_XDECREF(stored);
    /* the answers not yet set are NULL, which list_dealloc skips */
    Py_XDECREF(list);
    pynd_docs_free(&b);
    return NULL;
}
