/* report_run_facts.c - the top of a run's section in the HTML report:
 * what the run was (the target as started, the host, the window, its
 * requests) and what it warned of, each fact from run.json written
 * escaped; the figures below them are report_run.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json_file.h"
#include "json_walk.h"
#include "report_html.h"
#include "report_sections.h"
#include "run_file.h"

/* The per-op divisor of a run, or NAN when the run has none. */
double cp_report_run_ops(const json_t *run)
{
	double ops;

	return cp_rj_num(run, "ops", &ops) && ops > 0 ? ops : NAN;
}

static void fact_num(struct cp_buf *b, const char *term, const json_t *obj, const char *key,
		     const char *suffix)
{
	double v;

	if (!cp_rj_num(obj, key, &v))
		return;
	cp_buf_puts(b, "<dt>");
	cp_buf_text(b, term);
	cp_buf_puts(b, "</dt><dd>");
	cp_html_num(b, v);
	cp_buf_text(b, suffix);
	cp_buf_puts(b, "</dd>");
}

/* The "exit" fact: the signal that killed the target, or its exit code. */
static void fact_exit(struct cp_buf *b, const json_t *exit_status)
{
	if (!json_is_object(exit_status))
		return;
	cp_buf_puts(b, "<dt>exit</dt><dd>");
	if (cp_json_str(exit_status, "signal", NULL)) {
		cp_buf_puts(b, "killed by ");
		cp_buf_text(b, cp_json_str(exit_status, "signal", NULL));
	} else if (json_is_number(json_object_get(exit_status, "code"))) {
		cp_buf_puts(b, "exit code ");
		cp_html_num(b, json_number_value(json_object_get(exit_status, "code")));
	} else {
		cp_html_json_text(b, exit_status);
	}
	cp_buf_puts(b, "</dd>");
}

/* After a command line run.json keeps only the start of (files without
 * cmdline_truncated were never cut, or do not say). */
static void cmdline_cut(struct cp_buf *b, const json_t *target, size_t kept)
{
	double argc;

	if (!json_is_true(json_object_get(target, "cmdline_truncated")))
		return;
	cp_buf_puts(b, " <span class=\"cut\">&hellip; cut: the first ");
	cp_html_num(b, (double)kept);
	if (cp_rj_num(target, "argc", &argc)) {
		cp_buf_puts(b, " of ");
		cp_html_num(b, argc);
	}
	cp_buf_puts(b, " arguments</span>");
}

/* The path the target was started by, where it is not the executable's
 * (a symlink: redis-server for redis-check-rdb; a script); files of
 * earlier versions do not say it. */
static void started_as(struct cp_buf *b, const json_t *target)
{
	const char *path = cp_json_str(target, "exec_path", NULL);
	const char *exe = cp_json_str(target, "exe", "");

	if (path && strcmp(path, exe))
		cp_html_fact(b, "started as", path);
}

/* The Target group of facts: command, pid, executable, command line, build id, exit. */
static void facts_target(struct cp_buf *b, const json_t *target)
{
	const json_t *cmdline = json_object_get(target, "cmdline");

	cp_buf_puts(
		b,
		"<div class=\"facts\"><dl><dt class=\"group\">Target</dt><dd class=\"group\"></dd>");
	cp_html_fact(b, "command", cp_json_str(target, "comm", NULL));
	fact_num(b, "pid", target, "pid", "");
	cp_html_fact(b, "executable", cp_json_str(target, "exe", NULL));
	started_as(b, target);
	if (json_array_size(cmdline)) {
		cp_buf_puts(b, "<dt>command line</dt><dd><code>");
		cp_html_json_join(b, cmdline, " ");
		cp_buf_puts(b, "</code>");
		cmdline_cut(b, target, json_array_size(cmdline));
		cp_buf_puts(b, "</dd>");
	}
	cp_html_fact(b, "build id", cp_json_str(target, "build_id", NULL));
	fact_exit(b, json_object_get(target, "exit_status"));
}

/* The Host group of facts: kernel, cpu, clocksource, PMU, clockprof version. */
static void facts_host(struct cp_buf *b, const json_t *run)
{
	const json_t *host = json_object_get(run, "host");
	const json_t *v;

	cp_buf_puts(b, "</dl><dl><dt class=\"group\">Host</dt><dd class=\"group\"></dd>");
	cp_html_fact(b, "kernel", cp_json_str(host, "kernel", NULL));
	cp_html_fact(b, "cpu", cp_json_str(host, "cpu", NULL));
	cp_html_fact(b, "clocksource", cp_json_str(host, "clocksource", NULL));
	v = json_object_get(host, "pmu");
	if (json_is_boolean(v))
		cp_html_fact(b, "hardware PMU", json_is_true(v) ? "yes" : "no");
	cp_html_fact(b, "clockprof", cp_json_str(json_object_get(run, "tool"), "version", NULL));
}

