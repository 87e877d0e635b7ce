/* late_stacks.h - --stacks without holding the window back: every
 * function's unwind rules (some 46,000 return addresses for a C++ target:
 * libstdc++, libc, libm, ...) are built on a thread of their own from the
 * moment the probes are placed, while the window opens and runs, and put
 * in place when ready. Built before the window opened, they kept the first
 * read from being counted for 35-40 ms more than without --stacks (make
 * bench, "start-up with --stacks").
 *
 * Until the rules are in place the BPF program copies the top of each
 * read's stack (struct cp_stack_copy) instead of walking it; the copies
 * are kept here until the rules are built, then walked by the same rules
 * (cp_unwind_stack) as they are read out, and their stacks added to the
 * program's own at the window's end. Rules that cannot be built leave an
 * empty table: the program and the copies' walk then follow frame pointers
 * alone, as they would for code without CFI. When the libraries change
 * (dlopen), the builder builds them again once it is done, without
 * stopping the window's thread.
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
struct cp_symbolizer;

struct cp_late_stacks {
	pid_t pid;
	bool hold_rules; /* CLOCKPROF_STACK_RULES_AFTER_WINDOW */
	/* The target's modules for the first build, captured on the window's
	 * thread while the target is surely there (a launched command may be
	 * gone a few ms into the window); the builder reads only their files
	 * and closes it. */
	struct cp_symbolizer *sym;
	struct cp_session *s; /* where the rules go */
	pthread_t builder;
	bool thread_made; /* a builder to join */
	/* Shared with the builder under lock. */
	pthread_mutex_t lock;
	bool lock_made;
	bool running; /* the builder has work left */
	bool rebuild; /* the libraries changed meanwhile */
	bool cancel;  /* the window is over: no rules go in now */
	/* The builder's until joined, except `built`. */
	struct cp_unwind_table table; /* the first rules: copies are walked by them */
	bool built;		      /* table complete (release/acquire) */
	double ready;		      /* monotonic: rules first in place; 0 not */
	struct cp_error error;	      /* why rules are missing, when msg is set */
	/* The window's thread only: copies kept until the rules are built,
	 * then the stacks walked from them (merged as the array fills). */
	struct cp_stack_copy **copies;
	size_t ncopies, cap;
	size_t kept_bytes;
	struct cp_stack_count *walked;
	size_t nwalked, walked_cap;
	uint64_t dropped; /* copies not kept or walked: over the bounds */
	bool finished;
};

/* Captures the modules pid maps now and starts building their rules in
 * the background, to go into s's programs: as soon as the target's modules
 * are mapped and the session is open, so that the build overlaps the rest
 * of start-up. The window's thread must call cp_late_stacks_keep for each
 * copy s hands it. */
void cp_late_stacks_start(struct cp_late_stacks *ls, struct cp_session *s, pid_t pid);

/* The libraries changed (dlopen): the rules are built again, with them,
 * once the builder is free; returns at once. */
void cp_late_stacks_restart(struct cp_late_stacks *ls);

/* The cp_session_on_stack_copy callback: keeps a copy of *c, or walks it
 * when the rules are built. */
void cp_late_stacks_keep(void *arg, const struct cp_stack_copy *c);

/* After the clock window (monotonic window_start to window_end): no rules
 * go in any more; waits for the builder, walks the copies still kept, adds
 * every stack walked from a copy to raw's (the program's) and sets the
 * profile's figures (stacks_from_copies, stack_rules_s), with a warning for
 * stacks that could not be kept or walked whole. */
void cp_late_stacks_finish(struct cp_late_stacks *ls, struct cp_profile *p,
			   struct cp_raw_places *raw, double window_start, double window_end);

/* Joins the builder and frees everything (finished or not). */
void cp_late_stacks_free(struct cp_late_stacks *ls);

#endif
