/* bench_util.h - what the C benchmarks share: a monotonic clock in ms,
 * a double comparator for qsort (medians), and a seeded xorshift PRNG. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <time.h>

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Uniform in [0, 1) from the xorshift state *rng (seeded by the caller). */
static inline double uniform(unsigned long long *rng)
{
	*rng ^= *rng >> 12;
	*rng ^= *rng << 25;
	*rng ^= *rng >> 27;
	return ((*rng * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
