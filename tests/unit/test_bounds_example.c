/* test_bounds_example.c - the bounds file the CI example ships
 * (examples/clockprof-bounds, read from the source tree: the test runs
 * from its root, as make check runs it) holds what the built-in defaults
 * hold: an unchanged build passes under --fail-on-inconclusive in at least
 * 99% of 1,000 seeded A/A comparisons of a realistic run at 10 runs a side
 * (the example's), 95% at 5, and one more read per request fails.
 * Its earlier `* +5%` line replaced the defaults' +0.05 floor and failed
 * an identical build on cpu-migrations/op (0 in most runs). */
#include <stdio.h>

#include "bounds.h"
#include "error.h"
#include "realistic_run.h"
#include "unit.h"

#define EXAMPLE_BOUNDS "examples/clockprof-bounds"
#define PAIRS 1000

/* A/A passes in at least 99% of the pairs at 10 runs a side (the
 * example's) and 95% at 5 (docs/bounds.md's goal there), and +1 read/op
 * never passes. */
static void holds_the_defaults_figures(struct cp_bounds *b, const char *what)
{
	static const size_t ns[] = { 10, 5 };
	static const int goal_pct[] = { 99, 95 };

	for (size_t i = 0; i < 2; i++) {
		int aa = realistic_passes(b, ns[i], 0, PAIRS, 0x9e3779b97f4a7c15ULL + i);
		int plus = realistic_passes(b, ns[i], 1, PAIRS / 10, 2026 + i);

		fprintf(stderr, "  %s, N=%zu: A/A passes %d of %d; +1 read/op passes %d of %d\n",
			what, ns[i], aa, PAIRS, plus, PAIRS / 10);
		if (aa < PAIRS * goal_pct[i] / 100)
			unit_fail(__FILE__, __LINE__, "%s: A/A at N=%zu passed %d of %d (< %d%%)",
				  what, ns[i], aa, PAIRS, goal_pct[i]);
		if (plus != 0)
			unit_fail(__FILE__, __LINE__, "%s: +1 read/op at N=%zu passed %d of %d",
				  what, ns[i], plus, PAIRS / 10);
	}
}

TEST(bounds_defaults_pass_aa_and_catch_one_read)
{
	struct cp_bounds b;

	cp_bounds_init_defaults(&b);
	holds_the_defaults_figures(&b, "defaults");
	cp_bounds_free(&b);
}

TEST(bounds_example_file_passes_aa_and_catches_one_read)
{
	struct cp_error err = { 0 };
	struct cp_bounds b;

	cp_bounds_init_defaults(&b);
	if (cp_bounds_load(EXAMPLE_BOUNDS, &b, &err)) {
		unit_fail(__FILE__, __LINE__, "%s (run from the source tree's root)", err.msg);
		return;
	}
	CHECK(b.nrules > 0);
	holds_the_defaults_figures(&b, EXAMPLE_BOUNDS);
	cp_bounds_free(&b);
}
