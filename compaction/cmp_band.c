/*
 * cmp_band.c — a resemblance store's band entries written in bulk through
 * a file ingested whole (cmp_band.h).
 */
#include "cmp_band.h"

#include <stdlib.h>
#include <unistd.h>

#include "cmp_gen.h"
#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "nd_error.h"

int st_band_ingest(st_store *s, st_band_next_fn next, void *payload)
{
    static const char what[] = "writing band entries to a file";
    ND_FORWARD(st_store_writable(s));
    kv_cf *cf = st_family(s, NULL, ST_CF_BAND);
    ND_RETURN_IF(!cf, ND_EINVAL, "storage: this store has no band family");
    kv_sst *w = NULL;
    size_t n = 0;
    const void *k;
    size_t klen;
    int rc, more;
    char *path = st_store_file(s, ST_FILE_BAND_INGEST);
    if (!path) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    ND_TRY(kv_sst_new(&w, st_store_kv(s), cmp_gen_profile(ST_CF_BAND), path, what));
    /* The file writer refuses a key out of order: no second check here. */
    while ((more = next(payload, &k, &klen)) == 1) {
        ND_TRY(kv_sst_put(w, k, klen, "", 0));
        n++;
    }
    ND_TRY(more);
    rc = ND_OK;
    if (n == 0) goto cleanup; /* RocksDB writes no empty file */
    ND_TRY(kv_sst_finish(w));
    const char *files[1] = {path};
    rc = kv_ingest(st_store_kv(s), cf, files, 1, "ingesting band entries");
cleanup:
    kv_sst_free(w);
    if (path) (void)unlink(path); /* moved in, or not to be */
    free(path);
    return rc;
}
