/* callsites_common.h - the request loop shared by the call-site targets.
 *
 * usage: TARGET [REQUESTS [RATE]]
 *   REQUESTS  requests to serve, then exit 0 (default 0: until killed)
 *   RATE      requests per second, at most (default 500; 0: no pause)
 * Prints "ready <pid>" on standard output once loaded, before the first
 * request, so a test knows the libraries are mapped. The loop itself reads
 * no clock: it paces with nanosleep and a fixed pause. It counts the
 * requests served in callsites_served, which a benchmark reads from the
 * process's memory (the CPU a request costs, tests/bench/demo_share.py).
 * For that benchmark only, CALLSITES_TSC set in the environment times each
 * request in TSC ticks (rdtscp: no clock read clockprof sees), kept in a
 * ring it reads too, with the ticks per microsecond measured once before
 * "ready" (two clock reads there, outside every request). */
#ifndef CALLSITES_COMMON_H
#define CALLSITES_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define NOINLINE __attribute__((noinline))
#define CALLSITES_RING 4096

volatile long callsites_served;
volatile unsigned long callsites_ticks[CALLSITES_RING];
volatile double callsites_ticks_per_us;

static unsigned long callsites_tsc(void)
{
	unsigned aux;

	return __rdtscp(&aux);
}

/* TSC ticks per microsecond, over 50 ms of CLOCK_MONOTONIC. */
static double callsites_tsc_rate(void)
{
	struct timespec a, b, pause = { 0, 50000000 };
	unsigned long t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = callsites_tsc();
	nanosleep(&pause, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	t1 = callsites_tsc();
	return (double)(t1 - t0) /
	       ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3);
}

static int callsites_main(int argc, char **argv, void (*handle)(long))
{
	long requests = argc > 1 ? atol(argv[1]) : 0;
	long rate = argc > 2 ? atol(argv[2]) : 500;
	struct timespec pause = { 0, 0 };
	int timed = getenv("CALLSITES_TSC") != NULL;

	if (requests < 0 || rate < 0) {
		fprintf(stderr, "usage: %s [REQUESTS [RATE]]\n", argv[0]);
		return 2;
	}
	if (rate > 0)
		pause.tv_nsec = 1000000000L / rate;
	if (timed)
		callsites_ticks_per_us = callsites_tsc_rate();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long i = 0; requests == 0 || i < requests; i++) {
		unsigned long t0 = timed ? callsites_tsc() : 0;

		handle(i);
		if (timed)
			callsites_ticks[i % CALLSITES_RING] = callsites_tsc() - t0;
		callsites_served = i + 1;
		if (rate > 0)
			nanosleep(&pause, NULL);
	}
	return 0;
}

#endif
