/*
 * cmp_band.c — a resemblance store's band entries written in bulk through
 * a file ingested whole (cmp_band.h).
 */
#include "cmp_band.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmp_gen.h"
#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "nd_error.h"

/* The longest band entry: band, band key, document key. */
#define BAND_KEY_MAX (ST_CF_BAND_PREFIX + ND_MAX_KEY_LEN)

/* Is a (length la) strictly before b (length lb), bytewise? */
static int key_before(const void *a, size_t la, const void *b, size_t lb)
{
    int c = memcmp(a, b, la < lb ? la : lb);
    return c < 0 || (c == 0 && la < lb);
}

int st_band_ingest(st_store *s, st_band_next_fn next, void *payload)
{
    static const char what[] = "writing band entries to a file";
    ND_FORWARD(st_store_writable(s));
    kv_cf *cf = st_family(s, NULL, ST_CF_BAND);
    ND_RETURN_IF(!cf, ND_EINVAL, "storage: this store has no band family");
    kv_sst *w = NULL;
    char *prev = NULL;
    size_t plen = 0, n = 0;
    const void *k;
    size_t klen;
    int rc, more;
    char *path = st_store_file(s, ST_FILE_INGEST);
    prev = malloc(BAND_KEY_MAX);
    if (!path || !prev) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    ND_TRY(kv_sst_new(&w, st_store_kv(s), cmp_gen_profile(ST_CF_BAND), path, what));
    while ((more = next(payload, &k, &klen)) == 1) {
        if (klen > BAND_KEY_MAX) ND_FAIL(ND_EINVAL, "storage: band entry of %zu bytes", klen);
        if (n && !key_before(prev, plen, k, klen))
            ND_FAIL(ND_EINVAL, "storage: band entries not ascending and distinct");
        ND_TRY(kv_sst_put(w, k, klen, "", 0));
        memcpy(prev, k, klen);
        plen = klen;
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
    free(prev);
    return rc;
}
