/* lifecycle_hooks.bpf.h - the processes counted, as they change: a
 * library mapped (the dynamic linker's hook), the target's or a followed
 * process's exit and exec (its patch table summed before its memory
 * goes; a followed one held at its exec), a fork followed. Part of
 * clockreads.bpf.c. */
#ifndef CP_LIFECYCLE_HOOKS_BPF_H
#define CP_LIFECYCLE_HOOKS_BPF_H

/* The dynamic linker calls its debugger hook (_dl_debug_state, r_brk)
 * before and after it maps or unmaps libraries: user space is woken to
 * probe the new ones. Any thread of the target's image as probed, any
 * phase. */
SEC("uprobe")
int on_dl_change(struct pt_regs *ctx)
{
	__u64 id = current_pid_tgid();
	__u32 tid = (__u32)id;

	/* the target's image as probed: not one it exec()ed since */
	if (id >> 32 == target_tgid && !target_execed)
		bpf_ringbuf_output(&dl_events, &tid, sizeof(tid), 0);
	return 0;
}

/* Raw tracepoints, not tp_btf: attaching those makes libbpf parse the
 * whole kernel BTF (~30 ms at every start) to find them; these attach by
 * name and read the child's tgid through CO-RE. Both run in the context
 * of the process that execs or forks. */

/* task_struct's flags (include/linux/sched.h): set from the start of
 * do_exit on. */
#define CP_PF_EXITING 0x00000004

/* The task's live threads and whether it has memory, read as plain kernel
 * memory: loaded straight from the trusted task, each pointer (signal,
 * mm) made the verifier look its type up by name twice in the whole
 * kernel BTF, one type after the other (btf_nested_type_is_trusted), for
 * every state it reached the load in: most of this program's ~3.5 ms of
 * checking (perf, cpu-clock) for 1,029 instructions. */
static __always_inline int live_threads(struct task_struct *task)
{
	return BPF_CORE_READ(task, signal, live.counter);
}

static __always_inline bool has_mm(struct task_struct *task)
{
	return BPF_CORE_READ(task, mm) != NULL;
}

/* A thread's exit (sched_process_exit) and, attached there too, an exec
 * at its point of no return (sched_prepare_exec, a thread not exiting):
 * one program, so that the verifier checks the table's sums once, where
 * two programs (and on_clock_func at the C library's execve) each cost
 * it ~4 ms of every start-up. At an exec the target's or a followed
 * process's table goes with its old image: summed now (a followed one's
 * thread as at an exit: the other threads exit on their own before the
 * exec), and a followed one is marked in its exec until on_target_exec. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_target_exit)
{
	struct task_struct *task = bpf_get_current_task_btf();
	bool execing = !(task->flags & CP_PF_EXITING);
	struct cp_proc *p;
	bool last;

	/* After an exec the memory is the new program's: the sums were taken
	 * at the exec. At an exit, once: every thread that exits after the
	 * last one has counted itself out sees no thread live, and a Go
	 * program's threads exit at once on every CPU; two passes at once
	 * each zeroed the other's request sums, which user space then found
	 * of another pass than the one that ended last: 0 requests said. */
	if ((execing || patch_table) && !target_execed &&
	    (__u32)(current_pid_tgid() >> 32) == target_tgid) {
		if (patch_table && (execing || (live_threads(task) == 0 && has_mm(task) &&
						!__sync_lock_test_and_set(&target_exit_summed, 1))))
			sum_patch_table();
		return 0;
	}
	if (!(p = followed_proc()))
		return 0;
	last = execing || live_threads(task) == 0;
	/* In any phase: a process that exits as the window closes (its end
	 * may come with the same Ctrl-C) is read from these sums. Its vDSO
	 * counts no more once switched back at the clock window's end. */
	if (p->table && has_mm(task))
		sum_exiting_thread(p, last);
	if (execing) {
		__sync_fetch_and_or(&p->flags, CP_PROC_EXECING);
		return 0;
	}
	if (last) {
		bpf_get_current_comm(p->comm, sizeof(p->comm));
		p->end_ns = bpf_ktime_get_ns();
		__sync_fetch_and_or(&p->flags, CP_PROC_EXITED);
	}
	return 0;
}

/* A task's tgid in clockprof's pid namespace (pidns_ino; the host's when
 * 0): the number of its thread group's pid at that namespace's level. 0
 * when it is not in it. */
static __always_inline __u32 tgid_in_ns(struct task_struct *task)
{
	struct pid *pid;
	unsigned int level;

	if (!pidns_ino)
		return BPF_CORE_READ(task, tgid);
	pid = BPF_CORE_READ(task, group_leader, thread_pid);
	level = BPF_CORE_READ(pid, level);
	for (unsigned int i = 0; i < 8 && i <= level; i++) {
		struct upid up;

		if (bpf_core_read(&up, sizeof(up), &pid->numbers[i]))
			break;
		if (BPF_CORE_READ(up.ns, ns.inum) == pidns_ino)
			return up.nr;
	}
	return 0;
}

