/*
 * bench_alloc.c — bench_xmalloc and bench_xrealloc (bench_alloc.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_alloc.h"

static void out_of_memory(size_t n)
{
    fprintf(stderr, "%s: out of memory (%zu bytes)\n", program_invocation_short_name, n);
    exit(2);
}

void *bench_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) out_of_memory(n);
    return p;
}

void *bench_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) out_of_memory(n);
    return p;
}
