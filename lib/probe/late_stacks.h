/* late_stacks.h - --stacks without holding the window back: every
 * function's unwind rules (some 46,000 return addresses for a C++ target:
 * libstdc++, libc, libm, ...) are built on a thread of their own from the
 * moment the probes are placed, while the window opens and runs, and put
 * in place when ready. Built before the window opened, they kept
 * the first read from being counted for 35-40 ms more than without
 * --stacks (make bench, "start-up with --stacks").
 *
 * Until the rules are in place the BPF program copies the top of each
 * read's stack (struct cp_stack_copy) instead of walking it; the copies
 * are kept here until the rules are built, then walked by the same rules
 * (cp_unwind_stack) as they come, and their stacks added to the program's
 * own at the window's end: the first reads' stacks are as whole as the
 * rest.
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
	struct cp_session *s;
	pid_t pid;
	/* The target's modules, captured on the window's thread while the
	 * target is surely there (a launched command may be gone a few ms
	 * into the window); the builder reads only their files. */
	struct cp_symbolizer *sym;
	/* The builder thread, and what it leaves for the window's thread
	 * once joined. It may start before the session is open: it waits for
	 * it (or for cancel) under lock to put the rules in place. */
	pthread_t builder;
	bool building;
	pthread_mutex_t lock;
	pthread_cond_t session_set;
	bool lock_made, cancel;
	bool hold_rules;		/* CLOCKPROF_STACK_RULES_AFTER_WINDOW */
	struct cp_unwind_table table;
	bool have_table;
	bool built;			/* table complete: set with release order */
	double ready;			/* monotonic: rules in place; 0 not yet */
	struct cp_error error;		/* why not, when msg is set */
	/* Window's thread only: copies kept until the rules are built, then
	 * walked as they come, into stacks found (one per copy; added up at
	 * the end). */
	struct cp_stack_copy **copies;
	size_t ncopies, cap;
	size_t kept_bytes;
	struct cp_stack_count *walked;
	size_t nwalked, walked_cap;
	uint64_t dropped;		/* not kept: over the memory bound */
};

/* Captures the modules pid maps now and starts building their rules in
 * the background: as soon as the target's modules are mapped, so that the
 * build overlaps the rest of start-up. */
void cp_late_stacks_start(struct cp_late_stacks *ls, pid_t pid);

/* The session the rules go into once built (they wait for it). The
 * window's thread must call cp_late_stacks_keep for each copy s hands it. */
void cp_late_stacks_set_session(struct cp_late_stacks *ls, struct cp_session *s);

/* The libraries changed (dlopen): the rules are built again, with them. */
void cp_late_stacks_restart(struct cp_late_stacks *ls);

/* The cp_session_on_stack_copy callback: keeps a copy of *c. */
void cp_late_stacks_keep(void *arg, const struct cp_stack_copy *c);

/* After the clock window (opened at monotonic window_start): waits for
 * the rules, walks the copies still kept, adds every stack walked from a
 * copy to raw's (the program's) and sets the profile's figures
 * (stacks_from_copies, stack_rules_s), with a warning for stacks that
 * could not be kept or walked. */
void cp_late_stacks_finish(struct cp_late_stacks *ls, struct cp_profile *p,
			   struct cp_raw_places *raw, double window_start);

/* Joins the builder and frees everything (finished or not). */
void cp_late_stacks_free(struct cp_late_stacks *ls);

#endif
