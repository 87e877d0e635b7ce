/* distribution.c - see distribution.h. */
#include "distribution.h"

void cp_dist_bucket_range(unsigned int b, __u64 *lo, __u64 *hi)
{
	unsigned int e = b / CP_DIST_SUB, m = b % CP_DIST_SUB;

	if (b < CP_DIST_SUB) {
		*lo = b;
		*hi = (__u64)b + 1;
		return;
	}
	*lo = (1ULL << e) + ((__u64)m << (e - 3));
	*hi = *lo + (1ULL << (e - 3));
}

double cp_dist_percentile(const struct cp_dist *d, double q)
{
	__u64 rank = (__u64)(q * (double)d->count + 0.999999999), seen = 0, lo, hi;
	double mid;

	if (!d->count)
		return 0;
	if (rank == 0)
		rank = 1;
	for (unsigned int b = 0; b < CP_DIST_BUCKETS; b++) {
		seen += d->bucket[b];
		if (seen < rank)
			continue;
		cp_dist_bucket_range(b, &lo, &hi);
		mid = b < CP_DIST_SUB ? (double)lo : ((double)lo + (double)hi - 1) / 2;
		return mid > (double)d->max ? (double)d->max : mid;
	}
	return (double)d->max;
}
