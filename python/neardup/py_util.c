/*
 * py_util.c — the extension's exceptions, argument parsing and
 * conversions between Python objects and the C API's types.
 *
 * Exceptions: neardup.Error carries `code` (the nd_error value), `name`
 * (nd_strerror) and `message` (nd_errmsg); one subclass per code lets a
 * caller catch, say, BusyError alone. InvalidArgumentError is also a
 * ValueError, as Python's own bad-argument errors are.
 *
 * Keys are bytes; a str key is its UTF-8 encoding, with lone surrogates
 * U+DC80..U+DCFF standing for the bytes they escape (Python's
 * "surrogateescape", as os.fsencode), so a key read back as str always
 * turns into the same bytes again.
 */
#include "py_neardup.h"

#include <math.h>
#include <string.h>
#include <time.h>

PyObject *pynd_Error;

/* One exception class per nd_error code. */
static struct {
    int code;
    const char *name;
    const char *doc;
    PyObject *cls;
} codes[] = {
    {ND_EINVAL, "InvalidArgumentError",
     "An invalid argument or malformed input (ND_EINVAL); also a ValueError.", NULL},
    {ND_ENOTFOUND, "NotFoundError", "No such document, database or file (ND_ENOTFOUND).", NULL},
    {ND_ECORRUPT, "CorruptError", "Stored data failed a check (ND_ECORRUPT).", NULL},
    {ND_EIO, "DiskIOError", "An I/O error from the system or RocksDB (ND_EIO).", NULL},
    {ND_EBUSY, "BusyError", "The database is open for writing elsewhere (ND_EBUSY).", NULL},
    {ND_EVERSION, "VersionError", "An on-disk format of an incompatible build (ND_EVERSION).",
     NULL},
    {ND_ENOMEM, "OutOfMemoryError", "Out of memory inside the library (ND_ENOMEM).", NULL},
    {ND_EEXIST, "ExistsError", "Already exists (ND_EEXIST).", NULL},
    {ND_EMISMATCH, "MismatchError", "Settings differ from the database's (ND_EMISMATCH).", NULL},
    {ND_ELIMIT, "LimitError", "A documented size limit was exceeded (ND_ELIMIT).", NULL},
    {ND_ENOSPC, "NoSpaceError", "No space left on the device (ND_ENOSPC).", NULL},
    {ND_EREADONLY, "ReadOnlyError", "A write on a read-only database (ND_EREADONLY).", NULL},
    {ND_EINTERNAL, "InternalError", "A bug in neardup (ND_EINTERNAL): please report it.", NULL},
};
#define NCODES (sizeof codes / sizeof codes[0])

int pynd_errors_init(PyObject *module)
{
    pynd_Error = PyErr_NewExceptionWithDoc(
        "neardup.Error",
        "A failure of neardup: `code` is the C library's nd_error value (negative), "
        "`name` its nd_strerror text and `message` the detail (nd_errmsg).",
        NULL, NULL);
    if (!pynd_Error || PyModule_AddObjectRef(module, "Error", pynd_Error) < 0) return -1;
    for (size_t i = 0; i < NCODES; i++) {
        char qualified[64];
        PyObject *bases = codes[i].code == ND_EINVAL
                              ? PyTuple_Pack(2, pynd_Error, PyExc_ValueError)
                              : PyTuple_Pack(1, pynd_Error);
        if (!bases) return -1;
        snprintf(qualified, sizeof qualified, "neardup.%s", codes[i].name);
        codes[i].cls = PyErr_NewExceptionWithDoc(qualified, codes[i].doc, bases, NULL);
        Py_DECREF(bases);
        if (!codes[i].cls || PyModule_AddObjectRef(module, codes[i].name, codes[i].cls) < 0)
            return -1;
    }
    return 0;
}

PyObject *pynd_raise_msg(int rc, const char *msg)
{
    PyObject *cls = pynd_Error;
    for (size_t i = 0; i < NCODES; i++)
        if (codes[i].code == rc) cls = codes[i].cls;
    const char *name = nd_strerror(rc);
    PyObject *text = *msg ? PyUnicode_FromFormat("%s: %s", name, msg)
                          : PyUnicode_FromString(name);
    PyObject *exc = text ? PyObject_CallOneArg(cls, text) : NULL;
    Py_XDECREF(text);
    if (!exc) return NULL;
    PyObject *code = PyLong_FromLong(rc);
    PyObject *pname = PyUnicode_FromString(name);
    PyObject *pmsg = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    if (code && pname && pmsg && PyObject_SetAttrString(exc, "code", code) == 0 &&
        PyObject_SetAttrString(exc, "name", pname) == 0 &&
        PyObject_SetAttrString(exc, "message", pmsg) == 0)
        PyErr_SetObject(cls, exc);
    Py_XDECREF(code);
    Py_XDECREF(pname);
    Py_XDECREF(pmsg);
    Py_DECREF(exc);
    return NULL;
}

PyObject *pynd_raise(int rc) { return pynd_raise_msg(rc, nd_errmsg()); }

