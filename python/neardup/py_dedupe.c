/*
 * py_dedupe.c — neardup.Dedupe, one nd_dedupe handle (the library's corpus
 * dedupe: feed documents, then read pairs, clusters or keep/drop keys),
 * and neardup.dedupe(), the one-call form built on it.
 *
 * Options map to nd_dedupe_options as `neardup dedupe` maps its flags
 * (tool/dedupe_common.c): min_resemblance=0 means by distance alone
 * (ND_DEDUPE_SIMHASH_ONLY); scratch_dir None is tempfile.gettempdir(),
 * which honours TMPDIR as the CLI does. Texts are signed with
 * nd_dedupe_sign (ND_FP_HTML for HTML) and added by signature, as the CLI
 * adds them, so both give the same results for the same input.
 *
 * Threads: the library handle is used by one thread at a time. `busy`
 * (changed only with the GIL held) marks a call in progress, possibly with
 * the GIL released; another thread's call waits for it, a call re-entered
 * from the same thread (from a generator feeding add_many, say) raises.
 * close() waits likewise, so a handle is never freed under a running call.
 * add_many reads its records (py_records.c) a group at a time with the GIL
 * held, then signs and adds the group with it released, and checks for
 * signals between groups; the handle is busy during the library part
 * only, so a generator feeding it may use the Dedupe between groups.
 * The results walks are in py_dedupe_walk.c.
 */
#include "py_neardup.h"

#include <string.h>

static PyObject *raise_closed(void)
{
    return pynd_raise_msg(ND_EINVAL, "the Dedupe is closed");
}

int pynd_dedupe_enter(pynd_dedupe *self)
{
    unsigned long me = PyThread_get_thread_ident();
    for (;;) {
        if (!self->dd) {
            raise_closed();
            return -1;
        }
        if (!self->busy) break;
        if (self->owner == me) {
            pynd_raise_msg(ND_EINVAL, "the Dedupe was called from inside one of its own calls");
            return -1;
        }
        pynd_nap();
    }
    self->busy = 1;
    self->owner = me;
    return 0;
}

void pynd_dedupe_leave(pynd_dedupe *self) { self->busy = 0; }

/* ---- options ------------------------------------------------------------ */

/* "first", "score" or "longest". */
static int parse_keep(PyObject *obj, nd_dedupe_keep *out)
{
    static const char *const names[] = {"first", "score", "longest"};
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (!s && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "keep must be a str, not %.100s", Py_TYPE(obj)->tp_name);
    if (!s) return -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (nd_dedupe_keep)i;
            return 0;
        }
    char msg[160];
    snprintf(msg, sizeof msg, "keep must be 'first', 'score' or 'longest', not '%.80s'", s);
    pynd_raise_msg(ND_EINVAL, msg);
    return -1;
}

/* A threshold: None leaves *out; else a float, checked by the library. */
static int parse_ratio(PyObject *obj, double *out)
{
    if (!obj || obj == Py_None) return 0;
    double d = PyFloat_AsDouble(obj);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    *out = d;
    return 0;
}

/* The scratch directory as file-system bytes (a new reference): the given
 * path, or tempfile.gettempdir(). */
static PyObject *scratch_path(PyObject *obj)
{
    PyObject *path = NULL, *encoded = NULL;
    if (obj && obj != Py_None) {
        path = Py_NewRef(obj);
    } else {
        PyObject *tempfile = PyImport_ImportModule("tempfile");
        if (!tempfile) return NULL;
        path = PyObject_CallMethod(tempfile, "gettempdir", NULL);
        Py_DECREF(tempfile);
        if (!path) return NULL;
    }
    if (!PyUnicode_FSConverter(path, &encoded)) encoded = NULL;
    Py_DECREF(path);
    return encoded;
}

