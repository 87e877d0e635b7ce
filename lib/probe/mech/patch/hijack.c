/* hijack.c - see hijack.h. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "monotonic.h"
#include "hijack.h"
#include "test_hook.h"
#include "proc_maps.h"
#include "procfs.h"
#include "rseq_section.h"

void (*cp_patch_step_hook)(void);

#define STUB_FRAME CP_HIJACK_STUB_FRAME
#define HOLD_TIMEOUT_S 2.0
#define RUNNING_WAIT_S 0.1
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

/* The syscall a blocked thread is in (/proc/PID/task/TID/syscall), -1;
 * arg0: its first argument. */
static int thread_syscall(pid_t pid, pid_t tid, unsigned long *arg0)
{
	char path[96];
	FILE *f;
	int nr = -1;

	*arg0 = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if ((f = fopen(path, "re"))) {
		if (fscanf(f, "%d %lx", &nr, arg0) < 1)
			nr = -1;
		fclose(f);
	}
	return nr;
}

/* Whether descriptor fd of thread tid of pid is a socket: read through
 * the thread, whose descriptors are the process's, where /proc/PID/fd is
 * empty once the main thread has exited (pthread_exit). */
static bool is_socket(pid_t pid, pid_t tid, unsigned long fd)
{
	char path[96], link[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%lu", pid, tid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	return n > 7 && !memcmp(link, "socket:", 7);
}

/* How quietly a thread blocked in a syscall takes a ptrace stop when no
 * handler runs: 2, the kernel restarts it unseen (ERESTARTSYS,
 * ERESTARTNOHAND, ERESTART_RESTARTBLOCK); 1, so it does unless it waits
 * on a socket with a timeout (SO_RCVTIMEO, SO_SNDTIMEO: then it returns
 * EINTR, signal(7)), which nothing outside the process can read; 0, it
 * may return EINTR (epoll_wait and others). */
static int quietness(pid_t pid, pid_t tid)
{
	/* restart_syscall: a sleep with a timeout (poll, nanosleep, a futex)
	 * that an earlier stop interrupted goes on as it */
	static const int always[] = {
		SYS_poll,     SYS_select, SYS_pause,	       SYS_nanosleep,
		SYS_wait4,    SYS_futex,  SYS_clock_nanosleep, SYS_waitid,
		SYS_pselect6, SYS_ppoll,  SYS_rt_sigsuspend,   SYS_restart_syscall,
	};
	static const int sockets[] = { SYS_accept, SYS_recvfrom, SYS_recvmsg, SYS_accept4 };
	unsigned long fd;
	int nr = thread_syscall(pid, tid, &fd);

	for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++)
		if (always[i] == nr)
			return 2;
	for (size_t i = 0; i < sizeof(sockets) / sizeof(sockets[0]); i++)
		if (sockets[i] == nr)
			return 1;
	if (nr == SYS_read || nr == SYS_write)
		return is_socket(pid, tid, fd) ? 1 : 2;
	return 0;
}

/* Threads not to hold again: their stacks had no room for the stub. */
struct skipped {
	pid_t tid[8];
	size_t n;
};

static bool skipped(const struct skipped *s, pid_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->tid[i] == tid)
			return true;
	return false;
}

/* A thread of tids (n) running now, else one blocked in a syscall that
 * restarts unseen, the quietest (quietness), none of skip; 0: neither. */
static pid_t pick_quiet(pid_t pid, const pid_t *tids, size_t n, const struct skipped *skip)
{
	pid_t best = 0;
	int best_q = 0;

	for (size_t i = 0; i < n; i++)
		if (!skipped(skip, tids[i]) && cp_proc_thread_state(pid, tids[i]) == 'R')
			return tids[i];
	for (size_t i = 0; i < n && best_q < 2; i++) {
		int q = skipped(skip, tids[i]) ? 0 : quietness(pid, tids[i]);

		if (q > best_q) {
			best = tids[i];
			best_q = q;
		}
	}
	return best;
}

