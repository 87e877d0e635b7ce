/* stats.c - see stats.h for what and why. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Type 7 quantile of an already sorted array. */
static double sorted_quantile(const double *s, size_t n, double q)
{
	double h, lo;
	size_t i;

	if (n == 0)
		return NAN;
	if (q <= 0)
		return s[0];
	if (q >= 1)
		return s[n - 1];
	h = (double)(n - 1) * q;
	lo = floor(h);
	i = (size_t)lo;
	if (i + 1 >= n)
		return s[n - 1];
	return s[i] + (h - lo) * (s[i + 1] - s[i]);
}

double cp_quantile(const double *v, size_t n, double q)
{
	double stackbuf[64], *s = stackbuf, r;

	if (n == 0)
		return NAN;
	if (n > sizeof(stackbuf) / sizeof(stackbuf[0])) {
		s = malloc(n * sizeof(*s));
		if (!s)
			return NAN;
	}
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	r = sorted_quantile(s, n, q);
	if (s != stackbuf)
		free(s);
	return r;
}

double cp_median(const double *v, size_t n)
{
	return cp_quantile(v, n, 0.5);
}

double cp_normal_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

struct tagged {
	double v;
	int from_y;
};

static int cmp_tagged(const void *a, const void *b)
{
	return cmp_double(&((const struct tagged *)a)->v, &((const struct tagged *)b)->v);
}

/* The pooled sample sorted, with twice each value's mid-rank (an integer:
 * a run of ties [i, j) has mid-rank (i + 1 + j) / 2). Returns the doubled
 * rank sum of y, or -1 when out of memory; *ties gets sum(t^3 - t). */
static long doubled_ranks(const double *x, size_t nx, const double *y, size_t ny, long *r2,
			  double *ties)
{
	size_t n = nx + ny, i, j;
	struct tagged *t = malloc(n * sizeof(*t));
	long sum_y = 0;

	if (!t)
		return -1;
	for (i = 0; i < nx; i++)
		t[i] = (struct tagged){ x[i], 0 };
	for (i = 0; i < ny; i++)
		t[nx + i] = (struct tagged){ y[i], 1 };
	qsort(t, n, sizeof(*t), cmp_tagged);
	*ties = 0;
	for (i = 0; i < n; i = j) {
		double run;

		for (j = i + 1; j < n && t[j].v == t[i].v; j++)
			;
		run = (double)(j - i);
		*ties += run * run * run - run;
		for (size_t k = i; k < j; k++) {
			r2[k] = (long)(i + 1 + j);
			if (t[k].from_y)
				sum_y += r2[k];
		}
	}
	free(t);
	return sum_y;
}

/* The counts of subsets of size k of the n doubled ranks r2, by sum
 * (0 .. *smax): one value at a time. NULL when out of memory. */
static double *subset_sums(const long *r2, size_t n, size_t k, long *smax)
{
	double *f;

	*smax = 0;
	for (size_t i = 0; i < n; i++)
		*smax += r2[i];
	f = calloc((k + 1) * (size_t)(*smax + 1), sizeof(*f));
	if (!f)
		return NULL;
	f[0] = 1;
	for (size_t e = 0; e < n; e++)
		for (size_t j = (e + 1 < k ? e + 1 : k); j >= 1; j--) {
			double *to = f + j * (size_t)(*smax + 1);
			const double *from = f + (j - 1) * (size_t)(*smax + 1);

			for (long s = *smax; s >= r2[e]; s--)
				to[s] += from[s - r2[e]];
		}
	/* Only the row of size k is wanted. */
	memmove(f, f + k * (size_t)(*smax + 1), (size_t)(*smax + 1) * sizeof(*f));
	return f;
}

/* Without ties the distribution depends only on (n, k): a gate of 1,000
 * measures with the same run counts computes it once, not 2,000 times. */
#define NO_TIE_CACHE 32
static struct {
	size_t n, k;
	long smax;
	double *counts;
} no_tie[NO_TIE_CACHE];
static pthread_mutex_t no_tie_lock = PTHREAD_MUTEX_INITIALIZER;

/* The counts for r2 (owned by the caller, free it) or, without ties, the
 * cached ones (*cached set, do not free). */
static const double *rank_sum_counts(const long *r2, size_t n, size_t k, int ties, long *smax,
				     int *cached)
{
	const double *counts = NULL;

	*cached = 0;
	if (ties)
		return subset_sums(r2, n, k, smax);
	pthread_mutex_lock(&no_tie_lock);
	for (size_t i = 0; i < NO_TIE_CACHE && !counts; i++) {
		if (!no_tie[i].counts) {
			no_tie[i].counts = subset_sums(r2, n, k, &no_tie[i].smax);
			no_tie[i].n = n;
			no_tie[i].k = k;
		}
		if (no_tie[i].counts && no_tie[i].n == n && no_tie[i].k == k) {
			counts = no_tie[i].counts;
			*smax = no_tie[i].smax;
			*cached = 1;
		}
	}
	pthread_mutex_unlock(&no_tie_lock);
	return counts ? counts : subset_sums(r2, n, k, smax);
}

