/* profile_command.c - see profile_command.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "duration.h"
#include "error.h"
#include "fifo_open.h"
#include "folded.h"
#include "interval_record.h"
#include "json_file.h"
#include "launcher.h"
#include "output_set.h"
#include "pprof_file.h"
#include "pprof_series.h"
#include "profile_command.h"
#include "report.h"
#include "run_file.h"
#include "speedscope.h"
#include "summary.h"
#include "wait_status.h"

_Static_assert(CP_METRICS_SITES_DEFAULT == 100, "CP_METRICS_SITES_DEFAULT_TEXT says 100");

/* clang-format off */
const struct cp_option profile_window_options[] = {
	PROFILE_WINDOW_OPTIONS,
	{ 0 },
};
/* clang-format on */

/* About once a second while the window is open: the live line, and the
 * --serve child's text (the counts so far, cumulative). */
static void tick(const struct cp_profile *p, void *arg)
{
	struct profile_command *pc = arg;

	if (pc->live)
		cp_summary_live(stdout, p);
	cp_metrics_sink_live(&pc->metrics, p);
}

/* -v: the moment counting begins, for a person or a script that waits
 * for it (make bench times it from spawn, as it times bpftrace's BEGIN). */
static void say_live(const struct cp_profile *p, void *arg)
{
	(void)arg;
	fprintf(stderr, "clockprof: probes live %.1f ms after start (%s): counting\n",
		p->attach_s * 1000, cp_mechanism_name(p->mechanism));
	fflush(stderr);
}

/* Takes one metrics option; 0, -1 with err filled, 1: not one. */
static int take_metrics_option(struct profile_command *pc, int id, const char *value,
			       struct cp_error *err)
{
	char *end;

	switch (id) {
	case PC_OPT_METRICS_SITES:
		pc->metrics_sites_given = 1;
		pc->metrics_sites = strtoul(value, &end, 10);
		if (*end || end == value || *value == '-' ||
		    pc->metrics_sites > CP_METRICS_SITES_MAX)
			return cp_fail(err, CP_EXIT_USAGE,
				       "invalid --metrics-sites '%s': give 0 to %d", value,
				       CP_METRICS_SITES_MAX);
		return 0;
	case PC_OPT_SERVE:
		pc->serve = value;
		return cp_serve_address_parse(value, &pc->serve_addr, err);
	case PC_OPT_SERVE_ANY: pc->serve_any = 1; return 0;
	case PC_OPT_SERVE_USER: pc->serve_user = value; return 0;
	}
	return 1;
}

/* --serve beyond loopback only when asked for by name. */
static int check_serve(const struct profile_command *pc, struct cp_error *err)
{
	if (!pc->serve && (pc->serve_any || pc->serve_user))
		return cp_fail(err, CP_EXIT_USAGE,
			       "--serve-any and --serve-user need --serve ADDR:PORT");
	if (pc->serve && !pc->serve_addr.loopback && !pc->serve_any)
		return cp_fail(err, CP_EXIT_USAGE,
			       "--serve %s is not a loopback address: the metrics "
			       "name the target's functions and files; add --serve-any to serve "
			       "them beyond this host",
			       pc->serve_addr.shown);
	return 0;
}

/* --interval's lines: where they go, and what the next is measured from. */
struct interval_sink {
	struct cp_interval_writer w;
	const char *path;
	bool failed; /* said once; no more lines tried */
	/* --pprof with --interval: a profile per interval (pprof_series.h) */
	struct cp_pprof_series pprof;
	bool pprof_failed; /* said once; no more profiles tried */
};

/* Each interval's view: its profile in --pprof's series. */
static void write_interval_pprof(const struct cp_profile *view, void *arg)
{
	struct interval_sink *is = arg;
	struct cp_error err = { 0 };
	struct timespec now;

	if (is->pprof_failed)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	if (cp_pprof_series_write(&is->pprof, view, &now, &err)) {
		fprintf(stderr, "clockprof: --pprof: %s: no more interval profiles\n", err.msg);
		is->pprof_failed = true;
	}
}

