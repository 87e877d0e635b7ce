/* anatomy_rule.c - the reusable reads (issue #45, docs/anatomy.md): read
 * R could reuse the value of E, the latest earlier read of the same clock
 * on the request's thread, when no syscall and no voluntary switch lies
 * between them (a preemption does not count: the program did nothing) and
 * R - E < reuse_gap_ns, in at least reuse_share of the sampled requests
 * holding the pair (E, R), at every time it came in them. Where the
 * thread was preempted between them, R - E is mostly the kernel's time,
 * not the program's: that time is not judged by its gap, nor counted in
 * the gaps' percentiles. */
#include <stdlib.h>
#include <string.h>

#include "anatomy_parts.h"
#include "grow.h"
#include "patch_layout.h"

bool cp_anatomy_clock_timed(int32_t clock)
{
	return clock == CP_ANATOMY_CLOCK_GETTIMEOFDAY ||
	       (clock >= 0 && clock < 32 && (((unsigned)CP_ANATOMY_TSC_CLOCKS >> clock) & 1u));
}

/* One (E, R) pair over the sample. */
struct pair {
	uint32_t e, r;
	uint64_t requests, broken, times, ngaps;
	size_t last;	 /* the request it was last met in, + 1 */
	bool broken_now; /* the rule failed in that request */
	uint64_t *gaps;
	size_t cap;
	size_t next; /* the next pair of the same R, + 1 */
};

/* The latest read of one clock in the request walked. */
struct latest {
	int32_t clock;
	uint32_t id;
	uint64_t t, barrier, preempted;
};

struct walk {
	const struct cp_anatomy_samples *in;
	uint64_t gap_ns;
	struct pair *pairs;
	size_t npairs, cap;
	size_t *first;	       /* per read id: its first pair as R, + 1 */
	struct latest *latest; /* one per clock met in the request */
	size_t nlatest, latest_cap;
};

/* The pair (e, r), found through r's own pairs (few: the reads before
 * r that were the latest of its clock), or added. */
static struct pair *find_pair(struct walk *w, uint32_t e, uint32_t r)
{
	for (size_t i = w->first[r]; i; i = w->pairs[i - 1].next)
		if (w->pairs[i - 1].e == e)
			return &w->pairs[i - 1];
	if (cp_grow(&w->pairs, &w->cap, w->npairs + 1, sizeof(*w->pairs)))
		return NULL;
	memset(&w->pairs[w->npairs], 0, sizeof(*w->pairs));
	w->pairs[w->npairs].e = e;
	w->pairs[w->npairs].r = r;
	w->pairs[w->npairs].next = w->first[r];
	w->first[r] = ++w->npairs;
	return &w->pairs[w->npairs - 1];
}

/* One time the pair came, in request number req: held or not; its gap
 * the program's (no preemption between), or not. */
static int met(struct pair *p, size_t req, uint64_t gap, bool gap_known, bool held)
{
	if (p->last != req + 1) {
		p->last = req + 1;
		p->requests++;
		p->broken_now = false;
	}
	if (!held && !p->broken_now) {
		p->broken_now = true;
		p->broken++;
	}
	p->times++;
	if (!gap_known)
		return 0;
	if (cp_grow(&p->gaps, &p->cap, p->ngaps + 1, sizeof(*p->gaps)))
		return -1;
	p->gaps[p->ngaps++] = gap;
	return 0;
}

static struct latest *latest_of(struct walk *w, int32_t clock)
{
	for (size_t i = 0; i < w->nlatest; i++)
		if (w->latest[i].clock == clock)
			return &w->latest[i];
	if (cp_grow(&w->latest, &w->latest_cap, w->nlatest + 1, sizeof(*w->latest)))
		return NULL;
	w->latest[w->nlatest] = (struct latest){ .clock = clock, .id = UINT32_MAX };
	return &w->latest[w->nlatest++];
}

/* The syscalls and switches met so far in a request's walk. */
struct between {
	uint64_t barrier;   /* syscalls and voluntary switches */
	uint64_t preempted; /* involuntary switches */
};

/* A read at ev, with what came before it in request req: paired with the
 * clock's latest read, then the latest. */
