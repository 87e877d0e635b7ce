/* profile.c - see profile.h. One window, top to bottom: signals blocked
 * and the command launched held (block_and_launch), attach (probes,
 * names, counters), open the clock window, wait, close it, switch to the
 * counter window when the counters have one of their own, and close. The poll loop is in
 * window_wait.c, per-thread counters in dist_threads.c, the launched
 * command's end in child_reap.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anatomy_collect.h"
#include "counters.h"
#include "error.h"
#include "host.h"
#include "launcher.h"
#include "mechanism.h"
#include "parallel.h"
#include "profile_window.h"
#include "registrar.h"
#include "syscall_names.h"
#include "target_cpu.h"
#include "target_exec.h"
#include "uprobe_removal.h"
#include "warmup.h"
#include "wrapper_check.h"

static void rfc3339_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const char *cp_end_reason_name(enum cp_end_reason r)
{
	static const char *const names[] = {
		[CP_END_DURATION] = "duration",
		[CP_END_SIGNAL] = "signal",
		[CP_END_TARGET_EXIT] = "target-exit",
		[CP_END_ERROR] = "error",
	};

	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "duration";
}

const char *cp_ops_source_name(enum cp_ops_source s)
{
	static const char *const names[] = {
		[CP_OPS_NONE] = NULL,
		[CP_OPS_REQUEST] = "request",
		[CP_OPS_FLAG] = "--ops",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : NULL;
}

/* Everything the window holds from start to close. */
struct run {
	struct cp_session_config cfg;
	struct cp_session_config plain; /* cfg without the mechanism's part */
	struct cp_uprobe_point boundary, probes[CP_MAX_PROBES];
	struct cp_uprobe_point wrappers[CP_SYSCALL_WRAPPERS_MAX]; /* syscall: */
	struct cp_session *s;
	struct cp_counters *ctr;  /* -e events */
	struct cp_target_cpu cpu; /* the target's CPU in the clock window */
	struct cp_raw_places raw;
	struct cp_window w;
	double begin, start;		    /* monotonic: set-up, clock window */
	bool debuginfod;		    /* --debuginfod */
	int end_signal;			    /* what ended the window; -1: an error */
	struct cp_anatomy_collect *anatomy; /* --anatomy, while the window is open */
	struct cp_target_exec exec;	    /* an attach's target's image */
};

/* The target's CPU time in the clock window (target_cpu.h): from a
 * counter it carries where its forks are followed, or where something
 * traps (the overhead estimate is wanted even if the target exits in the
 * window); else, nothing trapping, from its CPU clock, which costs it
 * nothing at its context switches. */
static bool cpu_needs_counter(const struct cp_session_config *cfg)
{
	return cfg->follow_forks || !cfg->boundary_in_target || cfg->nprobes || cfg->nmembers;
}

/* -e LIST, the default set without it, nothing with "none". */
static int parse_events(const struct cp_profile_options *o, struct cp_profile *p,
			struct cp_error *err)
{
	if (o->events && strcmp(o->events, "none") &&
	    cp_events_parse(o->events, &p->event_specs, &p->nevents, err))
		return -1;
	if (!o->events &&
	    cp_events_parse(cp_events_default_list(), &p->event_specs, &p->nevents, err))
		return -1;
	return 0;
}

/* Signals blocked, and the command launched held at exec. */
static int block_and_launch(struct run *r, const struct cp_profile_options *o, struct cp_profile *p,
			    struct cp_error *err)
{
	r->cfg.pid = o->pid;
	if (cp_window_block_signals(&r->w, p, err))
		return -1;
	if (o->command) {
		if (cp_launch_held(o->command, &r->cfg.pid, err))
			return -1;
		p->launched = true;
	}
	return 0;
}

/* Counters are opened (disabled) on every thread once the target is held
 * or attached. They are split off into a window of their own when that can
 * be divided fairly and is needed: a duration to halve, a boundary to
 * count the requests of each half, and probes that trap, whose cost the
 * counters would measure. Otherwise they share the probed window and say
 * so: with the boundary closed in the target, nothing traps per request
 * (boundary_in_target). */
