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
 * top); helpers shared by the hooks are in helpers.bpf.h. */
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
/* The clock syscalls' numbers. User space sets them from <sys/syscall.h>,
 * the one place they are defined: -1 matches no syscall. */
const volatile __s32 sys_clock_gettime = -1, sys_gettimeofday = -1, sys_time = -1;

/* ---- State shared with user space while attached ----------------------- */

/* enum cp_phase, moved along by user space. */
__u32 phase;
/* The vDSO patch's counter table in the target (0: reads are seen here,
 * not counted in the target): set by user space once it is mapped. */
__u64 patch_table;
/* The next free call-site id (site_ids). */
__u32 next_site_id;
/* Hits of clockprof's own start-up self-test. */
__u64 selftest_hits;
/* boundary_wrapped: what the check found (clockreads.h). */
struct cp_wrapper_check wrapper_check;

/* Set when the target exec()s: the new image is not the one probed (other
 * addresses, perhaps other files). 1: nothing is counted from then on,
 * and user space warns; 2: the target is followed into its new image as
 * a process of procs (held at its exec, as a followed one is), and its
 * old image's counts are the target's own. */
__u32 target_execed;
__u32 target_exit_summed;	/* the target's table summed at its exit */
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
	__uint(max_entries, 1);
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
	if (p->start_ticks != start_ticks_of(task->group_leader))
		return NULL;
	return p->flags & CP_PROC_EXECED ? NULL : p;
}

/* The vDSO patch table the current process counts in: the target's, or
 * a followed process's (p) own; 0: none. */
static __always_inline __u64 table_of(const struct cp_proc *p)
{
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
	return clock_id >= 0 && clock_id < CP_CLOCK_OTHER ? (int)clock_id
							  : CP_CLOCK_OTHER;
}

static __always_inline void count_read(struct cp_read_counts *c, int entry,
				       int path, int clock)
{
	cp_add(&c->reads, 1);
	if (entry >= 0 && entry < CP_ENTRY_MAX)
		cp_add(&c->by_entry[entry], 1);
	if (path >= 0 && path < CP_PATH_MAX)
		cp_add(&c->by_path[path], 1);
	if (clock >= 0 && clock < CP_CLOCK_SLOTS)
		cp_add(&c->by_clock[clock], 1);
}

/* One frame out by a CFI rule: the caller's pc, sp and bp from this
 * frame's. 0, or -1 when the stack cannot be read. */
static __always_inline int cfi_step(const struct cp_unwind_rule *r, __u64 *pc,
				    __u64 *sp, __u64 *bp)
{
	__u64 cfa = (r->base_reg == CP_UNWIND_BP ? *bp : *sp) + (__s64)r->cfa_offset;

	if (r->bp_offset &&
	    bpf_probe_read_user(bp, sizeof(*bp), (void *)(cfa + (__s64)r->bp_offset)))
		return -1;
	if (bpf_probe_read_user(pc, sizeof(*pc), (void *)(cfa - 8)))
		return -1;
	*sp = cfa;
	return 0;
}

/* Where walk_to_call_site is, between two hops. */
struct walk {
	__u64 pc, sp, bp;
	__u16 via;
	bool lost;	/* the stack could not be read */
};

/* One hop out of a wrapper, as bpf_loop's callback: the verifier checks it
 * once instead of once per hop (a loop of CP_UNWIND_MAX_HOPS took 4 of the
 * program's 6 ms of verification, at every start-up). 1 ends the walk. */
static long walk_hop(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	struct cp_unwind_rule *r = wrapper_rule(w->pc);

	if (!r || r->via == CP_VIA_NONE)
		return 1;
	if (cfi_step(r, &w->pc, &w->sp, &w->bp)) {
		w->lost = true;
		return 1;
	}
	w->via = r->via;
	return 0;
}

/* Steps out of clock wrappers (see clockreads.h): from the return address
 * pc with the stack and frame pointers sp, bp, to the first return address
 * that is not inside a wrapper: the call site. 0 when the stack could not
 * be read. *via is the last wrapper crossed. */
