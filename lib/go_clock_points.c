/* go_clock_points.c - placeholder until the Go finder lands. */
#include "clock_points.h"

int cp_go_clock_points_find(const char *path, struct cp_clock_points *out)
{
	(void)path;
	(void)out;
	return 0;
}
