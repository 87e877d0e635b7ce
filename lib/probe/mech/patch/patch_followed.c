/* patch_followed.c - see patch_followed.h. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "patch_followed.h"
#include "patch_members.h"
#include "patch_requests.h"
#include "patch_table.h"
#include "procfs.h"
#include "session.h"
#include "session_probes.h"
#include "vdso_patch.h"

/* A live process's counts: a forked child's table read whole (it was
 * wiped at its fork), a member's since the window opened (its own
 * patch's mark). */
static bool read_live(const struct cp_patch_members *ms, const struct cp_followed *f,
		      struct cp_vdso_patch_counts *c, struct cp_patch_sites *sites)
{
	const struct cp_patch_member *mb = cp_patch_members_find(ms, (pid_t)f->p.pid);
	uint64_t sums[CP_PATCH_SLOT_WORDS];
	struct cp_patch_sites own = { 0 };

	if (f->p.flags & CP_PROC_MEMBER) {
		if (!mb || cp_vdso_patch_read(mb->patch, c) || cp_vdso_patch_sites(mb->patch, &own))
			return false;
	} else if (cp_patch_table_read_whole((pid_t)f->p.pid, f->p.table, sums, &own)) {
		return false;
	} else {
		cp_patch_counts_between(NULL, sums, c);
	}
	for (size_t i = 0; i < own.n && !(f->p.flags & CP_PROC_NO_SITES); i++)
		cp_patch_sites_add(sites, own.v[i].key, own.v[i].count);
	cp_patch_sites_free(&own);
	return true;
}

/* c += more. */
static void counts_add(struct cp_vdso_patch_counts *c, const struct cp_vdso_patch_counts *more)
{
	c->total += more->total;
	for (int e = 0; e < CP_ENTRY_MAX; e++)
		c->by_entry[e] += more->by_entry[e];
	for (int k = 0; k < CP_CLOCK_SLOTS; k++)
		c->by_clock[k] += more->by_clock[k];
	c->threads += more->threads;
	c->shared += more->shared;
}

/* The flags of a process whose reads are all in its sums: it exited, or
 * it is at an exec (in it, held there, or let go as the window closed). */
#define CP_PROC_IN_SUMS (CP_PROC_EXITED | CP_PROC_EXECING | CP_PROC_EXEC_HELD | CP_PROC_EXEC_LATE)

/* One followed process's reads: a live one's (read_live; with what its
 * image before an exec read, summed at the exec), else as the program
 * summed them (thread by thread, as they exited; at an exec). Its sites
 * join sites. False when neither can be had (it exec()ed and was not
 * followed, or it is in no pid namespace of clockprof's). */
static bool read_one(const struct cp_mech *m, const struct cp_patch_members *ms,
		     struct cp_followed *f, struct cp_vdso_patch_counts *c,
		     struct cp_patch_sites *sites)
{
	uint64_t sums[CP_PATCH_SLOT_WORDS];

	if (f->p.flags & CP_PROC_EXECED)
		return false;
	if (!(f->p.flags & CP_PROC_IN_SUMS) && f->p.pid && read_live(ms, f, c, sites)) {
		struct cp_vdso_patch_counts before_exec;

		if (f->p.flags & CP_PROC_REIMAGED) {
			memcpy(sums, f->p.sums, sizeof(sums));
			cp_patch_counts_between(NULL, sums, &before_exec);
			counts_add(c, &before_exec);
		}
		return true;
	}
	/* gone, or at an exec, since it was listed: its exit (exec) was
	 * traced before its memory went */
	if (!(f->p.flags & CP_PROC_IN_SUMS) && cp_session_followed_one(m->s, f->host_tgid, &f->p))
		return false;
	if ((f->p.flags & CP_PROC_EXECED) || !(f->p.flags & CP_PROC_IN_SUMS))
		return false;
	memcpy(sums, f->p.sums, sizeof(sums)); /* __u64 words as uint64_t */
	cp_patch_counts_between(NULL, sums, c);
	return true;
}

/* With the boundary closed in the target, a fork's own requests: a
 * running one's read from its table (with its reads through syscall()),
 * an exited one's reads through syscall() as the program summed them (its
 * requests it added to the window's itself). in_requests NULL: its reads
 * through syscall() only (the session's program closed its requests). A
 * process followed into the image it exec()ed is read so too: its table
 * is that image's, fresh at the exec (patch_execs.h); a member attach
 * was given is not (its patch closes none). */
