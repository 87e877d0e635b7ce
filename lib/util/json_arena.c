/* json_arena.c - see json_arena.h. */
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

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

static int owned(const struct cp_json_arena *arena, const void *p)
{
	for (const struct cp_json_arena_block *b = arena->blocks; b; b = b->next)
		if (in_block(b, p))
			return 1;
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
}
