/* compare_measure.c - see compare_measure.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_measure.h"
#include "compare_notes.h"
#include "compare_reusable.h"
#include "run_file.h"
#include "stats.h"

/* A/A noise floor needs an interval between two halves of the base runs;
 * beyond the maximum it is not computed (the halves live on the stack). */
#define NOISE_FLOOR_MIN_RUNS 8
#define NOISE_FLOOR_MAX_RUNS 1024

/* --- judging ----------------------------------------------------------- */

static void side_stats(const double *v, size_t n, struct cp_side_stats *s)
{
	s->n = n;
	s->median = cp_median(v, n);
	s->lo = s->hi = v[0];
	for (size_t i = 1; i < n; i++) {
		if (v[i] < s->lo)
			s->lo = v[i];
		if (v[i] > s->hi)
			s->hi = v[i];
	}
}

/* Two values for people, with as many digits as it takes to tell them
 * apart when they differ: 7 -> 7.0000001, never 7 -> 7. */
static void fmt_pair(char *b1, char *b2, size_t len, double v1, double v2)
{
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(b1, len, "%.*g", prec, v1);
		snprintf(b2, len, "%.*g", prec, v2);
		if (v1 == v2 || strcmp(b1, b2))
			return;
	}
}

/* The allowed change in the bad direction, in the unit of `pct` (percent,
 * when the bound is relative and base is not 0) or of the measure. */
static double allowed_abs(const struct cp_bound_rule *b, double base)
{
	return b->relative ? b->value / 100.0 * fabs(base) : b->value;
}

/* A relative bound means nothing on a base of 0 (+5% of 0 is 0): say so
 * rather than judge, and suggest the absolute bound that would. */
static void zero_base_inconclusive(struct cp_measure_verdict *mv)
{
	mv->status = CP_MEASURE_INCONCLUSIVE;
	cp_compare_set_reason(
		mv,
		"base median is 0, so the relative bound %s allows nothing; give an absolute bound "
		"(a bounds line such as '%.80s +1')",
		mv->bound->text, mv->name);
}

static void judge_exact(struct cp_measure_verdict *mv)
{
	double delta = mv->head.median - mv->base.median;
	double bad = mv->higher_is_better ? -delta : delta;
	double eps = 1e-12 * fmax(fabs(mv->base.median), fabs(mv->head.median));
	double allowed = allowed_abs(mv->bound, mv->base.median);
	char b1[40], b2[40];

	mv->change_abs = (struct cp_interval){ delta, delta, delta };
	if (mv->base.median != 0) {
		double pct = delta / fabs(mv->base.median) * 100.0;

		mv->change_pct = (struct cp_interval){ pct, pct, pct };
	}
	mv->direction = bad > eps ? 1 : bad < -eps ? -1 : 0;
	fmt_pair(b1, b2, sizeof(b1), mv->base.median, mv->head.median);
	if (mv->bound->relative && mv->base.median == 0 && delta != 0) {
		zero_base_inconclusive(mv);
		return;
	}
	if (bad > allowed + eps) {
		mv->status = CP_MEASURE_REGRESSED;
		cp_compare_set_reason(mv, "%s -> %s %.60s, beyond bound %s", b1, b2, mv->unit,
				      mv->bound->text);
	} else if (bad < -eps) {
		mv->status = CP_MEASURE_IMPROVED;
		cp_compare_set_reason(mv, "%s -> %s %.60s", b1, b2, mv->unit);
	} else {
		mv->status = CP_MEASURE_WITHIN;
		cp_compare_set_reason(mv,
				      bad > eps ? "%s -> %s %.60s, within bound %s" :
						  "%s -> %s %.60s, unchanged%.0s",
				      b1, b2, mv->unit, mv->bound->text);
	}
}

/* Relative (percent) and absolute intervals of the change, head vs base.
 * With all values positive the relative interval comes from the ratios
 * (noise in these measures is multiplicative) and the absolute one is
 * derived from it (times |base median|), unless need_abs asks for the
 * absolute one directly (an absolute bound decides on it). Otherwise the
 * absolute interval comes from the differences and the relative one is
 * derived (none when base is 0). Computing one interval, not two, halves
 * the work of a large gate. */
