/* test_counters.c - perf counters: multiplex scaling and the honesty rules
 * on synthetic reads, their run.json shape, and real software events on
 * child processes with counts known by construction (page faults, blocking).
 * Real counting needs perf_event_open for user-space events on our own
 * children, which perf_event_paranoid <= 2 allows without privileges; where
 * even that is refused the test is skipped, as are hardware tests on a
 * machine without a PMU. */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "counters.h"
#include "counters_json.h"
#include "error.h"
#include "perf_event_names.h"
#include "perf_trial.h"
#include "unit.h"

/* --- synthetic reads ------------------------------------------------- */

static struct cp_counter_value fresh(void)
{
	struct cp_counter_value v;

	memset(&v, 0, sizeof(v));
	v.supported = true;
	return v;
}

TEST(counters_group_read_scaled)
{
	/* A group on the PMU a quarter of the time it was enabled. */
	uint64_t buf[] = { 2, 1000, 250, 100, 40 };
	size_t map[] = { 1, 0 };
	struct cp_counter_value v[2] = { fresh(), fresh() };

	CHECK_INT(cp_counters_add_group_read(buf, 5, map, 2, v), 0);
	cp_counter_value_finish(&v[0]);
	cp_counter_value_finish(&v[1]);
	CHECK_INT(v[1].raw, 100);
	CHECK_INT(v[0].raw, 40);
	CHECK_NEAR(v[1].value, 400, 1e-9);
	CHECK_NEAR(v[0].value, 160, 1e-9);
	CHECK(v[0].scaled && v[1].scaled);
	CHECK_NEAR(v[0].running_ratio, 0.25, 1e-12);
	CHECK(v[0].supported);
}

TEST(counters_group_read_unscaled)
{
	uint64_t buf[] = { 1, 5000, 5000, 1234 };
	size_t map[] = { 0 };
	struct cp_counter_value v = fresh();

	CHECK_INT(cp_counters_add_group_read(buf, 4, map, 1, &v), 0);
	cp_counter_value_finish(&v);
	CHECK(!v.scaled);
	CHECK_NEAR(v.value, 1234, 0);
	CHECK_NEAR(v.running_ratio, 1.0, 0);
}

TEST(counters_scaling_sums_threads_first)
{
	/* Two threads: one fully on the PMU, one half the time. Scaling is
	 * done on the sums, as the kernel does for inherited children. */
	uint64_t t1[] = { 1, 1000, 1000, 300 };
	uint64_t t2[] = { 1, 3000, 1500, 600 };
	size_t map[] = { 0 };
	struct cp_counter_value v = fresh();

	CHECK_INT(cp_counters_add_group_read(t1, 4, map, 1, &v), 0);
	CHECK_INT(cp_counters_add_group_read(t2, 4, map, 1, &v), 0);
	cp_counter_value_finish(&v);
	CHECK_INT(v.raw, 900);
	CHECK_INT(v.time_enabled, 4000);
	CHECK_INT(v.time_running, 2500);
	CHECK_NEAR(v.value, 900.0 * 4000 / 2500, 1e-9);
	CHECK_NEAR(v.running_ratio, 0.625, 1e-12);
	CHECK(v.scaled);
}

TEST(counters_never_scheduled_is_unsupported)
{
	uint64_t buf[] = { 2, 800, 0, 0, 0 };
	size_t map[] = { 0, 1 };
	struct cp_counter_value v[2] = { fresh(), fresh() };

	CHECK_INT(cp_counters_add_group_read(buf, 5, map, 2, v), 0);
	cp_counter_value_finish(&v[0]);
	CHECK(!v[0].supported);
	CHECK(strstr(v[0].reason, "never scheduled"));
	CHECK_NEAR(v[0].value, 0, 0);
}

TEST(counters_nothing_ran_is_zero)
{
	/* The target slept through the window: enabled 0, a true zero. */
	struct cp_counter_value v = fresh();

	cp_counter_value_finish(&v);
	CHECK(v.supported);
	CHECK_NEAR(v.value, 0, 0);
	CHECK(!v.scaled);
	CHECK_NEAR(v.running_ratio, 1.0, 0);
}