static int open_counters(const struct cp_profile_options *o, struct cp_profile *p,
			 const struct cp_session_config *cfg, struct cp_counters **ctr,
			 struct cp_error *err)
{
	struct cp_counters_info info;

	if (!p->nevents)
		return 0;
	p->counters = calloc(p->nevents, sizeof(*p->counters));
	if (!p->counters || cp_counters_open(ctr, cfg->pid, p->event_specs, p->nevents, err))
		return -1;
	cp_counters_info(*ctr, &info);
	if (info.uncertain_threads)
		cp_profile_warn(
			p,
			"%zu threads were born while counters were opened: their counts may be missing",
			info.uncertain_threads);
	p->counters_split = o->duration_s > 0 && o->interval_s <= 0 &&
			    o->request.kind != CP_REQUEST_NONE && o->ops <= 0 &&
			    !cfg->boundary_in_target;
	return 0;
}

/* Loading the BPF programs is the kernel's work (the verifier), naming a
 * running target's modules and reading its build-id are ours (libdw,
 * libelf): they overlap, but for load_waits (open_session), where the
 * load first waits for the mechanism's early steps (cp_mech_await_early).
 * The mechanism's own probes follow the session's. */
struct session_job {
	struct cp_session **s;
	struct cp_mech **m;
	const struct cp_session_config *cfg;
	struct cp_naming *nm;
	struct cp_profile *p;
	bool load_waits;
	int rc;
	struct cp_error err;
};

static void session_job_run(void *ctx, size_t i, size_t worker)
{
	struct session_job *job = ctx;

	(void)worker;
	if (i == 0 && job->load_waits)
		cp_mech_await_early(job->p->mechanism);
	if (i == 0)
		job->rc = cp_session_open(job->s, job->cfg, &job->err) ||
			  cp_mech_open(job->m, job->p->mechanism, *job->s, job->cfg, &job->err);
	else if (i == 1)
		cp_target_identify(&job->p->target);
	else
		cp_naming_open(job->nm, job->p);
}

/* Opens the session and the mechanism, and reads the target's build-id
 * and, given nm, names the modules at the same time. Beside them runs
 * what the mechanism's configure started (the patch's self-test, whose
 * round trips with its child are held up most by a load beside them):
 * where naming makes three busy jobs for fewer CPUs, the load waits for
 * it. Measured on two CPUs, attach -d 100ms less its window, medians of
 * 30 alternated runs: redis-server 39.4 -> 35.8 ms, reads_target 21.4 ->
 * 22.9 ms; for a launched command (no naming) the wait cost 2.6 ms, so
 * it has none. */
static int open_session(struct cp_session **s, struct cp_mech **m,
			const struct cp_session_config *cfg, struct cp_naming *nm,
			struct cp_profile *p, struct cp_error *err)
{
	struct session_job job = { .s = s, .m = m, .cfg = cfg, .nm = nm, .p = p };
	size_t n = nm ? 3 : 2;

	job.load_waits = nm && cp_parallel_workers(3) < 3;

	cp_parallel_for(n, cp_parallel_workers(n), session_job_run, &job);
	if (job.rc)
		*err = job.err;
	return job.rc;
}

/* The session configured for p->mechanism, from the plain configuration
 * (a fallback configures it again for another). */
static int configure(struct run *r, struct cp_profile *p, struct cp_error *err)
{
	r->cfg = r->plain;
	if (cp_mech_configure(p->mechanism, &r->cfg, err))
		return -1;
	cp_profile_check_follow(p, &r->cfg);
	p->followed = r->cfg.follow_forks || r->cfg.nmembers;
	return 0;
}

/* --mechanism auto: the patch refused (err) before anything was counted.
 * The mechanism and the session are closed, which undoes all they placed
 * (the patch's close switches every entry back: the target is left as it
 * was, but for the documented inert code in its vDSO's unused end), and
 * both are opened again with the fallback, and the files probed so far
 * probed again and the wrappers' rules given back, if attach had got that
 * far. The refusal is kept as the reason. Anything else returns -1 with
 * err as it was. */
