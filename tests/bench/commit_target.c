/* commit_target.c - a target for tests/bench/attach_cost.py's commit
 * figures: THREADS threads read the clock (a few reads, then a 1 ms
 * sleep, until killed); the main thread reads nothing and, at each
 * SIGUSR1, forks a child that waits until killed and prints its pid. It
 * prints "ready" once every thread has read the clock. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_int started;
static volatile long sink;

static void *reader(void *unused)
{
	struct timespec ts, nap = { 0, 1000000 };

	(void)unused;
	for (int i = 0;; i++) {
		for (int k = 0; k < 4; k++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += ts.tv_nsec;
		}
		if (i == 0)
			atomic_fetch_add(&started, 1);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4, sig;
	sigset_t set;
	pthread_t t;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* the threads inherit it */
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t, NULL, reader, NULL))
			return 1;
	while (atomic_load(&started) < threads)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	while (sigwait(&set, &sig) == 0) {
		pid_t pid = fork();

		if (pid == 0)
			for (;;)
				pause();
		printf("%d\n", (int)pid);
		fflush(stdout);
	}
	return 1;
}
