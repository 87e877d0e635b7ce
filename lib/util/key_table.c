/* key_table.c - see key_table.h. */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "key_table.h"

/* FNV-1a. */
static uint64_t hash_key(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static uint64_t hash_of_key(const void *ctx, size_t i)
{
	return hash_key(((const struct cp_key_table *)ctx)->keys[i]);
}

int cp_slots_grow(uint32_t **slots, size_t *nslots, size_t first, size_t n,
		  uint64_t (*hash)(const void *ctx, size_t i), const void *ctx)
{
	size_t cap = *nslots ? *nslots * 2 : first;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t j = hash(ctx, i) & (cap - 1);

		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i + 1;
	}
	free(*slots);
	*slots = t;
	*nslots = cap;
	return 0;
}

long cp_key_index(struct cp_key_table *t, const char *key, bool *added)
{
	char *copy;
	size_t j;

	*added = false;
	if ((t->n + 1) * 2 > t->nslots &&
	    cp_slots_grow(&t->slots, &t->nslots, 256, t->n, hash_of_key, t))
		return -1;
	for (j = hash_key(key) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
		if (!strcmp(t->keys[t->slots[j] - 1], key))
			return (long)t->slots[j] - 1;
	copy = strdup(key);
	if (!copy || cp_grow(&t->keys, &t->cap, t->n + 1, sizeof(*t->keys))) {
		free(copy);
		return -1;
	}
	t->keys[t->n] = copy;
	t->slots[j] = (uint32_t)t->n + 1;
	*added = true;
	return (long)t->n++;
}

void cp_key_table_free(struct cp_key_table *t)
{
	cp_free_strings(t->keys, t->n);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
