/* late_stacks.h - --stacks without holding the window back: every
 * function's unwind rules (some 46,000 return addresses for a C++ target:
 * libstdc++, libc, libm, ...) are built once the window is open, by a
 * thread of their own, and put in place when ready. Built first, they kept
 * the first read from being counted for 35-40 ms more than without
 * --stacks (make bench, "start-up with --stacks").
 *
 * Until the rules are in place the BPF program copies the top of each
 * read's stack (struct cp_stack_copy) instead of walking it; the copies
 * are kept here and, at the window's end, walked by the same rules
 * (cp_unwind_stack) into the same stack counts as the program's own, so
 * the first reads' stacks are as whole as the rest.
 *
 * CLOCKPROF_STACK_RULES_AFTER_WINDOW=1 in the environment keeps the rules
 * out of the programs for the whole window: every stack is then walked
 * from its copy (the integration tests compare both ways). Inside
 * lib/probe only. */
#ifndef CP_LATE_STACKS_H
#define CP_LATE_STACKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "unwind_table.h"

struct cp_profile;
struct cp_raw_places;
struct cp_session;
struct cp_stack_copy;

struct cp_late_stacks {
	struct cp_session *s;
	pid_t pid;
	/* The builder thread, and what it leaves for the window's thread
	 * once joined. */
	pthread_t builder;
	bool building;
	bool hold_rules;		/* CLOCKPROF_STACK_RULES_AFTER_WINDOW */
	struct cp_unwind_table table;
	bool have_table;
	double ready;			/* monotonic: rules in place; 0 not yet */
	struct cp_error error;		/* why not, when msg is set */
	/* Copies kept until the rules are built (window's thread only). */
	struct cp_stack_copy **copies;
	size_t ncopies, cap;
	size_t kept_bytes;
	uint64_t dropped;		/* not kept: over the memory bound */
};

/* Starts building the rules of every module pid maps now, in the
 * background, to be put in s's programs when built. The window's thread
 * must call cp_late_stacks_keep for each copy s hands it. */
void cp_late_stacks_start(struct cp_late_stacks *ls, struct cp_session *s, pid_t pid);

/* The libraries changed (dlopen): the rules are built again, with them. */
void cp_late_stacks_restart(struct cp_late_stacks *ls);

/* The cp_session_on_stack_copy callback: keeps a copy of *c. */
void cp_late_stacks_keep(void *arg, const struct cp_stack_copy *c);

/* After the clock window (opened at monotonic window_start): waits for
 * the rules, walks every copy kept into raw's stacks (counts added to the
 * program's) and sets the profile's figures (stacks_from_copies,
 * stack_rules_s), with a warning for stacks that could not be kept or
 * walked. */
void cp_late_stacks_finish(struct cp_late_stacks *ls, struct cp_profile *p,
			   struct cp_raw_places *raw, double window_start);

/* Joins the builder and frees everything (finished or not). */
void cp_late_stacks_free(struct cp_late_stacks *ls);

#endif
