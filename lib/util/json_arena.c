/* json_arena.c - see json_arena.h. */
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"
#include "json_arena.h"

/* A run file of 1,000 measures parses into about 1 MiB of values. */
#define BLOCK_BYTES (4u << 20)
#define ALIGNMENT 16u

struct cp_json_arena_block {
	struct cp_json_arena_block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

static __thread struct cp_json_arena *current_arena;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static int in_block(const struct cp_json_arena_block *b, const void *p)
{
	uintptr_t a = (uintptr_t)p, start = (uintptr_t)b->data;

	return a >= start && a < start + b->size;
}

/* jansson frees as it parses (grown buffers, rehashed tables): a lookup
 * per free. The blocks' start addresses are kept sorted, so a document of a
 * million values costs a binary search per free, not a walk of hundreds of
 * blocks (which made parsing quadratic in the file's size). */
static int owned(const struct cp_json_arena *arena, const void *p)
{
	size_t lo = 0, hi = arena->nsorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)arena->sorted[mid]->data <= (uintptr_t)p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && in_block(arena->sorted[lo - 1], p);
}

static int remember_block(struct cp_json_arena *arena, struct cp_json_arena_block *b)
{
	size_t i = arena->nsorted;

	if (cp_grow(&arena->sorted, &arena->cap, arena->nsorted + 1, sizeof(*arena->sorted)))
		return -1;
	while (i > 0 && (uintptr_t)arena->sorted[i - 1] > (uintptr_t)b) {
		arena->sorted[i] = arena->sorted[i - 1];
		i--;
	}
	arena->sorted[i] = b;
	arena->nsorted++;
	return 0;
}

static struct cp_json_arena_block *new_block(size_t size)
{
	struct cp_json_arena_block *b = malloc(sizeof(*b) + size);

	if (b) {
		b->next = NULL;
		b->size = size;
		b->used = 0;
	}
	return b;
}

static void *arena_alloc(struct cp_json_arena *arena, size_t n)
{
	struct cp_json_arena_block *b = arena->current, *fresh;

	if (n > SIZE_MAX - sizeof(*b) - ALIGNMENT)
		return NULL;	/* rounding or the block header would wrap */
	n = (n + ALIGNMENT - 1) & ~(size_t)(ALIGNMENT - 1);
	/* Spare blocks after the current one are reused in order. */
	while (b && b->used + n > b->size && b->next) {
		b = b->next;
		b->used = 0;
	}
	if (b && b->used + n <= b->size) {
		arena->current = b;
		b->used += n;
		return b->data + b->used - n;
	}
	fresh = new_block(n > BLOCK_BYTES ? n : BLOCK_BYTES);
	if (!fresh)
		return NULL;
	if (remember_block(arena, fresh)) {
		free(fresh);
		return NULL;
	}
	/* Appended after the current block: the list stays in use order. */
	if (b) {
		fresh->next = b->next;
		b->next = fresh;
	} else {
		arena->blocks = fresh;
	}
	arena->current = fresh;
	fresh->used = n;
	return fresh->data;
}

static void *hook_malloc(size_t n)
{
	return current_arena ? arena_alloc(current_arena, n) : malloc(n);
}

static void hook_free(void *p)
{
	if (p && current_arena && owned(current_arena, p))
		return;		/* goes with the arena's reset */
	free(p);
}

/* Process-wide, but harmless to everyone else: outside an arena the
 * hooks are malloc and free, so values allocated before they were
 * installed are still freed correctly. */
static void install_hooks(void)
{
	json_set_alloc_funcs(hook_malloc, hook_free);
}

void cp_json_arena_enter(struct cp_json_arena *arena)
{
	pthread_once(&hooks_once, install_hooks);
	current_arena = arena;
}

void cp_json_arena_leave(void)
{
	current_arena = NULL;
}

void cp_json_arena_reset(struct cp_json_arena *arena)
{
	arena->current = arena->blocks;
	if (arena->blocks)
		arena->blocks->used = 0;
}

void cp_json_arena_release(struct cp_json_arena *arena)
{
	struct cp_json_arena_block *b = arena->blocks, *next;

	if (current_arena == arena)
		current_arena = NULL;
	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	arena->blocks = arena->current = NULL;
	free(arena->sorted);
	arena->sorted = NULL;
	arena->nsorted = arena->cap = 0;
}