static __always_inline __u64 walk_to_call_site(__u64 pc, __u64 sp, __u64 bp,
						__u16 *via)
{
	struct walk w = { .pc = pc, .sp = sp, .bp = bp, .via = *via };

	bpf_loop(CP_UNWIND_MAX_HOPS, walk_hop, &w, 0);
	*via = w.via;
	return w.lost ? 0 : w.pc;
}

/* Where a read returns to, seen at the probed instruction: the return
 * address pc and the stack and frame pointers of the frame it returns to.
 * 0 when the stack cannot be read. */
static __always_inline int read_return(int mode, __u64 sp, __u64 bp, __u64 *pc,
				       __u64 *ret_sp, __u64 *ret_bp)
{
	__u64 fp[2];

	if (mode == CP_SITE_FRAME) {
		/* inside a frame-pointer function that may be on another stack:
		 * its caller's frame is found from rbp alone */
		if (bpf_probe_read_user(fp, sizeof(fp), (void *)bp))
			return -1;
		*pc = fp[1];
		*ret_sp = bp + 16;
		*ret_bp = fp[0];
		return 0;
	}
	if (bpf_probe_read_user(pc, sizeof(*pc), (void *)sp))
		return -1;
	*ret_sp = sp + 8;
	*ret_bp = bp;
	return 0;
}

/* This CPU's scratch in map, a per-CPU array whose value starts with its
 * busy flag (scratch_take), taken; NULL when a preempted run of the
 * program holds it: the read goes without a stack, counted. */
static __always_inline void *take_scratch(void *map)
{
	__u32 zero = 0, *busy = bpf_map_lookup_elem(map, &zero);
	struct cp_totals *tot;

	if (!busy)
		return NULL;
	if (scratch_take(busy))
		return busy;
	if ((tot = get_totals()))
		cp_add(&tot->stacks_preempted, 1);
	return NULL;
}

/* The stack copy being made on this CPU, before it goes to the buffer
 * (busy: take_scratch). */
struct copy_scratch {
	__u32 busy;
	struct cp_stack_copy c;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_scratch);
} stack_copy_scratch SEC(".maps");

/* Whether rbp looks like a frame that piece 0 (from sp) did not take: the
 * saved rbp a little above it and a return address beside it. Code built
 * without frame pointers keeps anything in rbp, often a heap pointer: no
 * second piece for that. */
static __always_inline bool frame_elsewhere(__u64 sp, __u32 len, __u64 bp)
{
	__u64 fp[2];

	if ((bp >= sp && bp < sp + len) || (bp & 7) ||
	    bpf_probe_read_user(fp, sizeof(fp), (void *)bp))
		return false;
	return fp[0] > bp && fp[0] - bp < (1 << 20) && fp[1];
}

/* Copies up to size bytes (whole pages) from `from`: to the end of its
 * page, then a page at a time, stopping at the first that cannot be read,
 * so that a copy reaches the end of the stack's mapping. Returns the bytes
 * copied. */
static __always_inline __u32 copy_pages(__u8 *dst, __u64 from, __u32 size)
{
	__u32 len = 0, chunk = 4096 - (from & 4095);

	for (__u32 i = 0; i <= size / 4096 && len < size; i++) {
		if (chunk > size - len)
			chunk = size - len;
		if (bpf_probe_read_user(dst + len, chunk, (void *)(from + len)))
			break;
		len += chunk;
		chunk = 4096;
	}
	return len;
}

/* Before the rules are in place: the top of the stack, for user space to
 * walk (lib/probe/window/late_stacks.c). A frame-pointer site's frames start at
 * rbp, which may be on another stack than rsp. */
