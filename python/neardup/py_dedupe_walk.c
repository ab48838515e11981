/*
 * py_dedupe_walk.c — the results of a neardup.Dedupe: pairs(), clusters(),
 * keep() and drop() over the library's walks (nd_dedupe_pairs,
 * nd_dedupe_clusters, nd_dedupe_roles), and their result types Pair and
 * Cluster (struct sequences: named tuples built in C).
 *
 * The library works with the GIL released and hands results to callbacks.
 * A callback copies each result (its numbers, its keys into an arena) into
 * a buffer of WALK_RECS records without touching Python; when the buffer
 * is full the walk takes the GIL once, turns the records into Python
 * objects, checks for signals (Ctrl-C stops the walk) and releases the GIL
 * again. So the GIL is taken once per thousand results, not per result,
 * and the buffer stays small (a record and its keys) whatever the corpus.
 */
#include "py_neardup.h"

#include <string.h>

PyTypeObject *pynd_PairType;
PyTypeObject *pynd_ClusterType;

static PyStructSequence_Field pair_fields[] = {
    {"key1", "the earlier document's key (str, or bytes with bytes_keys=True)"},
    {"key2", "the later document's key"},
    {"distance", "bits between their fingerprints (int)"},
    {"resemblance", "resemblance estimated from their sketches (float), or None when a "
                    "document has no text (added by fingerprint)"},
    {"containment", "containment estimated when min_containment > 0 (float), else None"},
    {"by_containment", "True when only the containment made it a pair"},
    {"index1", "input position of the earlier document (0 = first added)"},
    {"index2", "input position of the later document"},
    {NULL, NULL},
};
static PyStructSequence_Desc pair_desc = {
    "neardup.Pair",
    "Two near-duplicate documents: (key1, key2, distance, resemblance, containment, "
    "by_containment, index1, index2).",
    pair_fields, 8};

static PyStructSequence_Field cluster_fields[] = {
    {"id", "the cluster's number: 1, 2, ... in keep order of the kept documents"},
    {"keep", "the kept document's key"},
    {"drop", "the dropped documents' keys, in input order (list)"},
    {"distances", "bits from each dropped document to the kept one (list of int)"},
    {"keep_index", "input position of the kept document"},
    {"drop_indexes", "input positions of the dropped documents (list of int)"},
    {NULL, NULL},
};
static PyStructSequence_Desc cluster_desc = {
    "neardup.Cluster",
    "A cluster of near-duplicates: (id, keep, drop, distances, keep_index, drop_indexes).",
    cluster_fields, 6};

int pynd_dedupe_types_init(PyObject *mod)
{
    pynd_PairType = PyStructSequence_NewType(&pair_desc);
    pynd_ClusterType = PyStructSequence_NewType(&cluster_desc);
    if (!pynd_PairType || !pynd_ClusterType || PyType_Ready(&pynd_DedupeType) < 0 ||
        PyModule_AddObjectRef(mod, "Pair", (PyObject *)pynd_PairType) < 0 ||
        PyModule_AddObjectRef(mod, "Cluster", (PyObject *)pynd_ClusterType) < 0 ||
        PyModule_AddObjectRef(mod, "Dedupe", (PyObject *)&pynd_DedupeType) < 0)
        return -1;
    return 0;
}

/* ---- the buffer of a walk ------------------------------------------------- */

typedef enum walk_view { VIEW_PAIRS, VIEW_CLUSTERS, VIEW_KEEP, VIEW_DROP } walk_view;

/* One result, copied out of a callback. */
typedef struct walk_rec {
    uint64_t a, b, c;    /* pair: documents a, b; member: cluster, doc, kept */
    double resemblance;  /* pair only */
    double containment;  /* pair only */
    unsigned dist;
    int flag;            /* pair: by_containment; member: role */
    size_t key1, len1;   /* offsets into the arena */
    size_t key2, len2;   /* pair only */
} walk_rec;

#define WALK_RECS 1024
#define WALK_ARENA (256u << 10) /* grows for a longer key */

typedef struct walk {
    walk_view view;
    int bytes_keys;
    PyThreadState *ts;   /* the saved thread state while the library runs */
    walk_rec *recs;
    size_t n;
    char *arena;
    size_t used, cap;
    PyObject *out;       /* list, or dict for clusters */
    PyObject *cluster;   /* borrowed from out: the cluster being filled */
    int failed;          /* a Python exception is set, or out of memory */
    int nomem;
} walk;

