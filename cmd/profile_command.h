/* profile_command.h - the options `attach`, `run` and `ab` share (table
 * entries for their cp_command_spec), and the part of these commands after
 * the target is known: collect, print, write. */
#ifndef CP_PROFILE_COMMAND_H
#define CP_PROFILE_COMMAND_H

#include "cli_options.h"
#include "metrics_serve.h"
#include "metrics_sink.h"
#include "pprof_series.h"
#include "profile.h"

struct interval_sink;

/* --interval's shortest: each interval names new sites and writes its
 * outputs, so a shorter one costs more than it shows. */
#define CP_INTERVAL_MIN_S 0.1

#define CP_METRICS_SITES_DEFAULT_TEXT "100" /* CP_METRICS_SITES_DEFAULT */

enum {
	PC_OPT_PROBE = CP_OPT_FIRST_LONG,
	PC_OPT_OPS,
	PC_OPT_MECHANISM,
	PC_OPT_HTML,
	PC_OPT_STACKS,
	PC_OPT_FOLDED,
	PC_OPT_SPEEDSCOPE,
	PC_OPT_DEBUGINFOD,
	PC_OPT_PPROF,
	PC_OPT_PPROF_KEEP,
	PC_OPT_METRICS_FILE,
	PC_OPT_METRICS_SITES,
	PC_OPT_SERVE,
	PC_OPT_SERVE_ANY,
	PC_OPT_SERVE_USER,
	PC_OPT_INTERVAL,
	PC_OPT_INTERVAL_OUTPUT,
	PC_OPT_NO_INHERIT,
	PC_OPT_PER_REQUEST_COUNTERS,
	PC_OPT_TREE,
	PC_OPT_CGROUP,
	PC_OPT_ANATOMY,
	PC_OPT_REUSE_GAP,
	PC_OPT_REUSE_SHARE,
};

#define CP_ANATOMY_DEFAULT_TEXT "200"	   /* CP_ANATOMY_SAMPLE_DEFAULT */
#define CP_REUSE_GAP_DEFAULT_TEXT "1us"	   /* CP_ANATOMY_GAP_DEFAULT_NS */
#define CP_REUSE_SHARE_DEFAULT_TEXT "0.95" /* CP_ANATOMY_SHARE_DEFAULT */

/* What is measured and how: every profiling command takes these. */
/* Option tables: each option's fields on the rows they were written
 * in (clang-format would give every field a line of its own). */
