/* counters.c - see counters.h. perf_event_open in counting mode, one set of
 * events per thread of the target, inherit=1 for threads created later.
 *
 * Grouping. Per thread, the software events form one group and the hardware
 * events (hardware, cache, raw) groups of at most HW_GROUP_MAX, so events of
 * a group are scheduled together and their ratios (IPC) are consistent, yet a
 * group always fits the 4 general-purpose counters every x86/arm64 core has
 * even with the NMI watchdog holding one. A sibling the kernel refuses
 * (EINVAL/ENOSPC: group cannot fit this PMU) starts a new group instead.
 * Groups are read with PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|RUNNING: the
 * kernel accepts PERF_FORMAT_GROUP with inherit for counting since 4.13 and
 * sums the inherited children into the read (checked once at open; if an
 * older kernel refuses, each event is read on its own and nothing else
 * changes). Multiplexing is scaled on the totals over threads:
 * value = sum(raw) * sum(enabled) / sum(running), the same aggregation the
 * kernel does for inherited children.
 *
 * The thread race. /proc/PID/task is a snapshot we walk while the target
 * keeps running. A thread T born while we are opening is a problem either way:
 * if its creator already had our events, T inherited them, and opening T
 * explicitly as well would count it twice; if its creator did not, T has
 * nothing and must be opened, but it may be missing from the listing we
 * already took. Whether T inherited cannot be asked of the kernel. So we
 * make the question disappear instead of answering it:
 *
 *   1. list the threads (S0);
 *   2. open every thread of S0 explicitly (disabled; a thread gone: ESRCH,
 *      skipped);
 *   3. list again, twice (S1: a concurrent exit can make one readdir of
 *      /proc/PID/task skip a live thread);
 *   4. if S1 holds no thread that S0 did not, the set is exact: every live
 *      thread existed before our first open, so none of them can hold an
 *      inherited copy (inheritance happens only at creation), and each holds
 *      exactly our explicit events. Threads born from now on inherit from a
 *      live creator, which has events. Threads born during step 2 and
 *      already dead again do not matter: events are disabled until enable,
 *      so what they inherited counted nothing.
 *      Otherwise close everything and start again (up to MAX_ATTEMPTS).
 *
 * A target that creates threads faster than we can open a few fds per
 * thread never gives a stable pass; then the last pass is kept, the newborn
 * threads are not opened (their creator is most often an already opened
 * thread, so they most likely inherited), and cp_counters_info() reports
 * them as uncertain_threads so the caller can warn. Recycled TIDs within one
 * pass (a full pid_max wrap) are ignored. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "perf_trial.h"
#include "procfs.h"
#include "grow.h"
#include "host.h"
#include "target.h"
#include "error.h"

#define HW_GROUP_MAX 3
#define GROUP_MAX 64 /* software group; also the read buffer's size */
#define MAX_ATTEMPTS 6
#define NO_FD (-1)

/* A slot is one event on one core PMU: slot = event * variants + pmu.
 * Without hybrid PMUs there is one variant and slot = event. */
struct thread_events {
	pid_t tid;
	int *fd;     /* per slot, NO_FD when not opened */
	int *leader; /* per slot: slot of its group leader, or -1 */
};

struct cp_counters {
	pid_t pid;
	size_t n;
	struct cp_event_spec *specs;
	struct cp_pmu pmus[CP_MAX_HYBRID_PMUS]; /* hybrid core PMUs, or none */
	size_t npmus;
	size_t variants; /* max(1, npmus) */
	size_t nslots;	 /* n * variants */
	bool *unsupported;
	char (*reason)[200];
	bool group_read;
	int has_pmu; /* -1 unknown */
	bool nofile_raised;
	struct thread_events *threads;
	size_t nthreads, cap;
	unsigned attempts;
	size_t uncertain;
};

static int perf_open(struct perf_event_attr *attr, pid_t tid, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

int cp_perf_event_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v;

	if (!f)
		return INT32_MIN;
	if (fscanf(f, "%d", &v) != 1)
		v = INT32_MIN;
	fclose(f);
	return v;
}