/* --pprof PATH (not -) with --interval: the series beside PATH. 0, or -1
 * (no memory). */
static int interval_pprof_open(struct interval_sink *is, const char *path, unsigned keep)
{
	if (!path || !strcmp(path, "-"))
		return 0;
	if (cp_pprof_series_init(&is->pprof, path, keep))
		return -1;
	is->w.on_view = write_interval_pprof;
	is->w.view_arg = is;
	return 0;
}

static void write_interval(struct interval_sink *is, const struct cp_profile *p, bool last)
{
	if (is->failed) {
		/* The lines stopped; the interval profiles go on. */
		if (is->w.on_view)
			json_decref(cp_interval_record_build(&is->w, p, last));
		return;
	}
	if (cp_interval_record_write(&is->w, p, last)) {
		fprintf(stderr, "clockprof: --interval-output %s: %s: no more interval records\n",
			is->path, strerror(errno));
		is->failed = true;
	}
}

/* Opened before the target is touched, as the other outputs: "-" is a
 * copy of stdout taken before a launched command's stdout is diverted;
 * a FILE is appended to (a FIFO waits for its reader). 0 or -1 (errno). */
static int interval_open(struct interval_sink *is, const char *path)
{
	int fd = !strcmp(path, "-") ? fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3) :
				      cp_open_for_writing(path, O_APPEND | O_CREAT | O_CLOEXEC,
							  0644, cmd_wait_notice);
	FILE *f = fd >= 0 ? fdopen(fd, "a") : NULL;

	is->path = path;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (cp_interval_writer_init(&is->w, f)) {
		fclose(f);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void interval_close(struct interval_sink *is)
{
	if (is->w.out)
		fclose(is->w.out);
	cp_interval_writer_free(&is->w);
	cp_pprof_series_free(&is->pprof);
}

/* Every --interval: the interval's line, and the metrics file rewritten. */
void profile_command_interval(const struct cp_profile *p, void *arg)
{
	struct profile_command *pc = arg;
	struct cp_error err = { 0 };

	if (pc->intervals)
		write_interval(pc->intervals, p, false);
	/* Said once: a continuous run must not fill its log with it. */
	if (cp_metrics_sink_interval(&pc->metrics, p, &err) && pc->metrics.failures <= 1)
		fprintf(stderr, "clockprof: warning: %s (said once; the window goes on)\n",
			err.msg);
}

static bool take_output(struct profile_command *pc, int id, const char *value);

/* --anatomy[=N], --reuse-gap, --reuse-share; 0, or -1 with err filled. */
static int take_anatomy_option(struct profile_command *pc, int id, const char *value,
			       struct cp_error *err)
{
	struct cp_profile_options *o = &pc->opts;
	char *end;
	double v;

	if (id == PC_OPT_ANATOMY) {
		unsigned long n = value ? strtoul(value, &end, 10) : CP_ANATOMY_SAMPLE_DEFAULT;

		if (value &&
		    (*end || end == value || *value == '-' || !n || n > CP_ANATOMY_SAMPLE_MAX))
			return cp_fail(err, CP_EXIT_USAGE,
				       "invalid --anatomy '%s': give 1 to %d "
				       "requests",
				       value, CP_ANATOMY_SAMPLE_MAX);
		o->anatomy_on = true;
		o->anatomy_sample_size = (unsigned)n;
		return 0;
	}
	if (id == PC_OPT_REUSE_GAP) {
		if (cp_parse_duration(value, &v, err))
			return -1;
		o->reuse_gap_ns = (uint64_t)(v * 1e9 + 0.5);
		pc->reuse_given = 1;
		return 0;
	}
	v = strtod(value, &end);
	if (*end || end == value || !(v > 0 && v <= 1))
		return cp_fail(err, CP_EXIT_USAGE,
			       "invalid --reuse-share '%s': give a fraction "
			       "above 0, at most 1 (0.95)",
			       value);
	o->reuse_share = v;
	pc->reuse_given = 1;
	return 0;
}

/* Takes one option of the profile table; 0, or -1 with err filled. */
static int take_option(struct profile_command *pc, int id, const char *value, struct cp_error *err)
{
	struct cp_profile_options *o = &pc->opts;
	char *end;

	if (take_output(pc, id, value))
		return 0;
	switch (id) {
	case 'p': pc->pid = value; return 0;
	case 'd': return cp_parse_duration(value, &o->duration_s, err);
	case 'r': return cp_request_spec_parse(value, &o->request, err);
	case PC_OPT_PROBE:
		if (o->nprobes == CP_MAX_PROBES)
			return cp_fail(err, CP_EXIT_USAGE, "at most %d --probe options",
				       CP_MAX_PROBES);
		return cp_func_spec_parse(value, &o->probes[o->nprobes++], "--probe", err);
	case PC_OPT_OPS:
		o->ops = strtod(value, &end);
		if (*end || end == value || !(o->ops > 0))
			return cp_fail(err, CP_EXIT_USAGE,
				       "invalid --ops '%s': give a positive number", value);
		return 0;
	case PC_OPT_MECHANISM: return cp_mechanism_parse(value, &o->mechanism, err);
	case 'e': o->events = value; return 0;
	case PC_OPT_PER_REQUEST_COUNTERS: o->per_request_counters = true; return 0;
	case PC_OPT_STACKS: o->stacks = true; return 0;
	case PC_OPT_DEBUGINFOD: o->debuginfod = true; return 0;
	case PC_OPT_ANATOMY:
	case PC_OPT_REUSE_GAP:
	case PC_OPT_REUSE_SHARE: return take_anatomy_option(pc, id, value, err);
	case PC_OPT_PPROF_KEEP: {
		unsigned long keep = strtoul(value, &end, 10);

		if (*end || end == value || *value == '-' || !keep || keep > CP_PPROF_KEEP_MAX)
			return cp_fail(err, CP_EXIT_USAGE,
				       "invalid --pprof-keep '%s': give 1 to %d", value,
				       CP_PPROF_KEEP_MAX);
		pc->pprof_keep = (unsigned)keep;
		pc->pprof_keep_given = 1;
		return 0;
	}
	case PC_OPT_INTERVAL: return cp_parse_duration(value, &o->interval_s, err);
	case PC_OPT_INTERVAL_OUTPUT: pc->interval_output = value; return 0;
	case PC_OPT_NO_INHERIT: pc->no_inherit = 1; return 0;
	case PC_OPT_TREE: pc->tree = 1; return 0;
	case PC_OPT_CGROUP: pc->cgroup = value; return 0;
	}
	return take_metrics_option(pc, id, value, err);
}

/* The files of one run: output_rows, below, has one row each. */
#define NPO 6

static const char *output_path(const struct profile_command *pc, size_t i);

/* How many outputs, the files' and --interval-output, are "-" (stdout). */
static int stdout_outputs(const struct profile_command *pc)
{
	int n = pc->interval_output && !strcmp(pc->interval_output, "-");

	for (size_t i = 0; i < NPO; i++)
		n += output_path(pc, i) && !strcmp(output_path(pc, i), "-");
	return n;
}

/* The options that need others, and at most one output on stdout. The
 * files themselves are opened (and so checked) by
 * profile_command_execute, before anything is attached or launched. */
static int check_outputs(const struct profile_command *pc, struct cp_error *err)
{
	if (pc->interval_output && pc->opts.interval_s <= 0)
		return cp_fail(err, CP_EXIT_USAGE, "--interval-output needs --interval TIME");
	if (pc->pprof_keep_given &&
	    (!pc->pprof || !strcmp(pc->pprof, "-") || pc->opts.interval_s <= 0))
		return cp_fail(err, CP_EXIT_USAGE,
			       "--pprof-keep needs --pprof FILE (not -) and --interval TIME");
	if (pc->opts.per_request_counters &&
	    (pc->opts.duration_s <= 0 || pc->opts.request.kind == CP_REQUEST_NONE))
		return cp_fail(err, CP_EXIT_USAGE,
			       "--per-request-counters needs -d TIME and -r SPEC");
	if (pc->reuse_given && !pc->opts.anatomy_on)
		return cp_fail(err, CP_EXIT_USAGE, "--reuse-gap and --reuse-share need --anatomy");
	if (pc->opts.anatomy_on && pc->opts.request.kind == CP_REQUEST_NONE)
		return cp_fail(err, CP_EXIT_USAGE,
			       "--anatomy needs -r SPEC: a request is what "
			       "it samples");
	if (pc->metrics_sites_given && !pc->metrics_file && !pc->serve)
		return cp_fail(err, CP_EXIT_USAGE,
			       "--metrics-sites needs --metrics-file or --serve");
	if (pc->opts.interval_s > 0 && pc->opts.interval_s < CP_INTERVAL_MIN_S)
		return cp_fail(err, CP_EXIT_USAGE,
			       "--interval below %g s: each interval names its "
			       "sites and writes its files",
			       CP_INTERVAL_MIN_S);

	if (stdout_outputs(pc) > 1)
		return cp_fail(err, CP_EXIT_USAGE,
			       "only one output can be '-' (stdout); give the others a file");
	return 0;
}

static int writes_stdout(const struct profile_command *pc)
{
	return stdout_outputs(pc) > 0;
}

int profile_command_parse(struct profile_command *pc, const struct cp_command_spec *spec, int argc,
			  char **argv)
{
	struct cp_error err = { 0 };
	struct cp_cli cli;
	int id;

	memset(pc, 0, sizeof(*pc));
	pc->opts.mechanism = CP_MECHANISM_DEFAULT;
	pc->metrics_sites = CP_METRICS_SITES_DEFAULT;
	pc->pprof_keep = CP_PPROF_KEEP_DEFAULT;
	pc->opts.reuse_gap_ns = CP_ANATOMY_GAP_DEFAULT_NS;
	pc->opts.reuse_share = CP_ANATOMY_SHARE_DEFAULT;
	cp_cli_init(&cli, spec, argc, argv);
	while ((id = cp_cli_next(&cli, &err)) != CP_OPT_END) {
		int rc = id == CP_OPT_ERROR ? 1 : take_option(pc, id, cli.value, &err);

		if (rc < 0)
			return cmd_error(err.exit_code, "%s", err.msg);
		if (rc > 0)
			return cmd_option_exit(&cli, id, &err) ?: -1;
	}
	if (pc->opts.interval_s > 0 && !pc->interval_output)
		pc->interval_output = "-"; /* --interval's lines: stdout by default */
	pc->rest = cp_cli_rest(&cli);
	pc->quiet = cli.quiet;
	pc->opts.verbose = cli.verbose;
	pc->color = cp_cli_color(&cli, writes_stdout(pc) ? STDERR_FILENO : STDOUT_FILENO);
	if (check_outputs(pc, &err) || check_serve(pc, &err))
		return cmd_error(err.exit_code, "%s", err.msg);
	return 0;
}

/* With an output on stdout, a launched command's stdout would land in
 * front of it: the command gets clockprof's stderr as its stdout, and
 * clockprof keeps the real stdout (returned, or -1) to write to. */
static int divert_stdout(void)
{
	int saved;

	fflush(stdout);
	saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3); /* not the command's */
	if (saved >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		close(saved);
		return -1;
	}
	return saved;
}