int pynd_parse(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
               const char *const *names, int required, int positional, PyObject **out)
{
    int n = 0;
    while (names[n]) out[n++] = NULL;
    if (nargs > positional) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
                     func, positional, positional == 1 ? "" : "s", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, j);
        int i = 0;
        while (i < n && PyUnicode_CompareWithASCIIString(name, names[i]) != 0) i++;
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", func,
                         name);
            return -1;
        }
        if (out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", func,
                         names[i]);
            return -1;
        }
        out[i] = args[nargs + j];
    }
    for (int i = 0; i < required; i++)
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", func, names[i]);
            return -1;
        }
    return 0;
}

/* UTF-8 of a str: the cached encoding when it is valid, else an encoded
 * copy in *keep under `errors`. */
static int str_bytes(PyObject *obj, const char *errors, const char **ptr, size_t *len,
                     PyObject **keep)
{
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(obj, &n);
    if (!p) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
        PyErr_Clear();
        PyObject *b = PyUnicode_AsEncodedString(obj, "utf-8", errors);
        if (!b) return -1;
        *keep = b;
        p = PyBytes_AS_STRING(b);
        n = PyBytes_GET_SIZE(b);
    }
    *ptr = p;
    *len = (size_t)n;
    return 0;
}

int pynd_key(PyObject *obj, const char **ptr, size_t *len, PyObject **keep)
{
    *keep = NULL;
    if (PyBytes_Check(obj)) {
        *ptr = PyBytes_AS_STRING(obj);
        *len = (size_t)PyBytes_GET_SIZE(obj);
        return 0;
    }
    if (PyUnicode_Check(obj)) return str_bytes(obj, "surrogateescape", ptr, len, keep);
    if (PyObject_CheckBuffer(obj)) {
        PyObject *b = PyBytes_FromObject(obj);
        if (!b) return -1;
        *keep = b;
        *ptr = PyBytes_AS_STRING(b);
        *len = (size_t)PyBytes_GET_SIZE(b);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a key must be str or bytes, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

PyObject *pynd_key_object(const char *key, size_t len, int as_bytes)
{
    if (as_bytes) return PyBytes_FromStringAndSize(key, (Py_ssize_t)len);
    return PyUnicode_DecodeUTF8(key, (Py_ssize_t)len, "surrogateescape");
}

int pynd_text_get(PyObject *obj, pynd_text *out)
{
    memset(out, 0, sizeof *out);
    if (PyBytes_Check(obj)) {
        out->ptr = PyBytes_AS_STRING(obj);
        out->len = (size_t)PyBytes_GET_SIZE(obj);
        return 0;
    }
    if (PyUnicode_Check(obj)) {
        /* surrogateescape gives back the bytes a str was decoded from;
         * other lone surrogates are encoded as they are (invalid UTF-8,
         * which the library reads as U+FFFD): a text never fails. */
        if (str_bytes(obj, "surrogateescape", &out->ptr, &out->len, &out->keep) == 0) return 0;
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
        PyErr_Clear();
        return str_bytes(obj, "surrogatepass", &out->ptr, &out->len, &out->keep);
    }
    if (PyObject_CheckBuffer(obj)) {
        if (PyObject_GetBuffer(obj, &out->view, PyBUF_SIMPLE) < 0) return -1;
        out->has_view = 1;
        out->ptr = out->view.buf;
        out->len = (size_t)out->view.len;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a text must be str or bytes, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

void pynd_text_release(pynd_text *t)
{
    if (t->has_view) PyBuffer_Release(&t->view);
    t->has_view = 0;
    Py_CLEAR(t->keep);
}

int pynd_fp(PyObject *obj, uint64_t *out)
{
    PyObject *num = PyNumber_Index(obj); /* int, or anything with __index__ */
    if (!num) return -1;
    unsigned long long v = PyLong_AsUnsignedLongLong(num);
    Py_DECREF(num);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "a fingerprint is an int in [0, 2**64)");
        }
        return -1;
    }
    *out = v;
    return 0;
}

int pynd_u64(PyObject *obj, const char *what, uint64_t *out)
{
    if (!obj || obj == Py_None) return 0;
    PyObject *num = PyNumber_Index(obj);
    if (!num) return -1;
    unsigned long long v = PyLong_AsUnsignedLongLong(num);
    Py_DECREF(num);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s must be an int in [0, 2**64)", what);
        }
        return -1;
    }
    *out = v;
    return 0;
}

int pynd_k(PyObject *obj, unsigned def, unsigned *out)
{
    uint64_t v = def;
    if (pynd_u64(obj, "k", &v) < 0) return -1;
    *out = v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
    return 0;
}

