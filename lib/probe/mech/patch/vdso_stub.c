/* vdso_stub.c - the stub sent through one held thread of the running
 * target (hijack.c): the thread checked first (its own seccomp filter,
 * shadow stacks), the request posted in the header, the result waited
 * for, a refusal said in words; the processes forked in the stub's
 * window mended; the sites read back. See vdso_patch_internal.h. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>
#include <linux/audit.h>
#include <sys/syscall.h>
#include "cgroup.h"
#include "redirect_place.h"
#include "error.h"
#include "monotonic.h"
#include "hijack.h"
#include "patch_owner.h"
#include "patch_requests.h"
#include "patch_sites.h"
#include "patch_table.h"
#include "seccomp_filter.h"
#include "stub_forks.h"
#include "table_place.h"
#include "tid_offset.h"
#include "test_hook.h"
#include "proc_maps.h"
#include "procfs.h"
#include "vdso_area.h"
#include "vdso_count.h"
#include "vdso_patch.h"
#include "vdso_patch_internal.h"
#include "vdso_plan.h"

static void mend_forks(struct cp_vdso_patch *p);

/* The request posted, the thread held to run its stub and the stub's
 * frame on its stack (its rsp as sent) said in the header
 * (cp_vdso_stub_may_run, cp_vdso_stub_left) as that thread is sent,
 * still held: before the stub may run, so that this write never meets
 * the stub's own. */
static void mark_sent(void *ctx, pid_t tid)
{
	const struct cp_vdso_patch *p = ctx;
	struct user_regs_struct r;
	uint64_t sent[3] = { p->gen, (uint64_t)tid, 0 };

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) == 0)
		sent[2] = r.rsp;
	for (int i = 0; i < 3; i++)
		cp_vdso_write(p,
			      cp_vdso_header_addr(p) +
				      offsetof(struct cp_vdso_area_header, sites[i].spare),
			      &sent[i], sizeof(sent[i]));
}

/* Tests only (test_hook.h): CLOCKPROF_TEST_STUB_PAUSE_MS=N: the stub
 * sleeps N ms with the vDSO writable and executable, so that a process
 * the target forks lands in that window (mend_forks). */
static unsigned pause_ms(const struct cp_vdso_patch *p)
{
	return p->mend ? 0 : cp_test_hook("CLOCKPROF_TEST_STUB_PAUSE_MS");
}

/* The stub's syscalls exactly as the target's seccomp filters will see
 * them: rt_sigprocmask (every signal blocked, the thread's mask kept in
 * the stub's frame on its stack, below its stack pointer rsp, and put
 * back), mprotect (writable), mmap (the table), mprotect (back), madvise
 * (the counters populated), madvise twice (the counters and site blocks
 * wiped on fork), mprotect (the code pages executable), arch_prctl
 * when the thread is given a thread pointer, the round trip's getpid,
 * the tests' nanosleep, the mprotects that say a failed mmap, the
 * munmap after a failed mprotect of the code pages, the new table's
 * munlock and mprotect (RW), and a boundary's page made writable and
 * put back. How many. ip: the syscall's in
 * cp_vdso_stub_syscall_ips. */
#define STUB_CALLS (17 + 4 * CP_VDSO_AREA_MAX_REDIRECTS) /* redirects and inherited */

/* A redirected function's page made writable for its site's switch, and
 * put back (prot): the two calls added to d[n...]; the new n. */
static size_t page_calls(const struct cp_vdso_patch *p, struct seccomp_data *d, size_t n,
			 uint64_t qword, uint64_t prot)
{
	for (int back = 0; back < 2; back++)
		d[n++] = (struct seccomp_data){
			.nr = SYS_mprotect,
			.arch = AUDIT_ARCH_X86_64,
			.instruction_pointer = cp_vdso_header_addr(p) + cp_vdso_stub_syscall_ips[9],
			.args = { qword & ~4095ul, 4096, back ? prot : 7 }
		};
	return n;
}

/* The calls of stub_syscalls' list that only a stub mapping the table
 * makes (its mmap, munlock and mprotect, madvises, code pages, thread
 * pointer, and the failed mmap's and code pages' paths): a stub that
 * finds the table mapped (h_table) goes straight to its sites. */
