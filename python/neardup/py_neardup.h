/*
 * py_neardup.h — what the files of the `neardup._neardup` CPython extension
 * share: the exception classes, argument parsing and conversions
 * (py_util.c), records and the groups of long calls (py_records.c), the
 * result types (_neardup.c), the Database type (py_db.c, py_db_docs.c,
 * py_db_load.c, py_db_similar.c) and its document iterator (py_db_iter.c),
 * the Dedupe type and dedupe() (py_dedupe.c) with their results
 * (py_dedupe_walk.c).
 *
 * The extension is a thin layer over <neardup.h>, the only neardup header
 * it includes: every call converts its arguments while holding the GIL,
 * releases the GIL around the library call (the calls on many documents:
 * once per group, checking for signals between groups), and turns a
 * failure into neardup.Error (or a subclass per code) carrying
 * nd_strerror and nd_errmsg.
 */
#ifndef PY_NEARDUP_H
#define PY_NEARDUP_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <neardup.h>
#include <stdint.h>

/* ---- errors (py_util.c) ----------------------------------------------- */

/* neardup.Error, the base of every exception raised for a failure. */
extern PyObject *pynd_Error;

/* Create neardup.Error and its subclasses (one per nd_error code) and add
 * them to module. @return 0, or -1 with an exception set. */
int pynd_errors_init(PyObject *module);

/* Raise the exception of code rc (< 0) with message msg; returns NULL. */
PyObject *pynd_raise_msg(int rc, const char *msg);

/* Raise the exception of code rc with this thread's nd_errmsg(); call it on
 * the thread that made the failed library call. Returns NULL. */
PyObject *pynd_raise(int rc);

/* ---- argument parsing (py_util.c) --------------------------------------- */

/* Sort the arguments of a METH_FASTCALL | METH_KEYWORDS call into out[i],
 * one slot per name of names (NULL-terminated); a slot not given stays
 * NULL. The first `required` names must be given; positional arguments
 * fill the first slots, and at most `positional` of them are accepted.
 * The references are borrowed. @return 0, or -1 with TypeError set. */
int pynd_parse(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
               const char *const *names, int required, int positional, PyObject **out);

/* ---- conversions (py_util.c) -------------------------------------------- */

/* Bytes of a key: a str (UTF-8; lone surrogates U+DC80..U+DCFF, as
 * os.fsdecode makes them, become the bytes they escape) or a bytes-like
 * object. *keep receives a new reference to hold while ptr is used (NULL
 * when obj itself holds the bytes). @return 0, or -1 with an exception. */
int pynd_key(PyObject *obj, const char **ptr, size_t *len, PyObject **keep);

/* A stored key as a Python object: bytes when as_bytes, else str decoded
 * from UTF-8 with surrogateescape (so every key round-trips). */
PyObject *pynd_key_object(const char *key, size_t len, int as_bytes);

/* Bytes of a text to fingerprint: str (UTF-8; surrogates are encoded as
 * they come and become U+FFFD inside the library) or a buffer. Release
 * with pynd_text_release. @return 0, or -1 with an exception. */
typedef struct pynd_text {
    const char *ptr;
    size_t len;
    Py_buffer view;  /* held when has_view */
    int has_view;
    PyObject *keep;  /* encoded copy of a str with surrogates, or NULL */
} pynd_text;
int pynd_text_get(PyObject *obj, pynd_text *out);
void pynd_text_release(pynd_text *t);

/* A fingerprint: an int in [0, 2^64). @return 0, or -1 with an exception. */
int pynd_fp(PyObject *obj, uint64_t *out);

/* A distance argument: NULL or None gives def, else an int in [0, ND_MAX_K]
 * (a larger one is left to the library, which refuses it). */
int pynd_k(PyObject *obj, unsigned def, unsigned *out);

/* An optional unsigned integer: NULL or None leaves *out unchanged. */
int pynd_u64(PyObject *obj, const char *what, uint64_t *out);

