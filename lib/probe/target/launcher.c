/* launcher.c - see launcher.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <elf.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "launcher.h"
#include "procfs.h"

/* In the child, between fork and exec. Until clockprof holds it through
 * ptrace with PTRACE_O_EXITKILL, the parent's death kills it (PDEATHSIG,
 * with the check for a parent already gone); once held, EXITKILL does, and
 * PDEATHSIG is dropped so that a released command may outlive clockprof. */
static void child_exec(char *const argv[], pid_t parent, int errfd)
{
	sigset_t ours;
	int child_errno;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	/* clockprof blocks these to end its window on them (profile.c);
	 * the command must get them as usual. */
	sigemptyset(&ours);
	sigaddset(&ours, SIGINT);
	sigaddset(&ours, SIGTERM);
	sigaddset(&ours, SIGHUP);
	sigprocmask(SIG_UNBLOCK, &ours, NULL);
	signal(SIGPIPE, SIG_DFL); /* clockprof ignores it (profile_command.c) */
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0 && raise(SIGSTOP) == 0 &&
	    prctl(PR_SET_PDEATHSIG, 0) == 0)
		execvp(argv[0], argv);
	child_errno = errno;
	if (write(errfd, &child_errno, sizeof(child_errno)) < 0)
		_exit(127);
	_exit(127);
}

/* The child stops itself before exec: from here on it dies with us. */
static int hold_child(pid_t child)
{
	int status;

	if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SETOPTIONS, child, NULL,
		   (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD)) ||
	    ptrace(PTRACE_CONT, child, NULL, NULL)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return -1;
	}
	return 0;
}

int cp_launch_held(char *const argv[], pid_t *pid, struct cp_error *err)
{
	int pipefd[2], child_errno = 0, status;
	pid_t child, parent = getpid();
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC))
		return cp_fail(err, CP_EXIT_PROFILE, "pipe: %s", strerror(errno));
	child = fork();
	if (child < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return cp_fail(err, CP_EXIT_PROFILE, "fork: %s", strerror(errno));
	}
	if (child == 0) {
		close(pipefd[0]);
		child_exec(argv, parent, pipefd[1]);
	}
	close(pipefd[1]);
	if (hold_child(child)) {
		close(pipefd[0]);
		return cp_fail(err, CP_EXIT_PROFILE, "cannot hold '%s' before exec", argv[0]);
	}
	/* EOF: exec succeeded (the pipe closed on exec); data: it failed. */
	do
		n = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == sizeof(child_errno)) {
		waitpid(child, &status, 0);
		return cp_fail(err, CP_EXIT_USAGE, "cannot run '%s': %s", argv[0],
			       strerror(child_errno));
	}
	if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) {
		return cp_fail(err, CP_EXIT_PROFILE, "'%s' did not stop after exec as expected",
			       argv[0]);
	}
	*pid = child;
	return 0;
}

int cp_launch_run_to_entry(pid_t pid, struct cp_error *err)
{
	struct user_regs_struct regs;
	uint64_t entry;
	long orig;
	int status;

	if (cp_proc_auxv(pid, AT_ENTRY, &entry))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the entry point of process %d",
			       pid);
	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)entry, NULL);
	if (errno ||
	    ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)entry,
		   (void *)((orig & ~0xffL) | 0xcc)) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot start process %d: %s", pid,
			       strerror(errno));
	for (;;) {
		if (waitpid(pid, &status, 0) != pid)
			return cp_fail(err, CP_EXIT_PROFILE, "lost process %d", pid);
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return cp_fail(
				err, CP_EXIT_PROFILE,
				"the command ended before reaching its entry point (missing library?)");
		if (WSTOPSIG(status) == SIGTRAP)
			break;
		/* Another signal on the way: deliver it and keep going. */
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status)))
			return cp_fail(err, CP_EXIT_PROFILE, "cannot continue process %d", pid);
	}
	/* Undo the int3 and step back onto the entry instruction. */
	if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)entry, (void *)orig) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot restore process %d", pid);
	regs.rip = entry;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot restore process %d", pid);
	return 0;
}

int cp_launch_release(pid_t pid, struct cp_error *err)
{
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot start process %d: %s", pid,
			       strerror(errno));
	return 0;
}
