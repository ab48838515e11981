/*
 * cmp_sstfile.h — a repair's reader of RocksDB's table files
 * (cmp_sstfile.c): what a file's properties say, whether each of its
 * blocks is intact, and a copy of a damaged file without its damaged data
 * blocks. A second owner of RocksDB's block-based table format, beside
 * cmp_direct.c, pinned like it to what RocksDB 7.8 writes (format
 * versions 2 to 5, XXH3 block checksums, blocks uncompressed or LZ4, a
 * binary-search index); a file in another form is left to RocksDB.
 */
#ifndef CMP_SSTFILE_H
#define CMP_SSTFILE_H

#include <stdint.h>

typedef struct cmp_sst_info {
    int external;          /* written aside and ingested whole (a file writer's) */
    uint64_t global_seqno; /* such a file's sequence number, as last ingested */
    uint64_t blocks;       /* data blocks the index names */
    uint64_t bad_blocks;   /* of them, those whose checksum fails */
    int bad_filter;        /* its bloom filter's block is damaged (dropped when
                            * mended: RocksDB reads a file without one) */
    uint64_t entries;      /* its properties: entries (deletions among them), */
    uint64_t deletions;
    uint64_t key_bytes;    /* their keys' bytes (each with RocksDB's 8 bytes
                            * of sequence and type) and their values' bytes */
    uint64_t value_bytes;
} cmp_sst_info;

#define CMP_SST_DAMAGED 2

/* Read the table file at path: its footer, meta blocks and index, and
 * check the checksum of every data block. 1 with *info when it could;
 * CMP_SST_DAMAGED when its footer, its index or a meta block other than
 * the filter is damaged, or every data block (nothing of it can be read);
 * 0 when the file is in a form this reader does not know (*info says
 * nothing then); an error (ND_EIO, ND_ENOMEM) otherwise. With out
 * non-NULL and damaged data blocks or filter, also write to out the file
 * without them: its bytes up to its footer (the damaged blocks stay
 * there, unnamed), then an index of the intact blocks, a metaindex
 * without a damaged filter, and a new footer — a file RocksDB reads as
 * the original less those blocks, every entry with its own sequence
 * number; none is written when no data block is intact. */
int cmp_sst_mend(const char *path, const char *out, cmp_sst_info *info);

#endif /* CMP_SSTFILE_H */