static void restore_stdout(int saved)
{
	if (saved < 0)
		return;
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
}

static int collect(struct profile_command *pc, struct cp_profile *p, int live,
		   struct interval_sink *is, struct cp_error *err)
{
	int saved = pc->opts.command && writes_stdout(pc) ? divert_stdout() : -1;
	int rc;

	pc->live = live;
	if (live || pc->metrics.server)
		pc->opts.tick = tick;
	pc->opts.callback_arg = pc;
	if (pc->opts.verbose)
		pc->opts.on_live = say_live;
	pc->intervals = is;
	if (is || pc->metrics_file)
		pc->opts.on_interval = profile_command_interval;
	rc = cp_profile_collect(&pc->opts, p, err);
	restore_stdout(saved);
	if (!rc && live)
		fputs("\r\033[K", stdout);
	return rc;
}

/* What the output writers draw from. */
struct profile_writing {
	json_t *doc;
	const struct cp_profile *p;
	const char *output, *html;
	struct cp_metrics_sink *metrics;
};

static int write_run(FILE *f, void *ctx, struct cp_error *err)
{
	const struct profile_writing *w = ctx;
	char *text = cp_json_text(w->doc);

	if (!text)
		return cp_fail(err, CP_EXIT_USAGE, "out of memory writing run.json");
	fputs(text, f);
	if (!strcmp(w->output, "-"))
		fputc('\n', f); /* a file ends at its closing brace */
	free(text);
	return 0;
}