/* Exact tails of the doubled rank sum S of k values drawn from the n
 * doubled ranks r2 (every split equally likely under "no difference"). */
static int exact_tails(const long *r2, size_t n, size_t k, long s_obs, int ties, double *p_ge,
		       double *p_le)
{
	long smax;
	int cached;
	const double *f = rank_sum_counts(r2, n, k, ties, &smax, &cached);
	double total = 0, ge = 0, le = 0;

	if (!f)
		return -1;
	for (long s = 0; s <= smax; s++) {
		total += f[s];
		if (s >= s_obs)
			ge += f[s];
		if (s <= s_obs)
			le += f[s];
	}
	if (!cached)
		free((void *)f);
	*p_ge = ge / total;
	*p_le = le / total;
	return 0;
}

static void normal_p(struct cp_mann_whitney *out, size_t nx, size_t ny, double ties)
{
	double n = (double)(nx + ny), mean = (double)nx * (double)ny / 2.0;
	double var = (double)nx * (double)ny / 12.0 * ((n + 1) - ties / (n * (n - 1)));
	double dev = fabs(out->u - mean) - 0.5; /* continuity correction */

	out->exact = 0;
	if (!(var > 0) || n < 2) {
		out->z = 0;
		out->p = out->p_greater = out->p_less = 1;
		return;
	}
	if (dev < 0)
		dev = 0;
	out->z = (out->u >= mean ? dev : -dev) / sqrt(var);
	out->p = fmin(1, 2 * cp_normal_sf(fabs(out->z)));
	out->p_greater = cp_normal_sf((out->u - mean - 0.5) / sqrt(var));
	out->p_less = cp_normal_sf((mean - out->u - 0.5) / sqrt(var));
}

static int mann_whitney(const double *x, size_t nx, const double *y, size_t ny, int allow_exact,
			struct cp_mann_whitney *out)
{
	size_t n = nx + ny;
	long *r2, sum_y;
	double ties;

	if (nx == 0 || ny == 0)
		return errno = EINVAL, -1;
	r2 = malloc(n * sizeof(*r2));
	if (!r2)
		return -1;
	sum_y = doubled_ranks(x, nx, y, ny, r2, &ties);
	if (sum_y < 0) {
		free(r2);
		return -1;
	}
	out->u = (double)sum_y / 2.0 - (double)ny * ((double)ny + 1) / 2.0;
	normal_p(out, nx, ny, ties);
	/* All values tied: no split differs from another; p stays 1. */
	if (allow_exact && nx * ny <= CP_MW_EXACT_MAX_PAIRS &&
	    ties < (double)n * n * n - (double)n) {
		if (exact_tails(r2, n, ny, sum_y, ties > 0, &out->p_greater, &out->p_less)) {
			free(r2);
			return -1;
		}
		out->p = fmin(1, 2 * fmin(out->p_greater, out->p_less));
		out->exact = 1;
	}
	free(r2);
	return 0;
}

int cp_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		    struct cp_mann_whitney *out)
{
	return mann_whitney(x, nx, y, ny, 1, out);
}

int cp_mann_whitney_normal(const double *x, size_t nx, const double *y, size_t ny,
			   struct cp_mann_whitney *out)
{
	return mann_whitney(x, nx, y, ny, 0, out);
}

double cp_mann_whitney_min_p(size_t nx, size_t ny)
{
	double c = 1;

	if (nx * ny > CP_MW_EXACT_MAX_PAIRS) {
		double mean = (double)nx * (double)ny / 2.0, n = (double)(nx + ny);
		double sd = sqrt((double)nx * (double)ny * (n + 1) / 12.0);

		return fmin(1, 2 * cp_normal_sf((mean - 0.5) / sd));
	}
	/* C(nx + ny, nx), built up as a product of ratios. */
	for (size_t i = 1; i <= nx; i++)
		c = c * (double)(ny + i) / (double)i;
	return fmin(1, 2 / c);
}

size_t cp_hl_rank(size_t m, size_t n, double z)
{
	double mn = (double)m * (double)n;
	double c = floor(mn / 2 - z * sqrt(mn * ((double)m + (double)n + 1) / 12));

	return c >= 1 ? (size_t)c : 0;
}

size_t cp_hl_min_runs(double z)
{
	size_t k;

	for (k = 1; k < 1000; k++)
		if (cp_hl_rank(k, k, z) >= 1)
			return k;
	return k;
}

/* Moves the values of d[lo, hi) below pivot (below: 1) or equal to it
 * (below: 0) to the front of the range, keeping the rest after them;
 * returns where the moved ones end. One pass without a data-dependent
 * branch: on random data a branchy partition mispredicts every other
 * element, and was three times slower. */
static size_t move_to_front(double *d, size_t lo, size_t hi, double pivot, int below)
{
	size_t store = lo;

	for (size_t i = lo; i < hi; i++) {
		double v = d[i];
		size_t take = below ? v < pivot : v == pivot;

		d[i] = d[store];
		d[store] = v;
		store += take;
	}
	return store;
}

