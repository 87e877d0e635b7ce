/* stats.h - the statistics behind the gate.
 *
 * compare decides "regressed beyond the bound" for sampled measures (times,
 * counters) from a handful of runs per side. Everything here is
 * distribution-free (ranks, order statistics): run-to-run noise of
 * performance measures is skewed and heavy-tailed, so means and t-tests
 * would lie. Deterministic: no random numbers, the same input gives the
 * same verdict on every machine.
 *
 * Methods (references: Hollander & Wolfe, "Nonparametric Statistical
 * Methods", ch. 4; Holm 1979; Benjamini & Hochberg 1995):
 *   - median and quantiles: linear interpolation between order statistics
 *     (type 7, the default of R and numpy);
 *   - Mann-Whitney U: exact p-values from the permutation distribution of
 *     the mid-rank sum for small samples (ties included), else the normal
 *     approximation with tie correction and continuity correction;
 *   - Hodges-Lehmann shift: the median of all m*n pairwise differences
 *     (or ratios), with the distribution-free confidence interval whose ends
 *     are the C-th smallest and C-th largest of them, C from the normal
 *     approximation of U's null distribution;
 *   - Holm (family-wise error) and Benjamini-Hochberg (false discovery
 *     rate) adjusted p-values. */
#ifndef CP_STATS_H
#define CP_STATS_H

#include <stddef.h>

/* Two-sided normal quantile for 95% confidence: Phi^-1(0.975). */
#define CP_Z_975 1.959963984540054

/* Median of n values (n >= 1); does not modify v. NaN for n == 0. */
double cp_median(const double *v, size_t n);

/* q-quantile (0 <= q <= 1), type 7 interpolation; does not modify v. */
double cp_quantile(const double *v, size_t n, double q);

/* Standard normal upper tail, P(Z > z). */
double cp_normal_sf(double z);

/* Up to this many pairs (n_x * n_y) the p-value comes from the exact
 * permutation distribution of U; beyond it, from the normal
 * approximation. At small N the approximation cannot give a small p at
 * all (its smallest at 5 runs a side is 0.012, the exact one 0.0079), so
 * with a correction for many measures nothing could ever be detected. */
#define CP_MW_EXACT_MAX_PAIRS 256

struct cp_mann_whitney {
	double u;	  /* U of the second sample (head): pairs with y > x, ties 1/2 */
	double z;	  /* standardised, continuity corrected; 0 when no variance */
	double p;	  /* two-sided p-value in [0, 1] */
	double p_greater; /* one-sided: y tends to be larger than x */
	double p_less;	  /* one-sided: y tends to be smaller than x */
	int exact;	  /* 1: from the exact distribution (ties kept as they are) */
};

/* Mann-Whitney U test of x (n_x values) against y (n_y values). Needs
 * n_x, n_y >= 1; when every value is tied the p-values are 1. Exact when
 * n_x * n_y <= CP_MW_EXACT_MAX_PAIRS: the distribution of the mid-rank
 * sum over all splits of the pooled values (so ties are handled as they
 * are, conditionally on the tie pattern, as benchstat does); else the
 * normal approximation with tie correction of the variance and a
 * continuity correction. */
int cp_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		    struct cp_mann_whitney *out);

/* The same, always with the normal approximation. */
int cp_mann_whitney_normal(const double *x, size_t nx, const double *y, size_t ny,
			   struct cp_mann_whitney *out);

/* The smallest two-sided p-value that n_x and n_y runs can give at all
 * (the samples fully apart, no ties): 2 / C(n_x + n_y, n_x) exactly, or
 * the normal approximation's beyond CP_MW_EXACT_MAX_PAIRS. */
double cp_mann_whitney_min_p(size_t nx, size_t ny);

/* Rank C (1-based) of the Hodges-Lehmann confidence interval's lower end
 * among the m*n sorted pairwise differences, for a two-sided interval at
 * normal quantile z: floor(mn/2 - z*sqrt(mn(m+n+1)/12)). Returns 0 when no
 * such interval exists (too few runs). */
size_t cp_hl_rank(size_t m, size_t n, double z);

/* Smallest k such that k runs on each side give an interval at quantile z. */
size_t cp_hl_min_runs(double z);

struct cp_shift {
	double point, lo, hi; /* estimate and interval ends */
	int has_interval;     /* 0 when too few runs: lo/hi are NaN */
};

/* Hodges-Lehmann estimate of the shift y - x: the median of all y_j - x_i,
 * with the interval at normal quantile z. scratch must hold nx*ny doubles.
 * Returns -1 on an empty side (EINVAL) or a NaN value (EDOM). */
int cp_hl_shift(const double *x, size_t nx, const double *y, size_t ny, double z, double *scratch,
		struct cp_shift *out);

/* The same on the ratio y / x (all values must be > 0; returns -1
 * otherwise): the median of all y_j / x_i and its interval. Equivalent to
 * the shift of log values, so it suits multiplicative noise and gives the
 * relative change directly (ratio - 1). */
int cp_hl_ratio(const double *x, size_t nx, const double *y, size_t ny, double z, double *scratch,
		struct cp_shift *out);

/* Adjusted p-values for n simultaneous tests, written to adj (may alias p).
 * NaN entries are ignored (left NaN) and not counted in n. */
int cp_holm(const double *p, size_t n, double *adj);
int cp_benjamini_hochberg(const double *p, size_t n, double *adj);

#endif