static void change_intervals(const double *bv, size_t nb, const double *hv, size_t nh, double z,
			     double base_median, int need_abs, double *scratch,
			     struct cp_interval *pct, struct cp_interval *abs_, int *has_interval,
			     int *ratio)
{
	struct cp_shift s, r;
	double scale = fabs(base_median) / 100.0;

	*ratio = 0;
	if (cp_hl_ratio(bv, nb, hv, nh, z, scratch, &r) == 0) {
		*ratio = 1;
		*pct = (struct cp_interval){ (r.point - 1) * 100, (r.lo - 1) * 100,
					     (r.hi - 1) * 100 };
		*has_interval = r.has_interval;
		if (!need_abs) {
			*abs_ = (struct cp_interval){ pct->point * scale, pct->lo * scale,
						      pct->hi * scale };
			return;
		}
		cp_hl_shift(bv, nb, hv, nh, z, scratch, &s);
		*abs_ = (struct cp_interval){ s.point, s.lo, s.hi };
		return;
	}
	cp_hl_shift(bv, nb, hv, nh, z, scratch, &s);
	*abs_ = (struct cp_interval){ s.point, s.lo, s.hi };
	*has_interval = s.has_interval;
	if (base_median != 0)
		*pct = (struct cp_interval){ s.point / scale, s.lo / scale, s.hi / scale };
	else
		*pct = (struct cp_interval){ NAN, NAN, NAN };
}

/* Interval of the change in the "bad" direction, in the bound's unit:
 * [*lo, *hi] and the allowed amount *allowed. */
static void bad_interval(const struct cp_measure_verdict *mv, double *lo, double *hi, double *point,
			 double *allowed)
{
	const struct cp_interval *c = &mv->change_abs;

	*allowed = mv->bound->value;
	if (mv->bound->relative) {
		if (!isnan(mv->change_pct.point))
			c = &mv->change_pct;
		else
			*allowed = 0; /* base is 0: any increase is beyond */
	}
	if (mv->higher_is_better) {
		*lo = -c->hi;
		*hi = -c->lo;
		*point = -c->point;
	} else {
		*lo = c->lo;
		*hi = c->hi;
		*point = c->point;
	}
}

static void fmt_change(char *buf, size_t len, const struct cp_measure_verdict *mv, double v)
{
	if (isnan(v))
		snprintf(buf, len, "?");
	else if (mv->bound->relative && !isnan(mv->change_pct.point))
		snprintf(buf, len, "%+.3g%%", v);
	else
		snprintf(buf, len, "%+.6g", v);
}

/* Base values moved to the bound in the bad direction, into out: what
 * the head must beat for "beyond the bound" to be shown. */
static void base_at_bound(const struct cp_measure_verdict *mv, const double *bv, size_t nb,
			  int ratio, double *out)
{
	double v = mv->bound->value, sign = mv->higher_is_better ? -1 : 1;
	double add = mv->bound->relative ? v / 100.0 * fabs(mv->base.median) : v;

	for (size_t i = 0; i < nb; i++)
		out[i] = mv->bound->relative && ratio ? bv[i] * (1 + sign * v / 100.0) :
							bv[i] + sign * add;
}

