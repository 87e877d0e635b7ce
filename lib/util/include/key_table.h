/* key_table.h - strings numbered in the order first seen, found again by
 * open addressing: the pprof writer's string, function, mapping and
 * location tables, the report's frame names. Each key is a copy the table
 * owns. The slot table under it serves other keys too (the report's
 * stacks). */
#ifndef CP_KEY_TABLE_H
#define CP_KEY_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* All zero: empty. keys[0..n) are the keys by index. */
struct cp_key_table {
	char **keys;
	size_t n, cap;
	uint32_t *slots; /* index + 1; 0: free */
	size_t nslots;
};

/* Rebuilds the open-addressing slots (index + 1; 0: free) of items
 * 0..n-1 twice as large (first slots the first time, a power of two), each
 * placed by hash(ctx, i). 0, or -1 when out of memory (left as they were). */
int cp_slots_grow(uint32_t **slots, size_t *nslots, size_t first, size_t n,
		  uint64_t (*hash)(const void *ctx, size_t i), const void *ctx);

/* The index of key, adding a copy when new (*added says so); -1 when out
 * of memory. */
long cp_key_index(struct cp_key_table *t, const char *key, bool *added);
void cp_key_table_free(struct cp_key_table *t);

#endif