/* clang-format off */
#define PROFILE_WINDOW_OPTIONS \
	{ .id = 'd', .short_name = 'd', .long_name = "duration", .value = "TIME", \
	  .help = "window length: 10, 2.5s, 500ms, 1m (default: until Ctrl-C or the target exits)" }, \
	{ .id = 'r', .short_name = 'r', .long_name = "request", .value = "SPEC", \
	  .help = "request boundary: func:SYMBOL, func:FILE:SYMBOL or syscall:NAME; reads " \
	  "between two boundaries on a thread are one request", \
	  .complete = CP_COMPLETE_REQUEST }, \
	{ .id = PC_OPT_PROBE, .long_name = "probe", .value = "FILE:SYMBOL", \
	  .help = "also count calls of this function (an own clock wrapper), reported as " \
	  "calls.SYMBOL/op; repeatable", .repeatable = 1 }, \
	{ .id = PC_OPT_OPS, .long_name = "ops", .value = "N", \
	  .help = "operations done in the window (divisor per op)" }, \
	{ .id = PC_OPT_MECHANISM, .long_name = "mechanism", .value = "M", \
	  .help = "how reads are seen (default: " CP_MECHANISM_DEFAULT_NAME "): patch " \
	  "(counted inside the target's vDSO, no trap per read), uprobe (every host; " \
	  "--stacks needs it or breakpoint), breakpoint (vDSO hardware breakpoints, " \
	  "where the host fires them) or auto (the patch, else uprobe when the patch " \
	  "cannot be used or --stacks is given, the reason said); each proves itself " \
	  "at start-up, and one asked by name that cannot be used exits 3", \
	  .complete = CP_COMPLETE_WORDS, .words = "auto patch uprobe breakpoint" }, \
	{ .id = 'e', .short_name = 'e', .long_name = "events", .value = "LIST", \
	  .help = "perf counters, perf-style names with :u/:k (default: instructions, " \
	  "branches, branch-misses, cycles, each :u and :k, task-clock, " \
	  "context-switches, cpu-migrations, page-faults); 'none' for no counters. " \
	  "With -d and -r and a boundary that traps, they get the second half of the " \
	  "window, with only the boundary probe installed; with the vDSO patch a " \
	  "func: boundary is closed in the target, nothing traps, and they share the " \
	  "window. Hardware and software events only: tracepoints " \
	  "(sched:sched_switch) are not supported" }, \
	CP_OPTION_FLAG(PC_OPT_PER_REQUEST_COUNTERS, "per-request-counters", \
	  "one counter per request too (instructions:u, cycles:u or task-clock, " \
	  "the first that counts here), read at each boundary by a uprobe there (a trap " \
	  "per request) in the counters' half of the window (needs -d and -r)"), \
	CP_OPTION_FLAG(PC_OPT_STACKS, "stacks", \
	  "also record whole user stacks of clock reads"), \
	CP_OPTION_FLAG(PC_OPT_DEBUGINFOD, "debuginfod", \
	  "after the window, ask the debuginfod servers of DEBUGINFOD_URLS " \
	  "(libdw's client, 10 s at most) for the debug files of stripped files " \
	  "whose call sites have no name; never asked without it"), \
	{ .id = PC_OPT_ANATOMY, .long_name = "anatomy", .value = "N", .optional = 1, \
	  .help = "the anatomy of a request: for N requests spread over the window " \
	  "(default " CP_ANATOMY_DEFAULT_TEXT "), their reads in order with the time, " \
	  "syscalls and switches between them, and the reads that could reuse an " \
	  "earlier one (needs -r; docs/anatomy.md)" }, \
	{ .id = PC_OPT_REUSE_GAP, .long_name = "reuse-gap", .value = "DURATION", .help = \
	  "--anatomy: a read is reusable only if less than this came between it and the " \
	  "earlier read of its clock (default " CP_REUSE_GAP_DEFAULT_TEXT ")" }, \
	{ .id = PC_OPT_REUSE_SHARE, .long_name = "reuse-share", .value = "FRACTION", .help = \
	  "--anatomy: a read is reusable only if the rule held in at least this share of " \
	  "the sampled requests that had both reads (default " CP_REUSE_SHARE_DEFAULT_TEXT ")" }

/* Where the results go: attach and run (ab names its files itself). */
#define PROFILE_OUTPUT_OPTIONS \
	CP_OPTION_OUTPUT("write run.json (clockprof.run/1) to FILE; - for stdout (the summary " \
	  "then goes to stderr, and so does a launched command's stdout)"), \
	CP_OPTION_FILE(PC_OPT_HTML, "html", "FILE", "write the HTML report to FILE"), \
	CP_OPTION_FILE(PC_OPT_FOLDED, "folded", "FILE", \
	  "write the stacks in FlameGraph's folded format (implies --stacks)"), \
	CP_OPTION_FILE(PC_OPT_SPEEDSCOPE, "speedscope", "FILE", \
	  "write the stacks in speedscope's format (implies --stacks)"), \
	CP_OPTION_FILE(PC_OPT_PPROF, "pprof", "FILE", \
	  "write a gzip-compressed pprof profile (go tool pprof, Pyroscope, Parca): " \
	  "clock_reads at each call site (whole stacks with --stacks), requests at the " \
	  "func: boundary; with --interval also one per interval beside FILE, named by " \
	  "its end (clock.20261202T213400.123Z.pb.gz)"), \
	{ .id = PC_OPT_PPROF_KEEP, .long_name = "pprof-keep", .value = "K", \
	  .help = "--pprof with --interval: the interval profiles kept, the newest " \
	  "(default " CP_PPROF_KEEP_DEFAULT_TEXT "); older ones this run wrote are removed" }, \
	{ .id = PC_OPT_INTERVAL, .long_name = "interval", .value = "TIME", \
	  .help = "also write, every TIME (10s, 500ms, 1m), one record of that interval " \
	  "(clockprof.interval/1: run.json's measures of the interval) as a JSON line; the " \
	  "last, partial interval too, at the end. Counters then share the window with the " \
	  "reads (never split); -d still ends the run" }, \
	CP_OPTION_FILE(PC_OPT_INTERVAL_OUTPUT, "interval-output", "FILE", \
	  "where --interval's lines go: FILE (appended to, created if missing; a FIFO " \
	  "waits for its reader) or - for stdout (the default)")