/* First pass over a sampled measure: statistics, no decision yet. */
static void measure_sampled(struct cp_measure_verdict *mv, const double *bv, const double *hv,
			    double z, double *scratch)
{
	struct cp_mann_whitney mw, beyond;
	int has_interval, ratio;

	change_intervals(bv, mv->base.n, hv, mv->head.n, z, mv->base.median, !mv->bound->relative,
			 scratch, &mv->change_pct, &mv->change_abs, &has_interval, &ratio);
	mv->interval_ratio = ratio;
	cp_mann_whitney(bv, mv->base.n, hv, mv->head.n, &mw);
	mv->p_value = mw.p;
	mv->test_exact = mw.exact;
	/* "Beyond the bound", one-sided: head against the base moved to the
	 * bound. scratch is free again: the pairs are no longer needed. */
	base_at_bound(mv, bv, mv->base.n, ratio, scratch);
	cp_mann_whitney(scratch, mv->base.n, hv, mv->head.n, &beyond);
	mv->p_beyond = mv->higher_is_better ? beyond.p_less : beyond.p_greater;
	if (!has_interval) {
		mv->change_pct.lo = mv->change_pct.hi = NAN;
		mv->change_abs.lo = mv->change_abs.hi = NAN;
		mv->p_value = mv->p_beyond = NAN; /* not part of a family */
		mv->interval_ratio = -1;
	}
}

static void noise_floor(struct cp_measure_verdict *mv, const double *bv, double z, double *scratch)
{
	double even[NOISE_FLOOR_MAX_RUNS / 2], odd[NOISE_FLOOR_MAX_RUNS / 2];
	size_t ne = 0, no = 0, n = mv->base.n;
	struct cp_interval pct, abs_;
	int has, ratio;
	double floor_pct, bound_pct;

	if (n < NOISE_FLOOR_MIN_RUNS || n > NOISE_FLOOR_MAX_RUNS)
		return;
	/* Interleaved halves, so a drift over the base runs shows as noise. */
	for (size_t i = 0; i < n; i++) {
		if (i % 2)
			odd[no++] = bv[i];
		else
			even[ne++] = bv[i];
	}
	change_intervals(even, ne, odd, no, z, cp_median(even, ne), 0, scratch, &pct, &abs_, &has,
			 &ratio);
	if (!has || isnan(pct.lo))
		return;
	floor_pct = fmax(fabs(pct.lo), fabs(pct.hi));
	mv->noise_floor_pct = floor_pct;
	bound_pct = mv->bound->relative	 ? mv->bound->value :
		    mv->base.median != 0 ? mv->bound->value / fabs(mv->base.median) * 100 :
					   INFINITY;
	if (fabs(bound_pct) < floor_pct)
		cp_compare_warnf(
			cp_compare_lazy_array(&mv->warnings),
			"bound %s is tighter than the A/A noise floor %.2g%% seen between base runs; "
			"changes this small cannot be told from noise",
			mv->bound->text, floor_pct);
}

/* Whether nb and nh runs can show "beyond the bound" at all: the smallest
 * one-sided p there is (fully separated samples; half the two-sided one),
 * as a conditional p Holm-corrected over nfamily, must be below alpha. */
static int runs_can_show(size_t nb, size_t nh, size_t nfamily, double alpha)
{
	double min_p = cp_mann_whitney_min_p(nb, nh) / 2;

	return min_p / CP_FAMILY_SELECT * (double)nfamily < alpha;
}

/* Runs per side with which fully separated samples reach p < alpha after
 * Holm over nfamily measures (and give an interval at all). */
static size_t runs_for_family(size_t nfamily, double alpha, size_t min_runs)
{
	size_t k = min_runs;

	while (k < 1000 && !runs_can_show(k, k, nfamily, alpha))
		k++;
	return k;
}

/* A measure whose point estimate lies beyond its bound: regressed when
 * the one-sided test shows it beyond, after correction over the family;
 * else inconclusive with what is missing. */
