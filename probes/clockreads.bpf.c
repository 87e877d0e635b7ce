// SPDX-License-Identifier: GPL-2.0
/* clockreads.bpf.c - counts every clock read of one process (and, run's
 * default, of the processes it forks: procs), per request.
 *
 * Ways in, each counted exactly once (user space attaches one mechanism):
 *  - on_clock_func (the uprobe mechanism, the default): a uprobe on each
 *    place a read passes in an ordinary file of the target: the C
 *    library's real clock_gettime, the PLT stubs of gettimeofday/time
 *    (IFUNCs that jump straight into the vDSO), a static or Go executable's
 *    own vDSO callers (lib/probe/points/clock_points.h), and the C library's
 *    syscall() function for direct clock syscalls (with either
 *    mechanism). The attach cookie says which read it is (CP_COOKIE);
 *  - on_vdso_entry (the breakpoint mechanism): a per-thread hardware
 *    execute breakpoint on each vDSO clock entry, the one place every read
 *    passes through, on hosts where such breakpoints fire;
 *  - on_boundary_*: the request boundary (a uprobe or a syscall) closes the
 *    thread's current request;
 *  - on_dl_change: the dynamic linker's debugger hook, so user space
 *    probes libraries loaded after attach.
 * The path of a vDSO read (vdso, or a syscall the vDSO falls back to)
 * follows from the clock id, by the vDSO's own rule (cp_vdso_clock_path in clockreads.h).
 * Every program first counts clockprof's own start-up self-test calls
 * (selftest_tgid): a mechanism proves it fires before a run is trusted.
 * Configuration is set by user space before load (const volatile, at the
 * top), then the maps and the helpers every hook shares (more in
 * helpers.bpf.h); the hooks come by family from the headers included at
 * the end: one object, so one skeleton and one set of maps. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "clockreads.h"
#include "helpers.bpf.h"

/* ---- Configuration: set by user space before load (lib/probe/session/session.c) */

/* Pids are numbers in clockprof's pid namespace: its /proc/self/ns/pid
 * device and inode, 0 when it is the host's (lib/probe/target/include/pid_namespace.h). */
const volatile __u64 pidns_dev, pidns_ino;
const volatile __u32 target_tgid;
/* clockprof's time namespace's boottime offset (/proc/self/timens_offsets):
 * a process's start time as clockprof reads it in /proc/PID/stat is its
 * start_boottime shifted by it, and both sides compare that one figure. */
const volatile __s64 boottime_offset_ns;
/* Follow the processes the target forks, and theirs (run's default): each
 * is counted as the target is, in its own copy of the target's image.
 * follow_procs: the procs map is in use (forks followed, or processes
 * clockprof was given besides the target: members). */
const volatile bool follow_forks, follow_procs;
/* clockprof itself: hits from it are the self-test's, counted apart. */
const volatile __u32 selftest_tgid;
const volatile __u64 vdso_entry_addr[CP_ENTRY_MAX];
/* The clocksource can be read from user space (tsc, kvm-clock, ...): the
 * vDSO serves high-resolution clocks itself instead of falling back. */
const volatile bool vdso_hres = true;
/* --stacks: record each read's whole user stack. */
const volatile bool capture_stacks;
/* The syscall that ends a request (syscall:NAME), -1: none. */
const volatile __s32 boundary_syscall = -1;
/* The func: boundary is closed inside the target (the vDSO patch): the
 * followed processes' requests are in their tables' request blocks. */
const volatile bool boundary_in_target;
/* syscall:NAME closed in the target, at the C library's wrapper(s) for it
 * (boundary_in_target too): on_boundary_syscall checks the wrappers
 * against the kernel's syscalls (wrapper_check) instead of closing. */
const volatile bool boundary_wrapped;
/* The vDSO patch counts in the target: its tables are summed here at
 * exits and execs. Without it, that code is left out by the verifier
 * (~3,700 instructions of the other mechanisms' every start-up). */
const volatile bool patch_tables;
/* --anatomy with a boundary that traps: its requests recorded as they
 * happen (anatomy_hooks.bpf.h); else that code is left out. */
const volatile bool anatomy;
/* The kernel traces sched_prepare_exec (Linux 6.10+): the target's table
 * is summed there before an exec (on_target_exit, attached there too),
 * and on_clock_func leaves that code out (~3,700 instructions of the
 * verifier's, ~4 ms of every patch start-up here). Else it is summed at
 * the C library's execve. */
const volatile bool exec_traced;
/* The clock syscalls' numbers. User space sets them from <sys/syscall.h>,
 * the one place they are defined: -1 matches no syscall. */
const volatile __s32 sys_clock_gettime = -1, sys_gettimeofday = -1, sys_time = -1;

/* ---- State shared with user space while attached ----------------------- */

/* enum cp_phase, moved along by user space. */
__u32 phase;
/* The vDSO patch's counter table in the target (0: reads are seen here,
 * not counted in the target): set by user space once it is mapped. */