#define TABLE_CALLS \
	(1u << 3 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 8 | 1u << 9 | 1u << 12 | 1u << 13 | \
	 1u << 14 | 1u << 15 | 1u << 16)

static size_t stub_syscalls(const struct cp_vdso_patch *p, uint64_t rsp, bool mapped,
			    struct seccomp_data d[STUB_CALLS])
{
	uint64_t mask = rsp - CP_HIJACK_STUB_FRAME - 88; /* under 10 saved registers */
	const struct {
		int nr, ip;
		uint64_t args[6];
	} calls[17] = {
		{ SYS_rt_sigprocmask, 14, { 0 /* SIG_BLOCK */, mask, mask, 8 } },
		{ SYS_rt_sigprocmask, 15, { 2 /* SIG_SETMASK */, mask, 0, 8 } },
		{ SYS_mprotect, 0, { p->plan.base, p->plan.size, 7 } },
		{ SYS_mmap, 1, { p->plan.table, CP_VDSO_MAP_SIZE, 0, 0x104022, (uint64_t)-1, 0 } },
		{ SYS_mprotect, 2, { p->plan.base, p->plan.size, 5 } },
		{ SYS_madvise,
		  4,
		  { p->plan.table, CP_PATCH_TABLE_SIZE, 23 /* MADV_POPULATE_WRITE */ } },
		{ SYS_madvise,
		  6,
		  { p->plan.table, CP_PATCH_TABLE_SIZE, 18 /* MADV_WIPEONFORK */ } },
		{ SYS_madvise,
		  7,
		  { p->plan.table + CP_PATCH_SITES_OFF, CP_PATCH_MAP_USED - CP_PATCH_SITES_OFF,
		    18 } },
		{ SYS_mprotect, 5, { p->plan.table + CP_PATCH_CODE_OFF, CP_PATCH_CODE_SIZE, 5 } },
		{ SYS_arch_prctl, 3, { 0x1002, p->plan.table + CP_VDSO_ZERO_PAGE + 8 } },
		{ SYS_getpid, 8, { 0 } }, /* cp_vdso_stop's, on a round trip */
		{ SYS_nanosleep,
		  10,
		  { cp_vdso_header_addr(p) + offsetof(struct cp_vdso_area_header, pause) } },
		{ SYS_mprotect, 11, { p->plan.base, p->plan.size, 7 } },
		{ SYS_mprotect, 12, { p->plan.base, p->plan.size, 5 } },
		{ SYS_munmap, 13, { p->plan.table, CP_PATCH_MAP_USED } },
		{ SYS_munlock, 16, { p->plan.table, CP_VDSO_MAP_SIZE } },
		{ SYS_mprotect, 17, { p->plan.table, CP_VDSO_MAP_SIZE, 3 } },
	};
	size_t n = 0;

	for (size_t i = 0; i < 17; i++) {
		if ((i == 9 && !p->give_fs) || (i == 10 && !p->resume) ||
		    (i == 11 && !pause_ms(p)) || (mapped && (TABLE_CALLS >> i & 1)))
			continue;
		d[n] = (struct seccomp_data){ .nr = calls[i].nr,
					      .arch = AUDIT_ARCH_X86_64,
					      .instruction_pointer =
						      cp_vdso_header_addr(p) +
						      cp_vdso_stub_syscall_ips[calls[i].ip] };
		memcpy(d[n++].args, calls[i].args, sizeof(d[0].args));
	}
	for (size_t i = 0; i < p->nredirects; i++)
		n = page_calls(p, d, n, p->redirects[i].plan.qword, (uint64_t)p->redirects[i].prot);
	for (size_t i = 0; i < p->ninherited; i++) /* a leftover's, a fork's */
		n = page_calls(p, d, n, p->inherited[i].qword, p->inherited[i].prot);
	return n;
}

/* Whether the stub can run where clockprof wrote it: the process's vDSO
 * is still the one mapping planned, at its base, whole, and executable.
 * The process may have made it readable only (mprotect, as a sandbox
 * may), unmapped or moved it (mremap) since, and mapped something else
 * in its place: a thread sent there died of SIGSEGV, at attach and at
 * detach, and the request posted would have been written into whatever
 * the process mapped there. */
