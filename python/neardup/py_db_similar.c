/*
 * py_db_similar.c — Database methods that take texts: sign, add_text,
 * add_if_new_text, query_text, the min_resemblance attribute, and the
 * module's resemblance() of two signed sketches.
 *
 * A text is signed under the store's options (nd_db_sign: fingerprint and
 * sketch from one tokenisation, with the GIL released), then given to the
 * document calls with its sketch (nd_doc.sketch): in a store created with
 * min_resemblance they decide by resemblance (include/neardup.h,
 * "Resemblance stores"); in a fingerprint-only store they are the
 * fingerprint calls on the text's fingerprint.
 */
#include "py_neardup.h"

#include <string.h>

/* Sign text (a str or bytes-like) for self's store; the GIL is released
 * for the signing. @return 0, or -1 with an exception. */
static int sign(pynd_db *self, PyObject *text, PyObject *html_arg, nd_signature *out)
{
    int html = html_arg ? PyObject_IsTrue(html_arg) : 0;
    if (html < 0) return -1;
    pynd_text t;
    if (pynd_text_get(text, &t) < 0) return -1;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_sign(out, self->db, t.ptr, t.len, html ? ND_FP_HTML : 0);
    Py_END_ALLOW_THREADS
    pynd_text_release(&t);
    if (rc < 0) {
        pynd_raise(rc);
        return -1;
    }
    return 0;
}

PyObject *pynd_db_add_text(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"key", "text", "score", "time", "html", NULL};
    PyObject *a[5], *keep = NULL;
    nd_doc d = {0};
    nd_signature sig;
    int rc;
    if (pynd_parse("add_text", args, nargs, kwnames, names, 2, 4, a) < 0 ||
        pynd_score(a[2], &d.score) < 0 || pynd_time(a[3], &d.time) < 0)
        return NULL;
    if (pynd_db_enter(self) < 0) return NULL;
    if (sign(self, a[1], a[4], &sig) < 0 ||
        pynd_key(a[0], (const char **)&d.key, &d.key_len, &keep) < 0) {
        pynd_db_leave(self);
        return NULL;
    }
    d.fp = sig.fp;
    d.sketch = &sig.sketch;
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_add_many(self->db, &d, 1);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    Py_XDECREF(keep);
    if (rc < 0) return pynd_raise(rc);
    Py_RETURN_NONE;
}

PyObject *pynd_db_add_if_new_text(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = {"key", "text", "k", "score", "time", "html", NULL};
    PyObject *a[6], *keep = NULL, *ret = NULL;
    nd_doc d = {0};
    nd_signature sig;
    unsigned k;
    int rc;
    if (pynd_parse("add_if_new_text", args, nargs, kwnames, names, 2, 5, a) < 0 ||
        pynd_k(a[2], self->k, &k) < 0 || pynd_score(a[3], &d.score) < 0 ||
        pynd_time(a[4], &d.time) < 0)
        return NULL;
    nd_results *res = pynd_db_enter_results(self);
    if (!res) return NULL;
    if (sign(self, a[1], a[5], &sig) < 0 ||
        pynd_key(a[0], (const char **)&d.key, &d.key_len, &keep) < 0)
        goto done;
    d.fp = sig.fp;
    d.sketch = &sig.sketch;
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_add_doc_if_new(res, self->db, &d, k);
    Py_END_ALLOW_THREADS
    if (rc < 0) pynd_raise(rc);
    else if (nd_results_count(res) == 0) ret = Py_NewRef(Py_None);
    else ret = pynd_match_new(nd_results_get(res, 0), self->bytes_keys);
done:
    pynd_db_leave(self);
    pynd_db_results_done(self, res);
    Py_XDECREF(keep);
    return ret;
}

