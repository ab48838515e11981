/*
 * brs_measure.h — call latencies for bench_resemble as a log-scaled
 * histogram: percentiles within 1%, in constant memory whatever the
 * stream's length (its memory: bench_rss.h).
 */
#ifndef BRS_MEASURE_H
#define BRS_MEASURE_H

#include <stdint.h>

/* Buckets of 1% from 100 ns up to about 100 s; below and above land in
 * the first and the last. */
#define BRS_LAT_BUCKETS 2100

typedef struct brs_lat {
    uint64_t n;
    uint64_t count[BRS_LAT_BUCKETS];
} brs_lat;

void brs_lat_add(brs_lat *h, double seconds);
void brs_lat_merge(brs_lat *into, const brs_lat *from);
/** The q-quantile (0 < q < 1) in microseconds; NaN when empty. */
double brs_lat_quantile_us(const brs_lat *h, double q);

#endif /* BRS_MEASURE_H */
