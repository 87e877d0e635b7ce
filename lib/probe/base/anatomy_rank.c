/* anatomy_rank.c - the percentiles of the anatomy's times
 * (anatomy_parts.h). */
#include <stdlib.h>

#include "anatomy_parts.h"

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t cp_anatomy_rank(uint64_t *v, size_t n, double q)
{
	size_t rank;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), by_value);
	rank = (size_t)(q * (double)n + 0.999999); /* nearest rank, 1-based */
	if (rank < 1)
		rank = 1;
	return v[(rank > n ? n : rank) - 1];
}
