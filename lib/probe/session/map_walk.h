/* map_walk.h - every entry of a BPF hash map, read from user space.
 *
 * libbpf gives the two steps (bpf_map__get_next_key, then
 * bpf_map__lookup_elem) and each reader of the session's maps wanted the
 * pair, with the same care: the next key is asked for from a copy of the
 * current one, so an entry the program deletes while it is walked ends
 * nothing but its own turn. */
#ifndef CP_MAP_WALK_H
#define CP_MAP_WALK_H

#include <stddef.h>

struct bpf_map;

/* Calls fn(key, value, arg) for each entry of map whose value can still
 * be read (value NULL when value_size is 0: the keys alone), as long as
 * fn returns 0. Returns fn's nonzero value, -1 when out of memory, else
 * 0. */
int cp_map_walk(struct bpf_map *map, size_t key_size, size_t value_size,
		int (*fn)(const void *key, const void *value, void *arg), void *arg);

#endif