/* The "ops" fact: the per-op divisor and where it came from, when the run has one. */
static void fact_ops(struct cp_buf *b, const json_t *run)
{
	if (!json_is_number(json_object_get(run, "ops")))
		return;
	cp_buf_puts(b, "<dt>ops</dt><dd>");
	cp_html_num(b, json_number_value(json_object_get(run, "ops")));
	if (cp_json_str(run, "ops_source", NULL)) {
		cp_buf_puts(b, " (from ");
		cp_buf_text(b, cp_json_str(run, "ops_source", NULL));
		cp_buf_puts(b, ")");
	}
	cp_buf_puts(b, "</dd>");
}

/* The Window group of facts: start, duration, completeness, request boundary, ops. */
static void facts_window(struct cp_buf *b, const json_t *run)
{
	const json_t *req = json_object_get(run, "request");
	const json_t *v;

	cp_buf_puts(b, "</dl><dl><dt class=\"group\">Window</dt><dd class=\"group\"></dd>");
	cp_html_fact(b, "started", cp_json_str(run, "started_at", NULL));
	fact_num(b, "duration", run, "duration_s", " s");
	v = json_object_get(run, "complete");
	cp_buf_puts(b, "<dt>complete</dt><dd>");
	cp_buf_puts(b, json_is_true(v) ? "yes" : "no");
	if (cp_json_str(run, "end_reason", NULL)) {
		cp_buf_puts(b, " (");
		cp_buf_text(b, cp_json_str(run, "end_reason", NULL));
		cp_buf_puts(b, ")");
	}
	cp_buf_puts(b, "</dd>");
	if (json_is_object(req)) {
		cp_html_fact(b, "request", cp_json_str(req, "spec", NULL));
		fact_num(b, "requests", req, "count", "");
	} else {
		cp_html_fact(b, "request", "none (no request boundary)");
	}
	fact_ops(b, run);
}

/* The facts block of a run: its target, host and profiling window. */
static void facts(struct cp_buf *b, const json_t *run)
{
	facts_target(b, json_object_get(run, "target"));
	facts_host(b, run);
	facts_window(b, run);
	cp_buf_puts(b, "</dl></div>\n");
}

/* One warning per reason, naming every counter it applies to: a VM without
 * a PMU has eight unsupported hardware events, one fact. */
static size_t unsupported_counter_warnings(struct cp_buf *list, const json_t *counters)
{
	const char *reasons[8];
	size_t nreasons = 0;
	const char *name;
	const json_t *v;

	json_object_foreach((json_t *)counters, name, v) {
		const char *r = cp_json_str(v, "reason", NULL);
		size_t k;

		if (!json_is_false(json_object_get(v, "supported")))
			continue;
		r = r ? r : "";
		for (k = 0; k < nreasons && strcmp(reasons[k], r); k++)
			;
		if (k == nreasons && nreasons < 8)
			reasons[nreasons++] = r;
	}
	for (size_t k = 0; k < nreasons; k++) {
		const char *sep = "";

		cp_buf_puts(list, "<li>Not supported here");
		if (*reasons[k]) {
			cp_buf_puts(list, " (");
			cp_buf_text(list, reasons[k]);
			cp_buf_puts(list, ")");
		}
		cp_buf_puts(list, ": ");
		json_object_foreach((json_t *)counters, name, v) {
			const char *r = cp_json_str(v, "reason", NULL);

			if (!json_is_false(json_object_get(v, "supported")) ||
			    strcmp(r ? r : "", reasons[k]))
				continue;
			cp_buf_puts(list, sep);
			cp_buf_puts(list, "<code>");
			cp_buf_text(list, name);
			cp_buf_puts(list, "</code>");
			sep = ", ";
		}
		cp_buf_puts(list, ". They are shown as unsupported, never as 0.</li>");
	}
	return nreasons;
}

static void warnings(struct cp_buf *b, const json_t *run)
{
	const json_t *w = json_object_get(run, "warnings");
	const json_t *counters = json_object_get(run, "counters");
	const json_t *v;
	size_t i, n = 0;
	struct cp_buf list = { 0 };

	json_array_foreach(w, i, v) {
		cp_buf_puts(&list, "<li>");
		cp_html_json_text(&list, v);
		cp_buf_puts(&list, "</li>");
		n++;
	}
	if (!json_is_true(json_object_get(run, "complete"))) {
		cp_buf_puts(&list, "<li>The run was cut short");
		if (cp_json_str(run, "end_reason", NULL)) {
			cp_buf_puts(&list, " (");
			cp_buf_text(&list, cp_json_str(run, "end_reason", NULL));
			cp_buf_puts(&list, ")");
		}
		cp_buf_puts(&list, "): its figures cover only the part that was profiled.</li>");
		n++;
	}
	if (isnan(cp_report_run_ops(run))) {
		cp_buf_puts(
			&list,
			"<li>No request boundary and no --ops: per-op figures are not available.</li>");
		n++;
	}
	n += unsupported_counter_warnings(&list, counters);
	if (n) {
		cp_buf_puts(b, "<div class=\"warnings\" role=\"note\"><h3>Warnings</h3><ul>");
		if (list.data)
			cp_buf_add(b, list.data, list.len);
		cp_buf_puts(b, "</ul></div>\n");
	}
	b->failed |= list.failed;
	cp_buf_free(&list);
}

void cp_report_run_facts(struct cp_buf *b, const json_t *run)
{
	facts(b, run);
	warnings(b, run);
}
