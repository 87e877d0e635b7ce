/* boundary_hooks.bpf.h - the request boundary: a thread's request closed
 * (its reads, sites, histogram and maximum; the counter window's
 * distribution), at a syscall or a function's uprobe; whether a clock
 * wrapper in the target closes requests it should not (the wrapper
 * check); --probe's calls counted. Part of clockreads.bpf.c. */
#ifndef CP_BOUNDARY_HOOKS_BPF_H
#define CP_BOUNDARY_HOOKS_BPF_H

/* which: the totals element the request is counted in (CP_TOTALS_*).
 * While a syscall: boundary's wrapper is checked (the target closes the
 * requests then too), it is counted apart (CP_TOTALS_CHECKED, the sites'
 * in_checked, the process's checked_*): the window's if the check falls
 * back to sys_enter (check_wrapper), so that the requests before the
 * fall-back and the one it comes in are counted, as under uprobes;
 * dropped if not. An index, not a branch (requests_checked). */
static __always_inline void close_request(__u32 tid, __u32 which)
{
	struct cp_totals *tot;
	struct cp_thread *t, *q;
	__u32 elem; /* which, as the lookup's key (on the stack: no bound kept) */
	struct patch_look pl = { .slot = CP_PATCH_SLOTS };
	struct cp_proc *p = followed_proc();
	__u64 reads, key = 0;
	bool whole = true;

	which &= 1;
	elem = which;
	tot = bpf_map_lookup_elem(&totals, &elem);
	t = get_thread();
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
		__u64 window = p ? 0 : patch_window; /* the target's own table's */

		whole = add_patch_reads(q, key, &pl, table_of(p), wiped);
		/* both boundaries in the table's window (CP_PATCH_WINDOW_CLOSED) */
		whole = whole && q->patch_window == window && window != CP_PATCH_WINDOW_CLOSED;
		q->patch_window = window;
		if (!add_patch_sites(q, tot, &pl, q->boundary_phase == CP_PHASE_CLOCK && whole,
				     which, table_of(p), wiped)) {
			q->patch_valid = 0;
			whole = false;
		}
	}
	if (phase == CP_PHASE_CLOCK && q->boundary_phase == CP_PHASE_CLOCK && whole) {
		cp_read_counts_add(&tot->in_requests, &q->cur);
		reads = q->cur.reads;
		cp_add(&tot->requests, 1);
		if (p) { /* requests, in_requests; or checked_* */
			__sync_fetch_and_add(&p->requests + 2 * (which & 1), 1);
			__sync_fetch_and_add(&p->in_requests + 2 * (which & 1), reads);
		}
		credit_sites(q, tot, which);
		cp_add(&tot->hist[reads < CP_HIST_SLOTS - 1 ? reads : CP_HIST_SLOTS - 1], 1);
		raise_max(&tot->max_reads_per_request, reads);
	}
	q->boundary_phase = t->boundary_phase = phase;
	__builtin_memset(&q->cur, 0, sizeof(q->cur));
	q->npending = 0;
	q->pending_overflow = 0;
}

/* The boundaries the current thread has passed in the target's request
 * block (boundary_close.S) in the block's epoch; false: not known (no
 * key, or no slot to be had). A thread with no slot has passed none. A
 * page of the table that cannot be read was never touched: zeros (a
 * block no boundary wrote; block 0 of a launched command, whose epoch
 * clockprof never moved). */
static __always_inline bool wrapper_hits(__u64 table, bool wiped, __u64 *epoch, __u64 *hits)
{
	struct patch_slot ps = { .index = 0 };
	__u64 head[2] = { 0, 0 }, opens = 0;
	int found = read_patch_slot(table, patch_key(), &ps, wiped);

	*hits = 0;
	if (found < 0)
		return false;
	if (bpf_probe_read_user(epoch, sizeof(*epoch),
				(void *)(table + CP_PATCH_BLOCKS_OFF + CP_PB_EPOCH * 8)))
		*epoch = 0;
	if (found &&
	    !bpf_probe_read_user(
		    head, sizeof(head),
		    (void *)(table + CP_PATCH_BLOCKS_OFF + (1 + ps.index) * CP_PATCH_BLOCK)) &&
	    head[CP_PB_EPOCH] == *epoch + 1 &&
	    !bpf_probe_read_user(&opens, sizeof(opens),
				 (void *)(table + CP_PATCH_BLOCKS_OFF +
					  (1 + ps.index) * CP_PATCH_BLOCK + CP_PB_OPENS * 8)))
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
		requests_checked = CP_TOTALS_WINDOW;
	}
	t->wrap_known = 1;
	t->wrap_epoch = epoch;
	t->wrap_hits = hits;
}

/* A thread of the target passed the request boundary: its request
 * closes. At a function it came through a uprobe, a trap; at the syscall
 * through the tracepoint, none, and the wrapper is checked first (while a
 * syscall: boundary is), as a fall-back decides where this request is
 * counted (requests_checked). Says whether a thread of the target passed. */
static __always_inline bool pass_boundary(bool at_syscall)
{
	__u32 tid = target_tid();

	if (!tid)
		return false;
	if (!at_syscall)
		count_trap();
	else if (boundary_wrapped && !wrapper_check.fallback_ns && phase == CP_PHASE_CLOCK)
		check_wrapper();
	close_request(tid, at_syscall ? requests_checked : CP_TOTALS_WINDOW);
	return true;
}

/* syscall:NAME boundaries. Only loaded when asked for: this tracepoint
 * slows every process's syscalls while attached (see above), which the
 * user accepts by choosing a syscall boundary over a function. With the
 * wrapper closing in the target, only until it is checked (user space
 * detaches it then). */
SEC("tp_btf/sys_enter")
int BPF_PROG(on_boundary_syscall, struct pt_regs *regs, long id)
{
	if (id == boundary_syscall)
		pass_boundary(true);
	return 0;
}

SEC("uprobe")
int on_boundary_func(struct pt_regs *ctx)
{
	/* --anatomy's uprobe fallback opens the thread's next request */
	if (pass_boundary(false) && phase == CP_PHASE_CLOCK)
		anatomy_boundary();
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

#endif
