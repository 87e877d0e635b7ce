/* blocking_target.c - a reference target for the software counters: each
 * request blocks exactly once, so context-switches/op >= 1 by construction
 * (more only when the scheduler also preempts it).
 *
 *   blocking_target [REQUESTS [SLEEP_US]]
 *
 * A request is one call of handle_request() (the boundary probe
 * func:handle_request counts them): a nanosleep of SLEEP_US microseconds
 * (default 1000), which always gives up the CPU. The sleep is also what
 * bounds the request rate; the loop does nothing else. REQUESTS = 0 (the
 * default) serves until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct timespec block_for;

__attribute__((noinline)) int handle_request(void)
{
	return nanosleep(&block_for, NULL);
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