static PyObject *key_of(const walk *w, size_t off, size_t len)
{
    return pynd_key_object(w->arena + off, len, w->bytes_keys);
}

/* Append a new reference to list; consumes obj. */
static int append(PyObject *list, PyObject *obj)
{
    if (!obj) return -1;
    int rc = PyList_Append(list, obj);
    Py_DECREF(obj);
    return rc;
}

static PyObject *estimate(double v) { return v < 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(v); }

static PyObject *pair_object(const walk *w, const walk_rec *r)
{
    PyObject *seq = PyStructSequence_New(pynd_PairType);
    PyObject *items[8] = {key_of(w, r->key1, r->len1), key_of(w, r->key2, r->len2),
                          PyLong_FromUnsignedLong(r->dist), estimate(r->resemblance),
                          estimate(r->containment), PyBool_FromLong(r->flag),
                          PyLong_FromUnsignedLongLong(r->a),
                          PyLong_FromUnsignedLongLong(r->b)};
    int ok = seq != NULL;
    for (int i = 0; i < 8; i++) ok = ok && items[i];
    for (int i = 0; i < 8; i++) {
        if (ok) PyStructSequence_SET_ITEM(seq, i, items[i]);
        else Py_XDECREF(items[i]);
    }
    if (!ok) Py_CLEAR(seq);
    return seq;
}

/* A kept member opens a cluster in the dict; a dropped one joins the
 * cluster opened last (the library gives the kept member first). */
static int member_into_clusters(walk *w, const walk_rec *r)
{
    if (r->flag == ND_DEDUPE_ROLE_DROP) {
        if (!w->cluster) {
            pynd_raise_msg(ND_EINTERNAL, "dedupe: a dropped member came before its cluster");
            return -1;
        }
        if (append(PyStructSequence_GET_ITEM(w->cluster, 2), key_of(w, r->key1, r->len1)) < 0 ||
            append(PyStructSequence_GET_ITEM(w->cluster, 3), PyLong_FromUnsignedLong(r->dist)) < 0 ||
            append(PyStructSequence_GET_ITEM(w->cluster, 5), PyLong_FromUnsignedLongLong(r->b)) < 0)
            return -1;
        return 0;
    }
    PyObject *seq = PyStructSequence_New(pynd_ClusterType);
    PyObject *items[6] = {PyLong_FromUnsignedLongLong(r->a), key_of(w, r->key1, r->len1),
                          PyList_New(0), PyList_New(0), PyLong_FromUnsignedLongLong(r->b),
                          PyList_New(0)};
    int ok = seq != NULL;
    for (int i = 0; i < 6; i++) ok = ok && items[i];
    for (int i = 0; i < 6; i++) {
        if (ok) PyStructSequence_SET_ITEM(seq, i, Py_NewRef(items[i]));
        else Py_XDECREF(items[i]);
    }
    int rc = ok ? PyDict_SetItem(w->out, items[0], seq) : -1;
    if (ok)
        for (int i = 0; i < 6; i++) Py_DECREF(items[i]);
    Py_XDECREF(seq);
    w->cluster = rc == 0 ? seq : NULL; /* the dict holds it */
    return rc;
}

/* Turn the buffered records into Python objects (GIL held). */
static int drain(walk *w)
{
    int rc = 0;
    for (size_t i = 0; i < w->n && rc == 0; i++) {
        const walk_rec *r = &w->recs[i];
        switch (w->view) {
        case VIEW_PAIRS: rc = append(w->out, pair_object(w, r)); break;
        case VIEW_CLUSTERS: rc = member_into_clusters(w, r); break;
        default: rc = append(w->out, key_of(w, r->key1, r->len1)); break;
        }
    }
    w->n = 0;
    w->used = 0;
    if (rc == 0) rc = PyErr_CheckSignals();
    if (rc < 0) w->failed = 1;
    return rc;
}

/* Room for one more record with keys of `need` bytes: drains a full
 * buffer (taking the GIL for it), grows the arena for a long key.
 * Called without the GIL. @return 0, or -1 (w->failed set). */
