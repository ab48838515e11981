/*
 * dedupe_group.h — groups of identical documents for the clusters of the
 * corpus dedupe (nd_dedupe_clusters, nd_dedupe_roles).
 *
 * Identical documents (same fingerprint, and same sketch when texts were
 * read) have the same neighbours, so the greedy clustering of the whole
 * graph assigns a group as a whole: clustering one document of each group
 * gives the same answer without the m(m-1)/2 pairs inside a group.
 */
#ifndef ND_DEDUPE_GROUP_H
#define ND_DEDUPE_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "dedupe_docs.h"

/* The groups of the documents of d: (*out_g)[i] = the group of document i,
 * groups numbered in the input order of their leaders; the leader of a
 * group is its first document in priority order (order: the n documents in
 * priority order), and (*out_ids)[x] is the leader of group x; *out_m
 * groups. The caller frees *out_g and *out_ids. memory bounds the sort
 * buffers in bytes (32 a document sorted at once; 0 = no limit).
 * @return ND_OK, or an nd_error of the store's reads or ND_ENOMEM
 * (nothing to free). */
int dedupe_group(uint32_t **out_g, uint32_t **out_ids, size_t *out_m, dedupe_docs *d,
                 const uint32_t *order, size_t memory);

#endif
