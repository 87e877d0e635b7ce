/* blocking_target.c - a reference target for the software counters: each
 * request blocks once, so context-switches/op >= 1 by construction (more
 * only when the scheduler also preempts it, or a sleep must be made again).
 *
 *   blocking_target [REQUESTS [SLEEP_US]]
 *
 * A request is one call of handle_request() (the boundary probe
 * func:handle_request counts them): a nanosleep of SLEEP_US microseconds
 * (default 1000) that gives up the CPU (handle_request makes sure). The
 * sleep is also what bounds the request rate; the loop does nothing else.
 * REQUESTS = 0 (the default) serves until killed. */
#define _GNU_SOURCE	/* RUSAGE_THREAD */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static struct timespec block_for;

/* A sleep whose timer has fired before the thread gets to schedule (held
 * up that long by a busy host or a VM's stolen time) returns without giving
 * up the CPU: seen once in 250 requests here. Such a request sleeps again,
 * so that every one has given up the CPU at least once. */
__attribute__((noinline)) int handle_request(void)
{
	struct rusage before, after;
	int rc;

	getrusage(RUSAGE_THREAD, &before);
	do {
		rc = nanosleep(&block_for, NULL);
		getrusage(RUSAGE_THREAD, &after);
	} while (rc == 0 && after.ru_nvcsw == before.ru_nvcsw);
	return rc;
}

int main(int argc, char **argv)
{
	long requests = argc > 1 ? atol(argv[1]) : 0;
	long sleep_us = argc > 2 ? atol(argv[2]) : 1000;

	if (argc > 3 || requests < 0 || sleep_us <= 0) {
		fprintf(stderr, "usage: blocking_target [REQUESTS [SLEEP_US]] (SLEEP_US > 0)\n");
		return 2;
	}
	block_for.tv_sec = sleep_us / 1000000;
	block_for.tv_nsec = sleep_us % 1000000 * 1000;
	for (long i = 0; requests == 0 || i < requests; i++)
		handle_request();
	return 0;
}
