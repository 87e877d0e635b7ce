/* summary_anatomy.c - see summary_anatomy.h. */
#include <stdio.h>
#include <string.h>

#include "escape_display.h"
#include "profile.h"
#include "summary_anatomy.h"

#define WHERE_SIZE 700

/* Where a read is, for a person: "file:line", else its module, else its
 * function; the frames that called it added where other's site is the
 * same (two callers of one helper). Escaped (escape_display.h). */
static const char *where(const struct cp_anatomy_read *r, const struct cp_anatomy_read *other,
			 char *buf)
{
	char raw[WHERE_SIZE];
	size_t n;

	if (r->location && r->location[0])
		n = (size_t)snprintf(raw, sizeof(raw), "%s", r->location);
	else if (r->file && r->line > 0)
		n = (size_t)snprintf(raw, sizeof(raw), "%s:%d", r->file, r->line);
	else
		n = (size_t)snprintf(raw, sizeof(raw), "%s",
				     r->module	 ? r->module :
				     r->function ? r->function :
						   "?");
	for (size_t i = 0; r->id.pc == other->id.pc && i < r->ncallers && n < sizeof(raw); i++) {
		const struct cp_anatomy_caller *c = &r->callers[i];

		if (c->file && c->line > 0)
			n += (size_t)snprintf(raw + n, sizeof(raw) - n, " from %s:%d", c->file,
					      c->line);
		else
			n += (size_t)snprintf(raw + n, sizeof(raw) - n, " from %s",
					      c->function ? c->function : "?");
	}
	cp_escape_display(buf, WHERE_SIZE, raw, 200);
	return buf;
}

static void print_reusable(FILE *out, const struct cp_anatomy *a)
{
	size_t shown = a->nreusable < CP_SUMMARY_REUSE_SHOWN ? a->nreusable :
							       CP_SUMMARY_REUSE_SHOWN;
	char r_at[WHERE_SIZE], e_at[WHERE_SIZE], fn[WHERE_SIZE], clock[32];

	for (size_t i = 0; i < shown; i++) {
		const struct cp_anatomy_reuse *u = &a->reusable[i];
		const struct cp_anatomy_read *r = &a->reads[u->read], *e = &a->reads[u->reuses];

		cp_escape_display(fn, sizeof(fn), r->function ? r->function : "?", 60);
		/* the clock too: Go's time.Now reads two at one line */
		fprintf(out,
			"  %8.3f/op  %s (%s, %s): could reuse %s, read %llu ns before (p50), in %.0f%% of requests\n",
			u->per_op, where(r, e, r_at), fn,
			cp_anatomy_clock_name(r->id.clock, clock, sizeof(clock)), where(e, r, e_at),
			(unsigned long long)u->gap_p50_ns, 100 * u->share);
	}
	if (a->nreusable > shown)
		fprintf(out, "  ... %zu more in run.json\n", a->nreusable - shown);
}

void cp_summary_anatomy(FILE *out, const struct cp_profile *p)
{
	const struct cp_anatomy *a = &p->anatomy;
	char why[sizeof(a->not_judged_because) * 4];

	if (!a->on)
		return;
	fprintf(out,
		"\ncould reuse (--anatomy: %llu of %llu requests sampled%s; a read < %llu ns after one of the same clock, no syscall or sleep between, in >= %.0f%% of them)\n",
		(unsigned long long)a->sampled_requests, (unsigned long long)a->requests,
		a->every_request ? ", all" : "", (unsigned long long)a->reuse_gap_ns,
		100 * a->reuse_share);
	if (!a->judged) {
		cp_escape_display(why, sizeof(why), a->not_judged_because, sizeof(why) / 4);
		fprintf(out, "  not judged: %s\n", why);
		return;
	}
	if (!a->nreusable) {
		fprintf(out, "  none: every read may see something new (0 reads/op could go)\n");
		return;
	}
	print_reusable(out, a);
	fprintf(out,
		"  %.3f reads/op could go in all (clock_reads_reusable/op, %s); whether the program needs a new value there, the rule cannot know\n",
		a->reusable_per_op, a->every_request ? "exact" : "estimated from the sample");
}
