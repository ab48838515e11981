/*
 * similar_ref.c — the single-process reference of test_mpi_similar.sh: a
 * store of resemblance shards and nd_shards_batch's answers, which
 * `neardup-mpi batch` must reproduce on any number of ranks. (The store is
 * made through the library, nd_shards_options.min_resemblance = R, as a
 * reference independent of `neardup shard init`'s options.)
 *
 *   similar_ref create DIR SHARDS R STORED.jsonl   make the store, add the
 *                                                  texts (every one stored)
 *   similar_ref batch DIR BATCH.jsonl [--add]      print the batch's answers
 *                                                  as neardup-mpi batch does
 *
 * Texts are read by input/'s JSONL reader and signed with shard 0's
 * options (nd_db_sign), as neardup-mpi's rank 0 does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <neardup.h>

#include "cli_common.h"
#include "in_reader.h"

typedef struct corpus {
    nd_doc *docs;
    nd_signature *sigs;
    char **keys;
    size_t n, cap;
} corpus;

static int fail(const char *what, int rc)
{
    fprintf(stderr, "similar_ref: %s: %s: %s\n", what, nd_strerror(rc), nd_errmsg());
    return 2;
}

/* Read and sign every record of path. */
static int read_corpus(corpus *c, nd_db *db, const char *path)
{
    in_reader *r = NULL;
    in_record rec;
    int got;
    if (in_reader_open(&r, IN_FORMAT_JSONL, path, NULL) < 0) {
        fprintf(stderr, "similar_ref: %s\n", in_reader_error(NULL));
        return 2;
    }
    while ((got = in_reader_next(r, &rec)) > 0) {
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 256;
            c->docs = realloc(c->docs, c->cap * sizeof *c->docs);
            c->sigs = realloc(c->sigs, c->cap * sizeof *c->sigs);
            c->keys = realloc(c->keys, c->cap * sizeof *c->keys);
            if (!c->docs || !c->sigs || !c->keys) return fail("reading", ND_ENOMEM);
        }
        int rc = nd_db_sign(&c->sigs[c->n], db, rec.text, rec.text_len, 0);
        if (rc < 0) return fail("signing", rc);
        c->keys[c->n] = malloc(rec.key_len + 1);
        memcpy(c->keys[c->n], rec.key, rec.key_len);
        c->n++;
        c->docs[c->n - 1] = (nd_doc){c->keys[c->n - 1], rec.key_len, c->sigs[c->n - 1].fp, 0, 0,
                                     NULL};
    }
    in_reader_close(r);
    if (got < 0) {
        fprintf(stderr, "similar_ref: %s\n", in_reader_error(NULL));
        return 2;
    }
    for (size_t i = 0; i < c->n; i++) c->docs[i].sketch = &c->sigs[i].sketch;
    return 0;
}

int main(int argc, char **argv)
{
    nd_shards_options o = ND_SHARDS_OPTIONS_INIT;
    nd_shards *s = NULL;
    corpus c = {0};
    int create = argc == 6 && strcmp(argv[1], "create") == 0;
    int batch = (argc == 4 || argc == 5) && strcmp(argv[1], "batch") == 0;
    if (!create && !batch) {
        fprintf(stderr, "usage: similar_ref create DIR SHARDS R STORED.jsonl | "
                        "similar_ref batch DIR BATCH.jsonl [--add]\n");
        return 2;
    }
    if (create) {
        o.flags = ND_SHARDS_CREATE;
        o.shards = (unsigned)atoi(argv[3]);
        o.k = 3;
        o.has_k = 1;
        o.tables = 4;
        o.expected_docs = 100000;
        o.min_resemblance = atof(argv[4]);
    }
    int rc = nd_shards_open(&s, argv[2], &o);
    if (rc < 0) return fail("opening", rc);
    if ((rc = read_corpus(&c, nd_shards_db(s, 0), argv[create ? 5 : 3]))) return rc;
    nd_batch_item *items = calloc(c.n ? c.n : 1, sizeof *items);
    nd_results *keys = NULL;
    nd_results_new(&keys);
    if (create) {
        rc = nd_shards_add(s, c.docs, items, c.n);
        if (rc < 0) return fail("adding", rc);
    } else {
        unsigned flags = argc == 5 && strcmp(argv[4], "--add") == 0 ? ND_BATCH_ADD : 0;
        rc = nd_shards_batch(items, keys, s, c.docs, c.n, 3, flags);
        if (rc < 0) return fail("batch", rc);
        for (size_t i = 0; i < c.n; i++)
            cli_print_decision(stdout, 0, c.docs[i].key, c.docs[i].key_len, items[i].dup,
                               items[i].match_key, items[i].match_key_len, items[i].dist, items[i].resemblance);
    }
    for (size_t i = 0; i < c.n; i++) free(c.keys[i]);
    free(c.docs);
    free(c.sigs);
    free(c.keys);
    free(items);
    nd_results_free(keys);
    rc = nd_shards_close(s);
    return rc < 0 ? fail("closing", rc) : 0;
}
