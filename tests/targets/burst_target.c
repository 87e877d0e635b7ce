/* burst_target.c - threads that read the clock as fast as they can, in
 * bursts, and pause all together between them:
 *
 *   burst_target THREADS READS PAUSE_MS
 *
 * Thread i reads CLOCK_MONOTONIC READS times from its own known call site
 * (read_a, read_b or read_c, by i mod 3), then every thread waits at a
 * barrier while the first sleeps PAUSE_MS; again until killed. The pause
 * is a moment in which nothing reads: what a reader of the counters needs
 * to take them and the call sites at one instant (a window's edges).
 * Prints "ready PID" once every thread has read. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t burst_done, pause_done;
static long reads, pause_ms;
static volatile long sink;

static __attribute__((noinline)) long read_a(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	return ts->tv_nsec;	/* after the call: no tail call, its own site */
}

static __attribute__((noinline)) long read_b(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	return ts->tv_nsec;	/* after the call: no tail call, its own site */
}

static __attribute__((noinline)) long read_c(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	return ts->tv_nsec;	/* after the call: no tail call, its own site */
}

static long (*const sites[3])(struct timespec *) = { read_a, read_b, read_c };

static void *run(void *arg)
{
	long i = (long)arg;
	struct timespec ts, pause = { pause_ms / 1000, pause_ms % 1000 * 1000000 };

	for (unsigned long round = 0;; round++) {
		for (long n = 0; n < reads; n++)
			sink += sites[i % 3](&ts);
		pthread_barrier_wait(&burst_done);
		if (i == 0 && round == 0) {
			printf("ready %d\n", getpid());
			fflush(stdout);
		}
		if (i == 0)
			nanosleep(&pause, NULL);
		pthread_barrier_wait(&pause_done);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc == 4 ? atol(argv[1]) : 0;
	pthread_t t;

	reads = argc == 4 ? atol(argv[2]) : 0;
	pause_ms = argc == 4 ? atol(argv[3]) : -1;
	if (threads < 1 || reads < 1 || pause_ms < 0) {
		fprintf(stderr, "usage: burst_target THREADS READS PAUSE_MS\n");
		return 2;
	}
	pthread_barrier_init(&burst_done, NULL, threads);
	pthread_barrier_init(&pause_done, NULL, threads);
	for (long i = 1; i < threads; i++)
		if (pthread_create(&t, NULL, run, (void *)i))
			return 1;
	run(0);
	return 0;
}
