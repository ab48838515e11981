/*
 * srv_fleet.c — a server as one of a fleet (docs/server.md, "A fleet";
 * the client's side is python/neardup/fleet.py and the C fleet router).
 *
 * A fleet is S servers, server i started with --shard I on a sharded
 * store: it opened shard I only (nd_shards_open with part I of S), and
 * serves that shard's nd_db as a plain server serves its store. What
 * makes the fleet one store is the library's split of nd_shards_batch
 * into three steps, each here an endpoint a client calls:
 *  - check: /v1/batch "stored_only", each document's best stored match
 *    on this shard (nd_shards_check's answer for one shard), read as
 *    nd_shards_check reads it: one nd_db_batch, then nd_db_query_doc for
 *    the documents it answered with an earlier document of the batch
 *    (their best stored match may lie further away);
 *  - decide: /v1/decide, nd_shards_decide (nd_shards_decide_similar in a
 *    resemblance store) on the best of the shards' answers; no I/O, so
 *    any server answers;
 *  - store: /v1/store, nd_shards_add's rule for this shard: the new
 *    documents (a resemblance store: all) through the writer as one
 *    nd_db_add_many, and a duplicate whose match is its own stored key
 *    has its time refreshed.
 * The nd_shards handle is read only for placement (nd_shards_place, a
 * pure function of the manifest), so connection threads share it. A key
 * another shard owns is refused with 421 wrong_shard wherever it would
 * be written or read by key: a misrouted client learns of it at once.
 */
#include "srv_fleet.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_json.h"

int srv_fleet_manifest_id(char out[17], const nd_shards *s)
{
    char text[ND_SHARDS_MANIFEST_MAX + 1];
    int rc = nd_shards_manifest(text, sizeof text, s);
    if (rc < 0) return rc;
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    return ND_OK;
}

int srv_fleet_refuse(srv_reply *out, const srv_ctx *c, const char *key, size_t len)
{
    if (!c->shards || !key) return 0;
    unsigned owner = nd_shards_place(c->shards, key, len);
    if (owner == c->shard) return 0;
    srv_api_error(out, 421, "wrong_shard",
                  "the key belongs to shard %u of %u; this server holds shard %u", owner,
                  c->shard_count, c->shard);
    return 1;
}

void srv_fleet_describe(json_t *j, const srv_ctx *c, int health)
{
    if (!c->shards) return;
    json_object_set_new(j, "shard",
                        json_pack("{s:i,s:i,s:s,s:s}", "index", (int)c->shard, "count",
                                  (int)c->shard_count, "manifest", c->manifest_id,
                                  "placement", ND_SHARDS_ASSIGN_RULE));
    if (health) {
        json_object_set_new(j, "k", json_integer(c->k));
        json_object_set_new(j, "min_resemblance", json_real(nd_db_min_resemblance(c->db)));
    }
}

static srv_answer answer_of(const nd_batch_item *it)
{
    if (!it->dup) return (srv_answer){0, 0, 0, -1, -1, NULL, 0};
    return (srv_answer){1, it->dist, it->match_fp,
                        it->match_index == ND_BATCH_STORED ? -1 : (long)it->match_index,
                        it->resemblance, (char *)it->match_key, it->match_key_len};
}

void srv_fleet_stored(srv_reply *out, const srv_ctx *c, const nd_doc *docs, size_t n,
                      unsigned k)
{
    nd_batch_item *items = calloc(n ? n : 1, sizeof *items);
    nd_results *keys = NULL, *res = NULL;
    json_t *results = json_array();
    size_t fresh = 0;
    if (!items || !results || nd_results_new(&keys) < 0 || nd_results_new(&res) < 0) {
        srv_api_error(out, 503, "no_memory", "out of memory for %zu documents", n);
        goto done;
    }
    int rc = n ? nd_db_batch(items, keys, c->db, docs, n, k, 0) : ND_OK;
    if (rc < 0) {
        srv_json_nd_fail(out, rc, "batch");
        goto done;
    }
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    qo.limit = 1;
    for (size_t i = 0; i < n; i++) {
        srv_answer a = answer_of(&items[i]);
        if (a.dup && a.match_index >= 0) {
            /* matched an earlier document of the batch: ask the store alone */
            rc = nd_db_query_doc(res, c->db, &docs[i], k, &qo);
            if (rc < 0) {
                srv_json_nd_fail(out, rc, "check");
                goto done;
            }
            a = (srv_answer){0, 0, 0, -1, -1, NULL, 0};
            if (nd_results_count(res)) {
                const nd_match *m = nd_results_get(res, 0);
                a = (srv_answer){1, m->dist, m->fp, -1, m->resemblance, (char *)m->key, m->key_len};
            }
        }
        fresh += !a.dup;
        json_array_append_new(results, srv_json_answer(&a, 1));
        nd_results_clear(res);
    }
    srv_json_reply(out, 200, json_pack("{s:O,s:I}", "results", results, "new", (json_int_t)fresh));
done:
    json_decref(results);
    nd_results_free(res);
    nd_results_free(keys);
    free(items);
}