/* A time in seconds since the epoch: NULL or None gives now, an int or
 * float is taken as is, a datetime by its timestamp(). */
int pynd_time(PyObject *obj, int64_t *out);

/* A score: NULL or None gives 0, else a float. */
int pynd_score(PyObject *obj, double *out);

/* Fingerprint options from the keyword arguments features, cjk_bigrams,
 * title_weight, stopwords and fold_chinese (any may be NULL or None for
 * the default; fold_chinese true: ND_FP_FOLD_CHINESE).
 * features: None or "default", "words", "shingles", "shingles:N", "chars",
 * "chars:N". The stop words' bytes are borrowed from *keep (a new
 * reference, or NULL), which must outlive the use of opts.
 * @return 0, or -1 with an exception (InvalidArgumentError for a bad
 *         features string). */
int pynd_fp_options(nd_fp_options *opts, PyObject *features, PyObject *cjk_bigrams,
                    PyObject *title_weight, PyObject *stopwords, PyObject *fold_chinese,
                    PyObject **keep);

/* ---- records and groups (py_records.c) ----------------------------------- */

/* What a record is read for: a Dedupe's (key, text[, score]), or a
 * Database's (key, fingerprint or text[, score[, time[, sketch]]]). */
#define PYND_REC_DEDUPE 0x0u
#define PYND_REC_DB 0x1u

/* One record, converted. The pointers point into objects held by the
 * `hold` list given to pynd_record (the record itself among them). */
typedef struct pynd_rec {
    const char *key;
    size_t key_len;
    const char *text;  /* NULL: a fingerprint record */
    size_t text_len;
    uint64_t fp;       /* when text is NULL */
    double score;      /* 0 when not given */
    int64_t time;      /* when has_time */
    int has_time;
    int html;          /* -1: not given */
    PyObject *sketch;  /* borrowed (held); NULL: none */
} pynd_rec;

/* Intern the field names; call once at module initialisation. */
int pynd_records_init(void);

/* Read record number index of an iterable (a tuple or list, a dict, an
 * object with .id: py_records.c says which members count) into *out,
 * appending to hold every object out points into. @return 0, or -1 with
 * an exception naming the index ("records[3]: ..."). */
int pynd_record(PyObject *item, Py_ssize_t index, unsigned what, pynd_rec *out,
                PyObject *hold);
/* Prefix the pending TypeError, ValueError or OverflowError with
 * "records[index]: " (other exceptions are left). @return -1. */
int pynd_record_error(Py_ssize_t index);

/* Group sizes: start at min, then sized for about 50 ms of library work
 * (growing at most twofold a group), within [min, max]. */
typedef struct pynd_pace {
    size_t group, min, max;
} pynd_pace;
void pynd_pace_init(pynd_pace *p, size_t min, size_t max);
void pynd_pace_done(pynd_pace *p, size_t n, double secs);
double pynd_clock(void); /* seconds, monotonic */

/* Note progress on the pending exception: attributes `committed` (done)
 * and `total` (None when < 0); a KeyboardInterrupt without arguments gets
 * the message "interrupted: DONE of TOTAL documents WHAT[; DETAIL]". */
void pynd_note(size_t done, Py_ssize_t total, const char *what, const char *detail);
/* PyErr_CheckSignals, noting progress on what it raises. @return 0 or -1. */
int pynd_check_signals(size_t done, Py_ssize_t total, const char *what, const char *detail);

/* ---- result types (_neardup.c) ------------------------------------------ */

/* neardup.Match(key, fingerprint, distance, score, time): a query answer. */
extern PyTypeObject *pynd_MatchType;
/* neardup.Document(key, fingerprint, score, time): a stored document. */
extern PyTypeObject *pynd_DocumentType;
/* neardup.BatchMatch(key, fingerprint, distance, index): a batch answer. */
extern PyTypeObject *pynd_BatchMatchType;