static int fall_back(struct run *r, struct cp_profile *p, struct cp_error *err)
{
	bool had_files = r->w.modules.n > 0;

	if (!r->s || !cp_mech_may_fall_back(p->requested_mechanism, p->mechanism, err))
		return -1;
	snprintf(p->fallback_reason, sizeof(p->fallback_reason), "%s", err->msg);
	cp_mech_close(r->w.mech, NULL, NULL, NULL);
	r->w.mech = NULL;
	cp_session_close(r->s);
	r->s = NULL;
	cp_module_probes_free(&r->w.modules);
	r->w.modules.dl_watched = false;
	p->mechanism = CP_MECH_FALLBACK;
	memset(err, 0, sizeof(*err));
	if (configure(r, p, err)) { /* it cannot do what was asked: say why not the patch */
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		return cp_fail(err, err->exit_code, "%s (the patch was not used: %s)", why,
			       p->fallback_reason);
	}
	if (cp_session_open(&r->s, &r->cfg, err) ||
	    cp_mech_open(&r->w.mech, p->mechanism, r->s, &r->cfg, err))
		return -1;
	/* Past attach's first steps (a launched command armed as it was held): what
	 * they gave the old session. Before them, attach goes on as usual. */
	if (!had_files)
		return 0;
	if (cp_window_probe_files(&r->w, p, r->s, r->cfg.pid, err) < 0)
		return -1;
	return r->w.naming.have_table ? cp_mech_set_unwind(r->w.mech, &r->w.naming.table, err) : 0;
}

/* Names the wrappers of the modules mapped now, for the session's
 * unwinding. */
static int name_modules(struct run *r, struct cp_profile *p, struct cp_error *err)
{
	cp_naming_open(&r->w.naming, p);
	if (r->w.naming.have_table && cp_mech_set_unwind(r->w.mech, &r->w.naming.table, err))
		return -1;
	return 0;
}

/* The session's probes placed on every file the target maps, the call-site
 * names ready and the counters open (disabled). A
 * running target has mapped its libraries: it is named before the first
 * read is seen. A launched one has not yet: it runs on to its entry point
 * (counted from exec on) and is named there. With --stacks, every
 * function's rules are built from the moment the modules are mapped, in the
 * background, without holding the window back (late_stacks.h). */
static int attach(struct run *r, const struct cp_profile_options *o, struct cp_profile *p,
		  struct cp_error *err)
{
	r->plain = r->cfg; /* the pid, from block_and_launch() */
	if (!p->launched)
		cp_target_exec_begin(&r->exec, r->cfg.pid);
	/* Every uprobe is placed by the registrar (registrar.h), forked now:
	 * after the launch, so that a launched command is clockprof's first
	 * child and has none of the registrar's descriptors. */
	cp_registrar_start();
	if (cp_profile_prepare(o, p, &r->plain, &r->boundary, r->wrappers, r->probes, err) ||
	    configure(r, p, err))
		return -1;
	if ((open_session(&r->s, &r->w.mech, &r->cfg, p->launched ? NULL : &r->w.naming, p, err) &&
	     fall_back(r, p, err)) ||
	    cp_window_probe_files(&r->w, p, r->s, r->cfg.pid, err) < 0 ||
	    (r->w.naming.have_table && cp_mech_set_unwind(r->w.mech, &r->w.naming.table, err)))
		return -1;
	if (p->launched &&
	    (cp_launch_run_to_entry(r->cfg.pid, err) ||
	     cp_window_probe_files(&r->w, p, r->s, r->cfg.pid, err) < 0 || name_modules(r, p, err)))
		return -1;
	if (o->stacks)
		cp_late_stacks_start(&r->w.late, r->s, r->cfg.pid);
	p->boundary_in_target = r->cfg.boundary_in_target;
	p->boundary_wrapped = r->cfg.boundary_in_target && r->cfg.boundary_syscall >= 0;
	p->wrapper_check_s = -1;
	if (open_counters(o, p, &r->cfg, &r->ctr, err))
		return -1;
	r->w.ctr = r->ctr; /* --interval reads them while they count */
	cp_target_cpu_open(&r->cpu, r->cfg.pid, cpu_needs_counter(&r->cfg));
	return 0;
}

