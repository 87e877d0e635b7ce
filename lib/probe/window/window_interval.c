/* window_interval.c - --interval's snapshot: what the window counted so
 * far, read without closing it, for the consumer of cp_profile_options'
 * on_interval (profile.h states the contract). Its own file because the
 * poll loop only decides when; this decides what a snapshot holds. */
#include <stdlib.h>

#include "call_sites.h"
#include "counters.h"
#include "mechanism.h"
#include "profile_window.h"

/* The sites named so far replace the last snapshot's. The symbolizer
 * stays open across intervals and caches each address's name, so only
 * addresses new since the last snapshot are looked up in DWARF; it is
 * reopened on dlopen (window_wait.c), which forgets unloaded modules. Memory
 * follows the sites the mechanism holds, which are capped (CP_MAX_SITES,
 * the patch's site blocks), never the number of intervals. */
static void name_sites(struct cp_window *w, struct cp_profile *p)
{
	struct cp_site_count *sites = NULL;
	size_t n = 0;

	if (!w->naming.sym || cp_mech_read_sites(w->mech, &sites, &n))
		return;
	cp_call_sites_free(&p->call_sites);
	cp_call_sites_resolve(w->naming.sym, w->naming.have_table ? &w->naming.table : NULL, sites,
			      n, &p->call_sites);
	free(sites);
}

void cp_window_interval(struct cp_window *w, struct cp_profile *p,
			const struct cp_profile_options *o, double elapsed)
{
	if (!o->on_interval || p->counter_phase || cp_mech_read(w->mech, &p->totals))
		return;
	name_sites(w, p);
	if (w->ctr && p->counters && cp_counters_read(w->ctr, p->counters) == 0) {
		p->counters_measured = true;
		p->counter_window_s = elapsed;
	}
	p->duration_s = elapsed;
	p->clock_window_s = elapsed;
	p->complete = false;
	o->on_interval(p, o->callback_arg);
}
