/*
 * db_repair.c — nd_db_repair: salvage a damaged database into a consistent
 * one and say what was lost.
 *
 * A store whose files are damaged refuses to open (ND_ECORRUPT) rather
 * than answer from part of its data. Repair works in two steps. First the
 * storage layer salvages in place (st_repair): intact log records are
 * kept, a damaged table file moves to DB/lost/. The families may then
 * disagree (a table file lost, the documents kept, or the reverse), so
 * the second step rebuilds: every document the salvaged documents family
 * still holds is loaded (one nd_loader) into a new database with the same k, number of
 * tables and fingerprint configuration, which thereby holds the same set
 * in every table; a resemblance store's documents keep their sketches (a
 * document whose sketch was lost is dropped). The new database takes DB's place; the salvaged old one
 * is kept as DB.damaged for inspection.
 *
 * A deletion lost with a damaged file brings back what it deleted: the
 * older entries of the documents an expire or delete removed are still in
 * other files. Each document's entries lie in two families (docs, and
 * rev's fp || key), whose deletions lie in different files; so when the
 * documents named (docs, and rev or sketches without a docs entry) are
 * more than the counters record, the document entries without a reverse
 * entry are taken for deleted ones brought back, and dropped from the
 * rebuild and from what was found, and so are reverse entries and
 * sketches without a document (otherwise a document lacking its reverse
 * entry is kept, and its entry rebuilt: a damaged rev block loses
 * nothing).
 *
 * What was dropped is counted from the documents, not from the counters
 * record alone (which may itself be an older one, the newer lost): the
 * documents the salvaged store names — its documents family's, and those
 * its reverse entries (fp || key) or sketches name whose document entry
 * is lost — or the counters' figure if larger, less those the rebuilt
 * store holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db_core.h"
#include "neardup.h"
#include "nd_endian.h"
#include "nd_error.h"
#include "storage.h"

#define REPAIR_CHUNK 4096 /* documents per nd_loader_add */
#define REPAIR_LOAD_CHUNK (1u << 20) /* the loader's chunk: about 300 MB */

/* The caller's progress callback (nd_db_repair_progress), or none. */
typedef struct repair_progress {
    nd_progress_cb cb;
    void *payload;
} repair_progress;

/* 0 to go on, else the stop the repair returns (the callback rule). */
static int report_in(const repair_progress *p, const char *phase, const char *unit,
                     uint64_t done, uint64_t total)
{
    if (!p->cb) return 0;
    nd_progress np = {phase, unit, done, total};
    return nd_err_callback(p->cb(&np, p->payload), phase);
}

static int report(const repair_progress *p, const char *phase, uint64_t done, uint64_t total)
{
    return report_in(p, phase, "documents", done, total);
}

static int report_tick(const repair_progress *p, const char *phase, uint64_t done, uint64_t total)
{
    return p->cb && done % ND_PROGRESS_EVERY == 0 ? report(p, phase, done, total) : 0;
}

typedef struct repair_copy {
    nd_db *from; /* the salvaged store */
    nd_db *to;
    nd_loader *load; /* one load into to: a rebuild writes the store once */
    nd_doc docs[REPAIR_CHUNK];
    nd_sketch sketches[REPAIR_CHUNK]; /* a resemblance store's */
    char *keys; /* REPAIR_CHUNK keys of at most ND_MAX_KEY_LEN bytes */
    char *rev;  /* REPAIR_CHUNK reverse keys (8 + ND_MAX_KEY_LEN bytes each) */
    size_t n;
    uint64_t copied, total; /* documents walked, of those counted */
    const repair_progress *progress;
    int drop_orphans; /* drop the documents without a reverse entry */
    int rc; /* an import's failure or the callback's stop, which stopped the walk */
} repair_copy;

/* For each of docs[0..n), whether db's reverse family holds its entry
 * (fp || key): found[i]. rev: a buffer of n reverse keys. */
