/* run_file.c - building run.json from a finished profile (the loader is
 * run_file_load.c). The figures per op come from complete requests only:
 * the partial intervals before a thread's first boundary and after its
 * last one are counted in the totals but never divided by a request count
 * they do not belong to, which is what keeps per-op counts exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "clock_names.h"
#include "counters_json.h"
#include "distribution.h"
#include "json_file.h"
#include "profile.h"
#include "run_anatomy.h"
#include "run_file.h"
#include "run_processes.h"
#include "utf8.h"
#include "version.h"
#include "wait_status.h"

static json_t *counts_by(const __u64 *counts, int n, const char *(*name)(int))
{
	json_t *o = json_object();

	for (int i = 0; i < n; i++)
		if (counts[i])
			json_object_set_new(o, name(i), json_integer((json_int_t)counts[i]));
	return o;
}

static json_t *per_op(const struct cp_profile *p, __u64 count)
{
	return p->ops > 0 ? json_real((double)count / p->ops) : json_null();
}

static void add_measure(json_t *measures, const char *name, double value, const char *unit,
			const char *kind)
{
	json_object_set_new(measures, name,
			    json_pack("{s:f, s:s, s:s, s:s}", "value", value, "unit", unit, "kind",
				      kind, "better", "lower"));
}

/* Operations in the window the counters were read in: the requests of the
 * counter half when it had its own, else the run's ops. */
static double counter_ops(const struct cp_profile *p)
{
	return p->counters_split ? (double)p->counter_requests : p->ops;
}

/* Each frame's file and line, as frames ("sources"): added beside the
 * names, which stay strings, so that readers of older files and older
 * readers of newer ones still work. */
static json_t *build_sources(const struct cp_stack *st)
{
	json_t *a = json_array();

	for (size_t j = 0; j < st->n_frames; j++) {
		const struct cp_frame_pos *pos = st->pos ? &st->pos[j] : NULL;

		json_array_append_new(
			a,
			json_pack("{s:o, s:o}", "file",
				  pos && pos->file ? cp_json_utf8(pos->file) : json_null(), "line",
				  pos && pos->file && pos->line > 0 ? json_integer(pos->line) :
								      json_null()));
	}
	return a;
}

static json_t *build_stacks(const struct cp_profile *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->stacks.n; i++) {
		json_t *frames = json_array();

		for (size_t j = 0; j < p->stacks.stacks[i].n_frames; j++)
			json_array_append_new(frames, json_string(p->stacks.stacks[i].frames[j]));
		json_array_append_new(a, json_pack("{s:o, s:o, s:I}", "frames", frames, "sources",
						   build_sources(&p->stacks.stacks[i]), "count",
						   (json_int_t)p->stacks.stacks[i].count));
	}
	return a;
}

/* Per-request counter distribution (counter window): percentiles from the
 * BPF program's log-linear histogram, within 6.25%; count and max exact. */
static json_t *build_per_request_counters(const struct cp_profile *p)
{
	const struct cp_event_spec *e;

	if (p->dist_event < 0 || !p->dist.count)
		return json_object();
	e = &p->event_specs[p->dist_event];
	/* One key and its value a line (clang-format would pack them): */
	/* clang-format off */
	return json_pack("{s:{s:s, s:I, s:f, s:f, s:f, s:f, s:I, s:I, s:s}}", e->name,
			 "unit", e->unit, "count", (json_int_t)p->dist.count,
			 "mean", (double)p->dist.sum / (double)p->dist.count,
			 "p50", cp_dist_percentile(&p->dist, 0.50),
			 "p90", cp_dist_percentile(&p->dist, 0.90),
			 "p99", cp_dist_percentile(&p->dist, 0.99),
			 "max", (json_int_t)p->dist.max,
			 "threads", (json_int_t)p->dist_threads,
			 "resolution", "percentiles within 6.25% (8 buckets per power of two); count, mean and max exact");
	/* clang-format on */
}