/* The first of tids (n) not in skip; 0: none. */
static pid_t pick_any(const pid_t *tids, size_t n, const struct skipped *skip)
{
	for (size_t i = 0; i < n; i++)
		if (!skipped(skip, tids[i]))
			return tids[i];
	return 0;
}

/* The thread to hold: one running, or blocked in a syscall that restarts
 * (neither sees the stop); when every thread waits in a call that a stop
 * interrupts (epoll_wait), one that starts running within RUNNING_WAIT_S,
 * else the first. An idle target is not kept waiting for a running one. */
static pid_t pick_thread(pid_t pid, const struct skipped *skip)
{
	pid_t *tids = NULL, pick = 0;
	size_t n = 0;
	double until = cp_monotonic_s() + RUNNING_WAIT_S;

	do {
		free(tids);
		if (cp_proc_threads(pid, &tids, &n) || !n)
			return 0;
		if (!(pick = pick_quiet(pid, tids, n, skip)))
			usleep(2000);
	} while (!pick && cp_monotonic_s() < until);
	if (!pick) /* its syscall may return EINTR: send_through says */
		pick = pick_any(tids, n, skip);
	free(tids);
	return pick;
}

static int no_room(pid_t pid, struct cp_error *err)
{
	return cp_fail(
		err, CP_EXIT_PROFILE,
		"no thread of process %d that could be held was on a stack whose bottom clockprof knows (its own, the main one, a goroutine's), with room for clockprof's stub (%d bytes below its stack pointer)",
		pid, CP_HIJACK_STUB_STACK);
}

/* The bottom of the running goroutine's stack when the held thread runs
 * Go: a goroutine's g (or the thread's g0) begins with its stack's
 * bounds, and is found in r14 (Go's register ABI keeps it there) or in
 * the thread's TLS (fs:-8 in a Go executable; fs:-16 in a Go library
 * loaded beside other TLS). A candidate counts only if its bounds hold
 * rsp. 0: not Go, or not found. */
static uint64_t go_stack_low(pid_t pid, const struct user_regs_struct *r)
{
	uint64_t g[3] = { r->r14, 0, 0 }, bounds[2];

	if (r->fs_base >= 16) {
		cp_proc_mem_read(pid, r->fs_base - 8, &g[1], sizeof(g[1]));
		cp_proc_mem_read(pid, r->fs_base - 16, &g[2], sizeof(g[2]));
	}
	for (int i = 0; i < 3; i++)
		if (g[i] && !cp_proc_mem_read(pid, g[i], bounds, sizeof(bounds)) &&
		    bounds[0] < r->rsp && r->rsp <= bounds[1] &&
		    bounds[1] - bounds[0] <= (1ul << 30))
			return bounds[0];
	return 0;
}

/* The bottom of the stack rsp is on, where clockprof knows it: a Go
 * stack's, from its g; the main thread's [stack]; a thread stack of the
 * C library's (an anonymous mapping just above its guard page, which
 * holds the thread's own descriptor, at fs: glibc and musl put it at the
 * stack's top). 0: unknown (a coroutine's or signal stack carved out of
 * the heap or .bss, or a slice of a fiber pool that has one guard page
 * for all: nothing says what lies below it). */
static uint64_t stack_low(pid_t pid, const struct user_regs_struct *r)
{
	struct cp_proc_map *maps = NULL;
	uint64_t low = go_stack_low(pid, r);
	size_t n = 0;

	if (low || cp_proc_maps_read(pid, &maps, &n))
		return low;
	for (size_t i = 0; i < n; i++) {
		const struct cp_proc_map *m = &maps[i];

		if (m->start >= r->rsp || r->rsp > m->end || m->perms[1] != 'w')
			continue;
		if (!strcmp(m->path, "[stack]") ||
		    (!m->ino && !m->path[0] && i > 0 && maps[i - 1].end == m->start &&
		     !strcmp(maps[i - 1].perms, "---p") && m->start <= r->fs_base &&
		     r->fs_base < m->end))
			low = m->start;
	}
	free(maps);
	return low;
}

