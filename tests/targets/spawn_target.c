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
 *   clone_vm      clone(CLONE_VM) without CLONE_VFORK: a child in the
 *                 parent's memory for 3 ms that execs nothing (raw
 *                 syscalls only), while the parent waits for it
 *
 * By construction: 2 reads a request, REQUESTS - 1 requests between the
 * boundaries. The started programs read no clock. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/syscall.h>
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

/* The clone_vm child: it shares the parent's memory and thread pointer,
 * so it calls nothing of the C library's that keeps state. */
static int sleep_3_ms(void *unused)
{
	struct timespec ms = { 0, 3000000 };

	(void)unused;
	syscall(SYS_nanosleep, &ms, NULL);
	syscall(SYS_exit, 0);
	return 0;
}

static pid_t start_true(const char *how)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));

	char *argv[] = { "true", NULL };
	pid_t pid = -1;

	if (!strcmp(how, "posix_spawn"))
		return posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) ? -1 : pid;
	if (!strcmp(how, "clone_vm"))
		return clone(sleep_3_ms, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
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
