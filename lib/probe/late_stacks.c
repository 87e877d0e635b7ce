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

/* The copies kept while the rules are built: about 8,000 whole ones. The
 * rules take some tens of ms, so only a target reading the clock more than
 * ~100,000 times a second from the start overruns it (said, not hidden). */
#define KEPT_BYTES_MAX (64u << 20)

/* The builder thread: every function's rules of the modules mapped now,
 * from a symbolizer of its own (the window's is the window thread's), put
 * in the programs when built. Leaves the table, or an error, in ls. */
static void *build_rules(void *arg)
{
	struct cp_late_stacks *ls = arg;
	struct cp_symbolizer *sym = cp_symbolizer_open(ls->pid, &ls->error);

	if (!sym || cp_unwind_table_build_all(sym, true, &ls->table, &ls->error)) {
		cp_symbolizer_close(sym);
		return NULL;
	}
	cp_symbolizer_close(sym);
	ls->have_table = true;
	if (!ls->hold_rules && cp_session_set_stack_rules(ls->s, &ls->table, &ls->error) == 0)
		ls->ready = cp_monotonic_s();
	return NULL;
}

static void start_builder(struct cp_late_stacks *ls)
{
	ls->error = (struct cp_error){ 0 };
	ls->building = pthread_create(&ls->builder, NULL, build_rules, ls) == 0;
	if (!ls->building)
		cp_fail(&ls->error, CP_EXIT_PROFILE, "cannot start a thread to build them");
}

static void join_builder(struct cp_late_stacks *ls)
{
	if (ls->building)
		pthread_join(ls->builder, NULL);
	ls->building = false;
}

void cp_late_stacks_start(struct cp_late_stacks *ls, struct cp_session *s, pid_t pid)
{
	const char *hold = getenv("CLOCKPROF_STACK_RULES_AFTER_WINDOW");

	ls->s = s;
	ls->pid = pid;
	ls->hold_rules = hold && !strcmp(hold, "1");
	start_builder(ls);
}

void cp_late_stacks_restart(struct cp_late_stacks *ls)
{
	if (!ls->s)
		return;
	join_builder(ls);
	if (ls->have_table)
		cp_unwind_table_free(&ls->table);
	ls->have_table = false;
	start_builder(ls);
}

void cp_late_stacks_keep(void *arg, const struct cp_stack_copy *c)
{
	struct cp_late_stacks *ls = arg;
	size_t size = offsetof(struct cp_stack_copy, bytes) +
		      (c->len <= CP_STACK_COPY_BYTES ? c->len : 0);
	struct cp_stack_copy *kept;

	if (ls->kept_bytes + size > KEPT_BYTES_MAX ||
	    cp_grow(&ls->copies, &ls->cap, ls->ncopies + 1, sizeof(*ls->copies)) ||
	    !(kept = malloc(size))) {
		ls->dropped++;
		return;
	}
	memcpy(kept, c, size);
	kept->len = (__u32)(size - offsetof(struct cp_stack_copy, bytes));
	ls->copies[ls->ncopies++] = kept;
	ls->kept_bytes += size;
}

/* Reads the copied stack: what lies outside the copy cannot be read, as
 * memory the program could not read ends its own walk. */
static int read_copy(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct cp_stack_copy *c = ctx;

	if (addr < c->base || c->len < 8 || addr - c->base > c->len - 8)
		return -1;
	memcpy(val, c->bytes + (addr - c->base), sizeof(*val));
	return 0;
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

/* Adds the walked copies' stacks to raw's. */
static int add_walked(struct cp_late_stacks *ls, struct cp_raw_places *raw)
{
	size_t n = raw->nstacks + ls->ncopies;
	struct cp_stack_count *all = realloc(raw->stacks, (n ? n : 1) * sizeof(*all));

	if (!all)
		return -1;
	for (size_t i = 0; i < ls->ncopies; i++) {
		const struct cp_stack_copy *c = ls->copies[i];
		struct cp_stack_count *sc = &all[raw->nstacks + i];

		cp_unwind_stack(&ls->table, c->ip, (int)c->mode, c->sp, c->bp, read_copy,
				(void *)c, &sc->key);
		sc->count = 1;
	}
	raw->stacks = all;
	raw->nstacks = sort_and_merge(all, n);
	return 0;
}

void cp_late_stacks_finish(struct cp_late_stacks *ls, struct cp_profile *p,
			   struct cp_raw_places *raw, double window_start)
{
	p->stack_rules_s = -1;
	join_builder(ls);
	if (ls->ready > 0)
		p->stack_rules_s = ls->ready > window_start ? ls->ready - window_start : 0;
	if (ls->ncopies && (!ls->have_table || add_walked(ls, raw)))
		cp_profile_warn(p, "%zu reads before every function's unwind rules were in place have no stack: %s",
				ls->ncopies, ls->have_table ? "out of memory" :
				ls->error.msg[0] ? ls->error.msg : "the rules could not be built");
	else
		p->stacks_from_copies = ls->ncopies;
	if (ls->error.msg[0] && ls->have_table)
		cp_profile_warn(p, "every function's unwind rules were not put in place: %s",
				ls->error.msg);
	if (ls->dropped || p->totals.stack_copy_drops)
		cp_profile_warn(p, "%llu reads before every function's unwind rules were in place have no stack: their stack copies did not fit",
				(unsigned long long)(ls->dropped + p->totals.stack_copy_drops));
}

void cp_late_stacks_free(struct cp_late_stacks *ls)
{
	join_builder(ls);
	if (ls->have_table)
		cp_unwind_table_free(&ls->table);
	for (size_t i = 0; i < ls->ncopies; i++)
		free(ls->copies[i]);
	free(ls->copies);
	memset(ls, 0, sizeof(*ls));
}