PyObject *pynd_db_query_text(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"text", "k", "limit", "html", NULL};
    PyObject *a[4], *list = NULL;
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    nd_doc d = {0};
    nd_signature sig;
    uint64_t limit = 0;
    unsigned k;
    int rc;
    if (pynd_parse("query_text", args, nargs, kwnames, names, 1, 3, a) < 0 ||
        pynd_k(a[1], self->k, &k) < 0 || pynd_u64(a[2], "limit", &limit) < 0)
        return NULL;
    qo.limit = (size_t)limit;
    nd_results *res = pynd_db_enter_results(self);
    if (!res) return NULL;
    if (sign(self, a[0], a[3], &sig) < 0) goto done;
    d.fp = sig.fp;
    d.sketch = &sig.sketch;
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_query_doc(res, self->db, &d, k, &qo);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        pynd_raise(rc);
        goto done;
    }
    size_t n = nd_results_count(res);
    list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *m = pynd_match_new(nd_results_get(res, i), self->bytes_keys);
        if (!m) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, m);
    }
done:
    pynd_db_leave(self);
    pynd_db_results_done(self, res);
    return list;
}

/* A sketch as bytes: its ND_SKETCH_BYTES bins, then its ND_SKETCH_BANDS
 * band keys as big-endian uint32 (176 bytes; the layout of the store's
 * sketch family without its version byte), and back. */
#define SKETCH_WIRE (ND_SKETCH_BYTES + 4 * ND_SKETCH_BANDS)

PyObject *pynd_sketch_bytes(const nd_sketch *sk)
{
    unsigned char b[SKETCH_WIRE];
    memcpy(b, sk->bin, ND_SKETCH_BYTES);
    for (unsigned i = 0; i < ND_SKETCH_BANDS; i++) {
        unsigned char *p = b + ND_SKETCH_BYTES + 4 * i;
        p[0] = (unsigned char)(sk->band[i] >> 24);
        p[1] = (unsigned char)(sk->band[i] >> 16);
        p[2] = (unsigned char)(sk->band[i] >> 8);
        p[3] = (unsigned char)sk->band[i];
    }
    return PyBytes_FromStringAndSize((const char *)b, SKETCH_WIRE);
}

int pynd_sketch_from(PyObject *o, nd_sketch *out, const char *name)
{
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_SIMPLE) < 0) return -1;
    if (v.len != SKETCH_WIRE) {
        PyErr_Format(PyExc_ValueError, "%s: a sketch is %d bytes (Database.sign), got %zd", name,
                     SKETCH_WIRE, v.len);
        PyBuffer_Release(&v);
        return -1;
    }
    const unsigned char *b = v.buf;
    memcpy(out->bin, b, ND_SKETCH_BYTES);
    for (unsigned i = 0; i < ND_SKETCH_BANDS; i++) {
        const unsigned char *p = b + ND_SKETCH_BYTES + 4 * i;
        out->band[i] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    }
    PyBuffer_Release(&v);
    return 0;
}

PyObject *pynd_db_sign(pynd_db *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"text", "html", NULL};
    PyObject *a[2];
    nd_signature sig;
    if (pynd_parse("sign", args, nargs, kwnames, names, 1, 2, a) < 0) return NULL;
    if (pynd_db_enter(self) < 0) return NULL;
    int rc = sign(self, a[0], a[1], &sig);
    pynd_db_leave(self);
    if (rc < 0) return NULL;
    PyObject *sk = pynd_sketch_bytes(&sig.sketch);
    if (!sk) return NULL;
    return Py_BuildValue("(KN)", (unsigned long long)sig.fp, sk);
}

PyObject *pynd_mod_resemblance(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    nd_sketch x, y;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "resemblance() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (pynd_sketch_from(args[0], &x, "resemblance") < 0 ||
        pynd_sketch_from(args[1], &y, "resemblance") < 0)
        return NULL;
    return PyFloat_FromDouble(nd_sketch_resemblance(&x, &y));
}

PyObject *pynd_db_get_min_resemblance(pynd_db *self, void *closure)
{
    (void)closure;
    return PyFloat_FromDouble(self->db ? nd_db_min_resemblance(self->db) : 0.0);
}
