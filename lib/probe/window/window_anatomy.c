/* window_anatomy.c - --anatomy at the window's end: the sampled requests
 * the collection left in the profile judged (anatomy.h) and their reads
 * named as the call sites are. See profile_window.h. */
#include <stdio.h>

#include "anatomy_names.h"
#include "profile_window.h"

void cp_anatomy_settings(const struct cp_profile_options *o, struct cp_profile *p)
{
	struct cp_anatomy *a = &p->anatomy;

	a->on = o->anatomy_on;
	a->sample_size = o->anatomy_sample_size ? o->anatomy_sample_size :
						  CP_ANATOMY_SAMPLE_DEFAULT;
	a->reuse_gap_ns = o->reuse_gap_ns ? o->reuse_gap_ns : CP_ANATOMY_GAP_DEFAULT_NS;
	a->reuse_share = o->reuse_share > 0 ? o->reuse_share : CP_ANATOMY_SHARE_DEFAULT;
}

void cp_anatomy_finish(struct cp_naming *nm, struct cp_profile *p)
{
	struct cp_anatomy *a = &p->anatomy;
	unsigned sample_size = a->sample_size;
	uint64_t gap = a->reuse_gap_ns;
	double share = a->reuse_share;

	if (!a->on)
		return;
	if (cp_anatomy_judge(&p->anatomy_samples, gap, share, a)) {
		*a = (struct cp_anatomy){ .on = true, .reuse_gap_ns = gap, .reuse_share = share };
		snprintf(a->not_judged_because, sizeof(a->not_judged_because),
			 "out of memory judging the sampled requests");
		cp_profile_warn(p, "--anatomy: %s", a->not_judged_because);
	}
	a->sample_size = sample_size;
	/* the log is the target's (its table): followed processes and attach's
	 * other members are counted, not sampled */
	if (p->nprocesses > 1)
		cp_profile_warn(p,
				"--anatomy: the sampled requests are process %d's only; "
				"the %zu other processes counted are not sampled",
				(int)p->target.pid, p->nprocesses - 1);
	cp_anatomy_name(nm->sym, nm->have_table ? &nm->table : NULL, a);
	cp_anatomy_samples_free(&p->anatomy_samples);
}