__u64 patch_table;
/* The target's table's window (CP_PATCH_WINDOW_*), set by user space. */
__u64 patch_window;
/* The next free call-site id (site_ids). */
__u32 next_site_id;
/* Hits of clockprof's own start-up self-test. */
__u64 selftest_hits;
/* boundary_wrapped: what the check found (clockreads.h). */
struct cp_wrapper_check wrapper_check;
/* The totals element (CP_TOTALS_*) on_boundary_syscall counts requests
 * in: CP_TOTALS_CHECKED while the wrapper is checked (set as the program
 * is loaded), CP_TOTALS_WINDOW once it fell back. An index rather than a
 * branch: the verifier walks one close, not one for each. */
__u32 requests_checked;

/* Set when the target exec()s: the new image is not the one probed (other
 * addresses, perhaps other files). 1: nothing is counted from then on,
 * and user space warns; 2: the target is followed into its new image as
 * a process of procs (held at its exec, as a followed one is), and its
 * old image's counts are the target's own. */
__u32 target_execed;
__u32 target_exit_summed; /* the target's table summed at its exit */
__u32 patch_pass_busy;	  /* a pass over the target's table is under way */
/* Processes the target started (fork, or clone without CLONE_THREAD)
 * that are not counted (not following, or the procs map was full); and
 * followed ones that exec()ed another program. User space says so. */
__u32 target_forks;
__u32 procs_execed;
/* ... of which traced by another process at their exec (not held). */
__u32 procs_traced;
/* Hold a followed process that execs at its new image's first
 * instruction, for user space to patch that image (on_target_exec): set
 * by user space once it reads exec_events (before the clock window opens,
 * so that an exec as it opens is held too); cleared as the window
 * closes. */
__u32 hold_execs;

/* ---- How the program counts --------------------------------------------
 * Counts that every read adds to (totals, dist) are per-CPU arrays, summed
 * by user space. Their adds are atomic all the same (cp_add, raise_max): a
 * program on a uprobe may be preempted on a preemptible kernel, and another
 * thread's read then runs it on the same CPU. Five counters are shared by
 * all CPUs and added atomically instead: a stack's count (stacks is keyed
 * by the whole stack; per-CPU values would multiply its memory by the CPUs
 * for a count user space reads once), a call site's counts (a per-CPU
 * array of CP_MAX_SITES entries is CP_MAX_SITES allocations, ~5 ms before
 * the window can open), the next call-site id (once per new site), the
 * self-test's hits (clockprof's own calls) and the processes the target
 * started (once per fork).
 * Their cost stays small against a probe hit: an atomic add on one shared
 * counter measured 6-8 ns alone and 15-21 ns with two CPUs contending for
 * it, against 1-2 ns for a plain per-CPU add (make bench, shared_counter), on a
 * 2-CPU VM where one uprobe hit cost 17-30 us (run.json's
 * probe.cost_ns_per_hit): under 0.2% of a hit. Making the per-CPU adds
 * atomic too changed the cost per hit by less than 0.2%. */

#define CLOCK_REALTIME_ID 0

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2); /* CP_TOTALS_WINDOW, CP_TOTALS_CHECKED */
	__type(key, __u32);
	__type(value, struct cp_totals);
} totals SEC(".maps");

/* Per-thread state as task storage: nothing to preallocate at start-up (an
 * LRU hash of 32,768 threads took ~5 ms to create), no limit on threads,
 * and a thread's state goes with it. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cp_thread);
} threads SEC(".maps");

/* Return address -> how to step out of the clock wrapper holding it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct cp_unwind_rule);
} unwind_rules SEC(".maps");

/* With --stacks, the rules of every function: user space builds them while
 * the window opens and runs (the slot is empty until then, and reads'
 * stacks are copied meanwhile: copy_stack), makes each table a map of its own, sized
 * to its rules, and puts it in slot 0 whole (a dlopen brings a new one).
 * One map sized for the largest table took longer to create and fill than
 * building the table (2M entries, ~40 ms of a C++ target's start-up); a
 * swap costs an RCU grace period instead (the kernel waits for programs
 * using the old table), which is why the wrappers' few rules, which the
 * call-site walk needs from the first read, stay in unwind_rules. The
 * template's max_entries does not bind the tables: hash maps of any size
 * fit. */
struct stack_unwind_table {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	/* sizes, not types: clang describes an inner map's value type only
	 * as a declaration, which libbpf cannot size */
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct cp_unwind_rule));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct stack_unwind_table);
} stack_unwind_rules SEC(".maps");

/* --stacks: copies of the stacks of reads seen before every function's
 * rules are in place (see struct cp_stack_copy); user space sizes it. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} stack_copies SEC(".maps");

/* The clock-wrapper rule for return address pc (the call-site walk);
 * NULL: pc is not inside a wrapper. With or without --stacks the wrappers'
 * rules are in unwind_rules before the window opens. */
static __always_inline struct cp_unwind_rule *wrapper_rule(__u64 pc)
{
	return bpf_map_lookup_elem(&unwind_rules, &pc);
}