size_t cp_hybrid_pmus(const char *devices, struct cp_pmu *out, size_t max)
{
	struct dirent **names = NULL;
	int count = scandir(devices, &names, NULL, alphasort);
	size_t found = 0;

	for (int i = 0; i < count; i++) {
		const char *name = names[i]->d_name;
		char path[512];
		FILE *f;
		unsigned type;

		/* cpu_core, cpu_atom (and future cpu_* core types): each has
		 * the cpus it covers and its perf type. */
		if (found < max && !strncmp(name, "cpu_", 4) && strlen(name) < sizeof(out->name)) {
			snprintf(path, sizeof(path), "%s/%s/cpus", devices, name);
			if (access(path, R_OK) == 0) {
				snprintf(path, sizeof(path), "%s/%s/type", devices, name);
				f = fopen(path, "r");
				if (f && fscanf(f, "%u", &type) == 1) {
					snprintf(out[found].name, sizeof(out->name), "%.23s", name);
					out[found++].type = type;
				}
				if (f)
					fclose(f);
			}
		}
		free(names[i]);
	}
	free(names);
	return found;
}

/* Does this kernel take PERF_FORMAT_GROUP on inherited counting events?
 * Tried on ourselves with a user-only software event (allowed at any
 * perf_event_paranoid level): only EINVAL means no. */
static bool kernel_groups_inherit(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.inherit = 1,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
	};

	return cp_perf_trial(&attr) != EINVAL;
}

/* Why an event the kernel does not know (ENOENT, ENODEV, EOPNOTSUPP)
 * cannot count here. */
static void why_unknown(struct cp_counters *c, size_t e, const char *pmu)
{
	char *why = c->reason[e];
	size_t size = sizeof(c->reason[e]);

	if (!cp_event_is_hardware(&c->specs[e])) {
		snprintf(why, size, "not supported by this kernel");
		return;
	}
	if (c->has_pmu < 0)
		c->has_pmu = cp_host_has_pmu();
	if (!c->has_pmu)
		snprintf(why, size, "no hardware PMU on this machine");
	else if (pmu)
		snprintf(why, size, "not supported by this CPU's %.16s PMU", pmu);
	else
		snprintf(why, size, "not supported by this CPU's PMU");
}

/* Software events that count in the kernel only. */
static bool kernel_only_software(const struct cp_event_spec *s)
{
	return s->type == PERF_TYPE_SOFTWARE && (s->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
						 s->config == PERF_COUNT_SW_CPU_MIGRATIONS ||
						 s->config == PERF_COUNT_SW_CGROUP_SWITCHES);
}

/* Why an event was refused (EACCES, EPERM): what perf_event_paranoid
 * allows, and what to do about it. */
static void why_refused(struct cp_counters *c, size_t e)
{
	const struct cp_event_spec *s = &c->specs[e];
	int paranoid = cp_perf_event_paranoid();
	char *why = c->reason[e];
	size_t size = sizeof(c->reason[e]);

	if (!s->exclude_kernel && paranoid >= 2 && kernel_only_software(s))
		snprintf(
			why, size,
			"not permitted: kernel.perf_event_paranoid=%d allows only user-space counting without CAP_PERFMON, and %.40s are counted in the kernel (run as root)",
			paranoid, s->name);
	else if (!s->exclude_kernel && paranoid >= 2)
		snprintf(
			why, size,
			"not permitted: kernel.perf_event_paranoid=%d allows only user-space counting without CAP_PERFMON (run as root, or count %.60s:u)",
			paranoid, s->name);
	else if (paranoid != INT32_MIN)
		snprintf(
			why, size,
			"not permitted with kernel.perf_event_paranoid=%d (run as root or with CAP_PERFMON, or the target belongs to another user)",
			paranoid);
	else
		snprintf(why, size, "not permitted (run as root or with CAP_PERFMON)");
}

