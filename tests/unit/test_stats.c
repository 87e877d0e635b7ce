/* test_stats.c - lib/gate/stats.c against reference values.
 *
 * The reference values were computed independently with python3 from
 * hand-written formulas that do not share code or method with stats.c:
 * Mann-Whitney U by counting all pairs directly (not from ranks), the
 * tie-corrected variance mn/12*((N+1) - sum(t^3-t)/(N(N-1))), p =
 * erfc(|z|/sqrt2) with a 0.5 continuity correction; Hodges-Lehmann by
 * sorting every pairwise difference/ratio in Python; quantiles with
 * statistics.quantiles(method='inclusive'); Holm and BH from their
 * definitions. The first data set is the x/y example of R's
 * ?wilcox.test, whose documented one-sided p-value 0.06646 is half of ours. */
#include <math.h>
#include <stdlib.h>

#include "stats.h"
#include "unit.h"

static const double X[] = { 1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30 };
static const double Y[] = { 0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29 };

TEST(stats_median_and_quantiles)
{
	double v[] = { 7, 1, 3, 9, 4 }, even[] = { 4, 1, 3, 2 };

	CHECK_NEAR(cp_median(v, 5), 4, 0);
	CHECK_NEAR(cp_quantile(v, 5, 0.25), 3.0, 1e-12);
	CHECK_NEAR(cp_quantile(v, 5, 0.75), 7.0, 1e-12);
	CHECK_NEAR(cp_quantile(v, 5, 0), 1, 0);
	CHECK_NEAR(cp_quantile(v, 5, 1), 9, 0);
	CHECK_NEAR(cp_median(even, 4), 2.5, 1e-12);
	CHECK(isnan(cp_median(v, 0)));
	CHECK_NEAR(v[0], 7, 0); /* input untouched */
}

TEST(stats_mann_whitney_reference)
{
	struct cp_mann_whitney mw;

	CHECK_INT(cp_mann_whitney_normal(X, 9, Y, 9, &mw), 0);
	CHECK_NEAR(mw.u, 23.0, 1e-12);
	CHECK_NEAR(mw.z, -1.502688234205555, 1e-9);
	CHECK_NEAR(mw.p, 0.13291945818531886, 1e-9);
}

TEST(stats_mann_whitney_ties)
{
	double a[] = { 1, 2, 2, 3, 3, 3, 4 }, b[] = { 3, 4, 4, 5, 5, 6 };
	struct cp_mann_whitney mw;

	CHECK_INT(cp_mann_whitney_normal(a, 7, b, 6, &mw), 0);
	CHECK_NEAR(mw.u, 38.5, 1e-12);
	CHECK_NEAR(mw.z, 2.483773282901211, 1e-9);
	CHECK_NEAR(mw.p, 0.012999854364387314, 1e-9);
}

/* The exact p-value by brute force: every way of choosing which ny of
 * the pooled values are "y", counted by whether its U is as extreme. */
static void brute_force_p(const double *x, size_t nx, const double *y, size_t ny, double *p_ge,
			  double *p_le)
{
	double pool[16], u_obs = 0;
	size_t n = nx + ny, ge = 0, le = 0, total = 0;

	for (size_t i = 0; i < nx; i++)
		pool[i] = x[i];
	for (size_t i = 0; i < ny; i++)
		pool[nx + i] = y[i];
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			u_obs += (y[j] > x[i]) + 0.5 * (y[j] == x[i]);
	for (unsigned mask = 0; mask < (1u << n); mask++) {
		double u = 0;

		if ((size_t)__builtin_popcount(mask) != ny)
			continue;
		for (size_t a = 0; a < n; a++)
			for (size_t b = 0; b < n; b++)
				if (!(mask >> a & 1) && (mask >> b & 1))
					u += (pool[b] > pool[a]) + 0.5 * (pool[b] == pool[a]);
		total++;
		ge += u >= u_obs - 1e-9;
		le += u <= u_obs + 1e-9;
	}
	*p_ge = (double)ge / (double)total;
	*p_le = (double)le / (double)total;
}