static bool vdso_in_place(const struct cp_vdso_patch *p)
{
	uint64_t start, end;
	char perms[5];

	return cp_proc_maps_vdso_whole(p->pid, &start, &end, perms) == 0 && start == p->plan.base &&
	       end - start == p->plan.size && perms[2] == 'x';
}

static int refuse_vdso_moved(const struct cp_vdso_patch *p, struct cp_error *err)
{
	return cp_fail(
		err, CP_EXIT_PROFILE,
		"process %d has no executable vDSO at 0x%llx (it unmapped, moved or protected its vDSO itself): clockprof's stub there cannot run",
		p->pid, (unsigned long long)p->plan.base);
}

/* The stub's code, where the held thread is to be sent, as clockprof
 * wrote it: a process that exec()ed another program since has its new
 * image's vDSO there, at the same address where nothing randomizes it
 * (`setarch -R`, a debugger), and that vDSO's padding, run, kills it. */
static bool stub_in_place(const struct cp_vdso_patch *p)
{
	size_t len = CP_VDSO_AREA_SIZE - CP_VDSO_STUB_OFFSET;
	uint8_t *live = malloc(len);
	bool same = live &&
		    !cp_proc_mem_read(p->pid, cp_vdso_header_addr(p) + CP_VDSO_STUB_OFFSET, live,
				      len) &&
		    !memcmp(live, cp_vdso_stub, len);

	free(live);
	return same;
}

/* While a thread is held: the vDSO still in place and executable with
 * the stub in it, it must have a thread pointer (the thunks read fs:0),
 * its system calls must not be dispatched to its own handler, and the
 * target's seccomp filters must allow the stub. */
int cp_vdso_check_held(void *ctx, pid_t tid, struct cp_error *err)
{
	const struct cp_vdso_patch *p = ctx;
	struct user_regs_struct r;
	struct seccomp_data calls[STUB_CALLS];
	struct cp_vdso_area_header h;
	char why[160], mode[16];
	size_t n;
	int ok;

	if (!vdso_in_place(p))
		return refuse_vdso_moved(p, err);
	if (!stub_in_place(p))
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"clockprof's stub is no longer in the vDSO of process %d (it exec'd another program meanwhile?): nothing was sent into it",
			p->pid);
	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read thread %d's registers", tid);
	if (!r.fs_base && !p->give_fs)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d has no thread pointer yet (a static executable sets it up after its entry point)",
			p->pid);
	/* Shadow stacks are enabled thread by thread: the stub's `ret` runs
	 * on this one. */
	if (cp_proc_status_field(p->pid, tid, "x86_Thread_features", why, sizeof(why)) &&
	    strstr(why, "shstk"))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d: its thread %d uses shadow stacks",
			       p->pid, tid);
	if (cp_syscalls_dispatched(tid, cp_vdso_header_addr(p),
				   cp_vdso_header_addr(p) + CP_VDSO_AREA_SIZE))
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d: its thread %d dispatches its system calls to its own handler (PR_SET_SYSCALL_USER_DISPATCH, as Wine does): the stub's would reach it",
			p->pid, tid);
	/* The held thread's own filters: a thread may have installed some
	 * on itself alone (no TSYNC), and the stub runs on this one. */
	if (!cp_proc_status_field(p->pid, tid, "Seccomp", mode, sizeof(mode)))
		return 0;
	if (atoi(mode) == SECCOMP_MODE_STRICT)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d: its thread %d runs in seccomp's strict mode", p->pid,
			       tid);
	if (atoi(mode) != SECCOMP_MODE_FILTER)
		return 0;
	/* Read while the thread is held, after the request was posted: the
	 * stub finds the same table word. */
	n = stub_syscalls(p, r.rsp, cp_vdso_read_header(p, &h) == 0 && h.table, calls);
	ok = cp_seccomp_allows(tid, calls, n, why, sizeof(why));
	if (ok < 0)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d runs under a seccomp filter that cannot be read (thread %d's)",
			p->pid, tid);
	return ok ? 0 :
		    cp_fail(err, CP_EXIT_PROFILE, "process %d: thread %d: %s", p->pid, tid, why);
}

/* A redirect's site as the stub is to switch it: the word as it is now
 * (another tool's uprobe at the function's entry may share it, and come
 * or go), with the replaced instruction's bytes or the jump. -1 when the
 * replaced bytes are neither (someone else wrote there): left alone. */
