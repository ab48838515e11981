/*
 * shards_load.c — a bulk load into a sharded store (nd_shards_loader):
 * one nd_loader per shard, each document to the loader of its key's shard.
 *
 * Every shard's loader holds a chunk in memory, so the default chunk is
 * the single loader's (nd_db_import_step's largest, 8M; of resemblance
 * shards ND_LOADER_SKETCH_CHUNK) shared among the shards: about that
 * many documents in memory in all, more only above 80 shards (10 of
 * resemblance shards), where the floor of 100000 a shard keeps each
 * commit's merge to a few files.
 */
#include <stdlib.h>

#include "nd_error.h"

#define SHARD_CHUNK_MIN 100000u

struct nd_shards_loader {
    nd_shards *s;
    unsigned shards;
    size_t chunk;
    nd_loader **loaders;
    unsigned char *committed;
};

/* The error of shard i's loader, named. */
static int shard_failed(int rc, const nd_shards_loader *l, unsigned i, const char *what)
{
    char path[4096];
    if (nd_shards_path(path, sizeof path, l->s, i) < 0) return rc;
    return nd_err_wrap(rc, "%s shard %u '%s'", what, i, path);
}

int nd_shards_loader_new(nd_shards_loader **out, nd_shards *s, size_t chunk_docs)
{
    nd_shards_info info;
    nd_shards_loader *l = NULL;
    int rc;
    ND_RETURN_IF(!out || !s, ND_EINVAL, "nd_shards_loader_new: NULL argument");
    *out = NULL;
    ND_FORWARD(nd_shards_info_get(&info, s));
    for (unsigned i = 0; i < info.shards; i++)
        ND_RETURN_IF(!nd_shards_db(s, i), ND_EINVAL,
                     "nd_shards_loader_new: shard %u is not open here", i);
    l = calloc(1, sizeof *l);
    if (!l) return nd_err_set(ND_ENOMEM, "nd_shards_loader_new: out of memory");
    l->s = s;
    l->shards = info.shards;
    if (chunk_docs) {
        l->chunk = chunk_docs;
    } else {
        size_t whole = nd_db_min_resemblance(nd_shards_db(s, 0)) > 0 ? ND_LOADER_SKETCH_CHUNK
                                                                     : nd_db_import_step(UINT64_MAX);
        size_t share = whole / info.shards;
        l->chunk = share > SHARD_CHUNK_MIN ? share : SHARD_CHUNK_MIN;
    }
    l->loaders = calloc(info.shards, sizeof *l->loaders);
    l->committed = calloc(info.shards, 1);
    if (!l->loaders || !l->committed) ND_FAIL(ND_ENOMEM, "nd_shards_loader_new: out of memory");
    for (unsigned i = 0; i < info.shards; i++) {
        rc = nd_loader_new(&l->loaders[i], nd_shards_db(s, i), l->chunk);
        if (rc < 0) {
            rc = shard_failed(rc, l, i, "starting the load of");
            goto cleanup;
        }
    }
    *out = l;
    return ND_OK;
cleanup:
    nd_shards_loader_free(l);
    return rc;
}

size_t nd_shards_loader_chunk(const nd_shards_loader *l)
{
    return l ? l->chunk : 0;
}

int nd_shards_loader_add(nd_shards_loader *l, const nd_doc *docs, size_t n)
{
    ND_RETURN_IF(!l || (n && !docs), ND_EINVAL, "nd_shards_loader_add: NULL argument");
    for (size_t i = 0; i < n; i++) {
        unsigned s = nd_shards_place(l->s, docs[i].key, docs[i].key_len);
        int rc = nd_loader_add(l->loaders[s], &docs[i], 1);
        if (rc < 0) return shard_failed(rc, l, s, "loading");
    }
    return ND_OK;
}

int nd_shards_loader_commit(nd_shards_loader *l, unsigned shard, uint64_t *out_new)
{
    ND_RETURN_IF(!l || shard >= l->shards, ND_EINVAL, "nd_shards_loader_commit: shard %u of %u",
                 shard, l ? l->shards : 0);
    ND_RETURN_IF(l->committed[shard], ND_EINVAL, "nd_shards_loader_commit: shard %u twice", shard);
    l->committed[shard] = 1;
    int rc = nd_loader_finish(out_new, l->loaders[shard]);
    return rc < 0 ? shard_failed(rc, l, shard, "writing") : ND_OK;
}

void nd_shards_loader_free(nd_shards_loader *l)
{
    if (!l) return;
    for (unsigned i = 0; l->loaders && i < l->shards; i++) nd_loader_free(l->loaders[i]);
    free(l->loaders);
    free(l->committed);
    free(l);
}