static void fork_requests(const struct cp_followed *f, bool hres, struct cp_totals *t,
			  struct cp_mech_proc *mp, struct cp_patch_sites *in_requests)
{
	static const struct cp_patch_requests_mark zeros;
	struct cp_patch_requests r;

	if ((f->p.flags & CP_PROC_MEMBER) && !(f->p.flags & CP_PROC_REIMAGED))
		return;
	if (f->p.flags & CP_PROC_IN_SUMS) {
		mp->reads += cp_patch_syscalls_add(f->p.syscall_sums, NULL, &t->all);
		return;
	}
	if (cp_patch_requests_read_whole((pid_t)f->p.pid, f->p.table, &r))
		return;
	mp->reads += cp_patch_requests_add(&r, &zeros, hres, in_requests != NULL, t);
	if (in_requests) {
		mp->requests = r.sums.requests;
		mp->in_requests = cp_patch_requests_reads(&r);
		for (size_t i = 0; i < r.sites.n; i++)
			cp_patch_sites_add(in_requests, r.sites.v[i].key, r.sites.v[i].count);
	}
	cp_patch_requests_free(&r);
}

bool cp_patch_followed_read(struct cp_mech *m, const struct cp_patch_members *ms, bool hres,
			    struct cp_totals *t, struct cp_patch_sites *into,
			    struct cp_patch_sites *in_requests, bool syscalls)
{
	struct cp_followed *f = NULL;
	struct cp_patch_sites sites = { 0 };
	uint64_t reads = 0, named = 0;
	size_t n = 0, cap = 0;

	m->nprocs = 0;
	if (cp_session_followed(m->s, &f, &n) || !n ||
	    cp_grow(&m->procs, &cap, n, sizeof(*m->procs))) {
		free(f);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		struct cp_vdso_patch_counts c;
		bool known = read_one(m, ms, &f[i], &c, &sites);

		const struct cp_patch_member *mb = f[i].p.flags & CP_PROC_MEMBER ?
							   cp_patch_members_find(
								   ms, (pid_t)f[i].p.pid) :
							   NULL;

		m->procs[m->nprocs++] = (struct cp_mech_proc){ .host_tgid = f[i].host_tgid,
							       .reads = known ? c.total : 0,
							       .known = known,
							       .exe = mb ? mb->exe : NULL };
		if (known) {
			cp_patch_counts_add(&c, hres, t);
			reads += c.total;
			if (in_requests || syscalls)
				fork_requests(&f[i], hres, t, &m->procs[m->nprocs - 1],
					      in_requests);
		}
	}
	cp_session_child_exit_sites(m->s, cp_patch_sites_add_to, &sites);
	cp_patch_sites_normalize(&sites);
	for (size_t i = 0; i < sites.n; i++) {
		cp_patch_sites_add(into, sites.v[i].key, sites.v[i].count);
		named += sites.v[i].count;
	}
	if (reads > named)
		t->site_unnamed += reads - named;
	cp_patch_sites_free(&sites);
	free(f);
	return true;
}

/* Whether p's process is still the one under its pid (its start time):
 * one that got the pid since it exited is never written to. */
static bool same_process(const struct cp_proc *p)
{
	struct cp_proc_stat st;

	return cp_proc_stat_read((pid_t)p->pid, &st) == 0 && st.start_time == p->start_ticks;
}

void cp_patch_followed_restore(struct cp_mech *m)
{
	struct cp_followed *f = NULL;
	size_t n = 0, failed = 0;
	pid_t first = 0;

	if (cp_session_followed(m->s, &f, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct cp_error err = { 0 };

		if (f[i].p.flags & (CP_PROC_EXECED | CP_PROC_MEMBER | CP_PROC_IN_SUMS) ||
		    !f[i].p.pid || !same_process(&f[i].p) ||
		    cp_vdso_patch_restore_copy((pid_t)f[i].p.pid, &err) == 0)
			continue;
		if (!failed++)
			first = (pid_t)f[i].p.pid;
	}
	if (failed)
		cp_mech_warn_closing(
			m,
			"the vDSO of %zu process%s the target forked (process %d%s) could not be switched back: it counts on in its own table, unread",
			failed, failed == 1 ? "" : "es", (int)first,
			failed > 1 ? " and others" : "");
	free(f);
}
