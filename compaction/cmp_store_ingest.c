/*
 * cmp_store_ingest.c — files taken whole into a store's tables
 * (cmp_store_ingest.h): a table's fresh keys written to a file of their
 * own, and the files of a rewritten table ingested as one run-space
 * write. Split from cmp_store.c; the store's fields are cmp_store_impl.h's.
 */
#include "cmp_store_ingest.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmp_direct.h"
#include "cmp_fresh.h"
#include "cmp_gen.h"
#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "cmp_store_impl.h"
#include "nd_error.h"

int st_table_ingest_keys(st_store *s, unsigned t, const uint64_t *pv, size_t n)
{
    static const char what[] = "writing the fresh keys of a table to a file";
    ND_FORWARD(st_store_writable(s));
    ND_RETURN_IF(t >= s->ntables, ND_EINVAL, "storage: no table %u", t);
    if (n == 0) return ND_OK;
    int cf = ST_CF_TABLE(t), rc = ND_OK;
    uint8_t kb[TBL_KEY_LEN];
    kv_sst *w = NULL;
    char *path = st_store_file(s, ST_FILE_INGEST);
    if (!path) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    ND_TRY(kv_sst_new(&w, s->kv, cmp_gen_profile(cf), path, what));
    for (size_t i = 0; i < n; i++) {
        if (i && pv[i] <= pv[i - 1])
            ND_FAIL(ND_EINVAL, "storage: fresh keys of table %u not ascending and distinct", t);
        tbl_key(kb, TBL_FRESH, pv[i]);
        ND_TRY(kv_sst_put(w, kb, sizeof kb, "", 0));
    }
    ND_TRY(kv_sst_finish(w));
    const char *files[1] = {path};
    cmp_gen *g = st_gen_acquire(s);
    rc = kv_ingest(s->kv, g->cf[cf], files, 1, "ingesting the fresh keys of a table");
    if (rc == ND_OK) atomic_store(&g->settled[cf], 0);
    st_gen_release(s, g);
cleanup:
    kv_sst_free(w);
    if (path) (void)unlink(path); /* moved in, or not to be */
    free(path);
    return rc;
}

int st_table_ingest_files(st_store *s, cmp_gen *g, unsigned t, const char *const *files,
                          size_t n, const cmp_flog *log, cmp_direct *d, uint64_t runs_seq,
                          uint64_t dels_seq, int *applied)
{
    int cf = ST_CF_TABLE(t);
    *applied = 0;
    if (atomic_load(&s->runs_seq) != runs_seq || atomic_load(&s->dels_seq) != dels_seq)
        return ND_OK; /* the files no longer say what the table holds */
    if (n == 0) { /* an empty table without fresh entries */
        *applied = 1;
        return ND_OK;
    }
    /* A run-space write (st_write): readers meanwhile read one snapshot;
     * the table's file no longer holds its runs. The runs_seq above (the
     * same generation: a switch moves it) names g's family. */
    atomic_fetch_add(&s->runs_seq, 1);
    st_direct_drop(s, 1ull << t);
    int rc = kv_ingest(s->kv, g->cf[cf], files, n, "ingesting a rewritten table");
    if (rc == ND_OK) {
        atomic_store(&g->settled[cf], 0);
        cmp_fresh_commit(s->fresh, log);
        /* The files hold every run (a range deletion hides the older
         * ones), so queries read them directly without waiting for a
         * compaction; the next run-space write drops the reader. */
        st_direct_swap(s, g, t, cmp_direct_ref(d), NULL);
        *applied = 1;
    }
    atomic_fetch_add(&s->runs_seq, 1);
    return rc;
}

