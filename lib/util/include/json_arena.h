/* json_arena.h - parsing throwaway JSON documents without malloc.
 *
 * compare parses 60 run files, copies out the few things it judges and
 * drops each document: tens of thousands of small jansson allocations per
 * file, each freed one by one a moment later. jansson lets its allocator be
 * replaced (json_set_alloc_funcs); while an arena is entered on a thread,
 * that thread's jansson allocations are carved from the arena's blocks,
 * frees of them do nothing, and cp_json_arena_reset() drops them all at
 * once, keeping the blocks warm for the next file. Other threads, and
 * this one outside the arena, keep using malloc.
 *
 * Kept because it measurably matters: `bench-compare CLOCKPROF
 * CLOCKPROF-WITHOUT-ARENA` (1,000 measures x 30 runs per side, three
 * interleaved runs on a loaded 2-core host) gave 196/247/362 ms end to end
 * with the arena against 253/367/421 ms without; glibc's malloc, free and
 * fastbin consolidation were 16% of the command's samples without it.
 *
 * The rules that make it safe: a JSON value allocated inside an arena is
 * released (json_decref) only while that arena is entered on this thread,
 * or not at all, and is never used after the arena is reset; copy what
 * must survive (json_deep_copy) after cp_json_arena_leave(). */
#ifndef CP_JSON_ARENA_H
#define CP_JSON_ARENA_H

#include <stddef.h>

struct cp_json_arena_block;

struct cp_json_arena {
	struct cp_json_arena_block *blocks;	/* in use first, then spare */
	struct cp_json_arena_block *current;
	struct cp_json_arena_block **sorted;	/* by address, for frees */
	size_t nsorted, cap;
};

/* Makes this thread's jansson allocations come from arena (zeroed before
 * first use: struct cp_json_arena a = { 0 }). Not nested. */
void cp_json_arena_enter(struct cp_json_arena *arena);

/* Back to malloc on this thread; the arena's values stay readable (but
 * must not be released: free() would get a pointer it never gave). */
void cp_json_arena_leave(void);

/* Forgets every value allocated from arena; keeps its memory for reuse. */
void cp_json_arena_reset(struct cp_json_arena *arena);

/* Gives the arena's memory back (after a reset or leave). */
void cp_json_arena_release(struct cp_json_arena *arena);

#endif