static void set_unsupported(struct cp_counters *c, size_t e, int errnum, const char *pmu)
{
	if (c->unsupported[e])
		return;
	c->unsupported[e] = true;
	switch (errnum) {
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP: why_unknown(c, e, pmu); break;
	case EACCES:
	case EPERM: why_refused(c, e); break;
	case EINVAL:
		snprintf(c->reason[e], sizeof(c->reason[e]),
			 "rejected by the kernel as invalid for this PMU (EINVAL)");
		break;
	default:
		snprintf(c->reason[e], sizeof(c->reason[e]), "perf_event_open failed: %s",
			 strerror(errnum));
	}
}

static void close_thread(struct cp_counters *c, struct thread_events *t)
{
	/* Siblings before leaders: closing a leader first would briefly
	 * promote each sibling to a group of its own. */
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t sl = 0; sl < c->nslots; sl++) {
			bool is_leader = t->leader[sl] == (int)sl;

			if (t->fd[sl] != NO_FD && is_leader == (pass == 1)) {
				close(t->fd[sl]);
				t->fd[sl] = NO_FD;
			}
		}
	free(t->fd);
	free(t->leader);
	t->fd = t->leader = NULL;
}

static void close_all(struct cp_counters *c)
{
	for (size_t i = 0; i < c->nthreads; i++)
		close_thread(c, &c->threads[i]);
	c->nthreads = 0;
}

/* EMFILE: a target with many threads needs threads x events descriptors;
 * raise our soft limit to the hard one, once. */