TEST(stats_mann_whitney_exact_small_samples)
{
	double lo[] = { 1, 2, 3, 4, 5 }, hi[] = { 6, 7, 8, 9, 10 };
	double a[] = { 1, 2, 2, 3, 3, 3, 4 }, b[] = { 3, 4, 4, 5, 5, 6 };
	double ge, le;
	struct cp_mann_whitney mw;

	/* 5 runs a side fully apart: 2 / C(10, 5), where the normal
	 * approximation says 0.012. */
	CHECK_INT(cp_mann_whitney(lo, 5, hi, 5, &mw), 0);
	CHECK(mw.exact);
	CHECK_NEAR(mw.p, 2.0 / 252, 1e-12);
	CHECK_NEAR(mw.p_greater, 1.0 / 252, 1e-12);
	CHECK_NEAR(mw.p_less, 1, 1e-12);
	CHECK_NEAR(cp_mann_whitney_min_p(5, 5), 2.0 / 252, 1e-12);
	/* Without ties the distribution is shared by every 5 x 5 test. */
	{
		double odd[] = { 1, 3, 5, 7, 9 }, even[] = { 2, 4, 6, 8, 10 };

		brute_force_p(odd, 5, even, 5, &ge, &le);
		CHECK_INT(cp_mann_whitney(odd, 5, even, 5, &mw), 0);
		CHECK_NEAR(mw.p_greater, ge, 1e-12);
		CHECK_NEAR(mw.p_less, le, 1e-12);
	}
	CHECK_NEAR(cp_mann_whitney_min_p(4, 4), 2.0 / 70, 1e-12);
	/* With ties: the distribution given the tie pattern. */
	CHECK_INT(cp_mann_whitney(a, 7, b, 6, &mw), 0);
	CHECK(mw.exact);
	brute_force_p(a, 7, b, 6, &ge, &le);
	CHECK_NEAR(mw.p_greater, ge, 1e-12);
	CHECK_NEAR(mw.p_less, le, 1e-12);
	CHECK_NEAR(mw.p, fmin(1, 2 * fmin(ge, le)), 1e-12);
	brute_force_p(X, 7, Y, 7, &ge, &le);
	CHECK_INT(cp_mann_whitney(X, 7, Y, 7, &mw), 0);
	CHECK_NEAR(mw.p_greater, ge, 1e-12);
	CHECK_NEAR(mw.p_less, le, 1e-12);
}

TEST(stats_mann_whitney_identical_samples)
{
	double a[] = { 5, 5, 5, 5 };
	double c[] = { 1, 2, 3, 4, 5, 6 };
	struct cp_mann_whitney mw;

	/* All tied: no variance, no evidence of change. */
	CHECK_INT(cp_mann_whitney(a, 4, a, 4, &mw), 0);
	CHECK_NEAR(mw.p, 1, 0);
	/* A/A: the same sample on both sides. */
	CHECK_INT(cp_mann_whitney(c, 6, c, 6, &mw), 0);
	CHECK_NEAR(mw.u, 18, 1e-12);
	CHECK_NEAR(mw.p, 1, 1e-12);
}

TEST(stats_hodges_lehmann_reference)
{
	double scratch[81];
	struct cp_shift s;

	CHECK_INT(cp_hl_rank(9, 9, CP_Z_975), 18);
	CHECK_INT(cp_hl_shift(X, 9, Y, 9, CP_Z_975, scratch, &s), 0);
	CHECK(s.has_interval);
	CHECK_NEAR(s.point, -0.56, 1e-12);
	CHECK_NEAR(s.lo, -1.183, 1e-12);
	CHECK_NEAR(s.hi, 0.37, 1e-12);
	CHECK_INT(cp_hl_ratio(X, 9, Y, 9, CP_Z_975, scratch, &s), 0);
	CHECK_NEAR(s.point, 0.6753846153846154, 1e-12);
	CHECK_NEAR(s.lo, 0.4174193548387097, 1e-12);
	CHECK_NEAR(s.hi, 1.265432098765432, 1e-12);
}

