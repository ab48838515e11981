/*
 * alloc_hook.h — the control of the failing allocator (alloc_hook.c):
 * arm it to fail the Nth allocation of the library (counted from the
 * arming), read how many it counted and whether it failed one.
 */
#ifndef ND_TEST_ALLOC_HOOK_H
#define ND_TEST_ALLOC_HOOK_H

#include <stdint.h>

/* Count allocations from now on and fail the nth (0: fail none). */
void alloc_hook_arm(uint64_t nth);
/* Stop failing; return 1 if an allocation was failed since the arming. */
int alloc_hook_disarm(void);
/* Allocations counted since the last arming. */
uint64_t alloc_hook_count(void);

#endif
