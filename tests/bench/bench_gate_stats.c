/* bench_gate_stats.c - how often the gate is right, by seeded Monte Carlo
 * through the real judging code (cp_compare(), lib/gate/include/compare.h) on run
 * documents generated in memory. Prints, each with its goal:
 *   - the A/A false-fail rate: 20 sampled measures at 3% CV, nothing
 *     changed, N = 5, 10, 30 runs a side (goal <= 1%);
 *   - the false-fail rate at the bound: 20 measures all truly at +5%
 *     under the +5% bound (goal <= alpha, 5%);
 *   - power for one +10% regression at 3% CV, N = 10 (goal >= 90%), next
 *     to benchstat's figure on the same samples (its exact Mann-Whitney
 *     test, p < 0.05, which asks only "changed?", not "beyond +5%?");
 *   - power at N = 5 with 20 measures, one of them +10% or +50%
 *     (goal > 0);
 *   - under the default bounds and --fail-on-inconclusive, the share of
 *     A/A comparisons of a realistic run that pass, at N = 4, 5 and 10
 *     (goal >= 95% at N = 5): exact reads/op, one exact measure that
 *     varies (5 or 6 reads per request at random), times and counters,
 *     a cpu-migrations/op-like measure (0 in most runs) and ones whose
 *     median is below 1; and the power for +1 read/op on a 5-read target,
 *     constant or varying, at N = 4, 5, 10 (goal >= 90% at N = 10).
 * Not a test: figures, not pass/fail. Deterministic (fixed seed).
 * Usage: bench-gate-stats [TRIALS] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "compare.h"
#include "run_file.h"
#include "stats.h"
#include "bench_util.h"
#include "realistic_run.h"

#define MEASURES 20
#define MAX_RUNS 30
#define CV 0.03

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static double normal(void)
{
	double u1 = uniform(&rng), u2 = uniform(&rng);

	return sqrt(-2 * log(u1 > 1e-300 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
}

static json_t *run_doc(int serial, const double *values, size_t nm)
{
	json_t *m = json_object();
	char name[32], started[40];

	for (size_t k = 0; k < nm; k++) {
		snprintf(name, sizeof(name), "m%02zu/op", k);
		json_object_set_new(m, name, json_pack("{s:f, s:s, s:s, s:s}", "value",
						       values[k], "unit", "ns/op", "kind",
						       "sampled", "better", "lower"));
	}
	snprintf(started, sizeof(started), "2026-01-01T00:00:00.%06dZ", serial);
	return json_pack("{s:s, s:{s:s, s:s}, s:b, s:s, s:{s:i, s:s, s:s},"
			 " s:{s:s, s:s, s:s, s:b}, s:{s:i}, s:o}",
			 "schema", CP_RUN_SCHEMA, "tool", "name", "clockprof", "version",
			 "0.1.0", "complete", 1, "started_at", started, "target", "pid", 1,
			 "comm", "srv", "exe", "/srv", "host", "kernel", "6.1", "cpu", "x",
			 "clocksource", "tsc", "pmu", 0, "clock_reads", "total", 1,
			 "measures", m);
}

struct trial {
	int failed;		/* the gate's verdict is fail */
	int inconclusive;	/* ... is inconclusive */
	int caught;		/* measure 0 regressed */
	int benchstat;		/* exact U on measure 0: p < 0.05 */
};

/* The bounds every comparison uses: the defaults, or one rule. */
static const char *bound_rule;

/* One comparison: n runs a side; head's measure k scaled by shift[k]. */
static struct trial one(size_t n, size_t nm, const double *shift)
{
	static int serial;
	struct cp_compare_run runs[2 * MAX_RUNS];
	double v[MEASURES], x[MAX_RUNS], y[MAX_RUNS];
	struct cp_compare_side b = { runs, NULL, n }, h = { runs + n, NULL, n };
	struct cp_compare_opts opts = { .alpha = 0.05 };
	struct cp_compare_result r;
	struct cp_mann_whitney mw;
	struct cp_bounds bounds;
	struct trial t = { 0 };

	if (!bound_rule)
		cp_bounds_init_defaults(&bounds);
	else if (cp_bounds_parse(bound_rule, strlen(bound_rule), "bench", &bounds, NULL))
		abort();
	for (size_t i = 0; i < 2 * n; i++) {
		json_t *doc;

		for (size_t k = 0; k < nm; k++)
			v[k] = 1000 * (i >= n ? shift[k] : 1) * exp(CV * normal());
		(i < n ? x : y)[i % n] = v[0];
		doc = run_doc(serial++, v, nm);
		if (cp_compare_run_from_doc(doc, 0, &runs[i]))
			abort();
		json_decref(doc);
	}
	if (cp_compare(&b, &h, &bounds, &opts, &r, NULL))
		abort();
	t.failed = r.status == CP_VERDICT_FAIL;
	t.inconclusive = r.status == CP_VERDICT_INCONCLUSIVE;
	for (size_t i = 0; i < r.n; i++)
		if (!strcmp(r.measures[i].name, "m00/op"))
			t.caught = r.measures[i].status == CP_MEASURE_REGRESSED;
	cp_mann_whitney(x, n, y, n, &mw);
	t.benchstat = mw.p < 0.05;
	cp_compare_result_free(&r);
	for (size_t i = 0; i < 2 * n; i++)
		cp_compare_run_free(&runs[i]);
	cp_bounds_free(&bounds);
	return t;
}

