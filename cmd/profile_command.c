/* profile_command.c - see profile_command.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cmd.h"
#include "duration.h"
#include "error.h"
#include "folded.h"
#include "launcher.h"
#include "profile_command.h"
#include "report.h"
#include "run_file.h"
#include "speedscope.h"
#include "summary.h"
#include "wait_status.h"

static void tick(const struct cp_profile *p, void *arg)
{
	(void)arg;
	cp_summary_live(stdout, p);
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

/* Takes one option of the profile table; 0, or -1 with err filled. */
static int take_option(struct profile_command *pc, int id, const char *value,
		       struct cp_error *err)
{
	struct cp_profile_options *o = &pc->opts;
	char *end;

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
	case 'o': pc->output = value; return 0;
	case PC_OPT_HTML: pc->html = value; return 0;
	case PC_OPT_STACKS: o->stacks = true; return 0;
	case PC_OPT_FOLDED: pc->folded = value; o->stacks = true; return 0;
	case PC_OPT_SPEEDSCOPE: pc->speedscope = value; o->stacks = true; return 0;
	}
	return 1;	/* not a profile option */
}

/* Output paths are checked before anything is attached or launched; at
 * most one of them may be stdout. */
static int check_outputs(const struct profile_command *pc, struct cp_error *err)
{
	const char *paths[] = { pc->output, pc->html, pc->folded, pc->speedscope };
	int dash = 0;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i])
			continue;
		if (!strcmp(paths[i], "-") && dash++)
			return cp_fail(err, CP_EXIT_USAGE,
				       "only one output can be '-' (stdout); give the others a file");
		if (cp_check_writable(paths[i], err))
			return -1;
	}
	return 0;
}

static int writes_stdout(const struct profile_command *pc)
{
	const char *paths[] = { pc->output, pc->html, pc->folded, pc->speedscope };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (paths[i] && !strcmp(paths[i], "-"))
			return 1;
	return 0;
}

int profile_command_parse(struct profile_command *pc, const struct cp_command_spec *spec,
			  int argc, char **argv)
{
	struct cp_error err = { 0 };
	struct cp_cli cli;
	int id;

	memset(pc, 0, sizeof(*pc));
	cp_cli_init(&cli, spec, argc, argv);
	while ((id = cp_cli_next(&cli, &err)) != CP_OPT_END) {
		int rc = id == CP_OPT_ERROR ? 1 : take_option(pc, id, cli.value, &err);

		if (rc < 0)
			return cmd_error(err.exit_code, "%s", err.msg);
		if (rc > 0)
			return cmd_option_exit(&cli, id, &err) ?: -1;
	}
	pc->rest = cp_cli_rest(&cli);
	pc->quiet = cli.quiet;
	pc->opts.verbose = cli.verbose;
	pc->color = cp_cli_color(&cli, writes_stdout(pc) ? STDERR_FILENO : STDOUT_FILENO);
	if (check_outputs(pc, &err))
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
	saved = dup(STDOUT_FILENO);
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
		   struct cp_error *err)
{
	int saved = pc->opts.command && writes_stdout(pc) ? divert_stdout() : -1;
	int rc;

	if (live)
		pc->opts.tick = tick;
	if (pc->opts.verbose)
		pc->opts.on_live = say_live;
	rc = cp_profile_collect(&pc->opts, p, err);
	restore_stdout(saved);
	if (!rc && live)
		fputs("\r\033[K", stdout);
	return rc;
}

int profile_command_execute(struct profile_command *pc)
{
	struct cp_profile p;
	struct cp_error err = { 0 };
	/* The summary is for people: never mixed into an output on stdout. */
	FILE *text = writes_stdout(pc) ? stderr : stdout;
	json_t *doc;
	int rc = CP_EXIT_OK, live = !pc->quiet && text == stdout && isatty(STDOUT_FILENO);

	if (collect(pc, &p, live, &err))
		return cmd_error(err.exit_code, "%s", err.msg);
	pc->interrupted = !p.complete && p.end_reason == CP_END_SIGNAL;
	pc->command_status = cp_profile_command_status(&p);
	pc->command_how[0] = '\0';
	if (pc->command_status)
		cp_describe_exit(p.exit_status, pc->command_how, sizeof(pc->command_how));
	if (!pc->quiet)
		cp_summary_print(text, &p, pc->color);
	doc = cp_run_file_build(&p);
	if (pc->output && cp_json_write_file(doc, pc->output, &err))
		rc = cmd_error(err.exit_code, "%s", err.msg);
	if (pc->html && cp_report_write(&doc, 1, pc->html, &err))
		rc = cmd_error(err.exit_code, "%s", err.msg);
	if (pc->folded && cp_folded_write(p.stacks.stacks, p.stacks.n, pc->folded, &err))
		rc = cmd_error(err.exit_code, "%s", err.msg);
	if (pc->speedscope &&
	    cp_speedscope_write(p.stacks.stacks, p.stacks.n, p.target.comm, pc->speedscope, &err))
		rc = cmd_error(err.exit_code, "%s", err.msg);
	json_decref(doc);
	cp_profile_release(&p);
	if (rc == CP_EXIT_OK && pc->command_status) {
		/* Measured and written, but a failing command must not pass
		 * for a good run in a script or CI step. */
		fprintf(stderr, "clockprof: the command failed (%s)\n", pc->command_how);
		rc = pc->command_status;
	}
	return rc;
}
