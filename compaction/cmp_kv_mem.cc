/*
 * cmp_kv_mem.cc — the key-value adapter's memory budget under an address
 * space limit (cmp_kv_mem.h says why). C++ for the new handler; it does
 * not include RocksDB.
 *
 * The figures (RocksDB 7.8, a 3M-document store, `ulimit -v` 80 MB..1 GB):
 * a process maps about 55 MB of libraries and 8 MB of stack per thread
 * before it holds any data; RocksDB starts three threads of its own
 * under a limit (a flush, a compaction, its timer), four without. A flush's peak is about its
 * memtable plus its output's filter (8 bytes a key until the file is
 * finished); a compaction's about its output's filter and one block per
 * input file; each memtable allocates its arena in blocks of an eighth
 * of its size, the first on its first write. Sized by default (64 MB
 * memtables, 8 MB arena blocks, a 64 MB cache) a store of 14 families
 * needs more than 200 MB at its first writes; the plan shrinks them to
 * fit the room left and keeps the reserve for the background work.
 */
extern "C" {
#include "nd_error.h"
}
#include "cmp_kv_mem.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <new>

#define MB (1ull << 20)

/* The threads a writable store starts under a limit (RocksDB's flush,
 * compaction and timer threads, the engine's fold thread) and what any
 * command needs beyond them to do anything at all. */
enum { KV_THREADS = 4 };
#define KV_FLOOR (24 * MB)

/* ---- the reserve ------------------------------------------------------- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned users;                 /* databases holding it, under mu */
static uint64_t reserve_len;           /* its size, under mu */
static uint64_t reserve_limit;         /* the limit it was planned for, for messages */
static std::atomic<void *> reserve_at; /* mapped, or NULL when spent */
static std::atomic<int> spent;         /* the handler unmapped it */
static std::new_handler prev_handler;

/* operator new failed, on any thread: give it the reserve's room and let
 * it retry; with no reserve left, what would have happened without us.
 * Not only RocksDB's own threads: its write path is not exception-safe
 * either (a std::bad_alloc caught by KV_GUARD in the middle of a write
 * left its write queue taken, and a later family drop waited for it
 * forever). Taking the reserve lets the call finish; the failure is
 * reported at the next call's kv_mem_check, between RocksDB calls. */
static void on_no_memory()
{
    void *p = reserve_at.exchange(nullptr);
    if (p) {
        munmap(p, reserve_len);
        spent.store(1);
        return;
    }
    if (prev_handler) {
        prev_handler();
        return;
    }
    throw std::bad_alloc();
}

