/*
 * py_db.c — neardup.Database: one nd_db handle, its open, close and the
 * calls on single documents and on the whole store.
 *
 * Threads: the handle is thread-safe (neardup.h), so every call releases
 * the GIL around the library call and threads run their calls at once.
 * `users` counts the calls running without the GIL (it changes only while
 * the GIL is held); close() first refuses new calls (`closing`), stops the
 * document iterators, waits until `users` is 0, then closes the handle. So
 * a call racing close() either completes or raises InvalidArgumentError
 * ("database is closed"); it never touches a freed handle.
 *
 * Lifetime: a Database dropped without close() is closed by its finalizer
 * (with a ResourceWarning, as an unclosed file); the handle, its lock and
 * its memory are freed then.
 */
#include "py_neardup.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- calls and their result lists ------------------------------------- */

static PyObject *raise_closed(void)
{
    return pynd_raise_msg(ND_EINVAL, "the database is closed");
}

int pynd_db_enter(pynd_db *self)
{
    if (!self->db || self->closing) {
        raise_closed();
        return -1;
    }
    self->users++;
    return 0;
}

void pynd_db_leave(pynd_db *self) { self->users--; }

nd_results *pynd_db_enter_results(pynd_db *self)
{
    if (pynd_db_enter(self) < 0) return NULL;
    nd_results *res = pynd_db_results(self);
    if (!res) pynd_db_leave(self);
    return res;
}

nd_results *pynd_db_results(pynd_db *self)
{
    if (self->ncache > 0) return self->cache[--self->ncache];
    nd_results *res = NULL;
    if (nd_results_new(&res) < 0) PyErr_NoMemory();
    return res;
}

/* Lists that held more matches than this are freed, not kept: a cached
 * list keeps its capacity. */
#define RESULTS_CACHE_MAX_MATCHES 4096

void pynd_db_results_done(pynd_db *self, nd_results *res)
{
    if (!res) return;
    if (self->ncache < PYND_RESULTS_CACHE &&
        nd_results_count(res) <= RESULTS_CACHE_MAX_MATCHES) {
        nd_results_clear(res);
        self->cache[self->ncache++] = res;
    } else {
        nd_results_free(res);
    }
}

void pynd_nap(void)
{
    Py_BEGIN_ALLOW_THREADS
    usleep(1000);
    Py_END_ALLOW_THREADS
}

/* Close the handle: refuse new calls, stop the iterators, wait for the
 * calls in progress. @return nd_db_close's code (0 when already closed). */
static int close_handle(pynd_db *self)
{
    if (self->closing) { /* another thread closes it: wait for that */
        while (self->db) pynd_nap();
        return 0;
    }
    if (!self->db) return 0;
    self->closing = 1;
    pynd_db_stop_iters(self);
    while (self->users > 0) pynd_nap();
    pynd_db_drop_loader(self); /* a load() between groups: it raises next */
    nd_db *db = self->db;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_close(db);
    Py_END_ALLOW_THREADS
    self->db = NULL;
    while (self->ncache > 0) nd_results_free(self->cache[--self->ncache]);
    return rc;
}

/* ---- open and close --------------------------------------------------- */

/* The handle's nd_progress_cb: the signal handlers run (Ctrl-C's
 * KeyboardInterrupt), and a raised exception stops the call (1), which
 * then returns with it pending on this thread. */
static int signals_seen(const nd_progress *p, void *payload)
{
    (void)p;
    (void)payload;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() < 0;
    PyGILState_Release(g);
    return stop;
}

