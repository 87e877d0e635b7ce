/* clock_point_list.c - the list every finder of clock points fills
 * (clock_points.c for C libraries and PLT stubs, go_clock_points.c for
 * Go's runtime): appending a point, once per probed offset, and freeing
 * the list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_points.h"
#include "grow.h"

int cp_clock_points_add(struct cp_clock_points *cp, uint64_t offset, int entry, int clock, int site,
			const char *what)
{
	struct cp_clock_point *pt;

	for (size_t i = 0; i < cp->n; i++)
		if (cp->points[i].offset == offset)
			return 0; /* an alias: one probe, one count */
	if (cp_grow(&cp->points, &cp->cap, cp->n + 1, sizeof(*cp->points)))
		return -1;
	pt = &cp->points[cp->n++];
	memset(pt, 0, sizeof(*pt));
	pt->offset = offset;
	pt->entry = (uint8_t)entry;
	pt->clock = (int8_t)clock;
	pt->site = (uint8_t)site;
	snprintf(pt->what, sizeof(pt->what), "%s", what);
	return 0;
}

void cp_clock_points_free(struct cp_clock_points *cp)
{
	free(cp->points);
	memset(cp, 0, sizeof(*cp));
}
