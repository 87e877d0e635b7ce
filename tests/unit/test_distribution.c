/* test_distribution.c - the per-request histogram: bucket edges mirror the
 * BPF program's dist_bucket(), percentiles land within half a bucket. */
#include <string.h>

#include "distribution.h"
#include "unit.h"

/* The BPF program's bucket function, restated (probes/clockreads.bpf.c). */
static unsigned int bucket_of(__u64 v)
{
	unsigned int e = 0;
	__u64 x = v;

	if (v < CP_DIST_SUB)
		return (unsigned int)v;
	while (x >>= 1)
		e++;
	return e * CP_DIST_SUB + (unsigned int)((v >> (e - 3)) & (CP_DIST_SUB - 1));
}

TEST(dist_buckets_tile_the_numbers)
{
	static const __u64 samples[] = { 0,    1,    7,		8,	    9,
					 15,   16,   17,	100,	    1000,
					 4095, 4096, 123456789, 1ULL << 40, (1ULL << 63) + 5 };

	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		__u64 lo, hi, v = samples[i];

		cp_dist_bucket_range(bucket_of(v), &lo, &hi);
		CHECK(lo <= v);
		CHECK(v < hi || hi == 0);
		CHECK(bucket_of(v) < CP_DIST_BUCKETS);
	}
}

TEST(dist_percentiles_within_half_a_bucket)
{
	static struct cp_dist d;

	memset(&d, 0, sizeof(d));
	/* 90 requests of 1000 ns, 9 of 5000, 1 of 40000. */
	d.bucket[bucket_of(1000)] = 90;
	d.bucket[bucket_of(5000)] = 9;
	d.bucket[bucket_of(40000)] = 1;
	d.count = 100;
	d.max = 40000;
	CHECK_NEAR(cp_dist_percentile(&d, 0.50), 1000, 1000 * 0.0625);
	CHECK_NEAR(cp_dist_percentile(&d, 0.90), 1000, 1000 * 0.0625);
	CHECK_NEAR(cp_dist_percentile(&d, 0.99), 5000, 5000 * 0.0625);
	CHECK_NEAR(cp_dist_percentile(&d, 1.00), 40000, 40000 * 0.0625);
	CHECK(cp_dist_percentile(&d, 1.00) <= 40000);
	memset(&d, 0, sizeof(d));
	CHECK_NEAR(cp_dist_percentile(&d, 0.5), 0, 0);
}