/* Whether another process (a debugger, strace) traces the current one:
 * a SIGSTOP would be its tracer's to see first, which may keep it
 * stopped (gdb) or pass it on after clockprof's SIGCONT, and clockprof
 * cannot seize it, so it is not held. clockprof's own trace of the
 * command it launched is not another's. */
static __always_inline bool traced_by_another(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return task->ptrace && (__u32)BPF_CORE_READ(task, parent, tgid) != selftest_tgid;
}

/* A followed process held before its new image's first instruction: a
 * SIGSTOP, which user space turns into a ptrace stop at once (a SIGKILLed
 * clockprof leaves it to run: lib/probe/mech/patch/patch_execs.c), and an
 * event. False when it cannot be held. */
static __always_inline bool hold_exec(struct cp_proc *p, __u32 host_tgid)
{
	__u32 *ev;

	if (!hold_execs)
		return false;
	if (traced_by_another()) {
		__sync_fetch_and_add(&procs_traced, 1);
		return false;
	}
	if (!(ev = bpf_ringbuf_reserve(&exec_events, sizeof(*ev), 0)))
		return false;
	*ev = host_tgid;
	if (bpf_send_signal(19 /* SIGSTOP */)) {
		bpf_ringbuf_discard(ev, 0);
		return false;
	}
	p->table = 0; /* none until its new image is patched */
	__sync_fetch_and_or(&p->flags, CP_PROC_EXEC_HELD | CP_PROC_NO_SITES);
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	return true;
}

/* The target's exec, when run follows its forks: the target joins procs
 * as the processes it forked are, held there. */
static __always_inline bool follow_target_exec(__u32 host_tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct cp_proc c = {}, *p;

	if (!follow_forks || !hold_execs)
		return false;
	c.pid = target_tgid;
	c.ppid = tgid_in_ns(BPF_CORE_READ(task, real_parent));
	c.start_ns = bpf_ktime_get_ns();
	c.start_ticks = start_ticks_of(BPF_CORE_READ(task, group_leader));
	bpf_get_current_comm(c.comm, sizeof(c.comm));
	if (bpf_map_update_elem(&procs, &host_tgid, &c, BPF_NOEXIST) ||
	    !(p = bpf_map_lookup_elem(&procs, &host_tgid)))
		return false;
	if (hold_exec(p, host_tgid))
		return true;
	bpf_map_delete_elem(&procs, &host_tgid);
	return false;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_target_exec)
{
	__u32 host_tgid = bpf_get_current_pid_tgid() >> 32;
	struct cp_proc *p;

	if ((__u32)(current_pid_tgid() >> 32) == target_tgid && !target_execed) {
		target_execed = follow_target_exec(host_tgid) ? 2 : 1;
	} else if ((p = followed_proc())) {
		bpf_get_current_comm(p->comm, sizeof(p->comm));
		__sync_fetch_and_and(&p->flags, ~(__u32)CP_PROC_EXECING);
		if (hold_exec(p, host_tgid))
			return 0;
		p->end_ns = bpf_ktime_get_ns();
		__sync_fetch_and_or(&p->flags, CP_PROC_EXECED);
		__sync_fetch_and_add(&procs_execed, 1);
	}
	return 0;
}

/* A process started by a counted one: followed (procs) when run asked for
 * it, else counted as not counted. Runs in the parent, before the child
 * first runs, so the child's first instruction is counted. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_target_fork, struct task_struct *parent, struct task_struct *child)
{
	/* task_struct's tgid is the host's number, as is the helper's. */
	__u32 host_tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 child_tgid = BPF_CORE_READ(child, tgid);
	__u64 id = current_pid_tgid();
	struct cp_proc c = {}, *parent_proc;

	if (child_tgid == host_tgid || !counted_tid(id))
		return 0;
	c.pid = tgid_in_ns(child);
	c.ppid = id >> 32;
	c.start_ns = bpf_ktime_get_ns();
	c.start_ticks = start_ticks_of(child); /* a new process: its own leader */
	parent_proc = followed_proc();
	/* The copy is where its parent's is. A child that shares its
	 * parent's memory (CLONE_VM: vfork, posix_spawn, system()) has no
	 * copy, and its parent's thread pointer until it execs: what it
	 * reads is counted in its parent's slot, as the parent's, and its
	 * exit or exec sums nothing (its exec's new image gets a table). */
	if (BPF_CORE_READ(child, mm) != BPF_CORE_READ(parent, mm))
		c.table = table_of(parent_proc);
	c.flags = parent_proc ? parent_proc->flags & CP_PROC_NO_SITES : 0;
	bpf_get_current_comm(c.comm, sizeof(c.comm)); /* the child's, until it execs */
	if (!follow_forks || bpf_map_update_elem(&procs, &child_tgid, &c, BPF_NOEXIST))
		__sync_fetch_and_add(&target_forks, 1);
	return 0;
}

#endif