static int redirect_site(const struct cp_vdso_patch *p, const struct cp_redirect_place *r,
			 struct cp_vdso_area_site *site)
{
	const struct cp_redirect_plan *b = &r->plan;
	uint64_t jump = b->patched - b->original; /* the two differ in the replaced bytes */
	uint64_t live, original;

	if (cp_proc_mem_read(p->pid, b->qword, &live, sizeof(live)))
		return -1;
	original = cp_redirect_plan_unpatched(b, live);
	if (live != original && live != original + jump)
		return -1;
	*site = (struct cp_vdso_area_site){ b->qword, original, original + jump, 0,
					    (uint64_t)r->prot };
	return 0;
}

/* The stub's request: cmd for every site (none: the table mapped only),
 * under a new number. */
int cp_vdso_post_request(struct cp_vdso_patch *p, enum cp_vdso_area_cmd cmd, bool sites,
			 struct cp_error *err)
{
	struct cp_vdso_area_header h;

	if (cp_vdso_read_header(p, &h))
		return cp_vdso_refuse_gone(p, err);
	h.table_size = CP_VDSO_MAP_SIZE;
	h.give_fs = p->give_fs;
	h.resume = p->resume;
	h.pause[0] = pause_ms(p) / 1000;
	h.pause[1] = pause_ms(p) % 1000 * 1000000ull;
	h.vdso_base = p->plan.base;
	h.vdso_len = p->plan.size;
	h.cmd = cmd;
	h.gen_req = p->gen = h.gen_req + 1;
	h.status = 0;
	h.nsites = sites ? (uint64_t)p->plan.nsites : 0;
	h.table_at = p->plan.table;
	for (int i = 0; i < p->plan.nsites; i++)
		h.sites[i] = (struct cp_vdso_area_site){ p->plan.base + p->plan.site[i].qword,
							 p->plan.site[i].original,
							 p->plan.site[i].patched, 0, 0 };
	for (size_t i = 0; sites && i < p->nredirects; i++)
		if (redirect_site(p, &p->redirects[i], &h.sites[h.nsites]) == 0)
			h.nsites++;
	for (size_t i = 0; sites && i < p->ninherited; i++)
		h.sites[h.nsites++] = p->inherited[i];
	if (cp_vdso_write(p, cp_vdso_header_addr(p) + 16, (char *)&h + 16, sizeof(h) - 16))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot write into the vDSO of process %d",
			       p->pid);
	cp_patch_step();
	return 0;
}

void cp_vdso_note_held(struct cp_vdso_patch *p, const struct cp_hijack *hj)
{
	p->info.tid = hj->tid;
	p->info.syscall = hj->syscall;
	p->info.eintr |= hj->eintr;
}

/* The stub's result said as a refusal; 0 when it did what was asked. A
 * process that denies itself writable code (prctl PR_SET_MDWE) refuses
 * the code pages' mprotect, or the vDSO's, with EACCES: nothing in /proc
 * says so beforehand, the stub's own result does at once. */
static int stub_refusal(const struct cp_vdso_patch *p, const struct cp_vdso_stub_result *r,
			struct cp_error *err)
{
	long long e = -(long long)r->err;

	if (r->status == CP_VDSO_STUB_OK)
		return 0;
	if ((r->status == CP_VDSO_STUB_CODE || r->status == CP_VDSO_STUB_VDSO) && e == EACCES)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d denies itself writable code (memory-deny-write-execute: prctl PR_SET_MDWE, systemd's MemoryDenyWriteExecute=): its vDSO cannot be patched",
			p->pid);
	if (r->status == CP_VDSO_STUB_CODE)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"the counters' code could not be made executable in process %d (error %lld)",
			p->pid, e);
	if (r->status == CP_VDSO_STUB_VDSO)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO of process %d could not be made writable (error %lld)",
			       p->pid, e);
	return cp_fail(err, CP_EXIT_PROFILE,
		       "the counters could not be mapped in process %d (error %lld)", p->pid, e);
}

/* Tests only (test_hook.h): CLOCKPROF_TEST_STUB_WAITS_FD=N: a byte
 * written to descriptor N for each wait for the stub that runs out, so
 * that a test can say none did. */