TEST(counters_group_read_malformed)
{
	uint64_t buf[] = { 3, 10, 10, 1, 2 };
	size_t map[] = { 0, 1, 2 };
	struct cp_counter_value v[3] = { fresh(), fresh(), fresh() };

	CHECK_INT(cp_counters_add_group_read(buf, 5, map, 3, v), -1); /* short */
	CHECK_INT(cp_counters_add_group_read(buf, 5, map, 2, v), -1); /* nr != members */
	CHECK_INT(cp_counters_add_group_read(buf, 2, map, 0, v), -1);
	CHECK_INT(v[0].raw, 0);
}

TEST(counters_hybrid_variants_merge)
{
	/* A thread that ran 600 ns on a P-core and 400 ns on an E-core: each
	 * core PMU's event was enabled the whole 1000 ns but ran only on its
	 * own core type. Not multiplexed: the sum is exact. */
	struct cp_counter_value slots[2] = { fresh(), fresh() }, v = fresh();

	slots[0].raw = 6000, slots[0].time_enabled = 1000, slots[0].time_running = 600;
	slots[1].raw = 2000, slots[1].time_enabled = 1000, slots[1].time_running = 400;
	cp_counters_merge_variants(slots, 2, &v);
	cp_counter_value_finish(&v);
	CHECK_INT(v.raw, 8000);
	CHECK_INT(v.time_enabled, 1000);
	CHECK_INT(v.time_running, 1000);
	CHECK(!v.scaled);
	CHECK_NEAR(v.value, 8000, 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

TEST(counters_hybrid_pmus_from_sysfs)
{
	char dir[] = "/tmp/cp-pmus-XXXXXX", path[128];
	struct cp_pmu pmus[CP_MAX_HYBRID_PMUS];
	static const char *const devs[] = { "cpu_core", "cpu_atom", "software", "cpu_nocpus" };

	CHECK(mkdtemp(dir));
	CHECK_INT(cp_hybrid_pmus(dir, pmus, CP_MAX_HYBRID_PMUS), 0);
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, devs[i]);
		mkdir(path, 0755);
	}
	snprintf(path, sizeof(path), "%s/cpu_core/type", dir);
	write_file(path, "4\n");
	snprintf(path, sizeof(path), "%s/cpu_core/cpus", dir);
	write_file(path, "0-15\n");
	snprintf(path, sizeof(path), "%s/cpu_atom/type", dir);
	write_file(path, "10\n");
	snprintf(path, sizeof(path), "%s/cpu_atom/cpus", dir);
	write_file(path, "16-23\n");
	snprintf(path, sizeof(path), "%s/software/type", dir);
	write_file(path, "1\n");
	snprintf(path, sizeof(path), "%s/cpu_nocpus/type", dir);
	write_file(path, "11\n");
	size_t n = cp_hybrid_pmus(dir, pmus, CP_MAX_HYBRID_PMUS);
	CHECK_INT(n, 2);
	CHECK_STR(pmus[0].name, "cpu_atom");
	CHECK_INT(pmus[0].type, 10);
	CHECK_STR(pmus[1].name, "cpu_core");
	CHECK_INT(pmus[1].type, 4);
	CHECK_INT(cp_hybrid_pmus(dir, pmus, 1), 1);
	/* This VM is not hybrid. */
	CHECK_INT(cp_hybrid_pmus("/sys/bus/event_source/devices", pmus, CP_MAX_HYBRID_PMUS),
		  access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0 ? 2 : 0);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
}

/* --- run.json shape -------------------------------------------------- */

static int parse_specs(const char *list, struct cp_event_spec **specs, size_t *n)
{
	struct cp_error err = { 0 };

	return cp_events_parse(list, specs, n, &err);
}