/* Runs trials comparisons; returns the rates of failed, caught,
 * benchstat and inconclusive in rates[0..3]. */
static void rate(size_t n, size_t nm, const double *shift, int trials, double rates[4])
{
	int f = 0, c = 0, bs = 0, inc = 0;

	for (int i = 0; i < trials; i++) {
		struct trial t = one(n, nm, shift);

		f += t.failed;
		c += t.caught;
		bs += t.benchstat;
		inc += t.inconclusive;
	}
	rates[3] = 100.0 * inc / trials;
	rates[0] = 100.0 * f / trials;
	rates[1] = 100.0 * c / trials;
	rates[2] = 100.0 * bs / trials;
}

static void shifts(double *s, double first, double rest)
{
	for (size_t k = 0; k < MEASURES; k++)
		s[k] = k ? rest : first;
}

/* The figures published in docs/gating.md and docs/bounds.md, on the model
 * the unit tests hold bounds files to (tests/unit/realistic_run.c). */
static void default_bounds_figures(int trials)
{
	static const size_t ns[] = { 4, 5, 10 };
	struct cp_bounds bounds;

	cp_bounds_init_defaults(&bounds);
	realistic_seed(rng);
	printf("default bounds, --fail-on-inconclusive, a realistic run of %d measures "
	       "(%d requests a run):\n", REALISTIC_MEASURES, REALISTIC_REQUESTS);
	for (size_t i = 0; i < 3; i++) {
		int pass = 0, caught_exact = 0, caught_varying = 0, c = 0;

		for (int t = 0; t < trials; t++)
			pass += realistic_one(&bounds, ns[i], 0, NULL) == 1;
		for (int t = 0; t < trials; t++) {
			realistic_one(&bounds, ns[i], 1, &c);
			caught_exact += c & 1;
			caught_varying += (c & 2) != 0;
		}
		printf("  N=%-2zu A/A passes %5.1f%%%s; +1 read/op caught: 5-read target %5.1f%%, "
		       "5-or-6 target %5.1f%%%s\n", ns[i], 100.0 * pass / trials,
		       ns[i] == 5 ? (100.0 * pass / trials >= 95 ? " (goal >= 95%: within)" :
							     " (goal >= 95%: UNDER)") : "",
		       100.0 * caught_exact / trials, 100.0 * caught_varying / trials,
		       ns[i] == 10 ? (caught_varying * 10 >= trials * 9 ? " (goal >= 90%: within)" :
								   " (goal >= 90%: UNDER)") : "");
	}
	cp_bounds_free(&bounds);
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 400;
	static const size_t ns[] = { 5, 10, 30 };
	double s[MEASURES], r[4];

	if (trials < 1)
		trials = 400;
	printf("gate statistics: seeded Monte Carlo through cp_compare(), %d comparisons each,\n"
	       "sampled measures lognormal at %.0f%% CV, default bound +5%%, alpha 0.05\n",
	       trials, CV * 100);
	shifts(s, 1.0, 1.0);
	for (size_t i = 0; i < 3; i++) {
		rate(ns[i], MEASURES, s, trials, r);
		printf("  A/A false-fail rate, %d measures, N=%-2zu      %5.2f%%  (goal <= 1%%: %s; "
		       "headline inconclusive %.1f%%)\n",
		       MEASURES, ns[i], r[0], r[0] <= 1 ? "within" : "OVER", r[3]);
	}
	shifts(s, 1.05, 1.05);
	for (size_t i = 1; i < 3; i++) {
		rate(ns[i], MEASURES, s, trials, r);
		printf("  false-fail rate at the bound (all +5%%), N=%-2zu %5.2f%%  (goal <= 5%%: %s)\n",
		       ns[i], r[0], r[0] <= 5 ? "within" : "OVER");
	}
	shifts(s, 1.10, 1.0);
	rate(10, 1, s, trials, r);
	printf("  power, +10%% on 1 measure, N=10               %5.1f%%  (goal >= 90%%: %s; "
	       "benchstat's exact U p<0.05: %.1f%%)\n", r[1], r[1] >= 90 ? "within" : "UNDER", r[2]);
	rate(10, MEASURES, s, trials, r);
	printf("  power, +10%% on 1 of %d measures, N=10        %5.1f%%  (benchstat, uncorrected: %.1f%%)\n",
	       MEASURES, r[1], r[2]);
	/* benchstat asks "changed at all?"; the same question to the gate is
	 * a +0% bound. */
	bound_rule = "* +0%\n";
	rate(10, 1, s, trials, r);
	printf("  power, +10%% on 1 measure, N=10, bound +0%%    %5.1f%%  (benchstat's question; its figure %.1f%%)\n",
	       r[1], r[2]);
	bound_rule = NULL;
	rate(5, MEASURES, s, trials, r);
	printf("  power, +10%% on 1 of %d measures, N=5         %5.1f%%  (goal > 0: %s)\n",
	       MEASURES, r[1], r[1] > 0 ? "within" : "UNDER");
	shifts(s, 1.50, 1.0);
	rate(5, MEASURES, s, trials, r);
	printf("  power, +50%% on 1 of %d measures, N=5         %5.1f%%  (goal > 0: %s)\n",
	       MEASURES, r[1], r[1] > 0 ? "within" : "UNDER");
	default_bounds_figures(trials);
	return 0;
}
