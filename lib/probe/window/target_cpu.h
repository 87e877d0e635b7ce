/* target_cpu.h - the target's CPU time over the clock window: the
 * denominator of the probe-overhead estimate, and the summary's "share of
 * the target's CPU".
 *
 * Two sources, because measuring costs the measured:
 * - a task-clock counter on the target that its forks inherit (their CPU
 *   counts too), readable after it exits. The kernel runs the counter's
 *   scheduler hooks at each of the target's context switches: measured
 *   here, about 6% of the demo target's CPU per request (two switches a
 *   request, ~12 us of CPU each), more than everything else clockprof
 *   adds to it.
 * - the target's process CPU-time clock (every thread's, exited ones
 *   too), read from clockprof's side: it costs the target nothing, but
 *   holds none of its forks, and cannot be read once the target is gone
 *   (then the figure is not known: 0). */
#ifndef CP_TARGET_CPU_H
#define CP_TARGET_CPU_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

struct cp_counters;

struct cp_target_cpu {
	struct cp_counters *counter; /* the counter, or NULL: the clock */
	clockid_t clock;
	bool clock_ok;
	double start_s; /* the clock at the window's start */
};

/* with_counter: the counter (forks followed, or the figure wanted even if
 * the target exits in the window); else the clock. */
void cp_target_cpu_open(struct cp_target_cpu *c, pid_t pid, bool with_counter);
void cp_target_cpu_start(struct cp_target_cpu *c);
/* The CPU seconds since start; 0: not known. Stops the counter. */
double cp_target_cpu_read_s(struct cp_target_cpu *c);
void cp_target_cpu_close(struct cp_target_cpu *c);

#endif