PyObject *pynd_match_new(const nd_match *m, int as_bytes);
PyObject *pynd_document_new(const char *key, size_t key_len, uint64_t fp, double score,
                            int64_t time, int as_bytes);

/* The fingerprint of text (str or bytes-like) under opts, as an int; the
 * GIL is released while a long text is hashed. */
PyObject *pynd_fingerprint_of(PyObject *text, const nd_fp_options *opts);

/* ---- Database (py_db.c, py_db_docs.c, py_db_iter.c) --------------------- */

#define PYND_RESULTS_CACHE 8

typedef struct pynd_iter pynd_iter;

typedef struct pynd_db {
    PyObject_HEAD
    nd_db *db;         /* NULL once closed */
    int users;         /* calls running with the GIL released (changed
                          only while holding the GIL) */
    int closing;       /* close() started: new calls are refused */
    int bytes_keys;    /* return keys as bytes instead of str */
    int readonly;
    unsigned k;        /* the plan's design distance: the default k */
    PyObject *path;    /* str */
    nd_results *cache[PYND_RESULTS_CACHE]; /* idle result lists */
    int ncache;
    pynd_iter *iters;  /* live document iterators */
    nd_loader *loader; /* the loader of a load() in progress, or NULL */
    PyObject *weakrefs;
} pynd_db;

extern PyTypeObject pynd_DatabaseType;
extern PyTypeObject pynd_IterType;

/* Start a call that releases the GIL: refused (InvalidArgumentError,
 * "database is closed") once close() began. @return 0 or -1. */
int pynd_db_enter(pynd_db *self);
/* End it (with the GIL held again). */
void pynd_db_leave(pynd_db *self);

/* pynd_db_enter, then pynd_db_results (left again when that fails). */
nd_results *pynd_db_enter_results(pynd_db *self);

/* An empty result list, from the handle's cache when one is idle.
 * @return NULL with MemoryError set on failure. */
nd_results *pynd_db_results(pynd_db *self);
/* Give it back (cleared) to the cache, or free it. */
void pynd_db_results_done(pynd_db *self, nd_results *res);

/* Documents of a Database call, read from records (py_db_docs.c): d[i]
 * with kind[i] (a fingerprint, a fingerprint with its sketch sk[i], or a
 * text txt[i] to sign into d[i].fp and sk[i]). */
typedef struct pynd_docs {
    nd_doc *d;
    unsigned char *kind;
    nd_sketch *sk;   /* NULL until a record has a sketch or a text */
    struct pynd_doc_text {
        const char *ptr;
        size_t len;
        unsigned char html;
    } *txt;          /* NULL until a record has a text */
    size_t n, cap;
    int64_t now;     /* the time of a record without one */
    int html;        /* the call's html= for texts without "html" */
    PyObject *hold;  /* what the pointers point into */
} pynd_docs;

/* A call of at most this many documents is one group (add_many, batch
 * with add: one atomic write); groups never exceed PYND_GROUP_MAX. Texts
 * are signed in groups of at least PYND_SIGN_MIN. */
#define PYND_ATOMIC_DOCS 256
#define PYND_GROUP_MAX 65536
#define PYND_SIGN_MIN 64

int pynd_docs_init(pynd_docs *b, int html);
/* Append record number index. @return 0, or -1 with an exception. */
int pynd_docs_add(pynd_docs *b, PyObject *item, Py_ssize_t index);
/* Without the GIL: sign the texts of [from, to) and point each document
 * at its sketch. @return ND_OK, or a code with *bad the failed index. */
int pynd_docs_prepare(pynd_docs *b, nd_db *db, size_t from, size_t to, size_t *bad);
/* Raise rc's exception, naming records[bad] unless bad is (size_t)-1. */
PyObject *pynd_docs_raise(int rc, size_t bad);
void pynd_docs_reset(pynd_docs *b); /* no documents, nothing held */
void pynd_docs_free(pynd_docs *b);
/* The length of a list or tuple, else -1 (an iterator's is not known). */
Py_ssize_t pynd_known_len(PyObject *obj);

