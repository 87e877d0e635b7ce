/* syscall_read_target.c - the demo's request (callsites_target.c) with one
 * of its reads made through the C library's syscall(): a direct clock
 * syscall, which passes no vDSO entry. Built against glibc and against
 * musl, dynamic and static (tests/targets/targets.mk): each C library's
 * syscall() must count it in its request.
 *
 * Per request (handle_request), by construction:
 *   handle_request  2 clock_gettime, in now_ns() inlined into it
 *   read_direct     1 syscall(SYS_clock_gettime, ...)
 *   read_wall_twice 2 gettimeofday
 *   read_time       1 time
 *   read_timespec   1 timespec_get
 * = 7 reads, 1 of them on the syscall path.
 *
 * usage: syscall_read_target [REQUESTS [RATE]] (callsites_common.h) */
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "callsites_common.h"

static volatile long sink;

static inline __attribute__((always_inline)) long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

NOINLINE void read_direct(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts); // SITE:syscall
	sink += ts.tv_nsec;
}

NOINLINE void read_wall_twice(void)
{
	struct timeval tv;

	for (int i = 0; i < 2; i++) {
		gettimeofday(&tv, NULL);
		sink += tv.tv_usec;
	}
}

NOINLINE void read_time(void)
{
	sink += time(NULL);
}

NOINLINE void read_timespec(void)
{
	struct timespec ts;

	timespec_get(&ts, TIME_UTC);
	sink += ts.tv_nsec;
}

NOINLINE void handle_request(long i)
{
	long t0 = now_ns();

	read_direct();
	read_wall_twice();
	read_time();
	read_timespec();
	sink += now_ns() - t0 + i;
}

int main(int argc, char **argv)
{
	return callsites_main(argc, argv, handle_request);
}
