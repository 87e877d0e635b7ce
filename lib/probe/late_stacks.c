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

/* The copies kept while the rules are built (walked as they come once they
 * are): about 8,000 whole ones. The rules take 20-100 ms, so only a target
 * reading the clock more than ~80,000 times a second from the start
 * overruns it (said, not hidden). */
#define KEPT_BYTES_MAX (64u << 20)

/* The session, once the window's thread has opened it; NULL when it gave
 * up first. */
static struct cp_session *wait_for_session(struct cp_late_stacks *ls)
{
	struct cp_session *s;

	pthread_mutex_lock(&ls->lock);
	while (!ls->s && !ls->cancel)
		pthread_cond_wait(&ls->session_set, &ls->lock);
	s = ls->cancel ? NULL : ls->s;
	pthread_mutex_unlock(&ls->lock);
	return s;
}

/* The builder thread: every function's rules of the captured modules, put
 * in the programs when built. Leaves the table, or an error, in ls. */
static void *build_rules(void *arg)
{
	struct cp_late_stacks *ls = arg;
	struct cp_session *s;

	if (cp_unwind_table_build_all(ls->sym, true, &ls->table, &ls->error))
		return NULL;
	ls->have_table = true;
	__atomic_store_n(&ls->built, true, __ATOMIC_RELEASE);
	s = wait_for_session(ls);
	if (s && !ls->hold_rules && cp_session_set_stack_rules(s, &ls->table, &ls->error) == 0)
		ls->ready = cp_monotonic_s();
	return NULL;
}

/* The builder's symbolizer is its own: the window's (call sites) is
 * reopened on dlopen while the builder may still be running. */
static void start_builder(struct cp_late_stacks *ls)
{
	ls->error = (struct cp_error){ 0 };
	ls->sym = cp_symbolizer_open(ls->pid, &ls->error);
	if (!ls->sym)
		return;
	ls->building = pthread_create(&ls->builder, NULL, build_rules, ls) == 0;
	if (!ls->building)
		cp_fail(&ls->error, CP_EXIT_PROFILE, "cannot start a thread to build them");
}

/* cancel: the session will never come (set-up failed). */
static void join_builder(struct cp_late_stacks *ls, bool cancel)
{
	if (ls->building && cancel) {
		pthread_mutex_lock(&ls->lock);
		ls->cancel = true;
		pthread_cond_signal(&ls->session_set);
		pthread_mutex_unlock(&ls->lock);
	}
	if (ls->building)
		pthread_join(ls->builder, NULL);
	ls->building = false;
	cp_symbolizer_close(ls->sym);
	ls->sym = NULL;
}

void cp_late_stacks_start(struct cp_late_stacks *ls, pid_t pid)
{
	const char *hold = getenv("CLOCKPROF_STACK_RULES_AFTER_WINDOW");

	ls->pid = pid;
	ls->hold_rules = hold && !strcmp(hold, "1");
	ls->lock_made = pthread_mutex_init(&ls->lock, NULL) == 0 &&
			pthread_cond_init(&ls->session_set, NULL) == 0;
	if (ls->lock_made)
		start_builder(ls);
	else
		cp_fail(&ls->error, CP_EXIT_PROFILE, "cannot make a lock for the builder");
}

void cp_late_stacks_set_session(struct cp_late_stacks *ls, struct cp_session *s)
{
	if (!ls->lock_made)
		return;
	pthread_mutex_lock(&ls->lock);
	ls->s = s;
	pthread_cond_signal(&ls->session_set);
	pthread_mutex_unlock(&ls->lock);
}

/* Bytes a copy holds, header included; 0 when its lengths are not its own. */
static size_t copy_size(const struct cp_stack_copy *c)
{
	if (c->len[0] > CP_STACK_COPY_BYTES || c->len[1] > CP_STACK_COPY_FRAME_BYTES)
		return 0;
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

/* Walks one copy by the built rules into the stacks found. */
static int walk_copy(struct cp_late_stacks *ls, const struct cp_stack_copy *c)
{
	struct cp_stack_count *sc;

	if (cp_grow(&ls->walked, &ls->walked_cap, ls->nwalked + 1, sizeof(*ls->walked)))
		return -1;
	sc = &ls->walked[ls->nwalked++];
	cp_unwind_stack(&ls->table, c->ip, (int)c->mode, c->sp, c->bp, read_copy, (void *)c,
			&sc->key);
	sc->count = 1;
	return 0;
}

/* Walks the copies kept so far, once the rules are built, and lets them go;
 * one that cannot be walked (out of memory) counts as dropped. */
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

void cp_late_stacks_restart(struct cp_late_stacks *ls)
{
	if (!ls->s)
		return;
	join_builder(ls, false);
	if (ls->have_table) {
		walk_kept(ls);
		cp_unwind_table_free(&ls->table);
	}
	ls->have_table = ls->built = false;
	start_builder(ls);
}

void cp_late_stacks_keep(void *arg, const struct cp_stack_copy *c)
{
	struct cp_late_stacks *ls = arg;
	size_t size = copy_size(c);
	struct cp_stack_copy *kept;

	if (!size) {
		ls->dropped++;
		return;
	}
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

/* Adds the stacks walked from copies to raw's (the program's own). */
static int add_walked(struct cp_late_stacks *ls, struct cp_raw_places *raw)
{
	size_t n = raw->nstacks + ls->nwalked;
	struct cp_stack_count *all = realloc(raw->stacks, (n ? n : 1) * sizeof(*all));

	if (!all)
		return -1;
	memcpy(all + raw->nstacks, ls->walked, ls->nwalked * sizeof(*all));
	raw->stacks = all;
	raw->nstacks = sort_and_merge(all, n);
	return 0;
}

void cp_late_stacks_finish(struct cp_late_stacks *ls, struct cp_profile *p,
			   struct cp_raw_places *raw, double window_start)
{
	size_t unwalked;

	p->stack_rules_s = -1;
	join_builder(ls, false);
	if (ls->ready > 0)
		p->stack_rules_s = ls->ready > window_start ? ls->ready - window_start : 0;
	if (ls->have_table)
		walk_kept(ls);
	unwalked = ls->ncopies;
	if (ls->nwalked && add_walked(ls, raw))
		unwalked += ls->nwalked;
	else
		p->stacks_from_copies = ls->nwalked;
	if (unwalked)
		cp_profile_warn(p, "%zu reads before every function's unwind rules were in place have no stack: %s",
				unwalked, !ls->have_table && ls->error.msg[0] ? ls->error.msg :
				!ls->have_table ? "the rules could not be built" : "out of memory");
	if (ls->error.msg[0] && ls->have_table)
		cp_profile_warn(p, "every function's unwind rules were not put in place: %s",
				ls->error.msg);
	if (ls->dropped || p->totals.stack_copy_drops)
		cp_profile_warn(p, "%llu reads before every function's unwind rules were in place have no stack: their stack copies did not fit",
				(unsigned long long)(ls->dropped + p->totals.stack_copy_drops));
}

void cp_late_stacks_free(struct cp_late_stacks *ls)
{
	join_builder(ls, true);
	if (ls->lock_made) {
		pthread_mutex_destroy(&ls->lock);
		pthread_cond_destroy(&ls->session_set);
	}
	if (ls->have_table)
		cp_unwind_table_free(&ls->table);
	for (size_t i = 0; i < ls->ncopies; i++)
		free(ls->copies[i]);
	free(ls->copies);
	free(ls->walked);
	memset(ls, 0, sizeof(*ls));
}