static bool raise_nofile(struct cp_counters *c)
{
	struct rlimit rl;

	if (c->nofile_raised || getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return false;
	c->nofile_raised = true;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/* The attr of one slot: on a hybrid machine a hardware or cache event
 * names its core PMU in config's upper half, a raw event is of that PMU's
 * type (raw codes are per core type). */
static void slot_attr(const struct cp_counters *c, size_t sl, struct perf_event_attr *attr)
{
	const struct cp_event_spec *s = &c->specs[sl / c->variants];
	size_t v = sl % c->variants;

	memset(attr, 0, sizeof(*attr));
	attr->type = s->type;
	attr->size = sizeof(*attr);
	attr->config = s->config;
	attr->inherit = 1;
	attr->exclude_user = s->exclude_user;
	attr->exclude_kernel = s->exclude_kernel;
	attr->exclude_hv = s->exclude_hv;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			    (c->group_read ? PERF_FORMAT_GROUP : 0);
	if (c->npmus && cp_event_is_hardware(s)) {
		if (s->type == PERF_TYPE_RAW)
			attr->type = c->pmus[v].type;
		else
			attr->config |= (uint64_t)c->pmus[v].type << PERF_PMU_TYPE_SHIFT;
	}
}

/* The groups being filled on one thread: the current leader's slot per
 * class (software, then one per core PMU) and how many it leads. */
struct groups {
	int leader[1 + CP_MAX_HYBRID_PMUS];
	size_t members[1 + CP_MAX_HYBRID_PMUS];
};

/* Opens one slot on the thread: in the class's current group when it has
 * room and takes it, else as the leader of a new one (*leader). Out of
 * descriptors, the soft limit is raised once and the slot tried again.
 * Returns the fd, or -1 with *errnum. */
static int open_slot(struct cp_counters *c, const struct thread_events *t, const struct groups *g,
		     size_t sl, size_t k, size_t max, int *leader, int *errnum)
{
	struct perf_event_attr attr;
	int fd = -1;

	slot_attr(c, sl, &attr);
	for (int tries = 0; tries < 2; tries++) {
		bool sibling = g->leader[k] >= 0 && g->members[k] < max;

		if (sibling) {
			attr.disabled = 0; /* follows its leader */
			fd = perf_open(&attr, t->tid, t->fd[g->leader[k]]);
			*leader = g->leader[k];
			/* The group cannot take it: start a new one. */
			if (fd < 0 && (errno == EINVAL || errno == ENOSPC))
				sibling = false;
		}
		if (!sibling) {
			attr.disabled = 1;
			fd = perf_open(&attr, t->tid, -1);
			*leader = (int)sl;
		}
		*errnum = fd < 0 ? errno : 0;
		if (!((*errnum == EMFILE || *errnum == ENFILE) && raise_nofile(c)))
			break;
	}
	return fd;
}

/* Opens all events on one thread. Returns 0, ESRCH when the thread is gone,
 * or EMFILE/ENFILE/ENOMEM when we are out of resources. */
static int open_thread(struct cp_counters *c, struct thread_events *t)
{
	struct groups g = { .members = { 0 } };

	for (size_t k = 0; k < 1 + CP_MAX_HYBRID_PMUS; k++)
		g.leader[k] = -1;
	for (size_t sl = 0; sl < c->nslots; sl++) {
		size_t e = sl / c->variants, v = sl % c->variants;
		bool hw = cp_event_is_hardware(&c->specs[e]);
		size_t k = hw ? 1 + v : 0;
		int fd, leader = -1, errnum = 0;

		if (c->unsupported[e] || (!hw && v > 0))
			continue;
		fd = open_slot(c, t, &g, sl, k, hw ? HW_GROUP_MAX : GROUP_MAX, &leader, &errnum);
		if (fd < 0) {
			if (errnum == ESRCH || errnum == EMFILE || errnum == ENFILE ||
			    errnum == ENOMEM)
				return errnum;
			set_unsupported(c, e, errnum, c->npmus ? c->pmus[v].name : NULL);
			continue;
		}
		t->fd[sl] = fd;
		t->leader[sl] = leader;
		if (leader == (int)sl) {
			g.leader[k] = (int)sl;
			g.members[k] = 1;
		} else {
			g.members[k]++;
		}
	}
	return 0;
}

/* Threads in a fresh listing (taken twice) that `known` does not hold. */
static size_t count_newborn(pid_t pid, const pid_t *known, size_t nknown)
{
	size_t born = 0;
	pid_t *seen = NULL;
	size_t nseen = 0, seen_cap = 0;

	for (int pass = 0; pass < 2; pass++) {
		pid_t *tids;
		size_t n;

		if (cp_proc_threads(pid, &tids, &n))
			break;
		for (size_t i = 0; i < n; i++) {
			if (cp_tid_in(known, nknown, tids[i]) || cp_tid_in(seen, nseen, tids[i]))
				continue;
			if (cp_grow(&seen, &seen_cap, nseen + 1, sizeof(*seen)))
				break;
			seen[nseen++] = tids[i];
			born++;
		}
		free(tids);
	}
	free(seen);
	return born;
}

static int add_thread(struct cp_counters *c, pid_t tid, struct thread_events **t)
{
	struct thread_events *th;
	int *fd, *leader;

	if (cp_grow(&c->threads, &c->cap, c->nthreads + 1, sizeof(*c->threads)))
		return -1;
	fd = malloc(c->nslots * sizeof(*fd));
	leader = malloc(c->nslots * sizeof(*leader));
	if (!fd || !leader) {
		free(fd);
		free(leader);
		return -1;
	}
	th = &c->threads[c->nthreads];
	th->tid = tid;
	th->fd = fd;
	th->leader = leader;
	for (size_t sl = 0; sl < c->nslots; sl++)
		th->fd[sl] = th->leader[sl] = NO_FD;
	c->nthreads++;
	*t = th;
	return 0;
}

/* One pass of the procedure described at the top. Returns the number of
 * threads born during the pass, or -1 with err set. */
static long open_pass(struct cp_counters *c, struct cp_error *err)
{
	pid_t *tids;
	size_t n;

	if (cp_proc_threads(c->pid, &tids, &n)) {
		if (errno == ENOENT || errno == ESRCH)
			return cp_fail(err, CP_EXIT_PROFILE, "no such process: %d", (int)c->pid);
		return cp_fail(err, CP_EXIT_PROFILE, "cannot list the threads of %d: %s",
			       (int)c->pid, strerror(errno));
	}
	for (size_t i = 0; i < n; i++) {
		struct thread_events *t;
		int rc;

		if (add_thread(c, tids[i], &t)) {
			free(tids);
			return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
		}
		rc = open_thread(c, t);
		if (rc == ESRCH) { /* exited meanwhile */
			close_thread(c, t);
			c->nthreads--;
		} else if (rc) {
			pid_t tid = tids[i];

			free(tids);
			if (rc == EMFILE || rc == ENFILE)
				return cp_fail(
					err, CP_EXIT_PROFILE,
					"out of file descriptors opening %zu events on %zu threads of %d (raise ulimit -n)",
					c->n, n, (int)c->pid);
			return cp_fail(err, CP_EXIT_PROFILE,
				       "cannot open counters on thread %d: %s", (int)tid,
				       strerror(rc));
		}
	}
	long born = (long)count_newborn(c->pid, tids, n);

	free(tids);
	if (c->nthreads == 0 && born == 0)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d exited while its counters were being opened",
			       (int)c->pid);
	return born;
}

int cp_counters_open(struct cp_counters **out, pid_t pid, const struct cp_event_spec *specs,
		     size_t n, struct cp_error *err)
{
	struct cp_counters *c;
	long born = 0;

	*out = NULL;
	if (pid <= 0)
		return cp_fail(err, CP_EXIT_USAGE, "invalid process id %d", (int)pid);
	if (n == 0)
		return cp_fail(err, CP_EXIT_USAGE, "--events: no events to count");
	c = calloc(1, sizeof(*c));
	if (!c || !(c->specs = malloc(n * sizeof(*specs))) ||
	    !(c->unsupported = calloc(n, sizeof(*c->unsupported))) ||
	    !(c->reason = calloc(n, sizeof(*c->reason)))) {
		cp_counters_close(c);
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	}
	memcpy(c->specs, specs, n * sizeof(*specs));
	c->n = n;
	c->pid = pid;
	c->has_pmu = -1;
	c->group_read = kernel_groups_inherit();
	c->npmus = cp_hybrid_pmus("/sys/bus/event_source/devices", c->pmus, CP_MAX_HYBRID_PMUS);
	c->variants = c->npmus ? c->npmus : 1;
	c->nslots = n * c->variants;
	for (c->attempts = 1; c->attempts <= MAX_ATTEMPTS; c->attempts++) {
		born = open_pass(c, err);
		if (born <= 0)
			break;
		if (c->attempts == MAX_ATTEMPTS)
			break;
		close_all(c);
	}
	if (born < 0) {
		cp_counters_close(c);
		return -1;
	}
	c->uncertain = (size_t)born;
	*out = c;
	return 0;
}

static int ioctl_leaders(struct cp_counters *c, unsigned long request)
{
	size_t ok = 0, tried = 0;

	for (size_t i = 0; i < c->nthreads; i++) {
		struct thread_events *t = &c->threads[i];

		for (size_t sl = 0; sl < c->nslots; sl++) {
			if (t->fd[sl] == NO_FD || t->leader[sl] != (int)sl)
				continue;
			tried++;
			if (ioctl(t->fd[sl], request, PERF_IOC_FLAG_GROUP) == 0)
				ok++;
		}
	}
	return tried && !ok ? -1 : 0;
}

int cp_counters_enable(struct cp_counters *c)
{
	return ioctl_leaders(c, PERF_EVENT_IOC_ENABLE);
}

int cp_counters_disable(struct cp_counters *c)
{
	return ioctl_leaders(c, PERF_EVENT_IOC_DISABLE);
}

int cp_counters_add_group_read(const uint64_t *buf, size_t words, const size_t *map, size_t members,
			       struct cp_counter_value *values)
{
	if (words < 3 || buf[0] != members || words < 3 + members)
		return -1;
	for (size_t i = 0; i < members; i++) {
		struct cp_counter_value *v = &values[map[i]];

		v->raw += buf[3 + i];
		v->time_enabled += buf[1];
		v->time_running += buf[2];
	}
	return 0;
}

void cp_counter_value_finish(struct cp_counter_value *v)
{
	v->value = 0;
	v->scaled = false;
	v->running_ratio = 1.0;
	if (!v->supported)
		return;
	if (v->time_enabled > 0 && v->time_running == 0) {
		v->supported = false;
		snprintf(
			v->reason, sizeof(v->reason),
			"not counted: never scheduled on the PMU (counters busy or the group does not fit)");
		return;
	}
	v->value = (double)v->raw;
	if (v->time_running < v->time_enabled) {
		v->scaled = true;
		v->running_ratio = (double)v->time_running / (double)v->time_enabled;
		v->value = (double)v->raw * ((double)v->time_enabled / (double)v->time_running);
	}
}

/* Reads one thread's groups into per-slot sums (slots zeroed first). */
static void read_thread(struct cp_counters *c, const struct thread_events *t,
			struct cp_counter_value *slots)
{
	size_t map[GROUP_MAX], m;
	uint64_t buf[3 + GROUP_MAX];

	memset(slots, 0, c->nslots * sizeof(*slots));
	for (size_t sl = 0; sl < c->nslots; sl++) {
		if (t->fd[sl] == NO_FD || t->leader[sl] != (int)sl)
			continue;
		if (!c->group_read) {
			for (size_t f = sl; f < c->nslots; f++) {
				if (t->fd[f] == NO_FD || t->leader[f] != (int)sl)
					continue;
				if (read(t->fd[f], buf, 3 * sizeof(uint64_t)) ==
				    3 * sizeof(uint64_t)) {
					slots[f].raw += buf[0];
					slots[f].time_enabled += buf[1];
					slots[f].time_running += buf[2];
				}
			}
			continue;
		}
		m = 0;
		for (size_t f = sl; f < c->nslots && m < GROUP_MAX; f++)
			if (t->fd[f] != NO_FD && t->leader[f] == (int)sl)
				map[m++] = f;
		ssize_t got = read(t->fd[sl], buf, (3 + m) * sizeof(uint64_t));

		if (got > 0)
			cp_counters_add_group_read(buf, (size_t)got / sizeof(uint64_t), map, m,
						   slots);
	}
}

void cp_counters_merge_variants(const struct cp_counter_value *slots, size_t variants,
				struct cp_counter_value *v)
{
	uint64_t enabled = 0;

	for (size_t i = 0; i < variants; i++) {
		v->raw += slots[i].raw;
		v->time_running += slots[i].time_running;
		if (slots[i].time_enabled > enabled)
			enabled = slots[i].time_enabled;
	}
	v->time_enabled += enabled;
}

int cp_counters_read(struct cp_counters *c, struct cp_counter_value *values)
{
	struct cp_counter_value *slots = calloc(c->nslots, sizeof(*slots));

	if (!slots)
		return -1;
	memset(values, 0, c->n * sizeof(*values));
	for (size_t e = 0; e < c->n; e++) {
		values[e].supported = !c->unsupported[e];
		if (c->unsupported[e])
			snprintf(values[e].reason, sizeof(values[e].reason), "%s", c->reason[e]);
	}
	for (size_t i = 0; i < c->nthreads; i++) {
		read_thread(c, &c->threads[i], slots);
		for (size_t e = 0; e < c->n; e++)
			cp_counters_merge_variants(
				&slots[e * c->variants],
				cp_event_is_hardware(&c->specs[e]) ? c->variants : 1, &values[e]);
	}
	free(slots);
	for (size_t e = 0; e < c->n; e++)
		cp_counter_value_finish(&values[e]);
	return 0;
}

void cp_counters_info(const struct cp_counters *c, struct cp_counters_info *info)
{
	info->threads = c->nthreads;
	info->attempts = c->attempts;
	info->uncertain_threads = c->uncertain;
	info->group_read = c->group_read;
}

void cp_counters_close(struct cp_counters *c)
{
	if (!c)
		return;
	if (c->threads)
		close_all(c);
	free(c->threads);
	free(c->specs);
	free(c->unsupported);
	free(c->reason);
	free(c);
}

int cp_counter_open_own(const struct cp_event_spec *spec, pid_t tid)
{
	struct perf_event_attr attr = {
		.type = spec->type,
		.size = sizeof(attr),
		.config = spec->config,
		.exclude_user = spec->exclude_user,
		.exclude_kernel = spec->exclude_kernel,
		.exclude_hv = spec->exclude_hv,
	};

	return perf_open(&attr, tid, -1);
}
