/*
 * py_records.c — the one reading of a record, for every call that takes
 * many documents (Database.add_many, batch, load; Dedupe.add_many and
 * dedupe()), and what those calls share: the pacing of their groups and
 * the progress they note on an exception (an interrupt, mostly).
 *
 * A record is
 *  - a tuple (or list): (key, fingerprint or text[, score]) for a Dedupe,
 *    (key, fingerprint or text[, score[, time[, sketch]]]) for a Database;
 *    an int in the second place is a fingerprint, a str or bytes a text;
 *  - a dict with the members the JSONL reader names (input/in_jsonl.c):
 *    "id", "text" or "fp" (an int, or 16 hex digits as in JSONL), "score",
 *    "html", and for a Database "time" and "sketch" (Database.sign's);
 *    other members are ignored, a member that is None is absent;
 *  - any other object with an attribute .id (a dataclass, a named tuple
 *    with an id field): its attributes of the same names.
 * Anything else (a str, an int) is a TypeError naming the record's index
 * and type. A key is a str, a bytes-like object or an int (written in
 * decimal, as the JSONL reader writes an integer id).
 *
 * Long calls work in groups: they convert a group with the GIL held, run
 * the library on it with the GIL released, then take the GIL back and
 * check for signals (PyErr_CheckSignals), so Ctrl-C stops them between
 * groups. A pace sizes the groups for about PACE_SECS of library work.
 */
#include "py_neardup.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- field names ---------------------------------------------------------- */

enum { F_ID, F_TEXT, F_FP, F_SCORE, F_TIME, F_HTML, F_SKETCH, NFIELDS };
static const char *const field_names[NFIELDS] = {"id",   "text", "fp",    "score",
                                                 "time", "html", "sketch"};
static PyObject *field_str[NFIELDS]; /* interned */

int pynd_records_init(void)
{
    for (int i = 0; i < NFIELDS; i++)
        if (!field_str[i] && !(field_str[i] = PyUnicode_InternFromString(field_names[i])))
            return -1;
    return 0;
}

/* Field f of a dict or object record: a new reference; NULL without an
 * exception when absent or None. */
static PyObject *field(PyObject *item, int is_dict, int f)
{
    PyObject *v;
    if (is_dict) {
        v = PyDict_GetItemWithError(item, field_str[f]);
        Py_XINCREF(v);
    } else {
        v = PyObject_GetAttr(item, field_str[f]);
        if (!v && PyErr_ExceptionMatches(PyExc_AttributeError)) PyErr_Clear();
    }
    if (v == Py_None) Py_CLEAR(v);
    return v;
}

/* Append a new reference to hold; consumes obj. */
static int hold_new(PyObject *hold, PyObject *obj)
{
    int rc = PyList_Append(hold, obj);
    Py_DECREF(obj);
    return rc;
}

/* ---- errors ----------------------------------------------------------------- */

int pynd_record_error(Py_ssize_t index)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type != PyExc_TypeError && type != PyExc_ValueError && type != PyExc_OverflowError) {
        PyErr_Restore(type, value, tb); /* neardup.Error: its message says where */
        return -1;
    }
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *msg = value ? PyObject_Str(value) : NULL;
    if (msg) {
        PyErr_Format(type, "records[%zd]: %U", index, msg);
        Py_DECREF(msg);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        Py_DECREF(type);
    } else {
        PyErr_Restore(type, value, tb);
    }
    return -1;
}

static int shape_error(PyObject *item, Py_ssize_t index, unsigned what)
{
    PyErr_Format(PyExc_TypeError, "records[%zd]: expected %s, got %.100s", index,
                 what & PYND_REC_DB ? "a (key, fingerprint) or (key, text) tuple, a dict or an "
                                      "object with .id and .fp or .text"
                                    : "a (key, text) tuple, a dict or an object with .id/.text",
                 Py_TYPE(item)->tp_name);
    return -1;
}

/* ---- the parts ------------------------------------------------------------------ */

static int key_of(PyObject *obj, pynd_rec *out, PyObject *hold)
{
    PyObject *keep = NULL, *dec = NULL;
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        if (!(dec = PyObject_Str(obj)) || hold_new(hold, dec) < 0) return -1;
        obj = dec;
    } else if (PyBool_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "a key must be str, bytes or int, not bool");
        return -1;
    }
    if (pynd_key(obj, &out->key, &out->key_len, &keep) < 0) return -1;
    return keep ? hold_new(hold, keep) : 0;
}

