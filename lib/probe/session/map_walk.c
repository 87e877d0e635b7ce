/* map_walk.c - see map_walk.h. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map_walk.h"

int cp_map_walk(struct bpf_map *map, size_t key_size, size_t value_size,
		int (*fn)(const void *key, const void *value, void *arg), void *arg)
{
	/* the value first, where malloc aligns it for any type */
	unsigned char *value = malloc(value_size + 2 * key_size + 1);
	unsigned char *key = value + value_size, *next = key + key_size;
	const void *prev = NULL;
	int rc = 0;

	if (!value)
		return -1;
	while (!rc && bpf_map__get_next_key(map, prev, next, key_size) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		if (value_size && bpf_map__lookup_elem(map, key, key_size, value, value_size, 0))
			continue;
		rc = fn(key, value_size ? value : NULL, arg);
	}
	free(value);
	return rc;
}
