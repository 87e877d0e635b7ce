/* dl_requests.h - the requests of the targets that load dl_clock.c's
 * library after they start (dlopen_target, leader_exit_target): one
 * clock_gettime (MONOTONIC) in the program, then, once the library is
 * loaded and lib_read set, its dl_clock_read (three reads). Paced at one
 * a millisecond. */
#ifndef DL_REQUESTS_H
#define DL_REQUESTS_H

#include <time.h>

static void (*lib_read)(void);
static volatile long sink;

__attribute__((noinline)) void handle_request(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec;
	if (lib_read)
		lib_read();
}

static void serve(long n)
{
	struct timespec pace = { 0, 1000000 };

	for (long i = 0; i < n; i++) {
		handle_request();
		nanosleep(&pace, NULL);
	}
}

#endif
