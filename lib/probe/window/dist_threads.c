/* dist_threads.c - the per-request counter distribution needs a counter
 * of its own on every thread of the target, kept up as threads come and
 * go during the counter window. See profile_window.h. */
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "grow.h"
#include "procfs.h"
#include "profile_window.h"
#include "session.h"

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static bool pid_in(const pid_t *sorted, size_t n, pid_t tid)
{
	return n && bsearch(&tid, sorted, n, sizeof(*sorted), cmp_pid);
}

static void remember_failed(struct cp_dist_failed *f, pid_t tid)
{
	if (cp_grow(&f->tids, &f->cap, f->n + 1, sizeof(*f->tids)))
		return;
	f->tids[f->n++] = tid;
	qsort(f->tids, f->n, sizeof(*f->tids), cmp_pid);
}

/* Gives back the slots of covered threads that are gone from tids (a later
 * thread may take their tid); leaves covered[] sorted. */
static size_t drop_gone(struct cp_session *s, const pid_t *tids, size_t ntids, pid_t *covered)
{
	size_t ncovered = cp_session_dist_tids(s, covered);

	for (size_t c = 0; c < ncovered; c++)
		if (!pid_in(tids, ntids, covered[c]))
			cp_session_dist_remove_thread(s, covered[c]);
	qsort(covered, ncovered, sizeof(*covered), cmp_pid);
	return ncovered;
}

/* Keeps one counter of the distribution's event on each thread of the
 * target: threads that exited give their slot back, threads born since
 * the last look get one and count from their second request on (the first
 * one's start was not seen). Called when the counter window opens and then
 * every so often in it (cp_window_wait). */
void cp_dist_cover_threads(struct cp_profile *p, struct cp_session *s,
			   struct cp_dist_failed *failed)
{
	static pid_t covered[CP_DIST_MAX_THREADS];
	pid_t *tids = NULL;
	size_t ntids = 0, ncovered;

	if (p->dist_event < 0 || cp_proc_threads(p->target.pid, &tids, &ntids))
		return;
	qsort(tids, ntids, sizeof(*tids), cmp_pid);
	ncovered = drop_gone(s, tids, ntids, covered);
	for (size_t t = 0; t < ntids && !cp_session_dist_full(s); t++) {
		int fd;

		if (pid_in(covered, ncovered, tids[t]) || pid_in(failed->tids, failed->n, tids[t]))
			continue;
		fd = cp_counter_open_own(&p->event_specs[p->dist_event], tids[t]);
		if (fd < 0) {
			remember_failed(failed, tids[t]);
			continue;
		}
		if (cp_session_dist_add_thread(s, tids[t], fd) == 0)
			p->dist_threads++;
	}
	free(tids);
}

/* The first event asked for, in order of interest, that opens on tid;
 * its counter's fd in *fd. -1: none. */
static int pick_event(const struct cp_profile *p, pid_t tid, int *fd)
{
	static const char *const preferred[] = { "instructions:u", "cycles:u", "task-clock" };

	for (size_t k = 0; k < sizeof(preferred) / sizeof(preferred[0]); k++)
		for (size_t i = 0; i < p->nevents; i++)
			if (!strcmp(p->event_specs[i].name, preferred[k]) &&
			    (*fd = cp_counter_open_own(&p->event_specs[i], tid)) >= 0)
				return (int)i;
	return -1;
}

/* Per-request distribution of one counter, read by the BPF program at each
 * boundary from the thread's own counter: the first of instructions:u,
 * cycles:u, task-clock (in that order of interest) among the events asked
 * for that can be opened here, tried on the target's first thread. */
void cp_dist_open(struct cp_profile *p, struct cp_session *s, struct cp_window *w)
{
	pid_t *tids = NULL;
	size_t ntids = 0;
	int fd;

	p->dist_event = -1;
	if (cp_proc_threads(p->target.pid, &tids, &ntids))
		return;
	p->dist_event = ntids ? pick_event(p, tids[0], &fd) : -1;
	if (p->dist_event >= 0 && cp_session_dist_add_thread(s, tids[0], fd) == 0)
		p->dist_threads++;
	free(tids);
	cp_dist_cover_threads(p, s, &w->dist_failed);
}
