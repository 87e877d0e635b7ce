/* breakpoints.h - per-thread hardware execute breakpoints with a BPF program
 * attached: how every vDSO clock read of the target is seen.
 *
 * One perf event per (thread, address), opened for each thread that exists
 * at attach time with inherit=1 (and inherit_thread=1), so threads created
 * later get their own copy and forked children do not. A thread created
 * while we enumerate may already hold inherited copies, all or some: the
 * sequence of breakpoints fills all four x86 debug registers (the entries,
 * then a guard that never fires, opened last), so whether our own opens
 * on it fail with ENOSPC at once tells whether it holds the whole set.
 * Only a whole set, found after the first scan, is proven ours and
 * complete; anything else starts the attach again (see attach_once). */
#ifndef CP_BREAKPOINTS_H
#define CP_BREAKPOINTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;
struct bpf_program;
struct cp_error;

/* Debug registers per thread on x86, all of which one thread's sequence
 * uses. */
#define CP_BP_SLOTS 4

struct cp_breakpoints {
	void *slots; /* struct bp_slot, breakpoints.c */
	size_t nslots, cap;
	size_t threads;	  /* threads given breakpoints explicitly */
	size_t inherited; /* threads found already covered */
};

/* Opens a breakpoint at each of addrs (at most 3) on every thread of pid
 * (tid == 0) or on one thread (tid != 0, e.g. clockprof's own for
 * calibration), attaching prog to each, plus guards at guard: an address
 * of the target that is never executed (the vDSO's ELF header). Threads
 * that exit meanwhile are skipped. Errors: CP_EXIT_PROFILE with what is
 * missing (registers still taken after every attempt: someone else's). */
int cp_breakpoints_attach(struct cp_breakpoints *bp, pid_t pid, pid_t tid, const uint64_t *addrs,
			  int naddrs, uint64_t guard, struct bpf_program *prog,
			  struct cp_error *err);

/* Closes every breakpoint (the kernel also drops inherited copies). */
void cp_breakpoints_detach(struct cp_breakpoints *bp);

#endif
