/* child_reap.c - the end of a command clockprof launched: it outlives a
 * window that ended by duration or signal, and clockprof exits when it
 * does. See profile_window.h. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile_window.h"

/* Asks the command to end (the window's signal, else SIGTERM; SIGKILL
 * after two seconds) and reports its wait status. */
void cp_child_finish(struct cp_profile *p, int end_signal)
{
	int status = 0;

	if (!p->target_exited) {
		kill(p->target.pid, end_signal ? end_signal : SIGTERM);
		for (int i = 0; i < 200; i++) {
			if (waitpid(p->target.pid, &status, WNOHANG) == p->target.pid)
				goto reaped;
			usleep(10000);
		}
		kill(p->target.pid, SIGKILL);
	}
	if (waitpid(p->target.pid, &status, 0) != p->target.pid)
		return;
reaped:
	p->exit_status = status;
}

/* A command still held at exec when set-up failed: never left behind. */
void cp_child_kill_held(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int cp_profile_command_status(const struct cp_profile *p)
{
	if (!p->launched || !p->target_exited)
		return 0;
	if (WIFEXITED(p->exit_status))
		return WEXITSTATUS(p->exit_status);
	if (WIFSIGNALED(p->exit_status))
		return 128 + WTERMSIG(p->exit_status);
	return 0;
}
