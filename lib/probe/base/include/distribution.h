/* distribution.h - percentiles of the histograms the BPF program fills:
 * reads per request (one bucket per count) and a counter per request
 * (struct cp_dist in probes/clockreads.h: log-linear buckets, 8 per power
 * of two). */
#ifndef CP_DISTRIBUTION_H
#define CP_DISTRIBUTION_H

#include <linux/types.h>

#include "clockreads.h"

/* The index of the bucket holding the q-quantile (nearest rank) of the
 * count values filed in buckets[0..n), or n when there is none. Both
 * histograms (reads per request, counters per request) are read this way. */
unsigned int cp_rank_bucket(const __u64 *buckets, unsigned int n, __u64 count, double q);

/* The lowest value bucket b holds, and the first value past it. */
void cp_dist_bucket_range(unsigned int b, __u64 *lo, __u64 *hi);

/* The q-quantile (0 < q <= 1, nearest rank): the middle of the bucket
 * holding that rank, never above the exact maximum; 0 when empty. Within
 * 6.25% of the true value (half a bucket). */
double cp_dist_percentile(const struct cp_dist *d, double q);

#endif
