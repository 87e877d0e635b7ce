/* profile.c - see profile.h. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "procfs.h"
#include "elf_symbols.h"
#include "error.h"
#include "grow.h"
#include "launcher.h"
#include "module_probes.h"
#include "parallel.h"
#include "profile.h"
#include "symbolize.h"
#include "unwind_table.h"
#include "vdso.h"

static double monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void rfc3339_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void warn(struct cp_profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(struct cp_profile *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nwarnings == CP_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(p->warnings[p->nwarnings++], sizeof(p->warnings[0]), fmt, ap);
	va_end(ap);
}

/* The target's CPU time in the clock window comes from its own task-clock
 * counter (every thread, those born later too; readable after it exits):
 * probe overhead is estimated as a share of it. */
static struct cp_counters *open_window_clock(pid_t pid)
{
	struct cp_event_spec *spec = NULL;
	struct cp_counters *c = NULL;
	size_t n;

	if (cp_events_parse("task-clock", &spec, &n, NULL) == 0 &&
	    cp_counters_open(&c, pid, spec, n, NULL))
		c = NULL;
	free(spec);
	return c;
}

static double window_clock_s(struct cp_counters *c)
{
	struct cp_counter_value v;

	if (!c || cp_counters_disable(c) || cp_counters_read(c, &v) || !v.supported)
		return 0;
	return v.value / 1e9;
}

/* Where a library named without a path is looked up. A command held at
 * exec has not mapped its libraries yet; it runs in our mount namespace and
 * will map the ones we have mapped, unless its environment points it
 * elsewhere (then an absolute FILE is needed). */
static pid_t libraries_of(const struct cp_profile *p)
{
	return p->launched ? getpid() : p->target.pid;
}

/* The main executable as a path that names its directory too (where a
 * separate debug file may sit): /proc/PID/root/EXE, when that is still the
 * file the target runs, else /proc/PID/exe (deleted or replaced on disk). */
static void main_executable_path(const struct cp_profile *p, char *path, size_t size)
{
	struct stat via_root, running;

	if (snprintf(path, size, "/proc/%d/root%s", p->target.pid, p->target.exe) >= (int)size ||
	    stat(path, &via_root) || stat(p->target.exe_access, &running) ||
	    via_root.st_ino != running.st_ino || via_root.st_dev != running.st_dev)
		snprintf(path, size, "%s", p->target.exe_access);
}

/* Resolves a [FILE:]SYMBOL in the target to a uprobe point. */
static int resolve_func(const struct cp_profile *p, const struct cp_func_spec *f,
			struct cp_uprobe_point *pt, char *shown, size_t shown_size,
			const char *what, struct cp_error *err)
{
	struct cp_elf_function fn;

	if (!f->file[0]) {
		main_executable_path(p, pt->path, sizeof(pt->path));
		snprintf(shown, shown_size, "%s", p->target.exe);
	} else if (cp_target_resolve_file(libraries_of(p), f->file, pt->path,
					  sizeof(pt->path), shown, shown_size, err)) {
		return -1;
	}
	if (cp_elf_find_function(pt->path, shown, f->symbol, &fn, err))
		return -1;
	if (fn.ifunc)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s '%s' in %s is an IFUNC: a probe there fires only when it is resolved, never for calls",
			       what, f->symbol, shown);
	pt->offset = fn.offset;
	return 0;
}

/* Threads whose distribution counter could not be opened: not tried
 * again at every rescan. */
struct dist_failed {
	pid_t *tids;		/* sorted */
	size_t n, cap;
};

struct naming;

struct window {
	int sigfd, pidfd;
	struct dist_failed dist_failed;
	struct cp_module_probes modules;	/* files probed so far */
	struct naming *naming;
	bool stacks;
};

static void restore_signals(struct cp_profile *p)
{
	if (p->mask_saved)
		sigprocmask(SIG_SETMASK, &p->saved_mask, NULL);
	p->mask_saved = false;
}

/* Ctrl-C, SIGTERM and SIGHUP end the window instead of clockprof: they are
 * blocked from the very start (a signal during set-up ends the window as
 * soon as it opens, and a launched command is never left behind) until
 * the results are written (cp_profile_release restores the mask). */