static void *map_reserve(uint64_t len)
{
    void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int no_room(const char *what)
{
    return nd_err_set(ND_ENOMEM,
                      "storage: the memory limit (ulimit -v %llu) %s",
                      (unsigned long long)(reserve_limit >> 10), what);
}

int kv_mem_reserve_take(const kv_mem *m)
{
    if (!m->limited || !m->reserve) return ND_OK;
    int rc = ND_OK;
    pthread_mutex_lock(&mu);
    if (users == 0) {
        reserve_len = m->reserve;
        reserve_limit = m->limit;
        void *p = map_reserve(reserve_len);
        if (!p) {
            rc = no_room("leaves no room for RocksDB's background work");
        } else {
            reserve_at.store(p);
            spent.store(0);
            std::new_handler h = std::set_new_handler(on_no_memory);
            if (h != on_no_memory) prev_handler = h;
        }
    }
    if (rc == ND_OK) users++;
    pthread_mutex_unlock(&mu);
    return rc;
}

void kv_mem_reserve_drop(const kv_mem *m)
{
    if (!m->limited || !m->reserve) return;
    pthread_mutex_lock(&mu);
    if (users > 0 && --users == 0) {
        void *p = reserve_at.exchange(nullptr);
        if (p) munmap(p, reserve_len);
        /* Put back the handler found, unless someone replaced ours. */
        if (std::get_new_handler() == on_no_memory) std::set_new_handler(prev_handler);
        prev_handler = nullptr;
    }
    pthread_mutex_unlock(&mu);
}

int kv_mem_check(void)
{
    if (!spent.load(std::memory_order_relaxed)) return ND_OK;
    int rc = ND_OK;
    pthread_mutex_lock(&mu);
    if (users > 0 && !reserve_at.load()) {
        void *p = map_reserve(reserve_len);
        if (p) {
            reserve_at.store(p);
            spent.store(0);
        } else {
            rc = no_room("is reached; RocksDB's background work holds the rest");
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* ---- the plan ---------------------------------------------------------- */

/* Bytes the process maps now (0 if unknown: the plan then trusts the
 * limit alone). */
static uint64_t mapped_now(void)
{
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%llu", &pages) != 1) pages = 0;
    fclose(f);
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* A new thread's stack: RLIMIT_STACK when finite (glibc's rule), else 8 MB. */
static uint64_t stack_bytes(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_STACK, &r) == 0 && r.rlim_cur != RLIM_INFINITY && r.rlim_cur > 0)
        return (uint64_t)r.rlim_cur;
    return 8 * MB;
}

/* glibc gives each thread that allocates a malloc arena of its own, and
 * each reserves 64 MB of address space (HEAP_MAX_SIZE) as it is made:
 * RocksDB's two threads beside a reader took 128 MB of a 250 MB limit,
 * the main thread's allocations then failed, among them RocksDB's
 * unchecked malloc in LRUCacheShard::Insert (SIGSEGV). Under a limit
 * every thread shares the main arena (process-wide, and for the rest of
 * the process: the price is contention on malloc's lock, paid only under
 * a limit). */
static void one_arena(void)
{
#ifdef M_ARENA_MAX
    static std::atomic<int> done;
    if (!done.exchange(1)) mallopt(M_ARENA_MAX, 1);
#endif
}

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int kv_mem_plan(kv_mem *out, uint64_t cache_bytes, int readonly)
{
    *out = kv_mem{};
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return ND_OK;
    out->limited = 1;
    out->limit = (uint64_t)r.rlim_cur;
    one_arena();
    uint64_t used = mapped_now();
    out->left = used < out->limit ? out->limit - used : 0;
    /* A reader neither flushes nor compacts: one thread (RocksDB's
     * timer) and a smaller reserve. It still needs one: its open builds a
     * memtable per family (and replays the log into them), reads every
     * table file's index and filter, and fills the block cache, and an
     * allocation failing there unwound RocksDB half-way (exit 134 in
     * Arena::~Arena at `ulimit -v` 199-207 MB, SIGSEGV in
     * LRUCacheShard::Insert, whose malloc is unchecked). */
    uint64_t threads = (readonly ? 2 : KV_THREADS) * (stack_bytes() + 64 * 1024);
    out->reserve = readonly ? clamp(out->left / 8, 8 * MB, 32 * MB)
                            : clamp(out->left / 4, 16 * MB, 64 * MB);
    uint64_t need = out->reserve + threads + KV_FLOOR;
    if (out->left < need)
        return nd_err_set(ND_ENOMEM,
                          "storage: the memory limit (ulimit -v %llu) leaves %llu MB; "
                          "opening the store needs %llu MB",
                          (unsigned long long)(out->limit >> 10),
                          (unsigned long long)(out->left / MB), (unsigned long long)(need / MB));
    uint64_t avail = out->left - out->reserve - threads;
    out->cache = clamp(avail / 8, 1 * MB, cache_bytes);
    out->memtable = clamp(avail / 16, 1 * MB, 64 * MB);
    out->memtables = avail / 4;
    /* A reader's memtables hold only the log it replays at open (a full
     * one is set aside and a new one begun: no flush), so they are small:
     * each family's first arena block and memtable bloom filter, sized
     * by the memtable, were taken at open whether the log held anything
     * or not (14 families of 8 MB blocks). */
    if (readonly) out->memtable = clamp(avail / 64, 1 * MB, 4 * MB);
    out->arena = clamp(out->memtable / 8, 64 * 1024, 8 * MB);
    /* A compaction holds its output file's filter entries (8 bytes a
     * key) until the file is done: smaller files, a smaller peak. */
    out->file = clamp(avail / 16, 4 * MB, 64 * MB);
    /* RocksDB 7.8 does not check LZ4's allocation of its stream (a
     * compaction under a tight limit dies with SIGSEGV): no compression
     * of new files when memory is short. */
    out->compress = avail >= 1024 * MB;
    return ND_OK;
}