static void note_timeout(void)
{
	int fd = (int)cp_test_hook("CLOCKPROF_TEST_STUB_WAITS_FD");

	if (fd > 2 && write(fd, "t", 1) < 0)
		return;
}

/* Whether the thread sent through the stub of the request in flight
 * left it before it ran (cp_vdso_stub_left); may_stop: it may be held
 * an instant to look. */
static bool stub_left(const struct cp_vdso_patch *p, bool may_stop)
{
	struct cp_vdso_area_header now;

	return cp_vdso_read_header(p, &now) == 0 && now.gen_req == p->gen &&
	       cp_vdso_stub_left(p->pid, cp_vdso_header_addr(p), &now, may_stop);
}

/* A stub whose thread left it before it ran is sent again, this many
 * times in all at most, then refused saying so. */
#define STUB_SENDS 3

static int refuse_left(const struct cp_vdso_patch *p, struct cp_error *err)
{
	return cp_fail(
		err, CP_EXIT_PROFILE,
		"thread %d of process %d left clockprof's stub before it ran (a signal handler that leaves by siglongjmp), %d times: nothing was changed",
		p->info.tid, p->pid, STUB_SENDS);
}

/* One wait until the stub says it is done with the request in flight:
 * its refusal, 0, or 1 when its thread left it before it ran, looked
 * for every 50 ms (without a stop: one that runs all the while, at the
 * end). */
static int wait_once(struct cp_vdso_patch *p, struct cp_error *err)
{
	double look = cp_monotonic_s() + 0.05;

	for (double until = look - 0.05 + STUB_TIMEOUT_S; cp_monotonic_s() < until; usleep(200)) {
		struct cp_vdso_area_header now;
		struct cp_vdso_stub_result r;

		if (cp_vdso_read_header(p, &now))
			return cp_vdso_refuse_gone(p, err);
		now.gen_req = p->gen;
		if (cp_vdso_request_done(p->pid, &now, &r)) {
			cp_patch_step();
			mend_forks(p);
			return stub_refusal(p, &r, err);
		}
		if (cp_monotonic_s() >= look) {
			look += 0.05;
			if (stub_left(p, false))
				return 1;
		}
	}
	if (stub_left(p, true))
		return 1;
	note_timeout();
	/* Given up: a switch it has not reached yet is never made (nobody
	 * would read its counts or switch it back); a restore is left to
	 * run, as the restorer would have it, and a fork's mending (it makes
	 * the fork's vDSO read-only again). */
	if (p->last_cmd == CP_VDSO_CMD_PATCH && p->last_sites && !p->mend)
		cp_vdso_take_sites_out(p);
	/* Stopped or frozen as its thread was sent: the stub runs when it
	 * is continued (said so, not blamed on what follows). */
	if (cp_vdso_patch_runs_nothing(p->pid))
		return cp_hijack_refuse_stopped(p->pid, err);
	return cp_fail(err, CP_EXIT_PROFILE,
		       "thread %d of process %d did not finish clockprof's stub within %.0f s",
		       p->info.tid, p->pid, STUB_TIMEOUT_S);
}

/* Waits until the stub says it is done with the request in flight. A
 * thread that left it before it ran (a handler that took a signal as it
 * was let go and left by siglongjmp) changed nothing: the same request
 * is sent again, through a thread held anew. */
int cp_vdso_wait_stub(struct cp_vdso_patch *p, struct cp_error *err)
{
	for (int sends = 1;; sends++) {
		int rc = wait_once(p, err);

		if (rc != 1)
			return rc;
		if (sends == STUB_SENDS)
			return refuse_left(p, err);
		if (cp_vdso_run_stub(p, p->last_cmd, p->last_sites, err))
			return -1;
	}
}

/* Whether a process forked in the stub's window still holds its copy of
 * that instant wrong: a writable and executable mapping (the vDSO, or a
 * boundary's page), or a site not as the request wants. */
static bool fork_wrong(const struct cp_vdso_patch *c, const struct cp_vdso_patch *p)
{
	return cp_proc_has_wx(c->pid) ||
	       (p->last_sites && !cp_vdso_sites_read(c, p->last_cmd == CP_VDSO_CMD_PATCH));
}