TEST(counters_json_shape)
{
	struct cp_event_spec *s;
	size_t n;
	struct cp_counter_value v[3] = { fresh(), fresh(), fresh() };
	json_t *doc, *c, *measures;

	CHECK_INT(parse_specs("instructions:u,task-clock,page-faults:u", &s, &n), 0);
	v[0].supported = false;
	snprintf(v[0].reason, sizeof(v[0].reason), "no hardware PMU on this machine");
	v[1].raw = 3000000, v[1].time_enabled = 3000000, v[1].time_running = 3000000;
	v[2].raw = 600, v[2].time_enabled = 100, v[2].time_running = 50;
	for (int i = 0; i < 3; i++)
		cp_counter_value_finish(&v[i]);

	doc = cp_counters_json(s, v, n, 200);
	CHECK(doc);
	c = json_object_get(doc, "instructions:u");
	CHECK(json_is_false(json_object_get(c, "supported")));
	CHECK_STR(json_string_value(json_object_get(c, "reason")),
		  "no hardware PMU on this machine");
	CHECK(!json_object_get(c, "value") && !json_object_get(c, "per_op"));
	c = json_object_get(doc, "task-clock");
	CHECK(json_is_integer(json_object_get(c, "value")));
	CHECK_INT(json_integer_value(json_object_get(c, "value")), 3000000);
	CHECK_STR(json_string_value(json_object_get(c, "unit")), "ns");
	CHECK_NEAR(json_real_value(json_object_get(c, "per_op")), 15000, 1e-9);
	CHECK(json_is_false(json_object_get(c, "scaled")));
	CHECK_NEAR(json_real_value(json_object_get(c, "running_ratio")), 1.0, 0);
	c = json_object_get(doc, "page-faults:u");
	CHECK(json_is_real(json_object_get(c, "value"))); /* an estimate */
	CHECK_NEAR(json_real_value(json_object_get(c, "value")), 1200, 1e-9);
	CHECK(json_is_true(json_object_get(c, "scaled")));
	CHECK_NEAR(json_real_value(json_object_get(c, "running_ratio")), 0.5, 0);
	json_decref(doc);

	doc = cp_counters_json(s, v, n, 0);
	CHECK(json_is_null(json_object_get(json_object_get(doc, "task-clock"), "per_op")));
	json_decref(doc);

	measures = json_object();
	CHECK_INT(cp_counters_add_measures(measures, s, v, n, 200), 0);
	CHECK_INT(json_object_size(measures), 2); /* no number for instructions:u */
	CHECK(!json_object_get(measures, "instructions:u/op"));
	c = json_object_get(measures, "task-clock/op");
	CHECK_NEAR(json_real_value(json_object_get(c, "value")), 15000, 1e-9);
	CHECK_STR(json_string_value(json_object_get(c, "unit")), "ns/op");
	CHECK_STR(json_string_value(json_object_get(c, "kind")), "sampled");
	CHECK_STR(json_string_value(json_object_get(c, "better")), "lower");
	c = json_object_get(measures, "page-faults:u/op");
	CHECK_STR(json_string_value(json_object_get(c, "unit")), "page-faults/op");
	CHECK_NEAR(json_real_value(json_object_get(c, "value")), 6, 1e-9);
	json_decref(measures);

	measures = json_object();
	CHECK_INT(cp_counters_add_measures(measures, s, v, n, 0), 0);
	CHECK_INT(json_object_size(measures), 0); /* no ops, no per-op */
	json_decref(measures);
	free(s);
}

/* --- real counting on children ---------------------------------------- */

/* perf_event_open of a user-space software event on ourselves: refused
 * only under perf_event_paranoid 3 or a seccomp filter. */
static bool perf_usable(void)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_PAGE_FAULTS };
	int refused = cp_perf_trial(&attr);
	char why[160];

	if (!refused)
		return true;
	snprintf(why, sizeof(why),
		 "perf_event_open not permitted here (%s, perf_event_paranoid=%d)",
		 strerror(refused), cp_perf_event_paranoid());
	unit_skip(why);
	return false;
}

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* The child's measured work: no instrumentation (ASan would touch shadow
 * pages), nothing it has not already done once before the handshake. */
__attribute__((noinline, no_sanitize_address)) static void touch_pages(volatile char *p, long k)
{
	for (long i = 0; i < k; i++)
		p[i * page_size()] = 1;
}

__attribute__((no_sanitize_address)) static void handshake(int out, int in)
{
	char c = 'x';

	if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
		_exit(1);
}

struct child {
	pid_t pid;
	int go;	   /* parent writes */
	int ready; /* parent reads */
};

/* Forks a child that runs body(arg) between two handshakes: the parent
 * opens and enables counters while the child waits at the first, and reads
 * them while it waits at the second. */