static void decide_beyond(struct cp_measure_verdict *mv, double alpha, size_t nfamily,
			  size_t min_runs, double lo, double allowed, const char *l, const char *h,
			  const char *pt)
{
	mv->status = CP_MEASURE_INCONCLUSIVE;
	if (!runs_can_show(mv->base.n, mv->head.n, nfamily, alpha)) {
		mv->runs_needed = runs_for_family(nfamily, alpha, min_runs);
		cp_compare_set_reason(
			mv,
			"estimate %s is beyond bound %s, but too few runs: %zu base, %zu head cannot show it "
			"with %zu measures judged together; need at least %zu on each side",
			pt, mv->bound->text, mv->base.n, mv->head.n, nfamily, mv->runs_needed);
	} else if (mv->in_family && mv->p_beyond_adjusted < alpha) {
		mv->status = CP_MEASURE_REGRESSED;
		cp_compare_set_reason(
			mv,
			"%s [%s, %s] is beyond bound %s by the one-sided test (p = %.2g, Holm-adjusted over %zu: %.2g)",
			pt, l, h, mv->bound->text, mv->p_beyond, nfamily, mv->p_beyond_adjusted);
	} else if (lo > allowed) {
		cp_compare_set_reason(
			mv,
			"%s [%s, %s] lies beyond bound %s, but not after correcting for %zu measures (adjusted p = %.2g)",
			pt, l, h, mv->bound->text, nfamily, mv->p_beyond_adjusted);
	} else {
		cp_compare_set_reason(
			mv,
			"estimate %s is beyond bound %s, but not shown beyond it: the interval [%s, %s] includes %s "
			"(one-sided p = %.2g, adjusted %.2g); more runs may decide",
			pt, mv->bound->text, l, h, mv->bound->text, mv->p_beyond,
			mv->p_beyond_adjusted);
	}
}

/* Second pass: the decision, once p-values are adjusted. */
void cp_compare_decide_sampled(struct cp_measure_verdict *mv, double alpha, const char *env_why,
			       size_t nfamily, size_t min_runs)
{
	double lo, hi, point, allowed;
	char l[32], h[32], pt[32];

	if (mv->runs_needed) {
		mv->status = CP_MEASURE_INCONCLUSIVE;
		cp_compare_set_reason(
			mv, "too few runs: %zu base, %zu head; need at least %zu on each side",
			mv->base.n, mv->head.n, mv->runs_needed);
		return;
	}
	bad_interval(mv, &lo, &hi, &point, &allowed);
	mv->direction = point > 0 ? 1 : point < 0 ? -1 : 0;
	fmt_change(l, sizeof(l), mv, mv->higher_is_better ? -hi : lo);
	fmt_change(h, sizeof(h), mv, mv->higher_is_better ? -lo : hi);
	fmt_change(pt, sizeof(pt), mv, mv->higher_is_better ? -point : point);
	if (env_why) {
		mv->status = CP_MEASURE_INCONCLUSIVE;
		cp_compare_set_reason(
			mv,
			"host fingerprint differs between runs (%.120s): sampled measures are only judged "
			"between runs of one host (see env_mismatch)",
			env_why);
		return;
	}
	if (point > allowed) {
		decide_beyond(mv, alpha, nfamily, min_runs, lo, allowed, l, h, pt);
		return;
	}
	if (hi < 0 && mv->p_adjusted < alpha) {
		mv->status = CP_MEASURE_IMPROVED;
		cp_compare_set_reason(mv, "%s [%s, %s] lies on the good side (adjusted p = %.2g)",
				      pt, l, h, mv->p_adjusted);
		return;
	}
	mv->status = CP_MEASURE_WITHIN;
	if (hi <= allowed) {
		cp_compare_set_reason(mv, "%s [%s, %s] within bound %s", pt, l, h, mv->bound->text);
		return;
	}
	/* The estimate is within the bound; the runs just cannot rule out
	 * the interval's far end. Said, but not a reason to hold the gate. */
	cp_compare_set_reason(mv, "%s [%s, %s] within bound %s; not enough runs to exclude %s", pt,
			      l, h, mv->bound->text, mv->higher_is_better ? l : h);
	snprintf(mv->not_excluded, sizeof(mv->not_excluded), "%s", mv->higher_is_better ? l : h);
}

/* Kind, unit or direction disagreeing between sides cannot be judged
 * (the kind aside when ignore_kind). */