static int db_init(pynd_db *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"path", "create", "exclusive", "k", "docs", "tables", "sync",
                             "readonly", "mmap", "background", "cache_bytes",
                             "fold_threshold", "run_size", "features", "cjk_bigrams",
                             "title_weight", "stopwords", "bytes_keys", "min_resemblance",
                             "fingerprint_only", "fold_chinese", NULL};
    PyObject *path = NULL, *k = NULL, *docs = NULL, *tables = NULL, *cache = NULL,
             *fold = NULL, *run = NULL, *features = NULL, *cjk = NULL, *title = NULL,
             *stop = NULL, *keep = NULL, *encoded = NULL, *minres = NULL, *fold_zh = NULL;
    int create = 0, excl = 0, sync = 0, readonly = 0, mmap = 0, background = 1,
        bytes_keys = 0, fp_only = 0;
    if (self->db || self->path) {
        PyErr_SetString(PyExc_RuntimeError, "Database.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|p$pOOOppppOOOOOOOpOpO", kwlist,
                                     PyUnicode_FSDecoder, &path, &create, &excl, &k, &docs,
                                     &tables, &sync, &readonly, &mmap, &background, &cache,
                                     &fold, &run, &features, &cjk, &title, &stop,
                                     &bytes_keys, &minres, &fp_only, &fold_zh))
        return -1;
    nd_db_options o;
    nd_fp_options fp;
    uint64_t v;
    int rc = -1;
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    o.flags = (create ? ND_DB_CREATE : 0) | (excl ? ND_DB_EXCL : 0) | (sync ? ND_DB_SYNC : 0) |
              (readonly ? ND_DB_READONLY : 0) | (mmap ? ND_DB_MMAP : 0) |
              (background ? 0 : ND_DB_NO_BACKGROUND) | (fp_only ? ND_DB_FINGERPRINT_ONLY : 0);
    if (k && k != Py_None) {
        if (pynd_k(k, 0, &o.k) < 0) goto cleanup;
        o.has_k = 1;
    }
    if (pynd_u64(docs, "docs", &o.expected_docs) < 0 ||
        pynd_u64(cache, "cache_bytes", &o.cache_bytes) < 0 ||
        pynd_u64(fold, "fold_threshold", &o.fold_threshold) < 0)
        goto cleanup;
    v = 0;
    if (pynd_u64(tables, "tables", &v) < 0) goto cleanup;
    o.tables = v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
    v = 0;
    if (pynd_u64(run, "run_size", &v) < 0) goto cleanup;
    o.run_size = v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
    if (minres && minres != Py_None) {
        o.min_resemblance = PyFloat_AsDouble(minres);
        if (o.min_resemblance == -1.0 && PyErr_Occurred()) goto cleanup;
        if (!(o.min_resemblance > 0 && o.min_resemblance <= 1)) {
            PyErr_SetString(PyExc_ValueError, "min_resemblance must be in (0, 1]");
            goto cleanup;
        }
    }
    if ((features && features != Py_None) || (cjk && cjk != Py_None) ||
        (title && title != Py_None) || (stop && stop != Py_None) ||
        (fold_zh && fold_zh != Py_None)) {
        if (pynd_fp_options(&fp, features, cjk, title, stop, fold_zh, &keep) < 0) goto cleanup;
        o.fp = &fp;
    }
    encoded = PyUnicode_EncodeFSDefault(path);
    if (!encoded) goto cleanup;
    const char *cpath = PyBytes_AS_STRING(encoded);
    nd_db *db = NULL;
    int nrc;
    Py_BEGIN_ALLOW_THREADS
    nrc = nd_db_open(&db, cpath, &o);
    Py_END_ALLOW_THREADS
    if (nrc < 0) {
        pynd_raise(nrc);
        goto cleanup;
    }
    nd_plan_info plan;
    nd_db_plan(&plan, db);
    nd_db_set_progress(db, signals_seen, NULL); /* Ctrl-C stops the long calls */
    self->db = db;
    self->k = plan.k;
    self->readonly = readonly;
    self->bytes_keys = bytes_keys;
    self->path = Py_NewRef(path);
    rc = 0;
cleanup:
    Py_XDECREF(encoded);
    Py_XDECREF(keep);
    Py_XDECREF(path);
    return rc;
}

static void db_finalize(PyObject *obj)
{
    pynd_db *self = (pynd_db *)obj;
    if (!self->db) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyErr_ResourceWarning(obj, 1, "unclosed neardup.Database %R", self->path) < 0)
        PyErr_WriteUnraisable(obj);
    close_handle(self);
    PyErr_Restore(type, value, tb);
}