int pynd_time(PyObject *obj, int64_t *out)
{
    if (!obj || obj == Py_None) {
        *out = (int64_t)time(NULL);
        return 0;
    }
    if (PyLong_Check(obj)) {
        long long v = PyLong_AsLongLong(obj);
        if (v == -1 && PyErr_Occurred()) return -1;
        *out = v;
        return 0;
    }
    double d;
    if (PyFloat_Check(obj)) {
        d = PyFloat_AS_DOUBLE(obj);
    } else {
        PyObject *ts = PyObject_CallMethod(obj, "timestamp", NULL); /* a datetime */
        if (!ts) {
            if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError,
                             "a time is seconds since the epoch (int or float) or a "
                             "datetime, not %.100s",
                             Py_TYPE(obj)->tp_name);
            }
            return -1;
        }
        d = PyFloat_AsDouble(ts);
        Py_DECREF(ts);
        if (d == -1.0 && PyErr_Occurred()) return -1;
    }
    if (!(d >= -9.2e18 && d <= 9.2e18)) {
        PyErr_SetString(PyExc_ValueError, "time out of range");
        return -1;
    }
    *out = (int64_t)floor(d);
    return 0;
}

int pynd_score(PyObject *obj, double *out)
{
    *out = 0;
    if (!obj || obj == Py_None) return 0;
    double d = PyFloat_AsDouble(obj);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    *out = d;
    return 0;
}

/* "words", "shingles[:N]", "chars[:N]" or "default" into opts. */
static int parse_features(const char *s, nd_fp_options *opts)
{
    static const struct {
        const char *name;
        nd_feature_kind kind;
        int takes_n;
    } kinds[] = {
        {"default", ND_FEATURES_DEFAULT, 0},
        {"words", ND_FEATURES_WORDS, 0},
        {"shingles", ND_FEATURES_SHINGLES, 1},
        {"chars", ND_FEATURES_CHARS, 1},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t len = strlen(kinds[i].name);
        if (strncmp(s, kinds[i].name, len) != 0) continue;
        unsigned long n = 0;
        if (s[len] == ':' && kinds[i].takes_n) {
            char *end;
            const char *digits = s + len + 1;
            if (*digits < '1' || *digits > '9') return -1;
            n = strtoul(digits, &end, 10);
            if (*end || n > 1000) return -1;
        } else if (s[len]) {
            return -1;
        }
        opts->features = kinds[i].kind;
        opts->n = (unsigned)n;
        return 0;
    }
    return -1;
}

/* The stop words as a pointer array the library reads: *keep is a tuple
 * (their bytes, the array as a bytes object) that owns both. */
static int stopword_array(nd_fp_options *opts, PyObject *stopwords, PyObject **keep)
{
    PyObject *seq = PySequence_Fast(stopwords, "stopwords must be an iterable of str");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *words = PyList_New(0);
    PyObject *array = PyBytes_FromStringAndSize(NULL, (n ? n : 1) * (Py_ssize_t)sizeof(char *));
    int rc = words && array ? 0 : -1;
    const char **ptrs = array ? (const char **)PyBytes_AS_STRING(array) : NULL;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *w = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *b = PyUnicode_Check(w) ? PyUnicode_AsUTF8String(w)
                      : PyBytes_Check(w) ? Py_NewRef(w)
                                         : NULL;
        if (!b && !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "a stop word must be str, not %.100s",
                         Py_TYPE(w)->tp_name);
        if (!b || PyList_Append(words, b) < 0) rc = -1;
        else ptrs[i] = PyBytes_AS_STRING(b);
        Py_XDECREF(b);
    }
    Py_DECREF(seq);
    if (rc == 0) *keep = PyTuple_Pack(2, words, array);
    Py_XDECREF(words);
    Py_XDECREF(array);
    if (rc < 0 || !*keep) return -1;
    opts->stopwords = n ? ptrs : NULL;
    opts->n_stopwords = (size_t)n;
    return 0;
}

int pynd_fp_options(nd_fp_options *opts, PyObject *features, PyObject *cjk_bigrams,
                    PyObject *title_weight, PyObject *stopwords, PyObject *fold_chinese,
                    PyObject **keep)
{
    *keep = NULL;
    nd_fp_options_init(opts, ND_FP_OPTIONS_VERSION);
    if (features && features != Py_None) {
        const char *s = PyUnicode_Check(features) ? PyUnicode_AsUTF8(features) : NULL;
        if (!s && !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "features must be a str, not %.100s",
                         Py_TYPE(features)->tp_name);
        if (!s) return -1;
        if (parse_features(s, opts) < 0) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "features '%.80s': expected 'words', 'shingles', 'shingles:N', "
                     "'chars' or 'chars:N'",
                     s);
            pynd_raise_msg(ND_EINVAL, msg);
            return -1;
        }
    }
    if (cjk_bigrams && cjk_bigrams != Py_None) {
        int on = PyObject_IsTrue(cjk_bigrams);
        if (on < 0) return -1;
        if (!on) opts->flags |= ND_FP_NO_CJK_BIGRAMS;
    }
    if (fold_chinese && fold_chinese != Py_None) {
        int on = PyObject_IsTrue(fold_chinese);
        if (on < 0) return -1;
        if (on) opts->flags |= ND_FP_FOLD_CHINESE;
    }
    uint64_t weight = 0;
    if (pynd_u64(title_weight, "title_weight", &weight) < 0) return -1;
    opts->title_weight = weight > UINT32_MAX ? UINT32_MAX : (unsigned)weight;
    if (stopwords && stopwords != Py_None) return stopword_array(opts, stopwords, keep);
    return 0;
}