/* A match of a request ("matches" of /v1/decide, "results" of /v1/store)
 * as an nd_batch_item: null, not a duplicate; an object, a stored match
 * (with an integer "index", a document of the batch: /v1/store's results
 * are a part of a batch, so the index is not checked).
 * Keys point into the JSON. */
static int parse_match(srv_fail *f, nd_batch_item *it, json_t *m, const char *where)
{
    static const char *const members[] = {"key", "fingerprint", "distance", "score", "time",
                                          "resemblance", "index", NULL};
    memset(it, 0, sizeof *it);
    it->resemblance = -1;
    it->match_index = ND_BATCH_STORED;
    if (json_is_null(m)) return 0;
    if (!json_is_object(m) || srv_json_members(f, m, members, where)) {
        if (!json_is_object(m)) {
            f->status = 400, f->code = "malformed";
            snprintf(f->why, sizeof f->why, "%s: a match must be an object or null", where);
        }
        return -1;
    }
    json_t *key = json_object_get(m, "key"), *fp = json_object_get(m, "fingerprint"),
           *dist = json_object_get(m, "distance"), *res = json_object_get(m, "resemblance"),
           *idx = json_object_get(m, "index");
    f->status = 400, f->code = "malformed";
    if (!json_is_string(key) || !json_is_string(fp) ||
        srv_json_hex16(json_string_value(fp), &it->match_fp) || !json_is_integer(dist) ||
        json_integer_value(dist) < 0 || json_integer_value(dist) > 64 ||
        (res && !json_is_number(res)) ||
        (idx && !json_is_null(idx) &&
         (!json_is_integer(idx) || json_integer_value(idx) < 0))) {
        snprintf(f->why, sizeof f->why,
                 "%s: a match needs \"key\" (a string), \"fingerprint\" (16 hex digits), "
                 "\"distance\" (0..64); \"resemblance\" a number; \"index\" null or an index",
                 where);
        return -1;
    }
    it->dup = 1;
    it->dist = (unsigned)json_integer_value(dist);
    it->match_key = json_string_value(key);
    it->match_key_len = json_string_length(key);
    if (res) it->resemblance = json_number_value(res);
    if (idx && json_is_integer(idx)) it->match_index = (size_t)json_integer_value(idx);
    return 0;
}

/* The documents of root's "documents" and the matches of its member
 * named list (as many), parsed. */
typedef struct decided {
    size_t n;
    srv_doc *d;
    nd_doc *nd;
    nd_batch_item *items;
} decided;

static void decided_dispose(decided *x)
{
    free(x->d);
    free(x->nd);
    free(x->items);
}

static int parse_decided(srv_reply *out, decided *x, const srv_ctx *c, json_t *root,
                         const char *list, int owned)
{
    static const char *const doc_members[] = {"key", "text", "fingerprint", "html", "score",
                                              "time", NULL};
    srv_fail f = {0};
    memset(x, 0, sizeof *x);
    json_t *docs = json_object_get(root, "documents"), *ms = json_object_get(root, list);
    if (!json_is_array(docs) || !json_is_array(ms) || json_array_size(docs) != json_array_size(ms)) {
        srv_api_error(out, 400, "malformed", "\"documents\" and \"%s\" must be arrays of one length",
                      list);
        return -1;
    }
    x->n = json_array_size(docs);
    if (x->n > c->max_batch) {
        srv_api_error(out, 413, "too_many_documents", "%zu documents in one batch (at most %zu)",
                      x->n, c->max_batch);
        return -1;
    }
    x->d = calloc(x->n ? x->n : 1, sizeof *x->d);
    x->nd = calloc(x->n ? x->n : 1, sizeof *x->nd);
    x->items = calloc(x->n ? x->n : 1, sizeof *x->items);
    if (!x->d || !x->nd || !x->items) {
        srv_api_error(out, 503, "no_memory", "out of memory for %zu documents", x->n);
        return -1;
    }
    for (size_t i = 0; i < x->n; i++) {
        char where[48];
        json_t *o = json_array_get(docs, i);
        snprintf(where, sizeof where, "documents[%zu]", i);
        if ((json_is_object(o) && srv_json_members(&f, o, doc_members, where)) ||
            srv_json_doc(&f, &x->d[i], c, o, 1, 1, where)) {
            srv_api_error(out, f.status, f.code, "%s", f.why);
            return -1;
        }
        x->nd[i] = x->d[i].doc;
        if (owned && srv_fleet_refuse(out, c, x->nd[i].key, x->nd[i].key_len)) return -1;
        snprintf(where, sizeof where, "%s[%zu]", list, i);
        if (parse_match(&f, &x->items[i], json_array_get(ms, i), where)) {
            srv_api_error(out, f.status, f.code, "%s", f.why);
            return -1;
        }
    }
    return 0;
}

