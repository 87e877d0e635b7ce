/* counters.h - perf_event counters (instructions, branches, cycles,
 * task-clock, page-faults, ...) for every thread of a target process, in
 * counting mode, so a window's totals can be divided by its operations.
 *
 * Honesty rules: an event the machine cannot count (no hardware PMU, not
 * permitted, never scheduled on the PMU) is reported as unsupported with the
 * reason, never as a number; an event that was multiplexed is scaled by
 * time_enabled/time_running and says so (scaled, running_ratio).
 *
 * Typical use (the profiling session):
 *
 *	cp_counters_open(&c, pid, specs, n, &err);	// all threads, disabled
 *	cp_counters_enable(c);				// window starts
 *	...
 *	cp_counters_disable(c);				// window ends
 *	cp_counters_read(c, values);			// n values, specs order
 *	cp_counters_close(c);
 *
 * Threads: every thread listed in /proc/PID/task gets its own events with
 * inherit=1, so threads the target creates later inherit them and are
 * counted too (their counts are summed into the creator's events, live or
 * exited). See counters.c for how a thread created while we are opening is
 * counted exactly once. For `clockprof run`, open on the launched child
 * while it is still single-threaded (before exec): then nothing can race. */
#ifndef CP_COUNTERS_H
#define CP_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "host.h" /* cp_host_has_pmu: whether hardware events count here */
#include "perf_event_names.h"

struct cp_error;
struct cp_counters;

struct cp_counter_value {
	bool supported;
	char reason[200];      /* why not, when !supported */
	uint64_t raw;	       /* counts summed over threads, unscaled */
	uint64_t time_enabled; /* ns, summed over threads */
	uint64_t time_running; /* ns, summed over threads */
	double value;	       /* raw * time_enabled / time_running */
	bool scaled;	       /* time_running < time_enabled: multiplexed */
	double running_ratio;  /* time_running / time_enabled (1 if nothing ran) */
};

struct cp_counters_info {
	size_t threads;		  /* threads opened explicitly */
	unsigned attempts;	  /* enumeration passes needed to get a stable set */
	size_t uncertain_threads; /* born while opening in the last pass: see counters.c */
	bool group_read;	  /* groups read with PERF_FORMAT_GROUP */
};

/* Opens every event of specs on every thread of pid, disabled. Per-event
 * failures (no PMU, not permitted) are not errors: those events read as
 * unsupported with a reason. Fails (CP_EXIT_PROFILE) only when the process
 * cannot be profiled at all: no such process, out of file descriptors. */
int cp_counters_open(struct cp_counters **out, pid_t pid, const struct cp_event_spec *specs,
		     size_t n, struct cp_error *err);

/* Start and stop counting on every thread (and the threads they created). */
int cp_counters_enable(struct cp_counters *c);
int cp_counters_disable(struct cp_counters *c);

/* Fills values[0..n) in specs order: sums since open (counting only while
 * enabled), scaled and checked by cp_counter_value_finish(). Returns 0, or
 * -1 when nothing could be read. */
int cp_counters_read(struct cp_counters *c, struct cp_counter_value *values);

void cp_counters_info(const struct cp_counters *c, struct cp_counters_info *info);
void cp_counters_close(struct cp_counters *c);

/* Opens spec on thread tid alone (no inheritance), enabled: a counter a
 * BPF program running on that thread may read (bpf_perf_event_read_value
 * reads only the current task's own events). Returns the fd or -1. */
int cp_counter_open_own(const struct cp_event_spec *spec, pid_t tid);

/* Computes value, scaled and running_ratio from raw and the times, and turns
 * "enabled but never running" into unsupported (never scheduled). Used by
 * read; exposed for tests. */
void cp_counter_value_finish(struct cp_counter_value *v);

/* Sums one synthetic or real group read (PERF_FORMAT_GROUP with
 * TOTAL_TIME_ENABLED|RUNNING: nr, enabled, running, value[nr]) into
 * values[map[i]] for each member i; exposed for tests. Returns -1 when the
 * buffer is shorter than it says. */
int cp_counters_add_group_read(const uint64_t *buf, size_t words, const size_t *map, size_t members,
			       struct cp_counter_value *values);

/* Hybrid CPUs (Intel cpu_core + cpu_atom) have one PMU per core type; a
 * thread's hardware events are opened once per core PMU and summed, with
 * time_enabled counted once (the thread runs on one core type at a time).
 * Lists the core PMUs under devices (/sys/bus/event_source/devices), sorted
 * by name; 0 on a machine that is not hybrid. */
#define CP_MAX_HYBRID_PMUS 4
struct cp_pmu {
	char name[24];
	uint32_t type;
};
size_t cp_hybrid_pmus(const char *devices, struct cp_pmu *out, size_t max);

/* Adds the per-core-PMU reads of one event on one thread into v: counts
 * and running times summed, enabled time once (the largest); exposed for
 * tests. */
void cp_counters_merge_variants(const struct cp_counter_value *slots, size_t variants,
				struct cp_counter_value *v);

/* kernel.perf_event_paranoid, or INT32_MIN when unreadable. */
int cp_perf_event_paranoid(void);

#endif