static int read_at(struct walk *w, size_t req, const struct cp_anatomy_event *ev, struct between b)
{
	struct latest *l;
	struct pair *p;
	uint64_t gap;
	bool known;

	/* an untimed read (its clock's vDSO path takes no rdtsc, nor does
	 * the log) has no gap to judge: it neither reuses nor is reused */
	if (!cp_anatomy_clock_timed(w->in->reads[ev->what].clock))
		return 0;
	if (!(l = latest_of(w, w->in->reads[ev->what].clock)))
		return -1;
	if (l->id != UINT32_MAX) {
		gap = ev->t_ns >= l->t ? ev->t_ns - l->t : 0;
		known = l->preempted == b.preempted;
		p = find_pair(w, l->id, ev->what);
		if (!p ||
		    met(p, req, gap, known, l->barrier == b.barrier && (!known || gap < w->gap_ns)))
			return -1;
	}
	*l = (struct latest){ w->in->reads[ev->what].clock, ev->what, ev->t_ns, b.barrier,
			      b.preempted };
	return 0;
}

static int walk_request(struct walk *w, size_t req, const struct cp_anatomy_request *r)
{
	struct between b = { 0, 0 };

	w->nlatest = 0;
	for (size_t i = 0; i < r->nevents; i++) {
		const struct cp_anatomy_event *ev = &r->events[i];

		if (cp_anatomy_is_read(w->in, ev) && read_at(w, req, ev, b))
			return -1;
		if (ev->kind == CP_ANATOMY_SYSCALL || (ev->kind == CP_ANATOMY_SWITCH && ev->what))
			b.barrier++;
		else if (ev->kind == CP_ANATOMY_SWITCH)
			b.preempted++;
	}
	return 0;
}

static int by_saving(const void *a, const void *b)
{
	const struct cp_anatomy_reuse *x = a, *y = b;

	if (x->per_op != y->per_op)
		return x->per_op < y->per_op ? 1 : -1;
	if (x->share != y->share)
		return x->share < y->share ? 1 : -1;
	if (x->read != y->read)
		return x->read < y->read ? -1 : 1;
	return (x->reuses > y->reuses) - (x->reuses < y->reuses);
}

/* Whether held of requests reach share (exactly at it is enough). */
static bool reaches(uint64_t held, uint64_t requests, double share)
{
	return requests && (double)held >= share * (double)requests - 1e-9 * (double)requests;
}

static void keep_reusable(struct walk *w, size_t sampled, struct cp_anatomy *out)
{
	for (size_t i = 0; i < w->npairs; i++) {
		struct pair *p = &w->pairs[i];
		uint64_t held = p->requests - p->broken;
		struct cp_anatomy_reuse *u;

		if (!reaches(held, p->requests, out->reuse_share))
			continue;
		u = &out->reusable[out->nreusable++];
		*u = (struct cp_anatomy_reuse){
			.read = p->r,
			.reuses = p->e,
			.requests = p->requests,
			.held = held,
			.times = p->times,
			.share = (double)held / (double)p->requests,
			.per_op = (double)p->times / (double)sampled,
		};
		u->gap_p50_ns = cp_anatomy_rank(p->gaps, p->ngaps, 0.5);
		u->gap_p99_ns = cp_anatomy_rank(p->gaps, p->ngaps, 0.99);
	}
	qsort(out->reusable, out->nreusable, sizeof(*out->reusable), by_saving);
	for (size_t i = 0; i < out->nreusable; i++)
		out->reusable_per_op += out->reusable[i].per_op;
}

int cp_anatomy_rule(const struct cp_anatomy_samples *in,
		    const struct cp_anatomy_request *const *whole, size_t n, struct cp_anatomy *out)
{
	struct walk w = { .in = in, .gap_ns = out->reuse_gap_ns };
	int rc = 0;

	w.first = calloc(in->nreads ? in->nreads : 1, sizeof(*w.first));
	if (!w.first)
		return -1;
	for (size_t i = 0; !rc && i < n; i++)
		rc = walk_request(&w, i, whole[i]);
	if (!rc) {
		out->reusable = calloc(w.npairs ? w.npairs : 1, sizeof(*out->reusable));
		rc = out->reusable ? 0 : -1;
	}
	if (!rc)
		keep_reusable(&w, n, out);
	for (size_t i = 0; i < w.npairs; i++)
		free(w.pairs[i].gaps);
	free(w.pairs);
	free(w.first);
	free(w.latest);
	return rc;
}
