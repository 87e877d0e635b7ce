/* callsites_lib.c - libcallsites.so: the program's own shared library, so
 * the call site of its reads is here (program -> libcallsites.so -> libc). */
#include <time.h>

volatile long callsites_lib_sink;

__attribute__((noinline)) long lib_read_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts); /* SITE:lib_read_clock */
	callsites_lib_sink += ts.tv_nsec;
	return ts.tv_nsec;
}
