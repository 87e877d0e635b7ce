/* window_naming.c - what names the window's call sites and stacks: the
 * symbolizer over the target's modules and the unwind rules of their clock
 * wrappers, opened once the modules are mapped and reopened on dlopen.
 * See profile_window.h. */
#include <string.h>

#include "call_sites.h"
#include "error.h"
#include "profile_window.h"
#include "stacks.h"
#include "symbolize.h"

void cp_naming_open(struct cp_naming *nm, struct cp_profile *p)
{
	struct cp_error err = { 0 };

	nm->sym = cp_symbolizer_open(p->target.pid, &err);
	if (!nm->sym) {
		cp_profile_warn(p, "call sites cannot be named: %s", err.msg);
		return;
	}
	if (cp_unwind_table_build_from(nm->sym, &nm->table, &err)) {
		cp_profile_warn(p, "call sites stop at clock wrappers: %s", err.msg);
		return;
	}
	nm->have_table = true;
	if (nm->table.n_unsupported)
		cp_profile_warn(p, "%s", nm->table.warning);
}

void cp_naming_close(struct cp_naming *nm)
{
	if (nm->have_table)
		cp_unwind_table_free(&nm->table);
	cp_symbolizer_close(nm->sym);
	memset(nm, 0, sizeof(*nm));
}

void cp_naming_collect(struct cp_naming *nm, struct cp_profile *p,
		       const struct cp_raw_places *raw)
{
	struct cp_error err = { 0 };

	if (!nm->sym)
		return;
	cp_call_sites_resolve(nm->sym, nm->have_table ? &nm->table : NULL, raw->sites,
			      raw->nsites, &p->call_sites);
	if (raw->nstacks)
		cp_named_stacks_build(nm->sym, raw->stacks, raw->nstacks, &p->stacks);
	if (cp_symbolizer_check_stale(nm->sym, &err))
		cp_profile_warn(p, "%s", err.msg);
	if (p->totals.site_unnamed)
		cp_profile_warn(p, "%llu reads have no call site: over %d distinct sites",
				(unsigned long long)p->totals.site_unnamed, CP_MAX_SITES);
	if (p->totals.site_uncredited)
		cp_profile_warn(p, "%llu reads inside requests are missing from their call site's per-op figure: over %d distinct sites in one request",
				(unsigned long long)p->totals.site_uncredited, CP_PENDING_SITES);
	if (p->totals.stack_drops)
		cp_profile_warn(p, "%llu reads have no stack: over %d distinct stacks",
				(unsigned long long)p->totals.stack_drops, CP_MAX_STACKS);
	if (p->totals.stacks_preempted)
		cp_profile_warn(p, "%llu reads have no stack: the kernel preempted the program while it held the CPU's stack buffer, and another read came on that CPU",
				(unsigned long long)p->totals.stacks_preempted);
}