/* Whether the held thread has CP_HIJACK_STUB_STACK bytes of its own stack
 * below rsp for the stub: a goroutine deep in a chain of nosplit
 * functions may have only 128 bytes, with another goroutine's stack
 * below; a thread on a stack of its own, a guard page. */
static bool stack_room(pid_t pid, pid_t tid)
{
	struct user_regs_struct r;
	uint64_t low;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return false;
	low = stack_low(pid, &r);
	return low && r.rsp - CP_HIJACK_STUB_STACK >= low;
}

/* waitpid for the thread until `until` (0: not by then). A held thread
 * is usually back within microseconds (a syscall of the stub): the first
 * tries only yield the CPU, where a sleep of even 0.1 ms made each of a
 * round trip's ~16 stops cost that much. */
static pid_t wait_until(pid_t tid, int *st, double until)
{
	for (int tries = 0;; tries++) {
		pid_t got = waitpid(tid, st, __WALL | WNOHANG);

		if (got != 0 || cp_monotonic_s() >= until)
			return got;
		if (tries < 1000)
			sched_yield();
		else
			usleep(100);
	}
}

int cp_hijack_refuse_stopped(pid_t pid, struct cp_error *err)
{
	return cp_fail(
		err, CP_EXIT_PROFILE,
		"process %d is stopped (SIGSTOP, a terminal stop, or its cgroup frozen): code written into it would run only once it is continued, clockprof gone",
		pid);
}

/* Waits for the thread's interrupt stop (PTRACE_EVENT_STOP with SIGTRAP);
 * a signal that stops it first is passed on to it. 1: a group stop came
 * instead (the process is stopped, or was stopped as it was held: the
 * same event with the stopping signal), and it stays so. */
static int wait_held(pid_t tid)
{
	double until = cp_monotonic_s() + HOLD_TIMEOUT_S;
	int st;

	for (;;) {
		pid_t r = wait_until(tid, &st, until);

		if (r <= 0 || WIFEXITED(st) || WIFSIGNALED(st))
			return -1;
		if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP)
			return WSTOPSIG(st) == SIGTRAP ? 0 : 1;
		if (WIFSTOPPED(st))
			ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(st));
	}
}

/* A thread held inside a syscall (r its registers, changed here): where
 * it returns to. One that the kernel is to restart keeps that restart,
 * and with it what a signal handled before it resumes decides (EINTR,
 * or SA_RESTART's restart): the kernel moves the rip it resumes at back
 * by a `syscall`'s 2 bytes, from the stub to its restart entry
 * (vdso_area.S), which returns to the `syscall` again. Done by hand (the
 * syscall instruction again), a signal handled meanwhile was lost to a
 * sigsuspend() that then slept again for good. A thread sent on
 * elsewhere (resume_at) restarts by hand: clockprof holds it throughout. */
static uint64_t in_syscall(struct user_regs_struct *r, uint64_t resume_at, struct cp_hijack *h)
{
	bool restart = false, block = false;

	h->syscall = (int)r->orig_rax;
	switch (-(long long)r->rax) {
	case ERESTARTSYS:
	case ERESTARTNOINTR:
	case ERESTARTNOHAND: restart = true; break;
	case ERESTART_RESTARTBLOCK: restart = block = true; break;
	default: h->eintr = -(long long)r->rax == EINTR;
	}
	if (restart && !resume_at)
		return r->rip;
	if (restart)
		r->rax = block ? SYS_restart_syscall : r->orig_rax;
	r->orig_rax = (unsigned long long)-1;
	return restart ? r->rip - 2 : r->rip;
}

/* The thread's registers point into the stub, which returns to where it
 * was (in a syscall: in_syscall; inside an rseq critical section: at its
 * abort handler, as the kernel would have sent it, rseq_section.h). The
 * resume address is written through the held thread (ptrace), not
 * /proc/PID/mem by pid: only while it is held, in the program it runs;
 * an exec by another thread ends it first, and the write then fails
 * where an open by pid would reach the new program's stack at the same
 * address (a fork mended has no pin). */
