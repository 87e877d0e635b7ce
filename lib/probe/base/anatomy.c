/* anatomy.c - see anatomy.h: what both halves release, and the judge's
 * frame around its two parts (anatomy_parts.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "anatomy.h"
#include "anatomy_parts.h"
#include "clock_names.h"
#include "clockreads.h"
#include "syscall_names.h"

void cp_anatomy_samples_free(struct cp_anatomy_samples *s)
{
	for (size_t i = 0; s->requests && i < s->nrequests; i++)
		free(s->requests[i].events);
	free(s->requests);
	free(s->reads);
	memset(s, 0, sizeof(*s));
}

static void free_read(struct cp_anatomy_read *r)
{
	free(r->function);
	free(r->file);
	free(r->module);
	free(r->via);
	free(r->inlined_at_file);
	free(r->location);
	for (size_t i = 0; i < r->ncallers; i++) {
		free(r->callers[i].function);
		free(r->callers[i].file);
	}
}

void cp_anatomy_free(struct cp_anatomy *a)
{
	for (size_t i = 0; a->reads && i < a->nreads; i++)
		free_read(&a->reads[i]);
	free(a->reads);
	for (size_t i = 0; a->shapes && i < a->nshapes; i++)
		free(a->shapes[i].steps);
	free(a->shapes);
	free(a->reusable);
	a->reads = NULL;
	a->shapes = NULL;
	a->reusable = NULL;
	a->nreads = a->nshapes = a->nreusable = 0;
	a->reusable_per_op = 0;
}

const char *cp_anatomy_clock_name(int32_t clock, char *buf, size_t size)
{
	if (clock == CP_ANATOMY_CLOCK_GETTIMEOFDAY)
		snprintf(buf, size, "gettimeofday");
	else if (clock == CP_ANATOMY_CLOCK_TIME)
		snprintf(buf, size, "time");
	else if (clock >= 0 && clock < CP_CLOCK_SLOTS - 1) /* the last: "dynamic" */
		snprintf(buf, size, "%s", cp_clock_name(clock));
	else
		snprintf(buf, size, "clock %d", (int)clock);
	return buf;
}

const char *cp_anatomy_syscall_name(int32_t nr)
{
	return cp_syscall_name(nr);
}

/* The reads as the collection gave them, not yet named. */
static int copy_reads(const struct cp_anatomy_samples *in, struct cp_anatomy *out)
{
	out->reads = calloc(in->nreads ? in->nreads : 1, sizeof(*out->reads));
	if (!out->reads)
		return -1;
	for (size_t i = 0; i < in->nreads; i++)
		out->reads[i].id = in->reads[i];
	out->nreads = in->nreads;
	return 0;
}

/* Whether the rule can be applied, and if not, why, into out. */
static void judge_or_say(const struct cp_anatomy_samples *in, struct cp_anatomy *out)
{
	size_t size = sizeof(out->not_judged_because);

	out->judged = false;
	if (!in->gaps_exact && in->why_not_exact[0])
		snprintf(out->not_judged_because, size, "%s", in->why_not_exact);
	else if (!out->sampled_requests)
		snprintf(out->not_judged_because, size, "no request was sampled whole");
	else if (!in->gaps_exact)
		snprintf(out->not_judged_because, size,
			 "the gaps between reads are not exact with this mechanism");
	else
		out->judged = true;
}

int cp_anatomy_judge(const struct cp_anatomy_samples *in, uint64_t reuse_gap_ns, double reuse_share,
		     struct cp_anatomy *out)
{
	const struct cp_anatomy_request **whole;
	size_t n = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->on = true;
	out->reuse_gap_ns = reuse_gap_ns;
	out->reuse_share = reuse_share;
	/* the population is at least the sample */
	out->requests = in->requests_seen > in->nrequests ? in->requests_seen : in->nrequests;
	whole = calloc(in->nrequests ? in->nrequests : 1, sizeof(*whole));
	if (!whole || copy_reads(in, out)) {
		free(whole);
		cp_anatomy_free(out);
		return -1;
	}
	for (size_t i = 0; i < in->nrequests; i++) {
		if (in->requests[i].truncated)
			out->truncated_requests++;
		else
			whole[n++] = &in->requests[i];
	}
	out->sampled_requests = n;
	out->outside_burst_requests = in->outside_burst;
	out->untimed_requests = in->untimed;
	out->every_request = n && !out->truncated_requests && n == in->requests_seen;
	judge_or_say(in, out);
	rc = cp_anatomy_shapes(in, whole, n, out);
	if (!rc && out->judged)
		rc = cp_anatomy_rule(in, whole, n, out);
	free(whole);
	if (rc)
		cp_anatomy_free(out);
	return rc;
}