TEST(stats_hodges_lehmann_small_samples)
{
	double a[] = { 1, 2, 3, 4, 5 }, b[] = { 2, 3, 4, 5, 6 }, scratch[25];
	double neg[] = { -1, 2 };
	struct cp_shift s;

	CHECK_INT(cp_hl_rank(5, 5, CP_Z_975), 3);
	CHECK_INT(cp_hl_shift(a, 5, b, 5, CP_Z_975, scratch, &s), 0);
	CHECK_NEAR(s.point, 1, 0);
	CHECK_NEAR(s.lo, -2, 0);
	CHECK_NEAR(s.hi, 4, 0);
	/* 3 and 3 runs cannot give a 95% interval; 4 and 4 can (the exact
	 * distribution agrees: 2/C(6,3) = 0.1 > 0.05, 2/C(8,4) = 0.029). */
	CHECK_INT(cp_hl_rank(3, 3, CP_Z_975), 0);
	CHECK_INT(cp_hl_rank(4, 4, CP_Z_975), 1);
	CHECK_INT(cp_hl_min_runs(CP_Z_975), 4);
	CHECK_INT(cp_hl_shift(a, 3, b, 3, CP_Z_975, scratch, &s), 0);
	CHECK(!s.has_interval);
	CHECK(isnan(s.lo));
	/* Ratios need positive values. */
	CHECK(cp_hl_ratio(neg, 2, b, 2, CP_Z_975, scratch, &s) < 0);
}

TEST(stats_normal_tail)
{
	CHECK_NEAR(cp_normal_sf(0), 0.5, 1e-15);
	CHECK_NEAR(cp_normal_sf(CP_Z_975), 0.025, 1e-12);
	CHECK_NEAR(cp_normal_sf(-CP_Z_975), 0.975, 1e-12);
}

TEST(stats_holm_and_bh)
{
	double p[] = { 0.01, 0.04, 0.03, 0.005 }, adj[4];
	double withnan[] = { 0.01, NAN, 0.04 }, adj2[3];

	CHECK_INT(cp_holm(p, 4, adj), 0);
	CHECK_NEAR(adj[0], 0.03, 1e-12);
	CHECK_NEAR(adj[1], 0.06, 1e-12);
	CHECK_NEAR(adj[2], 0.06, 1e-12);
	CHECK_NEAR(adj[3], 0.02, 1e-12);
	CHECK_INT(cp_benjamini_hochberg(p, 4, adj), 0);
	CHECK_NEAR(adj[0], 0.02, 1e-12);
	CHECK_NEAR(adj[1], 0.04, 1e-12);
	CHECK_NEAR(adj[2], 0.04, 1e-12);
	CHECK_NEAR(adj[3], 0.02, 1e-12);
	/* NaN is not a test: the family has 2 members. */
	adj2[1] = 123;
	CHECK_INT(cp_holm(withnan, 3, adj2), 0);
	CHECK_NEAR(adj2[0], 0.02, 1e-12);
	CHECK_NEAR(adj2[2], 0.04, 1e-12);
	/* In place. */
	CHECK_INT(cp_holm(p, 4, p), 0);
	CHECK_NEAR(p[3], 0.02, 1e-12);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The interval ends come from a selection algorithm, not a sort: check
 * them against a full sort on many random sample shapes, ties included. */
TEST(stats_hodges_lehmann_matches_sorting)
{
	unsigned long long s = 42;
	double x[40], y[40], d[1600], scratch[1600];

	for (int iter = 0; iter < 400; iter++) {
		size_t m = 1 + iter % 37, n = 1 + (iter * 7) % 29, mn, c;
		int levels = iter % 3 == 0 ? 3 : 1000; /* heavy ties */
		struct cp_shift sh;
		double med;

		for (size_t i = 0; i < m; i++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			x[i] = (double)((s >> 33) % (unsigned)levels);
		}
		for (size_t j = 0; j < n; j++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			y[j] = (double)((s >> 33) % (unsigned)levels);
		}
		mn = m * n;
		for (size_t i = 0; i < m; i++)
			for (size_t j = 0; j < n; j++)
				d[i * n + j] = y[j] - x[i];
		qsort(d, mn, sizeof(double), cmp_d);
		med = mn % 2 ? d[mn / 2] : (d[mn / 2 - 1] + d[mn / 2]) / 2;
		c = cp_hl_rank(m, n, CP_Z_975);
		CHECK_INT(cp_hl_shift(x, m, y, n, CP_Z_975, scratch, &sh), 0);
		CHECK_NEAR(sh.point, med, 0);
		CHECK_INT(sh.has_interval, c > 0);
		if (c) {
			CHECK_NEAR(sh.lo, d[c - 1], 0);
			CHECK_NEAR(sh.hi, d[mn - c], 0);
		}
	}
}
