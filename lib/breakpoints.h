/* breakpoints.h - per-thread hardware execute breakpoints with a BPF program
 * attached: how every vDSO clock read of the target is seen.
 *
 * One perf event per (thread, address), opened for each thread that exists
 * at attach time with inherit=1 (and inherit_thread=1), so threads created
 * later get their own copy and forked children do not. A thread created
 * while we enumerate may already hold inherited copies; opening ours as
 * well would count its reads twice. x86 has four debug registers and we use
 * at most three, so such a thread has no room left: ENOSPC on a thread we
 * found in a rescan means it is covered already, and what we opened on it
 * is closed again. */
#ifndef CP_BREAKPOINTS_H
#define CP_BREAKPOINTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;
struct bpf_program;
struct cp_error;

struct cp_breakpoints {
	struct bpf_link **links;
	size_t nlinks, cap;
	size_t threads;		/* threads given breakpoints explicitly */
	size_t inherited;	/* threads found already covered */
};

/* Opens a breakpoint at each of addrs on every thread of pid (tid == 0) or
 * on one thread (tid != 0, e.g. clockprof's own for calibration), attaching
 * prog to each. Errors: CP_EXIT_PROFILE with what is missing. */
int cp_breakpoints_attach(struct cp_breakpoints *bp, pid_t pid, pid_t tid,
			  const uint64_t *addrs, int naddrs,
			  struct bpf_program *prog, struct cp_error *err);

/* Closes every breakpoint (the kernel also drops inherited copies). */
void cp_breakpoints_detach(struct cp_breakpoints *bp);

#endif