/* Methods over many documents (py_db_docs.c, py_db_load.c). */
PyObject *pynd_db_batch(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames);
PyObject *pynd_db_add_many(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames);
PyObject *pynd_db_load(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames);
PyObject *pynd_db_sign_many(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);
/* A loader's end, by close(): freed (GIL released), nothing committed. */
void pynd_db_drop_loader(pynd_db *self);

/* Methods taking texts (py_db_similar.c): what a store verifying by
 * resemblance needs (fingerprint and sketch from one tokenisation,
 * nd_db_sign), and in any store the same calls on texts. */
PyObject *pynd_db_add_text(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames);
PyObject *pynd_db_add_if_new_text(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames);
PyObject *pynd_db_query_text(pynd_db *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames);
PyObject *pynd_db_get_min_resemblance(pynd_db *self, void *closure);
/* Database.sign(text, html=False) -> (fingerprint, sketch bytes), and the
 * module's resemblance(sketch_a, sketch_b): the estimate of two sketches. */
PyObject *pynd_db_sign(pynd_db *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *pynd_mod_resemblance(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
/* A sketch from its 176 bytes (Database.sign's layout) into *out.
 * @return 0, or -1 with ValueError (naming name) or TypeError set. */
int pynd_sketch_from(PyObject *o, nd_sketch *out, const char *name);
/* The 176 bytes of a sketch, as Database.sign returns them. */
PyObject *pynd_sketch_bytes(const nd_sketch *sk);

/* Iteration (py_db_iter.c): `iter(db)`, and close()'s stop of every live
 * iterator (waits for their reader threads, with the GIL released). */
PyObject *pynd_db_iter(PyObject *self);
void pynd_db_stop_iters(pynd_db *self);

/* Sleep a millisecond without the GIL (waiting for another thread's call). */
void pynd_nap(void);

/* ---- Dedupe (py_dedupe.c, py_dedupe_walk.c) ------------------------------ */

typedef struct pynd_dedupe {
    PyObject_HEAD
    nd_dedupe *dd;        /* NULL once closed */
    int busy;             /* a call uses dd (changed only with the GIL held) */
    unsigned long owner;  /* the thread of that call */
    int html;             /* texts are HTML unless a call says otherwise */
    int bytes_keys;       /* return keys as bytes instead of str */
    PyObject *weakrefs;
} pynd_dedupe;

extern PyTypeObject pynd_DedupeType;
/* neardup.Pair and neardup.Cluster: the results of the walks. */
extern PyTypeObject *pynd_PairType;
extern PyTypeObject *pynd_ClusterType;

/* Ready Dedupe, create Pair and Cluster, add the three to mod.
 * @return 0, or -1 with an exception set. */
int pynd_dedupe_types_init(PyObject *mod);

/* Start a call on the handle: raises InvalidArgumentError when closed or
 * re-entered from the same thread; waits (GIL released) while another
 * thread's call runs. @return 0 or -1. */
int pynd_dedupe_enter(pynd_dedupe *self);
void pynd_dedupe_leave(pynd_dedupe *self);

/* The walks (py_dedupe_walk.c): lists of Pair, {id: Cluster}, key lists. */
PyObject *pynd_dedupe_pairs(pynd_dedupe *self, PyObject *unused);
PyObject *pynd_dedupe_clusters(pynd_dedupe *self, PyObject *unused);
PyObject *pynd_dedupe_keep(pynd_dedupe *self, PyObject *unused);
PyObject *pynd_dedupe_drop(pynd_dedupe *self, PyObject *unused);

/* neardup.dedupe(docs, **options): a Dedupe fed docs, read once, closed. */
PyObject *pynd_mod_dedupe(PyObject *mod, PyObject *args, PyObject *kwds);

#endif /* PY_NEARDUP_H */