/* Which window each figure came from: counters must not describe the
 * probes (docs/run-json.md, "Phases of a window"). */
static json_t *build_windows(const struct cp_profile *p)
{
	json_t *counters = json_null();

	if (p->nevents)
		counters = json_pack(
			"{s:b, s:f, s:s, s:o}", "measured", p->counters_measured, "duration_s",
			p->counter_window_s, "probes",
			p->counters_split	? "request boundary only" :
			cp_profile_trap_free(p) ? "all, none trapping (counted in the target)" :
						  "all (shared with clock reads)",
			"ops", counter_ops(p) > 0 ? json_real(counter_ops(p)) : json_null());
	return json_pack("{s:{s:f, s:s}, s:o}", "clock_reads", "duration_s", p->clock_window_s,
			 "probes", "all", "counters", counters);
}

static json_t *build_counters(const struct cp_profile *p)
{
	if (!p->counters_measured)
		return json_object();
	return cp_counters_json(p->event_specs, p->counters, p->nevents, counter_ops(p));
}

/* The count of a call site that per-op figures divide (see per_op_basis). */
static uint64_t site_basis(const struct cp_profile *p, const struct cp_call_site *c)
{
	return cp_profile_per_op_counts(p) == &p->totals.in_requests ? c->in_requests : c->count;
}

/* A string from outside (the target, the command line) as JSON. */
static json_t *text(const char *s)
{
	return cp_json_utf8(s);
}

/* Where the site's function calls the outermost of its inlined ones: the
 * line of its own that reads, where the read's line is the helper's. */
static json_t *inlined_at(const struct cp_call_site *c)
{
	if (!c->ninlined || c->inlined_at_line <= 0)
		return json_null();
	return json_pack("{s:o, s:i}", "file", text(c->inlined_at_file), "line",
			 c->inlined_at_line);
}

static json_t *build_call_sites(const struct cp_profile *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->call_sites.n; i++) {
		const struct cp_call_site *c = &p->call_sites.sites[i];
		json_t *inl = json_array();

		for (size_t j = 0; j < c->ninlined; j++)
			json_array_append_new(inl, json_string(c->inlined[j]));
		json_array_append_new(
			a, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:I, s:I, s:o}",
				     "function", c->function, "file", text(c->file), "line",
				     c->line ? json_integer(c->line) : json_null(), "inlined", inl,
				     "inlined_at", inlined_at(c), "comp_dir", text(c->comp_dir),
				     "via", c->via, "module", text(c->module), "build_id",
				     text(c->build_id), "count", (json_int_t)c->count,
				     "in_requests", (json_int_t)c->in_requests, "per_op",
				     per_op(p, site_basis(p, c))));
	}
	return a;
}

/* clock_reads@FUNCTION/op: per function, not per line or address, so the
 * name survives a rebuild; several sites in one function add up. The
 * function's whole name (a C++ one can be 20 KB; cut to 700 bytes, two
 * functions alike that far were one measure), within CP_STRING_MAX. A
 * site in no file the target had mapped when its maps were read (a
 * library dlopen()ed just before it exited) has only its address for a
 * name, another at each run: no measure (a warning says why). */
static void add_call_site_measures(json_t *m, const struct cp_profile *p)
{
	for (size_t i = 0; i < p->call_sites.n; i++) {
		const struct cp_call_site *c = &p->call_sites.sites[i];
		char *whole = NULL, *name;
		json_t *old;
		double v = (double)site_basis(p, c) / p->ops;

		if (!c->module)
			continue;
		if (asprintf(&whole, CP_SITE_MEASURE_PREFIX "%s" CP_SITE_MEASURE_SUFFIX,
			     c->function) < 0)
			continue;
		name = cp_utf8_dup(whole);
		free(whole);
		if (!name)
			continue;
		old = json_object_get(m, name);
		if (old)
			v += json_number_value(json_object_get(old, "value"));
		add_measure(m, name, v, "reads/op", "exact");
		free(name);
	}
}

