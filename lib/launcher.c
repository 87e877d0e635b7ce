/* launcher.c - see launcher.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "launcher.h"

int cp_launch_held(char *const argv[], pid_t *pid, struct cp_error *err)
{
	int pipefd[2], child_errno = 0, status;
	ssize_t n;
	pid_t child;

	if (pipe2(pipefd, O_CLOEXEC))
		return cp_fail(err, CP_EXIT_PROFILE, "pipe: %s", strerror(errno));
	child = fork();
	if (child < 0)
		return cp_fail(err, CP_EXIT_PROFILE, "fork: %s", strerror(errno));
	if (child == 0) {
		close(pipefd[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		child_errno = errno;
		if (write(pipefd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
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
		return cp_fail(err, CP_EXIT_PROFILE,
			       "'%s' did not stop after exec as expected", argv[0]);
	}
	*pid = child;
	return 0;
}

int cp_launch_release(pid_t pid, struct cp_error *err)
{
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot start process %d: %s",
			       pid, strerror(errno));
	return 0;
}

void cp_describe_exit(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exit code %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by SIG%s", sigabbrev_np(WTERMSIG(status)) ?
			 sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, size, "status 0x%x", status);
}
