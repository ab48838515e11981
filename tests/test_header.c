/*
 * test_header.c — neardup.h compiles alone, warning-free, as C11 and C++
 * (built by tests/meson.build with -Wall -Wextra -Wpedantic -Werror: as
 * C11, as C11 without the old names (ND_NO_OLD_NAMES), and as C++).
 * Also pins the numeric values of the error codes, which never change, and
 * uses every options struct's INIT and, where present, the old names.
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
#ifndef ND_NO_OLD_NAMES
    /* The names exist (unevaluated: this program is not linked with the
     * library). */
    nd_cluster_opts old = ND_CLUSTER_OPTS_INIT;
    (void)old;
    (void)sizeof(&nd_open);
    (void)sizeof(&nd_expire);
    (void)sizeof(&nd_loader_commit);
#endif
    return 0;
}
