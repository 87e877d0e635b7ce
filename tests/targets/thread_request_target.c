/* thread_request_target.c - a thread-per-request reference target: each
 * request is a new thread, which the main thread joins before it creates
 * the next, so glibc gives each the last one's cached stack, and with it
 * the same thread pointer (fs:0):
 *
 *   thread_request_target REQUESTS [GAP_MS]   (REQUESTS 0: until killed)
 *
 * Each thread reads CLOCK_MONOTONIC once, passes serve_one (the boundary,
 * -r func:serve_one), reads twice, passes it again, and reads three times
 * before it exits; the main thread reads nothing. By construction, a
 * request being the reads between two boundaries of one thread: 6 reads a
 * thread, 1 request a thread, 2 reads in each. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) void serve_one(long i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}

static void reads(int n)
{
	struct timespec ts;

	for (int r = 0; r < n; r++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

static void *request(void *arg)
{
	reads(1);
	serve_one((long)arg);
	reads(2);
	serve_one((long)arg);
	reads(3);
	return NULL;
}

int main(int argc, char **argv)
{
	long requests = argc > 1 ? atol(argv[1]) : 10;
	long gap_ms = argc > 2 ? atol(argv[2]) : 0;
	struct timespec gap = { gap_ms / 1000, gap_ms % 1000 * 1000000 };

	for (long i = 0; requests == 0 || i < requests; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, request, (void *)i) || pthread_join(t, NULL))
			return 1;
		if (gap_ms)
			nanosleep(&gap, NULL);
	}
	return 0;
}
