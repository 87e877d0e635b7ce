/* profile_window.h - what the parts of one profiling window share, inside
 * lib/probe: the window's descriptors, the mechanism that sees clock reads
 * (lib/probe/mech/mechanism.h), the files probed so far and what names
 * their call sites. profile.c opens and closes the window;
 * window_wait.c waits in it; dist_threads.c keeps per-thread counters on
 * its threads; child_reap.c ends a launched command. Not for other stages. */
#ifndef CP_PROFILE_WINDOW_H
#define CP_PROFILE_WINDOW_H

#include <stdbool.h>
#include <sys/types.h>

#include "late_stacks.h"
#include "module_probes.h"
#include "monotonic.h"
#include "profile.h"
#include "unwind_table.h"

struct cp_mech;
struct cp_session;
struct cp_symbolizer;

/* What names call sites: the target's modules, captured once they are all
 * mapped, and the rules for stepping out of their clock wrappers. Without
 * them reads are still counted; their sites stay unnamed, with a warning. */
struct cp_naming {
	struct cp_symbolizer *sym;
	bool debuginfod; /* --debuginfod (set before collecting) */
	struct cp_unwind_table table;
	bool have_table;
};

/* Threads whose distribution counter could not be opened: not tried
 * again at every rescan. */
struct cp_dist_failed {
	pid_t *tids; /* sorted */
	size_t n, cap;
};

struct cp_window {
	int sigfd, pidfd;
	struct cp_mech *mech; /* what sees clock reads */
	struct cp_dist_failed dist_failed;
	struct cp_module_probes modules; /* files probed so far */
	struct cp_naming naming;
	bool stacks;		    /* --stacks: name whole stacks */
	struct cp_late_stacks late; /* --stacks: every function's rules */
	struct cp_counters *ctr;    /* -e events (NULL: none) */
	/* The target's main thread exited while others ran on, seen at a
	 * look (cp_proc_leaderless): its libraries are looked for on the
	 * timer whatever the mechanism, and its uprobes are said. */
	bool leader_gone;
};

/* Adds a one-line warning to the profile, whole (at most CP_MAX_WARNINGS;
 * cp_profile_release frees them). */
