/* window_naming.c - what names the window's call sites and stacks: the
 * symbolizer over the target's modules and the unwind rules of their clock
 * wrappers, opened once the modules are mapped and reopened on dlopen.
 * See profile_window.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_sites.h"
#include "dpkg_owner.h"
#include "monotonic.h"
#include "error.h"
#include "procfs.h"
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

/* Whether pid still has its memory: an exiting process's maps read
 * empty from the moment its memory is released (a live thread's, once
 * its main thread has exited: cp_proc_live_dir). */
static bool has_memory(pid_t pid)
{
	char dir[64], path[96];
	FILE *f;
	int c;

	cp_proc_live_dir(pid, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/maps", dir);
	f = fopen(path, "r");
	c = f ? fgetc(f) : EOF;
	if (f)
		fclose(f);
	return c != EOF;
}

/* dlopen: the modules read again into a new symbolizer, which replaces
 * the old one only once it has them all. A target that exits right after
 * its dlopen has no maps left to read (no such process, or a zombie's,
 * empty): the old one is kept, and still names every file but the new
 * library; dropping it had left the run with no call site at all. */
bool cp_naming_reopen(struct cp_naming *nm, struct cp_profile *p)
{
	struct cp_naming fresh = { .debuginfod = nm->debuginfod };
	struct cp_error err = { 0 };

	fresh.sym = cp_symbolizer_open(p->target.pid, &err);
	if (fresh.sym && cp_symbolizer_modules(fresh.sym))
		fresh.have_table = !cp_unwind_table_build_from(fresh.sym, &fresh.table, &err);
	/* no table where there was one: its files were gone before read; no
	 * memory now: the target exited while its files were read, whose
	 * names then fail (map_files gone: "replaced on disk") */
	if (!cp_symbolizer_modules(fresh.sym) || (nm->have_table && !fresh.have_table) ||
	    !has_memory(p->target.pid)) {
		cp_symbolizer_close(fresh.sym);
		return false;
	}
	if (fresh.have_table && fresh.table.n_unsupported)
		cp_profile_warn(p, "%s", fresh.table.warning);
	cp_naming_close(nm);
	*nm = fresh;
	return true;
}

void cp_naming_close(struct cp_naming *nm)
{
	if (nm->have_table)
		cp_unwind_table_free(&nm->table);
	cp_symbolizer_close(nm->sym);
	memset(nm, 0, sizeof(*nm));
}

/* --debuginfod: each server is given this long (s) to connect and answer
 * and to send a file, unless DEBUGINFOD_TIMEOUT / DEBUGINFOD_MAXTIME say. */
#define DEBUGINFOD_TIMEOUT_S "10"

/* --debuginfod, once, now that the window is closed (a download before it
 * would hold it back): the debug files of the modules whose addresses
 * have no name, through libdw's debuginfod client. How many it named. */
static size_t fetch_names(struct cp_naming *nm, struct cp_profile *p)
{
	struct cp_unnamed_module u;
	const char *urls = getenv("DEBUGINFOD_URLS");
	size_t named;
	double t0;

	if (!cp_symbolizer_unnamed(nm->sym, &u, 1))
		return 0;
	if (!urls || !*urls) {
		cp_profile_warn(p,
				"--debuginfod: DEBUGINFOD_URLS is not set, so no server was asked");
		return 0;
	}
	setenv("DEBUGINFOD_TIMEOUT", DEBUGINFOD_TIMEOUT_S, 0);
	setenv("DEBUGINFOD_MAXTIME", DEBUGINFOD_TIMEOUT_S, 0);
	t0 = cp_monotonic_s();
	named = cp_symbolizer_fetch_debuginfo(nm->sym);
	p->debuginfod_s = cp_monotonic_s() - t0;
	return named;
}

/* Addresses still without a name are said once: which -dbgsym package
 * (dpkg's owner of the file) or --debuginfod would name them. */
static void hint_unnamed(struct cp_naming *nm, struct cp_profile *p)
{
	struct cp_unnamed_module u[8];
	size_t n = cp_symbolizer_unnamed(nm->sym, u, 8), count = 0;
	const char *base;
	char pkg[256], how[400];

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		count += u[i].addresses;
	base = strrchr(u[0].path, '/') ? strrchr(u[0].path, '/') + 1 : u[0].path;
	if (cp_dpkg_owner(NULL, u[0].path, pkg, sizeof(pkg)) == 0)
		snprintf(how, sizeof(how), "install %s-dbgsym (Debian's debug symbols archive)",
			 pkg);
	else
		snprintf(how, sizeof(how), "install its debug file (under /usr/lib/debug)");
	if (nm->debuginfod)
		cp_profile_warn(
			p,
			"%zu place(s) in %s%s have no name: --debuginfod asked DEBUGINFOD_URLS after the window and got no debug file in %.1f s (a server unreachable or without it; each given %s s): %s",
			count, base, n > 1 ? " and other files" : "", p->debuginfod_s,
			getenv("DEBUGINFOD_TIMEOUT") ? getenv("DEBUGINFOD_TIMEOUT") : "?", how);
	else
		cp_profile_warn(
			p,
			"%zu place(s) in %s%s have no name (stripped, no debug file on this machine): %s, or use --debuginfod",
			count, base, n > 1 ? " and other files" : "", how);
}

/* Sites in no file the target had mapped when clockprof last read its
 * maps: code in no file (a JIT's), or a library dlopen()ed (or
 * dlclose()d) too close to the target's exit for its maps to be read.
 * Named by their address alone. */
static void hint_outside_files(struct cp_profile *p)
{
	unsigned long long reads = 0;
	size_t places = 0;

	for (size_t i = 0; i < p->call_sites.n; i++) {
		if (!p->call_sites.sites[i].module) {
			reads += p->call_sites.sites[i].count;
			places++;
		}
	}
	if (places)
		cp_profile_warn(
			p,
			"%llu reads come from %zu place(s) in no file the target had mapped when its maps were last read (code in no file, as a JIT's, or a library loaded or unloaded just before the target exited): named by their address alone, which changes from run to run, so they have no clock_reads@FUNCTION/op measure",
			reads, places);
}

void cp_naming_collect(struct cp_naming *nm, struct cp_profile *p, const struct cp_raw_places *raw)
{
	struct cp_error err = { 0 };

	if (!nm->sym)
		return;
	cp_call_sites_resolve(nm->sym, nm->have_table ? &nm->table : NULL, raw->sites, raw->nsites,
			      &p->call_sites);
	if (nm->debuginfod && fetch_names(nm, p)) {
		cp_call_sites_free(&p->call_sites); /* named again, from the cache */
		cp_call_sites_resolve(nm->sym, nm->have_table ? &nm->table : NULL, raw->sites,
				      raw->nsites, &p->call_sites);
	}
	if (raw->nstacks)
		cp_named_stacks_build(nm->sym, raw->stacks, raw->nstacks, &p->stacks);
	if (p->stacks.truncated)
		cp_profile_warn(
			p,
			"%llu reads' stacks are cut short where their walk left the target's code (a return address read from data, past code without frame pointers or unwind rules): their outer frames are not shown",
			(unsigned long long)p->stacks.truncated);
	hint_unnamed(nm, p);
	hint_outside_files(p);
	if (cp_symbolizer_check_stale(nm->sym, &err))
		cp_profile_warn(p, "%s", err.msg);
	if (p->totals.site_unnamed && p->mechanism == CP_MECHANISM_PATCH)
		cp_profile_warn(
			p,
			"%llu reads have no call site: over %d distinct sites in one thread, threads with no slot of their own in the target's table, or reads made while the window's edges were read by threads that never paused%s",
			(unsigned long long)p->totals.site_unnamed, CP_PATCH_SITE_ENTRIES,
			p->followed ? ", or processes running other code (an exec'd program)" : "");
	else if (p->totals.site_unnamed)
		cp_profile_warn(p, "%llu reads have no call site: over %d distinct sites",
				(unsigned long long)p->totals.site_unnamed, CP_MAX_SITES);
	if (p->totals.site_uncredited)
		cp_profile_warn(
			p,
			"%llu reads inside requests are missing from their call site's per-op figure: over %d distinct sites in one request (%d in one thread with the vDSO patch)",
			(unsigned long long)p->totals.site_uncredited, CP_PENDING_SITES,
			CP_PATCH_SITE_ENTRIES);
	if (p->totals.stack_drops)
		cp_profile_warn(p, "%llu reads have no stack: over %d distinct stacks",
				(unsigned long long)p->totals.stack_drops, CP_MAX_STACKS);
	if (p->totals.stacks_preempted)
		cp_profile_warn(
			p,
			"%llu reads have no stack: the kernel preempted the program while it held the CPU's stack buffer, and another read came on that CPU",
			(unsigned long long)p->totals.stacks_preempted);
}