static int text_of(PyObject *obj, pynd_rec *out, PyObject *hold)
{
    pynd_text t;
    if (!PyUnicode_Check(obj) && !PyBytes_Check(obj) && PyObject_CheckBuffer(obj)) {
        PyObject *b = PyBytes_FromObject(obj); /* a bytearray may change meanwhile */
        if (!b || hold_new(hold, b) < 0) return -1;
        obj = b;
    }
    if (pynd_text_get(obj, &t) < 0) return -1;
    out->text = t.ptr;
    out->text_len = t.len;
    if (t.keep) {
        PyObject *k = t.keep;
        t.keep = NULL;
        return hold_new(hold, k);
    }
    return 0;
}

static int hex_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A record's "fp": an int, or a str of 16 hex digits (the JSONL form). */
static int fp_of(PyObject *obj, uint64_t *out)
{
    if (!PyUnicode_Check(obj)) return pynd_fp(obj, out);
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(obj, &n);
    if (!s) return -1;
    uint64_t v = 0;
    for (Py_ssize_t i = 0; i < n && n == 16; i++) {
        int d = hex_digit((unsigned char)s[i]);
        if (d < 0) n = 0;
        v = v << 4 | (uint64_t)(d & 15);
    }
    if (n != 16) {
        PyErr_SetString(PyExc_ValueError, "fp: expected an int or a string of 16 hex digits");
        return -1;
    }
    *out = v;
    return 0;
}

/* The second member of a tuple: an int is a fingerprint, else a text. */
static int fp_or_text(PyObject *obj, pynd_rec *out, PyObject *hold)
{
    if (PyUnicode_Check(obj) || PyObject_CheckBuffer(obj)) return text_of(obj, out, hold);
    return pynd_fp(obj, &out->fp);
}

static int time_of(PyObject *obj, pynd_rec *out)
{
    if (!obj || obj == Py_None) return 0;
    out->has_time = 1;
    return pynd_time(obj, &out->time);
}

static int html_of(PyObject *obj, pynd_rec *out)
{
    if (!obj || obj == Py_None) return 0;
    int on = PyObject_IsTrue(obj);
    if (on < 0) return -1;
    out->html = on;
    return 0;
}

/* ---- the record ------------------------------------------------------------------- */

static int from_tuple(PyObject *t, Py_ssize_t index, unsigned what, pynd_rec *out,
                      PyObject *hold)
{
    Py_ssize_t m = PyTuple_GET_SIZE(t), most = what & PYND_REC_DB ? 5 : 3;
    PyObject **f = &PyTuple_GET_ITEM(t, 0);
    if (m < 2 || m > most) {
        PyErr_Format(PyExc_TypeError, "records[%zd]: expected %s, got a tuple of %zd", index,
                     what & PYND_REC_DB ? "(key, fingerprint or text[, score[, time[, sketch]]])"
                                        : "(key, text[, score])",
                     m);
        return -1;
    }
    if (key_of(f[0], out, hold) < 0 || fp_or_text(f[1], out, hold) < 0 ||
        pynd_score(m > 2 ? f[2] : NULL, &out->score) < 0 || time_of(m > 3 ? f[3] : NULL, out) < 0)
        return pynd_record_error(index);
    if (m > 4 && f[4] != Py_None) out->sketch = f[4]; /* held by the tuple */
    return 0;
}

static int from_fields(PyObject *item, int is_dict, Py_ssize_t index, unsigned what,
                       pynd_rec *out, PyObject *hold)
{
    PyObject *v[NFIELDS] = {NULL};
    int rc = -1, last = what & PYND_REC_DB ? F_SKETCH : F_HTML;
    for (int f = 0; f <= last; f++) {
        if (f == F_TIME && !(what & PYND_REC_DB)) continue; /* a dedupe has no times */
        if (!(v[f] = field(item, is_dict, f)) && PyErr_Occurred()) goto done;
    }
    if (!v[F_ID] || (!v[F_TEXT] && !v[F_FP])) {
        if (is_dict)
            PyErr_Format(PyExc_TypeError, "records[%zd]: the dict has no %s", index,
                         !v[F_ID] ? "\"id\"" : "\"text\" nor \"fp\"");
        else
            PyErr_Format(PyExc_TypeError, "records[%zd]: the %.100s has no %s", index,
                         Py_TYPE(item)->tp_name, !v[F_ID] ? ".id" : ".text nor .fp");
        goto done;
    }
    if (v[F_TEXT] && v[F_FP]) {
        PyErr_Format(PyExc_TypeError, "records[%zd]: give either text or fp, not both", index);
        goto done;
    }
    if (key_of(v[F_ID], out, hold) < 0 ||
        (v[F_TEXT] ? text_of(v[F_TEXT], out, hold) : fp_of(v[F_FP], &out->fp)) < 0 ||
        pynd_score(v[F_SCORE], &out->score) < 0 || time_of(v[F_TIME], out) < 0 ||
        html_of(v[F_HTML], out) < 0) {
        pynd_record_error(index);
        goto done;
    }
    if (v[F_SKETCH]) {
        if (PyList_Append(hold, v[F_SKETCH]) < 0) goto done;
        out->sketch = v[F_SKETCH];
    }
    rc = 0;
done:
    for (int f = 0; f < NFIELDS; f++) Py_XDECREF(v[f]);
    return rc;
}

