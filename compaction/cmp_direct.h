/*
 * cmp_direct.h — reading a table's runs straight from the one SST file
 * that holds them (compaction internal; engine/ never includes this).
 *
 * Why: at 100M a k=3 query makes 10 probes, and through RocksDB each is a
 * binary search of the file's index block, a pread of a block (4 KB then,
 * 1 KB now) from the page cache and the read path around it: 4-5 us a
 * probe, where the in-memory reference takes 0.3 us. After an import a table's run space is exactly
 * one file that nothing rewrites (the generation's ingested SST), so this
 * reader keeps the index of its data blocks as an array of 64-bit bounds
 * with a direct index on their top 16 bits, and finds a run by one lookup,
 * one pread of its block and a walk of the block's entries.
 *
 * pread by default, a mapping when asked (map): a mapping is much
 * cheaper per read (ten 1 KB blocks of ten cached 500 MB files: 1.7 us
 * against 8.4 us by pread, no syscall, no copy, no page-cache look-up
 * once mapped), but its touched pages count in the process's RSS (the
 * kernel maps whole folios around a fault: at 100M the k=6 queries of
 * bench_db took RSS from 0.3 to 4.2 GiB even with the pages dropped
 * every 4096 reads), and a disk error on a mapped page ends the process
 * (SIGBUS) where pread returns ND_EIO.
 *
 * The file stays RocksDB's: RocksDB wrote it (block-based table, format
 * version 5, XXH3 checksums, no compression, user keys in the index and
 * delta-encoded index values) and RocksDB reads it everywhere else. open
 * checks each of those properties and says "unsupported" (ND_OK, *out
 * NULL) for a file written otherwise, so callers fall back to RocksDB.
 * Every block read here has its checksum verified, as RocksDB does.
 * Beyond the file, the reader is pinned to the RocksDB versions it was
 * tested with (cmp_direct_supports): the store reads no table directly
 * under any other, even if its files look the same.
 *
 * Thread-safety: immutable after open; any number of threads read at
 * once, each with its own cmp_direct_buf. Reference counted.
 */
#ifndef CMP_DIRECT_H
#define CMP_DIRECT_H

#include <stddef.h>
#include <stdint.h>

typedef struct cmp_direct cmp_direct;

/* The RocksDB versions (major * 100 + minor) whose table files this
 * reader was tested on, test_direct and test_db passing: 7.8 (Debian 12).
 * To add one, build against it and run those tests; a build against
 * another version reads every table through RocksDB, and the tests that
 * need the direct reader are skipped. */
#define CMP_DIRECT_ROCKSDB_MIN 708u
#define CMP_DIRECT_ROCKSDB_MAX 708u

/* 1 when table files written by RocksDB major.minor are in the tested
 * range, else 0: the store (cmp_store.c) asks it at open with the RocksDB
 * version of the build (kv_version) and makes no direct reader on 0. */
int cmp_direct_supports(unsigned major, unsigned minor);
/* Make the tested range [lo, hi] (major * 100 + minor), process-wide:
 * for tests of the fallback, which pretend the build's version is not
 * in it (an empty range, lo > hi); stores opened afterwards see it. */
void cmp_direct_set_supported(unsigned lo, unsigned hi);

/* Open the SST file at path, which holds table t's runs and possibly,
 * before them, fresh entries (skipped), and index its data blocks. ND_OK
 * with *out NULL if the file is not in the format above (or holds a key
 * above the run space, a deletion unless over);
 * ND_EIO if it cannot be opened or read, ND_ECORRUPT for a checksum
 * mismatch or malformed structure, ND_ENOMEM; each names path. The
 * result holds one reference (and the file open). */
int cmp_direct_open(cmp_direct **out, const char *path, unsigned t, int over, int map);
/* over: the runs file of a refold (cmp_fold.c), whose range deletion of
 * the whole run space lies below its own runs (its block is not read).
 * Deletions of fresh keys are skipped as fresh entries are; a deletion of
 * a run key in its data blocks is still corruption.
 * map: read the blocks through a shared mapping of the whole file (by
 * pread when the mapping fails). */