static int signals_block(struct window *w, struct cp_profile *p, struct cp_error *err)
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

static int window_watch(struct window *w, pid_t pid, struct cp_error *err)
{
	w->pidfd = pidfd_open(pid, 0);
	if (w->pidfd < 0)
		return cp_fail(err, CP_EXIT_PROFILE, "cannot watch process %d: %s",
			       pid, strerror(errno));
	return 0;
}

static void window_close(struct window *w)
{
	if (w->sigfd >= 0)
		close(w->sigfd);
	if (w->pidfd >= 0)
		close(w->pidfd);
	w->sigfd = w->pidfd = -1;
	free(w->dist_failed.tids);
	w->dist_failed = (struct dist_failed){ 0 };
	cp_module_probes_free(&w->modules);
}

static void warn_cb(void *arg, const char *msg)
{
	warn(arg, "%s", msg);
}

/* Probes the files the target maps now that are not probed yet. */
static int probe_files(struct window *w, struct cp_profile *p, struct cp_session *s,
		       pid_t pid, struct cp_error *err)
{
	w->modules.warn = warn_cb;
	w->modules.warn_arg = p;
	return cp_module_probes_sync(&w->modules, s, pid, err);
}

static void libraries_changed(struct window *w, struct cp_profile *p, struct cp_session *s);

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static bool pid_in(const pid_t *sorted, size_t n, pid_t tid)
{
	return n && bsearch(&tid, sorted, n, sizeof(*sorted), cmp_pid);
}

static void dist_remember_failed(struct dist_failed *f, pid_t tid)
{
	if (cp_grow(&f->tids, &f->cap, f->n + 1, sizeof(*f->tids)))
		return;
	f->tids[f->n++] = tid;
	qsort(f->tids, f->n, sizeof(*f->tids), cmp_pid);
}

/* Keeps one counter of the distribution's event on each thread of the
 * target: threads that exited give their slot back (a later thread may
 * take their tid), threads born since the last look get one and count
 * from their second request on (the first one's start was not seen).
 * Called when the counter window opens and then every so often in it
 * (window_wait). */
static void dist_cover_threads(struct cp_profile *p, struct cp_session *s,
			       struct dist_failed *failed)
{
	static pid_t covered[CP_DIST_MAX_THREADS];
	pid_t *tids = NULL;
	size_t ntids = 0, ncovered;

	if (p->dist_event < 0 || cp_proc_threads(p->target.pid, &tids, &ntids))
		return;
	qsort(tids, ntids, sizeof(*tids), cmp_pid);
	ncovered = cp_session_dist_tids(s, covered);
	for (size_t c = 0; c < ncovered; c++)
		if (!pid_in(tids, ntids, covered[c]))
			cp_session_dist_remove_thread(s, covered[c]);
	qsort(covered, ncovered, sizeof(*covered), cmp_pid);
	for (size_t t = 0; t < ntids && !cp_session_dist_full(s); t++) {
		int fd;

		if (pid_in(covered, ncovered, tids[t]) ||
		    pid_in(failed->tids, failed->n, tids[t]))
			continue;
		fd = cp_counter_open_own(&p->event_specs[p->dist_event], tids[t]);
		if (fd < 0) {
			dist_remember_failed(failed, tids[t]);
			continue;
		}
		if (cp_session_dist_add_thread(s, tids[t], fd) == 0)
			p->dist_threads++;
	}
	free(tids);
}

/* How often the counter window looks for threads born or gone. A look
 * lists /proc/PID/task, about 1 us per thread: 5% of a core for a target
 * of 5,000 threads, and only while per-request counters are measured. A
 * longer or backed-off interval was measured to leave threads born in the
 * window uncovered for a third of it. */
#define DIST_RESCAN_S 0.1

