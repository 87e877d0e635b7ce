/* profile.h - one profiling window, start to finish: what `attach` and `run`
 * share. Finds the target (or launches it held), resolves the boundary and
 * extra probes, attaches the session, waits for the duration, a signal or
 * the target's exit, and collects the counts. Nothing measured is lost: a
 * window cut short by a signal is returned, marked incomplete. */
#ifndef CP_PROFILE_H
#define CP_PROFILE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "anatomy.h"
#include "call_sites.h"
#include "clockreads.h"
#include "counters.h"
#include "host.h"
#include "mechanism_name.h"
#include "request_spec.h"
#include "stacks.h"
#include "session.h"
#include "target.h"

struct cp_error;
struct cp_profile;

#define CP_ANATOMY_SAMPLE_MAX 100000 /* --anatomy's N, at most */

struct cp_profile_options {
	pid_t pid;			/* attach: the target */
	char *const *command;		/* run: argv, NULL-terminated */
	double duration_s;		/* 0: until a signal or the target exits */
	struct cp_request_spec request; /* kind CP_REQUEST_NONE: no boundary */
	struct cp_func_spec probes[CP_MAX_PROBES];
	int nprobes;
	double ops;		   /* --ops N; 0 when not given */
	const char *events;	   /* -e LIST; NULL: the default set; "none" */
	bool stacks;		   /* --stacks: whole user stacks */
	bool debuginfod;	   /* --debuginfod: names asked for after the window */
	bool follow_forks;	   /* count the processes the target forks too */
	bool per_request_counters; /* --per-request-counters: the boundary a
					 * uprobe, the counters a window of their own */
	const pid_t *members;	   /* attach: processes counted besides pid
					 * (-p PID,PID..., --tree, --cgroup) */
	size_t nmembers;
	enum cp_mechanism mechanism; /* --mechanism; CP_MECHANISM_DEFAULT when
					 * not given (auto: mech_choice.c) */
	int verbose;
	/* --anatomy[=N]: a sample of N requests' reads in order (anatomy.h,
	 * docs/anatomy.md), judged at the window's end by --reuse-gap and
	 * --reuse-share. 0 for N, the gap or the share: the default (200,
	 * 1000 ns, 0.95). */
	bool anatomy_on;
	unsigned anatomy_sample_size;
	uint64_t reuse_gap_ns;
	double reuse_share;
	/* Called once when counting begins (every clock read from then on is
	 * counted; p->attach_s says how long getting there took), and about
	 * once a second while the window is open (live view); both with
	 * callback_arg. Either may be NULL. */
	void (*on_live)(const struct cp_profile *p, void *arg);
	void (*tick)(const struct cp_profile *p, void *arg);
	/* --interval: every interval_s seconds (0: never) while the window is
	 * open, on_interval is called with callback_arg and *p holding
	 * CUMULATIVE values since counting began: p->totals (read from the
	 * mechanism), p->call_sites named so far (cp_call_sites_resolve over
	 * every site the mechanism holds), p->counters read so far (where
	 * counters are measured: p->counters_measured), p->duration_s so far
	 * and p->complete false. Not called again at the window's end: the
	 * final *p that cp_profile_collect returns is the last snapshot. A
	 * consumer wanting per-interval figures subtracts two snapshots
	 * (lib/runfile's interval_record.h). With interval_s > 0 the window
	 * is never split: counters share it with the reads. */
	double interval_s;
	void (*on_interval)(const struct cp_profile *p, void *arg);
	void *callback_arg;
};

/* One process counted: the target, then each process it forked that was
 * followed (run's default), in the order they started. */
struct cp_process_row {
	pid_t pid, ppid;
	char command[64];		/* its comm: at its exit or exec, else now */
	char *executable;		/* what it ran (malloc'd): a process attach was
				 * given, and those it forked; NULL: the
				 * target's executable */
	double start_s, end_s;		/* fork and exit (or exec), s since the clock
				 * window opened; start 0 for the target;
				 * end < 0: still running */
	bool execed;			/* exec()ed another program: counted up to it */
	bool known;			/* false: its reads could not be had */
	uint64_t reads;			/* in the clock window */
	uint64_t requests, in_requests; /* complete requests, reads inside them */
};