void srv_fleet_decide(srv_reply *out, const srv_ctx *c, json_t *root)
{
    static const char *const members[] = {"documents", "matches", "k", NULL};
    srv_fail f = {0};
    unsigned k = c->k;
    decided x;
    memset(&x, 0, sizeof x);
    if (srv_json_members(&f, root, members, "request") || srv_json_k(&f, c, root, &k)) {
        srv_api_error(out, f.status, f.code, "%s", f.why);
        return;
    }
    if (parse_decided(out, &x, c, root, "matches", 0)) goto done;
    for (size_t i = 0; i < x.n; i++)
        if (x.items[i].match_index != ND_BATCH_STORED) {
            srv_api_error(out, 400, "malformed", "matches[%zu]: a stored match has \"index\" null", i);
            goto done;
        }
    int rc = c->resemblance
                 ? nd_shards_decide_similar(x.items, x.nd, x.n, k, nd_db_min_resemblance(c->db))
                 : nd_shards_decide(x.items, x.nd, x.n, k);
    if (rc < 0) {
        srv_json_nd_fail(out, rc, "decide");
        goto done;
    }
    json_t *results = json_array();
    size_t fresh = 0;
    for (size_t i = 0; results && i < x.n; i++) {
        srv_answer a = answer_of(&x.items[i]);
        if (!c->resemblance) a.resemblance = -1;
        fresh += !a.dup;
        json_array_append_new(results, srv_json_answer(&a, 1));
    }
    srv_json_reply(out, 200, json_pack("{s:o,s:I}", "results", results, "new", (json_int_t)fresh));
done:
    decided_dispose(&x);
}

void srv_fleet_store(srv_reply *out, const srv_ctx *c, json_t *root)
{
    static const char *const members[] = {"documents", "results", "sync", NULL};
    srv_fail f = {0};
    decided x;
    nd_results *res = NULL;
    memset(&x, 0, sizeof x);
    if (srv_json_members(&f, root, members, "request") || srv_json_sync(&f, c, root)) {
        srv_api_error(out, f.status, f.code, "%s", f.why);
        return;
    }
    if (parse_decided(out, &x, c, root, "results", 1)) goto done;
    /* nd_shards_add's rule: the new ones (a resemblance store: all) in
     * one write, in place of the documents array's front */
    size_t nn = 0, written = 0;
    for (size_t i = 0; i < x.n; i++)
        if (c->resemblance || !x.items[i].dup) x.nd[nn++] = x.d[i].doc;
    if (nn) {
        srv_job job = {.kind = SRV_JOB_ADD, .docs = x.nd, .n = nn, .k = c->k, .answers = NULL};
        if (srv_json_submit(out, c, &job)) goto done;
        written = nn;
    }
    for (size_t i = 0; !c->resemblance && i < x.n; i++) {
        const nd_batch_item *it = &x.items[i];
        const nd_doc *d = &x.d[i].doc;
        if (!it->dup || it->match_index != ND_BATCH_STORED || it->match_key_len != d->key_len ||
            memcmp(it->match_key, d->key, d->key_len) != 0)
            continue;
        /* a duplicate of its own stored key: its last-seen time refreshed */
        int rc = res ? ND_OK : nd_results_new(&res);
        if (rc == ND_OK) rc = nd_db_get(res, c->db, d->key, d->key_len);
        if (rc == ND_ENOTFOUND) continue; /* deleted meanwhile */
        if (rc == ND_OK) {
            const nd_match *m = nd_results_get(res, 0);
            rc = nd_db_add(c->db, d->key, d->key_len, m->fp, m->score, d->time);
        }
        if (rc < 0) {
            srv_json_nd_fail(out, rc, "store");
            goto done;
        }
        written++;
    }
    srv_json_reply(out, 200, json_pack("{s:I}", "stored", (json_int_t)written));
done:
    nd_results_free(res);
    decided_dispose(&x);
}