/* --stacks: the table of every function's rules, NULL until user space has
 * built it and put it in place (some ms into the window). */
static __always_inline void *stack_rules(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stack_unwind_rules, &zero);
}

/* Call site -> a small id; counts per id per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_SITES);
	__type(key, struct cp_site_key);
	__type(value, __u32);
} site_ids SEC(".maps");

/* Shared by every CPU (see "How the program counts"): a per-CPU array
 * allocates each of its CP_MAX_SITES entries apart, ~5 ms at start-up. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CP_MAX_SITES);
	__type(key, __u32);
	__type(value, struct cp_site_counts);
} site_counts SEC(".maps");

/* Dynamic-linker events user space has not seen. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} dl_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, CP_DIST_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u32);
} dist_events SEC(".maps");

/* tid -> its slot in dist_events (one counter per thread, its own). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_DIST_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u32);
} dist_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_dist);
} dist SEC(".maps");

/* The stack being walked on this CPU, before it is counted (busy:
 * take_scratch). */
struct walk_scratch {
	__u32 busy;
	__u32 pad;
	struct cp_stack_key k;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_scratch);
} stack_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_STACKS);
	__type(key, struct cp_stack_key);
	__type(value, __u64);
} stacks SEC(".maps");

/* The processes followed besides the target (struct cp_proc); allocated
 * on insert where the kernel can (session.c): a fork storm costs what it
 * forks. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct cp_proc);
} procs SEC(".maps");

/* Followed processes held at their exec (host tgids), for user space to
 * patch their new image and let go. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} exec_events SEC(".maps");

/* When the process whose leader is task started, as its procs element
 * keeps it (cp_proc.start_ticks). */
static __always_inline __u64 start_ticks_of(struct task_struct *leader)
{
	return (BPF_CORE_READ(leader, start_boottime) + boottime_offset_ns) / CP_NS_PER_TICK;
}

/* The current process's element of procs when it is followed (and runs
 * the target's image still), else NULL. An element whose process exited
 * is not one that has since been given its pid. */
static __always_inline struct cp_proc *followed_proc(void)
{
	__u32 host_tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task;
	struct cp_proc *p;

	if (!follow_procs || !(p = bpf_map_lookup_elem(&procs, &host_tgid)))
		return NULL;
	task = bpf_get_current_task_btf();
	/* read as plain memory: a pointer loaded from the trusted task costs
	 * the verifier two lookups by name in the whole kernel BTF
	 * (on_target_exit's live_threads) */
	if (p->start_ticks != start_ticks_of(BPF_CORE_READ(task, group_leader)))
		return NULL;
	return p->flags & CP_PROC_EXECED ? NULL : p;
}

/* The vDSO patch table the current process counts in: the target's, or
 * a followed process's (p) own; 0: none (always, with another mechanism:
 * the verifier then leaves out the code that reads one). */
static __always_inline __u64 table_of(const struct cp_proc *p)
{
	if (!patch_tables)
		return 0;
	return p ? p->table : patch_table;
}

/* The tid of id (current_pid_tgid) when the current task is counted: the
 * target's, or a followed process's; else 0. */
static __always_inline __u32 counted_tid(__u64 id)
{
	if ((id >> 32) == target_tgid && !target_execed)
		return (__u32)id;
	return followed_proc() ? (__u32)id : 0;
}

static __always_inline struct cp_totals *get_totals(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&totals, &zero);
}

/* The state of the current thread. */
static __always_inline struct cp_thread *get_thread(void)
{
	return thread_lookup(&threads);
}

/* The current task's tgid << 32 | tid as user space numbers them. */
static __always_inline __u64 current_pid_tgid(void)
{
	return current_pid_tgid_in(pidns_dev, pidns_ino);
}

/* Returns the tid when the current task is counted (the target's, or a
 * followed process's), else 0. */
static __always_inline __u32 target_tid(void)
{
	return counted_tid(current_pid_tgid());
}

static __always_inline int clock_slot(__s64 clock_id)
{
	return clock_id >= 0 && clock_id < CP_CLOCK_OTHER ? (int)clock_id : CP_CLOCK_OTHER;
}

static __always_inline void count_read(struct cp_read_counts *c, int entry, int path, int clock)
{
	cp_add(&c->reads, 1);
	if (entry >= 0 && entry < CP_ENTRY_MAX)
		cp_add(&c->by_entry[entry], 1);
	if (path >= 0 && path < CP_PATH_MAX)
		cp_add(&c->by_path[path], 1);
	if (clock >= 0 && clock < CP_CLOCK_SLOTS)
		cp_add(&c->by_clock[clock], 1);
}

/* The hooks, by family, in the order they build on each other. */
#include "anatomy_hooks.bpf.h"
#include "read_record.bpf.h"
#include "patch_reads.bpf.h"
#include "read_hooks.bpf.h"
#include "lifecycle_hooks.bpf.h"
#include "boundary_hooks.bpf.h"
