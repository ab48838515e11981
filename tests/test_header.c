/*
 * test_header.c — neardup.h compiles alone, warning-free, as C11 and C++
 * (built by tests/meson.build with -Wall -Wextra -Wpedantic -Werror: as
 * C11 and as C++). Also pins the numeric values of the error codes, which
 * never change, uses every options struct's INIT, and checks that the
 * aliases of 0.1 are gone (one name per call).
 */
#include <neardup.h>

#ifdef __cplusplus
static_assert(ND_OK == 0 && ND_EINVAL == -1 && ND_ENOTFOUND == -2 &&
                  ND_ECORRUPT == -3 && ND_EIO == -4 && ND_EBUSY == -5 &&
                  ND_EVERSION == -6 && ND_ENOMEM == -7 && ND_EEXIST == -8 &&
                  ND_EMISMATCH == -9 && ND_ELIMIT == -10 && ND_ENOSPC == -11 &&
                  ND_EREADONLY == -12 && ND_EINTERNAL == -13 && ND_ESTOPPED == -14,
              "error codes are frozen");
#else
_Static_assert(ND_OK == 0 && ND_EINVAL == -1 && ND_ENOTFOUND == -2 &&
                   ND_ECORRUPT == -3 && ND_EIO == -4 && ND_EBUSY == -5 &&
                   ND_EVERSION == -6 && ND_ENOMEM == -7 && ND_EEXIST == -8 &&
                   ND_EMISMATCH == -9 && ND_ELIMIT == -10 && ND_ENOSPC == -11 &&
                   ND_EREADONLY == -12 && ND_EINTERNAL == -13 && ND_ESTOPPED == -14,
               "error codes are frozen");
#endif

#if defined(nd_open) || defined(nd_add) || defined(nd_query) || defined(nd_batch) || \
    defined(nd_foreach_doc) || defined(nd_stats_get) || defined(ND_CLUSTER_OPTS_INIT)
#error "neardup.h defines an alias of a 0.1 name"
#endif

int main(void)
{
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    nd_db_options dbo = ND_DB_OPTIONS_INIT;
    nd_query_options qo = ND_QUERY_OPTIONS_INIT;
    nd_cluster_options co = ND_CLUSTER_OPTIONS_INIT;
    (void)fo;
    (void)dbo;
    (void)qo;
    (void)co;
    return 0;
}
