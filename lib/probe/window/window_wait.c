/* window_wait.c - the profiling window's poll loop and the descriptors it
 * polls: blocked signals as a signalfd, the target as a pidfd, and the
 * dynamic linker's hook from the session, or, for a mechanism that counts
 * in the target, a look at its maps on a timer. See profile_window.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "error.h"
#include "mechanism.h"
#include "procfs.h"
#include "profile_window.h"
#include "session.h"
#include "wrapper_check.h"

void cp_window_restore_signals(struct cp_profile *p)
{
	if (p->mask_saved)
		sigprocmask(SIG_SETMASK, &p->saved_mask, NULL);
	p->mask_saved = false;
}

/* Ctrl-C, SIGTERM and SIGHUP end the window instead of clockprof: they are
 * blocked from the very start (a signal during set-up ends the window as
 * soon as it opens, and a launched command is never left behind) until
 * the results are written (cp_profile_release restores the mask). */
int cp_window_block_signals(struct cp_window *w, struct cp_profile *p, struct cp_error *err)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &p->saved_mask);
	p->mask_saved = true;
	w->sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (w->sigfd < 0)
		return cp_fail(err, CP_EXIT_PROFILE, "signalfd: %s", strerror(errno));
	return 0;
}

int cp_window_watch(struct cp_window *w, pid_t pid, struct cp_error *err)
{
	w->pidfd = pidfd_open(pid, 0);
	if (w->pidfd < 0)
		return cp_fail(err, CP_EXIT_PROFILE, "cannot watch process %d: %s", pid,
			       strerror(errno));
	return 0;
}

void cp_window_close(struct cp_window *w)
{
	if (w->sigfd >= 0)
		close(w->sigfd);
	if (w->pidfd >= 0)
		close(w->pidfd);
	w->sigfd = w->pidfd = -1;
	free(w->dist_failed.tids);
	w->dist_failed = (struct cp_dist_failed){ 0 };
	cp_module_probes_free(&w->modules);
	cp_late_stacks_free(&w->late);
}

static void warn_cb(void *arg, const char *msg)
{
	cp_profile_warn(arg, "%s", msg);
}

int cp_window_probe_files(struct cp_window *w, struct cp_profile *p, struct cp_session *s,
			  pid_t pid, struct cp_error *err)
{
	w->modules.warn = warn_cb;
	w->modules.warn_arg = p;
	return cp_module_probes_sync(&w->modules, w->mech, s, pid, err);
}

/* How long a target whose files could not be read gets to show that it
 * is exiting: its memory goes before its pidfd tells of its exit. */
#define EXIT_NOTICE_MS 100

/* Whether the target is exiting (its pidfd turns readable). */
static bool target_exiting(const struct cp_window *w)
{
	struct pollfd fd = { w->pidfd, POLLIN, 0 };

	return poll(&fd, 1, EXIT_NOTICE_MS) == 1;
}

/* dlopen or dlclose in the target: new files get their probes, and the
 * wrappers in them their unwind rules. Reads a new library makes before
 * its probes are placed (a few ms after dlopen returns) are not seen. */
static void libraries_changed(struct cp_window *w, struct cp_profile *p, struct cp_session *s)
{
	if (cp_session_consume_events(s))
		cp_window_look_for_libraries(w, p, s);
}

/* Whether the target exec()ed another program, not followed there: its
 * new image's files are nothing of the window's (the probes, the table
 * and its rules were the old image's). */
static bool target_reimaged(const struct cp_session *s)
{
	unsigned forks, followed_execed, traced;
	bool execed;

	cp_session_lifecycle(s, &execed, &forks, &followed_execed, &traced);
	return execed;
}

void cp_window_look_for_libraries(struct cp_window *w, struct cp_profile *p, struct cp_session *s)
{
	struct cp_error err = { 0 };
	int added;

	if (p->counter_phase || target_reimaged(s))
		return;
	added = cp_window_probe_files(w, p, s, p->target.pid, &err);
	if (added < 0) {
		/* An exiting target's maps are gone before its exit is told:
		 * the next poll answers the exit, and no library was missed. */
		if (!target_exiting(w))
			cp_profile_warn(p, "a library loaded in the window could not be probed: %s",
					err.msg);
		return;
	}
	p->modules_loaded += (size_t)added;
	if (!added || !cp_naming_reopen(&w->naming, p))
		return;
	if (w->naming.have_table && cp_mech_set_unwind(w->mech, &w->naming.table, &err))
		cp_profile_warn(p, "%s", err.msg);
	if (w->stacks)
		cp_late_stacks_restart(&w->late);
}

/* How often the counter window looks for threads born or gone. A look
 * lists /proc/PID/task, about 1 us per thread: 5% of a core for a target
 * of 5,000 threads, and only while per-request counters are measured. A
 * longer or backed-off interval was measured to leave threads born in the
 * window uncovered for a third of it. */
#define DIST_RESCAN_S 0.1

/* How often a mechanism that counts in the target has its maps looked
 * at for libraries (CP_MECH_LOOKS_FOR_LIBRARIES): one read of
 * /proc/PID/maps, ~50 us for a server's hundred mappings, 20 times a
 * second. A library is found within this of its dlopen, the dynamic
 * linker's uprobe within a few ms: the wrappers of its own that it calls
 * meanwhile name their own line (docs/mechanisms.md). A look at tens of
 * thousands of mappings takes tens of ms (24.5 ms for 60,000, measured:
 * a core's worth every 50 ms): the next one waits LOOK_SPACING times as
 * long as the last one's read of the maps took, so that looks take 5% of
 * a CPU at most. Not as long as the look took: a new file's probing (a
 * one-off), or the 100 ms a failed look waits for the target's exit, made
 * the next look 2 s away, and a library loaded meanwhile was named by
 * its addresses alone if the target exited first. */
