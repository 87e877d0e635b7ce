/* bench_symbolize.c - how long symbolizing 10,000 distinct addresses across
 * libc's code takes (with its separate debug info when libc6-dbg is
 * installed), in a running callsites_target: the time the unit test
 * symbolize_10000_sites used to assert (under a second), which failed on a
 * slower host. Prints medians of several repetitions, each with a fresh
 * symbolizer: opening it, the first pass, and a second pass from its
 * caches, with the first pass's ratio to the goal and to the cached pass
 * measured side by side. Not a test: it never fails on time.
 * Usage: bench-symbolize TARGETS-DIR */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "symbolize.h"
#include "bench_util.h"
#include "../unit/unit.h"
#include "../unit/callsites_fixture.h"

#define SITES 10000
#define REPEAT 5
#define GOAL_MS 1000.0

/* callsites_fixture.h reports through the unit-test harness's functions. */
void unit_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench-symbolize: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *unit_build_dir(void)
{
	return "build/tests";
}

/* One pass over the SITES addresses; returns how many got a name. */
static size_t pass(struct cp_symbolizer *s, unsigned long long lo, unsigned long long hi)
{
	struct cp_frame_info f;
	size_t named = 0;

	for (uint64_t i = 0; i < SITES; i++)
		if (cp_symbolize(s, lo + i * ((hi - lo) / SITES), &f) == 0 && f.function)
			named++;
	return named;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	double open_ms[REPEAT], first[REPEAT], cached[REPEAT], ratio[REPEAT];
	unsigned long long lo = 0, hi = 0;
	size_t named = 0;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: bench-symbolize TARGETS-DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/callsites_target", argv[1]);
	pid = fixture_spawn_path(path);
	if (pid < 0) {
		fprintf(stderr, "bench-symbolize: cannot run %s\n", path);
		return 2;
	}
	fixture_libc_code(pid, &lo, &hi);
	if (hi <= lo + SITES) {
		fprintf(stderr, "bench-symbolize: libc's code not found in /proc/%d/maps\n", (int)pid);
		fixture_kill(pid);
		return 2;
	}
	for (int k = 0; k < REPEAT; k++) {
		struct cp_error err = { 0 };
		struct cp_symbolizer *s;
		double t0 = now_ms(), t1, t2;

		s = cp_symbolizer_open(pid, &err);
		if (!s) {
			fprintf(stderr, "bench-symbolize: %s\n", err.msg);
			fixture_kill(pid);
			return 2;
		}
		t1 = now_ms();
		named = pass(s, lo, hi);
		t2 = now_ms();
		pass(s, lo, hi);
		cached[k] = now_ms() - t2;
		first[k] = t2 - t1;
		open_ms[k] = t1 - t0;
		ratio[k] = first[k] / cached[k];
		cp_symbolizer_close(s);
	}
	fixture_kill(pid);
	qsort(open_ms, REPEAT, sizeof(double), cmp_double);
	qsort(first, REPEAT, sizeof(double), cmp_double);
	qsort(cached, REPEAT, sizeof(double), cmp_double);
	qsort(ratio, REPEAT, sizeof(double), cmp_double);
	printf("bench-symbolize: %d distinct libc addresses (%zu named), fresh symbolizer, median of %d\n",
	       SITES, named, REPEAT);
	printf("  first pass %.1f ms (fastest %.1f, slowest %.1f); goal %.0f ms; ratio %.2f (%s)\n",
	       first[REPEAT / 2], first[0], first[REPEAT - 1], GOAL_MS,
	       first[REPEAT / 2] / GOAL_MS,
	       first[REPEAT / 2] <= GOAL_MS ? "within goal" : "OVER goal");
	printf("  cached pass %.2f ms; first / cached %.0fx; cp_symbolizer_open %.1f ms\n",
	       cached[REPEAT / 2], ratio[REPEAT / 2], open_ms[REPEAT / 2]);
	return 0;
}