/* A process the target forked while its stub ran holds a copy of that
 * instant: its vDSO perhaps writable and executable for life (nothing
 * else would put it back), its sites half switched. Each one whose copy
 * is of that request (not exec'd since) and is wrong is sent through the
 * stub for the same request: a site already switched is left, the rest
 * are, and its vDSO is read-only again. Its own forks meanwhile, the
 * same way (its cp_vdso_wait_stub). */
static void mend_forks(struct cp_vdso_patch *p)
{
	pid_t *kids;
	size_t n;

	if (!p->window_open)
		return;
	p->window_open = false;
	if (cp_stub_window_forks(p->pid, &p->window, &kids, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct cp_vdso_patch c = *p; /* the same plan, in the child */
		struct cp_vdso_area_header h;
		struct cp_error err = { 0 };

		c.pid = kids[i];
		c.mem_pin = -1; /* not pinned: its writes open anew */
		c.give_fs = false;
		c.resume = 0;
		c.mend = true;
		if (cp_vdso_read_header(&c, &h) || memcmp(h.magic, CP_VDSO_AREA_MAGIC, 16) ||
		    h.gen_req != p->gen || !fork_wrong(&c, p))
			continue;
		if (cp_vdso_run_stub(&c, p->last_cmd, p->last_sites, &err) == 0 &&
		    cp_vdso_wait_stub(&c, &err) == 0)
			p->info.forks_mended++;
		else if (cp_proc_has_wx(c.pid) && p->info.forks_unmended++ == 0)
			p->info.first_unmended = c.pid; /* named in the warning */
	}
	free(kids);
}

/* Whether every site's word reads as want (patched or original); a
 * redirect's by its replaced bytes alone (redirect_site). */
bool cp_vdso_sites_read(const struct cp_vdso_patch *p, bool patched)
{
	struct cp_vdso_area_site b;
	uint64_t word;

	for (int i = 0; i < p->plan.nsites; i++) {
		const struct cp_vdso_site *s = &p->plan.site[i];

		if (cp_proc_mem_read(p->pid, p->plan.base + s->qword, &word, sizeof(word)) ||
		    word != (patched ? s->patched : s->original))
			return false;
	}
	for (size_t i = 0; i < p->nredirects; i++)
		if (redirect_site(p, &p->redirects[i], &b) ||
		    cp_proc_mem_read(p->pid, b.qword, &word, sizeof(word)) ||
		    word != (patched ? b.patched : b.original))
			return false;
	for (size_t i = 0; i < p->ninherited; i++)
		if (cp_proc_mem_read(p->pid, p->inherited[i].qword, &word, sizeof(word)) ||
		    word != (patched ? p->inherited[i].patched : p->inherited[i].original))
			return false;
	return true;
}

/* The stub sent once through a thread of the running target for cmd
 * (sites: every site, or none: the table mapped only), and waited for. */
int cp_vdso_run_stub(struct cp_vdso_patch *p, enum cp_vdso_area_cmd cmd, bool sites,
		     struct cp_error *err)
{
	struct cp_hijack hj;
	struct cp_vdso_area_header h;

	if (!vdso_in_place(p))
		return refuse_vdso_moved(p, err);
	if (cp_vdso_read_header(p, &h) == 0 &&
	    cp_vdso_stub_may_run(p->pid, cp_vdso_header_addr(p), &h))
		return cp_vdso_refuse_stub_running(p, &h, err);
	p->last_cmd = cmd;
	p->last_sites = sites;
	cp_stub_window_open(&p->window);
	p->window_open = true;
	if (cp_vdso_post_request(p, cmd, sites, err) ||
	    cp_hijack_thread(p->pid, cp_vdso_header_addr(p) + CP_VDSO_STUB_OFFSET,
			     cp_vdso_check_held, mark_sent, p, &hj, err))
		return -1;
	cp_vdso_note_held(p, &hj);
	if (cmd == CP_VDSO_CMD_PATCH) {
		p->info.attach_pause_ms += hj.held_ms;
		p->info.attach_stops += hj.holds;
	} else {
		p->info.detach_pause_ms += hj.held_ms;
		p->info.detach_stops += hj.holds;
	}
	return 0;
}