/* Read d's whole file once, so that the OS page cache holds it (RocksDB's
 * SstFileWriter drops what it wrote from the cache, and probes would read
 * the disk). Best effort: a failed read only leaves it uncached. */
void cmp_direct_prefetch(const cmp_direct *d);
/* Take another reference; returns d. Accepts NULL. */
cmp_direct *cmp_direct_ref(cmp_direct *d);
/* Drop a reference; the last one closes and frees. Accepts NULL. */
void cmp_direct_unref(cmp_direct *d);

/* A reader's block buffer, grown as needed; free(p) when done. Zeroed,
 * it reads one block at a time (probes); with ahead set, the reader of a
 * walk through a file reads ahead bytes at once (a 1 KB block a pread
 * would cost a syscall each). Either way a block that the bytes held
 * cover is served from them. wd identifies the file by its reader's
 * address: whoever drops its last reference to a cmp_direct that wd may
 * point to sets wd to NULL (an address can be reused). */
typedef struct cmp_direct_buf {
    uint8_t *p;
    size_t cap;
    size_t ahead;           /* bytes read at once; 0: a block at a time */
    const cmp_direct *wd;   /* p holds bytes [woff, woff + wlen) of wd's file */
    uint64_t woff;
    size_t wlen;
    uint64_t checked;       /* 1 + offset of the held block last checksummed, or 0 */
    uint64_t reads;         /* reads from the file so far (tests) */
} cmp_direct_buf;

/* A position among the runs of the file, in key order. */
typedef struct cmp_direct_it {
    const cmp_direct *d;
    cmp_direct_buf *buf;     /* holds the current block */
    size_t block;            /* index of the current block */
    const uint8_t *blk;      /* where it starts (in buf) */
    const uint8_t *p, *end;  /* next entry, end of the current block's entries */
    uint64_t until;          /* the walk stops at the first run whose tail is >= until */
    uint8_t key[24];         /* the last key read (prefix-compressed) */
    size_t klen;
} cmp_direct_it;

/* Position it before the first run whose tail is >= x, reading blocks
 * into buf. The caller's walk stops at the first run whose tail is >=
 * until (0 when not known: a block at a time): each read from the file
 * takes every block up to that run's at once (at most 64 KB), so a probe
 * whose runs fill several blocks reads once, not once a block. */
int cmp_direct_seek(const cmp_direct *d, uint64_t x, uint64_t until, cmp_direct_buf *buf,
                    cmp_direct_it *it);
/* A hint that a seek at x comes soon, so that the cache misses of the
 * index look-ups of several files (a query probes one per table) overlap
 * instead of following each other: stage 1 asks for the direct index's
 * entry of x; stage 2, after stage 1 of every file, reads it and asks
 * for the block bounds and offsets it points to; stage 3, after stage 2
 * of every file, finds the block and, in a mapped file, asks for it.
 * Changes nothing else. */
void cmp_direct_hint(const cmp_direct *d, uint64_t x, int stage);
/* Does the first run whose tail is >= x lie past it's current block? A
 * walk would read another block to get there, which a seek does with
 * less: one read of the block that holds it. */
int cmp_direct_beyond(const cmp_direct_it *it, uint64_t x);
/* The next run: 1 with its tail and encoded bytes (valid until the next
 * call), 0 after the last, or ND_ECORRUPT naming the file and block for a
 * malformed entry or a block whose checksum does not match (ND_EIO,
 * ND_ENOMEM). */
int cmp_direct_next(cmp_direct_it *it, uint64_t *tail, const char **val, size_t *vlen);

/* Number of data blocks indexed (for tests and stats). */
size_t cmp_direct_blocks(const cmp_direct *d);

#endif /* CMP_DIRECT_H */