struct cp_probe_info {
	char symbol[512];
	char file[PATH_MAX]; /* as the target sees it */
};

#define CP_MAX_WARNINGS 8

/* What ended the window; run.json's end_reason is cp_end_reason_name's. */
enum cp_end_reason {
	CP_END_DURATION,    /* "duration": it ran its length */
	CP_END_SIGNAL,	    /* "signal": Ctrl-C, SIGTERM or SIGHUP */
	CP_END_TARGET_EXIT, /* "target-exit" */
	CP_END_ERROR,	    /* "error": waiting failed */
};

/* Where the ops divisor came from; run.json's ops_source is
 * cp_ops_source_name's (null for CP_OPS_NONE). */
enum cp_ops_source {
	CP_OPS_NONE,	/* no divisor */
	CP_OPS_REQUEST, /* "request": complete requests counted */
	CP_OPS_FLAG,	/* "--ops": given on the command line */
};

const char *cp_end_reason_name(enum cp_end_reason r);
const char *cp_ops_source_name(enum cp_ops_source s);

struct cp_profile {
	struct cp_target target;
	struct cp_host host;
	struct cp_totals totals;
	struct cp_session_stats stats;
	enum cp_mechanism mechanism;	       /* what counted (never auto) */
	enum cp_mechanism requested_mechanism; /* what was asked (auto, or one) */
	/* Why auto counted with the fallback, not the patch: the patch's own
	 * refusal, met before anything was counted, or --stacks; "" when the
	 * mechanism asked for (or auto's first choice) counted. */
	char fallback_reason[512];
	struct cp_selftest selftest; /* the mechanism's start-up proof */
	/* How long one thread of the target was stopped to attach and to
	 * detach (the patch mechanism), in ms; -1: never. */
	double pause_ms[2];
	unsigned stops[2];     /* ... and how many times (every stop
					 * clockprof makes, each) */
	int breakpoints_fire;  /* 1, 0, or -1: not tested */
	size_t modules_loaded; /* files first probed in the window */
	char started_at[40];   /* RFC 3339, UTC */
	double attach_s;       /* from the start until probes were live */
	double naming_s;       /* naming call sites and stacks after the
					 * window closed (s) */
	double debuginfod_s;   /* --debuginfod: asking the servers, s
					 * (part of naming_s); 0: not asked */
	double duration_s;     /* the window's length */
	bool complete;	       /* false when a signal cut it short */
	enum cp_end_reason end_reason;
	bool target_exited;
	int exit_status; /* wait status, when we launched it */
	bool launched;
	char request_text[1024]; /* "" without a boundary */
	/* The boundary as resolved, whatever its spelling (run.json's
	 * request.boundary): func: the file as the target sees it, whether
	 * it is the target's main executable, and the symbol as found in
	 * it; syscall: the syscall's name. */
	char request_file[PATH_MAX];
	char request_symbol[512];
	bool request_in_main;
	struct cp_probe_info probes[CP_MAX_PROBES];
	int nprobes;
	double ops; /* 0: no divisor */
	enum cp_ops_source ops_source;
	double cost_ns_per_hit;	   /* the self-test's; < 0 unknown */
	double clock_window_cpu_s; /* the target's task-clock in the clock
					 * window, s (0: unknown) */
	/* The target's CPU time per request where the window was split and
	 * task-clock counted: [0] in the clock window (every probe), [1] in
	 * the counter window (the boundary probe alone), ns; 0: not measured. */
	double cpu_ns_per_request[2];
	/* The processes counted, the target first; with follow_forks only
	 * (none otherwise: the target is all). */
	struct cp_process_row *processes;
	size_t nprocesses;
	bool followed;			 /* follow_forks was asked for */
	struct cp_call_sites call_sites; /* where the reads were */
	struct cp_named_stacks stacks;	 /* with --stacks */
	/* --anatomy: the sampled requests as the collection hands them over
	 * (filled before the window closes), and what the rule made of them
	 * once it closed (anatomy.on false without --anatomy). */
	struct cp_anatomy_samples anatomy_samples;
	struct cp_anatomy anatomy;
	bool stacks_recorded; /* --stacks was given */
	/* --stacks: reads whose stack clockprof walked from the program's
	 * copy (before every function's rules were in place), and when they
	 * were: s after the window opened, < 0 not during the window. */
	unsigned long long stacks_from_copies;
	double stack_rules_s;
	/* Counters (lib/probe/counters/include/counters.h): specs and values in -e order. */
	struct cp_event_spec *event_specs;
	size_t nevents;
	struct cp_counter_value *counters;
	bool counters_measured;
	bool counters_split;		       /* their own window, boundary probe only */
	bool boundary_in_target;	       /* the boundary closed its requests in the
					 * target, with no trap (the vDSO patch) */
	bool boundary_wrapped;		       /* ... a syscall: boundary's, at the C
					 * library's functions that make it,
					 * checked against the kernel's syscalls */
	struct cp_wrapper_check wrapper_check; /* what that check found */
	double wrapper_check_s;		       /* how long it ran (sys_enter let go
					 * then); < 0: the whole window */
	bool counter_phase;		       /* in that window now */
	double clock_window_s, counter_window_s;
	unsigned long long counter_requests; /* requests in the counter window */
	int dist_event;			     /* event_specs index of the per-request
					 * distribution, -1: none */
	size_t dist_threads;		     /* threads it covers */
	struct cp_dist dist;
	char *warnings[CP_MAX_WARNINGS]; /* each whole (allocated: never cut) */
	int nwarnings;
	/* private: the signal mask to restore once the results are out */
	sigset_t saved_mask;
	bool mask_saved;
};