static int rev_exists(nd_db *db, const nd_doc *docs, size_t n, char *rev, unsigned char *found)
{
    const char *ptrs[REPAIR_CHUNK];
    size_t lens[REPAIR_CHUNK];
    for (size_t i = 0; i < n; i++) {
        char *k = rev + i * (8 + ND_MAX_KEY_LEN);
        nd_store_be64(k, docs[i].fp);
        memcpy(k + 8, docs[i].key, docs[i].key_len);
        ptrs[i] = k;
        lens[i] = 8 + docs[i].key_len;
    }
    return st_exists_many(db->store, ST_CF_REV, ptrs, lens, n, found);
}

static int copy_flush(repair_copy *c)
{
    if (!c->n) return ND_OK;
    if (c->drop_orphans) {
        unsigned char found[REPAIR_CHUNK];
        ND_FORWARD(rev_exists(c->from, c->docs, c->n, c->rev, found));
        size_t kept = 0;
        for (size_t i = 0; i < c->n; i++)
            if (found[i]) c->docs[kept++] = c->docs[i]; /* keys and sketches stay put */
        c->n = kept;
    }
    if (c->n) ND_FORWARD(nd_loader_add(c->load, c->docs, c->n));
    c->n = 0;
    return ND_OK;
}

static int copy_doc(const nd_doc *d, void *payload)
{
    repair_copy *c = payload;
    char *key = c->keys + c->n * ND_MAX_KEY_LEN;
    if ((c->rc = report_tick(c->progress, "rebuilding", ++c->copied, c->total)) != 0) return -1;
    if (nd_db_min_resemblance(c->to) > 0 && !d->sketch) return 0; /* its sketch is lost */
    memcpy(key, d->key, d->key_len);
    c->docs[c->n] = *d;
    c->docs[c->n].key = key;
    if (d->sketch) {
        c->sketches[c->n] = *d->sketch;
        c->docs[c->n].sketch = &c->sketches[c->n];
    }
    if (++c->n == REPAIR_CHUNK && (c->rc = copy_flush(c)) < 0) return -1;
    return 0;
}

#define NAMED_CHUNK 1024 /* keys looked up in docs at once */

/* Of the keys family cf names (each after skip bytes: rev's fingerprint),
 * how many docs lacks: *missing. */
static int count_unlisted(nd_db *db, int cf, size_t skip, uint64_t *missing)
{
    st_iter *it = NULL;
    char *keys = malloc((size_t)NAMED_CHUNK * ND_MAX_KEY_LEN);
    const char *ptrs[NAMED_CHUNK];
    size_t lens[NAMED_CHUNK], n = 0;
    unsigned char found[NAMED_CHUNK];
    int rc = keys ? st_iter_new_scan(&it, db->store, cf)
                  : nd_err_set(ND_ENOMEM, "repair: out of memory");
    *missing = 0;
    if (rc == ND_OK) st_iter_seek_first(it);
    while (rc == ND_OK) {
        int valid = st_iter_valid(it);
        if (valid) {
            size_t klen;
            const char *k = st_iter_key(it, &klen);
            if (klen > skip && klen - skip <= ND_MAX_KEY_LEN) {
                lens[n] = klen - skip;
                memcpy(keys + n * ND_MAX_KEY_LEN, k + skip, lens[n]);
                ptrs[n] = keys + n * ND_MAX_KEY_LEN;
                n++;
            }
        }
        if (n == NAMED_CHUNK || (!valid && n)) {
            rc = st_exists_many(db->store, ST_CF_DOCS, ptrs, lens, n, found);
            for (size_t i = 0; rc == ND_OK && i < n; i++) *missing += !found[i];
            n = 0;
        }
        if (!valid) break;
        st_iter_next(it);
    }
    if (rc == ND_OK && it) rc = st_iter_status(it);
    st_iter_free(it);
    free(keys);
    return rc;
}

