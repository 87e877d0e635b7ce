/* summary.c - see summary.h. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "clock_names.h"
#include "distribution.h"
#include "profile.h"
#include "run_processes.h"
#include "summary.h"
#include "summary_anatomy.h"
#include "escape_display.h"
#include "utf8.h"
#include "wait_status.h"

/* Every string not written here (comm, symbols, paths, the request spec,
 * event names, warnings) goes through esc(), cp_escape_display(): a newline
 * in one would start a line of its own (a forged "::error" in a CI log),
 * other controls could drive the terminal. */
#define ESC_SIZE 1100
#define esc(s) escaped((char[ESC_SIZE]){ 0 }, (s))

static const char *escaped(char *buf, const char *s)
{
	cp_escape_display(buf, ESC_SIZE, s, ESC_SIZE);
	return buf;
}

static void say(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(FILE *out, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	fputs(cp_utf8_vformat(line, sizeof(line), fmt, ap), out); /* cut mid-character? */
	va_end(ap);
}

static void print_per_op(FILE *out, const char *label, unsigned long long count, double ops)
{
	if (ops > 0)
		say(out, "  %-28s %12llu  %10.3f/op\n", label, count, count / ops);
	else
		say(out, "  %-28s %12llu\n", label, count);
}

static void print_histogram(FILE *out, const struct cp_profile *p)
{
	const struct cp_totals *t = &p->totals;
	unsigned long long most = 0;
	int shown = 0;

	for (int i = 0; i < CP_HIST_SLOTS; i++)
		if (t->hist[i] > most)
			most = t->hist[i];
	if (!most)
		return;
	say(out,
	    "\nreads per request (left: clock reads in one request; right: requests with that many)\n");
	for (int i = 0; i < CP_HIST_SLOTS && shown < 20; i++) {
		int bar;

		if (!t->hist[i])
			continue;
		bar = (int)(40.0 * (double)t->hist[i] / (double)most + 0.5);
		say(out, "  %4d%s %10llu  %.*s\n", i, i == CP_HIST_SLOTS - 1 ? "+" : " ",
		    (unsigned long long)t->hist[i], bar > 0 ? bar : 1,
		    "########################################");
		shown++;
	}
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Whether the target was started by a path whose name is not its
 * executable's (a symlink: redis-server for redis-check-rdb; a script):
 * then both are said, so that neither misleads. */
static bool renamed(const struct cp_profile *p)
{
	return p->target.exec_path[0] &&
	       strcmp(base_name(p->target.exec_path), base_name(p->target.exe));
}

/* The counted processes by the file they ran (the workers of one binary
 * are one line, with the spread of their reads). */
static void print_executables(FILE *out, const struct cp_profile *p)
{
	struct cp_exe_rollup *u;
	size_t n;

	if (cp_run_rollup(p, &u, &n))
		return;
	say(out, "by executable\n");
	for (size_t i = 0; i < n; i++) {
		say(out, "  %s", esc(u[i].exe));
		if (!strcmp(u[i].exe, p->target.exe) && renamed(p))
			say(out, " (started as %s)", esc(p->target.exec_path));
		say(out, ": %zu process%s, %llu reads", u[i].processes,
		    u[i].processes == 1 ? "" : "es", (unsigned long long)u[i].reads);
		if (u[i].processes > 1)
			say(out, " (%llu to %llu each)", (unsigned long long)u[i].min_reads,
			    (unsigned long long)u[i].max_reads);
		if (u[i].requests)
			say(out, ", %llu requests, %.3f reads/req",
			    (unsigned long long)u[i].requests,
			    (double)u[i].in_requests / (double)u[i].requests);
		say(out, "\n");
	}
	free(u);
}

/* One line per process when the window counted more than one (run
 * follows the target's forks): the target first, then the others as they
 * started; at most 20, the rest summed. */
static void print_processes(FILE *out, const struct cp_profile *p)
{
	unsigned long long rest_reads = 0, rest_requests = 0;
	size_t shown = 0;

	if (p->nprocesses < 2)
		return;
	say(out, "\nprocesses (%zu; the target first)\n", p->nprocesses);
	say(out, "  %8s %8s  %-16s %12s %10s %10s\n", "pid", "parent", "command", "reads",
	    "requests", "reads/req");
	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct cp_process_row *r = &p->processes[i];
		char reads[24] = "-", per[24] = "-";
		const char *note;

		if (shown == 20) {
			rest_reads += r->known && !r->execed ? r->reads : 0;
			rest_requests += r->requests;
			continue;
		}
		shown++;
		if (r->known && !r->execed)
			snprintf(reads, sizeof(reads), "%llu", (unsigned long long)r->reads);
		if (r->requests)
			snprintf(per, sizeof(per), "%.3f",
				 (double)r->in_requests / (double)r->requests);
		note = r->execed	     ? "  exec()ed another program: not counted" :
		       !r->known	     ? "  its counts could not be read" :
		       r->end_s < 0 && i > 0 ? "  still running at the end" :
					       "";
		say(out, "  %8d %8d  %-16s %12s %10llu %10s%s\n", (int)r->pid, (int)r->ppid,
		    esc(r->command), reads, (unsigned long long)r->requests, per, note);
	}
	if (shown < p->nprocesses)
		say(out, "  %zu more: %llu reads, %llu requests\n", p->nprocesses - shown,
		    rest_reads, rest_requests);
	print_executables(out, p);
}

static void print_call_sites(FILE *out, const struct cp_profile *p)
{
	bool in_req = cp_profile_per_op_counts(p) == &p->totals.in_requests;
	size_t shown = p->call_sites.n < 10 ? p->call_sites.n : 10;

	if (!shown)
		return;
	say(out,
	    "\ntop call sites (%s; \"A > B\": B inlined into A; via: the clock function called)\n",
	    p->ops > 0 ? "reads per op" : "reads");
	for (size_t i = 0; i < shown; i++) {
		const struct cp_call_site *c = &p->call_sites.sites[i];
		char where[600] = "", *location = c->file ? cp_call_site_location(c) : NULL;

		if (location)
			snprintf(where, sizeof(where), "  %s", esc(location));
		free(location);
		if (p->ops > 0)
			say(out, "  %10.3f  %s%s%s%s  via %s%s\n",
			    (double)(in_req ? c->in_requests : c->count) / p->ops, esc(c->function),
			    c->ninlined ? " > " : "",
			    esc(c->ninlined ? c->inlined[c->ninlined - 1] : ""), "", esc(c->via),
			    where);
		else
			say(out, "  %10llu  %s%s%s  via %s%s\n", (unsigned long long)c->count,
			    esc(c->function), c->ninlined ? " > " : "",
			    esc(c->ninlined ? c->inlined[c->ninlined - 1] : ""), esc(c->via),
			    where);
	}
	if (p->call_sites.n > shown)
		say(out, "  ... %zu more in run.json\n", p->call_sites.n - shown);
}

/* The events this host cannot count, one line per reason (eight "no
 * hardware PMU" lines said one thing eight times). */
static void print_unsupported(FILE *out, const struct cp_profile *p)
{
	for (size_t i = 0; i < p->nevents; i++) {
		bool first = true;

		if (p->counters[i].supported)
			continue;
		for (size_t j = 0; j < i && first; j++)
			if (!p->counters[j].supported &&
			    !strcmp(p->counters[j].reason, p->counters[i].reason))
				first = false;
		if (!first)
			continue;
		say(out, "  unsupported (%s):", esc(p->counters[i].reason));
		for (size_t j = i; j < p->nevents; j++)
			if (!p->counters[j].supported &&
			    !strcmp(p->counters[j].reason, p->counters[i].reason))
				say(out, "%s %s", j == i ? "" : ",", esc(p->event_specs[j].name));
		say(out, "\n");
	}
}

/* What shared the counters' window, as it happened: clock probes trap
 * with uprobes and breakpoints, and then only when hit; the patch counts
 * in the target, where only the probes left to the kernel trap (a
 * boundary not closed there, --probe). */
static const char *counters_shared(const struct cp_profile *p)
{
	if (p->counters_split)
		return "only the request boundary probe installed";
	if (p->mechanism == CP_MECHANISM_PATCH)
		return p->totals.trap_hits ?
			       "shared with the counting, in the target, and the probes that trapped: includes their cost" :
			       "shared with the counting, in the target: nothing trapped";
	return p->totals.trap_hits ? "shared with the clock probes: includes their cost" :
				     "shared with the clock probes, never hit: nothing trapped";
}

static void print_counters(FILE *out, const struct cp_profile *p)
{
	double ops = p->counters_split ? (double)p->counter_requests : p->ops;
	size_t name_w = 24, unit_w = 0;

	if (!p->nevents)
		return;
	if (!p->counters_measured) {
		say(out, "\ncounters: not measured\n");
		return;
	}
	say(out, "\ncounters (%.2f s window, %s)\n", p->counter_window_s, counters_shared(p));
	for (size_t i = 0; i < p->nevents; i++) {
		if (strlen(p->event_specs[i].name) > name_w)
			name_w = strlen(p->event_specs[i].name);
		if (p->counters[i].supported && strlen(p->event_specs[i].unit) > unit_w)
			unit_w = strlen(p->event_specs[i].unit);
	}
	for (size_t i = 0; i < p->nevents; i++) {
		const struct cp_counter_value *v = &p->counters[i];

		if (!v->supported)
			continue;
		say(out, "  %-*s %16.0f %-*s", (int)name_w, esc(p->event_specs[i].name), v->value,
		    (int)unit_w, esc(p->event_specs[i].unit));
		if (ops > 0) { /* right-aligned with its unit: the /op line up */
			char per_op[400];

			snprintf(per_op, sizeof(per_op), "%.1f %s/op", v->value / ops,
				 esc(p->event_specs[i].unit));
			say(out, "  %*s", (int)(unit_w + 18), per_op);
		}
		if (v->scaled)
			say(out, "  (scaled, ran %.0f%%)", 100 * v->running_ratio);
		say(out, "\n");
	}
	print_unsupported(out, p);
	if (p->dist_event >= 0 && p->dist.count)
		say(out,
		    "  %s per request: p50 %.0f  p90 %.0f  p99 %.0f  max %llu %s (%llu requests)\n",
		    esc(p->event_specs[p->dist_event].name), cp_dist_percentile(&p->dist, 0.5),
		    cp_dist_percentile(&p->dist, 0.9), cp_dist_percentile(&p->dist, 0.99),
		    (unsigned long long)p->dist.max, esc(p->event_specs[p->dist_event].unit),
		    (unsigned long long)p->dist.count);
	if (p->counters_split && p->cost_ns_per_hit > 0)
		say(out, "  the boundary probe itself: 1 hit per request, about %.1f us each\n",
		    p->cost_ns_per_hit / 1000);
}

/* The program as people call it: the path it was started by (a symlink's
 * name, redis-server, not the redis-check-rdb it resolves to; a script's,
 * not its interpreter's), else the first word of its command line (a
 * title such as "nginx: master process /usr/sbin/nginx -p /srv/ngx" is no
 * path: its last '/' once named it "ngx"), else the kernel's 15-character
 * comm ("callsites_targe"). */
static const char *program_name(const struct cp_profile *p, char *buf, size_t size)
{
	const char *arg0 = p->target.argv && p->target.argc ? p->target.argv[0] : NULL;

	if (p->target.exec_path[0])
		return base_name(p->target.exec_path);
	if (!arg0 || !*arg0)
		return p->target.comm;
	snprintf(buf, size, "%.*s", (int)strcspn(arg0, ": "), arg0);
	return buf[0] ? base_name(buf) : p->target.comm;
}

static void print_started_as(FILE *out, const struct cp_profile *p)
{
	if (!renamed(p))
		return;
	say(out, "  started as %s (the kernel's executable: %s)\n", esc(p->target.exec_path),
	    esc(p->target.exe));
}

static void print_exit(FILE *out, const struct cp_profile *p)
{
	char how[64];

	/* A window that ended by duration or signal ends the command itself. */
	if (WIFSIGNALED(p->exit_status) &&
	    (p->end_reason == CP_END_DURATION || p->end_reason == CP_END_SIGNAL))
		snprintf(how, sizeof(how), "ended by clockprof (SIG%s)",
			 sigabbrev_np(WTERMSIG(p->exit_status)) ?
				 sigabbrev_np(WTERMSIG(p->exit_status)) :
				 "?");
	else
		cp_describe_exit(p->exit_status, how, sizeof(how));
	say(out, "  command ended: %s\n", how);
}

/* The heading: program, duration, windows, exit, requests and --ops. */
static void print_heading(FILE *out, const struct cp_profile *p)
{
	char name[256];

	say(out, "clockprof: %s (pid %d), %.2f s%s\n", esc(program_name(p, name, sizeof(name))),
	    p->target.pid, p->duration_s,
	    p->complete			   ? "" :
	    p->end_reason == CP_END_SIGNAL ? ", cut short by a signal (incomplete)" :
					     ", ended by an error (incomplete)");
	print_started_as(out, p);
	if (p->counters_split && p->counter_window_s > 0)
		say(out,
		    "  clock reads from the first %.2f s, counters from the last %.2f s (with the clock probes removed, so that their traps do not inflate the counters)\n",
		    p->clock_window_s, p->counter_window_s);
	if (p->target.argc < p->target.argc_total)
		say(out,
		    "  command line cut: run.json keeps the first %d of its %d arguments (64 KiB)\n",
		    p->target.argc, p->target.argc_total);
	if (p->launched)
		print_exit(out, p);
	if (p->request_text[0])
		say(out, "  requests (%s): %llu complete\n", esc(p->request_text),
		    (unsigned long long)p->totals.requests);
	if (p->ops_source == CP_OPS_FLAG)
		say(out, "  operations (--ops): %.0f\n", p->ops);
}

/* The clock reads section: the total, then by entry, path, clock and probe. */
static void print_clock_reads(FILE *out, const struct cp_profile *p, const struct cp_read_counts *c)
{
	const struct cp_totals *t = &p->totals;

	say(out, "\nclock reads (%s)\n",
	    p->ops <= 0		 ? "reads in the window" :
	    c == &t->in_requests ? "reads inside complete requests; /op: per request" :
				   "reads in the window; /op: per operation (--ops)");
	print_per_op(out, "total", c->reads, p->ops);
	if (c != &t->all)
		say(out,
		    "  %-28s %12llu  %10.1f reads/s  (with the reads outside complete requests)\n",
		    "in the whole window", (unsigned long long)t->all.reads,
		    p->clock_window_s > 0 ? t->all.reads / p->clock_window_s : 0);
	for (int e = 0; e < CP_ENTRY_MAX; e++)
		if (c->by_entry[e])
			print_per_op(out, cp_entry_name(e), c->by_entry[e], p->ops);
	for (int i = 0; i < CP_PATH_MAX; i++)
		if (c->by_path[i]) {
			char label[64];

			snprintf(label, sizeof(label), "path %s (%s)", cp_path_name(i),
				 i == CP_PATH_VDSO ? "in user space" : "in the kernel");
			print_per_op(out, label, c->by_path[i], p->ops);
		}
	for (int i = 0; i < CP_CLOCK_SLOTS; i++)
		if (c->by_clock[i])
			print_per_op(out, cp_clock_name(i), c->by_clock[i], p->ops);
	for (int i = 0; i < p->nprobes; i++) {
		char label[600];

		snprintf(label, sizeof(label), "calls %s", esc(p->probes[i].symbol));
		print_per_op(out, label, c->probe_calls[i], p->ops);
	}
}

/* What the probes cost the target: measured where the window was split
 * (CPU per request with every probe and with the boundary's alone), else
 * estimated from the hits, said as such and never above 100% (its
 * task-clock includes them). The estimate is not printed beside a
 * measure: with the patch mechanism it said 100% (464 boundary hits x
 * 21.5 us, timed on clockprof's thread) where the target's whole CPU per
 * request, its one trap included, was 19-23 us. */
static void print_probe_share(FILE *out, const struct cp_profile *p)
{
	double measured = cp_profile_overhead_measured_pct(p);
	double estimated = cp_profile_overhead_estimated_pct(p);

	if (measured < 0 && (estimated < 0 || !p->totals.trap_hits))
		return; /* no trap, no trap's cost */
	say(out, "probe cost: share of the target's %.2f s of CPU in the clock window\n",
	    p->clock_window_cpu_s);
	if (measured >= 0)
		say(out,
		    "  measured   %5.1f%%  (CPU per request: %.1f us with every probe, %.1f us with the boundary probe alone)\n",
		    measured, p->cpu_ns_per_request[0] / 1000, p->cpu_ns_per_request[1] / 1000);
	else if (estimated >= 0) /* nothing measured: the estimate, said as one */
		say(out,
		    "  estimated  %5.1f%%  (%llu hits x %.1f us, timed on clockprof's own thread%s)\n",
		    estimated, (unsigned long long)p->totals.trap_hits, p->cost_ns_per_hit / 1000,
		    estimated >= 100 ? "; more than the CPU the target used: capped" : "");
}

/* Which mechanism counted, when it was not the one named: auto's choice,
 * and the reason it fell back (the patch's refusal, or --stacks). */
static void print_mechanism_choice(FILE *out, const struct cp_profile *p)
{
	if (p->requested_mechanism == p->mechanism)
		return;
	say(out, "\ncounted by %s (asked: %s)", cp_mechanism_name(p->mechanism),
	    cp_mechanism_name(p->requested_mechanism));
	if (p->fallback_reason[0])
		say(out, "; the patch was not used: %s", esc(p->fallback_reason));
}

/* A syscall: boundary closed at the C library's functions: how far the
 * kernel's syscalls were checked against them (wrapper_check.h). */
static void print_wrapper_check(FILE *out, const struct cp_profile *p)
{
	const struct cp_wrapper_check *c = &p->wrapper_check;

	if (!p->boundary_wrapped || c->fallback_ns)
		return;
	say(out,
	    "\n%s closed at the C library's function: %llu syscalls checked against sys_enter, all through it",
	    esc(p->request_text), (unsigned long long)c->checked);
	if (p->wrapper_check_s >= 0)
		say(out, " (sys_enter let go after %.1f s)", p->wrapper_check_s);
}

/* The probe hits line: mechanism, self-test and what the hits cost. */
static void print_probe_hits(FILE *out, const struct cp_profile *p)
{
	const struct cp_totals *t = &p->totals;

	print_mechanism_choice(out, p);
	if (p->mechanism == CP_MECHANISM_PATCH)
		say(out, "\nreads counted in the target's vDSO, no trap per read%s%s",
		    p->boundary_in_target ? ", requests closed in the target, none per request" :
					    "",
		    p->pause_ms[0] >= 0 || p->pause_ms[1] >= 0 ? ": one thread held" : "");
	if (p->pause_ms[0] >= 0)
		say(out, " %.2f ms to attach", p->pause_ms[0]);
	if (p->pause_ms[1] >= 0)
		say(out, "%s %.2f ms to detach", p->pause_ms[0] >= 0 ? "," : "", p->pause_ms[1]);
	print_wrapper_check(out, p);
	say(out, "\nprobe hits (traps) %llu (%s; self-test: %lu of %lu calls counted)",
	    (unsigned long long)t->trap_hits, cp_mechanism_name(p->mechanism), p->selftest.hits,
	    p->selftest.calls);
	if (t->trap_hits && p->cost_ns_per_hit > 0) /* a cost only for traps taken */
		say(out, ", about %.1f us of CPU each", p->cost_ns_per_hit / 1000);
	say(out, "\n");
	print_probe_share(out, p);
}

/* The profile's warnings, one a line, the label in color if asked. */
static void print_warnings(FILE *out, const struct cp_profile *p, int color)
{
	for (int i = 0; i < p->nwarnings; i++) {
		fputs(color ? "\033[1;33mwarning:\033[0m " : "warning: ", out);
		say(out, "%s\n", esc(p->warnings[i]));
	}
}

void cp_summary_print(FILE *out, const struct cp_profile *p, int color)
{
	print_heading(out, p);
	print_clock_reads(out, p, cp_profile_per_op_counts(p));
	print_histogram(out, p);
	print_processes(out, p);
	print_call_sites(out, p);
	cp_summary_anatomy(out, p);
	print_counters(out, p);
	print_probe_hits(out, p);
	print_warnings(out, p, color);
}

void cp_summary_live(FILE *out, const struct cp_profile *p)
{
	const struct cp_totals *t = &p->totals;

	fprintf(out, "\r\033[K%6.1fs  reads %llu", p->duration_s, (unsigned long long)t->all.reads);
	if (p->request_text[0] && t->requests)
		fprintf(out, "  requests %llu  reads/request %.2f", (unsigned long long)t->requests,
			(double)t->in_requests.reads / (double)t->requests);
	fflush(out);
}
