/* wrapper_sites_target.c - one request reads the clock once through each C
 * library wrapper that calls clock_gettime itself (clock, ftime; and, in
 * musl, gettimeofday, time and timespec_get too), each on a line of its
 * own marked "SITE:<the function called>": the call site must be that
 * line, named via that function, under glibc and under static musl.
 *
 * usage: wrapper_sites_target [REQUESTS [RATE]] (callsites_common.h) */
#include <sys/time.h>
#include <sys/timeb.h>
#include <time.h>

#include "callsites_common.h"

static volatile long sink;

NOINLINE void handle_request(long i)
{
	struct timeval tv;
	struct timespec ts;
	struct timeb tb;

	sink += (long)clock(); // SITE:clock
	ftime(&tb); // SITE:ftime
	gettimeofday(&tv, NULL); // SITE:gettimeofday
	sink += time(NULL); // SITE:time
	timespec_get(&ts, TIME_UTC); // SITE:timespec_get
	sink += i + tb.millitm + tv.tv_usec + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	return callsites_main(argc, argv, handle_request);
}