typedef struct doc_count {
    nd_db *db;
    uint64_t n, orphans; /* documents, and those without a reverse entry */
    nd_doc docs[REPAIR_CHUNK]; /* a chunk waiting for its reverse look-ups */
    char *keys, *rev;
    size_t pending;
    const repair_progress *progress;
    int rc; /* a look-up's failure or the callback's stop */
} doc_count;

static int count_orphans(doc_count *c)
{
    unsigned char found[REPAIR_CHUNK];
    if (!c->pending) return ND_OK;
    ND_FORWARD(rev_exists(c->db, c->docs, c->pending, c->rev, found));
    for (size_t i = 0; i < c->pending; i++) c->orphans += !found[i];
    c->pending = 0;
    return ND_OK;
}

static int count_doc(const nd_doc *d, void *payload)
{
    doc_count *c = payload;
    char *key = c->keys + c->pending * ND_MAX_KEY_LEN;
    memcpy(key, d->key, d->key_len);
    c->docs[c->pending] = *d;
    c->docs[c->pending].key = key;
    if (++c->pending == REPAIR_CHUNK && (c->rc = count_orphans(c)) < 0) return -1;
    return (c->rc = report_tick(c->progress, "counting", ++c->n, 0)) != 0 ? -1 : 0;
}

/* What the salvaged store names (its document entries, and the larger
 * of the counts of reverse entries and sketches without one: a document
 * whose entry and both of those are lost is not seen), given counted,
 * its counters record's documents (0: none usable): *found, and in
 * *drop_orphans whether the document entries without a reverse entry are
 * deleted ones a lost deletion brought back (more named than counted). */
static int count_named(nd_db *db, const repair_progress *progress, uint64_t counted,
                       uint64_t *found, int *drop_orphans)
{
    uint64_t by_rev = 0, by_sketch = 0;
    doc_count *docs = calloc(1, sizeof *docs);
    int rc = ND_OK;
    *drop_orphans = 0;
    if (docs) {
        docs->keys = malloc((size_t)REPAIR_CHUNK * ND_MAX_KEY_LEN);
        docs->rev = malloc((size_t)REPAIR_CHUNK * (8 + ND_MAX_KEY_LEN));
    }
    if (!docs || !docs->keys || !docs->rev) rc = nd_err_set(ND_ENOMEM, "repair: out of memory");
    if (rc == ND_OK) {
        docs->db = db;
        docs->progress = progress;
        rc = report(progress, "counting", 0, 0);
    }
    if (rc == ND_OK) rc = nd_db_foreach_doc(db, count_doc, docs);
    if (rc == ND_OK || docs->rc != 0) rc = docs->rc != 0 ? docs->rc : count_orphans(docs);
    if (rc == ND_OK) rc = count_unlisted(db, ST_CF_REV, 8, &by_rev);
    if (rc == ND_OK && db->min_resemblance > 0)
        rc = count_unlisted(db, ST_CF_SKETCH, 0, &by_sketch);
    if (rc == ND_OK) {
        uint64_t unlisted = by_rev > by_sketch ? by_rev : by_sketch;
        *found = docs->n + unlisted;
        if (counted > 0 && *found > counted && (docs->orphans > 0 || unlisted > 0)) {
            *drop_orphans = 1;
            *found = docs->n - docs->orphans;
        }
        rc = report(progress, "counting", docs->n, 0);
    }
    if (docs) {
        free(docs->keys);
        free(docs->rev);
    }
    free(docs);
    return rc;
}

/* The documents the counters record (db_core.c's: BE64 documents, BE64
 * fingerprints) of the salvaged store at path says, into *docs; 0 when it
 * is missing, malformed or says more than the salvaged files could hold
 * (bound), and then it is written again as 0, 0: the store opens with
 * one, and what was found is counted from the documents alone. */