/* clock_reads[EXE]/op: each executable's reads per op, where run
 * followed the target's forks (EXE its file name): a change in one
 * program of a multi-process service is judged apart from the others.
 * Per request: its processes' reads inside their complete requests over
 * those requests; with --ops, all its reads over ops. */
static void add_executable_measures(json_t *m, const struct cp_profile *p)
{
	struct cp_exe_rollup *u;
	char name[700], *valid;
	size_t n;

	if (!p->followed || cp_run_rollup(p, &u, &n))
		return;
	for (size_t j = 0; j < n; j++) {
		const char *base = strrchr(u[j].exe, '/');
		double v = p->ops_source == CP_OPS_REQUEST ?
				   (u[j].requests ?
					    (double)u[j].in_requests / (double)u[j].requests :
					    -1) :
				   (double)u[j].reads / p->ops;

		if (v < 0)
			continue;
		snprintf(name, sizeof(name), "clock_reads[%s]/op", base ? base + 1 : u[j].exe);
		valid = cp_utf8_dup(name);
		add_measure(m, valid ? valid : "clock_reads[]/op", v, "reads/op", "exact");
		free(valid);
	}
	free(u);
}

static json_t *build_measures(const struct cp_profile *p)
{
	const struct cp_read_counts *c = cp_profile_per_op_counts(p);
	json_t *m = json_object();
	char name[700];

	if (p->ops <= 0) {
		if (p->clock_window_s > 0)
			add_measure(m, "clock_reads/s",
				    (double)p->totals.all.reads / p->clock_window_s, "reads/s",
				    "sampled");
		return m;
	}
	add_measure(m, "clock_reads/op", (double)c->reads / p->ops, "reads/op", "exact");
	for (int e = 0; e < CP_ENTRY_MAX; e++) {
		snprintf(name, sizeof(name), "clock_reads.%s/op", cp_entry_name(e));
		add_measure(m, name, (double)c->by_entry[e] / p->ops, "reads/op", "exact");
	}
	add_measure(m, "clock_reads.via_syscall/op", (double)c->by_path[CP_PATH_SYSCALL] / p->ops,
		    "reads/op", "exact");
	for (int i = 0; i < p->nprobes; i++) {
		char *valid;

		snprintf(name, sizeof(name), "calls.%s/op", p->probes[i].symbol);
		valid = cp_utf8_dup(name);
		add_measure(m, valid ? valid : "calls./op", (double)c->probe_calls[i] / p->ops,
			    "calls/op", "exact");
		free(valid);
	}
	add_call_site_measures(m, p);
	add_executable_measures(m, p);
	cp_run_anatomy_measure(m, &p->anatomy);
	if (p->counters_measured)
		cp_counters_add_measures(m, p->event_specs, p->counters, p->nevents,
					 counter_ops(p));
	return m;
}

/* Percentile of the reads-per-request histogram (nearest rank). */
static __u64 hist_percentile(const struct cp_totals *t, double q)
{
	unsigned int b = cp_rank_bucket(t->hist, CP_HIST_SLOTS, t->requests, q);

	/* The last slot holds every larger count: its exact maximum is kept. */
	return b >= CP_HIST_SLOTS - 1 ? t->max_reads_per_request : (__u64)b;
}

