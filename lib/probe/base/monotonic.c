/* monotonic.c - see monotonic.h. */
#include <time.h>

#include "monotonic.h"

double cp_monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
