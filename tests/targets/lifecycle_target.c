/* lifecycle_target.c - a reference target for a window the target leaves
 * or shares: it reads the clock a known number of times, then
 *
 *   lifecycle_target exec N PROG [ARG...]   execs PROG (whose reads must not
 *                                           be counted)
 *   lifecycle_target fork N M               starts a child process that
 *                                           reads M times (not counted),
 *                                           waits for it, reads N again
 *
 * N reads are clock_gettime(CLOCK_MONOTONIC) via the vDSO; nothing else in
 * it reads the clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

static void reads(int n)
{
	struct timespec ts;

	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0, status;
	pid_t child;

	if (argc > 3 && !strcmp(argv[1], "exec")) {
		reads(n);
		execvp(argv[3], argv + 3);
		perror("exec");
		return 127;
	}
	if (argc > 3 && !strcmp(argv[1], "fork")) {
		reads(n);
		child = fork();
		if (child == 0) {
			reads(atoi(argv[3]));
			_exit(0);
		}
		if (child < 0 || waitpid(child, &status, 0) != child)
			return 1;
		reads(n);
		return 0;
	}
	fprintf(stderr, "usage: lifecycle_target exec N PROG [ARG...] | fork N M\n");
	return 2;
}