void cp_profile_warn(struct cp_profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Once the mechanism's part of cfg is in (cp_mech_configure): following
 * the target's forks, a boundary uprobe and --probe functions count in
 * every process that runs their files (session_attach.c): not when another
 * process runs one of them already, whose every call would trap. Then
 * the forks are not followed, and the warning says why. A boundary the
 * mechanism closes in the target places no uprobe, and leaves them
 * followed (profile_prepare.c). */
void cp_profile_check_follow(struct cp_profile *p, struct cp_session_config *cfg);

/* Inspects the target, resolves the boundary and --probe functions into
 * boundary and probes[] (a syscall: boundary's C library functions into
 * wrappers[CP_SYSCALL_WRAPPERS_MAX]), chooses the mechanism to open first
 * (p->mechanism, p->requested_mechanism) and fills cfg in, all but the
 * mechanism's part (cp_mech_configure: the window's, so that a fallback
 * starts from this cfg again) (profile_prepare.c). */
int cp_profile_prepare(const struct cp_profile_options *o, struct cp_profile *p,
		       struct cp_session_config *cfg, struct cp_uprobe_point *boundary,
		       struct cp_uprobe_point *wrappers, struct cp_uprobe_point *probes,
		       struct cp_error *err);

/* Window set-up and tear-down (window_wait.c). */
int cp_window_block_signals(struct cp_window *w, struct cp_profile *p, struct cp_error *err);
void cp_window_restore_signals(struct cp_profile *p);
int cp_window_watch(struct cp_window *w, pid_t pid, struct cp_error *err);
void cp_window_close(struct cp_window *w);

/* Probes the files the target maps now that are not probed yet; returns
 * how many were new, or -1 with err set. */
int cp_window_probe_files(struct cp_window *w, struct cp_profile *p, struct cp_session *s,
			  pid_t pid, struct cp_error *err);

/* An exec mid-window ends the counting (the probes were placed in the old
 * image), and processes the target started are not the target: both are
 * said in p's warnings, so that a count lower than expected is explained. */
void cp_window_warn_lifecycle(struct cp_profile *p, const struct cp_session *s);

/* The kernel limits a uprobe to a process by its main thread's memory:
 * once that thread has exited while others run on (w->leader_gone),
 * another program's removal of a uprobe on the same file (another
 * clockprof, bpftrace, perf) takes the target's out too, unsaid. Said in
 * p's warnings when the run relied on any (s's, or cfg's boundary). */
struct cp_session_config;
void cp_window_warn_leaderless(const struct cp_window *w, const struct cp_session *s,
			       const struct cp_session_config *cfg, struct cp_profile *p);

/* New libraries the target maps probed, their wrappers' rules given to
 * the mechanism (nothing in the counter window, nor once the target
 * exec'd a program not followed). A file that cannot be probed is said in
 * p's warnings once, unless the target is exiting. */
void cp_window_look_for_libraries(struct cp_window *w, struct cp_profile *p, struct cp_session *s);

/* Waits until the deadline (0: none), a signal or the target's exit,
 * answering dlopen, the live view's tick and the counter window's thread
 * rescans meanwhile. Sets p->end_reason; returns the signal that ended
 * the window, 0, or -1 when waiting failed. */
int cp_window_wait(struct cp_window *w, struct cp_profile *p, const struct cp_profile_options *o,
		   struct cp_session *s, double start, double deadline);

/* --interval: one cumulative snapshot into *p, given to o->on_interval
 * (window_interval.c); elapsed: s since the window opened. */
void cp_window_interval(struct cp_window *w, struct cp_profile *p,
			const struct cp_profile_options *o, double elapsed);

/* Call-site naming (window_naming.c): the symbolizer and the clock
 * wrappers' rules (--stacks' rules for every function: late_stacks.h). */
void cp_naming_open(struct cp_naming *nm, struct cp_profile *p);
void cp_naming_close(struct cp_naming *nm);
/* The modules read again (dlopen): false, the old naming kept, when they
 * cannot be (the target gone). */
bool cp_naming_reopen(struct cp_naming *nm, struct cp_profile *p);

/* What the clock window saw of where reads were, read at its end and
 * named after the probes are gone. */
struct cp_raw_places {
	struct cp_site_count *sites;
	size_t nsites;
	struct cp_stack_count *stacks;
	size_t nstacks;
};

void cp_naming_collect(struct cp_naming *nm, struct cp_profile *p, const struct cp_raw_places *raw);

/* --anatomy (window_anatomy.c): the options' settings into p->anatomy as
 * the window opens (defaults for zeros); at its end, once the collection
 * has filled p->anatomy_samples and before nm closes, the samples judged
 * into p->anatomy, its reads named, and the samples released. */
void cp_anatomy_settings(const struct cp_profile_options *o, struct cp_profile *p);
void cp_anatomy_finish(struct cp_naming *nm, struct cp_profile *p);

/* Per-request counter distribution over the target's threads
 * (dist_threads.c). */
void cp_dist_open(struct cp_profile *p, struct cp_session *s, struct cp_window *w);
void cp_dist_cover_threads(struct cp_profile *p, struct cp_session *s,
			   struct cp_dist_failed *failed);

/* The per-process rows (window_processes.c): the target's and those of
 * the processes it forked, followed, from the session and what the
 * mechanism counted of each; start: the clock window's (monotonic s). */
void cp_window_processes(struct cp_profile *p, const struct cp_session *s, const struct cp_mech *m,
			 double start);
void cp_window_processes_free(struct cp_profile *p);

/* A launched command (child_reap.c). */
void cp_child_finish(struct cp_profile *p, int end_signal);
void cp_child_kill_held(pid_t pid);

#endif