static json_t *build_per_request(const struct cp_profile *p)
{
	const struct cp_totals *t = &p->totals;
	json_t *hist;
	__u64 min = 0;
	int found_min = 0;

	if (!p->request_text[0])
		return json_null();
	hist = json_array();
	for (int i = 0; i < CP_HIST_SLOTS; i++) {
		if (!t->hist[i])
			continue;
		if (!found_min++)
			min = (__u64)i;
		json_array_append_new(hist,
				      json_pack("[I, I]", (json_int_t)i, (json_int_t)t->hist[i]));
	}
	/* Without a complete request nothing was measured: null, not 0 reads
	 * per request (which the report showed as the p50 of a program that
	 * read the clock all window long). */
	if (!t->requests) /* an interval record's max is the run's so far */
		return json_pack("{s:I, s:n, s:n, s:n, s:n, s:o, s:n, s:o}", "count", (json_int_t)0,
				 "min", "p50", "p90", "p99", "max",
				 t->max_reads_per_request ?
					 json_integer((json_int_t)t->max_reads_per_request) :
					 json_null(),
				 "mean", "histogram", hist);
	/* One key and its value a line (clang-format would pack them): */
	/* clang-format off */
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
			 "count", (json_int_t)t->requests,
			 "min", (json_int_t)min,
			 "p50", (json_int_t)hist_percentile(t, 0.50),
			 "p90", (json_int_t)hist_percentile(t, 0.90),
			 "p99", (json_int_t)hist_percentile(t, 0.99),
			 "max", (json_int_t)t->max_reads_per_request,
			 "mean", json_real((double)t->in_requests.reads / (double)t->requests),
			 "histogram", hist);
	/* clang-format on */
}

static json_t *build_target(const struct cp_profile *p)
{
	json_t *cmdline = json_array(), *exit_status = json_null();
	char how[64];

	for (int i = 0; i < p->target.argc; i++)
		json_array_append_new(cmdline, text(p->target.argv[i]));
	if (p->launched && WIFEXITED(p->exit_status))
		exit_status = json_pack("{s:i}", "code", WEXITSTATUS(p->exit_status));
	else if (p->launched && WIFSIGNALED(p->exit_status)) {
		cp_describe_exit(p->exit_status, how, sizeof(how));
		exit_status = json_pack("{s:s}", "signal", how + strlen("killed by "));
	}
	return json_pack("{s:i, s:o, s:o, s:o, s:s, s:o, s:i, s:b, s:b, s:o}", "pid", p->target.pid,
			 "comm", text(p->target.comm), "exe", text(p->target.exe), "exec_path",
			 p->target.exec_path[0] ? text(p->target.exec_path) : json_null(),
			 "build_id", p->target.build_id, "cmdline", cmdline, "argc",
			 p->target.argc_total, "cmdline_truncated",
			 p->target.argc < p->target.argc_total, "cmdline_rewritten",
			 p->target.cmdline_rewritten, "exit_status", exit_status);
}

static json_t *build_clock_reads(const struct cp_profile *p)
{
	const struct cp_totals *t = &p->totals;

	/* One key and its value a line (clang-format would pack them): */
	/* clang-format off */
	return json_pack("{s:I, s:I, s:o, s:o, s:s, s:o, s:o, s:o}",
			 "total", (json_int_t)t->all.reads,
			 "in_requests", (json_int_t)t->in_requests.reads,
			 "per_op", per_op(p, cp_profile_per_op_counts(p)->reads),
			 "per_second", p->clock_window_s > 0 ?
				 json_real((double)t->all.reads / p->clock_window_s) : json_null(),
			 "mechanism", cp_mechanism_name(p->mechanism),
			 "by_entry", counts_by(t->all.by_entry, CP_ENTRY_MAX, cp_entry_name),
			 "by_clock", counts_by(t->all.by_clock, CP_CLOCK_SLOTS, cp_clock_name),
			 "by_path", counts_by(t->all.by_path, CP_PATH_MAX, cp_path_name));
	/* clang-format on */
}

static json_t *build_probes(const struct cp_profile *p)
{
	json_t *a = json_array();

	for (int i = 0; i < p->nprobes; i++)
		json_array_append_new(
			a, json_pack("{s:o, s:o, s:I, s:o}", "name", text(p->probes[i].symbol),
				     "file", text(p->probes[i].file), "calls",
				     (json_int_t)p->totals.all.probe_calls[i], "per_op",
				     per_op(p, cp_profile_per_op_counts(p)->probe_calls[i])));
	return a;
}