static int start_child(struct child *ch, void (*body)(long), long arg)
{
	int to_child[2], from_child[2];
	char c;

	if (pipe(to_child) || pipe(from_child))
		return -1;
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (ch->pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		body(-1 - arg);			       /* warm-up: prepare, fault everything in */
		handshake(from_child[1], to_child[0]); /* once, to fault its path */
		handshake(from_child[1], to_child[0]); /* counters enabled after */
		body(arg);
		handshake(from_child[1], to_child[0]); /* counters read meanwhile */
		_exit(0);
	}
	close(to_child[0]);
	close(from_child[1]);
	ch->go = to_child[1];
	ch->ready = from_child[0];
	c = 'g';
	if (read(ch->ready, &c, 1) != 1 || write(ch->go, &c, 1) != 1 || read(ch->ready, &c, 1) != 1)
		return -1;
	return 0; /* child waits at the second handshake */
}

static int child_step(struct child *ch)
{
	char c = 'g';

	if (write(ch->go, &c, 1) != 1 || read(ch->ready, &c, 1) != 1)
		return -1;
	return 0;
}

static void finish_child(struct child *ch)
{
	char c = 'g';
	int status;

	if (write(ch->go, &c, 1) < 0)
		kill(ch->pid, SIGKILL);
	close(ch->go);
	close(ch->ready);
	waitpid(ch->pid, &status, 0);
}

static volatile char *fault_region;

