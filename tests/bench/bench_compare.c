/* bench_compare.c - how long `clockprof compare` takes on a big gate:
 * 1,000 measures x 30 runs per side (all sampled, the expensive kind:
 * a Mann-Whitney test, a 900-pair Hodges-Lehmann interval and an A/A
 * noise-floor interval each), against its floor: parsing the same 60
 * files with jansson alone. Hosts of this kind differ 2-3x in speed, so
 * the goal is a ratio measured in one run: the command as CI runs it
 * (`clockprof compare --base ... --head ... -o verdict.json --markdown
 * summary.md`, table printed), timed from fork to exit, within 1.5x the
 * floor. The library's stages are timed too (parse, judge, write), to
 * show where the rest goes. Repetitions are interleaved; medians are
 * printed. Not a test: it never fails on time.
 * Usage: bench-compare CLOCKPROF [OTHER-CLOCKPROF...]; other binaries
 * (an earlier build) are timed in the same rounds, for A/B figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bounds.h"
#include "compare.h"
#include "compare_texts.h"
#include "error.h"
#include "json_file.h"
#include "run_file.h"
#include "verdict_file.h"
#include "verdict_measures.h"
#include "bench_util.h"

#define MEASURES 1000
#define RUNS 30
#define REPEAT 11
#define GOAL_RATIO 1.5
#define MAX_OTHERS 4

static unsigned long long rng = 0x2545f4914f6cdd1dULL;

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
			double v = 1000.0 * (1 + 0.02 * (uniform(&rng) - 0.5)) *
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

/* One pass of the library's pipeline, as `clockprof compare -o
 * verdict.json --markdown` runs it; fills t[] with load, judge, outputs
 * (ms) and the regressed count, returns the total in ms. */
static double one_round(const char *dir, double t[4])
{
	static struct cp_compare_run runs[2 * RUNS];
	const char *names[2 * RUNS];
	static char namebuf[2 * RUNS][600];
	char path[600];
	struct cp_error err = { 0 };
	struct cp_bounds bounds;
	struct cp_compare_result r;
	struct cp_compare_opts opts = { .alpha = 0.05 };
	double t0 = now_ms(), t1, t2, t3;
	json_t *v;
	struct cp_compare_texts texts;

	for (int i = 0; i < 2 * RUNS; i++) {
		snprintf(namebuf[i], sizeof(namebuf[i]), "%s/%s-%02d.json", dir,
			 i < RUNS ? "base" : "head", i % RUNS);
		names[i] = namebuf[i];
	}
	/* As cmd/compare.c loads them: both sides in one parallel batch. */
	if (cp_compare_load_runs(names, 2 * RUNS, 0, runs, &err)) {
		fprintf(stderr, "bench-compare: %s\n", err.msg);
		exit(2);
	}
	t1 = now_ms();
	cp_bounds_init_defaults(&bounds);
	{
		struct cp_compare_side b = { runs, names, RUNS };
		struct cp_compare_side h = { runs + RUNS, names + RUNS, RUNS };

		if (cp_compare(&b, &h, &bounds, &opts, &r, &err)) {
			fprintf(stderr, "bench-compare: %s\n", err.msg);
			exit(2);
		}
		t2 = now_ms();
		v = cp_verdict_skeleton(&r, &bounds, &b, &h);
	}
	snprintf(path, sizeof(path), "%s/verdict.json", dir);
	/* As the gate writes them: verdict.json and the markdown from the
	 * result, measure by measure, then the table. */
	{
		struct cp_verdict_measures ms;
		struct cp_compare_texts_request rq = { .json = fopen(path, "w"),
							.json_name = path, .markdown = 1 };
		FILE *table = fopen("/dev/null", "w");

		cp_verdict_measures_of_result(&ms, &r);
		if (!v || !table || !rq.json ||
		    cp_compare_texts_render(v, &ms, &rq, &texts, &err) ||
		    cp_compare_texts_table(table, v, &ms, 0) || fclose(rq.json))
			exit(2);
		fclose(table);
	}
	t3 = now_ms();
	t[0] = t1 - t0;
	t[1] = t2 - t1;
	t[2] = t3 - t2;
	t[3] = (double)r.counts[CP_MEASURE_REGRESSED];
	cp_compare_texts_free(&texts);
	json_decref(v);
	cp_compare_result_free(&r);
	cp_bounds_free(&bounds);
	for (int i = 0; i < 2 * RUNS; i++)
		cp_compare_run_free(&runs[i]);
	return t3 - t0;
}

/* The command itself, from fork to exit, with its table sent to
 * /dev/null; returns ms, or exits when it did not end with 1 (the seeded
 * shifts must fail the gate). */
static double end_to_end(const char *clockprof, const char *dir)
{
	static char namebuf[2 * RUNS][600], verdict[600], summary[600];
	char *argv[2 * RUNS + 16];
	int argc = 0, status;
	double t0 = now_ms();
	pid_t pid;

	snprintf(verdict, sizeof(verdict), "%s/verdict.json", dir);
	snprintf(summary, sizeof(summary), "%s/summary.md", dir);
	argv[argc++] = (char *)clockprof;
	argv[argc++] = "compare";
	for (int i = 0; i < 2 * RUNS; i++) {
		if (i % RUNS == 0)
			argv[argc++] = i < RUNS ? "--base" : "--head";
		snprintf(namebuf[i], sizeof(namebuf[i]), "%s/%s-%02d.json", dir,
			 i < RUNS ? "base" : "head", i % RUNS);
		argv[argc++] = namebuf[i];
	}
	argv[argc++] = "-o";
	argv[argc++] = verdict;
	argv[argc++] = "--markdown";
	argv[argc++] = summary;
	argv[argc] = NULL;
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		perror("bench-compare: fork");
		exit(2);
	}
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(2);
		execv(clockprof, argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 1) {
		fprintf(stderr, "bench-compare: %s compare did not exit 1 (status %d)\n",
			clockprof, status);
		exit(2);
	}
	return now_ms() - t0;
}