static json_t *build_probe_cost(const struct cp_profile *p)
{
	json_t *cost = p->cost_ns_per_hit > 0 ? json_real(p->cost_ns_per_hit) : json_null();
	double est = cp_profile_overhead_estimated_pct(p);
	json_t *pct = est >= 0 ? json_real(est) : json_null(), *probe;
	/* One key and its value a line (clang-format would pack them): */
	/* clang-format off */
	probe = json_pack("{s:I, s:o, s:o, s:f, s:I, s:I, s:I, s:{s:I, s:I}}",
			  "hits", (json_int_t)p->totals.trap_hits,
			  "cost_ns_per_hit", cost, "estimated_overhead_pct", pct,
			  "attach_s", p->attach_s,
			  "threads", (json_int_t)p->stats.threads,
			  "threads_inherited_during_attach", (json_int_t)p->stats.inherited,
			  "uprobes", (json_int_t)p->stats.uprobes,
			  "selftest", "calls", (json_int_t)p->selftest.calls,
			  "hits", (json_int_t)p->selftest.hits);
	/* clang-format on */
	if (probe)
		json_object_set_new(probe, "naming_s", json_real(p->naming_s));
	/* What was asked (auto, or a mechanism by name) and, when auto counted
	 * with the fallback, why: clock_reads.mechanism is what counted. */
	if (probe) {
		json_object_set_new(probe, "requested_mechanism",
				    json_string(cp_mechanism_name(p->requested_mechanism)));
		json_object_set_new(probe, "fallback_reason",
				    p->fallback_reason[0] ? text(p->fallback_reason) : json_null());
	}
	if (probe && cp_profile_overhead_measured_pct(p) >= 0)
		json_object_set_new(
			probe, "measured",
			json_pack("{s:f, s:f, s:f}", "overhead_pct",
				  cp_profile_overhead_measured_pct(p),
				  "cpu_ns_per_request_all_probes", p->cpu_ns_per_request[0],
				  "cpu_ns_per_request_boundary_only", p->cpu_ns_per_request[1]));
	/* The patch mechanism: how long one thread of the target was held. */
	if (probe && (p->pause_ms[0] >= 0 || p->pause_ms[1] >= 0)) {
		json_object_set_new(
			probe, "pause_ms",
			json_pack("{s:o, s:o}", "attach",
				  p->pause_ms[0] >= 0 ? json_real(p->pause_ms[0]) : json_null(),
				  "detach",
				  p->pause_ms[1] >= 0 ? json_real(p->pause_ms[1]) : json_null()));
		json_object_set_new(probe, "stops",
				    json_pack("{s:I, s:I}", "attach", (json_int_t)p->stops[0],
					      "detach", (json_int_t)p->stops[1]));
	}
	/* --stacks: when every function's rules were in place, how many
	 * stacks clockprof walked from copies before that, and how many were
	 * cut where the walk left the target's code. */
	if (probe && p->stacks_recorded) {
		json_object_set_new(probe, "stack_rules_s",
				    p->stack_rules_s >= 0 ? json_real(p->stack_rules_s) :
							    json_null());
		json_object_set_new(probe, "stacks_from_copies",
				    json_integer((json_int_t)p->stacks_from_copies));
		json_object_set_new(probe, "stacks_truncated",
				    json_integer((json_int_t)p->stacks.truncated));
	}
	return probe;
}

/* The boundary as resolved: compare refuses runs whose boundaries differ,
 * whatever their spelling (docs/run-json.md). */
static json_t *build_boundary(const struct cp_profile *p)
{
	if (p->request_text[0] == 's') /* syscall:NAME */
		return json_pack("{s:s, s:o}", "kind", "syscall", "syscall",
				 text(p->request_symbol));
	return json_pack("{s:s, s:o, s:b, s:o}", "kind", "func", "file", text(p->request_file),
			 "main_executable", p->request_in_main, "symbol", text(p->request_symbol));
}

