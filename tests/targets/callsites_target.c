/* callsites_target.c - reference target with known clock-read call sites.
 *
 * Per request (handle_request), by construction:
 *   handle_request  2 reads, both in now_ns() inlined into it (two sites)
 *   read_mono       1 clock_gettime
 *   read_wall_twice 2 gettimeofday (an IFUNC: straight to the vDSO)
 *   read_time       1 time (an IFUNC: straight to the vDSO)
 *   read_timespec   1 timespec_get (libc timespec_get -> clock_gettime)
 * = 7 reads. The SITE: markers name lines the unit tests look up. Built with
 * and without frame pointers and as a stripped binary with a separate debug
 * file (tests/targets/targets.mk). */
#include <sys/time.h>
#include <time.h>

#include "callsites_common.h"

static volatile long sink;

static inline __attribute__((always_inline)) long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* SITE:now_ns */
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

NOINLINE void read_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* SITE:read_mono */
	sink += ts.tv_nsec;
}

NOINLINE void read_wall_twice(void)
{
	struct timeval tv;

	for (int i = 0; i < 2; i++) {
		gettimeofday(&tv, NULL); /* SITE:read_wall_twice */
		sink += tv.tv_usec;
	}
}

NOINLINE void read_time(void)
{
	sink += time(NULL); /* SITE:read_time */
}

NOINLINE void read_timespec(void)
{
	struct timespec ts;

	timespec_get(&ts, TIME_UTC); /* SITE:read_timespec */
	sink += ts.tv_nsec;
}

NOINLINE void handle_request(long i)
{
	long t0 = now_ns(); /* SITE:inline1 */

	read_mono();
	read_wall_twice();
	read_time();
	read_timespec();
	sink += now_ns() - t0 + i; /* SITE:inline2 */
}

int main(int argc, char **argv)
{
	return callsites_main(argc, argv, handle_request);
}
