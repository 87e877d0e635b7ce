/* thread_spawner.c - a reference target that keeps creating threads, for
 * attaching while threads are born (and die) underneath the attach.
 *
 *   thread_spawner [K [R [INTERVAL_MS [THREADS]]]]
 *
 * Every INTERVAL_MS (default 10) the main thread starts a new short-lived
 * thread that calls handle_request() R times (default 20), 1 ms apart so
 * a few threads are alive at any time, each call doing exactly K (default
 * 3) clock_gettime(CLOCK_MONOTONIC) reads, then exits.
 * THREADS threads in all (0, the default: until killed). Nothing else
 * reads the clock: the main thread waits with nanosleep, so per request
 * the figure is K by construction and a run's histogram is one bucket, K.
 * Threads are detached: the rate of thread creation, not their number, is
 * what the target stresses. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int k = 3, requests = 20;
static volatile long sink;

/* The request boundary: noinline so a uprobe can find it. */
__attribute__((noinline)) void handle_request(void)
{
	struct timespec ts;

	for (int i = 0; i < k; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < requests; r++) {
		handle_request();
		sleep_ms(1);
	}
	return NULL;
}

static void spawn(void)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Thread creation may fail transiently (EAGAIN): skip that tick. */
	if (pthread_create(&t, &attr, worker, NULL))
		perror("pthread_create");
	pthread_attr_destroy(&attr);
}

int main(int argc, char **argv)
{
	long interval = 10, threads = 0;

	if (argc > 1)
		k = atoi(argv[1]);
	if (argc > 2)
		requests = atoi(argv[2]);
	if (argc > 3)
		interval = atol(argv[3]);
	if (argc > 4)
		threads = atol(argv[4]);
	if (k < 1 || requests < 1 || interval < 1 || threads < 0) {
		fprintf(stderr, "usage: thread_spawner [K [R [INTERVAL_MS [THREADS]]]]\n");
		return 2;
	}
	for (long n = 0; threads == 0 || n < threads; n++) {
		spawn();
		sleep_ms(interval);
	}
	/* Let the last workers finish before the process (and they) exit. */
	sleep_ms(100);
	return 0;
}
