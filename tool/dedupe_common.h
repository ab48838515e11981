/*
 * dedupe_common.h — what `neardup dedupe` and `neardup-mpi dedupe` share
 * besides the library: the mapping of their options to nd_dedupe_options,
 * and the output lines, one writer for both so that their outputs stay
 * byte-equal. Part of tool/ (see cli_common.h).
 */
#ifndef ND_DEDUPE_COMMON_H
#define ND_DEDUPE_COMMON_H

#include <neardup.h>

/* Complete o (parsed k, containment, memory and features already in it):
 * --min-resemblance R (0 = by distance alone) and fingerprint input mean
 * ND_DEDUPE_SIMHASH_ONLY, else R; the scratch directory is $TMPDIR (the
 * library's default, /tmp, when unset or empty). */
void dedupe_cli_options(nd_dedupe_options *o, double min_res, int fp_input);

/* An nd_dedupe_pair_cb: KEY1<TAB>KEY2<TAB>DIST, or with *(int *)payload
 * set, {"a":..,"b":..,"dist":..[,"resemblance":..][,"containment":..]}
 * (each estimate when the library made one). Always returns 0. */
int dedupe_print_pair(const nd_dedupe_pair *p, void *payload);

/* An nd_dedupe_member_cb for clusters: CLUSTER<TAB>keep|drop<TAB>KEY<TAB>
 * DIST, or JSON with *(int *)payload set. Always returns 0. */
int dedupe_print_member(const nd_dedupe_member *m, void *payload);

/* What dedupe_print_role prints: the keys of one role. */
typedef struct dedupe_role_view {
    nd_dedupe_role want;
    int json;
} dedupe_role_view;

/* An nd_dedupe_member_cb for keep and drop: the key of each member of
 * the wanted role, or {"keep":KEY} / {"drop":KEY}. Always returns 0. */
int dedupe_print_role(const nd_dedupe_member *m, void *payload);

#endif