/* The mechanism starts counting, right before the window's phase does. A
 * launched command's thread is armed here by the patch, whose refusal
 * (auto) still falls back: the command is held, nothing was counted. The
 * start-up figures are then the fallback's. */
static int start_mechanism(struct run *r, struct cp_profile *p, struct cp_error *err)
{
	if (!cp_mech_start(r->w.mech, err))
		return 0;
	if (fall_back(r, p, err) || cp_mech_start(r->w.mech, err))
		return -1;
	p->attach_s = cp_monotonic_s() - r->begin;
	cp_mech_stats(r->w.mech, &p->stats);
	return 0;
}

/* Whether the host's clocksource is one the vDSO reads with rdtsc: only
 * then does the log's rdtsc at a read of CP_ANATOMY_TSC_CLOCKS
 * (patch_layout.h) stand where the program takes one, which a thread may
 * have made fault. Else nothing is collected, and the run says why
 * (CLOCKPROF_TEST_CLOCKSOURCE names another clocksource, for the tests). */
static bool anatomy_takes_rdtsc_where_the_vdso_does(struct cp_profile *p)
{
	const char *source = getenv("CLOCKPROF_TEST_CLOCKSOURCE");

	if (!source || !*source)
		source = p->host.clocksource;
	if (cp_clocksource_in_vdso(source))
		return true;
	p->anatomy_samples.gaps_exact = false;
	snprintf(p->anatomy_samples.why_not_exact, sizeof(p->anatomy_samples.why_not_exact),
		 "the host's clocksource (%s) is not read with rdtsc by the vDSO: --anatomy "
		 "takes its times with rdtsc, which a thread may have made fault",
		 source[0] ? source : "unknown");
	return false;
}

/* --anatomy: the sampled requests' logs collected from the window's
 * opening on; where the mechanism keeps none (not the vDSO patch), said. */
static void anatomy_open(struct run *r, const struct cp_profile_options *o, struct cp_profile *p)
{
	uint64_t table = cp_mech_patch_table(r->w.mech);
	struct cp_error err = { 0 };

	if (!o->anatomy_on) {
		if (table)
			cp_anatomy_collect_off(r->cfg.pid, table);
		return;
	}
	if (!table && cp_session_anatomy_ring(r->s) >= 0) {
		if (cp_anatomy_collect_start_traps(&r->anatomy, r->cfg.pid, r->s,
						   p->anatomy.sample_size, &err))
			cp_profile_warn(p, "%s", err.msg);
		return;
	}
	if (!table) {
		p->anatomy_samples.gaps_exact = false;
		snprintf(p->anatomy_samples.why_not_exact, sizeof(p->anatomy_samples.why_not_exact),
			 "--anatomy samples requests with the vDSO patch, or with a func: boundary "
			 "that traps (not %s, this boundary)",
			 cp_mechanism_name(p->mechanism));
		return;
	}
	if (!anatomy_takes_rdtsc_where_the_vdso_does(p))
		return;
	if (cp_anatomy_collect_start(&r->anatomy, r->cfg.pid, table, p->anatomy.sample_size,
				     &r->cfg.pidns, &err))
		cp_profile_warn(p, "%s", err.msg);
}

/* Probes counting from here on: the start-up figures are taken, the
 * launched command let go, the counters enabled unless they wait for a
 * window of their own, and the mechanism's self-test passed. */
static int open_clock_window(struct run *r, const struct cp_profile_options *o,
			     struct cp_profile *p, struct cp_error *err)
{
	struct cp_error copies = { 0 };

