/* report_stacks.h - clock-read stacks gathered for the report's flame
 * graphs. Stacks from one or several run documents are merged (same frames,
 * counts added) with frame names interned, on two sides: side 0 is a run or
 * the base, side 1 the head of a comparison. The flame graph's JavaScript
 * builds the tree from the compact form cp_stacks_to_json() gives; the
 * no-JavaScript table of functions comes from cp_stacks_functions(). */
#ifndef CP_REPORT_STACKS_H
#define CP_REPORT_STACKS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "key_table.h"

/* One merged stack (named report_stack: probe/stacks.h has struct cp_stack). */
struct cp_report_stack {
	uint32_t *frames; /* name indices, root first */
	uint32_t n;
	double count[2];
};

struct cp_stacks {
	struct cp_key_table names; /* the frames' names, each once */
	struct cp_report_stack *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *stack_slots;
	size_t stack_slots_cap;
	double total[2];
	int failed; /* out of memory: contents incomplete */
};

/* One function's clock reads: `v[side]` counts every stack that passes
 * through it once, however often it recurses. */
struct cp_func_total {
	uint32_t name;
	double v[2];
};

/* Adds a run document's "stacks" array (entries {frames: [string...],
 * count: number}; malformed entries are skipped) to side. Returns the
 * number of stacks taken. */
size_t cp_stacks_add(struct cp_stacks *s, const json_t *stacks, int side);

/* {"names": [...], "stacks": [[count, frame...], ...]} for one side, or
 * [[base, head, frame...], ...] when sides is 2. New reference. */
json_t *cp_stacks_to_json(const struct cp_stacks *s, int sides);

/* Inclusive reads per function, unsorted, in *out (free() it); returns the
 * number of functions, or (size_t)-1 when out of memory. */
size_t cp_stacks_functions(const struct cp_stacks *s, struct cp_func_total **out);

void cp_stacks_free(struct cp_stacks *s);

#endif
