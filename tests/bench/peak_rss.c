/* peak_rss.c - runs a command and prints "WALL_S MAXRSS_KIB EXIT" for it:
 * wall time from fork to reaped, and the kernel's peak RSS of the
 * command (wait4's ru_maxrss). The command is forked from this small
 * program, not from the benchmark's Python: ru_maxrss also holds what
 * the process held before its exec, a fork of its parent. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.6f %ld %d\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
