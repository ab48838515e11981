/*
 * _neardup.c — the `neardup._neardup` module: its functions (fingerprint,
 * distance, dedupe), its result types (Match, Document, BatchMatch: struct
 * sequences, i.e. named tuples built in C) and its initialisation, which
 * adds the exceptions (py_util.c), the Database type (py_db.c) and the
 * Dedupe type with its results (py_dedupe.c, py_dedupe_walk.c).
 *
 * The package `neardup` (__init__.py) re-exports all of it; __init__.pyi
 * documents every signature.
 */
#include "py_neardup.h"

PyTypeObject *pynd_MatchType;
PyTypeObject *pynd_DocumentType;
PyTypeObject *pynd_BatchMatchType;

/* Texts at least this long are fingerprinted with the GIL released:
 * releasing costs about as much as hashing a few hundred bytes. */
#define RELEASE_GIL_BYTES 2048

static PyStructSequence_Field match_fields[] = {
    {"key", "the stored document's key (str, or bytes with bytes_keys=True); None "
            "with fingerprints_only=True"},
    {"fingerprint", "its 64-bit fingerprint (int)"},
    {"distance", "Hamming distance to the query (int)"},
    {"score", "its authority score (float)"},
    {"time", "its last-seen time, seconds since the epoch (int)"},
    {"resemblance", "estimated resemblance to the query text (float; a store created "
                    "with min_resemblance, text calls), else None; an attribute only, "
                    "not part of the tuple"},
    {NULL, NULL},
};
static PyStructSequence_Desc match_desc = {
    "neardup.Match", "A stored document near a query: (key, fingerprint, distance, score, time).",
    match_fields, 5};

static PyStructSequence_Field document_fields[] = {
    {"key", "the document's key (str, or bytes with bytes_keys=True)"},
    {"fingerprint", "its 64-bit fingerprint (int)"},
    {"score", "its authority score (float)"},
    {"time", "its last-seen time, seconds since the epoch (int)"},
    {NULL, NULL},
};
static PyStructSequence_Desc document_desc = {
    "neardup.Document", "A stored document: (key, fingerprint, score, time).", document_fields,
    4};

static PyStructSequence_Field batch_fields[] = {
    {"key", "the matched document's key"},
    {"fingerprint", "its fingerprint (int)"},
    {"distance", "Hamming distance to the batch document (int)"},
    {"match_index", "position of the earlier batch document matched, or None when the "
                    "match is a stored document (not `index`, which would hide "
                    "tuple.index)"},
    {"resemblance", "estimated resemblance to the match (float; a store created with "
                    "min_resemblance), else None; an attribute only, not part of the tuple"},
    {NULL, NULL},
};
static PyStructSequence_Desc batch_desc = {
    "neardup.BatchMatch",
    "The near-duplicate found for a batch document: (key, fingerprint, distance, "
    "match_index).",
    batch_fields, 4};

/* Fill a struct sequence from a Py_BuildValue format; NULL on failure. */
static PyObject *struct_new(PyTypeObject *type, PyObject *key, const char *fmt, ...)
{
    if (!key) return NULL;
    PyObject *seq = PyStructSequence_New(type);
    va_list ap;
    va_start(ap, fmt);
    PyObject *rest = Py_VaBuildValue(fmt, ap);
    va_end(ap);
    if (!seq || !rest) {
        Py_XDECREF(seq);
        Py_XDECREF(rest);
        Py_DECREF(key);
        return NULL;
    }
    PyStructSequence_SET_ITEM(seq, 0, key);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(rest); i++)
        PyStructSequence_SET_ITEM(seq, i + 1, Py_NewRef(PyTuple_GET_ITEM(rest, i)));
    Py_DECREF(rest);
    return seq;
}

PyObject *pynd_match_new(const nd_match *m, int as_bytes)
{
    PyObject *key = m->key ? pynd_key_object(m->key, m->key_len, as_bytes) : Py_NewRef(Py_None);
    PyObject *res = m->resemblance >= 0 ? PyFloat_FromDouble(m->resemblance) : Py_NewRef(Py_None);
    if (!res) {
        Py_XDECREF(key);
        return NULL;
    }
    PyObject *seq = struct_new(pynd_MatchType, key, "(KIdL)", (unsigned long long)m->fp, m->dist,
                               m->score, (long long)m->time);
    if (!seq) {
        Py_DECREF(res);
        return NULL;
    }
    PyStructSequence_SET_ITEM(seq, 5, res); /* beyond the tuple: an attribute */
    return seq;
}

PyObject *pynd_document_new(const char *key, size_t key_len, uint64_t fp, double score,
                            int64_t time, int as_bytes)
{
    return struct_new(pynd_DocumentType, pynd_key_object(key, key_len, as_bytes), "(KdL)",
                      (unsigned long long)fp, score, (long long)time);
}

