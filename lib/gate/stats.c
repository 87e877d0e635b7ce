/* stats.c - see stats.h for what and why. */
#include <errno.h>
#include <math.h>
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
	return cmp_double(&((const struct tagged *)a)->v,
			  &((const struct tagged *)b)->v);
}

int cp_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
		    struct cp_mann_whitney *out)
{
	size_t n = nx + ny, i, j;
	struct tagged *t;
	double rank_sum_y = 0, ties = 0, mean, var, dev;

	if (nx == 0 || ny == 0)
		return errno = EINVAL, -1;
	t = malloc(n * sizeof(*t));
	if (!t)
		return -1;
	for (i = 0; i < nx; i++)
		t[i] = (struct tagged){ x[i], 0 };
	for (i = 0; i < ny; i++)
		t[nx + i] = (struct tagged){ y[i], 1 };
	qsort(t, n, sizeof(*t), cmp_tagged);
	/* Mid-ranks: a run of equal values [i, j) shares rank (i+1 + j) / 2. */
	for (i = 0; i < n; i = j) {
		double mid, run;

		for (j = i + 1; j < n && t[j].v == t[i].v; j++)
			;
		mid = ((double)(i + 1) + (double)j) / 2.0;
		run = (double)(j - i);
		ties += run * run * run - run;
		for (size_t k = i; k < j; k++)
			if (t[k].from_y)
				rank_sum_y += mid;
	}
	free(t);
	out->u = rank_sum_y - (double)ny * ((double)ny + 1) / 2.0;
	mean = (double)nx * (double)ny / 2.0;
	var = (double)nx * (double)ny / 12.0 *
	      (((double)n + 1) - ties / ((double)n * ((double)n - 1)));
	dev = fabs(out->u - mean) - 0.5;	/* continuity correction */
	if (!(var > 0) || n < 2) {
		out->z = 0;
		out->p = 1;
		return 0;
	}
	if (dev < 0)
		dev = 0;
	out->z = (out->u >= mean ? dev : -dev) / sqrt(var);
	out->p = 2 * cp_normal_sf(fabs(out->z));
	if (out->p > 1)
		out->p = 1;
	return 0;
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
static size_t move_to_front(double *d, size_t lo, size_t hi, double pivot,
			    int below)
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
			return;	/* d[k] == pivot, in place (or NaN: no order) */
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
static void hl_from_pairs(double *d, size_t m, size_t n, double z,
			  struct cp_shift *out)
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
		upper_mid = limit;	/* tiny samples: the median is the top end */
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
static int hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny,
			  double z, bool ratio, double *scratch, struct cp_shift *out)
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

int cp_hl_shift(const double *x, size_t nx, const double *y, size_t ny,
		double z, double *scratch, struct cp_shift *out)
{
	return hodges_lehmann(x, nx, y, ny, z, false, scratch, out);
}

int cp_hl_ratio(const double *x, size_t nx, const double *y, size_t ny,
		double z, double *scratch, struct cp_shift *out)
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

int cp_holm(const double *p, size_t n, double *adj)
{
	size_t m;
	struct indexed_p *s = sorted_ps(p, n, &m);
	double running = 0;

	if (!s)
		return -1;
	/* adj_(k) = max_{j<=k} min(1, (m - j + 1) p_(j)), 1-based j. */
	for (size_t k = 0; k < m; k++) {
		double v = (double)(m - k) * s[k].p;

		if (v > 1)
			v = 1;
		if (v > running)
			running = v;
		adj[s[k].i] = running;
	}
	free(s);
	return 0;
}

int cp_benjamini_hochberg(const double *p, size_t n, double *adj)
{
	size_t m;
	struct indexed_p *s = sorted_ps(p, n, &m);
	double running = 1;

	if (!s)
		return -1;
	/* adj_(k) = min_{j>=k} min(1, m p_(j) / j), 1-based j. */
	for (size_t k = m; k-- > 0;) {
		double v = (double)m * s[k].p / (double)(k + 1);

		if (v < running)
			running = v;
		adj[s[k].i] = running;
	}
	free(s);
	return 0;
}
