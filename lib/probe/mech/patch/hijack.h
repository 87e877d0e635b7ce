/* hijack.h - sending one thread of a target through code written into it
 * (the stub of vdso_area.S), held by ptrace only for the moment its
 * registers change.
 *
 * The thread is chosen so that the target sees nothing: one running in
 * user space if there is one (a ptrace stop there interrupts no syscall);
 * else one blocked in a syscall that the kernel restarts by itself after a
 * stop (futex, nanosleep, read, poll...); only when every thread waits in
 * a syscall that returns EINTR after a stop (epoll_wait) is one of those
 * taken, and that is said. The thread's resume address is written below
 * its red zone and its rsp and rip changed in one PTRACE_SETREGS, then it
 * is detached at once: it runs the stub and returns on its own, so
 * nothing depends on clockprof from then on. */
#ifndef CP_HIJACK_H
#define CP_HIJACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cp_error;

struct cp_hijack {
	pid_t tid;	/* the thread sent */
	double held_ms; /* from its stop to its release */
	int syscall;	/* the syscall it was stopped in; -1 none */
	bool eintr;	/* ... which returns EINTR to the target */
	unsigned holds; /* threads held, the one sent included
					 * (others had no room for the stub) */
};

/* Tests only: called after each step that changes the target or the
 * thread (attach and detach alike), so that a test can kill clockprof
 * there (tests/patch/vdso_patch_tool.c). NULL in clockprof. */
extern void (*cp_patch_step_hook)(void);

static inline void cp_patch_step(void)
{
	if (cp_patch_step_hook)
		cp_patch_step_hook();
}

/* The most a stub may use of the held thread's stack below the
 * interrupted rsp (vdso_area.S's: 248 bytes, red zone included); a thread
 * is sent only where that room is known to be its stack's
 * (cp_hijack_thread). */
#define CP_HIJACK_STUB_STACK 256

/* How far below the interrupted rsp the stub is entered: the red zone
 * (128 bytes), then the resume address the stub's `ret 128` pops. */
#define CP_HIJACK_STUB_FRAME 136

/* Called while the thread is held (its seccomp filters can be read then);
 * nonzero refuses, with err set. */
typedef int (*cp_hijack_check_fn)(void *ctx, pid_t tid, struct cp_error *err);

/* Called once the held thread is sent through the stub, before it is let
 * go: what the target must hold before the stub may run is written then,
 * when nothing of it can run. */
typedef void (*cp_hijack_sent_fn)(void *ctx, pid_t tid);

/* Sends one thread of pid through stub, one whose stack has room for it.
 * CP_EXIT_PROFILE with err when no thread can be held (already traced,
 * ptrace denied, it exited, no room). */
int cp_hijack_thread(pid_t pid, uint64_t stub, cp_hijack_check_fn check, cp_hijack_sent_fn sent,
		     void *ctx, struct cp_hijack *h, struct cp_error *err);

/* The same for a thread clockprof already holds in a ptrace stop (a
 * command `run` launched): it runs the stub when its holder lets it go. */
int cp_hijack_held(pid_t pid, pid_t tid, uint64_t stub, cp_hijack_check_fn check, void *ctx,
		   struct cp_hijack *h, struct cp_error *err);

/* A thread clockprof holds, sent through stub with its return at stop
 * (vdso_area.S's cp_vdso_stop) instead of where it was, run until it
 * stops at the entry of the getpid there (whose return address is
 * stop_ret), and held again where it was, its registers as they were but
 * a thread pointer the stub gave it. For work the stub must do before the
 * thread's first instruction and clockprof after it (the table mapped,
 * then the code and rules written). Its tracer options must include
 * PTRACE_O_TRACESYSGOOD. If clockprof dies meanwhile, the thread goes on
 * from the stop where it was (or dies with it: a launched command,
 * PTRACE_O_EXITKILL): no state is left half-done. */
int cp_hijack_held_round_trip(pid_t pid, pid_t tid, uint64_t stub, uint64_t stop, uint64_t stop_ret,
			      cp_hijack_check_fn check, void *ctx, struct cp_error *err);

/* Thread tid's stack pointer and instruction pointer in user space, as
 * /proc says them while it waits (no stop); a thread that runs all the
 * while is held for an instant to read them when may_stop, else not
 * read. 0, else -1. */
int cp_hijack_peek(pid_t pid, pid_t tid, bool may_stop, uint64_t *sp, uint64_t *pc);

/* Fails err with why a stopped process is refused: a thread sent through
 * the stub while stopped would run it only at a SIGCONT, after clockprof
 * has stopped waiting for it (and maybe beside a later one's). */
int cp_hijack_refuse_stopped(pid_t pid, struct cp_error *err);

#endif