static void db_dealloc(pynd_db *self)
{
    if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0) return; /* resurrected */
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    while (self->ncache > 0) nd_results_free(self->cache[--self->ncache]);
    Py_CLEAR(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *db_close(pynd_db *self, PyObject *unused)
{
    (void)unused;
    int rc = close_handle(self);
    if (rc < 0) return pynd_raise(rc);
    Py_RETURN_NONE;
}

static PyObject *db_enter_ctx(pynd_db *self, PyObject *unused)
{
    (void)unused;
    if (!self->db || self->closing) return raise_closed();
    return Py_NewRef(self);
}

static PyObject *db_exit_ctx(pynd_db *self, PyObject *args)
{
    (void)args;
    return db_close(self, NULL);
}

/* ---- single documents --------------------------------------------------- */

static PyObject *db_add(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    static const char *const names[] = {"key", "fingerprint", "score", "time", NULL};
    PyObject *a[4], *keep = NULL;
    const char *key;
    size_t klen;
    uint64_t fp;
    double score;
    int64_t t;
    int rc;
    if (pynd_parse("add", args, nargs, kwnames, names, 2, 4, a) < 0 ||
        pynd_fp(a[1], &fp) < 0 || pynd_score(a[2], &score) < 0 || pynd_time(a[3], &t) < 0 ||
        pynd_key(a[0], &key, &klen, &keep) < 0)
        return NULL;
    if (pynd_db_enter(self) < 0) {
        Py_XDECREF(keep);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_add(self->db, key, klen, fp, score, t);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    Py_XDECREF(keep);
    if (rc < 0) return pynd_raise(rc);
    Py_RETURN_NONE;
}

static PyObject *db_add_if_new(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static const char *const names[] = {"key", "fingerprint", "k", "score", "time", NULL};
    PyObject *a[5], *keep = NULL, *ret = NULL;
    const char *key;
    size_t klen;
    uint64_t fp;
    unsigned k;
    double score;
    int64_t t;
    int rc;
    if (pynd_parse("add_if_new", args, nargs, kwnames, names, 2, 5, a) < 0 ||
        pynd_fp(a[1], &fp) < 0 || pynd_k(a[2], self->k, &k) < 0 ||
        pynd_score(a[3], &score) < 0 || pynd_time(a[4], &t) < 0 ||
        pynd_key(a[0], &key, &klen, &keep) < 0)
        return NULL;
    nd_results *res = pynd_db_enter_results(self);
    if (!res) {
        Py_XDECREF(keep);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_add_if_new(res, self->db, key, klen, fp, score, t, k);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    if (rc < 0) pynd_raise(rc);
    else if (nd_results_count(res) == 0) ret = Py_NewRef(Py_None);
    else ret = pynd_match_new(nd_results_get(res, 0), self->bytes_keys);
    pynd_db_results_done(self, res);
    Py_XDECREF(keep);
    return ret;
}

static PyObject *db_query(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    static const char *const names[] = {"fingerprint", "k", "limit", "first",
                                        "fingerprints_only", NULL};
    PyObject *a[5], *list = NULL;
    uint64_t fp, limit = 0;
    unsigned k;
    int rc;
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    if (pynd_parse("query", args, nargs, kwnames, names, 1, 3, a) < 0 || pynd_fp(a[0], &fp) < 0 ||
        pynd_k(a[1], self->k, &k) < 0 || pynd_u64(a[2], "limit", &limit) < 0)
        return NULL;
    for (int i = 3; i < 5; i++) {
        int on = a[i] ? PyObject_IsTrue(a[i]) : 0;
        if (on < 0) return NULL;
        if (on) qo.flags |= i == 3 ? ND_QUERY_FIRST : ND_QUERY_FP_ONLY;
    }
    qo.limit = (size_t)limit;
    nd_results *res = pynd_db_enter_results(self);
    if (!res) return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_query(res, self->db, fp, k, &qo);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    if (rc < 0) {
        pynd_raise(rc);
    } else {
        size_t n = nd_results_count(res);
        list = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; list && i < n; i++) {
            PyObject *m = pynd_match_new(nd_results_get(res, i), self->bytes_keys);
            if (!m) Py_CLEAR(list);
            else PyList_SET_ITEM(list, (Py_ssize_t)i, m);
        }
    }
    pynd_db_results_done(self, res);
    return list;
}

/* nd_db_get of key into a Document, None when not stored (found_only: True or
 * False instead). */
static PyObject *get_doc(pynd_db *self, PyObject *keyobj, int found_only)
{
    PyObject *keep = NULL, *ret = NULL;
    const char *key;
    size_t klen;
    int rc;
    if (pynd_key(keyobj, &key, &klen, &keep) < 0) return NULL;
    nd_results *res = pynd_db_enter_results(self);
    if (!res) {
        Py_XDECREF(keep);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_get(res, self->db, key, klen);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    if (rc == ND_ENOTFOUND) {
        ret = Py_NewRef(found_only ? Py_False : Py_None);
    } else if (rc < 0) {
        pynd_raise(rc);
    } else if (found_only) {
        ret = Py_NewRef(Py_True);
    } else {
        const nd_match *m = nd_results_get(res, 0);
        ret = pynd_document_new(m->key, m->key_len, m->fp, m->score, m->time, self->bytes_keys);
    }
    pynd_db_results_done(self, res);
    Py_XDECREF(keep);
    return ret;
}

static PyObject *db_get(pynd_db *self, PyObject *key) { return get_doc(self, key, 0); }

static int db_contains(PyObject *self, PyObject *key)
{
    PyObject *found = get_doc((pynd_db *)self, key, 1);
    if (!found) return -1;
    int r = found == Py_True;
    Py_DECREF(found);
    return r;
}

static PyObject *db_delete(pynd_db *self, PyObject *keyobj)
{
    PyObject *keep = NULL;
    const char *key;
    size_t klen;
    int rc;
    if (pynd_key(keyobj, &key, &klen, &keep) < 0) return NULL;
    if (pynd_db_enter(self) < 0) {
        Py_XDECREF(keep);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_delete(self->db, key, klen);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    Py_XDECREF(keep);
    if (rc < 0) return pynd_raise(rc);
    Py_RETURN_NONE;
}

/* ---- the whole store -------------------------------------------------- */


static PyObject *db_expire(pynd_db *self, PyObject *before)
{
    int64_t t;
    uint64_t deleted = 0;
    int rc;
    if (before == Py_None) {
        PyErr_SetString(PyExc_TypeError, "expire() needs a time or a timedelta, not None");
        return NULL;
    }
    if (PyObject_HasAttrString(before, "total_seconds")) { /* a timedelta: now - it */
        PyObject *secs = PyObject_CallMethod(before, "total_seconds", NULL);
        double d = secs ? PyFloat_AsDouble(secs) : -1.0;
        Py_XDECREF(secs);
        if (d == -1.0 && PyErr_Occurred()) return NULL;
        PyObject *when = PyFloat_FromDouble((double)time(NULL) - d);
        rc = when ? pynd_time(when, &t) : -1;
        Py_XDECREF(when);
        if (rc < 0) return NULL;
    } else if (pynd_time(before, &t) < 0) {
        return NULL;
    }
    if (pynd_db_enter(self) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_expire(&deleted, self->db, t);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    if (rc > 0) { /* stopped by a signal: what was deleted is gone */
        pynd_note((size_t)deleted, -1, "expired", NULL);
        return NULL;
    }
    if (rc < 0) return pynd_raise(rc);
    return PyLong_FromUnsignedLongLong(deleted);
}

/* A call on the whole store with nothing to return: compact, verify. */
static PyObject *whole_store(pynd_db *self, int (*call)(nd_db *))
{
    int rc;
    if (pynd_db_enter(self) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = call(self->db);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    if (rc > 0) return NULL; /* stopped by a signal (signals_seen): its exception */
    if (rc < 0) return pynd_raise(rc);
    Py_RETURN_NONE;
}

static PyObject *db_compact(pynd_db *self, PyObject *unused)
{
    (void)unused;
    return whole_store(self, nd_db_compact);
}

static PyObject *db_verify(pynd_db *self, PyObject *unused)
{
    (void)unused;
    return whole_store(self, nd_db_verify);
}

static PyObject *db_backup(pynd_db *self, PyObject *dir)
{
    PyObject *encoded = NULL;
    int rc;
    if (!PyUnicode_FSConverter(dir, &encoded)) return NULL;
    if (pynd_db_enter(self) < 0) {
        Py_DECREF(encoded);
        return NULL;
    }
    const char *cdir = PyBytes_AS_STRING(encoded);
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_backup(self->db, cdir);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    Py_DECREF(encoded);
    if (rc < 0) return pynd_raise(rc);
    Py_RETURN_NONE;
}

/* Set d[name] = an unsigned or float value; -1 on failure. */
static int put_u64(PyObject *d, const char *name, uint64_t v)
{
    PyObject *o = PyLong_FromUnsignedLongLong(v);
    int r = o ? PyDict_SetItemString(d, name, o) : -1;
    Py_XDECREF(o);
    return r;
}

static int put_float(PyObject *d, const char *name, double v)
{
    PyObject *o = PyFloat_FromDouble(v);
    int r = o ? PyDict_SetItemString(d, name, o) : -1;
    Py_XDECREF(o);
    return r;
}

static PyObject *stats_dict(const nd_stats *s)
{
    PyObject *d = PyDict_New(), *tables = PyList_New(0);
    int bad = !d || !tables || put_u64(d, "documents", s->documents) < 0 ||
              put_u64(d, "fingerprints", s->fingerprints) < 0 ||
              put_u64(d, "disk_bytes", s->disk_bytes) < 0 ||
              PyDict_SetItemString(d, "tables", tables) < 0;
    for (unsigned i = 0; !bad && i < s->tables; i++) {
        const nd_table_stats *t = &s->table[i];
        PyObject *td = PyDict_New();
        bad = !td || put_u64(td, "prefix_bits", t->prefix_bits) < 0 ||
              put_u64(td, "entries", t->entries) < 0 || put_u64(td, "runs", t->runs) < 0 ||
              put_u64(td, "fresh", t->fresh) < 0 || put_u64(td, "bytes", t->bytes) < 0 ||
              put_float(td, "bits_per_entry", t->bits_per_entry) < 0 ||
              PyList_Append(tables, td) < 0;
        Py_XDECREF(td);
    }
    Py_XDECREF(tables);
    if (bad) Py_CLEAR(d);
    return d;
}

static PyObject *db_stats(pynd_db *self, PyObject *unused)
{
    (void)unused;
    nd_stats *s = PyMem_Malloc(sizeof *s); /* 3 KB: not on the stack of a thread */
    int rc;
    if (!s) return PyErr_NoMemory();
    if (pynd_db_enter(self) < 0) {
        PyMem_Free(s);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = nd_db_stats(s, self->db);
    Py_END_ALLOW_THREADS
    pynd_db_leave(self);
    PyObject *d = rc < 0 ? pynd_raise(rc) : stats_dict(s);
    PyMem_Free(s);
    return d;
}

static Py_ssize_t db_len(PyObject *obj)
{
    pynd_db *self = (pynd_db *)obj;
    uint64_t docs = 0;
    if (!self->db || self->closing) {
        raise_closed();
        return -1;
    }
    int rc = nd_db_counts(&docs, NULL, self->db);
    if (rc < 0) {
        pynd_raise(rc);
        return -1;
    }
    return (Py_ssize_t)docs;
}

static PyObject *db_fingerprint(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    static const char *const names[] = {"text", "html", NULL};
    PyObject *a[2];
    nd_fp_options opts;
    if (pynd_parse("fingerprint", args, nargs, kwnames, names, 1, 2, a) < 0) return NULL;
    int html = a[1] ? PyObject_IsTrue(a[1]) : 0;
    if (html < 0 || pynd_db_enter(self) < 0) return NULL;
    nd_db_fp_options(&opts, self->db); /* stop words point into the handle */
    if (html) opts.flags |= ND_FP_HTML;
    PyObject *fp = pynd_fingerprint_of(a[0], &opts);
    pynd_db_leave(self);
    return fp;
}

/* ---- attributes ------------------------------------------------------- */

static PyObject *db_get_closed(pynd_db *self, void *c)
{
    (void)c;
    return PyBool_FromLong(!self->db || self->closing);
}

static PyObject *db_get_path(pynd_db *self, void *c)
{
    (void)c;
    return Py_NewRef(self->path ? self->path : Py_None);
}

static PyObject *db_get_k(pynd_db *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLong(self->k);
}

static PyObject *db_get_readonly(pynd_db *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->readonly);
}

static PyObject *db_get_bytes_keys(pynd_db *self, void *c)
{
    (void)c;
    return PyBool_FromLong(self->bytes_keys);
}

static PyObject *db_get_fp_config(pynd_db *self, void *c)
{
    char buf[256];
    nd_fp_options opts;
    (void)c;
    if (pynd_db_enter(self) < 0) return NULL;
    nd_db_fp_options(&opts, self->db);
    int rc = nd_fp_config_string(buf, sizeof buf, &opts);
    pynd_db_leave(self);
    if (rc < 0) return pynd_raise(rc);
    return PyUnicode_FromString(buf);
}

static PyObject *db_repr(pynd_db *self)
{
    if (!self->path) return PyUnicode_FromString("<neardup.Database (not opened)>");
    return PyUnicode_FromFormat("<neardup.Database %R k=%u%s%s>", self->path, self->k,
                                self->readonly ? " readonly" : "",
                                self->db && !self->closing ? "" : " closed");
}

/* ---- the type --------------------------------------------------------- */

#define FAST(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

/* Docstrings start with a text signature: inspect.signature() reads it. */
#define SIG(name, args, doc) name "($self" args ")\n--\n\n" doc

static PyMethodDef db_methods[] = {
    {"close", (PyCFunction)db_close, METH_NOARGS,
     SIG("close", "", "Close the store; waits for other threads' calls in progress.")},
    {"add", FAST(db_add),
     SIG("add", ", key, fingerprint, score=0.0, time=None",
         "Store (or replace) a document without the near-duplicate check.")},
    {"add_if_new", FAST(db_add_if_new),
     SIG("add_if_new", ", key, fingerprint, k=None, score=0.0, time=None",
         "Store the document unless one within k bits is stored: None when stored, "
         "else the closest Match.")},
    {"add_many", FAST(pynd_db_add_many),
     SIG("add_many", ", documents, *, html=False",
         "Store records (tuples, dicts or objects; texts are signed) without the check, "
         "in atomic groups (one for up to 256 documents).")},
    {"load", FAST(pynd_db_load),
     SIG("load", ", records, *, html=False",
         "The bulk load (nd_loader, as `neardup import`): store records without the check, "
         "committed at the end; returns the number of documents new to the store.")},
    {"sign_many", FAST(pynd_db_sign_many),
     SIG("sign_many", ", texts, html=False",
         "[(fingerprint, sketch), ...] of texts, signed in groups with the GIL released.")},
    {"query", FAST(db_query),
     SIG("query", ", fingerprint, k=None, limit=None, *, first=False, fingerprints_only=False",
         "Every stored document within k bits, closest first (a list of Match).")},
    {"batch", FAST(pynd_db_batch),
     SIG("batch", ", documents, k=None, add=False, *, html=False",
         "Check documents against the store and each other: None (new) or a BatchMatch "
         "each.")},
    {"get", (PyCFunction)db_get, METH_O,
     SIG("get", ", key, /", "The stored Document of key, or None.")},
    {"delete", (PyCFunction)db_delete, METH_O,
     SIG("delete", ", key, /", "Delete a document (NotFoundError when not stored).")},
    {"expire", (PyCFunction)db_expire, METH_O,
     SIG("expire", ", before, /",
         "Delete documents last seen before a time or a timedelta ago; returns how many.")},
    {"stats", (PyCFunction)db_stats, METH_NOARGS,
     SIG("stats", "", "Documents, fingerprints, disk bytes and per-table figures (a dict).")},
    {"compact", (PyCFunction)db_compact, METH_NOARGS,
     SIG("compact", "", "Fold fresh inserts into runs and compact the files.")},
    {"verify", (PyCFunction)db_verify, METH_NOARGS,
     SIG("verify", "", "Check every invariant (CorruptError names the first problem).")},
    {"backup", (PyCFunction)db_backup, METH_O,
     SIG("backup", ", directory, /", "Write a consistent checkpoint into a new directory.")},
    {"sign", FAST(pynd_db_sign),
     SIG("sign", ", text, html=False",
         "(fingerprint, sketch): a text's fingerprint and its resemblance sketch (176 bytes) "
         "under the store's options, from one tokenisation (nd_db_sign).")},
    {"add_text", FAST(pynd_db_add_text),
     SIG("add_text", ", key, text, score=0.0, time=None, *, html=False",
         "Store the document of a text (with its sketch in a store created with "
         "min_resemblance), without the near-duplicate check.")},
    {"add_if_new_text", FAST(pynd_db_add_if_new_text),
     SIG("add_if_new_text", ", key, text, k=None, score=0.0, time=None, *, html=False",
         "The check-then-insert of a text: None when new, else its best near-duplicate "
         "(a Match; .resemblance in a store created with min_resemblance, which stores "
         "every document).")},
    {"query_text", FAST(pynd_db_query_text),
     SIG("query_text", ", text, k=None, limit=None, *, html=False",
         "The stored near-duplicates of a text as add_if_new_text finds them, best first "
         "(a list of Match).")},
    {"fingerprint", FAST(db_fingerprint),
     SIG("fingerprint", ", text, html=False", "fingerprint() under the store's options.")},
    {"__enter__", (PyCFunction)db_enter_ctx, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)db_exit_ctx, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef db_getset[] = {
    {"closed", (getter)db_get_closed, NULL, "True once close() began", NULL},
    {"path", (getter)db_get_path, NULL, "the database directory (str)", NULL},
    {"min_resemblance", (getter)pynd_db_get_min_resemblance, NULL,
     "the store's resemblance threshold; 0.0 for a fingerprint-only store", NULL},
    {"k", (getter)db_get_k, NULL, "the design distance: the default k of queries", NULL},
    {"readonly", (getter)db_get_readonly, NULL, "opened with readonly=True", NULL},
    {"bytes_keys", (getter)db_get_bytes_keys, NULL, "keys are returned as bytes", NULL},
    {"fp_config", (getter)db_get_fp_config, NULL,
     "the stored fingerprint configuration, e.g. 'fp2;shingles:3;nfkc-cf;...'", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods db_as_sequence = {
    .sq_length = db_len,
    .sq_contains = db_contains,
};

PyTypeObject pynd_DatabaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "neardup.Database",
    .tp_basicsize = sizeof(pynd_db),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Database(path, create=False, *, exclusive=False, k=None, docs=None, "
              "tables=None, sync=False, readonly=False, mmap=False, background=True, "
              "cache_bytes=None, fold_threshold=None, run_size=None, features=None, "
              "cjk_bigrams=None, title_weight=None, stopwords=None, bytes_keys=False, "
              "min_resemblance=None, fingerprint_only=False, fold_chinese=None)\n--\n\n"
              "A neardup store: a directory holding one RocksDB database (neardup/__init__.pyi "
              "states every argument and method).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)db_init,
    .tp_finalize = db_finalize,
    .tp_dealloc = (destructor)db_dealloc,
    .tp_repr = (reprfunc)db_repr,
    .tp_iter = pynd_db_iter,
    .tp_as_sequence = &db_as_sequence,
    .tp_methods = db_methods,
    .tp_getset = db_getset,
    .tp_weaklistoffset = offsetof(pynd_db, weakrefs),
};
