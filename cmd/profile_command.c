/* profile_command.c - see profile_command.h. */
#include <getopt.h>
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
#include "speedscope.h"
#include "report.h"
#include "run_file.h"
#include "summary.h"

static const char options_help[] =
	"  -d, --duration TIME    window length: 10, 2.5s, 500ms, 1m (default: until\n"
	"                         Ctrl-C or the target exits)\n"
	"  -r, --request SPEC     request boundary: func:SYMBOL, func:FILE:SYMBOL,\n"
	"                         syscall:NAME; reads between two boundaries on a\n"
	"                         thread are one request\n"
	"      --probe FILE:SYMBOL  also count calls of this function (an own clock\n"
	"                         wrapper), reported as calls.SYMBOL/op; repeatable\n"
	"      --ops N            operations done in the window (divisor per op)\n"
	"      --mechanism M      how reads are seen: uprobe (default; every host) or\n"
	"                         breakpoint (vDSO hardware breakpoints: also sees\n"
	"                         calls that pass no PLT stub, where the host fires\n"
	"                         them); either proves itself at start-up\n"
	"  -e, --events LIST      perf counters, perf-style names with :u/:k (default:\n"
	"                         instructions, branches, branch-misses, cycles, each\n"
	"                         :u and :k, task-clock, context-switches,\n"
	"                         cpu-migrations, page-faults); 'none' for no counters.\n"
	"                         With -d and -r they get the second half of the\n"
	"                         window, with only the boundary probe installed\n"
	"  -o, --output FILE      write run.json (clockprof.run/1) to FILE, - for stdout\n"
	"      --html FILE        write the HTML report to FILE\n"
	"      --stacks           also record whole user stacks of clock reads\n"
	"      --folded FILE      write them in FlameGraph's folded format (implies --stacks)\n"
	"      --speedscope FILE  write them in speedscope's format (implies --stacks)\n"
	"  -q, --quiet            no summary, no live view\n"
	"  -v, --verbose          show libbpf's messages\n"
	"  -h, --help             this help\n"
	"\nExit codes: 0 profiled, 2 usage or bad input, 3 could not profile.\n";

static void tick(const struct cp_profile *p, void *arg)
{
	(void)arg;
	cp_summary_live(stdout, p);
}

int profile_command_parse(struct profile_command *pc, int argc, char **argv,
			  const char *usage)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "request", required_argument, NULL, 'r' },
		{ "probe", required_argument, NULL, 'P' },
		{ "ops", required_argument, NULL, 'O' },
		{ "mechanism", required_argument, NULL, 'M' },
		{ "events", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "html", required_argument, NULL, 'H' },
		{ "stacks", no_argument, NULL, 'S' },
		{ "folded", required_argument, NULL, 'F' },
		{ "speedscope", required_argument, NULL, 'X' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cp_error err = { 0 };
	char *end;
	int c;

	memset(pc, 0, sizeof(*pc));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+d:r:e:o:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cp_parse_duration(optarg, &pc->opts.duration_s, &err))
				return cmd_error(err.exit_code, "%s", err.msg);
			break;
		case 'r':
			if (cp_request_spec_parse(optarg, &pc->opts.request, &err))
				return cmd_error(err.exit_code, "%s", err.msg);
			break;
		case 'P':
			if (pc->opts.nprobes == CP_MAX_PROBES)
				return cmd_error(CP_EXIT_USAGE, "at most %d --probe options",
						 CP_MAX_PROBES);
			if (cp_func_spec_parse(optarg, &pc->opts.probes[pc->opts.nprobes++],
					       "--probe", &err))
				return cmd_error(err.exit_code, "%s", err.msg);
			break;
		case 'O':
			pc->opts.ops = strtod(optarg, &end);
			if (*end || end == optarg || !(pc->opts.ops > 0))
				return cmd_error(CP_EXIT_USAGE,
						 "invalid --ops '%s': give a positive number", optarg);
			break;
		case 'M':
			if (cp_mechanism_parse(optarg, &pc->opts.mechanism, &err))
				return cmd_error(err.exit_code, "%s", err.msg);
			break;
		case 'e':
			pc->opts.events = optarg;
			break;
		case 'o':
			pc->output = optarg;
			break;
		case 'H':
			pc->html = optarg;
			break;
		case 'S':
			pc->opts.stacks = true;
			break;
		case 'F':
			pc->folded = optarg;
			pc->opts.stacks = true;
			break;
		case 'X':
			pc->speedscope = optarg;
			pc->opts.stacks = true;
			break;
		case 'q':
			pc->quiet = 1;
			break;
		case 'v':
			pc->opts.verbose = 1;
			break;
		case 'h':
			printf("usage: %s\n\n%s", usage, options_help);
			return -1;
		default:
			return cmd_error(CP_EXIT_USAGE, "unknown or incomplete option '%s'; see --help",
					 argv[optind - 1]);
		}
	}
	if (pc->output && cp_check_writable(pc->output, &err))
		return cmd_error(err.exit_code, "%s", err.msg);
	if ((pc->html && cp_check_writable(pc->html, &err)) ||
	    (pc->folded && cp_check_writable(pc->folded, &err)) ||
	    (pc->speedscope && cp_check_writable(pc->speedscope, &err)))
		return cmd_error(err.exit_code, "%s", err.msg);
	return 0;
}

int profile_command_execute(struct profile_command *pc)
{
	struct cp_profile p;
	struct cp_error err = { 0 };
	FILE *text = pc->output && !strcmp(pc->output, "-") ? stderr : stdout;
	json_t *doc;
	int rc = CP_EXIT_OK, live = !pc->quiet && isatty(fileno(text)) && text == stdout;

	if (live) {
		pc->opts.tick = tick;
		pc->opts.tick_arg = pc;
	}
	if (cp_profile_collect(&pc->opts, &p, &err))
		return cmd_error(err.exit_code, "%s", err.msg);
	if (live)
		fputs("\r\033[K", stdout);
	pc->interrupted = !p.complete && p.end_reason && !strcmp(p.end_reason, "signal");
	pc->command_status = cp_profile_command_status(&p);
	pc->command_how[0] = '\0';
	if (pc->command_status)
		cp_describe_exit(p.exit_status, pc->command_how, sizeof(pc->command_how));
	if (!pc->quiet)
		cp_summary_print(text, &p);
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