static int meta_conflict(struct cp_measure_verdict *mv, const struct cp_run_measure *bm,
			 const struct cp_run_measure *hm, int ignore_kind)
{
	const char *key = NULL, *b = NULL, *h = NULL;

	if (bm->exact != hm->exact && !ignore_kind) {
		key = "kind";
		b = bm->exact ? "exact" : "sampled";
		h = hm->exact ? "exact" : "sampled";
	} else if (strcmp(bm->unit, hm->unit)) {
		key = "unit";
		b = bm->unit;
		h = hm->unit;
	} else if (bm->higher_is_better != hm->higher_is_better) {
		key = "better";
		b = bm->higher_is_better ? "higher" : "lower";
		h = hm->higher_is_better ? "higher" : "lower";
	}
	if (!key)
		return 0;
	mv->status = CP_MEASURE_INCONCLUSIVE;
	cp_compare_set_reason(mv, "%s differs: \"%.40s\" in base, \"%.40s\" in head", key, b, h);
	return 1;
}

/* Added or removed. A measure every base run had that no head run has is
 * what a broken head looks like (it crashed before doing the work), so it
 * fails the gate unless the bounds file says it may go (removed-ok). */
static void decide_one_sided(struct cp_measure_verdict *mv, struct cp_bounds *bounds, size_t nb,
			     size_t base_runs)
{
	const struct cp_bound_rule *ok;

	cp_bounds_note_unjudged(bounds, mv->name);
	mv->status = nb ? CP_MEASURE_REMOVED : CP_MEASURE_ADDED;
	/* Only runs with --anatomy whose gaps were exact have it: a side
	 * without it says nothing of the reads (compare_reusable.c says
	 * why). */
	if (!strcmp(mv->name, CP_REUSABLE_MEASURE)) {
		cp_compare_set_reason(mv, "not judged: present in %s runs only",
				      nb ? "base" : "head");
		return;
	}
	if (!nb || nb < base_runs) {
		cp_compare_set_reason(mv, "present in %s runs only", nb ? "base" : "head");
		return;
	}
	ok = cp_bounds_removed_ok(bounds, mv->name);
	if (ok) {
		cp_compare_set_reason(
			mv,
			"present in every base run, in no head run; allowed by removed-ok (line %d)",
			ok->line);
		return;
	}
	mv->blocking = 1;
	cp_compare_set_reason(
		mv,
		"present in every base run, missing from the head; if that is intended, add "
		"'removed-ok %.80s' to the bounds file",
		mv->name);
}

/* Serial first pass over measure i: what it is, whether both sides have
 * it, its bound, and the decisions that need no statistics. */
void cp_compare_prepare_measure(struct cp_measure_verdict *mv, const struct cp_gathered *g,
				size_t i, struct cp_bounds *bounds)
{
	const struct cp_run_measure *meta = g->measures[i].base_meta ? g->measures[i].base_meta :
								       g->measures[i].head_meta;
	size_t nb = cp_gathered_count(g, i, 0), nh = cp_gathered_count(g, i, 1);
	int reusable_kinds;

	mv->unit = meta->unit;
	mv->exact = meta->exact;
	mv->higher_is_better = meta->higher_is_better;
	mv->in_base = nb > 0;
	mv->in_head = nh > 0;
	mv->change_pct = mv->change_abs = (struct cp_interval){ NAN, NAN, NAN };
	mv->p_value = mv->p_adjusted = mv->noise_floor_pct = NAN;
	mv->p_beyond = mv->p_beyond_adjusted = NAN;
	mv->test_exact = mv->interval_ratio = -1;
	if (!nb || !nh) {
		decide_one_sided(mv, bounds, nb, g->nb);
		return;
	}
	if (nb < g->nb)
		cp_compare_warnf(cp_compare_lazy_array(&mv->warnings),
				 "present in %zu of %zu base runs", nb, g->nb);
	if (nh < g->nh)
		cp_compare_warnf(cp_compare_lazy_array(&mv->warnings),
				 "present in %zu of %zu head runs", nh, g->nh);
	/* Reads per op that could go are exact where every request was seen
	 * and sampled where not: one side of each is a sample of the same
	 * figure, judged as sampled, not refused as another kind. */
	reusable_kinds = !strcmp(mv->name, CP_REUSABLE_MEASURE) &&
			 g->measures[i].base_meta->exact != g->measures[i].head_meta->exact;
	if (reusable_kinds) {
		mv->exact = 0;
		cp_compare_warnf(cp_compare_lazy_array(&mv->warnings),
				 "exact on one side (every request seen), sampled on the other: "
				 "judged as sampled");
	}
	mv->bound = cp_bounds_match(bounds, mv->name, mv->exact);
	meta_conflict(mv, g->measures[i].base_meta, g->measures[i].head_meta, reusable_kinds);
}

