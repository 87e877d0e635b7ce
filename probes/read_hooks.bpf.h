/* read_hooks.bpf.h - the ways a read comes in: on_clock_func (a uprobe at
 * a clock point, or the C library's syscall()) and on_vdso_entry (a
 * hardware breakpoint on a vDSO entry); the self-test's calls counted
 * apart, a trap that reads no clock counted as a trap. Part of
 * clockreads.bpf.c. */
#ifndef CP_READ_HOOKS_BPF_H
#define CP_READ_HOOKS_BPF_H

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
	if (anatomy) /* the clock as anatomy.h compares them */
		anatomy_event(CP_ANATOMY_REC_READ,
			      r->entry == CP_ENTRY_CLOCK_GETTIME ? (__u32)r->clock_id :
								   (__u32)-r->entry,
			      &site, r->bp);
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
		if (patch_table && !exec_traced)
			sum_patch_table();
		return 0;
	}
	if (entry == CP_ENTRY_SYSCALL_FUNC) {
		entry = syscall_entry(ctx, &clock_id);
		if (entry < 0) {
			count_trap(); /* another syscall: a hit that reads no clock */
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
	read = (struct read_seen){ .ip = PT_REGS_IP(ctx),
				   .sp = PT_REGS_SP(ctx),
				   .bp = PT_REGS_FP(ctx),
				   .clock_id = clock_id,
				   .entry = entry,
				   .path = path,
				   .mode = mode,
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
		count_trap(); /* a guard: costs like a hit, counts nothing */
		return 0;
	}
	read = (struct read_seen){ .ip = ip,
				   .sp = ctx->regs.sp,
				   .bp = ctx->regs.bp,
				   .clock_id = clock_id,
				   .entry = entry,
				   .path = entry_path(entry, clock_id),
				   .mode = CP_SITE_STACK_TOP };
	record_read_seen(&read);
	return 0;
}

#endif