static int window_wait(struct window *w, struct cp_profile *p,
		       const struct cp_profile_options *o, struct cp_session *s,
		       double start, double deadline)
{
	double next_tick = start + 1, next_rescan = start + DIST_RESCAN_S;

	for (;;) {
		struct pollfd fds[3] = { { w->sigfd, POLLIN, 0 }, { w->pidfd, POLLIN, 0 },
					 { cp_session_dl_fd(s), POLLIN, 0 } };
		bool rescan = p->counter_phase && p->dist_event >= 0;
		double now = monotonic_s(), until = next_tick;
		int timeout_ms, rc;

		if (rescan && next_rescan < until)
			until = next_rescan;
		if (deadline > 0 && deadline < until)
			until = deadline;
		timeout_ms = until > now ? (int)((until - now) * 1000) + 1 : 0;
		rc = poll(fds, fds[2].fd >= 0 ? 3 : 2, timeout_ms);
		if (rc < 0 && errno != EINTR) {
			p->end_reason = "error";
			return -1;
		}
		if (rc > 0 && (fds[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(w->sigfd, &si, sizeof(si)) == sizeof(si)) {
				p->end_reason = "signal";
				return (int)si.ssi_signo;
			}
		}
		if (rc > 0 && (fds[2].revents & POLLIN))
			libraries_changed(w, p, s);
		if (rc > 0 && (fds[1].revents & POLLIN)) {
			p->end_reason = "target-exit";
			p->target_exited = true;
			return 0;
		}
		now = monotonic_s();
		if (deadline > 0 && now >= deadline) {
			p->end_reason = "duration";
			return 0;
		}
		if (rescan && now >= next_rescan) {
			dist_cover_threads(p, s, &w->dist_failed);
			next_rescan = now + DIST_RESCAN_S;
		}
		if (now >= next_tick) {
			next_tick += 1;
			if (o->tick && !p->counter_phase && cp_session_read(s, &p->totals) == 0) {
				p->duration_s = now - start;
				o->tick(p, o->tick_arg);
			}
		}
	}
}

/* A launched command outlives a window that ended by duration or signal;
 * clockprof exits when it does, so it is asked to end (SIGTERM, then
 * SIGKILL after two seconds) and its status is reported. */
static void finish_launched(struct cp_profile *p, int end_signal)
{
	int status = 0;

	if (!p->target_exited) {
		kill(p->target.pid, end_signal ? end_signal : SIGTERM);
		for (int i = 0; i < 200; i++) {
			if (waitpid(p->target.pid, &status, WNOHANG) == p->target.pid)
				goto reaped;
			usleep(10000);
		}
		kill(p->target.pid, SIGKILL);
	}
	if (waitpid(p->target.pid, &status, 0) != p->target.pid)
		return;
reaped:
	p->exit_status = status;
}

/* What names call sites: the target's modules, captured once they are all
 * mapped, and the rules for stepping out of their clock wrappers. Without
 * them reads are still counted; their sites stay unnamed, with a warning. */
struct naming {
	struct cp_symbolizer *sym;
	struct cp_unwind_table table;
	bool have_table;
};

static void naming_open(struct naming *nm, struct cp_profile *p, bool all_code)
{
	struct cp_error err = { 0 };

	nm->sym = cp_symbolizer_open(p->target.pid, &err);
	if (!nm->sym) {
		warn(p, "call sites cannot be named: %s", err.msg);
		return;
	}
	if (cp_unwind_table_build_all(nm->sym, all_code, &nm->table, &err)) {
		warn(p, "call sites stop at clock wrappers: %s", err.msg);
		return;
	}
	nm->have_table = true;
	if (nm->table.n_unsupported)
		warn(p, "%s", nm->table.warning);
}

/* What the clock window saw of where reads were, read at its end and
 * named after the probes are gone. */
struct raw_places {
	struct cp_site_count *sites;
	size_t nsites;
	struct cp_stack_count *stacks;
	size_t nstacks;
};

static void naming_collect(struct naming *nm, struct cp_profile *p,
			   const struct raw_places *raw)
{
	struct cp_error err = { 0 };

	if (!nm->sym)
		return;
	cp_call_sites_resolve(nm->sym, nm->have_table ? &nm->table : NULL, raw->sites,
			      raw->nsites, &p->call_sites);
	if (raw->nstacks)
		cp_named_stacks_build(nm->sym, raw->stacks, raw->nstacks, &p->stacks);
	if (cp_symbolizer_check_stale(nm->sym, &err))
		warn(p, "%s", err.msg);
	if (p->totals.site_unnamed)
		warn(p, "%llu reads have no call site: over %d distinct sites",
		     (unsigned long long)p->totals.site_unnamed, CP_MAX_SITES);
	if (p->totals.site_uncredited)
		warn(p, "%llu reads inside requests are missing from their call site's per-op figure: over %d distinct sites in one request",
		     (unsigned long long)p->totals.site_uncredited, CP_PENDING_SITES);
	if (p->totals.stack_drops)
		warn(p, "%llu reads have no stack: over %d distinct stacks",
		     (unsigned long long)p->totals.stack_drops, CP_MAX_STACKS);
}

static void naming_close(struct naming *nm)
{
	if (nm->have_table)
		cp_unwind_table_free(&nm->table);
	cp_symbolizer_close(nm->sym);
	memset(nm, 0, sizeof(*nm));
}

/* dlopen or dlclose in the target: new files get their probes, and the
 * wrappers in them their unwind rules. Reads a new library makes before
 * its probes are placed (a few ms after dlopen returns) are not seen. */
static void libraries_changed(struct window *w, struct cp_profile *p, struct cp_session *s)
{
	struct cp_error err = { 0 };
	int added;

	if (!cp_session_dl_consume(s) || p->counter_phase)
		return;
	added = probe_files(w, p, s, p->target.pid, &err);
	if (added < 0) {
		warn(p, "a library loaded in the window could not be probed: %s", err.msg);
		return;
	}
	p->modules_loaded += (size_t)added;
	if (!added || !w->naming)
		return;
	naming_close(w->naming);
	naming_open(w->naming, p, w->stacks);
	if (w->naming->have_table && cp_session_set_unwind(s, &w->naming->table, &err))
		warn(p, "%s", err.msg);
}

/* Loading the BPF programs is the kernel's work (the verifier), naming a
 * running target's modules is ours (libdw): on two CPUs they overlap. */
struct session_job {
	struct cp_session **s;
	const struct cp_session_config *cfg;
	struct naming *nm;
	struct cp_profile *p;
	bool all_code;
	int rc;
	struct cp_error err;
};

static void session_job_run(void *ctx, size_t i, size_t worker)
{
	struct session_job *job = ctx;

	(void)worker;
	if (i == 0)
		job->rc = cp_session_open(job->s, job->cfg, &job->err);
	else
		naming_open(job->nm, job->p, job->all_code);
}

static int open_session(struct cp_session **s, const struct cp_session_config *cfg,
			struct naming *nm, struct cp_profile *p, bool all_code,
			struct cp_error *err)
{
	struct session_job job = { .s = s, .cfg = cfg, .nm = nm, .p = p, .all_code = all_code };
	size_t n = nm ? 2 : 1;

	cp_parallel_for(n, cp_parallel_workers(n), session_job_run, &job);
	if (job.rc)
		*err = job.err;
	return job.rc;
}

static void kill_held(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int prepare(const struct cp_profile_options *o, struct cp_profile *p,
		   struct cp_session_config *cfg, struct cp_uprobe_point *boundary,
		   struct cp_uprobe_point *probes, struct cp_error *err)
{
	if (cp_target_inspect(cfg->pid, &p->target, err))
		return -1;
	cp_host_inspect(&p->host);
	snprintf(p->request_text, sizeof(p->request_text), "%s",
		 o->request.kind == CP_REQUEST_NONE ? "" : o->request.text);
	cfg->boundary_syscall = -1;
	if (o->request.kind == CP_REQUEST_SYSCALL)
		cfg->boundary_syscall = o->request.syscall_nr;
	if (o->request.kind == CP_REQUEST_FUNC) {
		char shown[PATH_MAX];

		if (resolve_func(p, &o->request.func, boundary, shown, sizeof(shown),
				 "request boundary", err))
			return -1;
		cfg->boundary_func = boundary;
	}
	for (int i = 0; i < o->nprobes && i < CP_MAX_PROBES; i++) {
		struct cp_probe_info *info = &p->probes[p->nprobes++];

		snprintf(info->symbol, sizeof(info->symbol), "%s", o->probes[i].symbol);
		if (resolve_func(p, &o->probes[i], &probes[i], info->file,
				 sizeof(info->file), "--probe", err))
			return -1;
	}
	cfg->probes = probes;
	cfg->nprobes = p->nprobes;
	cfg->vdso_hres = cp_clocksource_in_vdso(p->host.clocksource);
	cfg->stacks = o->stacks;
	cfg->verbose = o->verbose;
	cfg->mechanism = p->mechanism = o->mechanism;
	if (o->mechanism != CP_MECHANISM_BREAKPOINT)
		return 0;
	return cp_vdso_locate(cfg->pid, &cfg->vdso, err);
}

static void finish_figures(const struct cp_profile_options *o, struct cp_profile *p)
{
	double overhead_s;

	if (o->ops > 0) {
		p->ops = o->ops;
		p->ops_source = "--ops";
	} else if (p->request_text[0] && p->totals.requests > 0) {
		p->ops = (double)p->totals.requests;
		p->ops_source = "request";
	}
	if (o->request.kind == CP_REQUEST_SYSCALL)
		warn(p, "a syscall boundary traces sys_enter, which slows every process's syscalls while attached; prefer func:SYMBOL");
	if (p->request_text[0] && p->totals.requests == 0)
		warn(p, "no complete request was seen: the boundary %s was hit %llu time(s)",
		     p->request_text, (unsigned long long)p->totals.boundary_hits);
	if (p->totals.all.reads == 0)
		warn(p, "the target read no clock during the window");
	if (p->modules_loaded && p->mechanism == CP_MECHANISM_UPROBE)
		warn(p, "%zu file(s) were mapped during the window (dlopen) and probed when the dynamic linker said so: reads they made before that (a few ms) are not counted",
		     p->modules_loaded);
	overhead_s = (double)p->totals.trap_hits * p->cost_ns_per_hit / 1e9;
	if (p->cost_ns_per_hit > 0 && p->clock_window_cpu_s > 0 &&
	    overhead_s / p->clock_window_cpu_s > 0.05)
		warn(p, "probe overhead is about %.0f%% of the target's CPU time in the clock window: timings there are inflated, counts are exact",
		     100 * overhead_s / p->clock_window_cpu_s);
}

/* Counters are opened (disabled) on every thread once the target is held
 * or attached. They are split off into a window of their own when that can
 * be divided fairly: a duration to halve and a boundary to count the
 * requests of each half. Otherwise they share the probed window and say so. */
static int open_counters(const struct cp_profile_options *o, struct cp_profile *p,
			 pid_t pid, struct cp_counters **ctr, struct cp_error *err)
{
	struct cp_counters_info info;

	if (!p->nevents)
		return 0;
	p->counters = calloc(p->nevents, sizeof(*p->counters));
	if (!p->counters || cp_counters_open(ctr, pid, p->event_specs, p->nevents, err))
		return -1;
	cp_counters_info(*ctr, &info);
	if (info.uncertain_threads)
		warn(p, "%zu threads were born while counters were opened: their counts may be missing",
		     info.uncertain_threads);
	p->counters_split = o->duration_s > 0 && o->request.kind != CP_REQUEST_NONE &&
			    o->ops <= 0;
	return 0;
}

/* Per-request distribution of one counter, read by the BPF program at each
 * boundary from the thread's own counter: the first of instructions:u,
 * cycles:u, task-clock (in that order of interest) among the events asked
 * for that can be opened here, tried on the target's first thread. */
static void open_distribution(struct cp_profile *p, struct cp_session *s,
			      struct window *w)
{
	static const char *const preferred[] = { "instructions:u", "cycles:u", "task-clock" };
	pid_t *tids = NULL;
	size_t ntids = 0;

	p->dist_event = -1;
	if (cp_proc_threads(p->target.pid, &tids, &ntids))
		return;
	for (size_t k = 0; k < 3 && p->dist_event < 0; k++) {
		for (size_t i = 0; i < p->nevents; i++) {
			int fd;

			if (strcmp(p->event_specs[i].name, preferred[k]) ||
			    (fd = cp_counter_open_own(&p->event_specs[i], tids[0])) < 0)
				continue;
			p->dist_event = (int)i;
			if (cp_session_dist_add_thread(s, tids[0], fd) == 0)
				p->dist_threads++;
			break;
		}
	}
	free(tids);
	dist_cover_threads(p, s, &w->dist_failed);
}

/* The second half of a split window: every clock probe is removed but the
 * request boundary, whose one hit per request is all that the counters
 * then also measure. The clock figures were taken at the switch. It lasts
 * as long as the first half from when the probes are gone (removing a
 * uprobe waits for a grace period, ~0.1 s each in these VMs). */
static int counter_phase(struct window *w, struct cp_profile *p,
			 const struct cp_profile_options *o, struct cp_session *s,
			 struct cp_counters *ctr, double start)
{
	struct cp_totals begin, end;
	double t0;
	int sig;

	p->counter_phase = true;
	cp_session_detach_clock_probes(s);
	open_distribution(p, s, w);
	cp_session_read(s, &begin);
	cp_counters_enable(ctr);
	t0 = monotonic_s();
	sig = window_wait(w, p, o, s, start, t0 + o->duration_s / 2);
	cp_counters_disable(ctr);
	cp_session_set_phase(s, CP_PHASE_IDLE);
	if (p->dist_event >= 0)
		cp_session_read_dist(s, &p->dist);
	p->counter_window_s = monotonic_s() - t0;
	if (cp_session_read(s, &end) == 0)
		p->counter_requests = end.counter_boundaries - begin.counter_boundaries;
	/* Each thread's first request has no start reading, and a thread that
	 * comes and goes between two looks has no counter at all: say so when
	 * that leaves out more than a tenth of the requests. */
	if (p->dist_event >= 0 && p->counter_requests >= 10 &&
	    (double)p->dist.count < 0.9 * (double)p->counter_requests)
		warn(p, "per_request_counters covers %llu of %llu requests: threads that "
		     "live less than 0.1 s, or serve a single request, are not in it",
		     (unsigned long long)p->dist.count,
		     (unsigned long long)p->counter_requests);
	return sig;
}

int cp_profile_collect(const struct cp_profile_options *o, struct cp_profile *p,
		       struct cp_error *err)
{
	struct cp_session_config cfg = { 0 };
	struct cp_uprobe_point boundary, probes[CP_MAX_PROBES];
	struct cp_session *s = NULL;
	struct cp_counters *ctr = NULL, *cpu_clock = NULL;
	struct raw_places raw = { 0 };
	struct naming nm = { 0 };
	struct window w = { .sigfd = -1, .pidfd = -1, .naming = &nm, .stacks = o->stacks };
	double begin, start;
	int end_signal;

	memset(p, 0, sizeof(*p));
	p->stacks_recorded = o->stacks;
	p->cost_ns_per_hit = -1;
	p->dist_event = -1;
	begin = monotonic_s();
	if (o->events && strcmp(o->events, "none") &&
	    cp_events_parse(o->events, &p->event_specs, &p->nevents, err))
		return -1;
	if (!o->events && cp_events_parse(cp_events_default_list(), &p->event_specs,
					  &p->nevents, err))
		return -1;
	cfg.pid = o->pid;
	if (signals_block(&w, p, err))
		goto fail;
	if (o->command) {
		if (cp_launch_held(o->command, &cfg.pid, err))
			goto fail;
		p->launched = true;
	}
	if (prepare(o, p, &cfg, &boundary, probes, err))
		goto fail;
	/* A running target has mapped its libraries: name its wrappers before
	 * the first read is seen. A launched one has not yet: it runs on to
	 * its entry point (counted from exec on) and is named there. */
	if (open_session(&s, &cfg, p->launched ? NULL : &nm, p, o->stacks, err) ||
	    probe_files(&w, p, s, cfg.pid, err) < 0 ||
	    (nm.have_table && cp_session_set_unwind(s, &nm.table, err)))
		goto fail;
	if (p->launched) {
		if (cp_launch_run_to_entry(cfg.pid, err) ||
		    probe_files(&w, p, s, cfg.pid, err) < 0)
			goto fail;
		naming_open(&nm, p, o->stacks);
		if (nm.have_table && cp_session_set_unwind(s, &nm.table, err))
			goto fail;
	}
	if (open_counters(o, p, cfg.pid, &ctr, err) || window_watch(&w, cfg.pid, err))
		goto fail;
	cpu_clock = open_window_clock(cfg.pid);
	p->attach_s = monotonic_s() - begin;
	cp_session_stats(s, &p->stats);
	cp_session_selftest(s, &p->selftest);
	p->cost_ns_per_hit = p->selftest.cost_ns;
	p->breakpoints_fire = o->mechanism == CP_MECHANISM_BREAKPOINT ? 1 : -1;
	rfc3339_now(p->started_at, sizeof(p->started_at));
	if (cpu_clock)
		cp_counters_enable(cpu_clock);
	cp_session_set_phase(s, CP_PHASE_CLOCK);
	start = monotonic_s();
	if (p->launched && cp_launch_release(cfg.pid, err))
		goto fail;
	if (ctr && !p->counters_split)
		cp_counters_enable(ctr);
	end_signal = window_wait(&w, p, o, s, start,
				 o->duration_s > 0 ? start + o->duration_s *
					 (p->counters_split ? 0.5 : 1) : 0);
	/* The clock window's figures: the phase moves on first, so nothing
	 * changes them while they are read. */
	cp_session_set_phase(s, p->counters_split && !end_signal && !p->target_exited ?
				     CP_PHASE_COUNTERS : CP_PHASE_IDLE);
	p->clock_window_s = monotonic_s() - start;
	p->clock_window_cpu_s = window_clock_s(cpu_clock);
	cp_session_read(s, &p->totals);
	cp_session_read_sites(s, &raw.sites, &raw.nsites);
	if (o->stacks)
		cp_session_read_stacks(s, &raw.stacks, &raw.nstacks);
	if (p->counters_split && !end_signal && !p->target_exited)
		end_signal = counter_phase(&w, p, o, s, ctr, start);
	else if (p->counters_split)
		warn(p, "counters were not measured: the window ended before its counter half");
	if (ctr) {
		cp_counters_disable(ctr);
		if (p->counters_split ? p->counter_window_s > 0 : true) {
			p->counters_measured = true;
			cp_counters_read(ctr, p->counters);
			if (!p->counters_split)
				p->counter_window_s = p->clock_window_s;
		}
	}
	p->duration_s = monotonic_s() - start;
	cp_counters_close(ctr);
	cp_counters_close(cpu_clock);
	cp_session_close(s);
	naming_collect(&nm, p, &raw);
	naming_close(&nm);
	free(raw.sites);
	free(raw.stacks);
	window_close(&w);
	p->complete = end_signal == 0;
	if (p->launched)
		finish_launched(p, end_signal == SIGINT ? SIGINT : 0);
	finish_figures(o, p);
	return 0;

fail:
	window_close(&w);
	restore_signals(p);
	free(p->event_specs);
	free(p->counters);
	p->event_specs = NULL;
	p->counters = NULL;
	cp_counters_close(ctr);
	cp_counters_close(cpu_clock);
	cp_session_close(s);
	naming_close(&nm);
	if (p->launched)
		kill_held(cfg.pid);
	cp_target_release(&p->target);
	return -1;
}

void cp_profile_release(struct cp_profile *p)
{
	restore_signals(p);
	free(p->event_specs);
	free(p->counters);
	cp_call_sites_free(&p->call_sites);
	cp_named_stacks_free(&p->stacks);
	cp_target_release(&p->target);
}

const struct cp_read_counts *cp_profile_per_op_counts(const struct cp_profile *p)
{
	return p->ops_source && !strcmp(p->ops_source, "request") ?
		       &p->totals.in_requests : &p->totals.all;
}
