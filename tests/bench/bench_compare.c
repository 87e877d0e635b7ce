/* bench_compare.c - how long `clockprof compare` takes on a big gate:
 * 1,000 measures x 30 runs per side (all sampled, the expensive kind:
 * a Mann-Whitney test and two 900-pair Hodges-Lehmann intervals each).
 * Goal: 100 ms for the whole command's work (loading the 60 run files,
 * judging, verdict.json, markdown and the table). Prints the median of
 * several repetitions and its ratio to the goal. Not a test: it never fails
 * on time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bounds.h"
#include "compare.h"
#include "compare_markdown.h"
#include "compare_table.h"
#include "error.h"
#include "run_file.h"
#include "verdict_file.h"

#define MEASURES 1000
#define RUNS 30
#define REPEAT 7
#define GOAL_MS 100.0

static unsigned long long rng = 0x2545f4914f6cdd1dULL;

static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return ((rng * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int write_runs(const char *dir, const char *side, double shift)
{
	char path[512], name[64];
	struct cp_error err = { 0 };

	for (int r = 0; r < RUNS; r++) {
		json_t *doc = json_pack(
			"{s:s, s:{s:s, s:s}, s:b, s:f, s:{s:i, s:s, s:s, s:s},"
			" s:{s:s, s:s, s:s, s:b, s:s}, s:{s:i}, s:{}}",
			"schema", CP_RUN_SCHEMA, "tool", "name", "clockprof", "version",
			"0.1.0", "complete", 1, "duration_s", 2.0, "target", "pid", 1,
			"comm", "srv", "exe", "/srv", "build_id", side, "host", "kernel",
			"6.1", "cpu", "x", "clocksource", "tsc", "pmu", 0, "tool_version",
			"0.1.0", "clock_reads", "total", 1, "measures");
		json_t *m = json_object_get(doc, "measures");

		for (int i = 0; i < MEASURES; i++) {
			/* Every 100th measure really moves in head. */
			double v = 1000.0 * (1 + 0.02 * (uniform() - 0.5)) *
				   (i % 100 == 0 ? shift : 1.0);

			snprintf(name, sizeof(name), "bench.m%04d/op", i);
			json_object_set_new(m, name, json_pack("{s:f, s:s, s:s, s:s}",
				"value", v, "unit", "ns/op", "kind", "sampled",
				"better", "lower"));
		}
		snprintf(path, sizeof(path), "%s/%s-%02d.json", dir, side, r);
		if (cp_json_write_file(doc, path, &err)) {
			fprintf(stderr, "bench-compare: %s\n", err.msg);
			json_decref(doc);
			return -1;
		}
		json_decref(doc);
	}
	return 0;
}

/* One pass of the whole pipeline, as `clockprof compare -o verdict.json
 * --markdown` does it; fills t[] with load, judge, outputs (ms) and the
 * regressed count, returns the total in ms. */
static double one_round(const char *dir, double t[4])
{
	json_t *docs[2 * RUNS];
	const char *names[2 * RUNS];
	static char namebuf[2 * RUNS][600];
	char path[600];
	struct cp_error err = { 0 };
	struct cp_bounds bounds;
	struct cp_compare_result r;
	struct cp_compare_opts opts = { .alpha = 0.05 };
	double t0 = now_ms(), t1, t2, t3;
	json_t *v;
	char *md, *table;

	for (int i = 0; i < 2 * RUNS; i++) {
		snprintf(namebuf[i], sizeof(namebuf[i]), "%s/%s-%02d.json", dir,
			 i < RUNS ? "base" : "head", i % RUNS);
		names[i] = namebuf[i];
	}
	/* As cmd/compare.c loads them: base, then head, each in parallel. */
	if (cp_compare_load_runs(names, RUNS, docs, &err) ||
	    cp_compare_load_runs(names + RUNS, RUNS, docs + RUNS, &err)) {
		fprintf(stderr, "bench-compare: %s\n", err.msg);
		exit(2);
	}
	t1 = now_ms();
	cp_bounds_init_defaults(&bounds);
	{
		struct cp_compare_side b = { docs, names, RUNS };
		struct cp_compare_side h = { docs + RUNS, names + RUNS, RUNS };

		if (cp_compare(&b, &h, &bounds, &opts, &r, &err)) {
			fprintf(stderr, "bench-compare: %s\n", err.msg);
			exit(2);
		}
		t2 = now_ms();
		v = cp_verdict_build(&r, &bounds, &b, &h);
	}
	snprintf(path, sizeof(path), "%s/verdict.json", dir);
	if (!v || cp_json_write_file(v, path, &err))
		exit(2);
	md = cp_compare_markdown(v, 0);
	table = cp_compare_table_string(v, 0);
	t3 = now_ms();
	t[0] = t1 - t0;
	t[1] = t2 - t1;
	t[2] = t3 - t2;
	t[3] = (double)r.counts[CP_MEASURE_REGRESSED];
	free(md);
	free(table);
	json_decref(v);
	cp_compare_result_free(&r);
	cp_bounds_free(&bounds);
	for (int i = 0; i < 2 * RUNS; i++)
		json_decref(docs[i]);
	return t3 - t0;
}

