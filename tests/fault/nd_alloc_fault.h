/*
 * nd_alloc_fault.h — test builds only: the library's own allocations
 * through counted wrappers, so that a fault test can fail the Nth one.
 *
 * tests/fault/ compiles the library's sources a second time with
 * `-include tests/fault/nd_alloc_fault.h` (a static library for the fault
 * tests, never installed): every malloc, calloc, realloc, strdup and
 * strndup of engine/, compaction/ and common/ becomes a call to
 * nd_fault_*, defined by tests/fault/alloc_hook.c, which fails the
 * allocation the test armed (RocksDB's own C++ allocations are not
 * concerned). free is left alone: it may receive RocksDB's memory.
 * No libc header is included here (a source's own feature macros, such
 * as _GNU_SOURCE, must come first): the later declarations of <stdlib.h>
 * and <string.h> are renamed by the macros into these same prototypes.
 */
#ifndef ND_ALLOC_FAULT_H
#define ND_ALLOC_FAULT_H

#include <stddef.h> /* size_t only: it pulls in no feature macros */

void *nd_fault_malloc(size_t size);
void *nd_fault_calloc(size_t n, size_t size);
void *nd_fault_realloc(void *p, size_t size);
char *nd_fault_strdup(const char *s);
char *nd_fault_strndup(const char *s, size_t n);

#define malloc(size) nd_fault_malloc(size)
#define calloc(n, size) nd_fault_calloc(n, size)
#define realloc(p, size) nd_fault_realloc(p, size)
#define strdup(s) nd_fault_strdup(s)
#define strndup(s, n) nd_fault_strndup(s, n)

#endif