/* arg < 0: warm-up for -1 - arg pages; otherwise touch arg fresh pages. */
__attribute__((no_sanitize_address)) static void fault_body(long arg)
{
	static volatile char stack_prefault[64 * 1024];

	if (arg < 0) {
		long k = -1 - arg;
		char on_stack[32 * 1024];
		volatile char *warm;

		memset(on_stack, 1, sizeof(on_stack));
		stack_prefault[0] = on_stack[100];
		for (size_t i = 0; i < sizeof(stack_prefault); i += 1024)
			stack_prefault[i] = 1;
		fault_region = mmap(NULL, (size_t)k * page_size(), PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		warm = mmap(NULL, (size_t)page_size(), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fault_region == MAP_FAILED || warm == MAP_FAILED)
			_exit(1);
		madvise((void *)fault_region, (size_t)k * page_size(), MADV_NOHUGEPAGE);
		touch_pages(warm, 1);
		return;
	}
	touch_pages(fault_region, arg);
}

static int find(const struct cp_event_spec *s, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return (int)i;
	return -1;
}

/* The demo of the issue: page-faults:u counted exactly on a child that
 * touches k new pages between two handshakes. */
TEST(counters_page_faults_exact_on_child)
{
	const long k = 257;
	struct cp_event_spec *s;
	size_t n;
	struct cp_counters *c = NULL;
	struct cp_counter_value v[4];
	struct cp_counters_info info;
	struct cp_error err = { 0 };
	struct child ch;
	int pf, mf, tc;

	if (!perf_usable())
		return;
	CHECK_INT(parse_specs("page-faults:u,minor-faults:u,major-faults:u,task-clock:u", &s, &n),
		  0);
	CHECK_INT(start_child(&ch, fault_body, k), 0);
	if (cp_counters_open(&c, ch.pid, s, n, &err)) {
		finish_child(&ch);
		free(s);
		unit_fail(__FILE__, __LINE__, "open: %s", err.msg);
		return;
	}
	cp_counters_info(c, &info);
	CHECK_INT(cp_counters_enable(c), 0);
	CHECK_INT(child_step(&ch), 0);
	CHECK_INT(cp_counters_disable(c), 0);
	CHECK_INT(cp_counters_read(c, v), 0);
	finish_child(&ch);
	cp_counters_close(c);
	pf = find(s, n, "page-faults:u");
	mf = find(s, n, "minor-faults:u");
	tc = find(s, n, "task-clock:u");
	fprintf(stderr,
		"  child touched %ld pages: page-faults:u=%llu minor=%llu major=%llu task-clock:u=%llu ns threads=%zu group_read=%d\n",
		k, (unsigned long long)v[pf].raw, (unsigned long long)v[mf].raw,
		(unsigned long long)v[2].raw, (unsigned long long)v[tc].raw, info.threads,
		info.group_read);
	CHECK_INT(info.threads, 1);
	CHECK_INT(info.uncertain_threads, 0);
	CHECK(v[pf].supported && v[mf].supported && v[tc].supported);
	CHECK_INT(v[pf].raw, k);
	CHECK_INT(v[mf].raw, k);
	CHECK_INT(v[2].raw, 0);
	CHECK(!v[pf].scaled);
	CHECK(v[tc].raw > 0);
	free(s);
}

/* Threads: one exists before open, one is created after enable; both touch
 * k pages. Missing the late thread would read about k, counting a thread
 * twice about 3k; thread start-up (stack) adds a few faults on top. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open;
static long thread_k;

static void *early_thread(void *arg)
{
	pthread_mutex_lock(&gate_lock);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	touch_pages((volatile char *)arg, thread_k);
	return NULL;
}

static void *late_thread(void *arg)
{
	touch_pages((volatile char *)arg, thread_k);
	return NULL;
}

static volatile char *thread_region[2];
static pthread_t early;

__attribute__((no_sanitize_address)) static void threads_body(long arg)
{
	pthread_t late;

	if (arg < 0) {
		thread_k = -1 - arg;
		for (int i = 0; i < 2; i++) {
			thread_region[i] = mmap(NULL, (size_t)thread_k * page_size(),
						PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
						-1, 0);
			if (thread_region[i] == MAP_FAILED)
				_exit(1);
			madvise((void *)thread_region[i], (size_t)thread_k * page_size(),
				MADV_NOHUGEPAGE);
		}
		if (pthread_create(&early, NULL, early_thread, (void *)thread_region[0]))
			_exit(1);
		return;
	}
	pthread_mutex_lock(&gate_lock);
	gate_open = 1;
	pthread_cond_signal(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	if (pthread_create(&late, NULL, late_thread, (void *)thread_region[1]))
		_exit(1);
	pthread_join(late, NULL);
	pthread_join(early, NULL);
}

TEST(counters_follow_threads_created_later)
{
	const long k = 1000;
	struct cp_event_spec *s;
	size_t n;
	struct cp_counters *c = NULL;
	struct cp_counter_value v[1];
	struct cp_counters_info info;
	struct cp_error err = { 0 };
	struct child ch;

	if (!perf_usable())
		return;
	CHECK_INT(parse_specs("page-faults:u", &s, &n), 0);
	CHECK_INT(start_child(&ch, threads_body, k), 0);
	if (cp_counters_open(&c, ch.pid, s, n, &err)) {
		finish_child(&ch);
		free(s);
		unit_fail(__FILE__, __LINE__, "open: %s", err.msg);
		return;
	}
	cp_counters_info(c, &info);
	CHECK_INT(cp_counters_enable(c), 0);
	CHECK_INT(child_step(&ch), 0);
	CHECK_INT(cp_counters_read(c, v), 0);
	finish_child(&ch);
	cp_counters_close(c);
	fprintf(stderr, "  2 threads x %ld pages: page-faults:u=%llu (threads opened %zu)\n", k,
		(unsigned long long)v[0].raw, info.threads);
	free(s);
	CHECK_INT(info.threads, 2);
	CHECK(v[0].raw >= (uint64_t)(2 * k));
	CHECK(v[0].raw <= (uint64_t)(2 * k + 100));
}

/* Kernel-inclusive events under perf_event_paranoid >= 2 without
 * privileges are refused: the value must say so, never read as zero. */
TEST(counters_not_permitted_says_why)
{
	struct cp_event_spec *s;
	size_t n;
	struct cp_counters *c = NULL;
	struct cp_counter_value v[2];
	struct cp_error err = { 0 };
	struct child ch;
	bool privileged;

	if (!perf_usable())
		return;
	CHECK_INT(parse_specs("page-faults,page-faults:u", &s, &n), 0);
	CHECK_INT(start_child(&ch, fault_body, 3), 0);
	if (cp_counters_open(&c, ch.pid, s, n, &err)) {
		finish_child(&ch);
		free(s);
		unit_fail(__FILE__, __LINE__, "open: %s", err.msg);
		return;
	}
	cp_counters_enable(c);
	child_step(&ch);
	cp_counters_read(c, v);
	finish_child(&ch);
	cp_counters_close(c);
	free(s);
	privileged = geteuid() == 0 || cp_perf_event_paranoid() < 2;
	fprintf(stderr, "  euid %d: page-faults %s\n", (int)geteuid(),
		v[0].supported ? "counted" : v[0].reason);
	CHECK(v[1].supported);
	CHECK_INT(v[1].raw, 3);
	if (privileged) {
		CHECK(v[0].supported);
		CHECK(v[0].raw >= 3);
	} else {
		CHECK(!v[0].supported);
		CHECK(strstr(v[0].reason, "perf_event_paranoid="));
		CHECK(strstr(v[0].reason, "page-faults:u"));
	}
}

TEST(counters_hardware_without_pmu_is_unsupported)
{
	struct cp_event_spec *s;
	size_t n;
	struct cp_counters *c = NULL;
	struct cp_counter_value v[3];
	struct cp_error err = { 0 };
	json_t *doc, *measures;

	if (cp_host_has_pmu()) {
		unit_skip("this machine has a hardware PMU");
		return;
	}
	if (!perf_usable())
		return;
	CHECK_INT(parse_specs("instructions:u,cycles:k,task-clock:u", &s, &n), 0);
	CHECK_INT(cp_counters_open(&c, getpid(), s, n, &err), 0);
	cp_counters_enable(c);
	cp_counters_disable(c);
	cp_counters_read(c, v);
	cp_counters_close(c);
	CHECK(!v[0].supported);
	CHECK_STR(v[0].reason, "no hardware PMU on this machine");
	CHECK(!v[1].supported);
	CHECK(v[2].supported);
	doc = cp_counters_json(s, v, n, 10);
	measures = json_object();
	cp_counters_add_measures(measures, s, v, n, 10);
	CHECK(json_is_false(json_object_get(json_object_get(doc, "cycles:k"), "supported")));
	CHECK(!json_object_get(measures, "instructions:u/op"));
	CHECK(json_object_get(measures, "task-clock:u/op"));
	json_decref(doc);
	json_decref(measures);
	free(s);
}

TEST(counters_hardware_counts_with_pmu)
{
	struct cp_event_spec *s;
	size_t n;
	struct cp_counters *c = NULL;
	struct cp_counter_value v[8];
	struct cp_error err = { 0 };
	struct child ch;

	if (!cp_host_has_pmu()) {
		unit_skip("no hardware PMU");
		return;
	}
	if (!perf_usable())
		return;
	CHECK_INT(parse_specs("instructions:u,branches:u,branch-misses:u,cycles:u,"
			      "instructions:k,cycles:k",
			      &s, &n),
		  0);
	CHECK_INT(start_child(&ch, fault_body, 1000), 0);
	CHECK_INT(cp_counters_open(&c, ch.pid, s, n, &err), 0);
	cp_counters_enable(c);
	child_step(&ch);
	cp_counters_read(c, v);
	finish_child(&ch);
	cp_counters_close(c);
	/* 1000 loop iterations: at least one instruction and one branch each. */
	for (int i = 0; i < 4; i++) {
		if (!v[i].supported) {
			unit_fail(__FILE__, __LINE__, "%s: %s", s[i].name, v[i].reason);
			free(s);
			return;
		}
	}
	CHECK(v[0].value >= 1000);
	CHECK(v[1].value >= 1000);
	CHECK(v[3].value > 0);
	CHECK(v[0].running_ratio > 0 && v[0].running_ratio <= 1.0);
	free(s);
}

TEST(counters_no_such_process)
{
	struct cp_event_spec *s;
	size_t n;
	struct cp_counters *c = NULL;
	struct cp_error err = { 0 };
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	waitpid(pid, &status, 0); /* reaped: the pid is free */
	CHECK_INT(parse_specs("task-clock:u", &s, &n), 0);
	CHECK_INT(cp_counters_open(&c, pid, s, n, &err), -1);
	CHECK(c == NULL);
	CHECK_INT(err.exit_code, CP_EXIT_PROFILE);
	CHECK(strstr(err.msg, "no such process"));
	CHECK_INT(cp_counters_open(&c, 0, s, n, &err), -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	free(s);
}

/* A target that keeps creating short-lived threads while we open: the open
 * must succeed and say how many threads it could not place. */
static void *short_thread(void *arg)
{
	return arg;
}

/* Threads the spawner has created so far, in memory shared with the test
 * (MAP_SHARED, inherited across fork): what the test polls for readiness. */
static unsigned long *spawned;

static void spawner_body(long arg)
{
	if (arg < 0)
		return;
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_thread, NULL) == 0) {
			pthread_join(t, NULL);
			__atomic_fetch_add(spawned, 1, __ATOMIC_RELAXED);
		}
	}
}

