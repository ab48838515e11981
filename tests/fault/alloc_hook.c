/*
 * alloc_hook.c — the counted allocator of the fault-test build of the
 * library (tests/fault/nd_alloc_fault.h redirects the library's calls here).
 * Compiled into the test program, without that header. One counter for
 * every thread; the armed allocation, and that one only,
 * returns NULL with errno ENOMEM (a transient failure, as SQLite's
 * "transient" mode: the next allocation succeeds).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_hook.h"

void *nd_fault_malloc(size_t size);
void *nd_fault_calloc(size_t n, size_t size);
void *nd_fault_realloc(void *p, size_t size);
char *nd_fault_strdup(const char *s);
char *nd_fault_strndup(const char *s, size_t n);

static _Atomic uint64_t counted;
static _Atomic uint64_t fail_at;
static _Atomic int failed;

void alloc_hook_arm(uint64_t nth)
{
    atomic_store(&counted, 0);
    atomic_store(&failed, 0);
    atomic_store(&fail_at, nth);
}

int alloc_hook_disarm(void)
{
    atomic_store(&fail_at, 0);
    return atomic_load(&failed);
}

uint64_t alloc_hook_count(void) { return atomic_load(&counted); }

/* Count one allocation; nonzero when it is the one to fail. */
static int should_fail(void)
{
    uint64_t n = atomic_fetch_add(&counted, 1) + 1;
    if (n != atomic_load(&fail_at)) return 0;
    atomic_store(&failed, 1);
    errno = ENOMEM;
    return 1;
}

void *nd_fault_malloc(size_t size) { return should_fail() ? NULL : malloc(size); }

void *nd_fault_calloc(size_t n, size_t size) { return should_fail() ? NULL : calloc(n, size); }

void *nd_fault_realloc(void *p, size_t size)
{
    return should_fail() ? NULL : realloc(p, size);
}

char *nd_fault_strdup(const char *s) { return should_fail() ? NULL : strdup(s); }

char *nd_fault_strndup(const char *s, size_t n) { return should_fail() ? NULL : strndup(s, n); }