	p->attach_s = cp_monotonic_s() - r->begin;
	cp_mech_stats(r->w.mech, &p->stats);
	p->breakpoints_fire = cp_mech_has(r->w.mech, CP_MECH_TESTS_BREAKPOINTS) ? 1 : -1;
	rfc3339_now(p->started_at, sizeof(p->started_at));
	cp_target_cpu_start(&r->cpu);
	if (start_mechanism(r, p, err))
		return -1;
	cp_warmup_events_open();
	cp_session_set_phase(r->s, CP_PHASE_CLOCK);
	r->start = cp_monotonic_s();
	anatomy_open(r, o, p);
	/* The pidfd that watches the target is opened once counting has begun:
	 * whoever waits for clockprof to be live (tests, scripts) can take
	 * its presence in /proc/PID/fd as "every read from now on counts". */
	if (cp_window_watch(&r->w, r->cfg.pid, err))
		return -1;
	if (o->on_live)
		o->on_live(p, o->callback_arg);
	/* --stacks: the copies made until every function's rules are in place
	 * are read out from here on (they wait in the kernel until then). */
	if (o->stacks && cp_session_on_stack_copy(r->s, cp_late_stacks_keep, &r->w.late, &copies))
		cp_profile_warn(
			p,
			"%s: reads before every function's unwind rules are in place have no stack",
			copies.msg);
	/* The counters before the command is let go: its first requests' events
	 * were missed where the host was slow to come back to enable them (a
	 * blocking request's context switch, 298 of 300 seen under load). */
	if (r->ctr && !p->counters_split)
		cp_counters_enable(r->ctr);
	if (p->launched && cp_launch_release(r->cfg.pid, err))
		return -1;
	/* The mechanism proves itself with every probe live, its calls
	 * overlapping the window's first ms: a failure refuses the run. */
	if (cp_mech_prove(r->w.mech, err))
		return -1;
	cp_target_exec_warn_unseen(&r->exec, r->s, p);
	cp_warmup_stop(); /* every start-up uprobe placed */
	cp_mech_selftest(r->w.mech, &p->selftest);
	p->cost_ns_per_hit = p->selftest.cost_ns;
	return 0;
}

/* Whether the counters get the second half: the window was split and
 * nothing ended it during the first. */
static bool counters_follow(const struct run *r, const struct cp_profile *p)
{
	return p->counters_split && !r->end_signal && !p->target_exited;
}

/* The clock window's figures: the phase moves on first, so nothing
 * changes them while they are read. */
static void close_clock_window(struct run *r, const struct cp_profile_options *o,
			       struct cp_profile *p)
{
	/* A library mapped since the last look is named with the rest. */
	if (cp_mech_has(r->w.mech, CP_MECH_LOOKS_FOR_LIBRARIES) && !p->target_exited)
		cp_window_look_for_libraries(&r->w, p, r->s);
	/* A mechanism that counts in the target (the patch) takes its counts
	 * first, as the program's requests stop: a read counted after the
	 * switch would be in no request. */
	cp_mech_stop(r->w.mech);
	cp_session_set_phase(r->s, counters_follow(r, p) ? CP_PHASE_COUNTERS : CP_PHASE_IDLE);
	cp_mech_read(r->w.mech, &p->totals);
	if (r->anatomy)
		cp_anatomy_collect_stop(r->anatomy, p->totals.requests, &p->anatomy_samples);
	r->anatomy = NULL;
	cp_wrapper_check_finish(p, r->s, r->start);
	cp_window_processes(p, r->s, r->w.mech, r->start);
	p->clock_window_s = cp_monotonic_s() - r->start;
	p->clock_window_cpu_s = cp_target_cpu_read_s(&r->cpu);
	for (int i = 0; i < r->w.mech->nwarnings; i++)
		cp_profile_warn(p, "%s", r->w.mech->warnings[i]);
	if (r->w.mech->warnings_dropped)
		cp_profile_warn(p, "%d more warnings of the mechanism's were left out",
				r->w.mech->warnings_dropped);
	cp_mech_read_sites(r->w.mech, &r->raw.sites, &r->raw.nsites);
	if (o->stacks) {
		cp_session_read_stacks(r->s, &r->raw.stacks, &r->raw.nstacks);
		cp_session_consume_events(r->s); /* the last stack copies */
		cp_late_stacks_finish(&r->w.late, p, &r->raw, r->start,
				      r->start + p->clock_window_s);
	}
}

/* The second half of a split window: every clock probe is removed but the
 * request boundary, whose one hit per request is all that the counters
 * then also measure. The clock figures were taken at the switch. It lasts
 * as long as the first half from when the probes are gone (removing a
 * uprobe waits for a grace period, ~0.1 s each in these VMs). */
