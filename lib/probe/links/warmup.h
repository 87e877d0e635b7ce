/* warmup.h - the kernel's grace periods that start-up must wait for,
 * waited for while the BPF programs are still being loaded.
 *
 * Two first-of-their-kind registrations wait for an RCU grace period (7-12
 * ms on these VMs, measured) unless one of their kind came shortly before:
 *  - a uprobe: the kernel registers every uprobe with dup_mmap_sem held
 *    for writing, a per-CPU rw-semaphore whose writers first wait for a
 *    grace period unless another writer came within about one grace
 *    period before (its rcu_sync stays "passed" that long);
 *  - a perf event bound to a task (the target's task-clock, -e counters,
 *    breakpoints): the first one on the host turns the scheduler's perf
 *    hooks on and waits for a grace period; they stay on for a second
 *    after the last one is closed.
 * Both came after the programs had loaded, one after the other: the first
 * uprobe placed in the target, then the task-clock counter. Registered
 * from threads of their own as soon as profiling starts, on clockprof
 * itself, a uprobe of a program that does nothing (on a function that is
 * never called) and a perf event that counts nothing wait for them while
 * the programs load instead. Neither touches the target, and both are
 * removed at once. */
#ifndef CP_WARMUP_H
#define CP_WARMUP_H

/* Starts the two registrations from detached threads, which remove what
 * they registered right away (the uprobe is handed back to the kernel, as
 * the real ones are at the end: uprobe_removal.h); the uprobe is placed
 * and handed back again every few ms until cp_warmup_stop. Best effort:
 * where they cannot be made, start-up is only slower. The uprobe only
 * where uprobe_multi links exist (the same path as the real probes; the
 * perf-event path of older kernels would hold the trace events' mutex for
 * a whole grace period when removed). */
void cp_warmup_start(void);

/* The session's own uprobes are placed: the uprobe is placed no more, and
 * handed back. Kept placing, it stops by itself after a second. */
void cp_warmup_stop(void);

#endif
