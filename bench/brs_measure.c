/*
 * brs_measure.c — the latency histogram of bench_resemble (brs_measure.h).
 */
#include "brs_measure.h"

#include <math.h>
#include <stdint.h>

static const double LAT_MIN = 1e-7, LAT_STEP = 1.01;

void brs_lat_add(brs_lat *h, double seconds)
{
    int b = seconds <= LAT_MIN ? 0 : (int)(log(seconds / LAT_MIN) / log(LAT_STEP));
    if (b >= BRS_LAT_BUCKETS) b = BRS_LAT_BUCKETS - 1;
    h->count[b]++;
    h->n++;
}

void brs_lat_merge(brs_lat *into, const brs_lat *from)
{
    for (int b = 0; b < BRS_LAT_BUCKETS; b++) into->count[b] += from->count[b];
    into->n += from->n;
}

double brs_lat_quantile_us(const brs_lat *h, double q)
{
    if (h->n == 0) return NAN;
    uint64_t want = (uint64_t)ceil(q * (double)h->n), seen = 0;
    if (want == 0) want = 1;
    for (int b = 0; b < BRS_LAT_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= want) /* the bucket's middle */
            return 1e6 * LAT_MIN * pow(LAT_STEP, b + 0.5);
    }
    return NAN;
}