/* A syscall: boundary closed at the C library's functions: how its check
 * against the kernel's syscalls went (wrapper_check.h). */
static json_t *build_wrapper_check(const struct cp_profile *p)
{
	const struct cp_wrapper_check *c = &p->wrapper_check;

	if (!p->boundary_wrapped)
		return json_null();
	return json_pack("{s:I, s:I, s:b, s:o}", "checked", (json_int_t)c->checked, "mismatched",
			 (json_int_t)c->mismatched, "fell_back", c->fallback_ns != 0,
			 "checked_for_s",
			 p->wrapper_check_s >= 0 ? json_real(p->wrapper_check_s) : json_null());
}

static json_t *build_request(const struct cp_profile *p)
{
	if (!p->request_text[0])
		return json_null();
	return json_pack("{s:o, s:I, s:o, s:b, s:o}", "spec", text(p->request_text), "count",
			 (json_int_t)p->totals.requests, "boundary", build_boundary(p),
			 "closed_in_target", p->boundary_in_target, "wrapper_check",
			 build_wrapper_check(p));
}

json_t *cp_run_file_build(const struct cp_profile *p)
{
	json_t *warnings = json_array(), *doc;

	for (int i = 0; i < p->nwarnings; i++)
		json_array_append_new(warnings, text(p->warnings[i]));
	/* One key and its value a line (clang-format would pack them): */
	/* clang-format off */
	doc = json_pack(
		"{s:s, s:{s:s, s:s}, s:b, s:s, s:s, s:f, s:o,"
		" s:{s:s, s:s, s:s, s:b, s:s, s:o}, s:o, s:o, s:o, s:o, s:o, s:o,"
		" s:o, s:o, s:o, s:o, s:o, s:o}",
		"schema", CP_RUN_SCHEMA,
		"tool", "name", "clockprof", "version", CLOCKPROF_VERSION,
		"complete", p->complete,
		"end_reason", cp_end_reason_name(p->end_reason),
		"started_at", p->started_at,
		"duration_s", p->duration_s,
		"target", build_target(p),
		"host", "kernel", p->host.kernel, "cpu", p->host.cpu, "clocksource",
		p->host.clocksource, "pmu", p->host.pmu, "tool_version", CLOCKPROF_VERSION,
		"breakpoints_fire", p->breakpoints_fire < 0 ? json_null() :
							     json_boolean(p->breakpoints_fire),
		"request", build_request(p),
		"ops", p->ops > 0 ? json_real(p->ops) : json_null(),
		"ops_source", p->ops_source != CP_OPS_NONE ?
			json_string(cp_ops_source_name(p->ops_source)) : json_null(),
		"clock_reads", build_clock_reads(p),
		"per_request", build_per_request(p),
		"extra_probes", build_probes(p),
		"call_sites", build_call_sites(p),
		"counters", build_counters(p),
		"windows", build_windows(p),
		"probe", build_probe_cost(p),
		"measures", build_measures(p),
		"warnings", warnings);
	/* clang-format on */
	/* With --stacks, "stacks" is there even when empty: the report can
	 * then tell "none recorded" from "not asked for". */
	if (doc && (p->stacks.n || p->stacks_recorded))
		json_object_set_new(doc, "stacks", build_stacks(p));
	if (doc)
		json_object_set_new(doc, "per_request_counters", build_per_request_counters(p));
	if (doc && p->anatomy.on)
		json_object_set_new(doc, "anatomy", cp_run_anatomy_build(&p->anatomy));
	if (doc && p->followed) { /* run, following the processes it forks */
		json_object_set_new(doc, "processes", cp_run_processes_build(p));
		json_object_set_new(doc, "executables", cp_run_executables_build(p));
	}
	return doc;
}
