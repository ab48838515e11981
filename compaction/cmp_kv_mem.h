/*
 * cmp_kv_mem.h — the key-value adapter's memory budget under an address
 * space limit (RLIMIT_AS: `ulimit -v`, some container limits). Used by
 * cmp_kv.cc alone.
 *
 * RocksDB's flushes and compactions run on its own threads. An
 * allocation that fails there throws std::bad_alloc where no caller can
 * catch it (or, in C code it calls such as LZ4's, returns NULL to code
 * that does not check): the process ends with SIGABRT or SIGSEGV. Two
 * measures keep that from happening:
 *
 *  - the plan (kv_mem_plan): at open, the room left under the limit
 *    sizes RocksDB's memory (block cache, memtables and their arena
 *    blocks, compression), and an open that leaves too little room is
 *    refused with ND_ENOMEM naming the limit;
 *  - the reserve (kv_mem_reserve_*): while a database is open under a
 *    limit, a block of address space is mapped (PROT_NONE: no memory,
 *    but it counts toward the limit), so the caller's own allocations
 *    fail — and are reported — before RocksDB's. A C++ new handler
 *    unmaps it when an allocation fails anywhere (RocksDB's threads
 *    included), and that allocation is retried in the room it freed. The
 *    next write or maintenance call (kv_mem_check) maps it again, or
 *    fails with ND_ENOMEM when it cannot: the caller stops, and the
 *    background work it started has the room to finish.
 *
 * Without a limit all of this is inert: no mapping, no handler.
 */
#ifndef ND_CMP_KV_MEM_H
#define ND_CMP_KV_MEM_H

#include <stdint.h>

/* The memory a database may plan for. limited = 0: no address space
 * limit, nothing else set. */
typedef struct kv_mem {
    int limited;
    uint64_t limit;     /* RLIMIT_AS, bytes */
    uint64_t left;      /* the limit less what the process maps now */
    uint64_t reserve;   /* the reserve's size */
    uint64_t cache;     /* block cache bytes */
    uint64_t memtable;  /* write_buffer_size of each family */
    uint64_t memtables; /* db_write_buffer_size: all families' memtables */
    uint64_t arena;     /* arena_block_size of each family */
    uint64_t file;      /* target file size of families with no size of their own */
    int compress;       /* compression allowed (LZ4 allocates per block) */
} kv_mem;

#ifdef __cplusplus
extern "C" {
#endif

/* Plan for a database whose block cache would be cache_bytes (readonly:
 * one that never writes: small memtables and a smaller reserve): *out
 * as above. ND_ENOMEM,
 * naming the limit, when the room left is below what RocksDB needs to
 * run at all. */
int kv_mem_plan(kv_mem *out, uint64_t cache_bytes, int readonly);
/* Hold the reserve of m (a no-op without one); ND_ENOMEM when it
 * cannot be mapped. Each successful call is paired with one
 * kv_mem_reserve_drop. */
int kv_mem_reserve_take(const kv_mem *m);
void kv_mem_reserve_drop(const kv_mem *m);
/* ND_OK, or ND_ENOMEM (with a message naming the limit) when the reserve
 * was spent and cannot be mapped again. */
int kv_mem_check(void);

#ifdef __cplusplus
}
#endif

#endif