/* Runs the whole window; on success *p holds the results (release with
 * cp_profile_release). Errors before the window opens are returned with
 * their exit code; a launched command is killed in that case. */
int cp_profile_collect(const struct cp_profile_options *o, struct cp_profile *p,
		       struct cp_error *err);
void cp_profile_release(struct cp_profile *p);

/* The exit status `run` passes on: 0, or the launched command's own
 * failure when it ended by itself (its exit code, or 128 + the signal
 * that killed it, as a shell reports it). A command that clockprof ended
 * (duration, a signal to clockprof) gives 0. */
int cp_profile_command_status(const struct cp_profile *p);

/* The counts that figures per op divide: those of complete requests when
 * the boundary gives the ops (exact, no partial interval), else the whole
 * window's (--ops). */
/* What the probes cost the target, as a share of its CPU time in the clock
 * window, in %; < 0 unknown. Estimated: hits x the self-test's cost per
 * hit, which is timed on clockprof's own thread and can exceed what the
 * target's traps cost it (98-112% was said on redis and the demo): the
 * target's task-clock includes its traps, so it is capped at 100. Measured
 * (the clock probes' share, the boundary's being in both halves): 1 -
 * cpu_ns_per_request[1] / cpu_ns_per_request[0], from 0 to 100. */
double cp_profile_overhead_estimated_pct(const struct cp_profile *p);
double cp_profile_overhead_measured_pct(const struct cp_profile *p);

const struct cp_read_counts *cp_profile_per_op_counts(const struct cp_profile *p);

/* Whether nothing trapped in the window: the reads and the requests, if
 * any, were counted in the target (the vDSO patch, a boundary closed
 * there), and no uprobe or breakpoint was hit. The counters then measure
 * the program, not clockprof. */
bool cp_profile_trap_free(const struct cp_profile *p);

#endif