TEST(counters_open_while_threads_are_born)
{
	struct cp_event_spec *s;
	size_t n;
	struct cp_counters *c = NULL;
	struct cp_counter_value v[2];
	struct cp_counters_info info = { 0 };
	struct cp_error err = { 0 };
	struct child ch;
	int rc;

	if (!perf_usable())
		return;
	CHECK_INT(parse_specs("task-clock:u,page-faults:u", &s, &n), 0);
	spawned = mmap(NULL, sizeof(*spawned), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	CHECK(spawned != MAP_FAILED);
	*spawned = 0;
	CHECK_INT(start_child(&ch, spawner_body, 0), 0);
	/* Let it run: child_step would wait forever, so just release it. */
	char g = 'g';
	CHECK(write(ch.go, &g, 1) == 1);
	/* Open only once threads are being born: poll the child's count (a
	 * fixed sleep is too short on a slow or loaded host), for up to 60 s. */
	for (int i = 0; i < 60000 && __atomic_load_n(spawned, __ATOMIC_RELAXED) < 10; i++)
		usleep(1000);
	if (__atomic_load_n(spawned, __ATOMIC_RELAXED) < 10) {
		kill(ch.pid, SIGKILL);
		close(ch.go);
		close(ch.ready);
		waitpid(ch.pid, NULL, 0);
		unit_fail(__FILE__, __LINE__,
			  "the spawner child created %lu threads in 60 s, "
			  "expected 10 before opening",
			  *spawned);
		munmap(spawned, sizeof(*spawned));
		free(s);
		return;
	}
	rc = cp_counters_open(&c, ch.pid, s, n, &err);
	if (rc == 0) {
		cp_counters_info(c, &info);
		cp_counters_enable(c);
		usleep(50000); /* the window counted, not a wait for readiness */
		cp_counters_read(c, v);
		cp_counters_close(c);
	}
	kill(ch.pid, SIGKILL);
	close(ch.go);
	close(ch.ready);
	waitpid(ch.pid, NULL, 0);
	munmap(spawned, sizeof(*spawned));
	free(s);
	CHECK_INT(rc, 0);
	fprintf(stderr,
		"  spawner: %zu threads opened in %u attempt(s), %zu uncertain, task-clock:u %.1f ms\n",
		info.threads, info.attempts, info.uncertain_threads, v[0].value / 1e6);
	CHECK(info.threads >= 1);
	CHECK(info.attempts >= 1);
	/* Whether any spawned thread ran on a CPU in those 50 ms is up to the
	 * scheduler: the count itself is not asserted, its presence is. */
	CHECK(v[0].supported);
}

/* --- the reference targets, run under counters from exec --------------- */

struct target_counts {
	struct cp_counter_value v[4];
};

/* Runs argv under counters opened on the child held right after its exec
 * (PTRACE_TRACEME stops it there), the way `clockprof run` launches: the
 * process is single-threaded then, so there is no thread race, and the
 * launcher's own pre-exec code is not counted. ASLR is off so two runs
 * fault the same start-up pages. Returns 0, or -1 with a reason in why. */
static int run_target(char *const argv[], const struct cp_event_spec *s, size_t n,
		      struct cp_counter_value *v, char *why, size_t whylen)
{
	pid_t pid;
	struct cp_counters *c = NULL;
	struct cp_error err = { 0 };
	int status;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		personality(ADDR_NO_RANDOMIZE);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		snprintf(why, whylen, "%.200s did not stop at exec (status 0x%x)", argv[0], status);
		return -1;
	}
	if (cp_counters_open(&c, pid, s, n, &err)) {
		snprintf(why, whylen, "%.200s", err.msg);
		kill(pid, SIGKILL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		waitpid(pid, &status, 0);
		return -1;
	}
	cp_counters_enable(c);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	waitpid(pid, &status, 0);
	cp_counters_read(c, v);
	cp_counters_close(c);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, whylen, "%.200s exited with status 0x%x", argv[0], status);
		return -1;
	}
	return 0;
}