static void switch_to_counters(struct run *r, const struct cp_profile_options *o,
			       struct cp_profile *p)
{
	struct cp_totals begin, end;
	double t0;

	p->counter_phase = true;
	cp_mech_detach(r->w.mech);
	cp_dist_open(p, r->s, &r->w);
	cp_mech_read(r->w.mech, &begin);
	cp_counters_enable(r->ctr);
	t0 = cp_monotonic_s();
	r->end_signal = cp_window_wait(&r->w, p, o, r->s, r->start, t0 + o->duration_s / 2);
	cp_counters_disable(r->ctr);
	cp_session_set_phase(r->s, CP_PHASE_IDLE);
	if (p->dist_event >= 0)
		cp_session_read_dist(r->s, &p->dist);
	p->counter_window_s = cp_monotonic_s() - t0;
	if (cp_mech_read(r->w.mech, &end) == 0)
		p->counter_requests = end.counter_boundaries - begin.counter_boundaries;
	/* Each thread's first request has no start reading, and a thread that
	 * comes and goes between two looks has no counter at all: say so when
	 * that leaves out more than a tenth of the requests. */
	if (p->dist_event >= 0 && p->counter_requests >= 10 &&
	    (double)p->dist.count < 0.9 * (double)p->counter_requests)
		cp_profile_warn(p,
				"per_request_counters covers %llu of %llu requests: threads that "
				"live less than 0.1 s, or serve a single request, are not in it",
				(unsigned long long)p->dist.count,
				(unsigned long long)p->counter_requests);
}

/* The counters' values: from their own window, or from the clock window
 * they shared. */
static void read_counters(struct run *r, struct cp_profile *p)
{
	if (!r->ctr)
		return;
	cp_counters_disable(r->ctr);
	if (p->counters_split && p->counter_window_s <= 0)
		return;
	p->counters_measured = true;
	cp_counters_read(r->ctr, p->counters);
	if (!p->counters_split)
		p->counter_window_s = p->clock_window_s;
}

/* Closing the mechanism and the session (the patch's switch back: a
 * thread of the target held, the stub's round trip) is the target's
 * business, naming the call sites clockprof's (libdw): on two CPUs they
 * overlap. Each writes its own fields of p; warnings wait for both. */
struct close_job {
	struct run *r;
	struct cp_profile *p;
	char *closing;
	size_t left;
};

static void close_job_run(void *ctx, size_t i, size_t worker)
{
	struct close_job *job = ctx;
	struct run *r = job->r;
	struct cp_profile *p = job->p;
	double t0;

	(void)worker;
	if (i == 0) {
		/* the uprobes' removal under way while the patch switches back */
		cp_session_close_begin(r->s);
		cp_mech_close(r->w.mech, p->pause_ms, p->stops, &job->closing);
		job->left = cp_session_close(r->s);
		return;
	}
	t0 = cp_monotonic_s();
	r->w.naming.debuginfod = r->debuginfod;
	cp_call_sites_free(&p->call_sites); /* --interval's last snapshot */
	cp_naming_collect(&r->w.naming, p, &r->raw);
	p->naming_s = cp_monotonic_s() - t0;
}

/* Everything released, the call sites named (the probes are gone), and a
 * launched command ended. */
static void close_window(struct run *r, struct cp_profile *p)
{
	struct close_job job = { .r = r, .p = p };

	read_counters(r, p);
	p->duration_s = cp_monotonic_s() - r->start;
	cp_window_warn_lifecycle(p, r->s);
	cp_window_warn_leaderless(&r->w, r->s, &r->cfg, p);
	cp_counters_close(r->ctr);
	cp_target_cpu_close(&r->cpu);
	cp_parallel_for(2, cp_parallel_workers(2), close_job_run, &job);
	/* --anatomy: its samples are whole once the mechanism has closed */
	cp_anatomy_finish(&r->w.naming, p);
	cp_naming_close(&r->w.naming);
	if (job.closing)
		cp_profile_warn(p, "%s", job.closing);
	free(job.closing);
	if (job.left)
		cp_profile_warn(
			p,
			"%zu probed instruction(s) of the target still held a breakpoint %.0f s after clockprof removed its probes: another tool probes them too, or a clockprof killed while it placed them left them (dmesg: 'leaking uprobe')?",
			job.left, CP_UPROBE_REMOVAL_TIMEOUT_S);
	free(r->raw.sites);
	free(r->raw.stacks);
	cp_window_close(&r->w);
	p->complete = r->end_signal == 0;
	if (p->launched)
		cp_child_finish(p, r->end_signal == SIGINT ? SIGINT : 0);
}