int pynd_record(PyObject *item, Py_ssize_t index, unsigned what, pynd_rec *out,
                PyObject *hold)
{
    memset(out, 0, sizeof *out);
    out->html = -1;
    if (PyList_Append(hold, item) < 0) return -1; /* what out points into */
    if (PyTuple_CheckExact(item)) return from_tuple(item, index, what, out, hold);
    if (PyList_CheckExact(item)) { /* a copy: the list could change meanwhile */
        PyObject *t = PyList_AsTuple(item);
        if (!t || hold_new(hold, t) < 0) return -1;
        return from_tuple(t, index, what, out, hold);
    }
    if (PyDict_Check(item)) return from_fields(item, 1, index, what, out, hold);
    if (PyUnicode_Check(item) || PyObject_CheckBuffer(item) || PyLong_Check(item))
        return shape_error(item, index, what);
    int has_id = PyObject_HasAttr(item, field_str[F_ID]);
    if (!has_id && PyTuple_Check(item)) { /* a named tuple without .id */
        PyObject *t = PySequence_Tuple(item);
        if (!t || hold_new(hold, t) < 0) return -1;
        return from_tuple(t, index, what, out, hold);
    }
    if (!has_id) return shape_error(item, index, what);
    return from_fields(item, 0, index, what, out, hold);
}

/* ---- groups: pace, signals, progress ------------------------------------------------- */

double pynd_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds of library work a group is sized for: signals are seen within
 * about twice that. */
#define PACE_SECS 0.05

void pynd_pace_init(pynd_pace *p, size_t min, size_t max)
{
    p->group = p->min = min;
    p->max = max;
}

void pynd_pace_done(pynd_pace *p, size_t n, double secs)
{
    if (n == 0) return;
    double want = secs > 0 ? (double)n * PACE_SECS / secs : (double)p->max;
    size_t g = want >= (double)p->max ? p->max : want <= (double)p->min ? p->min : (size_t)want;
    if (g > 2 * p->group) g = 2 * p->group; /* grow gradually, shrink at once */
    p->group = g;
}

/* n with thousands separators: "1,200,000". */
static void with_commas(char *buf, size_t cap, unsigned long long n)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", n), o = 0;
    for (int i = 0; i < len && (size_t)o + 2 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

void pynd_note(size_t done, Py_ssize_t total, const char *what, const char *detail)
{
    PyObject *type, *value, *tb;
    if (!PyErr_Occurred()) return;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (!value) {
        PyErr_Restore(type, value, tb);
        return;
    }
    PyObject *c = PyLong_FromSize_t(done);
    PyObject *t = total >= 0 ? PyLong_FromSsize_t(total) : Py_NewRef(Py_None);
    if (!c || !t || PyObject_SetAttrString(value, "committed", c) < 0 ||
        PyObject_SetAttrString(value, "total", t) < 0)
        PyErr_Clear(); /* an exception without attributes: left as it is */
    Py_XDECREF(c);
    Py_XDECREF(t);
    PyObject *args = PyObject_GetAttrString(value, "args");
    if (args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 0 &&
        PyErr_GivenExceptionMatches(value, PyExc_KeyboardInterrupt)) {
        char a[32], b[32], msg[300];
        with_commas(a, sizeof a, done);
        with_commas(b, sizeof b, (unsigned long long)(total >= 0 ? total : 0));
        if (total >= 0)
            snprintf(msg, sizeof msg, "interrupted: %s of %s documents %s%s%s", a, b, what,
                     detail ? "; " : "", detail ? detail : "");
        else
            snprintf(msg, sizeof msg, "interrupted: %s documents %s%s%s", a, what,
                     detail ? "; " : "", detail ? detail : "");
        PyObject *m = Py_BuildValue("(s)", msg);
        if (!m || PyObject_SetAttrString(value, "args", m) < 0) PyErr_Clear();
        Py_XDECREF(m);
    }
    if (!args) PyErr_Clear();
    Py_XDECREF(args);
    PyErr_Restore(type, value, tb);
}

int pynd_check_signals(size_t done, Py_ssize_t total, const char *what, const char *detail)
{
    if (PyErr_CheckSignals() == 0) return 0;
    pynd_note(done, total, what, detail);
    return -1;
}
