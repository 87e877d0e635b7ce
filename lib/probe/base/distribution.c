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

unsigned int cp_rank_bucket(const __u64 *buckets, unsigned int n, __u64 count, double q)
{
	__u64 rank = (__u64)(q * (double)count + 0.999999999), seen = 0;

	if (rank == 0)
		rank = 1;
	for (unsigned int b = 0; b < n; b++) {
		seen += buckets[b];
		if (seen >= rank)
			return b;
	}
	return n;
}

double cp_dist_percentile(const struct cp_dist *d, double q)
{
	unsigned int b = cp_rank_bucket(d->bucket, CP_DIST_BUCKETS, d->count, q);
	__u64 lo, hi;
	double mid;

	if (!d->count)
		return 0;
	if (b == CP_DIST_BUCKETS)
		return (double)d->max;
	cp_dist_bucket_range(b, &lo, &hi);
	mid = b < CP_DIST_SUB ? (double)lo : ((double)lo + (double)hi - 1) / 2;
	return mid > (double)d->max ? (double)d->max : mid;
}