static int dedupe_init(pynd_dedupe *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"k", "min_resemblance", "min_containment", "keep", "memory",
                             "features", "html", "scratch_dir", "cjk_bigrams",
                             "title_weight", "stopwords", "bytes_keys", "fold_chinese", NULL};
    PyObject *k = NULL, *min_res = NULL, *min_cont = NULL, *keep = NULL, *memory = NULL,
             *features = NULL, *scratch = NULL, *cjk = NULL, *title = NULL, *stop = NULL,
             *fp_keep = NULL, *dir = NULL, *fold_zh = NULL;
    int html = 0, bytes_keys = 0, rc = -1, nrc;
    nd_dedupe_options o;
    nd_fp_options fp;
    if (self->dd) {
        PyErr_SetString(PyExc_RuntimeError, "Dedupe.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOOOOpOOOOpO", kwlist, &k, &min_res,
                                     &min_cont, &keep, &memory, &features, &html, &scratch,
                                     &cjk, &title, &stop, &bytes_keys, &fold_zh))
        return -1;
    nd_dedupe_options_init(&o, ND_DEDUPE_OPTIONS_VERSION);
    if (k && k != Py_None) {
        if (pynd_k(k, 0, &o.k) < 0) goto cleanup;
        o.has_k = 1;
    }
    double r = ND_DEDUPE_DEFAULT_MIN_RESEMBLANCE;
    if (parse_ratio(min_res, &r) < 0 || parse_ratio(min_cont, &o.min_containment) < 0)
        goto cleanup;
    if (r == 0) o.flags |= ND_DEDUPE_SIMHASH_ONLY; /* as --min-resemblance 0 */
    else o.min_resemblance = r;
    if (keep && keep != Py_None && parse_keep(keep, &o.keep) < 0) goto cleanup;
    if (pynd_u64(memory, "memory", &o.memory) < 0) goto cleanup;
    if (pynd_fp_options(&fp, features, cjk, title, stop, fold_zh, &fp_keep) < 0) goto cleanup;
    o.fp = &fp;
    if (!(dir = scratch_path(scratch))) goto cleanup;
    o.scratch_dir = PyBytes_AS_STRING(dir);
    nd_dedupe *dd = NULL;
    Py_BEGIN_ALLOW_THREADS
    nrc = nd_dedupe_new(&dd, &o);
    Py_END_ALLOW_THREADS
    if (nrc < 0) {
        pynd_raise(nrc);
        goto cleanup;
    }
    self->dd = dd;
    self->html = html;
    self->bytes_keys = bytes_keys;
    rc = 0;
cleanup:
    Py_XDECREF(fp_keep);
    Py_XDECREF(dir);
    return rc;
}

static void free_handle(pynd_dedupe *self)
{
    nd_dedupe *dd = self->dd;
    self->dd = NULL;
    Py_BEGIN_ALLOW_THREADS
    nd_dedupe_free(dd); /* closes (and so deletes) the scratch files */
    Py_END_ALLOW_THREADS
}

