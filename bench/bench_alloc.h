/*
 * bench_alloc.h — allocation that cannot fail, for the standalone bench
 * programs (dedupe_quality, quality_sim, bench_resemble and its brs_gen):
 * out of memory ends the program with "PROGRAM: out of memory (N bytes)"
 * and exit status 2, which their scripts report as a failed run.
 */
#ifndef BENCH_ALLOC_H
#define BENCH_ALLOC_H

#include <stddef.h>

void *bench_xmalloc(size_t n);
void *bench_xrealloc(void *p, size_t n);

#endif /* BENCH_ALLOC_H */