PyObject *pynd_fingerprint_of(PyObject *text, const nd_fp_options *opts)
{
    pynd_text t;
    uint64_t fp = 0;
    int rc;
    if (pynd_text_get(text, &t) < 0) return NULL;
    if (t.len >= RELEASE_GIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        rc = nd_fingerprint(&fp, t.ptr, t.len, opts);
        Py_END_ALLOW_THREADS
    } else {
        rc = nd_fingerprint(&fp, t.ptr, t.len, opts);
    }
    pynd_text_release(&t);
    if (rc < 0) return pynd_raise(rc);
    return PyLong_FromUnsignedLongLong(fp);
}

static PyObject *mod_fingerprint(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"text", "html", "features", "cjk_bigrams",
                                        "title_weight", "stopwords", "fold_chinese", NULL};
    PyObject *a[7], *keep;
    nd_fp_options opts;
    (void)mod;
    if (pynd_parse("fingerprint", args, nargs, kwnames, names, 1, 2, a) < 0) return NULL;
    if (pynd_fp_options(&opts, a[2], a[3], a[4], a[5], a[6], &keep) < 0) return NULL;
    int html = a[1] ? PyObject_IsTrue(a[1]) : 0;
    PyObject *fp = NULL;
    if (html >= 0) {
        if (html) opts.flags |= ND_FP_HTML;
        fp = pynd_fingerprint_of(a[0], &opts);
    }
    Py_XDECREF(keep);
    return fp;
}

static PyObject *mod_distance(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t a, b;
    (void)mod;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "distance() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (pynd_fp(args[0], &a) < 0 || pynd_fp(args[1], &b) < 0) return NULL;
    return PyLong_FromUnsignedLong(nd_hamming(a, b));
}

static PyMethodDef module_methods[] = {
    {"fingerprint", (PyCFunction)(void (*)(void))mod_fingerprint, METH_FASTCALL | METH_KEYWORDS,
     "fingerprint($module, text, html=False, features=None, cjk_bigrams=None, "
     "title_weight=None, stopwords=None, fold_chinese=None)\n--\n\nThe 64-bit simhash of a text (str or bytes)."},
    {"distance", (PyCFunction)(void (*)(void))mod_distance, METH_FASTCALL,
     "distance($module, a, b, /)\n--\n\nHamming distance between two fingerprints."},
    {"resemblance", (PyCFunction)(void (*)(void))pynd_mod_resemblance, METH_FASTCALL,
     "resemblance($module, a, b, /)\n--\n\nEstimated resemblance in [0, 1] of the texts "
     "behind two sketches (Database.sign's)."},
    {"dedupe", (PyCFunction)(void (*)(void))pynd_mod_dedupe, METH_VARARGS | METH_KEYWORDS,
     "dedupe($module, docs, *, k=None, min_resemblance=None, min_containment=None, "
     "keep='first', out='pairs', memory=None, features=None, html=False, scratch_dir=None, "
     "cjk_bigrams=None, title_weight=None, stopwords=None, bytes_keys=False, "
     "fold_chinese=None)\n--\n\n"
     "The near-duplicates of an iterable of (key, text[, score]): out='pairs' (a list of "
     "Pair), 'clusters' ({id: Cluster}), 'keep' or 'drop' (lists of keys)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "neardup._neardup",
    "The C extension behind the neardup package: see neardup.__doc__.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *mod, const char *name, PyTypeObject *type)
{
    return PyModule_AddObjectRef(mod, name, (PyObject *)type);
}

PyMODINIT_FUNC PyInit__neardup(void)
{
    PyObject *mod = PyModule_Create(&module_def);
    if (!mod) return NULL;
    pynd_MatchType = PyStructSequence_NewType(&match_desc);
    pynd_DocumentType = PyStructSequence_NewType(&document_desc);
    pynd_BatchMatchType = PyStructSequence_NewType(&batch_desc);
    if (!pynd_MatchType || !pynd_DocumentType || !pynd_BatchMatchType ||
        PyType_Ready(&pynd_DatabaseType) < 0 || PyType_Ready(&pynd_IterType) < 0 ||
        pynd_errors_init(mod) < 0 || pynd_dedupe_types_init(mod) < 0 || pynd_records_init() < 0 ||
        add_type(mod, "Match", pynd_MatchType) < 0 ||
        add_type(mod, "Document", pynd_DocumentType) < 0 ||
        add_type(mod, "BatchMatch", pynd_BatchMatchType) < 0 ||
        add_type(mod, "Database", &pynd_DatabaseType) < 0 ||
        PyModule_AddStringConstant(mod, "__version__", ND_VERSION_STRING) < 0 ||
        PyModule_AddIntConstant(mod, "FP_VERSION", ND_FP_VERSION) < 0 ||
        PyModule_AddIntConstant(mod, "FORMAT_VERSION", ND_FORMAT_VERSION) < 0 ||
        PyModule_AddIntConstant(mod, "MAX_K", ND_MAX_K) < 0 ||
        PyModule_AddIntConstant(mod, "MAX_KEY_LEN", ND_MAX_KEY_LEN) < 0 ||
        PyModule_AddIntConstant(mod, "MAX_DOC_BYTES", ND_MAX_DOC_BYTES) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