static void dedupe_dealloc(pynd_dedupe *self)
{
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    if (self->dd) free_handle(self); /* a running call would hold a reference */
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *dedupe_close(pynd_dedupe *self, PyObject *unused)
{
    (void)unused;
    if (!self->dd) Py_RETURN_NONE;
    if (pynd_dedupe_enter(self) < 0) return NULL; /* waits for another thread's call */
    free_handle(self);
    pynd_dedupe_leave(self);
    Py_RETURN_NONE;
}

static PyObject *dedupe_enter_ctx(pynd_dedupe *self, PyObject *unused)
{
    (void)unused;
    if (!self->dd) return raise_closed();
    return Py_NewRef(self);
}

static PyObject *dedupe_exit_ctx(pynd_dedupe *self, PyObject *args)
{
    (void)args;
    return dedupe_close(self, NULL);
}

/* ---- adding documents ------------------------------------------------------ */

/* Texts at least this long are signed with the GIL released (as
 * fingerprint() does). */
#define RELEASE_GIL_BYTES 2048

/* Add one document (add, add_fingerprint; add_many reads records in
 * groups, add_records): text is a str or bytes-like (signed, as HTML when
 * html), or, when fp_ok, an int (a fingerprint). @return 0, or -1 with an
 * exception set. */
static int add_one(pynd_dedupe *self, PyObject *keyobj, PyObject *text, PyObject *scoreobj,
                   int html, int fp_ok)
{
    const char *key;
    size_t key_len;
    PyObject *key_keep = NULL;
    pynd_text t = {0};
    double score;
    uint64_t fp = 0;
    int by_fp = fp_ok && PyLong_Check(text), rc;
    if (pynd_key(keyobj, &key, &key_len, &key_keep) < 0 || pynd_score(scoreobj, &score) < 0 ||
        (by_fp ? pynd_fp(text, &fp) : pynd_text_get(text, &t)) < 0) {
        Py_XDECREF(key_keep);
        return -1;
    }
    if (pynd_dedupe_enter(self) < 0) {
        rc = -1;
        goto cleanup;
    }
    nd_dedupe *dd = self->dd;
    unsigned flags = html ? ND_FP_HTML : 0;
    if (by_fp) {
        rc = nd_dedupe_add_fp(dd, key, key_len, fp, score);
    } else {
        nd_signature sig;
        int release = t.len >= RELEASE_GIL_BYTES;
        PyThreadState *ts = release ? PyEval_SaveThread() : NULL;
        rc = nd_dedupe_sign(&sig, dd, t.ptr, t.len, flags);
        if (rc >= 0) rc = nd_dedupe_add_signature(dd, key, key_len, &sig, score);
        if (release) PyEval_RestoreThread(ts);
    }
    pynd_dedupe_leave(self);
    if (rc < 0) {
        pynd_raise(rc);
        rc = -1;
    }
cleanup:
    pynd_text_release(&t);
    Py_XDECREF(key_keep);
    return rc < 0 ? -1 : 0;
}

/* The html argument of a call: None gives the handle's. */
static int html_arg(pynd_dedupe *self, PyObject *obj)
{
    return obj && obj != Py_None ? PyObject_IsTrue(obj) : self->html;
}

static PyObject *dedupe_add(pynd_dedupe *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"key", "text", "score", "html", NULL};
    PyObject *a[4];
    if (pynd_parse("add", args, nargs, kwnames, names, 2, 4, a) < 0) return NULL;
    int html = html_arg(self, a[3]);
    if (html < 0 || add_one(self, a[0], a[1], a[2], html, 0) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *dedupe_add_fingerprint(pynd_dedupe *self, PyObject *const *args,
                                        Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"key", "fingerprint", "score", NULL};
    PyObject *a[3];
    if (pynd_parse("add_fingerprint", args, nargs, kwnames, names, 2, 3, a) < 0) return NULL;
    PyObject *fp = PyNumber_Index(a[1]);
    if (!fp) return NULL;
    int rc = add_one(self, a[0], fp, a[2], 0, 1);
    Py_DECREF(fp);
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

/* Add one record (GIL released). @return a library code. */
static int add_record(nd_dedupe *dd, const pynd_rec *r, int html)
{
    if (!r->text) return nd_dedupe_add_fp(dd, r->key, r->key_len, r->fp, r->score);
    nd_signature sig;
    int rc = nd_dedupe_sign(&sig, dd, r->text, r->text_len,
                            (r->html >= 0 ? r->html : html) ? ND_FP_HTML : 0);
    return rc < 0 ? rc : nd_dedupe_add_signature(dd, r->key, r->key_len, &sig, r->score);
}

/* Records in groups: read with the GIL held (a generator may use the
 * Dedupe between groups), signed and added with it released, signals
 * checked between groups. @return 0, or -1 with an exception noting how
 * many documents were added. */
static int add_records(pynd_dedupe *self, PyObject *docs)
{
    PyObject *it = PyObject_GetIter(docs), *item, *hold = PyList_New(0);
    Py_ssize_t total = pynd_known_len(docs);
    pynd_pace pace;
    pynd_pace_init(&pace, PYND_SIGN_MIN, 16384);
    pynd_rec *recs = PyMem_Malloc(pace.max * sizeof *recs);
    size_t done = 0, n = 0, bad = 0;
    int rc = 0;
    if (!recs) PyErr_NoMemory();
    if (!it || !hold || !recs) goto fail;
    for (;;) {
        for (n = 0; n < pace.group && (item = PyIter_Next(it)); n++) {
            rc = pynd_record(item, (Py_ssize_t)(done + n), PYND_REC_DEDUPE, &recs[n], hold);
            Py_DECREF(item);
            if (rc < 0) goto fail;
        }
        if (PyErr_Occurred()) goto fail;
        if (n == 0) break;
        if (pynd_dedupe_enter(self) < 0) goto fail;
        nd_dedupe *dd = self->dd;
        int html = self->html;
        double t0 = pynd_clock();
        Py_BEGIN_ALLOW_THREADS
        for (bad = 0; bad < n && rc >= 0; bad++) rc = add_record(dd, &recs[bad], html);
        Py_END_ALLOW_THREADS
        pynd_dedupe_leave(self);
        pynd_pace_done(&pace, n, pynd_clock() - t0);
        if (rc < 0) {
            char msg[600];
            snprintf(msg, sizeof msg, "records[%zu]: %s", done + bad - 1, nd_errmsg());
            pynd_raise_msg(rc, msg);
            done += bad - 1;
            n = 0;
            goto fail;
        }
        done += n;
        PyList_SetSlice(hold, 0, PyList_GET_SIZE(hold), NULL);
        if (pynd_check_signals(done, total, "added", NULL) < 0) goto fail;
    }
    Py_DECREF(it);
    Py_DECREF(hold);
    PyMem_Free(recs);
    return 0;
fail:
    pynd_note(done, total, "added", NULL);
    Py_XDECREF(it);
    Py_XDECREF(hold);
    PyMem_Free(recs);
    return -1;
}

static PyObject *dedupe_add_many(pynd_dedupe *self, PyObject *docs)
{
    if (add_records(self, docs) < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- counts ----------------------------------------------------------------- */

static PyObject *dedupe_stats(pynd_dedupe *self, PyObject *unused)
{
    nd_dedupe_stats st;
    (void)unused;
    if (pynd_dedupe_enter(self) < 0) return NULL;
    int rc = nd_dedupe_stats_get(&st, self->dd);
    pynd_dedupe_leave(self);
    if (rc < 0) return pynd_raise(rc);
    return Py_BuildValue("{sKsKsKsKsKsI}", "documents", (unsigned long long)st.documents,
                         "texts", (unsigned long long)st.texts, "distinct",
                         (unsigned long long)st.distinct, "pairs",
                         (unsigned long long)st.pairs, "by_containment",
                         (unsigned long long)st.by_containment, "k", st.k);
}

static Py_ssize_t dedupe_len(PyObject *obj)
{
    pynd_dedupe *self = (pynd_dedupe *)obj;
    nd_dedupe_stats st;
    if (pynd_dedupe_enter(self) < 0) return -1;
    nd_dedupe_stats_get(&st, self->dd);
    pynd_dedupe_leave(self);
    return (Py_ssize_t)st.documents;
}

static PyObject *dedupe_get_closed(pynd_dedupe *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->dd == NULL);
}

static PyObject *dedupe_repr(pynd_dedupe *self)
{
    return PyUnicode_FromString(self->dd ? "<neardup.Dedupe>" : "<neardup.Dedupe closed>");
}

/* ---- neardup.dedupe() -------------------------------------------------------- */

static const char *const views[] = {"pairs", "clusters", "keep", "drop", NULL};

PyObject *pynd_mod_dedupe(PyObject *mod, PyObject *args, PyObject *kwds)
{
    PyObject *kw = kwds ? PyDict_Copy(kwds) : PyDict_New(), *docs = NULL, *out = NULL;
    PyObject *empty = NULL, *d = NULL, *res = NULL;
    const char *view = "pairs";
    (void)mod;
    if (!kw) return NULL;
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    docs = Py_XNewRef(PyDict_GetItemString(kw, "docs"));
    if (nargs > 1 || (nargs == 1 && docs) || (nargs == 0 && !docs)) {
        PyErr_SetString(PyExc_TypeError,
                        nargs > 1 ? "dedupe() takes 1 positional argument"
                        : docs   ? "dedupe() got multiple values for argument 'docs'"
                                 : "dedupe() missing required argument 'docs'");
        goto cleanup;
    }
    if (nargs == 1) docs = Py_NewRef(PyTuple_GET_ITEM(args, 0));
    if (PyDict_DelItemString(kw, "docs") < 0) PyErr_Clear();
    out = Py_XNewRef(PyDict_GetItemString(kw, "out"));
    if (out) {
        if (!PyUnicode_Check(out)) {
            PyErr_Format(PyExc_TypeError, "out must be a str, not %.100s",
                         Py_TYPE(out)->tp_name);
            goto cleanup;
        }
        int i = 0;
        while (views[i] && PyUnicode_CompareWithASCIIString(out, views[i]) != 0) i++;
        if (!views[i]) {
            pynd_raise_msg(ND_EINVAL, "out must be 'pairs', 'clusters', 'keep' or 'drop'");
            goto cleanup;
        }
        view = views[i];
        PyDict_DelItemString(kw, "out");
    }
    if (!(empty = PyTuple_New(0)) ||
        !(d = PyObject_Call((PyObject *)&pynd_DedupeType, empty, kw)))
        goto cleanup;
    PyObject *added = dedupe_add_many((pynd_dedupe *)d, docs);
    if (!added) goto cleanup;
    Py_DECREF(added);
    res = PyObject_CallMethod(d, view, NULL);
    PyObject *closed = dedupe_close((pynd_dedupe *)d, NULL);
    if (!closed) Py_CLEAR(res);
    Py_XDECREF(closed);
cleanup:
    Py_XDECREF(d);
    Py_XDECREF(empty);
    Py_XDECREF(out);
    Py_XDECREF(docs);
    Py_DECREF(kw);
    return res;
}

/* ---- the type ------------------------------------------------------------------ */

#define FAST(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS
#define SIG(name, args, doc) name "($self" args ")\n--\n\n" doc

static PyMethodDef dedupe_methods[] = {
    {"add", FAST(dedupe_add),
     SIG("add", ", key, text, score=0.0, html=None",
         "Add a document with text (str or bytes); html=None: the Dedupe's html.")},
    {"add_fingerprint", FAST(dedupe_add_fingerprint),
     SIG("add_fingerprint", ", key, fingerprint, score=0.0",
         "Add a document known by its fingerprint only (pairs by distance, within "
         "min(k, 8) bits).")},
    {"add_many", (PyCFunction)dedupe_add_many, METH_O,
     SIG("add_many", ", docs, /",
         "Add records from an iterable: (key, text[, score]) tuples (an int text is a "
         "fingerprint), dicts or objects with id and text or fp; signed in groups with "
         "the GIL released.")},
    {"pairs", (PyCFunction)pynd_dedupe_pairs, METH_NOARGS,
     SIG("pairs", "", "Every near-duplicate pair, as found (a list of Pair).")},
    {"clusters", (PyCFunction)pynd_dedupe_clusters, METH_NOARGS,
     SIG("clusters", "", "The clusters of two or more documents: {id: Cluster}.")},
    {"keep", (PyCFunction)pynd_dedupe_keep, METH_NOARGS,
     SIG("keep", "", "The keys to keep (one a cluster, singletons too), in input order.")},
    {"drop", (PyCFunction)pynd_dedupe_drop, METH_NOARGS,
     SIG("drop", "", "The keys to drop, in input order.")},
    {"stats", (PyCFunction)dedupe_stats, METH_NOARGS,
     SIG("stats", "", "Counts: documents, texts, distinct, pairs, by_containment, k.")},
    {"close", (PyCFunction)dedupe_close, METH_NOARGS,
     SIG("close", "", "Free the handle and its scratch files.")},
    {"__enter__", (PyCFunction)dedupe_enter_ctx, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)dedupe_exit_ctx, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef dedupe_getset[] = {
    {"closed", (getter)dedupe_get_closed, NULL, "True once closed", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods dedupe_as_sequence = {.sq_length = dedupe_len};

PyTypeObject pynd_DedupeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "neardup.Dedupe",
    .tp_basicsize = sizeof(pynd_dedupe),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Dedupe(*, k=None, min_resemblance=None, min_containment=None, keep='first', "
              "memory=None, features=None, html=False, scratch_dir=None, cjk_bigrams=None, "
              "title_weight=None, stopwords=None, bytes_keys=False, fold_chinese=None)\n--\n\n"
              "The near-duplicates of a corpus without a database: add documents, then read "
              "pairs(), clusters(), keep() or drop() (neardup/__init__.pyi states every "
              "argument).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)dedupe_init,
    .tp_dealloc = (destructor)dedupe_dealloc,
    .tp_repr = (reprfunc)dedupe_repr,
    .tp_as_sequence = &dedupe_as_sequence,
    .tp_methods = dedupe_methods,
    .tp_getset = dedupe_getset,
    .tp_weaklistoffset = offsetof(pynd_dedupe, weakrefs),
};