static __always_inline void copy_stack(__u64 ip, int mode, __u64 sp, __u64 bp)
{
	struct copy_scratch *scratch = take_scratch(&stack_copy_scratch);
	struct cp_stack_copy *c;
	struct cp_totals *tot;
	__u32 len, len1 = 0;
	long rc;

	if (!scratch)
		return;
	c = &scratch->c;
	c->ip = ip;
	c->sp = sp;
	c->bp = bp;
	c->mode = (__u32)mode;
	c->base[0] = mode == CP_SITE_FRAME ? bp : sp;
	len = copy_pages(c->bytes, c->base[0], CP_STACK_COPY_BYTES);
	if (len > CP_STACK_COPY_BYTES)	/* never: says so to the verifier */
		len = CP_STACK_COPY_BYTES;
	c->base[1] = bp;
	if (mode != CP_SITE_FRAME && frame_elsewhere(sp, len, bp))
		len1 = copy_pages(c->bytes + len, bp, CP_STACK_COPY_FRAME_BYTES);
	if (len1 > CP_STACK_COPY_FRAME_BYTES)
		len1 = CP_STACK_COPY_FRAME_BYTES;
	c->len[0] = len;
	c->len[1] = len1;
	/* User space is woken once an eighth of the buffer is used (and reads
	 * the rest at the window's end): a wake-up per copy cost the target
	 * more than the copy itself, and woken at half it was too late for a
	 * busy server on two busy CPUs (copies found the buffer full). */
	rc = bpf_ringbuf_output(&stack_copies, c, offsetof(struct cp_stack_copy, bytes) + len + len1,
				bpf_ringbuf_query(&stack_copies, BPF_RB_AVAIL_DATA) >
				bpf_ringbuf_query(&stack_copies, BPF_RB_RING_SIZE) / 8 ?
				BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	scratch_give(&scratch->busy);
	if (rc && (tot = get_totals()))
		cp_add(&tot->stack_copy_drops, 1);
}

/* Where record_stack's walk is, between two frames, and what it walks
 * by and into (looked up once per read, not once per frame). */
struct stack_walk {
	__u64 pc, sp, bp;
	struct cp_stack_key *k;
	void *table;
};

/* Frame n + 1 of a stack, as bpf_loop's callback (verified once, not once
 * per frame: the unrolled walk made --stacks' program take ~10 ms longer
 * to load, at every start-up): its return address, then one step out by
 * the function's rule or, where there is none, the frame-pointer chain.
 * 1 ends the walk. */
static long stack_hop(__u32 n, void *ctx)
{
	struct stack_walk *w = ctx;
	__u32 i = n + 1;
	struct cp_unwind_rule *r;
	__u64 fp[2];

	if (!w->pc || i >= CP_STACK_DEPTH)
		return 1;
	w->k->pc[i] = w->pc;
	r = bpf_map_lookup_elem(w->table, &w->pc);
	if (r)
		return cfi_step(r, &w->pc, &w->sp, &w->bp) ? 1 : 0;
	if (!w->bp || bpf_probe_read_user(fp, sizeof(fp), (void *)w->bp) || fp[0] <= w->bp)
		return 1;
	w->pc = fp[1];
	w->sp = w->bp + 16;
	w->bp = fp[0];
	return 0;
}

/* Records the whole stack of a read seen at ip: ip, then one return
 * address per frame from the return address read_return found, stepping by
 * every function's CFI rules and by the frame-pointer chain where there is
 * no rule. lib/symbols/unwind_table.c (cp_unwind_stack) walks a copy the
 * same way. */
static __always_inline void record_stack(__u64 ip, int mode, __u64 sp, __u64 bp)
{
	struct stack_walk w = { .table = stack_rules() };
	struct walk_scratch *scratch;
	struct cp_totals *tot;
	int full;

	if (!w.table) {
		copy_stack(ip, mode, sp, bp);
		return;
	}
	scratch = take_scratch(&stack_scratch);
	if (!scratch)
		return;
	w.k = &scratch->k;
	__builtin_memset(w.k, 0, sizeof(*w.k));
	w.k->pc[0] = ip;
	if (read_return(mode, sp, bp, &w.pc, &w.sp, &w.bp) == 0)
		bpf_loop(CP_STACK_DEPTH - 1, stack_hop, &w, 0);
	full = map_count_one(&stacks, w.k);
	scratch_give(&scratch->busy);
	if (full && (tot = get_totals()))
		cp_add(&tot->stack_drops, 1);
}

/* The call site of a read: from its return address (read_return), out
 * of the clock wrappers. */
static __always_inline void find_site(struct cp_site_key *key, int mode, __u64 sp,
				      __u64 bp, int entry, int direct)
{
	__u64 ret = 0;

	__builtin_memset(key, 0, sizeof(*key));
	key->via = CP_VIA_NONE;
	key->entry = (__u8)entry;
	key->direct_syscall = (__u8)direct;
	if (read_return(mode, sp, bp, &ret, &sp, &bp) == 0)
		key->pc = walk_to_call_site(ret, sp, bp, &key->via);
}

static __always_inline __u32 site_id(const struct cp_site_key *key)
{
	__u32 *id = bpf_map_lookup_elem(&site_ids, key);
	__u32 fresh;

	if (id)
		return *id;
	fresh = __sync_fetch_and_add(&next_site_id, 1);
	if (fresh >= CP_MAX_SITES)
		return CP_MAX_SITES;
	/* A racing CPU may insert the key first: its id wins, ours is unused. */
	bpf_map_update_elem(&site_ids, key, &fresh, BPF_NOEXIST);
	id = bpf_map_lookup_elem(&site_ids, key);
	return id ? *id : CP_MAX_SITES;
}

/* Counts the read at its site now, and remembers it in the thread's
 * request, to be credited to the site's in-request count if the request
 * completes. */
static __always_inline void record_site(struct cp_thread *t, struct cp_totals *tot,
					const struct cp_site_key *key)
{
	__u32 id = site_id(key), n;
	struct cp_site_counts *c;

	if (id >= CP_MAX_SITES) {
		cp_add(&tot->site_unnamed, 1);
		return;
	}
	c = bpf_map_lookup_elem(&site_counts, &id);
	if (c)
		__sync_fetch_and_add(&c->all, 1);
	if (!t)
		return;
	n = t->npending;
	for (__u32 i = 0; i < CP_PENDING_SITES; i++) {
		if (i >= n)
			break;
		if (t->pending_site[i] == id) {
			t->pending_count[i]++;
			return;
		}
	}
	if (n < CP_PENDING_SITES) {
		t->pending_site[n] = id;
		t->pending_count[n] = 1;
		t->npending = n + 1;
	} else {
		t->pending_overflow++;
	}
}

static __always_inline void record_read(int entry, int path, int clock,
					const struct cp_site_key *site)
{
	struct cp_totals *tot = get_totals();
	struct cp_thread *t = get_thread();

	if (!tot)
		return;
	cp_add(&tot->trap_hits, 1);	/* a counted read is a hit (in the clock window) */
	count_read(&tot->all, entry, path, clock);
	if (t)
		count_read(&t->cur, entry, path, clock);
	record_site(t, tot, site);
}

/* A request completed: its reads count as in-request at their sites. */
static __always_inline void credit_sites(struct cp_thread *t, struct cp_totals *tot)
{
	__u32 n = t->npending;

	for (__u32 i = 0; i < CP_PENDING_SITES; i++) {
		__u32 id;
		struct cp_site_counts *c;

		if (i >= n)
			break;
		id = t->pending_site[i];
		c = bpf_map_lookup_elem(&site_counts, &id);
		if (c)
			__sync_fetch_and_add(&c->in_requests, t->pending_count[i]);
	}
	if (t->pending_overflow)
		cp_add(&tot->site_uncredited, t->pending_overflow);
}

static __always_inline __u32 dist_bucket(__u64 v)
{
	__u32 e;

	if (v < CP_DIST_SUB)
		return (__u32)v;
	e = log2_floor(v);	/* 2^e <= v < 2^(e+1), e >= 3 */
	return e * CP_DIST_SUB + (__u32)((v >> (e - 3)) & (CP_DIST_SUB - 1));
}

/* The thread's counter now against its previous boundary. */
static __always_inline void record_dist(__u32 tid, struct cp_thread *t)
{
	struct bpf_perf_event_value v;
	__u32 *slot = bpf_map_lookup_elem(&dist_slots, &tid), zero = 0, b;
	struct cp_dist *d;
	__u64 delta;

	if (!slot || bpf_perf_event_read_value(&dist_events, *slot, &v, sizeof(v)))
		return;
	if (t->dist_valid && v.counter >= t->dist_last &&
	    (d = bpf_map_lookup_elem(&dist, &zero))) {
		delta = v.counter - t->dist_last;
		b = dist_bucket(delta);
		if (b < CP_DIST_BUCKETS)
			cp_add(&d->bucket[b], 1);
		cp_add(&d->count, 1);
		cp_add(&d->sum, delta);
		raise_max(&d->max, delta);
	}
	t->dist_last = v.counter;
	t->dist_valid = 1;
}

/* The path a read through one of the vDSO entries takes (clockreads.h). */
static __always_inline int entry_path(int entry, __s64 clock_id)
{
	return cp_vdso_entry_path(entry, clock_id, vdso_hres);
}

#include "patch_reads.bpf.h"

static __always_inline void close_request(__u32 tid)
{
	struct cp_totals *tot = get_totals();
	struct cp_thread *t = get_thread(), *q;
	struct patch_look pl = { .slot = CP_PATCH_SLOTS };
	struct cp_proc *p = followed_proc();
	__u64 reads, key = 0;
	bool whole = true;

	if (!tot || !t)
		return;
	if (phase == CP_PHASE_COUNTERS) {
		cp_add(&tot->counter_boundaries, 1);
		if (t->boundary_phase != CP_PHASE_COUNTERS)
			t->dist_valid = 0;
		record_dist(tid, t);
	}
	if (phase == CP_PHASE_CLOCK)
		cp_add(&tot->boundary_hits, 1);
	if (table_of(p) && phase == CP_PHASE_CLOCK)
		key = patch_key();
	/* q: where this boundary's request is kept (the thread's, or the
	 * goroutine's); t stays the thread's for the counter window */
	if (!(q = request_state(t, key)))
		return;
	if (table_of(p) && phase == CP_PHASE_CLOCK) {
		bool wiped = p && !(p->flags & CP_PROC_MEMBER);

		whole = add_patch_reads(q, key, &pl, table_of(p), wiped);
		if (!add_patch_sites(q, tot, &pl, q->boundary_phase == CP_PHASE_CLOCK && whole,
				     table_of(p), wiped)) {
			q->patch_valid = 0;
			whole = false;
		}
	}
	if (phase == CP_PHASE_CLOCK && q->boundary_phase == CP_PHASE_CLOCK && whole) {
		cp_read_counts_add(&tot->in_requests, &q->cur);
		reads = q->cur.reads;
		cp_add(&tot->requests, 1);
		if (p) {
			__sync_fetch_and_add(&p->requests, 1);
			__sync_fetch_and_add(&p->in_requests, reads);
		}
		credit_sites(q, tot);
		cp_add(&tot->hist[reads < CP_HIST_SLOTS - 1 ? reads : CP_HIST_SLOTS - 1], 1);
		raise_max(&tot->max_reads_per_request, reads);
	}
	q->boundary_phase = t->boundary_phase = phase;
	__builtin_memset(&q->cur, 0, sizeof(q->cur));
	q->npending = 0;
	q->pending_overflow = 0;
}

static __always_inline void count_trap(void)
{
	struct cp_totals *tot = get_totals();

	if (tot && phase == CP_PHASE_CLOCK)
		cp_add(&tot->trap_hits, 1);
}

/* The tid of a target thread in the clock window, else 0: the counting
 * programs do nothing outside it. A hit of clockprof's own self-test is
 * counted apart (and is never the target's). */
static __always_inline __u32 counting_tid(void)
{
	__u64 id = current_pid_tgid();

	if (selftest_tgid && id >> 32 == selftest_tgid) {
		__sync_fetch_and_add(&selftest_hits, 1);
		return 0;
	}
	return phase == CP_PHASE_CLOCK ? counted_tid(id) : 0;
}

/* One clock read seen at ip by any mechanism: what it is, and where its
 * return address is (mode). A struct: a BPF function takes at most five
 * arguments. */
struct read_seen {
	__u64 ip, sp, bp;
	__s64 clock_id;
	__s32 entry, path, mode, direct;
};

/* A read counted, its call site and (--stacks) its stack recorded. A
 * global function: the verifier checks it once, for any read, where an
 * inlined one was checked again for every state a program reached it in,
 * its walks' bpf_loop callbacks included (every branch that tells reads
 * apart leaves one). on_clock_func's checking went from 3,674 instructions
 * to 1,279 without --stacks and from 8,941 to 3,566 with: from 4.4 to
 * 1.6-1.9 ms and from 10.3 to 4.3-5.3 ms of every start-up here. */
__noinline int record_read_seen(const struct read_seen *r)
{
	struct cp_site_key site;

	if (!r)
		return 0;
	find_site(&site, r->mode, r->sp, r->bp, r->entry, r->direct);
	record_read(r->entry, r->path, clock_slot(r->clock_id), &site);
	if (capture_stacks)
		record_stack(r->ip, r->mode, r->sp, r->bp);
	return 0;
}

/* Direct clock syscalls: syscall(SYS_clock_gettime, ...) through the C
 * library's syscall() function (a uprobe for the target only, with either
 * mechanism). The kernel's syscall tracepoints would see raw syscall
 * instructions too, but attaching to them puts every syscall of every
 * process on the host on the slow path (measured here: getppid() 115 ns ->
 * 197 ns), and this kernel has neither kprobes nor fentry for the syscall
 * functions themselves. The entry a syscall number reads through, with
 * its clock id; -1 for any other syscall. */
static __always_inline int syscall_entry(struct pt_regs *ctx, __s64 *clock_id)
{
	long nr = PT_REGS_PARM1(ctx);

	*clock_id = CLOCK_REALTIME_ID;
	if (nr == sys_clock_gettime) {
		*clock_id = (__s32)PT_REGS_PARM2(ctx);
		return CP_ENTRY_CLOCK_GETTIME;
	}
	if (nr == sys_gettimeofday)
		return CP_ENTRY_GETTIMEOFDAY;
	if (nr == sys_time)
		return CP_ENTRY_TIME;
	return -1;
}

/* The uprobe mechanism: the cookie says which read this place is. */
SEC("uprobe")
int on_clock_func(struct pt_regs *ctx)
{
	__u32 tid = counting_tid();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	int entry = CP_COOKIE_ENTRY(cookie), clock = CP_COOKIE_CLOCK(cookie);
	int mode = CP_COOKIE_SITE(cookie), path, direct = 0;
	struct read_seen read;
	__s64 clock_id;

	if (!tid)
		return 0;
	if (entry == CP_ENTRY_EXEC_FUNC) {
		count_trap();
		if (patch_table)
			sum_patch_table();
		return 0;
	}
	if (entry == CP_ENTRY_SYSCALL_FUNC) {
		entry = syscall_entry(ctx, &clock_id);
		if (entry < 0) {
			count_trap();	/* another syscall: a hit that reads no clock */
			return 0;
		}
		path = CP_PATH_SYSCALL;
		mode = CP_SITE_STACK_TOP;
		direct = 1;
	} else {
		if (entry >= CP_ENTRY_MAX)
			return 0;
		clock_id = clock == CP_CLOCK_FROM_ARG ? (__s32)PT_REGS_PARM1(ctx) : clock;
		path = entry_path(entry, clock_id);
	}
	read = (struct read_seen){ .ip = PT_REGS_IP(ctx), .sp = PT_REGS_SP(ctx), .bp = PT_REGS_FP(ctx),
				   .clock_id = clock_id, .entry = entry, .path = path, .mode = mode,
				   .direct = direct };
	record_read_seen(&read);
	return 0;
}

/* The breakpoint mechanism: which entry follows from the address. */
SEC("perf_event")
int on_vdso_entry(struct bpf_perf_event_data *ctx)
{
	__u32 tid = counting_tid();
	__u64 ip = ctx->regs.ip;
	struct read_seen read;
	__s64 clock_id = CLOCK_REALTIME_ID;
	int entry;

	if (!tid)
		return 0;
	if (ip == vdso_entry_addr[CP_ENTRY_CLOCK_GETTIME]) {
		entry = CP_ENTRY_CLOCK_GETTIME;
		clock_id = (__s32)ctx->regs.di;
	} else if (ip == vdso_entry_addr[CP_ENTRY_GETTIMEOFDAY]) {
		entry = CP_ENTRY_GETTIMEOFDAY;
	} else if (ip == vdso_entry_addr[CP_ENTRY_TIME]) {
		entry = CP_ENTRY_TIME;
	} else {
		count_trap();	/* a guard: costs like a hit, counts nothing */
		return 0;
	}
	read = (struct read_seen){ .ip = ip, .sp = ctx->regs.sp, .bp = ctx->regs.bp,
				   .clock_id = clock_id, .entry = entry,
				   .path = entry_path(entry, clock_id), .mode = CP_SITE_STACK_TOP };
	record_read_seen(&read);
	return 0;
}

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
SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_target_exit)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct cp_proc *p;
	bool last;

	/* After an exec the memory is the new program's: the sums were taken
	 * at the exec (on_clock_func). Once: every thread that exits after
	 * the last one has counted itself out sees no thread live, and a Go
	 * program's threads exit at once on every CPU; two passes at once
	 * each zeroed the other's request sums, which user space then found
	 * of another pass than the one that ended last: 0 requests said. */
	if (patch_table && !target_execed && (__u32)(current_pid_tgid() >> 32) == target_tgid) {
		if (task->signal->live.counter == 0 && task->mm &&
		    !__sync_lock_test_and_set(&target_exit_summed, 1))
			sum_patch_table();
		return 0;
	}
	if (!(p = followed_proc()))
		return 0;
	last = task->signal->live.counter == 0;
	/* In any phase: a process that exits as the window closes (its end
	 * may come with the same Ctrl-C) is read from these sums. Its vDSO
	 * counts no more once switched back at the clock window's end. */
	if (p->table && task->mm)
		sum_exiting_thread(p, last);
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

