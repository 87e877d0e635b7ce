/* stacks.h - --stacks: the BPF program's raw user stacks (return addresses,
 * leaf first) turned into named frames, root first, with inlined functions
 * as frames of their own, merged when they name the same path. What the
 * folded and speedscope writers and run.json's `stacks` take. */
#ifndef CP_STACKS_H
#define CP_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

struct cp_code_ranges;
struct cp_symbolizer;

/* Where one frame of a stack is: the line it calls the next frame from
 * (or, the leaf's, reads the clock at), and the file mapped there. An
 * address with inlined functions is several frames: the function, then
 * each one inlined, each `inlined` into the frame before it. */
struct cp_frame_pos {
	const char *file;     /* source file; NULL when unknown */
	int line;	      /* 0 when unknown */
	const char *module;   /* the mapped file; NULL outside any */
	const char *build_id; /* its build-id, hex; NULL when none */
	bool inlined;	      /* at the same address as the frame before */
};

/* One distinct stack and how many clock reads it made. */
struct cp_stack {
	const char *const *frames; /* root first; names from the target */
	size_t n_frames;
	uint64_t count;
	/* Each frame's position, as frames; NULL when not known (a stack
	 * built by hand). Stacks that name the same frames from different
	 * lines are distinct. */
	const struct cp_frame_pos *pos;
};

struct cp_named_stacks {
	struct cp_stack *stacks; /* frames root first */
	size_t n;
	/* Reads whose stack was cut where it left the target's code. */
	uint64_t truncated;
};

/* How many frames of key (leaf first) lie in the target's code: up to the
 * first whose address (the leaf's own, each caller's call instruction,
 * the byte before its return address) is in no executable mapping of
 * code, where the walk read a return address out of data (stack memory,
 * ASCII) and everything past it is as wrong; *cut then. code NULL (not
 * known): every frame. */
int cp_stack_depth_in_code(const struct cp_stack_key *key, const struct cp_code_ranges *code,
			   bool *cut);

/* Names raw's stacks, each cut by cp_stack_depth_in_code with the code sym's
 * process maps now (or last mapped, once it has exited). */
int cp_named_stacks_build(struct cp_symbolizer *sym, const struct cp_stack_count *raw, size_t nraw,
			  struct cp_named_stacks *out);
void cp_named_stacks_free(struct cp_named_stacks *st);

#endif