/* Runs the target with argv1 (fewer requests) into a and argv2 (more)
 * into b, each twice, keeping the run with the smaller first counter:
 * belt and braces against a stray event (a page-cache fault, khugepaged)
 * landing in one run. */
static int run_short_and_long(char *const argv1[], char *const argv2[],
			      const struct cp_event_spec *s, size_t n, struct cp_counter_value a[2],
			      struct cp_counter_value b[2], char *why, size_t whylen)
{
	for (int round = 0; round < 2; round++) {
		struct cp_counter_value ra[2], rb[2];

		if (run_target(argv1, s, n, ra, why, whylen) ||
		    run_target(argv2, s, n, rb, why, whylen))
			return -1;
		if (round == 0 || ra[0].raw < a[0].raw)
			memcpy(a, ra, sizeof(ra));
		if (round == 0 || rb[0].raw < b[0].raw)
			memcpy(b, rb, sizeof(rb));
	}
	return 0;
}

static bool target_path(char *buf, size_t len, const char *name)
{
	char file[128];

	snprintf(file, sizeof(file), "targets/%s", name);
	return unit_built(buf, len, file);
}

TEST(counters_pagefault_target_k_per_request)
{
	char path[512], why[300];
	struct cp_event_spec *s;
	size_t n;
	struct cp_counter_value a[2], b[2];
	const long k = 7, n1 = 50, n2 = 450;
	char sk[16], s1[16], s2[16];

	if (!target_path(path, sizeof(path), "pagefault_target") || !perf_usable())
		return;
	CHECK_INT(parse_specs("page-faults:u,task-clock:u", &s, &n), 0);
	snprintf(sk, sizeof(sk), "%ld", k);
	snprintf(s1, sizeof(s1), "%ld", n1);
	snprintf(s2, sizeof(s2), "%ld", n2);
	char *argv1[] = { path, sk, s1, NULL };
	char *argv2[] = { path, sk, s2, NULL };

	if (run_short_and_long(argv1, argv2, s, n, a, b, why, sizeof(why))) {
		free(s);
		unit_fail(__FILE__, __LINE__, "%s", why);
		return;
	}
	free(s);
	double per_request = ((double)b[0].raw - (double)a[0].raw) / (double)(n2 - n1);
	double tc_per_request = (b[1].value - a[1].value) / (double)(n2 - n1);

	fprintf(stderr,
		"  pagefault_target K=%ld: %llu faults / %ld requests, %llu / %ld: %.3f page-faults:u per request, task-clock:u %.0f ns per request\n",
		k, (unsigned long long)a[0].raw, n1, (unsigned long long)b[0].raw, n2, per_request,
		tc_per_request);
	CHECK(a[0].supported && b[0].supported);
	CHECK_NEAR(per_request, (double)k, 0.01);
	CHECK(b[1].value > a[1].value);
}