static int send_through(pid_t tid, uint64_t stub, uint64_t resume_at, struct cp_hijack *h)
{
	struct user_regs_struct r;
	uint64_t resume;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return -1;
	resume = r.rip;
	if ((long long)r.orig_rax >= 0)
		resume = in_syscall(&r, resume_at, h);
	if (resume_at)
		resume = resume_at;
	else if (cp_rseq_abort_ip(tid, r.rip, &resume))
		r.orig_rax = (unsigned long long)-1; /* its abort: no restart */
	if (ptrace(PTRACE_POKEDATA, tid, (void *)(uintptr_t)(r.rsp - STUB_FRAME),
		   (void *)(uintptr_t)resume))
		return -1;
	cp_patch_step();
	r.rsp -= STUB_FRAME;
	r.rip = stub;
	if (ptrace(PTRACE_SETREGS, tid, 0, &r))
		return -1;
	cp_patch_step();
	return 0;
}

/* The held thread checked and redirected. */
static int check_and_send(pid_t pid, uint64_t stub, uint64_t resume_at, cp_hijack_check_fn check,
			  void *ctx, struct cp_hijack *h, struct cp_error *err)
{
	cp_patch_step();
	if (check && check(ctx, h->tid, err))
		return -1;
	if (send_through(h->tid, stub, resume_at, h))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "thread %d of process %d could not be redirected", h->tid, pid);
	return 0;
}

int cp_hijack_held(pid_t pid, pid_t tid, uint64_t stub, cp_hijack_check_fn check, void *ctx,
		   struct cp_hijack *h, struct cp_error *err)
{
	memset(h, 0, sizeof(*h));
	h->syscall = -1;
	h->tid = tid;
	h->holds = 1;
	return check_and_send(pid, stub, 0, check, ctx, h, err);
}

/* Runs the held thread until it stops at the entry of the getpid whose
 * return address is stop_ret (a syscall stop, PTRACE_O_TRACESYSGOOD);
 * the stub's own syscalls pass, and signals meant for the thread on the
 * way are passed on. */
static int run_to_stop(pid_t tid, uint64_t stop_ret)
{
	double until = cp_monotonic_s() + HOLD_TIMEOUT_S;
	struct user_regs_struct r;
	int st, sig = 0;

	for (;;) {
		pid_t got;

		if (ptrace(PTRACE_SYSCALL, tid, 0, (void *)(long)sig))
			return -1;
		got = wait_until(tid, &st, until);
		if (got <= 0 || !WIFSTOPPED(st))
			return -1;
		sig = WSTOPSIG(st);
		if ((st >> 16) != 0) { /* an event stop: no signal to pass on */
			sig = 0;
		} else if (sig == (SIGTRAP | 0x80)) {
			sig = 0;
			if (ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 && r.rip == stop_ret &&
			    r.orig_rax == SYS_getpid)
				return 0;
		}
	}
}

int cp_hijack_held_round_trip(pid_t pid, pid_t tid, uint64_t stub, uint64_t stop, uint64_t stop_ret,
			      cp_hijack_check_fn check, void *ctx, struct cp_error *err)
{
	struct user_regs_struct before, after;
	struct cp_hijack h = { .tid = tid, .syscall = -1 };

	if (ptrace(PTRACE_GETREGS, tid, 0, &before))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read thread %d's registers", tid);
	if (check_and_send(pid, stub, stop, check, ctx, &h, err))
		return -1;
	if (run_to_stop(tid, stop_ret) || ptrace(PTRACE_GETREGS, tid, 0, &after))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "thread %d of process %d did not come back from clockprof's stub",
			       tid, pid);
	/* Every register as it was (the getpid skipped), but a thread pointer
	 * the stub gave it. */
	before.fs_base = after.fs_base;
	before.orig_rax = (unsigned long long)-1;
	if (ptrace(PTRACE_SETREGS, tid, 0, &before))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "thread %d of process %d could not be put back", tid, pid);
	cp_patch_step();
	return 0;
}

