/* profile_warnings.c - the warnings a profile keeps for its summary,
 * run.json and the report: each whole (formatted and allocated, never
 * cut), at most CP_MAX_WARNINGS, freed by cp_profile_release. Every step
 * of the window adds its own: apart from the steps' order (profile.c), so
 * that none of them calls back into it. */
#include <stdarg.h>
#include <stdio.h>

#include "profile.h"
#include "profile_window.h"
#include "session.h"

void cp_profile_warn(struct cp_profile *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->nwarnings == CP_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	n = vasprintf(&p->warnings[p->nwarnings], fmt, ap);
	va_end(ap);
	if (n >= 0)
		p->nwarnings++;
}

void cp_window_warn_leaderless(const struct cp_window *w, const struct cp_session *s,
			       const struct cp_session_config *cfg, struct cp_profile *p)
{
	bool patch = p->mechanism == CP_MECHANISM_PATCH;

	if (!w->leader_gone ||
	    !(cp_session_holds_uprobes(s) || (cfg->boundary_func && !cfg->boundary_in_target)))
		return;
	cp_profile_warn(
		p,
		"process %d's main thread exited during the window while others ran on: the kernel then keeps clockprof's uprobes in it only until another program removes one on the same file (another clockprof, bpftrace, perf), so what they count after that may be short%s",
		(int)p->target.pid,
		patch ? " (syscall()'s reads, a boundary's requests); counted alone (attach PID, run --no-inherit), the patch places none" :
			"; the patch (--mechanism patch) counts such a process alone with none");
}

void cp_window_warn_lifecycle(struct cp_profile *p, const struct cp_session *s)
{
	unsigned forks, followed_execed, traced;
	bool execed;

	cp_session_lifecycle(s, &execed, &forks, &followed_execed, &traced);
	if (execed)
		cp_profile_warn(
			p,
			"the target exec()ed a new program during the window: its clock "
			"reads from the exec on are not counted (the probes were in the old image)");
	if (forks && p->followed)
		cp_profile_warn(p,
				"%u process%s the target started during the window %s not "
				"followed (too many at once): %s clock reads are not counted",
				forks, forks == 1 ? "" : "es", forks == 1 ? "was" : "were",
				forks == 1 ? "its" : "their");
	else if (forks)
		cp_profile_warn(
			p,
			"the target started %u process%s during the window: %s clock reads "
			"are not counted (only the target's own threads are%s)",
			forks, forks == 1 ? "" : "es", forks == 1 ? "its" : "their",
			p->mechanism == CP_MECHANISM_PATCH || !p->launched ?
				"" :
				"; run follows the processes it forks with the vDSO patch only");
	if (traced)
		cp_profile_warn(p,
				"%u process%s the target started %s traced by another process "
				"(a debugger, strace) at %s exec: not held there to be patched, %s "
				"clock reads from the exec on are not counted",
				traced, traced == 1 ? "" : "es", traced == 1 ? "was" : "were",
				traced == 1 ? "its" : "their", traced == 1 ? "its" : "their");
	followed_execed -= traced < followed_execed ? traced : followed_execed;
	if (followed_execed)
		cp_profile_warn(p,
				"%u process%s the target started exec()ed another program: "
				"%s clock reads from the exec on are not counted",
				followed_execed, followed_execed == 1 ? "" : "es",
				followed_execed == 1 ? "its" : "their");
}
