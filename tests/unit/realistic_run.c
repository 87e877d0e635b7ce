/* realistic_run.c - see realistic_run.h. What `clockprof run -r ... -e ...`
 * writes, 500 requests a run: clock_reads/op 5 on every request, an exact
 * measure reading 5 or 6 times per request at random, task-clock/op (3%
 * CV), instructions:u/op (0.5% CV), cpu-migrations/op (0 in 70% of runs,
 * 1-3 migrations in the others), context-switches/op around 0.3 and
 * page-faults/op around 0.01. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/bench_util.h"
#include "compare.h"
#include "realistic_run.h"
#include "verdict_fixture.h"

#define R REALISTIC_REQUESTS
#define MAX_N 32

static const struct {
	const char *name;
	int exact;
} measures[] = {
	{ "clock_reads/op", 1 },    { "clock_reads@varying/op", 1 }, { "task-clock/op", 0 },
	{ "instructions:u/op", 0 }, { "cpu-migrations/op", 0 },	     { "context-switches/op", 0 },
	{ "page-faults/op", 0 },
};
#define NM (sizeof(measures) / sizeof(measures[0]))
_Static_assert(NM == REALISTIC_MEASURES, "REALISTIC_MEASURES is the table's length");

static unsigned long long rng;

static double normal(void)
{
	double u1 = uniform(&rng), u2 = uniform(&rng);

	return sqrt(-2 * log(u1 > 1e-300 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
}

static double binomial_share(int n, double p)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += uniform(&rng) < p;
	return (double)k / n;
}

static void draw(double *v, double plus)
{
	double u = uniform(&rng);

	v[0] = 5 + plus;
	v[1] = 5 + binomial_share(R, 0.5) + plus;
	v[2] = 20000 * exp(0.03 * normal());
	v[3] = 50000 * exp(0.005 * normal());
	v[4] = u < 0.7 ? 0 : (1 + (int)(3 * uniform(&rng))) / (double)R;
	v[5] = 0.3 * exp(0.05 * normal());
	v[6] = (5 + (int)(3 * uniform(&rng))) / (double)R;
}

static int run_of(double plus, struct cp_compare_run *run)
{
	json_t *doc = fixture_run_doc("tsc", "6.1"), *m = json_object_get(doc, "measures");
	double v[NM];
	int rc;

	draw(v, plus);
	for (size_t k = 0; k < NM; k++)
		json_object_set_new(m, measures[k].name,
				    json_pack("{s:f, s:s, s:s, s:s}", "value", v[k], "unit",
					      measures[k].exact ? "reads/op" : "ns/op", "kind",
					      measures[k].exact ? "exact" : "sampled", "better",
					      "lower"));
	rc = cp_compare_run_from_doc(doc, 0, run);
	json_decref(doc);
	return rc;
}

void realistic_seed(unsigned long long seed)
{
	rng = seed;
}

/* Which of the clock measures regressed: bit 0 the constant one, bit 1
 * the one that varies. */
static int clock_measures_regressed(const struct cp_compare_result *r)
{
	int caught = 0;

	for (size_t i = 0; i < r->n; i++)
		if (r->measures[i].status == CP_MEASURE_REGRESSED)
			caught |= !strcmp(r->measures[i].name, measures[0].name) ? 1 :
				  !strcmp(r->measures[i].name, measures[1].name) ? 2 :
										   0;
	return caught;
}

int realistic_one(struct cp_bounds *bounds, size_t n, double plus_reads, int *caught)
{
	struct cp_compare_run runs[2 * MAX_N] = { 0 };
	struct cp_compare_side b = { runs, NULL, n }, h = { runs + n, NULL, n };
	struct cp_compare_opts opts = { .alpha = 0.05, .fail_on_inconclusive = 1 };
	struct cp_compare_result r;
	int rc = -1;

	if (n > MAX_N)
		return -1;
	for (size_t i = 0; i < 2 * n; i++)
		if (run_of(i >= n ? plus_reads : 0, &runs[i]))
			goto out;
	if (cp_compare(&b, &h, bounds, &opts, &r, NULL) == 0) {
		rc = r.exit_code == 0;
		if (caught)
			*caught = clock_measures_regressed(&r);
		cp_compare_result_free(&r);
	}
out:
	for (size_t i = 0; i < 2 * n; i++)
		cp_compare_run_free(&runs[i]);
	return rc;
}

int realistic_passes(struct cp_bounds *bounds, size_t n, double plus_reads, int pairs,
		     unsigned long long seed)
{
	int passed = 0;

	realistic_seed(seed);
	for (int t = 0; t < pairs; t++) {
		int rc = realistic_one(bounds, n, plus_reads, NULL);

		if (rc < 0)
			return -1;
		passed += rc;
	}
	return passed;
}