/* One thread picked (none of skip; h->tid 0: none left) and traced: 0,
 * else errno. One that exits as it is picked is refused as a traced one is (EPERM), and
 * another is picked: a server that starts a thread per request was
 * refused, said to be under a debugger. */
static int seize_picked(pid_t pid, const struct skipped *skip, struct cp_hijack *h)
{
	struct skipped exited = *skip;
	int e;

	for (;;) {
		if (!(h->tid = pick_thread(pid, &exited)))
			return ESRCH;
		if (!ptrace(PTRACE_SEIZE, h->tid, 0, 0))
			return 0;
		e = errno;
		if (cp_proc_thread_alive(pid, h->tid) ||
		    exited.n == sizeof(exited.tid) / sizeof(exited.tid[0]))
			return e;
		exited.tid[exited.n++] = h->tid;
	}
}

/* One thread picked (none of skip) and held in an interrupt stop: 0,
 * else -1 with err, the thread let go. */
static int hold(pid_t pid, const struct skipped *skip, struct cp_hijack *h, struct cp_error *err)
{
	int rc = 0, held = 0, e;

	memset(h, 0, sizeof(*h));
	h->syscall = -1;
	e = seize_picked(pid, skip, h);
	if (!h->tid)
		return skip->n ? no_room(pid, err) :
				 cp_fail(err, CP_EXIT_PROFILE,
					 "process %d has no thread left (exited?)", pid);
	if (e)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			e == EPERM ?
				"thread %d of process %d cannot be traced (already under a debugger, or ptrace denied)" :
				"thread %d of process %d cannot be traced",
			h->tid, pid);
	cp_patch_step();
	if (ptrace(PTRACE_INTERRUPT, h->tid, 0, 0) || (held = wait_held(h->tid)) < 0)
		rc = cp_fail(err, CP_EXIT_PROFILE,
			     "thread %d of process %d did not stop within %.0f s", h->tid, pid,
			     HOLD_TIMEOUT_S);
	else if (held > 0)
		rc = cp_hijack_refuse_stopped(pid, err);
	if (rc) {
		ptrace(PTRACE_DETACH, h->tid, 0, 0);
		cp_patch_step();
	}
	return rc;
}

/* Tests only (test_hook.h): CLOCKPROF_TEST_SIGNAL_HELD=PID sends the
 * held thread of process PID a SIGUSR1, which it takes as it resumes, in
 * the stub: the signal that comes while a thread is held. */
static void signal_held(pid_t pid, pid_t tid)
{
	if (cp_test_hook("CLOCKPROF_TEST_SIGNAL_HELD") == (unsigned)pid)
		syscall(SYS_tgkill, pid, tid, SIGUSR1);
}

/* A thread whose stack has no room for the stub is let go and another
 * held, a few at most. */
static int hijack_here(pid_t pid, uint64_t stub, cp_hijack_check_fn check, cp_hijack_sent_fn sent,
		       void *ctx, struct cp_hijack *h, struct cp_error *err)
{
	struct skipped skip = { .n = 0 };
	unsigned holds = 0;
	double t0;
	int rc;

	while (!(rc = hold(pid, &skip, h, err)) && !stack_room(pid, h->tid)) {
		holds++;
		ptrace(PTRACE_DETACH, h->tid, 0, 0);
		cp_patch_step();
		if (skip.n == sizeof(skip.tid) / sizeof(skip.tid[0]))
			return no_room(pid, err);
		skip.tid[skip.n++] = h->tid;
	}
	if (rc)
		return rc;
	h->holds = holds + 1;
	t0 = cp_monotonic_s(); /* stopped: the target's pause starts here */
	signal_held(pid, h->tid);
	rc = check_and_send(pid, stub, 0, check, ctx, h, err);
	if (!rc && sent)
		sent(ctx, h->tid);
	ptrace(PTRACE_DETACH, h->tid, 0, 0);
	h->held_ms = (cp_monotonic_s() - t0) * 1e3;
	cp_patch_step();
	return rc;
}

