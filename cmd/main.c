/* main.c - the clockprof command: one dispatch table, no logic. The
 * subcommands' option tables (cmd.h) also make the man page (`--man`) and
 * bash completion (`--completion bash`), which the build saves. */
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli_completion.h"
#include "cli_man.h"
#include "cmd.h"
#include "error.h"
#include "patch_restorer_main.h"
#include "suggest.h"
#include "version.h"

struct subcommand {
	const struct cp_command_spec *spec;
	int (*fn)(int argc, char **argv);
	bool window; /* profiles: stop signals stay blocked for its signalfd */
};

static const struct subcommand subcommands[] = {
	{ &cmd_attach_spec, cmd_attach, true },	 { &cmd_run_spec, cmd_run, true },
	{ &cmd_ab_spec, cmd_ab, true },		 { &cmd_compare_spec, cmd_compare, false },
	{ &cmd_report_spec, cmd_report, false },
};
#define NSUB (sizeof(subcommands) / sizeof(subcommands[0]))

static const struct cp_command_spec *const specs[NSUB] = {
	&cmd_attach_spec, &cmd_run_spec, &cmd_ab_spec, &cmd_compare_spec, &cmd_report_spec,
};

static const struct cp_program_spec program = {
	.name = "clockprof",
	.version = CLOCKPROF_VERSION,
	.summary = "how many times a program reads the clock, from where, at what cost",
	.description = "clockprof counts a program's clock reads (clock_gettime, gettimeofday, "
		       "time and the vDSO paths behind them) per request, names their call "
		       "sites, and gates CI on regressions: 'run' or 'attach' writes a run file "
		       "(run.json), 'ab' measures base and head builds in turn, 'compare' "
		       "judges head against base within bounds and 'report' renders one "
		       "self-contained HTML file.\n\n"
		       "By default (--mechanism auto) the reads are counted inside the target: "
		       "its vDSO is patched to count each read in the process itself, with no "
		       "trap (the patch mechanism). Where the patch cannot be used, or with "
		       "--stacks, eBPF programs count them on uprobes (every host) or on "
		       "hardware breakpoints (where the host fires them): then each read is a "
		       "trap into the kernel, and the summary says what the traps cost.\n\n"
		       "Profiling needs root (or CAP_BPF and CAP_PERFMON).",
	.commands = specs,
	.ncommands = NSUB,
	.exit_status = "0 success, or the gate passed; 1 the gate failed (a measure regressed "
		       "beyond its bound, or inconclusive with --fail-on-inconclusive); 2 usage "
		       "error, or unreadable or invalid input; 3 could not profile (no such "
		       "process, missing privileges, kernel without BPF).",
	.environment = "NO_COLOR: when set and not empty, --color=auto means no colour.\n\n"
		       "GITHUB_STEP_SUMMARY: compare appends its markdown summary to this file "
		       "when it writes markdown (--markdown, or --github).",
	.see_also = "perf-stat(1), bpftrace(8)",
};

static int usage(FILE *out)
{
	char codes[512];

	fprintf(out, "usage: clockprof COMMAND [OPTIONS]\n\n"
		     "How many times a program reads the clock, from where, at what cost.\n\n");
	for (size_t i = 0; i < NSUB; i++)
		fprintf(out, "  clockprof %-8s %s\n", specs[i]->name, specs[i]->summary);
	fprintf(out, "\n'clockprof help COMMAND' or 'clockprof COMMAND --help' describes each\n"
		     "command; 'man clockprof' all of them.\n\n");
	snprintf(codes, sizeof(codes), "Exit codes: %s", program.exit_status);
	cp_cli_wrap(out, codes);
	return CP_EXIT_OK;
}

static const struct subcommand *find(const char *name)
{
	for (size_t i = 0; i < NSUB; i++)
		if (!strcmp(name, specs[i]->name))
			return &subcommands[i];
	return NULL;
}

/* An unknown command, with the closest ones ("atach": attach). */
static int unknown(const char *name)
{
	struct cp_suggest s;
	char hint[200];

	cp_suggest_init(&s, name);
	for (size_t i = 0; i < NSUB; i++)
		cp_suggest_add(&s, specs[i]->name);
	cp_suggest_add(&s, "help");
	cp_suggest_format(&s, hint, sizeof(hint));
	if (hint[0])
		return cmd_error(CP_EXIT_USAGE,
				 "unknown command '%s'%s (run 'clockprof --help' "
				 "for the list)",
				 name, hint);
	return cmd_error(CP_EXIT_USAGE, "unknown command '%s'; run 'clockprof --help' for the list",
			 name);
}

/* `clockprof help [COMMAND]`. */
static int help(int argc, char **argv)
{
	const struct subcommand *s;

	if (argc < 3 || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))
		return usage(stdout);
	if (!(s = find(argv[2])))
		return unknown(argv[2]);
	cp_cli_help(stdout, s->spec);
	return CP_EXIT_OK;
}

/* Ctrl-C, SIGTERM and SIGHUP end a profiling window, never clockprof
 * midway: blocked from main's first instruction, so one that comes while
 * clockprof starts up stays pending until the window's signalfd takes it
 * (profile.c), and the window cut short is written or reported. Commands
 * with no window (compare, report) get them back at once. */
static void block_stop_signals(sigset_t *saved)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, saved);
}

int main(int argc, char **argv)
{
	const struct subcommand *s;
	sigset_t saved;

	/* Hidden: the vDSO patch's helper (its self-test's child, then its
	 * restorer), this program run again. */
	if (argc >= 2 && !strcmp(argv[1], CP_PATCH_SUBJECT_ARG)) {
		mallopt(M_ARENA_MAX, 1); /* as a profile's (below) */
		return cp_vdso_patch_subject_main(argc, argv);
	}
	cp_patch_restorer_enable();
	block_stop_signals(&saved);
	if (argc >= 2 && (s = find(argv[1]))) {
		/* A profile's threads share one malloc arena: each of its
		 * short-lived threads (the session's loaders, the patch's holds)
		 * otherwise gets a fresh arena whose pages are faulted in one by
		 * one, ~140 faults of an attach's ~850 under the patch, each
		 * ~25 us where the hypervisor keeps the page tables, and glibc
		 * keeps each arena until exit: up to ~1 MB of an attach's peak
		 * RSS. compare's run loaders malloc all they do: one arena made
		 * them wait on its lock. */
		if (s->window)
			mallopt(M_ARENA_MAX, 1);
		else
			sigprocmask(SIG_SETMASK, &saved, NULL);
		return s->fn(argc - 1, argv + 1);
	}
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (argc < 2)
		return usage(stderr), CP_EXIT_USAGE;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout);
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return cmd_version();
	/* Hidden: what the build saves as clockprof.1 and the completion. */
	if (!strcmp(argv[1], "--man"))
		return cp_cli_man(stdout, &program), CP_EXIT_OK;
	if (!strcmp(argv[1], "--completion") && argc > 2 && !strcmp(argv[2], "bash"))
		return cp_cli_bash_completion(stdout, &program), CP_EXIT_OK;
	if (!strncmp(argv[1], "--complete-", 11))
		return cmd_complete_names(argc, argv);
	return unknown(argv[1]);
}
