/* late_stacks.c - see late_stacks.h. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "grow.h"
#include "late_stacks.h"
#include "profile_window.h"
#include "session.h"
#include "symbolize.h"

/* The copies kept while the rules are built: 5,400 to 8,000 of them (8-12
 * KiB each). The rules take 20-100 ms, so only a target reading the clock
 * more than ~80,000 times a second from the start overruns it (said, not
 * hidden). */
#define KEPT_BYTES_MAX (64u << 20)

/* Stacks walked from copies held before they are added up: when full they
 * are merged in place, so they stay bounded (~17 MiB) like the program's
 * own stack map. */
#define WALKED_MAX (4 * CP_MAX_STACKS)

/* ---- the builder thread ------------------------------------------------ */

/* Puts t in the programs unless the window is over; the first time it is
 * in place is the run's stack_rules_s. */
static void put_in_place(struct cp_late_stacks *ls, const struct cp_unwind_table *t)
{
	bool cancel;

	pthread_mutex_lock(&ls->lock);
	cancel = ls->cancel;
	pthread_mutex_unlock(&ls->lock);
	if (cancel || ls->hold_rules || cp_session_set_stack_rules(ls->s, t, &ls->error))
		return;
	if (!ls->ready)
		ls->ready = cp_monotonic_s();
}

/* Whether the libraries changed while the builder worked (and the window
 * goes on); when not, the builder is done. */
static bool next_rebuild(struct cp_late_stacks *ls)
{
	bool again;

	pthread_mutex_lock(&ls->lock);
	again = ls->rebuild && !ls->cancel;
	ls->rebuild = false;
	ls->running = again;
	pthread_mutex_unlock(&ls->lock);
	return again;
}

/* The rules again, of the modules mapped now (the target is there: it has
 * just loaded a library), for the programs only: copies are walked by the
 * first rules, since none are made once rules are in place. */
static void rebuild(struct cp_late_stacks *ls)
{
	struct cp_symbolizer *sym = cp_symbolizer_open(ls->pid, &ls->error);
	struct cp_unwind_table t;

	if (sym && cp_unwind_table_build_all(sym, true, &t, &ls->error) == 0) {
		put_in_place(ls, &t);
		cp_unwind_table_free(&t);
	}
	cp_symbolizer_close(sym);
}

/* The builder: the first rules (an empty table when they cannot be built:
 * frame pointers alone then), put in place, then again for as long as the
 * libraries change. */
static void *build_rules(void *arg)
{
	struct cp_late_stacks *ls = arg;

	if (!__atomic_load_n(&ls->built, __ATOMIC_ACQUIRE)) {
		if (ls->sym)
			cp_unwind_table_build_all(ls->sym, true, &ls->table, &ls->error);
		cp_symbolizer_close(ls->sym);
		ls->sym = NULL;
		__atomic_store_n(&ls->built, true, __ATOMIC_RELEASE);
		put_in_place(ls, &ls->table);
	} else {
		rebuild(ls);
	}
	while (next_rebuild(ls))
		rebuild(ls);
	return NULL;
}

static void start_builder(struct cp_late_stacks *ls)
{
	ls->running = true;
	ls->thread_made = pthread_create(&ls->builder, NULL, build_rules, ls) == 0;
	if (ls->thread_made)
		return;
	ls->running = false;
	cp_fail(&ls->error, CP_EXIT_PROFILE, "cannot start a thread to build them");
	/* No rules then: the copies are walked by frame pointers alone. */
	__atomic_store_n(&ls->built, true, __ATOMIC_RELEASE);
}

/* The window is over (or set-up failed): nothing more goes in; waits for
 * the builder. */
static void stop_builder(struct cp_late_stacks *ls)
{
	if (!ls->lock_made)
		return;
	pthread_mutex_lock(&ls->lock);
	ls->cancel = true;
	pthread_mutex_unlock(&ls->lock);
	if (ls->thread_made)
		pthread_join(ls->builder, NULL);
	ls->thread_made = false;
}

void cp_late_stacks_start(struct cp_late_stacks *ls, struct cp_session *s, pid_t pid)
{
	const char *hold = getenv("CLOCKPROF_STACK_RULES_AFTER_WINDOW");

	ls->s = s;
	ls->pid = pid;
	ls->hold_rules = hold && !strcmp(hold, "1");
	ls->lock_made = pthread_mutex_init(&ls->lock, NULL) == 0;
	if (!ls->lock_made) {
		/* No builder: the copies are walked by frame pointers alone. */
		cp_fail(&ls->error, CP_EXIT_PROFILE, "cannot make a lock for their builder");
		__atomic_store_n(&ls->built, true, __ATOMIC_RELEASE);
		return;
	}
	ls->sym = cp_symbolizer_open(pid, &ls->error);
	start_builder(ls);
}

void cp_late_stacks_restart(struct cp_late_stacks *ls)
{
	bool running;

	if (!ls->lock_made)
		return;
	pthread_mutex_lock(&ls->lock);
	running = ls->running;
	if (running)
		ls->rebuild = true;
	pthread_mutex_unlock(&ls->lock);
	if (running)
		return;
	/* The builder is done: one for the new libraries. */
	if (ls->thread_made)
		pthread_join(ls->builder, NULL);
	start_builder(ls);
}

/* ---- the copies, on the window's thread -------------------------------- */

/* Bytes a copy holds, header included (the session hands on only copies
 * whose lengths are their own). */
static size_t copy_size(const struct cp_stack_copy *c)
{
	return offsetof(struct cp_stack_copy, bytes) + c->len[0] + c->len[1];
}

/* Reads the copied stack, from either piece: what lies outside the copy
 * cannot be read, as memory the program could not read ends its own walk. */