static int check_counters(const char *path, uint64_t bound, uint64_t *docs)
{
    st_store *s = NULL;
    st_batch *b = NULL;
    st_open_opts o = {0};
    char *v = NULL;
    size_t len = 0;
    *docs = 0;
    int rc = st_open(&s, path, &o);
    if (rc < 0) { /* the engine's open says why */
        nd_err_clear();
        return ND_OK;
    }
    rc = st_get(s, ST_CF_META, "counters", 8, &v, &len);
    if (rc == ND_OK && len == 16 && nd_load_be64(v) <= bound &&
        nd_load_be64(v + 8) <= nd_load_be64(v)) {
        *docs = nd_load_be64(v);
    } else if (rc == ND_OK || rc == ND_ENOTFOUND) {
        uint8_t zero[16] = {0};
        nd_err_clear();
        rc = st_batch_new(&b, s);
        if (rc == ND_OK) rc = st_batch_put(b, ST_CF_META, "counters", 8, zero, sizeof zero);
        if (rc == ND_OK) rc = st_write(s, b, 1);
    }
    free(v);
    st_batch_free(b);
    int crc = st_close(s);
    return rc < 0 ? rc : crc;
}

/* Copy every document of from into the new database at to, made like from. */
static int rebuild(nd_db *from, const char *to, const repair_progress *progress,
                   int drop_orphans, nd_repair_report *rep)
{
    nd_plan_info plan;
    nd_fp_options fp;
    ND_FORWARD(nd_db_plan(&plan, from));
    ND_FORWARD(nd_db_fp_options(&fp, from));
    nd_db_options o;
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    o.flags = ND_DB_CREATE | ND_DB_EXCL;
    o.k = plan.k;
    o.tables = plan.tables;
    /* The same plan: the planner chose it for N = candidates x 2^p, and
     * chooses it again for that N; the same run size. */
    double n = plan.candidates * (double)(1ull << (plan.prefix_min < 63 ? plan.prefix_min : 63));
    o.expected_docs = n >= 1 && n < 1e18 ? (uint64_t)(n + 0.5) : 0;
    o.run_size = from->run_size;
    o.fp = &fp;
    o.min_resemblance = nd_db_min_resemblance(from);
    if (o.min_resemblance == 0) o.flags |= ND_DB_FINGERPRINT_ONLY; /* made like from */
    repair_copy *c = calloc(1, sizeof *c);
    ND_RETURN_IF(!c, ND_ENOMEM, "repair: out of memory");
    c->keys = malloc((size_t)REPAIR_CHUNK * ND_MAX_KEY_LEN);
    c->rev = malloc((size_t)REPAIR_CHUNK * (8 + ND_MAX_KEY_LEN));
    c->from = from;
    c->drop_orphans = drop_orphans;
    c->progress = progress;
    c->total = rep->docs_before;
    int rc = c->keys && c->rev ? nd_db_open(&c->to, to, &o)
                               : nd_err_set(ND_ENOMEM, "repair: out of memory");
    if (rc == ND_OK) rc = nd_loader_new(&c->load, c->to, REPAIR_LOAD_CHUNK);
    if (rc == ND_OK) rc = report(progress, "rebuilding", 0, c->total);
    if (rc == ND_OK) rc = nd_db_foreach_doc(from, copy_doc, c);
    if (c->rc != 0) rc = c->rc;
    if (rc == ND_OK) rc = copy_flush(c);
    if (rc == ND_OK) rc = nd_loader_finish(NULL, c->load);
    nd_loader_free(c->load);
    if (rc == ND_OK) rc = report(progress, "rebuilding", c->copied, c->total);
    if (rc == ND_OK) rc = nd_db_set_progress(c->to, progress->cb, progress->payload);
    if (rc == ND_OK) rc = nd_db_verify(c->to);
    /* kept: what the rebuilt store holds (verify checked its counters) */
    if (rc == ND_OK) rc = nd_db_counts(&rep->docs_kept, NULL, c->to);
    int crc = nd_db_close(c->to);
    if (rc == ND_OK) rc = crc;
    free(c->keys);
    free(c->rev);
    free(c);
    return rc;
}

int nd_db_repair(const char *path, nd_repair_report *out)
{
    return nd_db_repair_progress(path, NULL, NULL, out);
}