TEST(counters_blocking_target_switches_per_request)
{
	char path[512], why[300];
	struct cp_event_spec *s;
	size_t n;
	struct cp_counter_value a[2], b[2];
	const long n1 = 50, n2 = 250;
	char s1[16], s2[16];

	if (!target_path(path, sizeof(path), "blocking_target") || !perf_usable())
		return;
	/* context-switches counts kernel-side: without privileges under
	 * perf_event_paranoid 2 it is refused; the reason is checked then. */
	CHECK_INT(parse_specs("context-switches,task-clock:u", &s, &n), 0);
	snprintf(s1, sizeof(s1), "%ld", n1);
	snprintf(s2, sizeof(s2), "%ld", n2);
	char *argv1[] = { path, s1, "200", NULL };
	char *argv2[] = { path, s2, "200", NULL };

	if (run_short_and_long(argv1, argv2, s, n, a, b, why, sizeof(why))) {
		free(s);
		unit_fail(__FILE__, __LINE__, "%s", why);
		return;
	}
	free(s);
	if (!a[0].supported) {
		CHECK(strstr(a[0].reason, "not permitted"));
		CHECK(strstr(a[0].reason, "counted in the kernel"));
		unit_skip(a[0].reason);
		return;
	}
	/* Every request blocks once; preemption only adds, and start-up may
	 * add a few, so the totals, not their difference, are bounded. */
	fprintf(stderr,
		"  blocking_target: %llu switches / %ld requests (%.3f/op), %llu / %ld (%.3f/op); task-clock:u %.0f ns/op\n",
		(unsigned long long)a[0].raw, n1, (double)a[0].raw / n1,
		(unsigned long long)b[0].raw, n2, (double)b[0].raw / n2, b[1].value / n2);
	CHECK(a[0].raw >= (uint64_t)n1);
	CHECK(b[0].raw >= (uint64_t)n2);
	CHECK(b[0].raw <= (uint64_t)(2 * n2 + 20));
	CHECK(b[1].raw > 0);
}