#define LIBRARY_LOOK_S 0.05
#define LOOK_SPACING 20

/* The loop's timers: the live view's tick, the thread rescan, the look
 * for libraries, the end. */
struct timers {
	double start, deadline; /* deadline 0: none */
	double next_tick, next_rescan;
	bool rescan;
	double interval, next_interval; /* --interval; 0: none */
	bool look;
	double next_look;
};

static int timeout_ms(const struct timers *t)
{
	double now = cp_monotonic_s(), until = t->next_tick;

	if (t->rescan && t->next_rescan < until)
		until = t->next_rescan;
	if (t->next_look < until) /* every mechanism: leader_gone */
		until = t->next_look;
	if (t->interval > 0 && t->next_interval < until)
		until = t->next_interval;
	if (t->deadline > 0 && t->deadline < until)
		until = t->deadline;
	return until > now ? (int)((until - now) * 1000) + 1 : 0;
}

/* What one poll said: the signal or exit that ends the window (returns 1,
 * with *sig set), or 0 to go on. A target that has exited has no
 * libraries left to probe: its exit is answered first. */
static int answer_poll(struct cp_window *w, struct cp_profile *p, struct cp_session *s,
		       const struct pollfd fds[3], int *sig)
{
	struct signalfd_siginfo si;

	if ((fds[0].revents & POLLIN) && read(w->sigfd, &si, sizeof(si)) == sizeof(si)) {
		p->end_reason = CP_END_SIGNAL;
		*sig = (int)si.ssi_signo;
		return 1;
	}
	if (fds[1].revents & POLLIN) {
		p->end_reason = CP_END_TARGET_EXIT;
		p->target_exited = true;
		*sig = 0;
		return 1;
	}
	if (fds[2].revents & POLLIN) {
		libraries_changed(w, p, s);
		cp_mech_follow_execs(w->mech);
	}
	return 0;
}

/* The look for libraries: the mechanism's, every LIBRARY_LOOK_S or
 * spaced by what reading the maps takes; and, whatever the mechanism,
 * once the target's main thread has exited while others run on: the
 * kernel then keeps no uprobe of clockprof's on the dynamic linker's
 * hook past another program's removal of one on that file. */
static void look_timer(struct timers *t, struct cp_profile *p, struct cp_session *s,
		       struct cp_window *w)
{
	double took = 0;

	if (!w->leader_gone)
		w->leader_gone = cp_proc_leaderless(p->target.pid);
	if (t->look || w->leader_gone) {
		cp_window_look_for_libraries(w, p, s);
		took = w->modules.read_s; /* not a new file's probing, once */
	}
	t->next_look = cp_monotonic_s() + (took * LOOK_SPACING > LIBRARY_LOOK_S ?
						   took * LOOK_SPACING :
						   LIBRARY_LOOK_S);
}

/* The timers that came due: the thread rescan and the live view. */
static void run_timers(struct timers *t, struct cp_profile *p, const struct cp_profile_options *o,
		       struct cp_session *s, struct cp_window *w, double now)
{
	if (t->rescan && now >= t->next_rescan) {
		cp_dist_cover_threads(p, s, &w->dist_failed);
		t->next_rescan = now + DIST_RESCAN_S;
	}
	if (now >= t->next_look)
		look_timer(t, p, s, w);
	if (t->interval > 0 && now >= t->next_interval) {
		cp_window_interval(w, p, o, now - t->start);
		while (t->next_interval <= now)		 /* a stall's missed ones: skipped, */
			t->next_interval += t->interval; /* not fired back to back */
	}
	if (now < t->next_tick)
		return;
	t->next_tick += 1;
	if (!p->counter_phase)
		cp_wrapper_check_tick(p, s, now - t->start);
	if (p->followed)
		cp_session_drain_followed(s);
	if (o->tick && !p->counter_phase && cp_mech_read(w->mech, &p->totals) == 0) {
		p->duration_s = now - t->start;
		o->tick(p, o->callback_arg);
	}
}

int cp_window_wait(struct cp_window *w, struct cp_profile *p, const struct cp_profile_options *o,
		   struct cp_session *s, double start, double deadline)
{
	struct timers t = { start,
			    deadline,
			    start + 1,
			    start + DIST_RESCAN_S,
			    p->counter_phase && p->dist_event >= 0,
			    o->interval_s,
			    start + o->interval_s,
			    cp_mech_has(w->mech, CP_MECH_LOOKS_FOR_LIBRARIES),
			    start + LIBRARY_LOOK_S };

	for (;;) {
		struct pollfd fds[3] = { { w->sigfd, POLLIN, 0 },
					 { w->pidfd, POLLIN, 0 },
					 { cp_session_events_fd(s), POLLIN, 0 } };
		int rc = poll(fds, 3, timeout_ms(&t)), sig;
		double now;

		if (rc < 0 && errno != EINTR) {
			p->end_reason = CP_END_ERROR;
			return -1;
		}
		if (rc > 0 && answer_poll(w, p, s, fds, &sig))
			return sig;
		now = cp_monotonic_s();
		if (deadline > 0 && now >= deadline) {
			p->end_reason = CP_END_DURATION;
			return 0;
		}
		run_timers(&t, p, o, s, w, now);
	}
}