static int write_html(FILE *f, void *ctx, struct cp_error *err)
{
	const struct profile_writing *w = ctx;

	return cp_report_write(&w->doc, 1, f, w->html, err);
}

static int write_folded(FILE *f, void *ctx, struct cp_error *err)
{
	const struct profile_writing *w = ctx;

	return cp_folded_write(f, w->p->stacks.stacks, w->p->stacks.n, err);
}

static int write_speedscope(FILE *f, void *ctx, struct cp_error *err)
{
	const struct profile_writing *w = ctx;

	return cp_speedscope_write(f, w->p->stacks.stacks, w->p->stacks.n, w->p->target.comm, err);
}

static int write_pprof(FILE *f, void *ctx, struct cp_error *err)
{
	const struct profile_writing *w = ctx;

	return cp_pprof_write(f, w->p, err);
}

static int write_metrics(FILE *f, void *ctx, struct cp_error *err)
{
	const struct profile_writing *w = ctx;

	return cp_metrics_sink_final(w->metrics, w->p, f, err);
}

/* The files one run writes, a row each: the option that names one, where
 * its path is kept, whether it needs whole stacks (which imply
 * --stacks), and its writer. run.json is last: put in place after the
 * others, so that it never stands for a run whose other files are
 * missing. A new format is a row here, its option in profile_command.h's
 * table, and its writer above. */