/* The floor: the 60 files read and parsed by jansson alone (read whole,
 * json_loadb, json_decref, default allocator, one thread), in a fresh
 * process as the command is. Returns ms. */
static double parse_floor_child(const char *dir)
{
	char path[600];
	static char buf[8 << 20];
	double t0 = now_ms();

	for (int i = 0; i < 2 * RUNS; i++) {
		FILE *f;
		size_t len;
		json_t *doc;

		snprintf(path, sizeof(path), "%s/%s-%02d.json", dir,
			 i < RUNS ? "base" : "head", i % RUNS);
		if (!(f = fopen(path, "r")))
			exit(2);
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		if (!(doc = json_loadb(buf, len, 0, NULL)))
			exit(2);
		json_decref(doc);
	}
	return now_ms() - t0;
}

/* Runs one_round in a fresh process (as the command runs: no allocator
 * state left over from the previous repetition); returns its 5 doubles. */
static void in_child(const char *dir, int floor_only, double out[5])
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
		t[0] = floor_only ? parse_floor_child(dir) : one_round(dir, t + 1);
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

static double median_of(double *v)
{
	qsort(v, REPEAT, sizeof(double), cmp_double);
	return v[REPEAT / 2];
}

static void remove_files(const char *dir)
{
	char path[600];

	for (int i = 0; i < 2 * RUNS; i++) {
		snprintf(path, sizeof(path), "%s/%s-%02d.json", dir,
			 i < RUNS ? "base" : "head", i % RUNS);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/verdict.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/summary.md", dir);
	unlink(path);
	rmdir(dir);
}

static void report(double command, double floor, double fastest, double slowest,
		   const double stage[3], double rest, size_t regressed)
{
	double ratio = command / floor;

	printf("bench-compare: %d measures x %d runs per side (all sampled), median of %d\n",
	       MEASURES, RUNS, REPEAT);
	printf("  floor, jansson alone parsing the %d files (1 thread): %.1f ms\n",
	       2 * RUNS, floor);
	printf("  clockprof compare, end to end: %.1f ms (fastest %.1f, slowest %.1f)\n",
	       command, fastest, slowest);
	printf("  ratio to the floor %.2f, goal <= %.1f (%s)\n", ratio, GOAL_RATIO,
	       ratio <= GOAL_RATIO ? "within goal" : "OVER goal");
	printf("  where it goes: parse+validate+table %.1f ms (%ld CPUs), "
	       "judge (statistics) %.1f ms, write (verdict+markdown+table) %.1f ms, "
	       "the rest (exec, loading, exit: end to end minus the stages, paired) %.1f ms\n",
	       stage[0],
	       sysconf(_SC_NPROCESSORS_ONLN), stage[1], stage[2], rest);
	printf("  sanity: %zu of %d seeded +10%% shifts regressed\n", regressed,
	       MEASURES / 100);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/clockprof-bench-XXXXXX";
	static double command[1 + MAX_OTHERS][REPEAT];
	double floor[REPEAT], load[REPEAT], judge[REPEAT], out[REPEAT], rest[REPEAT], t[5];
	double stage[3], fastest, slowest;
	size_t regressed = 0;
	int nbin = argc - 1;

	if (argc < 2 || nbin > 1 + MAX_OTHERS) {
		fprintf(stderr, "usage: bench-compare CLOCKPROF [OTHER-CLOCKPROF...] (at most %d others)\n",
			MAX_OTHERS);
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("bench-compare: mkdtemp");
		return 2;
	}
	if (write_runs(dir, "base", 1.0) || write_runs(dir, "head", 1.10))
		return 2;
	/* Interleaved, so that a slow moment of the machine hits all. */
	for (int k = 0; k < REPEAT; k++) {
		for (int b = 0; b < nbin; b++)
			command[b][k] = end_to_end(argv[1 + b], dir);
		in_child(dir, 1, t);
		floor[k] = t[0];
		in_child(dir, 0, t);
		load[k] = t[1];
		judge[k] = t[2];
		out[k] = t[3];
		rest[k] = command[0][k] - t[0];
		regressed = (size_t)t[4];
	}
	stage[0] = median_of(load);
	stage[1] = median_of(judge);
	stage[2] = median_of(out);
	median_of(command[0]);
	fastest = command[0][0];
	slowest = command[0][REPEAT - 1];
	report(command[0][REPEAT / 2], median_of(floor), fastest, slowest, stage,
	       median_of(rest), regressed);
	for (int b = 1; b < nbin; b++) {
		double m = median_of(command[b]);

		printf("  %s: end to end %.1f ms, ratio to the floor %.2f\n",
		       argv[1 + b], m, m / floor[REPEAT / 2]);
	}
	remove_files(dir);
	return 0;
}