/* A hold is made by a thread of its own that ends with it. A thread that
 * does not stop for the interrupt within HOLD_TIMEOUT_S (in a vfork()
 * parent's wait, or uninterruptible I/O) cannot be let go: PTRACE_DETACH
 * wants it stopped, and the interrupt stays pending; it would stop at
 * its next return to user space and wait there, for its tracer, until
 * clockprof exited (a whole window of uprobes, after the fallback). Its
 * tracer is this thread, and the kernel lets go of every tracee of a
 * thread that ends, the interrupt withdrawn. */
struct hijack_job {
	pid_t pid;
	uint64_t stub;
	cp_hijack_check_fn check;
	cp_hijack_sent_fn sent;
	void *ctx;
	struct cp_hijack *h;
	struct cp_error *err;
	int rc;
};

static void *hijack_job_run(void *arg)
{
	struct hijack_job *j = arg;

	j->rc = hijack_here(j->pid, j->stub, j->check, j->sent, j->ctx, j->h, j->err);
	return NULL;
}

int cp_hijack_thread(pid_t pid, uint64_t stub, cp_hijack_check_fn check, cp_hijack_sent_fn sent,
		     void *ctx, struct cp_hijack *h, struct cp_error *err)
{
	struct hijack_job j = { pid, stub, check, sent, ctx, h, err, -1 };
	pthread_t t;

	if (pthread_create(&t, NULL, hijack_job_run, &j))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "cannot start a thread to hold a thread of process %d", pid);
	pthread_join(t, NULL);
	return j.rc;
}

/* A waiting thread's sp and pc from /proc/PID/task/TID/syscall ("NR ARGS
 * SP PC", "-1 SP PC" out of a syscall): 0; 1 while it runs ("running");
 * -1 unreadable. */
static int peek_proc(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[96], line[256], *last = NULL, *before = NULL, *save = NULL;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if (cp_proc_read_text(path, line, sizeof(line)) <= 0)
		return -1;
	if (!strncmp(line, "running", 7))
		return 1;
	for (char *t = strtok_r(line, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
		before = last;
		last = t;
	}
	if (!before)
		return -1;
	*sp = strtoull(before, NULL, 0);
	*pc = strtoull(last, NULL, 0);
	return 0;
}

/* A running thread held for an instant (by a thread of its own, as a
 * hold is: hijack_job) and its registers read. */
struct peek_job {
	pid_t tid;
	uint64_t sp, pc;
	int rc;
};

static void *peek_job_run(void *arg)
{
	struct peek_job *j = arg;
	struct user_regs_struct r;

	if (ptrace(PTRACE_SEIZE, j->tid, 0, 0))
		return NULL;
	if (!ptrace(PTRACE_INTERRUPT, j->tid, 0, 0) && wait_held(j->tid) >= 0 &&
	    !ptrace(PTRACE_GETREGS, j->tid, 0, &r)) {
		j->sp = r.rsp;
		j->pc = r.rip;
		j->rc = 0;
	}
	ptrace(PTRACE_DETACH, j->tid, 0, 0);
	return NULL;
}

int cp_hijack_peek(pid_t pid, pid_t tid, bool may_stop, uint64_t *sp, uint64_t *pc)
{
	struct peek_job j = { tid, 0, 0, -1 };
	pthread_t t;
	int rc = 1;

	for (int tries = 0; tries < 20 && rc == 1; tries++)
		if ((rc = peek_proc(pid, tid, sp, pc)) == 1)
			usleep(1000);
	if (rc != 1)
		return rc;
	if (!may_stop || pthread_create(&t, NULL, peek_job_run, &j))
		return -1;
	pthread_join(t, NULL);
	*sp = j.sp;
	*pc = j.pc;
	return j.rc;
}