static const struct output_row {
	int option;
	size_t path; /* offsetof(struct profile_command, its path) */
	bool stacks;
	cp_output_writer write;
} output_rows[] = {
	{ PC_OPT_HTML, offsetof(struct profile_command, html), false, write_html },
	{ PC_OPT_FOLDED, offsetof(struct profile_command, folded), true, write_folded },
	{ PC_OPT_SPEEDSCOPE, offsetof(struct profile_command, speedscope), true, write_speedscope },
	{ PC_OPT_PPROF, offsetof(struct profile_command, pprof), false, write_pprof },
	{ PC_OPT_METRICS_FILE, offsetof(struct profile_command, metrics_file), false,
	  write_metrics },
	{ 'o', offsetof(struct profile_command, output), false, write_run },
};
_Static_assert(sizeof(output_rows) / sizeof(output_rows[0]) == NPO, "NPO counts output_rows");

static const char **output_slot(struct profile_command *pc, size_t i)
{
	return (const char **)((char *)pc + output_rows[i].path);
}

static const char *output_path(const struct profile_command *pc, size_t i)
{
	return *(const char *const *)((const char *)pc + output_rows[i].path);
}

/* An output's option: its path kept, whole stacks asked for if it
 * needs them. False for any other option. */
static bool take_output(struct profile_command *pc, int id, const char *value)
{
	for (size_t i = 0; i < NPO; i++) {
		if (output_rows[i].option != id)
			continue;
		*output_slot(pc, i) = value;
		pc->opts.stacks |= output_rows[i].stacks;
		return true;
	}
	return false;
}

/* Writes the files opened in outs; an exit code. run.json holds what was
 * measured: kept when a report made from it fails. */
static int write_files(struct profile_command *pc, const struct cp_profile *p,
		       struct cp_output *outs)
{
	struct profile_writing w = { cp_run_file_build(p), p, pc->output, pc->html, &pc->metrics };
	struct cp_error err = { 0 };
	int rc = CP_EXIT_OK;

