// SPDX-License-Identifier: GPL-2.0
/* clockreads.bpf.c - counts every clock read of one process, per request.
 *
 * Three ways in, each counted exactly once:
 *  - on_vdso_entry: a per-thread hardware execute breakpoint on each vDSO
 *    clock entry (the vDSO cannot be uprobed, and glibc's gettimeofday/time
 *    are IFUNCs that jump straight into it, so this is the one place every
 *    libc, static, Go or JIT read passes through).
 *    The path (vdso, or a syscall the vDSO falls back to) follows from the
 *    clock id, by the vDSO's own rule (vdso_clock_path);
 *  - on_syscall_func: direct syscall(SYS_clock_gettime, ...) calls;
 *  - on_boundary_*: the request boundary (a uprobe or a syscall) closes the
 *    thread's current request.
 * Configuration is set by user space before load (const volatile). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "clockreads.h"

const volatile __u32 target_tgid;
const volatile __u64 vdso_entry_addr[CP_ENTRY_MAX];
/* The clocksource can be read from user space (tsc, kvm-clock, ...): the
 * vDSO serves high-resolution clocks itself instead of falling back. */
const volatile bool vdso_hres = true;
const volatile __s32 boundary_syscall = -1;
const volatile __s32 sys_clock_gettime = 228, sys_gettimeofday = 96,
		     sys_time = 201;

#define CLOCK_REALTIME_ID 0

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_totals);
} totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct cp_thread);
} threads SEC(".maps");

static __always_inline struct cp_totals *get_totals(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&totals, &zero);
}

static __always_inline struct cp_thread *get_thread(__u32 tid)
{
	struct cp_thread *t = bpf_map_lookup_elem(&threads, &tid);
	struct cp_thread fresh = {};

	if (t)
		return t;
	bpf_map_update_elem(&threads, &tid, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&threads, &tid);
}

/* Returns the tid when the current task belongs to the target, else 0. */
static __always_inline __u32 target_tid(void)
{
	__u64 id = bpf_get_current_pid_tgid();

	return (id >> 32) == target_tgid ? (__u32)id : 0;
}

static __always_inline int clock_slot(__s64 clock_id)
{
	return clock_id >= 0 && clock_id < CP_CLOCK_OTHER ? (int)clock_id
							  : CP_CLOCK_OTHER;
}

/* Which path the vDSO takes for a clock, by its own rule (lib/vdso/
 * gettimeofday.c): coarse clocks never fall back; high-resolution and raw
 * clocks fall back when the clocksource cannot be read from user space;
 * every other clock (CPU-time clocks, alarm clocks, dynamic clocks) is a
 * clock_gettime syscall made from inside the vDSO. Inferring it here saves
 * a syscall hook that would slow the whole host. */
static __always_inline int vdso_clock_path(__s64 clock_id)
{
	switch (clock_id) {
	case 5: /* CLOCK_REALTIME_COARSE */
	case 6: /* CLOCK_MONOTONIC_COARSE */
		return CP_PATH_VDSO;
	case 0: /* CLOCK_REALTIME */
	case 1: /* CLOCK_MONOTONIC */
	case 4: /* CLOCK_MONOTONIC_RAW */
	case 7: /* CLOCK_BOOTTIME */
	case 11: /* CLOCK_TAI */
		return vdso_hres ? CP_PATH_VDSO : CP_PATH_SYSCALL;
	default:
		return CP_PATH_SYSCALL;
	}
}

static __always_inline void count_read(struct cp_read_counts *c, int entry,
				       int path, int clock)
{
	c->reads++;
	if (entry >= 0 && entry < CP_ENTRY_MAX)
		c->by_entry[entry]++;
	if (path >= 0 && path < CP_PATH_MAX)
		c->by_path[path]++;
	if (clock >= 0 && clock < CP_CLOCK_SLOTS)
		c->by_clock[clock]++;
}

static __always_inline void record_read(__u32 tid, int entry, int path, int clock)
{
	struct cp_totals *tot = get_totals();
	struct cp_thread *t = get_thread(tid);

	if (!tot)
		return;
	count_read(&tot->all, entry, path, clock);
	if (t)
		count_read(&t->cur, entry, path, clock);
}