static int read_copy(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct cp_stack_copy *c = ctx;
	size_t at = 0;

	for (int i = 0; i < 2; at += c->len[i], i++) {
		if (c->len[i] < 8 || addr < c->base[i] || addr - c->base[i] > c->len[i] - 8)
			continue;
		memcpy(val, c->bytes + at + (addr - c->base[i]), sizeof(*val));
		return 0;
	}
	return -1;
}

static int cmp_stack(const void *a, const void *b)
{
	return memcmp(&((const struct cp_stack_count *)a)->key,
		      &((const struct cp_stack_count *)b)->key, sizeof(struct cp_stack_key));
}

/* Sorts stacks by key and adds up equal ones; returns how many remain. */
static size_t sort_and_merge(struct cp_stack_count *stacks, size_t n)
{
	size_t out = 0;

	if (n)
		qsort(stacks, n, sizeof(*stacks), cmp_stack);
	for (size_t i = 0; i < n; i++) {
		if (out && !cmp_stack(&stacks[out - 1], &stacks[i]))
			stacks[out - 1].count += stacks[i].count;
		else
			stacks[out++] = stacks[i];
	}
	return out;
}

/* Walks one copy by the first rules into the stacks walked; -1 when there
 * is no room (out of memory, or WALKED_MAX distinct stacks). */
static int walk_copy(struct cp_late_stacks *ls, const struct cp_stack_copy *c)
{
	struct cp_stack_count *sc;

	if (ls->nwalked == WALKED_MAX)
		ls->nwalked = sort_and_merge(ls->walked, ls->nwalked);
	if (ls->nwalked == WALKED_MAX ||
	    cp_grow(&ls->walked, &ls->walked_cap, ls->nwalked + 1, sizeof(*ls->walked)))
		return -1;
	sc = &ls->walked[ls->nwalked++];
	cp_unwind_stack(&ls->table, c->ip, (int)c->mode, c->sp, c->bp, read_copy, (void *)c,
			&sc->key);
	sc->count = 1;
	return 0;
}

/* Walks the copies kept so far, once the rules are built, and lets them go. */
static void walk_kept(struct cp_late_stacks *ls)
{
	for (size_t i = 0; i < ls->ncopies; i++) {
		if (walk_copy(ls, ls->copies[i]))
			ls->dropped++;
		free(ls->copies[i]);
	}
	ls->ncopies = 0;
	ls->kept_bytes = 0;
}

void cp_late_stacks_keep(void *arg, const struct cp_stack_copy *c)
{
	struct cp_late_stacks *ls = arg;
	size_t size = copy_size(c);
	struct cp_stack_copy *kept;

	if (ls->finished)
		return; /* made in the clock window, read after it: a few at most */
	if (__atomic_load_n(&ls->built, __ATOMIC_ACQUIRE)) {
		walk_kept(ls);
		if (walk_copy(ls, c))
			ls->dropped++;
		return;
	}
	if (ls->kept_bytes + size > KEPT_BYTES_MAX ||
	    cp_grow(&ls->copies, &ls->cap, ls->ncopies + 1, sizeof(*ls->copies)) ||
	    !(kept = malloc(size))) {
		ls->dropped++;
		return;
	}
	memcpy(kept, c, size);
	ls->copies[ls->ncopies++] = kept;
	ls->kept_bytes += size;
}

/* Adds the stacks walked from copies to raw's (the program's own); equal
 * stacks are added up where they are named (cp_named_stacks_build). */
static int add_walked(struct cp_late_stacks *ls, struct cp_raw_places *raw)
{
	size_t n = raw->nstacks + ls->nwalked;
	struct cp_stack_count *all = realloc(raw->stacks, (n ? n : 1) * sizeof(*all));

	if (!all)
		return -1;
	memcpy(all + raw->nstacks, ls->walked, ls->nwalked * sizeof(*all));
	raw->stacks = all;
	raw->nstacks = n;
	return 0;
}

static uint64_t walked_reads(const struct cp_late_stacks *ls)
{
	uint64_t n = 0;

	for (size_t i = 0; i < ls->nwalked; i++)
		n += ls->walked[i].count;
	return n;
}

void cp_late_stacks_finish(struct cp_late_stacks *ls, struct cp_profile *p,
			   struct cp_raw_places *raw, double window_start, double window_end)
{
	uint64_t walked;

	p->stack_rules_s = -1;
	stop_builder(ls);
	ls->finished = true;
	if (ls->ready > 0 && ls->ready <= window_end)
		p->stack_rules_s = ls->ready > window_start ? ls->ready - window_start : 0;
	if (__atomic_load_n(&ls->built, __ATOMIC_ACQUIRE))
		walk_kept(ls);
	walked = walked_reads(ls);
	if (walked && add_walked(ls, raw)) {
		ls->dropped += walked;
		walked = 0;
	}
	p->stacks_from_copies = walked;
	if (ls->error.msg[0])
		cp_profile_warn(
			p,
			"stacks stop where frame pointers do in code whose unwind rules are missing: %s",
			ls->error.msg);
	if (ls->dropped || p->totals.stack_copy_drops)
		cp_profile_warn(
			p,
			"%llu reads before every function's unwind rules were in place have no stack: their stack copies did not fit",
			(unsigned long long)(ls->dropped + p->totals.stack_copy_drops));
}

void cp_late_stacks_free(struct cp_late_stacks *ls)
{
	stop_builder(ls);
	if (ls->lock_made)
		pthread_mutex_destroy(&ls->lock);
	cp_symbolizer_close(ls->sym);
	cp_unwind_table_free(&ls->table);
	for (size_t i = 0; i < ls->ncopies; i++)
		free(ls->copies[i]);
	free(ls->copies);
	free(ls->walked);
	memset(ls, 0, sizeof(*ls));
}
