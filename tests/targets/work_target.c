/* work_target.c - a reference target for a gate on CPU time per request:
 * each request (serve_one, the boundary func:serve_one) reads
 * CLOCK_MONOTONIC K times and then does a fixed amount of work, about
 * 20 us, with no syscall and no sleep, so that its task-clock per request
 * is stable from run to run and K's reads are a small part of it.
 *
 *   work_target K REQUESTS
 *
 * A build that reads once more per request (K + 1) must move
 * clock_reads/op by one and leave task-clock/op where it was: clockprof's
 * own cost must not show as the program's (issue 27's ab gate). */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void serve_one(int k)
{
	struct timespec ts;
	unsigned long x = sink;

	for (int i = 0; i < k; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x += (unsigned long)ts.tv_nsec;
	}
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 1;
	long requests = argc > 2 ? atol(argv[2]) : 1000;

	for (long i = 0; i < requests; i++)
		serve_one(k);
	return 0;
}
