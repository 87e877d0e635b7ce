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
 *    after the last one is closed (a second after an earlier clockprof's
 *    last one, perhaps in the middle of this start-up, unless one is held
 *    open meanwhile).
 * Both came after the programs had loaded, one after the other: the first
 * uprobe placed in the target, then the task-clock counter. Registered as
 * soon as profiling starts, on clockprof's own code, a uprobe of a program
 * that does nothing (on a function that is never called, placed by a child
 * of the registrar's in its own code: registrar.h) and, from a thread, a
 * perf event that counts nothing wait for them while the programs load
 * instead. Neither touches the target. */
#ifndef CP_WARMUP_H
#define CP_WARMUP_H

/* Starts the perf event's registration from a detached thread (the
 * event is kept open until cp_warmup_events_open) and asks the kernel
 * meanwhile, from another, whether it makes uprobe_multi links (for the
 * session). Best effort: where it cannot be made, start-up is only
 * slower. The uprobe's is the registrar's (cp_registrar_start), only where
 * uprobe_multi links exist (the perf-event path of older kernels would
 * hold the trace events' mutex for a whole grace period when removed). */
void cp_warmup_start(void);

/* Start-up's perf events bound to tasks are open: the warm-up's is closed
 * (the kernel keeps its hooks on a second more), before clockprof says it
 * is live, so that nothing of start-up's is seen among its events then. */
void cp_warmup_events_open(void);

/* The warm-up's event closed if it is not yet, and the registrar's
 * warm-up ended: it places its uprobe again every few ms, and hands it
 * back at once, from its start until this (or a second): a placement
 * within ~16 ms of the last writer took 0.02-0.15 ms here, one 24-50 ms
 * after it 9-15 ms (the grace period), and the vDSO patch's programs take
 * ~20 ms to load, so its first uprobe in the target waited for one on the
 * main thread where the uprobe mechanism's did not. Called once
 * start-up's last uprobe is placed, or when start-up is given up: a
 * writer every few ms keeps every fork on the host on dup_mmap_sem's slow
 * path. */
void cp_warmup_stop(void);

#endif
