/* dl_clock.c - the library dlopen_target loads: three clock reads per
 * call, two of them through this library's own gettimeofday PLT stub. */
#include <stddef.h>
#include <sys/time.h>
#include <time.h>

static volatile long sink;

void dl_clock_read(void)
{
	struct timeval tv;
	struct timespec ts;

	gettimeofday(&tv, NULL);
	gettimeofday(&tv, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	sink += tv.tv_usec + ts.tv_nsec;
}