/* The target's task-clock in the counter window, ns; < 0 not counted. */
static double counter_task_clock_ns(const struct cp_profile *p)
{
	for (size_t i = 0; p->counters_measured && i < p->nevents; i++)
		if (!strcmp(p->event_specs[i].name, "task-clock") && p->counters[i].supported)
			return p->counters[i].value;
	return -1;
}

/* CPU per request with every probe and with the boundary's alone, where
 * the window was split and the counters had task-clock. */
static void cpu_per_request(struct cp_profile *p)
{
	double boundary_only = counter_task_clock_ns(p);

	if (!p->counters_split || boundary_only < 0 || p->counter_requests == 0 ||
	    p->totals.requests == 0 || p->clock_window_cpu_s <= 0)
		return;
	p->cpu_ns_per_request[0] = p->clock_window_cpu_s * 1e9 / (double)p->totals.requests;
	p->cpu_ns_per_request[1] = boundary_only / (double)p->counter_requests;
}

double cp_profile_overhead_estimated_pct(const struct cp_profile *p)
{
	if (p->cost_ns_per_hit <= 0 || p->clock_window_cpu_s <= 0)
		return -1;
	return fmin(100, 100 * (double)p->totals.trap_hits * p->cost_ns_per_hit / 1e9 /
				 p->clock_window_cpu_s);
}

double cp_profile_overhead_measured_pct(const struct cp_profile *p)
{
	if (p->cpu_ns_per_request[0] <= 0 || p->cpu_ns_per_request[1] <= 0)
		return -1;
	return fmin(100, fmax(0, 100 * (1 - p->cpu_ns_per_request[1] / p->cpu_ns_per_request[0])));
}

/* The ops figures per op divide by, and what the window says about itself. */
static void finish_figures(const struct cp_profile_options *o, struct cp_profile *p)
{
	double share;
	bool measured;

	if (o->ops > 0) {
		p->ops = o->ops;
		p->ops_source = CP_OPS_FLAG;
	} else if (p->request_text[0] && p->totals.requests > 0) {
		p->ops = (double)p->totals.requests;
		p->ops_source = CP_OPS_REQUEST;
	}
	/* The patch says itself why it does not close a syscall: boundary
	 * (profile_prepare.c, patch_boundary.c, wrapper_check.c). */
	if (o->request.kind == CP_REQUEST_SYSCALL && !p->boundary_in_target &&
	    p->mechanism != CP_MECHANISM_PATCH)
		cp_profile_warn(
			p,
			"a syscall boundary traces sys_enter, which slows every process's syscalls while attached; prefer func:SYMBOL");
	if (p->request_text[0] && p->totals.requests == 0)
		cp_profile_warn(
			p, "no complete request was seen: the boundary %s was hit %llu time(s)",
			p->request_text, (unsigned long long)p->totals.boundary_hits);
	if (p->totals.all.reads == 0)
		cp_profile_warn(p, "the target read no clock during the window");
	if (p->modules_loaded && cp_mechanism_has(p->mechanism, CP_MECH_PER_FILE))
		cp_profile_warn(
			p,
			"%zu file(s) were mapped during the window (dlopen) and probed when the dynamic linker said so: reads they made before that (a few ms) are not counted",
			p->modules_loaded);
	cpu_per_request(p);
	share = cp_profile_overhead_measured_pct(p);
	measured = share >= 0;
	if (!measured)
		share = cp_profile_overhead_estimated_pct(p);
	if (share > 5)
		cp_profile_warn(
			p,
			"probe overhead is about %.0f%% of the target's CPU time in the clock window (%s): timings there are inflated, counts are exact",
			share, measured ? "measured" : "estimated");
}

