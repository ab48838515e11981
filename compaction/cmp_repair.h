/*
 * cmp_repair.h — salvage of a damaged, closed database in place
 * (cmp_repair.c).
 */
#ifndef CMP_REPAIR_H
#define CMP_REPAIR_H

#include <stdint.h>

/* st_repair_info.synced_docs when no synced write was recorded. */
#define ST_SYNCED_NO_DOCS UINT64_MAX

/* What st_repair did besides RocksDB's repair. */
typedef struct st_repair_info {
    uint64_t log_records_dropped; /* damaged log records (or runs of damaged bytes) */
    unsigned files_mended;        /* table files rewritten without their damaged blocks */
    uint64_t blocks_cut;          /* the damaged data blocks left out of them */
    unsigned files_damaged;       /* table files set aside whole (nothing readable) */
    unsigned files_restored;      /* files ingested whole, put back into their families */
    uint64_t entries_bound;       /* at least the entries the table files and logs
                                   * hold (their properties, else a bound from
                                   * their sizes): no more documents were there */
    uint64_t synced_docs;         /* the document counter of the last synced write
                                   * (cmp_synced.h), acknowledged; or
                                   * ST_SYNCED_NO_DOCS (none recorded) */
    uint64_t synced_seq;          /* that write's sequence number: a store
                                   * salvaged to it or beyond lost none of it */
    unsigned meta_lost;           /* a table file of the meta family lost
                                   * entries: its counters record may be an
                                   * older one */
    unsigned named_lost;          /* a table file of the documents, reverse
                                   * or sketch family (or of a family the
                                   * manifest did not say) lost entries */
    /* What the repair left in path/lost/, told apart (lost_sort): */
    unsigned lost_damaged;        /* set aside as damage: table files found
                                   * damaged or unreadable (the originals of
                                   * those cut), files ingested whole not put
                                   * back, a damaged MANIFEST, anything else */
    unsigned lost_logs;           /* logs replayed into table files: not damage */
    unsigned lost_unused;         /* intact table files no family kept (a
                                   * dropped generation's, not yet deleted)
                                   * and a MANIFEST read whole, replaced by the
                                   * one RocksDB's repair writes: not damage */
} st_repair_info;

/* Salvage the closed store at path in place (accepting the loss of
 * acknowledged writes the record of the last synced write names: the
 * record is removed): what is intact stays, a
 * table file's damaged data blocks are cut out of it, files RocksDB's
 * repair cannot keep whole move to path/lost/ (the originals of the files
 * cut too), and files ingested whole keep their families. The tables may
 * then disagree with the documents: the caller rebuilds them. info (may be
 * NULL) says what was done. */
int st_repair(const char *path, st_repair_info *info);

/* Remove the closed store at path, a rebuild that did not finish, if its
 * directory holds only a store's files: 1 when removed, else 0. */
int st_remove_store(const char *path);

#endif /* CMP_REPAIR_H */