/* The target or a followed process is about to exec, at the point of no
 * return: its table goes with its old image, so it is summed now (a
 * followed one's thread as at an exit: the other threads exit on their
 * own before the exec), and a followed one is marked in its exec until
 * on_target_exec. */
SEC("raw_tp/sched_prepare_exec")
int BPF_PROG(on_target_prepare_exec)
{
	struct cp_proc *p;

	if ((__u32)(current_pid_tgid() >> 32) == target_tgid && !target_execed) {
		if (patch_table)
			sum_patch_table();	/* as at the C library's execve */
	} else if ((p = followed_proc())) {
		if (p->table)
			sum_exiting_thread(p, true);
		__sync_fetch_and_or(&p->flags, CP_PROC_EXECING);
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
	p->table = 0;	/* none until its new image is patched */
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
	c.ppid = tgid_in_ns(task->real_parent);
	c.start_ns = bpf_ktime_get_ns();
	c.start_ticks = start_ticks_of(task->group_leader);
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
	c.start_ticks = start_ticks_of(child);	/* a new process: its own leader */
	parent_proc = followed_proc();
	/* The copy is where its parent's is. A child that shares its
	 * parent's memory (CLONE_VM: vfork, posix_spawn, system()) has no
	 * copy, and its parent's thread pointer until it execs: what it
	 * reads is counted in its parent's slot, as the parent's, and its
	 * exit or exec sums nothing (its exec's new image gets a table). */
	if (BPF_CORE_READ(child, mm) != BPF_CORE_READ(parent, mm))
		c.table = table_of(parent_proc);
	c.flags = parent_proc ? parent_proc->flags & CP_PROC_NO_SITES : 0;
	bpf_get_current_comm(c.comm, sizeof(c.comm));	/* the child's, until it execs */
	if (!follow_forks || bpf_map_update_elem(&procs, &child_tgid, &c, BPF_NOEXIST))
		__sync_fetch_and_add(&target_forks, 1);
	return 0;
}

/* The boundaries the current thread has passed in the target's request
 * block (boundary_close.S) in the block's epoch; false: not known (no
 * key, or no slot to be had). A thread with no slot has passed none. A
 * page of the table that cannot be read was never touched: zeros (a
 * block no boundary wrote; block 0 of a launched command, whose epoch
 * clockprof never moved). */
static __always_inline bool wrapper_hits(__u64 table, bool wiped, __u64 *epoch, __u64 *hits)
{
	__u64 words[CP_PATCH_SLOT_WORDS], slot = 0, head[2] = { 0, 0 }, opens = 0;
	int found = read_patch_slot(table, patch_key(), words, &slot, wiped);

	*hits = 0;
	if (found < 0)
		return false;
	if (bpf_probe_read_user(epoch, sizeof(*epoch), (void *)(table + CP_PATCH_BLOCKS_OFF +
								 CP_PB_EPOCH * 8)))
		*epoch = 0;
	if (found && !bpf_probe_read_user(head, sizeof(head), (void *)(table + CP_PATCH_BLOCKS_OFF +
					  (1 + slot) * CP_PATCH_BLOCK)) &&
	    head[CP_PB_EPOCH] == *epoch + 1 &&
	    !bpf_probe_read_user(&opens, sizeof(opens), (void *)(table + CP_PATCH_BLOCKS_OFF +
					  (1 + slot) * CP_PATCH_BLOCK + CP_PB_OPENS * 8)))
		*hits = cp_pb_passed(head[CP_PB_HITS], opens);
	return true;
}

/* boundary_wrapped: this syscall of the thread's must have come through
 * the wrapper, which passed the boundary just before it: the thread's
 * boundaries are one more than at its last such syscall. A raw syscall
 * (glibc's inline *_nocancel, syscall(2), a restarted call) finds them
 * as they were, a wrapper that made none (or a wrapper calling another)
 * finds two more: the first that does not match makes this program the
 * boundary from then on (fallback_ns), and user space drops what the
 * target closed. The first syscall of a thread (or in a new epoch) sets
 * where it is. */
static __always_inline void check_wrapper(void)
{
	struct cp_proc *p = followed_proc();
	struct cp_thread *t = get_thread();
	__u64 table = table_of(p), epoch = 0, hits;

	if (!t || !table)
		return;
	if (!wrapper_hits(table, p && !(p->flags & CP_PROC_MEMBER), &epoch, &hits)) {
		t->wrap_known = 0;
		return;
	}
	if (t->wrap_known && t->wrap_epoch == epoch && hits == t->wrap_hits + 1)
		cp_add(&wrapper_check.checked, 1);
	else if (t->wrap_known && t->wrap_epoch == epoch) {
		cp_add(&wrapper_check.mismatched, 1);
		if (!wrapper_check.fallback_ns)
			wrapper_check.fallback_ns = bpf_ktime_get_ns();
	}
	t->wrap_known = 1;
	t->wrap_epoch = epoch;
	t->wrap_hits = hits;
}

/* syscall:NAME boundaries. Only loaded when asked for: this tracepoint
 * slows every process's syscalls while attached (see above), which the
 * user accepts by choosing a syscall boundary over a function. With the
 * wrapper closing in the target, only until it is checked (user space
 * detaches it then). */
SEC("tp_btf/sys_enter")
int BPF_PROG(on_boundary_syscall, struct pt_regs *regs, long id)
{
	__u32 tid;

	if (id != boundary_syscall)
		return 0;
	tid = target_tid();
	if (!tid)
		return 0;
	if (boundary_wrapped && !wrapper_check.fallback_ns && phase == CP_PHASE_CLOCK)
		check_wrapper();
	if (!boundary_wrapped || wrapper_check.fallback_ns)
		close_request(tid);
	return 0;
}

SEC("uprobe")
int on_boundary_func(struct pt_regs *ctx)
{
	__u32 tid = target_tid();

	if (!tid)
		return 0;
	count_trap();
	close_request(tid);
	return 0;
}

/* --probe FILE:SYMBOL: the attach cookie is the probe's index. */
SEC("uprobe")
int on_extra_probe(struct pt_regs *ctx)
{
	__u32 tid = counting_tid();
	__u64 idx = bpf_get_attach_cookie(ctx);
	struct cp_totals *tot;
	struct cp_thread *t;

	if (!tid || idx >= CP_MAX_PROBES)
		return 0;
	tot = get_totals();
	t = get_thread();
	if (tot) {
		cp_add(&tot->trap_hits, 1);
		cp_add(&tot->all.probe_calls[idx], 1);
	}
	if (t)
		t->cur.probe_calls[idx]++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