/* The counters' specs and values, gone (set-up failed, or released). */
static void drop_counters(struct cp_profile *p)
{
	free(p->event_specs);
	free(p->counters);
	p->event_specs = NULL;
	p->counters = NULL;
}

/* Set-up failed before the window opened: nothing is kept, and a launched
 * command is killed. */
static void abandon(struct run *r, struct cp_profile *p)
{
	if (r->anatomy)
		cp_anatomy_collect_stop(r->anatomy, 0, NULL);
	r->anatomy = NULL;
	cp_warmup_stop();
	cp_mech_drop_early(p->mechanism);
	cp_window_close(&r->w);
	cp_window_restore_signals(p);
	drop_counters(p);
	cp_counters_close(r->ctr);
	cp_target_cpu_close(&r->cpu);
	cp_mech_close(r->w.mech, NULL, NULL, NULL);
	cp_session_close(r->s);
	cp_naming_close(&r->w.naming);
	if (p->launched)
		cp_child_kill_held(r->cfg.pid);
	cp_target_release(&p->target);
}

static int collect(const struct cp_profile_options *o, struct cp_profile *p, struct cp_error *err)
{
	struct run r = { .w = { .sigfd = -1, .pidfd = -1, .stacks = o->stacks } };

	memset(p, 0, sizeof(*p));
	p->pause_ms[0] = p->pause_ms[1] = -1;
	p->stacks_recorded = o->stacks;
	cp_anatomy_settings(o, p);
	p->cost_ns_per_hit = -1;
	p->dist_event = -1;
	r.begin = cp_monotonic_s();
	r.debuginfod = o->debuginfod;
	if (parse_events(o, p, err))
		return -1;
	if (block_and_launch(&r, o, p, err) || attach(&r, o, p, err) ||
	    open_clock_window(&r, o, p, err)) {
		cp_target_exec_refusal(&r.exec, err);
		abandon(&r, p);
		return -1;
	}
	r.end_signal = cp_window_wait(
		&r.w, p, o, r.s, r.start,
		o->duration_s <= 0 ? 0 : r.start + o->duration_s * (p->counters_split ? 0.5 : 1));
	close_clock_window(&r, o, p);
	if (counters_follow(&r, p))
		switch_to_counters(&r, o, p);
	else if (p->counters_split)
		cp_profile_warn(
			p, "counters were not measured: the window ended before its counter half");
	close_window(&r, p);
	finish_figures(o, p);
	return 0;
}

int cp_profile_collect(const struct cp_profile_options *o, struct cp_profile *p,
		       struct cp_error *err)
{
	int rc;

	/* The grace periods the first uprobe and the first per-task perf event
	 * wait for pass while the target is inspected and the programs load:
	 * started before anything else (an -e list that does not parse only
	 * makes the exit wait for them; the uprobe's comes with the
	 * registrar, in attach()). */
	cp_warmup_start();
	rc = collect(o, p, err);
	cp_warmup_events_open(); /* closed already, unless collect failed early */
	cp_registrar_stop();
	return rc;
}

void cp_profile_release(struct cp_profile *p)
{
	cp_window_restore_signals(p);
	for (int i = 0; i < p->nwarnings; i++)
		free(p->warnings[i]);
	p->nwarnings = 0;
	drop_counters(p);
	cp_call_sites_free(&p->call_sites);
	cp_named_stacks_free(&p->stacks);
	cp_anatomy_samples_free(&p->anatomy_samples);
	cp_anatomy_free(&p->anatomy);
	cp_window_processes_free(p);
	cp_target_release(&p->target);
}

bool cp_profile_trap_free(const struct cp_profile *p)
{
	return p->mechanism == CP_MECHANISM_PATCH && p->totals.trap_hits == 0;
}

const struct cp_read_counts *cp_profile_per_op_counts(const struct cp_profile *p)
{
	return p->ops_source == CP_OPS_REQUEST ? &p->totals.in_requests : &p->totals.all;
}
