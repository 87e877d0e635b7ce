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
 * file (tests/targets/targets.mk).
 *
 * With --anatomy (docs/anatomy.md), by construction, 2 of the 7 could reuse
 * an earlier value, as nothing but a call lies between them: read_mono's
 * (the value now_ns read at inline1, just before) and read_wall_twice's
 * second (its first). The last, at inline2, comes after a syscall (getppid,
 * standing in for the request's I/O): it can observe blocking work, so it
 * is never reusable, however close. */
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
	sink += getppid(); /* the syscall before the last read */
	sink += now_ns() - t0 + i; /* SITE:inline2 */
}

int main(int argc, char **argv)
{
	return callsites_main(argc, argv, handle_request);
}
