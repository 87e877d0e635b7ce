/* stacks.h - --stacks: the BPF program's raw user stacks (return addresses,
 * leaf first) turned into named frames, root first, with inlined functions
 * as frames of their own, merged when they name the same path. What the
 * folded and speedscope writers and run.json's `stacks` take. */
#ifndef CP_STACKS_H
#define CP_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

struct cp_symbolizer;

/* One distinct stack and how many clock reads it made. */
struct cp_stack {
	const char *const *frames;	/* root first; names from the target */
	size_t n_frames;
	uint64_t count;
};

struct cp_named_stacks {
	struct cp_stack *stacks;	/* frames root first */
	size_t n;
};

int cp_named_stacks_build(struct cp_symbolizer *sym, const struct cp_stack_count *raw,
		   size_t nraw, struct cp_named_stacks *out);
void cp_named_stacks_free(struct cp_named_stacks *st);

#endif
