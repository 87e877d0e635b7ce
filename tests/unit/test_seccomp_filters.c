/* A thread's seccomp filters judged together, as the kernel runs them:
 * every one on each call, the most restrictive action winning, the one
 * that refuses named as a user counts them; and every filter of a held
 * thread read, however many (the newest were skipped past 64). */
#include <errno.h>
#include <linux/audit.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp_filter.h"
#include "unit.h"

#define STACKED 70

static struct sock_filter allow_all[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };

/* mmap with MAP_NORESERVE in its flags: KILL_PROCESS; the rest allowed. */
static struct sock_filter kill_noreserve[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_NORESERVE, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* One action for mmap, ALLOW for the rest. */
#define ON_MMAP(action) \
	{ \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), \
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 1), \
			BPF_STMT(BPF_RET | BPF_K, action), \
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), \
	}

static struct seccomp_data mmap_call(uint64_t flags)
{
	struct seccomp_data d = { .nr = SYS_mmap, .arch = AUDIT_ARCH_X86_64 };

	d.args[3] = flags;
	return d;
}

TEST(seccomp_judge_runs_every_filter_and_names_the_newest)
{
	struct cp_seccomp_prog progs[STACKED + 1];
	struct seccomp_data calls[2] = { mmap_call(MAP_PRIVATE | MAP_ANONYMOUS),
					 mmap_call(MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE) };
	char why[160] = "";

	for (int i = 0; i < STACKED; i++)
		progs[i] = (struct cp_seccomp_prog){ allow_all, 1 };
	progs[STACKED] = (struct cp_seccomp_prog){ kill_noreserve, 6 };
	CHECK_INT(cp_seccomp_judge(progs, STACKED + 1, calls, 1, why, sizeof(why)), 1);
	CHECK_INT(cp_seccomp_judge(progs, STACKED + 1, calls, 2, why, sizeof(why)), 0);
	CHECK_STR(
		why,
		"the newest of its 71 seccomp filters would not allow syscall 9 (action 0x80000000)");
}

TEST(seccomp_judge_takes_the_most_restrictive_action)
{
	struct sock_filter kill[] = ON_MMAP(SECCOMP_RET_KILL_PROCESS);
	struct sock_filter trap[] = ON_MMAP(SECCOMP_RET_TRAP);
	struct sock_filter eperm[] = ON_MMAP(SECCOMP_RET_ERRNO | EPERM);
	struct sock_filter log[] = ON_MMAP(SECCOMP_RET_LOG);
	struct cp_seccomp_prog progs[3] = { { kill, 4 }, { eperm, 4 }, { eperm, 4 } };
	struct seccomp_data call = mmap_call(0);
	char why[160] = "";

	/* KILL_PROCESS (0x80000000, the lowest read as signed) beats ERRNO. */
	CHECK_INT(cp_seccomp_judge(progs, 3, &call, 1, why, sizeof(why)), 0);
	CHECK_STR(
		why,
		"the oldest of its 3 seccomp filters would not allow syscall 9 (action 0x80000000)");
	progs[0] = (struct cp_seccomp_prog){ eperm, 4 };
	progs[1] = (struct cp_seccomp_prog){ trap, 4 };
	CHECK_INT(cp_seccomp_judge(progs, 3, &call, 1, why, sizeof(why)), 0);
	CHECK_STR(
		why,
		"seccomp filter 2 of its 3 (counted from the oldest) would not allow syscall 9 (action 0x30000)");
	/* ERRNO in two: the kernel reports the newest of a tie. */
	progs[1] = (struct cp_seccomp_prog){ log, 4 };
	CHECK_INT(cp_seccomp_judge(progs, 3, &call, 1, why, sizeof(why)), 0);
	CHECK_STR(why,
		  "the newest of its 3 seccomp filters would not allow syscall 9 (action 0x50000)");
	/* LOG lets the call through. */
	CHECK_INT(cp_seccomp_judge(progs + 1, 1, &call, 1, why, sizeof(why)), 1);
	CHECK_INT(cp_seccomp_judge(progs, 0, &call, 1, why, sizeof(why)), 1);
}

/* A child that stacks STACKED allow-all filters, then kill_noreserve,
 * and stops, traced by this process. */
static pid_t stacked_child(void)
{
	struct sock_fprog allow = { 1, allow_all }, kill = { 6, kill_noreserve };
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (ptrace(PTRACE_TRACEME, 0, 0, 0) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(2);
	for (int i = 0; i < STACKED; i++)
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &allow))
			_exit(2);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &kill))
		_exit(2);
	raise(SIGSTOP);
	_exit(0);
}

TEST(seccomp_every_filter_of_a_held_thread_is_read)
{
	struct seccomp_data call = mmap_call(MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
	char why[160] = "";
	pid_t pid;
	int status, rc;

	/* PTRACE_SECCOMP_GET_FILTER needs CAP_SYS_ADMIN. */
	if (geteuid() != 0) {
		unit_skip("reading a thread's seccomp filters needs root");
		return;
	}
	pid = stacked_child();
	CHECK(pid > 0);
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		CHECK(!"the child stopped with its filters");
	}
	rc = cp_seccomp_allows(pid, &call, 1, why, sizeof(why));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK_INT(rc, 0);
	CHECK_STR(
		why,
		"the newest of its 71 seccomp filters would not allow syscall 9 (action 0x80000000)");
}