int nd_db_repair_progress(const char *path, nd_progress_cb cb, void *payload,
                          nd_repair_report *out)
{
    ND_RETURN_IF(!path || !*path, ND_EINVAL, "nd_db_repair: NULL or empty path");
    repair_progress progress = {cb, payload};
    nd_repair_report rep = {0, 0, 0, 0, {0}, 0};
    size_t len = strlen(path);
    char *tmp = malloc(len + 16), *old = malloc(len + 16);
    if (!tmp || !old) {
        free(tmp);
        free(old);
        return nd_err_set(ND_ENOMEM, "repair: out of memory");
    }
    sprintf(tmp, "%s.repairing", path);
    sprintf(old, "%s.damaged", path);
    struct stat st;
    int rc = ND_OK;
    nd_db *from = NULL;
    if (stat(tmp, &st) == 0 || stat(old, &st) == 0)
        ND_FAIL(ND_EEXIST, "repair: %s or %s exists: move it away first", tmp, old);
    st_repair_info info;
    if ((rc = report_in(&progress, "salvaging", "steps", 0, 1)) != 0) goto cleanup;
    ND_TRY(st_repair(path, &info));
    if ((rc = report_in(&progress, "salvaging", "steps", 1, 1)) != 0) goto cleanup;
    /* lost/: the damaged files apart from the logs replayed and the files
     * of no use (st_repair tells them apart: a healthy store has no damage) */
    rep.files_lost = info.lost_damaged;
    rep.logs_replayed = info.lost_logs;
    uint64_t counted = 0;
    ND_TRY(check_counters(path, info.entries_bound, &counted));
    /* Only the meta family lost entries: the counters record may be an
     * older one (more documents, before an expire), and the documents'
     * own entries are whole: they alone say what was there. */
    if (info.meta_lost && !info.named_lost) counted = 0;
    nd_db_options o;
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    o.flags = ND_DB_NO_BACKGROUND;
    rc = nd_db_open(&from, path, &o);
    if (rc < 0) {
        /* Its configuration (the meta family) is lost: nothing to rebuild with. */
        const char *why = "repair: the salvaged database does not open; restore a backup";
        rc = *nd_errmsg() ? nd_err_wrap(ND_ECORRUPT, "%s", why) : nd_err_set(ND_ECORRUPT, "%s", why);
        goto cleanup;
    }
    /* found: what the salvaged store names, or what its counters record
     * when that is more (documents no entry names any more: a file ingested
     * whole that a damaged manifest could not place) */
    int drop_orphans;
    if ((rc = count_named(from, &progress, counted, &rep.docs_before, &drop_orphans)) != 0)
        goto cleanup;
    if (counted > rep.docs_before) rep.docs_before = counted;
    /* the documents the last synced write acknowledged (cmp_synced.h):
     * those a deleted or cut log lost count as dropped */
    if (info.synced_docs != ST_SYNCED_NO_DOCS && info.synced_docs > rep.docs_before &&
        st_latest_seq(from->store) < info.synced_seq)
        rep.docs_before = info.synced_docs;
    /* A rebuild that failed or was stopped leaves no copy that the next
     * repair would refuse as existing. */
    if ((rc = rebuild(from, tmp, &progress, drop_orphans, &rep)) != 0) {
        (void)st_remove_store(tmp);
        goto cleanup;
    }
    rc = nd_db_close(from);
    from = NULL;
    if (rc < 0) goto cleanup;
    if (rename(path, old) != 0 || rename(tmp, path) != 0)
        ND_FAIL(ND_EIO, "repair: cannot move the rebuilt database into place: %s",
                strerror(errno));
    rep.docs_dropped = rep.docs_before > rep.docs_kept ? rep.docs_before - rep.docs_kept : 0;
    snprintf(rep.damaged_copy, sizeof rep.damaged_copy, "%s", old);
    if (out) *out = rep;
cleanup:
    if (from) nd_db_close(from);
    free(tmp);
    free(old);
    return rc;
}
