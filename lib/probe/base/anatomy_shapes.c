/* anatomy_shapes.c - requests whose reads came in one order, a shape:
 * the common ones with their share, each read's p50 time and gap, and
 * what came between the reads of the shape's median request. */
#include <stdlib.h>
#include <string.h>

#include "anatomy_parts.h"

/* One whole request as the sequence of its reads. */
struct seq {
	const struct cp_anatomy_request *r;
	uint32_t *ids; /* read ids in order */
	uint64_t *at;  /* their times */
	size_t n;
};

/* A run of seqs with one sequence: seqs[start, start + count). */
struct group {
	size_t start, count;
};

static int by_sequence(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	for (size_t i = 0; i < x->n; i++)
		if (x->ids[i] != y->ids[i])
			return x->ids[i] < y->ids[i] ? -1 : 1;
	return 0;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->start > y->start) - (x->start < y->start); /* sequence order */
}

static int fill_seq(const struct cp_anatomy_samples *in, const struct cp_anatomy_request *r,
		    struct seq *s)
{
	size_t n = 0;

	s->r = r;
	for (size_t i = 0; i < r->nevents; i++)
		n += cp_anatomy_is_read(in, &r->events[i]);
	s->ids = calloc(n ? n : 1, sizeof(*s->ids));
	s->at = calloc(n ? n : 1, sizeof(*s->at));
	if (!s->ids || !s->at)
		return -1;
	for (size_t i = 0; i < r->nevents; i++) {
		if (!cp_anatomy_is_read(in, &r->events[i]))
			continue;
		s->ids[s->n] = r->events[i].what;
		s->at[s->n++] = r->events[i].t_ns;
	}
	return 0;
}

static uint64_t span(const struct seq *s)
{
	return s->n ? s->at[s->n - 1] - s->at[0] : 0;
}

/* The group's request of median span (ties: the earlier in sequence
 * order), whose syscalls and switches a shape shows. */
static const struct seq *median_request(const struct seq *g, size_t count)
{
	uint64_t *spans = calloc(count, sizeof(*spans)), want;
	const struct seq *found = &g[0];

	if (!spans)
		return found;
	for (size_t i = 0; i < count; i++)
		spans[i] = span(&g[i]);
	want = cp_anatomy_rank(spans, count, 0.5);
	for (size_t i = 0; i < count; i++) {
		if (span(&g[i]) == want) {
			found = &g[i];
			break;
		}
	}
	free(spans);
	return found;
}

static void add_syscall(struct cp_anatomy_step *st, int32_t nr)
{
	for (unsigned i = 0; i < st->nsyscalls; i++)
		if (st->syscalls[i] == nr)
			return;
	if (st->nsyscalls < CP_ANATOMY_STEP_SYSCALLS)
		st->syscalls[st->nsyscalls++] = nr;
}

/* What came before each read of r since the read before it (the first:
 * since the request began); what came after its last read is not shown. */
static void fill_between(const struct cp_anatomy_samples *in, const struct cp_anatomy_request *r,
			 struct cp_anatomy_step *steps, size_t nsteps)
{
	size_t k = 0;

	for (size_t i = 0; i < r->nevents && k < nsteps; i++) {
		const struct cp_anatomy_event *ev = &r->events[i];

		if (cp_anatomy_is_read(in, ev))
			k++;
		else if (ev->kind == CP_ANATOMY_SYSCALL)
			add_syscall(&steps[k], (int32_t)ev->what);
		else if (ev->kind == CP_ANATOMY_SWITCH && ev->what)
			steps[k].voluntary++;
		else if (ev->kind == CP_ANATOMY_SWITCH)
			steps[k].preempted++;
	}
}

/* The shape of the group g[0..count), whose sequences are one, into sh. */
static int build_shape(const struct cp_anatomy_samples *in, const struct seq *g, size_t count,
		       size_t sampled, struct cp_anatomy_shape *sh)
{
	size_t n = g[0].n;
	uint64_t *at = calloc(count, sizeof(*at)), *gap = calloc(count, sizeof(*gap));

	sh->requests = count;
	sh->share = (double)count / (double)sampled;
	sh->steps = calloc(n ? n : 1, sizeof(*sh->steps));
	if (!at || !gap || !sh->steps) {
		free(at);
		free(gap);
		return -1;
	}
	sh->nsteps = n;
	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; i < count; i++) {
			at[i] = g[i].at[k] - g[i].at[0];
			gap[i] = k ? g[i].at[k] - g[i].at[k - 1] : 0;
		}
		sh->steps[k].read = g[0].ids[k];
		sh->steps[k].at_ns = cp_anatomy_rank(at, count, 0.5);
		sh->steps[k].gap_ns = cp_anatomy_rank(gap, count, 0.5);
	}
	fill_between(in, median_request(g, count)->r, sh->steps, n);
	free(at);
	free(gap);
	return 0;
}

/* Runs of one sequence in sorted seqs[0..n), most requests first. */
static struct group *group_seqs(const struct seq *seqs, size_t n, size_t *ngroups)
{
	struct group *g = calloc(n ? n : 1, sizeof(*g));

	*ngroups = 0;
	for (size_t i = 0; g && i < n; i++) {
		if (*ngroups && !by_sequence(&seqs[i], &seqs[g[*ngroups - 1].start]))
			g[*ngroups - 1].count++;
		else
			g[(*ngroups)++] = (struct group){ i, 1 };
	}
	if (g)
		qsort(g, *ngroups, sizeof(*g), by_count_desc);
	return g;
}

static int keep_shapes(const struct cp_anatomy_samples *in, const struct seq *seqs, size_t n,
		       struct cp_anatomy *out)
{
	size_t ngroups, keep;
	struct group *g = group_seqs(seqs, n, &ngroups);
	int rc = 0;

	if (!g)
		return -1;
	keep = ngroups < CP_ANATOMY_SHAPES ? ngroups : CP_ANATOMY_SHAPES;
	out->shapes = calloc(keep ? keep : 1, sizeof(*out->shapes));
	if (!out->shapes)
		rc = -1;
	for (size_t i = 0; !rc && i < keep; i++, out->nshapes++)
		rc = build_shape(in, &seqs[g[i].start], g[i].count, n, &out->shapes[i]);
	for (size_t i = keep; i < ngroups; i++)
		out->other_requests += g[i].count;
	free(g);
	return rc;
}

int cp_anatomy_shapes(const struct cp_anatomy_samples *in,
		      const struct cp_anatomy_request *const *whole, size_t n,
		      struct cp_anatomy *out)
{
	struct seq *seqs = calloc(n ? n : 1, sizeof(*seqs));
	int rc = seqs ? 0 : -1;

	for (size_t i = 0; !rc && i < n; i++)
		rc = fill_seq(in, whole[i], &seqs[i]);
	if (!rc) {
		qsort(seqs, n, sizeof(*seqs), by_sequence);
		rc = keep_shapes(in, seqs, n, out);
	}
	for (size_t i = 0; seqs && i < n; i++) {
		free(seqs[i].ids);
		free(seqs[i].at);
	}
	free(seqs);
	return rc;
}