/* The statistics of every measure, spread over the CPUs: a 1,000-measure
 * gate computes 2,000 Hodges-Lehmann intervals of up to 900 pairs each.
 * Each worker has its own value and pair buffers (sized by
 * pair_buffer_len()); each measure its own verdict and warnings array. */

/* Pairs one worker may need at once: base x head for the change, or the
 * two halves of the base runs for the noise floor, whichever is more. */
static size_t pair_buffer_len(size_t nb, size_t nh)
{
	size_t halves = nb >= NOISE_FLOOR_MIN_RUNS && nb <= NOISE_FLOOR_MAX_RUNS ?
				((nb + 1) / 2) * (nb / 2) :
				0;

	return nb * nh > halves ? nb * nh : halves;
}

size_t cp_compare_buffer_len(size_t nb, size_t nh)
{
	return nb + nh + pair_buffer_len(nb, nh) + 1;
}

void cp_compare_measure_stats(void *ctx, size_t i, size_t worker)
{
	struct cp_compare_stats_job *job = ctx;
	struct cp_measure_verdict *mv = &job->measures[i];
	double *bv = job->buffers + worker * job->buffer_len;
	double *hv = bv + job->g->nb, *scratch = hv + job->g->nh;
	size_t nb = cp_gathered_values(job->g, i, 0, bv), nh = cp_gathered_values(job->g, i, 1, hv);
	int constant;

	if (nb)
		side_stats(bv, nb, &mv->base);
	if (nh)
		side_stats(hv, nh, &mv->head);
	if (!nb || !nh || mv->reason)
		return; /* added, removed or conflicting: decided */
	constant = mv->base.lo == mv->base.hi && mv->head.lo == mv->head.hi;
	mv->bound = cp_bounds_floor(job->bounds, mv->bound, mv->base.median,
				    mv->exact && !constant);
	if (mv->exact && constant) {
		judge_exact(mv);
		return;
	}
	if (mv->exact) {
		mv->judged_sampled = 1;
		cp_compare_warnf(
			cp_compare_lazy_array(&mv->warnings),
			"exact measure varies between runs (base %.6g .. %.6g, head %.6g .. %.6g): judged as sampled",
			mv->base.lo, mv->base.hi, mv->head.lo, mv->head.hi);
	}
	if (mv->base.lo == 0 && mv->base.hi == 0 && mv->head.lo == 0 && mv->head.hi == 0) {
		mv->status = CP_MEASURE_WITHIN;
		mv->change_abs = (struct cp_interval){ 0, 0, 0 };
		cp_compare_set_reason(mv, "0 in every run, unchanged");
		return;
	}
	if (mv->bound->relative && mv->base.median == 0) {
		zero_base_inconclusive(mv);
		return;
	}
	if (cp_hl_rank(nb, nh, job->z) == 0) {
		/* Raise the smaller side until an interval exists. */
		size_t k = 1;

		while (cp_hl_rank(nb > k ? nb : k, nh > k ? nh : k, job->z) == 0)
			k++;
		mv->runs_needed = k;
	}
	measure_sampled(mv, bv, hv, job->z, scratch);
	noise_floor(mv, bv, job->z, scratch);
}

/* z for a two-sided (1 - alpha) interval: CP_Z_975 for the default alpha,
 * else the normal tail inverted by bisection. */
double cp_compare_z_for_alpha(double alpha)
{
	double lo = 0, hi = 40;

	if (alpha == 0.05)
		return CP_Z_975;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (cp_normal_sf(mid) > alpha / 2)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}
