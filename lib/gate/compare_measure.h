/* compare_measure.h - judging one measure, base runs against head runs:
 * an exact measure value to value, a sampled one by its median, a
 * Hodges-Lehmann interval of the change and Mann-Whitney tests of "beyond
 * the bound" (compare.h says the rules); added, removed and conflicting
 * measures decided without statistics. The verdict (compare.c) runs the
 * first pass on every measure at once, corrects the p-values over the
 * family, then asks the second pass to decide. */
#ifndef CP_COMPARE_MEASURE_H
#define CP_COMPARE_MEASURE_H

#include <stddef.h>

#include "bounds.h"
#include "compare.h"
#include "compare_gathered.h"

/* Serial first pass over measure i of g: what it is, whether both sides
 * have it, its bound, and the decisions that need no statistics. */
void cp_compare_prepare_measure(struct cp_measure_verdict *mv, const struct cp_gathered *g,
				size_t i, struct cp_bounds *bounds);

/* The statistics of every measure, spread over the CPUs (cp_parallel_for
 * with cp_compare_measure_stats): each worker has its own value and pair
 * buffers of buffer_len doubles, from cp_compare_buffer_len. */
struct cp_compare_stats_job {
	const struct cp_gathered *g;
	struct cp_measure_verdict *measures;
	const struct cp_bounds *bounds;
	double z;
	double *buffers; /* per worker: base values, head values, pairs */
	size_t buffer_len;
};

size_t cp_compare_buffer_len(size_t nb, size_t nh);
void cp_compare_measure_stats(void *job, size_t i, size_t worker);

/* Second pass over a sampled measure: the decision, once its p-values are
 * adjusted over the family of nfamily measures (env_why: the host
 * fingerprints differ, which makes it inconclusive; NULL when not). */
void cp_compare_decide_sampled(struct cp_measure_verdict *mv, double alpha, const char *env_why,
			       size_t nfamily, size_t min_runs);

/* z for a two-sided (1 - alpha) interval. */
double cp_compare_z_for_alpha(double alpha);

#endif