static int make_room(walk *w, size_t need)
{
    if (w->n == WALK_RECS || w->used + need > w->cap) {
        PyEval_RestoreThread(w->ts);
        int rc = drain(w);
        w->ts = PyEval_SaveThread();
        if (rc < 0) return -1;
    }
    if (need > w->cap) {
        char *bigger = PyMem_RawRealloc(w->arena, need);
        if (!bigger) {
            w->failed = w->nomem = 1;
            return -1;
        }
        w->arena = bigger;
        w->cap = need;
    }
    return 0;
}

static size_t copy_key(walk *w, const char *key, size_t len)
{
    size_t off = w->used;
    if (len) memcpy(w->arena + off, key, len);
    w->used += len;
    return off;
}

static int on_pair(const nd_dedupe_pair *p, void *payload)
{
    walk *w = payload;
    if (make_room(w, p->key_a_len + p->key_b_len) < 0) return 1;
    walk_rec *r = &w->recs[w->n++];
    r->a = p->a;
    r->b = p->b;
    r->dist = p->dist;
    r->resemblance = p->resemblance;
    r->containment = p->containment;
    r->flag = p->by_containment;
    r->len1 = p->key_a_len;
    r->key1 = copy_key(w, p->key_a, p->key_a_len);
    r->len2 = p->key_b_len;
    r->key2 = copy_key(w, p->key_b, p->key_b_len);
    return 0;
}

static int on_member(const nd_dedupe_member *m, void *payload)
{
    walk *w = payload;
    if ((w->view == VIEW_KEEP && m->role != ND_DEDUPE_ROLE_KEEP) ||
        (w->view == VIEW_DROP && m->role != ND_DEDUPE_ROLE_DROP))
        return 0;
    if (make_room(w, m->key_len) < 0) return 1;
    walk_rec *r = &w->recs[w->n++];
    r->a = m->cluster;
    r->b = m->doc;
    r->c = m->kept;
    r->dist = m->dist;
    r->flag = (int)m->role;
    r->len1 = m->key_len;
    r->key1 = copy_key(w, m->key, m->key_len);
    return 0;
}

/* Run one walk of the library with the GIL released. */
static PyObject *run_walk(pynd_dedupe *self, walk_view view)
{
    walk w = {.view = view, .bytes_keys = self->bytes_keys, .cap = WALK_ARENA};
    if (pynd_dedupe_enter(self) < 0) return NULL;
    w.out = view == VIEW_CLUSTERS ? PyDict_New() : PyList_New(0);
    w.recs = PyMem_RawMalloc(WALK_RECS * sizeof *w.recs);
    w.arena = PyMem_RawMalloc(w.cap);
    int rc = ND_OK;
    if (!w.out || !w.recs || !w.arena) {
        if (w.out) PyErr_NoMemory();
        goto done;
    }
    nd_dedupe *dd = self->dd;
    w.ts = PyEval_SaveThread();
    switch (view) {
    case VIEW_PAIRS: rc = nd_dedupe_pairs(dd, on_pair, &w); break;
    case VIEW_CLUSTERS: rc = nd_dedupe_clusters(dd, on_member, &w); break;
    default: rc = nd_dedupe_roles(dd, on_member, &w); break;
    }
    PyEval_RestoreThread(w.ts);
    if (rc < 0) pynd_raise(rc); /* this thread's nd_errmsg, as the library left it */
    else if (w.nomem) PyErr_NoMemory();
    else if (!w.failed) drain(&w);
done:
    pynd_dedupe_leave(self);
    PyMem_RawFree(w.recs);
    PyMem_RawFree(w.arena);
    if (PyErr_Occurred()) Py_CLEAR(w.out);
    return w.out;
}

PyObject *pynd_dedupe_pairs(pynd_dedupe *self, PyObject *unused)
{
    (void)unused;
    return run_walk(self, VIEW_PAIRS);
}

PyObject *pynd_dedupe_clusters(pynd_dedupe *self, PyObject *unused)
{
    (void)unused;
    return run_walk(self, VIEW_CLUSTERS);
}

PyObject *pynd_dedupe_keep(pynd_dedupe *self, PyObject *unused)
{
    (void)unused;
    return run_walk(self, VIEW_KEEP);
}

PyObject *pynd_dedupe_drop(pynd_dedupe *self, PyObject *unused)
{
    (void)unused;
    return run_walk(self, VIEW_DROP);
}
