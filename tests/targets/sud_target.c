/* sud_target.c - a thread that runs "guest" code under syscall user
 * dispatch (PR_SET_SYSCALL_USER_DISPATCH), as Wine runs a Windows
 * program's: its selector byte reads BLOCK while it spins reading the
 * clock through the vDSO (no system call), ALLOW while it runs its own
 * code. A system call made while it reads BLOCK is not made: the thread
 * gets a SIGSYS, which Wine's handler takes for the Windows program's
 * own call. This program never makes one; its handler counts them (and
 * lets the thread go on, ALLOW, as Wine's does). The main thread waits
 * on stdin; at its end it prints "sigsys N" and exits 0 when N is 0, 1
 * else, 77 where the kernel has no syscall user dispatch. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#endif

static volatile char selector; /* 0: allow, 1: block */
static atomic_long sigsys;
static atomic_int dispatching;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	selector = 0;
	atomic_fetch_add(&sigsys, 1);
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

static void *guest(void *arg)
{
	struct timespec ts;

	(void)arg;
	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, 1, 0, 0, &selector))
		atomic_store(&dispatching, -1);
	else
		atomic_store(&dispatching, 1);
	for (;;) {
		selector = 1;
		for (int i = 0; i < 1000000; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		selector = 0;
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	pthread_t t;
	char c;

	sigaction(SIGSYS, &sa, NULL);
	if (pthread_create(&t, NULL, guest, NULL))
		return 2;
	while (!atomic_load(&dispatching))
		usleep(1000);
	if (atomic_load(&dispatching) < 0)
		return 77;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	printf("sigsys %ld\n", atomic_load(&sigsys));
	return atomic_load(&sigsys) ? 1 : 0;
}