/* For the record: parsing the same files from memory with json_loadb
 * (run_file_load.c reads with json_load_file, a getc per byte). */
static double load_from_memory(const char *dir)
{
	char path[600];
	double t0 = now_ms();

	for (int i = 0; i < 2 * RUNS; i++) {
		FILE *f;
		char *buf;
		long len;
		json_t *doc;
		json_error_t jerr;

		snprintf(path, sizeof(path), "%s/%s-%02d.json", dir,
			 i < RUNS ? "base" : "head", i % RUNS);
		f = fopen(path, "rb");
		if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
		    fseek(f, 0, SEEK_SET))
			exit(2);
		buf = malloc((size_t)len);
		if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
			exit(2);
		fclose(f);
		doc = json_loadb(buf, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
		free(buf);
		if (!doc)
			exit(2);
		json_decref(doc);
	}
	return now_ms() - t0;
}

/* Runs fn in a fresh process (as the command runs: no allocator state
 * left over from the previous repetition); returns its 5 doubles. */
static void in_child(const char *dir, int which, double out[5])
{
	int fds[2];
	pid_t pid;

	if (pipe(fds) || (pid = fork()) < 0) {
		perror("bench-compare");
		exit(2);
	}
	if (pid == 0) {
		double t[5] = { 0 };

		close(fds[0]);
		if (which == 0)
			t[0] = one_round(dir, t + 1);
		else
			t[0] = load_from_memory(dir);
		if (write(fds[1], t, sizeof(t)) != (ssize_t)sizeof(t))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], out, 5 * sizeof(double)) != (ssize_t)(5 * sizeof(double))) {
		fprintf(stderr, "bench-compare: a repetition failed\n");
		exit(2);
	}
	close(fds[0]);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	char dir[] = "/tmp/clockprof-bench-XXXXXX", path[600];
	double total[REPEAT], load[REPEAT], judge[REPEAT], out[REPEAT], mem[REPEAT];
	double t[5];
	size_t regressed = 0;

	if (!mkdtemp(dir)) {
		perror("bench-compare: mkdtemp");
		return 2;
	}
	if (write_runs(dir, "base", 1.0) || write_runs(dir, "head", 1.10))
		return 2;
	for (int k = 0; k < REPEAT; k++) {
		in_child(dir, 0, t);
		total[k] = t[0];
		load[k] = t[1];
		judge[k] = t[2];
		out[k] = t[3];
		regressed = (size_t)t[4];
		in_child(dir, 1, t);
		mem[k] = t[0];
	}
	qsort(total, REPEAT, sizeof(double), cmp_double);
	qsort(load, REPEAT, sizeof(double), cmp_double);
	qsort(judge, REPEAT, sizeof(double), cmp_double);
	qsort(out, REPEAT, sizeof(double), cmp_double);
	qsort(mem, REPEAT, sizeof(double), cmp_double);
	printf("bench-compare: %d measures x %d runs per side (all sampled), median of %d\n",
	       MEASURES, RUNS, REPEAT);
	printf("  load %.1f ms (cp_compare_load_runs, %ld CPUs), judge %.1f ms, verdict+markdown+table %.1f ms\n",
	       load[REPEAT / 2], sysconf(_SC_NPROCESSORS_ONLN), judge[REPEAT / 2],
	       out[REPEAT / 2]);
	printf("  total %.1f ms; goal %.0f ms; ratio %.2f (%s)\n", total[REPEAT / 2],
	       GOAL_MS, total[REPEAT / 2] / GOAL_MS,
	       total[REPEAT / 2] <= GOAL_MS ? "within goal" : "OVER goal");
	printf("  judge+outputs alone %.1f ms, ratio %.2f to the goal\n",
	       judge[REPEAT / 2] + out[REPEAT / 2],
	       (judge[REPEAT / 2] + out[REPEAT / 2]) / GOAL_MS);
	printf("  for the record: the 60 files parsed one by one from memory "
	       "(json_loadb, no validation): %.1f ms\n", mem[REPEAT / 2]);
	printf("  sanity: %zu of %d seeded +10%% shifts regressed\n", regressed,
	       MEASURES / 100);
	for (int i = 0; i < 2 * RUNS; i++) {
		snprintf(path, sizeof(path), "%s/%s-%02d.json", dir,
			 i < RUNS ? "base" : "head", i % RUNS);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/verdict.json", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}