/* Prometheus metrics (docs/metrics.md): attach and run. */
#define PROFILE_METRICS_OPTIONS \
	CP_OPTION_FILE(PC_OPT_METRICS_FILE, "metrics-file", "FILE", \
	  "write the counts as Prometheus text (format 0.0.4), replaced atomically " \
	  "at each interval and at the end: for node_exporter's textfile collector"), \
	{ .id = PC_OPT_METRICS_SITES, .long_name = "metrics-sites", .value = "N", \
	  .help = "call sites that get a label of their own in the metrics, the first N " \
	  "seen, for the life of clockprof; later ones are summed as site=\"other\" " \
	  "(default " CP_METRICS_SITES_DEFAULT_TEXT ", at most 10000)" }, \
	{ .id = PC_OPT_SERVE, .long_name = "serve", .value = "ADDR:PORT", \
	  .help = "serve the metrics at http://ADDR:PORT/metrics from a child process " \
	  "with no privileges (user nobody, no capabilities); a loopback ADDR unless " \
	  "--serve-any is given" }, \
	CP_OPTION_FLAG(PC_OPT_SERVE_ANY, "serve-any", \
	  "let --serve listen on an address other hosts can reach"), \
	{ .id = PC_OPT_SERVE_USER, .long_name = "serve-user", .value = "USER", \
	  .help = "the user the --serve child runs as (default: nobody; never root)" }
/* clang-format on */

struct profile_command {
	struct cp_profile_options opts;
	const char *pid;	/* attach -p PID */
	const char *output;	/* -o run.json */
	const char *html;	/* --html report.html */
	const char *folded;	/* --folded stacks.folded */
	const char *speedscope; /* --speedscope stacks.speedscope.json */
	const char *pprof;	/* --pprof profile.pb.gz */
	unsigned pprof_keep;	/* --pprof-keep K */
	int pprof_keep_given;
	const char *metrics_file; /* --metrics-file clockprof.prom */
	size_t metrics_sites;	  /* --metrics-sites N */
	int metrics_sites_given;
	const char *serve; /* --serve ADDR:PORT, as given */
	struct cp_serve_address serve_addr;
	int serve_any;			 /* --serve-any */
	const char *serve_user;		 /* --serve-user; NULL: nobody */
	struct cp_metrics_sink metrics;	 /* set up by execute */
	int live;			 /* the live line is shown */
	const char *interval_output;	 /* --interval-output; "-" with --interval */
	struct interval_sink *intervals; /* --interval's lines, set by execute */
	int quiet;
	int reuse_given;	   /* --reuse-gap or --reuse-share */
	int no_inherit;		   /* run --no-inherit */
	int tree;		   /* attach --tree */
	const char *cgroup;	   /* attach --cgroup PATH */
	int color;		   /* the summary's colour: 1 or 0 */
	int rest;		   /* argv index of the first operand left */
	int interrupted;	   /* set by execute: a signal ended the window */
	int command_status;	   /* set by execute: cp_profile_command_status() */
	enum cp_mechanism counted; /* set by execute: what counted the run */
	char command_how[64];	   /* "exit code 3", "killed by SIGSEGV", or "" */
	/* Set by execute: what the clock window saw (run.json's
	 * request.count and clock_reads.total); requests only when a
	 * boundary was given (has_boundary). */
	int has_boundary;
	unsigned long long requests, reads;
};

/* The window's options alone, {0}-ended: the table of a command that
 * passes them on to each run it starts (ab). */
extern const struct cp_option profile_window_options[];

/* Parses argv (argv[0] is the subcommand) by spec; argv[pc->rest]
 * onwards is left to the caller. Returns -1 after --help or --version
 * (printed), an exit code > 0 after an error (printed), or 0. */
int profile_command_parse(struct profile_command *pc, const struct cp_command_spec *spec, int argc,
			  char **argv);
/* on_interval (profile.h) for a profile_command as callback_arg: the
 * --interval line and the metrics file get each interval's counts. */
void profile_command_interval(const struct cp_profile *p, void *arg);

/* Profiles, prints the summary and writes the files; returns the exit
 * code: clockprof's own failure, else the launched command's failure
 * (command_status), else 0. The run file is written either way. */
int profile_command_execute(struct profile_command *pc);

#endif
