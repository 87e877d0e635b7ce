/* patch_execs.c - see patch_execs.h.
 *
 * The hold changes hands first: the program's SIGSTOP would outlast a
 * SIGKILLed clockprof, a ptrace stop does not (the kernel lets a tracee
 * go with its tracer). So the process is seized and interrupted, then
 * sent SIGCONT, which ends the group stop (or cancels a SIGSTOP not yet
 * acted on) while the ptrace stop goes on holding it; until then the
 * session's guard (exec_guard.h) covers it. Its parent may see the stop
 * and the continue (SIGCHLD, WUNTRACED). Then its own thread maps the
 * table and comes back (cp_vdso_stop, which without clockprof just goes
 * on), the code and rules are written, and the thread is sent through the
 * stub as it is let go, so its first instruction runs counted. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "hijack.h"
#include "monotonic.h"
#include "mechanism.h"
#include "patch_boundary.h"
#include "patch_execs.h"
#include "patch_members.h"
#include "session_probes.h"
#include "test_hook.h"
#include "vdso_patch.h"

#define HOLD_WAIT_S 2.0
#define EXECS_AT_ONCE 64

/* The first ptrace stop of a process just seized and interrupted; a
 * signal it was about to take (other than the program's SIGSTOP) in
 * *sig, to be sent again once it runs. */
static int wait_stop(pid_t pid, int *sig)
{
	double until = cp_monotonic_s() + HOLD_WAIT_S;
	int st;

	*sig = 0;
	for (;;) {
		pid_t r = waitpid(pid, &st, __WALL | WNOHANG);

		if (r < 0 || (r > 0 && !WIFSTOPPED(st)))
			return -1;
		if (r > 0) {
			if ((st >> 16) == 0 && WSTOPSIG(st) != SIGSTOP)
				*sig = WSTOPSIG(st);
			return 0;
		}
		if (cp_monotonic_s() > until)
			return -1;
		usleep(50);
	}
}

/* The program's hold turned into clockprof's (see the top). The pid is
 * the held process's only if its start time is (checked once seized,
 * when the pid can no longer change hands): one that exited while held
 * may have given it to a process clockprof must not touch (ESRCH). */
static int take_hold(struct cp_mech *m, pid_t pid, int *sig)
{
	if (!cp_session_still_followed(m->s, (uint32_t)pid)) {
		errno = ESRCH;
		return -1;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD))
		return -1;
	if (!cp_session_still_followed(m->s, (uint32_t)pid)) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		errno = ESRCH;
		return -1;
	}
	cp_patch_step();
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) || wait_stop(pid, sig)) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -1;
	}
	cp_patch_step();
	kill(pid, SIGCONT);
	cp_patch_step();
	return 0;
}

/* The held process pid's new image patched and handed to the session as
 * a member of its own, counting from the zeros of its fresh table; still
 * held. A program that holds the boundary closed in the target closes its
 * requests in that table too (a redirect placed before it is armed). */
static int patch_new_image(struct cp_mech *m, struct cp_patch_members *ms, pid_t pid,
			   const struct cp_patch_boundary *b, struct cp_error *err)
{
	struct cp_vdso_patch *p = NULL;
	char why[200];
	bool armed;

	if (cp_vdso_patch_prepare(pid, true, &p, err))
		return -1;
	if (b && cp_patch_boundary_exec(b, p, pid, why, sizeof(why)))
		cp_mech_warn(
			m,
			"process %d exec()ed a program that holds the request boundary, which cannot be closed in its image: its requests are not counted (%s)",
			(int)pid, why);
	armed = cp_vdso_patch_arm_held(p, pid, err) == 0;
	if (armed) {
		cp_vdso_patch_mark_fresh(p);
		if (cp_session_reimage(m->s, (uint32_t)pid, cp_vdso_patch_table(p)) == 0) {
			if (cp_patch_members_add(ms, pid, p) == 0)
				return 0;
			cp_vdso_patch_free(p);
			return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
		}
		cp_fail(err, CP_EXIT_PROFILE, "its counters could not be handed over");
	}
	/* Perhaps sent through the stub already (it then counts, unread):
	 * kept with the members, to be switched back at the window's end. */
	if (cp_vdso_patch_table(p) && cp_patch_members_add(ms, pid, p) == 0)
		return -1;
	cp_vdso_patch_free(p);
	return -1;
}

/* Tests only, two hooks (test_hook.h). CLOCKPROF_TEST_EXEC_HOLD_MS: the
 * hold taken this many ms late, so that a test can kill clockprof while
 * the program's SIGSTOP alone holds a process (what the session's guard
 * is for). CLOCKPROF_TEST_EXEC_KILL_STEP=N: clockprof SIGKILLs itself at
 * the Nth step of following execs that changes a process (cp_patch_step),
 * so that a test can cut an exec's patch at each step in turn. */
static unsigned kill_step, steps_taken;

static void kill_at_step(void)
{
	if (++steps_taken == kill_step)
		raise(SIGKILL);
}

static void follow_one(struct cp_mech *m, struct cp_patch_members *ms, pid_t pid,
		       const struct cp_patch_boundary *b)
{
	struct cp_error err = { 0 };
	unsigned delay_ms = cp_test_hook("CLOCKPROF_TEST_EXEC_HOLD_MS");
	int sig = 0;
	bool held;

	if (delay_ms)
		usleep(delay_ms * 1000);
	if ((kill_step = cp_test_hook("CLOCKPROF_TEST_EXEC_KILL_STEP")))
		cp_patch_step_hook = kill_at_step;
	held = take_hold(m, pid, &sig) == 0;
	if (!held && errno == ESRCH)
		goto out; /* gone (its exit is in its sums), nothing held */
	if (!held)
		cp_fail(&err, CP_EXIT_PROFILE,
			errno == EPERM ? "it is traced by another process" :
					 "it could not be held");
	else if (patch_new_image(m, ms, pid, b, &err) == 0)
		err.msg[0] = 0;
	if (err.msg[0]) {
		cp_session_exec_unfollowed(m->s, (uint32_t)pid);
		cp_mech_warn(m, "process %d is not counted after its exec: %s", (int)pid, err.msg);
	}
	if (held)
		ptrace(PTRACE_DETACH, pid, 0, 0);
	cp_patch_step();
	if (sig)
		kill(pid, sig);
out:
	cp_patch_step_hook = NULL;
}

void cp_patch_execs_follow(struct cp_mech *m, struct cp_patch_members *ms,
			   const struct cp_patch_boundary *b)
{
	uint32_t pids[EXECS_AT_ONCE];
	size_t n;

	while ((n = cp_session_take_execs(m->s, pids, EXECS_AT_ONCE)) > 0)
		for (size_t i = 0; i < n; i++)
			follow_one(m, ms, (pid_t)pids[i], b);
}