/* Rearranges d[lo..hi] so that d[k] holds the value it would have if
 * sorted, smaller-or-equal values before it and greater-or-equal after
 * (Hoare's selection, median-of-three pivot, three-way split so that
 * runs of equal values cost one pass): linear time on average, where
 * sorting all m*n pairs would dominate a 1,000-measure gate. */
static void select_kth(double *d, size_t lo, size_t hi, size_t k)
{
	size_t end = hi + 1;

	while (end - lo > 1) {
		size_t mid = lo + (end - lo) / 2, below, equal;
		double a = d[lo], b = d[mid], c = d[end - 1], pivot;

		pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		below = move_to_front(d, lo, end, pivot, 1);
		if (k < below) {
			end = below;
			continue;
		}
		equal = move_to_front(d, below, end, pivot, 0);
		if (k < equal || equal == below)
			return; /* d[k] == pivot, in place (or NaN: no order) */
		lo = equal;
	}
}

static double max_of(const double *d, size_t n)
{
	double m = d[0];

	for (size_t i = 1; i < n; i++)
		if (d[i] > m)
			m = d[i];
	return m;
}

/* Fills out from the m*n pairwise values in d (reordered here): the
 * median and the C-th smallest and C-th largest. */
static void hl_from_pairs(double *d, size_t m, size_t n, double z, struct cp_shift *out)
{
	size_t mn = m * n, c = cp_hl_rank(m, n, z), upper_mid = mn / 2;
	size_t limit = mn - 1;

	if (c) {
		/* Upper end first; everything after it is no smaller. */
		select_kth(d, 0, mn - 1, mn - c);
		out->hi = d[mn - c];
		limit = mn - c;
	}
	if (upper_mid > limit)
		upper_mid = limit; /* tiny samples: the median is the top end */
	select_kth(d, 0, limit, upper_mid);
	out->point = d[upper_mid];
	if (mn % 2 == 0 && upper_mid > 0)
		out->point = (out->point + max_of(d, upper_mid)) / 2;
	if (c == 0) {
		out->has_interval = 0;
		out->lo = out->hi = NAN;
		return;
	}
	select_kth(d, 0, upper_mid, c - 1);
	out->lo = d[c - 1];
	out->has_interval = 1;
}

/* The pairwise values y_j - x_i (or y_j / x_i) and their estimate. Shift
 * needs numbers, ratio positive numbers (a ratio of a sign change or of 0
 * means nothing). */
static int hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny, double z,
			  bool ratio, double *scratch, struct cp_shift *out)
{
	size_t k = 0;

	if (nx == 0 || ny == 0)
		return errno = EINVAL, -1;
	for (size_t i = 0; i < nx + ny; i++) {
		double v = i < nx ? x[i] : y[i - nx];

		if (ratio ? !(v > 0) : isnan(v))
			return errno = EDOM, -1;
	}
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			scratch[k++] = ratio ? y[j] / x[i] : y[j] - x[i];
	hl_from_pairs(scratch, nx, ny, z, out);
	return 0;
}

int cp_hl_shift(const double *x, size_t nx, const double *y, size_t ny, double z, double *scratch,
		struct cp_shift *out)
{
	return hodges_lehmann(x, nx, y, ny, z, false, scratch, out);
}

int cp_hl_ratio(const double *x, size_t nx, const double *y, size_t ny, double z, double *scratch,
		struct cp_shift *out)
{
	return hodges_lehmann(x, nx, y, ny, z, true, scratch, out);
}

struct indexed_p {
	double p;
	size_t i;
};

static int cmp_indexed_p(const void *a, const void *b)
{
	const struct indexed_p *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Sorts the non-NaN p-values ascending; returns their count in *m. */
static struct indexed_p *sorted_ps(const double *p, size_t n, size_t *m)
{
	struct indexed_p *s = malloc((n ? n : 1) * sizeof(*s));

	*m = 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!isnan(p[i]))
			s[(*m)++] = (struct indexed_p){ p[i], i };
	qsort(s, *m, sizeof(*s), cmp_indexed_p);
	return s;
}

/* Holm's and Benjamini-Hochberg's adjusted p-values: a running extremum
 * over the sorted p-values, Holm stepping down from the smallest (the max
 * so far of min(1, (m - j + 1) p_(j)), 1-based j), BH up from the largest
 * (the min so far of min(1, m p_(j) / j)). */
static int adjust(const double *p, size_t n, double *adj, bool step_up)
{
	size_t m;
	struct indexed_p *s = sorted_ps(p, n, &m);
	double running = step_up ? 1 : 0;

	if (!s)
		return -1;
	for (size_t j = 0; j < m; j++) {
		size_t k = step_up ? m - 1 - j : j;
		double v = step_up ? (double)m * s[k].p / (double)(k + 1) :
				     (double)(m - k) * s[k].p;

		v = v > 1 ? 1 : v;
		running = step_up ? fmin(running, v) : fmax(running, v);
		adj[s[k].i] = running;
	}
	free(s);
	return 0;
}

int cp_holm(const double *p, size_t n, double *adj)
{
	return adjust(p, n, adj, false);
}

int cp_benjamini_hochberg(const double *p, size_t n, double *adj)
{
	return adjust(p, n, adj, true);
}