static __always_inline void close_request(__u32 tid)
{
	struct cp_totals *tot = get_totals();
	struct cp_thread *t = get_thread(tid);
	__u64 *sum, *cur;
	__u64 reads;

	if (!tot || !t)
		return;
	tot->boundary_hits++;
	if (t->seen_boundary) {
		sum = (__u64 *)&tot->in_requests;
		cur = (__u64 *)&t->cur;
		for (unsigned int i = 0; i < CP_READ_COUNTS_WORDS; i++)
			sum[i] += cur[i];
		reads = t->cur.reads;
		tot->requests++;
		tot->hist[reads < CP_HIST_SLOTS - 1 ? reads : CP_HIST_SLOTS - 1]++;
		if (reads > tot->max_reads_per_request)
			tot->max_reads_per_request = reads;
	}
	t->seen_boundary = 1;
	__builtin_memset(&t->cur, 0, sizeof(t->cur));
}

static __always_inline void count_trap(void)
{
	struct cp_totals *tot = get_totals();

	if (tot)
		tot->trap_hits++;
}

SEC("perf_event")
int on_vdso_entry(struct bpf_perf_event_data *ctx)
{
	__u32 tid = target_tid();
	__u64 ip = ctx->regs.ip;

	if (!tid)
		return 0;
	count_trap();
	if (ip == vdso_entry_addr[CP_ENTRY_CLOCK_GETTIME])
		record_read(tid, CP_ENTRY_CLOCK_GETTIME,
			    vdso_clock_path((__s32)ctx->regs.di),
			    clock_slot((__s32)ctx->regs.di));
	else if (ip == vdso_entry_addr[CP_ENTRY_GETTIMEOFDAY])
		record_read(tid, CP_ENTRY_GETTIMEOFDAY,
			    vdso_hres ? CP_PATH_VDSO : CP_PATH_SYSCALL, CLOCK_REALTIME_ID);
	else if (ip == vdso_entry_addr[CP_ENTRY_TIME])
		record_read(tid, CP_ENTRY_TIME, CP_PATH_VDSO, CLOCK_REALTIME_ID);
	return 0;
}

/* Direct clock syscalls: syscall(SYS_clock_gettime, ...) through the C
 * library's syscall() function (a uprobe for the target only). The kernel's
 * syscall tracepoints would see raw syscall instructions too, but attaching
 * to them puts every syscall of every process on the host on the slow path
 * (measured here: getppid() 115 ns -> 197 ns), and this kernel has neither
 * kprobes nor fentry for the syscall functions themselves. */
SEC("uprobe")
int BPF_KPROBE(on_syscall_func, long nr, long arg1)
{
	__u32 tid = target_tid();

	if (!tid)
		return 0;
	count_trap();
	if (nr == sys_clock_gettime)
		record_read(tid, CP_ENTRY_CLOCK_GETTIME, CP_PATH_SYSCALL,
			    clock_slot((__s32)arg1));
	else if (nr == sys_gettimeofday)
		record_read(tid, CP_ENTRY_GETTIMEOFDAY, CP_PATH_SYSCALL, CLOCK_REALTIME_ID);
	else if (nr == sys_time)
		record_read(tid, CP_ENTRY_TIME, CP_PATH_SYSCALL, CLOCK_REALTIME_ID);
	return 0;
}

/* syscall:NAME boundaries. Only loaded when asked for: this tracepoint
 * slows every process's syscalls while attached (see above), which the
 * user accepts by choosing a syscall boundary over a function. */
SEC("tp_btf/sys_enter")
int BPF_PROG(on_boundary_syscall, struct pt_regs *regs, long id)
{
	__u32 tid;

	if (id != boundary_syscall)
		return 0;
	tid = target_tid();
	if (tid)
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
	__u32 tid = target_tid();
	__u64 idx = bpf_get_attach_cookie(ctx);
	struct cp_totals *tot;
	struct cp_thread *t;

	if (!tid || idx >= CP_MAX_PROBES)
		return 0;
	count_trap();
	tot = get_totals();
	t = get_thread(tid);
	if (tot)
		tot->all.probe_calls[idx]++;
	if (t)
		t->cur.probe_calls[idx]++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
