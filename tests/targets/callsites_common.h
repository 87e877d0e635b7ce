/* callsites_common.h - the request loop shared by the call-site targets.
 *
 * usage: TARGET [REQUESTS [RATE]]
 *   REQUESTS  requests to serve, then exit 0 (default 0: until killed)
 *   RATE      requests per second, at most (default 500; 0: no pause)
 * Prints "ready <pid>" on standard output once loaded, before the first
 * request, so a test knows the libraries are mapped. The loop itself reads
 * no clock: it paces with nanosleep and a fixed pause. */
#ifndef CALLSITES_COMMON_H
#define CALLSITES_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static int callsites_main(int argc, char **argv, void (*handle)(long))
{
	long requests = argc > 1 ? atol(argv[1]) : 0;
	long rate = argc > 2 ? atol(argv[2]) : 500;
	struct timespec pause = { 0, 0 };

	if (requests < 0 || rate < 0) {
		fprintf(stderr, "usage: %s [REQUESTS [RATE]]\n", argv[0]);
		return 2;
	}
	if (rate > 0)
		pause.tv_nsec = 1000000000L / rate;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long i = 0; requests == 0 || i < requests; i++) {
		handle(i);
		if (rate > 0)
			nanosleep(&pause, NULL);
	}
	return 0;
}

#endif