	for (size_t i = 0; i < NPO; i++) {
		outs[i].write = output_rows[i].write;
		outs[i].ctx = &w;
	}
	if (!w.doc) {
		cp_outputs_abort(outs, NPO);
		rc = cmd_error(CP_EXIT_USAGE, "out of memory building run.json");
	} else if (cp_outputs_write(outs, NPO, CP_OUTPUTS_KEEP_LAST, &err)) {
		rc = cmd_error(err.exit_code, "%s", err.msg);
	}
	memset(&err, 0, sizeof(err));
	if (cp_outputs_publish(outs, NPO, &err))
		rc = cmd_error(err.exit_code, "%s", err.msg);
	json_decref(w.doc);
	return rc;
}

/* What the caller reads back once the window is over (profile_command.h). */
static void note_outcome(struct profile_command *pc, const struct cp_profile *p)
{
	pc->interrupted = !p->complete && p->end_reason == CP_END_SIGNAL;
	pc->counted = p->mechanism;
	pc->command_status = cp_profile_command_status(p);
	pc->has_boundary = p->request_text[0] != '\0';
	pc->requests = p->totals.requests;
	pc->reads = p->totals.all.reads;
	pc->command_how[0] = '\0';
	if (pc->command_status)
		cp_describe_exit(p->exit_status, pc->command_how, sizeof(pc->command_how));
}

int profile_command_execute(struct profile_command *pc)
{
	struct cp_profile p;
	struct cp_error err = { 0 };
	/* The summary is for people: never mixed into an output on stdout. */
	FILE *text = writes_stdout(pc) ? stderr : stdout;
	struct cp_output outs[NPO];
	int rc, live = !pc->quiet && text == stdout && isatty(STDOUT_FILENO);
	struct interval_sink is = { 0 };

	/* stdout's reader gone (`| head`): an error said, the window goes on
	 * (the launched command gets SIGPIPE as usual: launcher.c) */
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < NPO; i++)
		outs[i] = (struct cp_output){ .path = output_path(pc, i) };
	cp_metrics_sink_init(&pc->metrics, pc->metrics_file, pc->metrics_sites);
	/* Before the target is launched or touched: a path that cannot be
	 * written fails now, and a FIFO waits for its reader now, where a
	 * stop signal still ends clockprof. The --serve child is forked
	 * now too, before clockprof holds anything of the target's. */
	if (cp_outputs_open(outs, NPO, cmd_wait_notice, &err))
		return cmd_error(err.exit_code, "%s", err.msg);
	if (pc->interval_output && (interval_open(&is, pc->interval_output) ||
				    interval_pprof_open(&is, pc->pprof, pc->pprof_keep))) {
		cp_outputs_abort(outs, NPO);
		interval_close(&is);
		return cmd_error(CP_EXIT_USAGE, "cannot write --interval's outputs (%s%s%s): %s",
				 pc->interval_output, pc->pprof ? ", --pprof " : "",
				 pc->pprof ? pc->pprof : "", strerror(errno));
	}
	if ((pc->serve &&
	     !(pc->metrics.server = cp_metrics_serve_start(
		       &pc->serve_addr, pc->serve_user ? pc->serve_user : "nobody", &err))) ||
	    collect(pc, &p, live, pc->interval_output ? &is : NULL, &err)) {
		cp_outputs_abort(outs, NPO);
		cp_metrics_sink_release(&pc->metrics);
		interval_close(&is);
		return cmd_error(err.exit_code, "%s", err.msg);
	}
	if (pc->interval_output) {
		write_interval(&is, &p, true); /* the last, partial interval */
		interval_close(&is);
	}
	note_outcome(pc, &p);
	if (!pc->quiet)
		cp_summary_print(text, &p, pc->color);
	rc = write_files(pc, &p, outs);
	if (!pc->metrics_file) /* else written with the files */
		cp_metrics_sink_final(&pc->metrics, &p, NULL, &err);
	cp_metrics_sink_release(&pc->metrics);
	cp_profile_release(&p);
	if (rc == CP_EXIT_OK && pc->command_status) {
		/* Measured and written, but a failing command must not pass
		 * for a good run in a script or CI step. */
		fprintf(stderr, "clockprof: the command failed (%s)\n", pc->command_how);
		rc = pc->command_status;
	}
	return rc;
}
