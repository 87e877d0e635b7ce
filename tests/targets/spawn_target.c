/* spawn_target.c - a reference target whose requests start a program: each
 * request reads CLOCK_MONOTONIC, starts /bin/true the HOW way and waits
 * for it, reads again, and ends with serve_one (the boundary, -r
 * func:serve_one), which reads nothing:
 *
 *   spawn_target HOW REQUESTS [GAP_MS]   (REQUESTS 0: until killed)
 *
 *   posix_spawn   glibc's posix_spawn (clone(CLONE_VM | CLONE_VFORK))
 *   system        glibc's system() (the same, through /bin/sh)
 *   vfork         vfork() then execve(): the child runs in the parent's
 *                 memory, with its thread pointer, until the exec
 *   fork          fork() then execve(), for contrast
 *
 * By construction: 2 reads a request, REQUESTS - 1 requests between the
 * boundaries. The started programs read no clock. */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static volatile long sink;

/* The request boundary: a function the compiler keeps. */
__attribute__((noinline)) void serve_one(long i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}

static pid_t start_true(const char *how)
{
	char *argv[] = { "true", NULL };
	pid_t pid = -1;

	if (!strcmp(how, "posix_spawn"))
		return posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) ? -1 : pid;
	if (!strcmp(how, "vfork"))
		pid = vfork();
	else if (!strcmp(how, "fork"))
		pid = fork();
	else
		return -1;
	if (pid == 0) {
		execve("/bin/true", argv, environ);
		_exit(127);
	}
	return pid;
}

static int one_request(const char *how)
{
	struct timespec ts;
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec;
	if (!strcmp(how, "system")) {
		if (system("/bin/true") != 0)
			return -1;
	} else if ((pid = start_true(how)) < 0 || waitpid(pid, &status, 0) != pid ||
		   !WIFEXITED(status) || WEXITSTATUS(status)) {
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec;
	return 0;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "posix_spawn";
	long requests = argc > 2 ? atol(argv[2]) : 10;
	long gap_ms = argc > 3 ? atol(argv[3]) : 0;
	struct timespec gap = { gap_ms / 1000, gap_ms % 1000 * 1000000 };

	for (long i = 0; requests == 0 || i < requests; i++) {
		if (one_request(how))
			return 1;
		serve_one(i);
		if (gap_ms)
			nanosleep(&gap, NULL);
	}
	return 0;
}
