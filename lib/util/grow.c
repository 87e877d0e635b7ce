/* grow.c - see grow.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

int cp_grow(void *items_ptr, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *items, *grown;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -1;
		c *= 2;
	}
	if (elem && c > SIZE_MAX / elem)
		return -1;
	/* The pointer is read and written through its bytes: items_ptr may
	 * point at any object pointer type. */
	memcpy(&items, items_ptr, sizeof(items));
	grown = realloc(items, c * elem);
	if (!grown)
		return -1;
	memcpy(items_ptr, &grown, sizeof(grown));
	*cap = c;
	return 0;
}

void cp_free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
