/* test_cli_options.c - lib/util/cli_options, cli_man, cli_completion: the option
 * table drives the parser (orders, values, errors, common options) and the
 * help, man page and completion made from it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_completion.h"
#include "cli_man.h"
#include "cli_options.h"
#include "unit.h"

enum { OPT_LONG_ONLY = CP_OPT_FIRST_LONG };

/* An option table: each option's fields on the rows they were written
 * in (clang-format would give every field a line of its own). */
/* clang-format off */
static const struct cp_option test_options[] = {
	{ .id = 'd', .short_name = 'd', .long_name = "duration", .value = "TIME",
	  .help = "window length, a help text long enough to need wrapping onto a "
		  "second line and maybe a third one when the column is narrow" },
	CP_OPTION_FLAG(OPT_LONG_ONLY, "flag", "a flag"),
	CP_OPTION_OUTPUT("output"),
	{ .id = 'p', .short_name = 'p', .long_name = "probe", .value = "SYM",
	  .help = "a probe; repeatable", .repeatable = 1 },
	{ .id = 'r', .short_name = 'r', .long_name = "request", .value = "SPEC",
	  .help = "a boundary", .complete = CP_COMPLETE_REQUEST },
	{ 0 },
};
/* clang-format on */

static struct cp_command_spec spec = {
	.name = "demo",
	.synopsis = { "[OPTIONS] ARG", "--flag ARG..." },
	.summary = "a test command",
	.description =
		"First paragraph.\n\n  demo -d 1 x\n\n.Second starts with a dot \\ and a backslash.",
	.options = test_options,
	.order = CP_ORDER_PERMUTE,
};

/* Parses argv (NULL-ended) and returns the ids seen, as a string. */
static void parse(char **argv, char *ids, size_t n, struct cp_cli *cli, struct cp_error *err)
{
	int argc = 0, id;
	size_t k = 0;

	while (argv[argc])
		argc++;
	cp_cli_init(cli, &spec, argc, argv);
	while ((id = cp_cli_next(cli, err)) != CP_OPT_END && k + 1 < n) {
		ids[k++] = id == OPT_LONG_ONLY	? 'F' :
			   id == CP_OPT_ERROR	? '!' :
			   id == CP_OPT_OPERAND ? '1' :
						  (char)id;
		if (id == CP_OPT_ERROR)
			break;
	}
	ids[k] = '\0';
}

TEST(cli_permutes_and_takes_common_options)
{
	char *argv[] = { "demo", "x", "-d", "1", "--flag", "-q", "-v", "--color=always", NULL };
	struct cp_error err = { 0 };
	struct cp_cli cli;
	char ids[16];

	parse(argv, ids, sizeof(ids), &cli, &err);
	CHECK_STR(ids, "dF");
	CHECK(cli.quiet && cli.verbose == 1 && cli.color == 1);
	CHECK_STR(argv[cp_cli_rest(&cli)], "x"); /* permuted to the end */
}

TEST(cli_errors_are_worded_alike)
{
	char *missing[] = { "demo", "-d", NULL };
	char *unknown[] = { "demo", "--frobnicate", NULL };
	char *novalue[] = { "demo", "--flag=1", NULL };
	char *color[] = { "demo", "--color=pink", NULL };
	struct cp_error err = { 0 };
	struct cp_cli cli;
	char ids[16];

	parse(missing, ids, sizeof(ids), &cli, &err);
	CHECK_STR(ids, "!");
	CHECK_STR(err.msg,
		  "option -d/--duration needs a value (TIME); see 'clockprof demo --help'");
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	parse(unknown, ids, sizeof(ids), &cli, &err);
	CHECK_STR(err.msg, "unknown option '--frobnicate'; see 'clockprof demo --help'");
	parse(novalue, ids, sizeof(ids), &cli, &err);
	CHECK_STR(err.msg, "option --flag takes no value; see 'clockprof demo --help'");
	parse(color, ids, sizeof(ids), &cli, &err);
	CHECK_STR(err.msg, "--color must be auto, always or never, not 'pink'");
}

TEST(cli_refuses_a_value_option_given_twice)
{
	char *twice[] = { "demo", "-o", "a.json", "-d", "1", "--output=b.json", NULL };
	char *probes[] = { "demo", "-p", "a", "--probe", "b", "-p", "c", NULL };
	char *color[] = { "demo", "--color=never", "--color=always", NULL };
	struct cp_error err = { 0 };
	struct cp_cli cli;
	char ids[16];

	parse(twice, ids, sizeof(ids), &cli, &err);
	CHECK_STR(ids, "od!");
	CHECK_STR(err.msg,
		  "option -o/--output given twice; give it once (see 'clockprof demo --help')");
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	parse(probes, ids, sizeof(ids), &cli, &err);
	CHECK_STR(ids, "ppp"); /* .repeatable */
	parse(color, ids, sizeof(ids), &cli, &err);
	CHECK_STR(ids, "!");
	CHECK_STR(err.msg,
		  "option --color given twice; give it once (see 'clockprof demo --help')");
}

TEST(cli_suggests_the_closest_long_options)
{
	char *typo[] = { "demo", "--duraton", "3", NULL };
	char *valued[] = { "demo", "--outptu=x", NULL };
	struct cp_error err = { 0 };
	struct cp_cli cli;
	char ids[16];

	parse(typo, ids, sizeof(ids), &cli, &err);
	CHECK_STR(err.msg, "unknown option '--duraton'; did you mean --duration? "
			   "(see 'clockprof demo --help')");
	parse(valued, ids, sizeof(ids), &cli, &err);
	CHECK(strstr(err.msg, "did you mean --output?"));
}

TEST(cli_in_order_returns_operands_in_turn)
{
	char *argv[] = { "demo", "a", "--flag", "b", "--", "-c", NULL };
	struct cp_error err = { 0 };
	struct cp_cli cli;
	char ids[16];

	spec.order = CP_ORDER_IN_ORDER;
	parse(argv, ids, sizeof(ids), &cli, &err);
	spec.order = CP_ORDER_PERMUTE;
	CHECK_STR(ids, "1F11"); /* "-c" after "--" is an operand */
	CHECK_INT(cp_cli_rest(&cli), 6);
}

static char *render(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, arg);
	fclose(f);
	return buf;
}

static void help_fn(FILE *f, const void *arg)
{
	cp_cli_help(f, arg);
}
static void man_fn(FILE *f, const void *arg)
{
	cp_cli_man(f, arg);
}
static void bash_fn(FILE *f, const void *arg)
{
	cp_cli_bash_completion(f, arg);
}

TEST(cli_help_wraps_within_79_columns)
{
	char *text = render(help_fn, &spec), *line, *save = NULL;

	/* Each synopsis a line, the later ones under the first. */
	CHECK(strstr(text, "usage: clockprof demo [OPTIONS] ARG\n"
			   "       clockprof demo --flag ARG...\n"));
	CHECK(strstr(text, "\n  -d, --duration TIME     window length,"));
	CHECK(strstr(text, "\n      --flag              a flag\n"));
	CHECK(strstr(text, "\n  demo -d 1 x\n")); /* an example stays as it is */
	CHECK(strstr(text, "Common options:\n  -q, --quiet"));
	CHECK(!strstr(text, "--colour")); /* a hidden alias */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		CHECK(strlen(line) <= 79);
	free(text);
}

static const struct cp_command_spec *const specs[] = { &spec };
static const struct cp_program_spec program = {
	.name = "clockprof",
	.version = "0",
	.summary = "s",
	.description = "d",
	.commands = specs,
	.ncommands = 1,
	.exit_status = "e",
	.environment = "v",
	.see_also = "x(1)",
};

TEST(cli_man_escapes_roff)
{
	char *text = render(man_fn, &program);

	CHECK(strstr(text, ".TH CLOCKPROF 1 "));
	CHECK(strstr(text, "\\fBclockprof demo\\fR [OPTIONS] ARG\n"
			   "\\fBclockprof demo\\fR \\-\\-flag ARG...\n"));
	CHECK(strstr(text, "\\fB\\-d\\fR, \\fB\\-\\-duration\\fR \\fITIME\\fR\n"));
	/* A line of text never starts a request; a backslash is printed. */
	CHECK(strstr(text, "\n\\&.Second starts with a dot \\e and a backslash."));
	CHECK(strstr(text, ".nf\ndemo \\-d 1 x\n.fi\n"));
	free(text);
}

TEST(cli_completion_lists_options_and_values)
{
	char *text = render(bash_fn, &program);

	CHECK(strstr(text, "complete -F _clockprof clockprof"));
	CHECK(strstr(
		text,
		"opts=\"-d --duration --flag -o --output -p --probe -r --request -q --quiet -v --verbose --color= -h --help --version\""));
	CHECK(strstr(text, "-o|--output) _clockprof_files"));
	CHECK(strstr(text, "--color) COMPREPLY=($(compgen -W \"auto always never\""));
	CHECK(strstr(text, "-d|--duration|-p|--probe) COMPREPLY=()"));
	/* -r's value, split by bash at ':' or not, before `case $prev`. */
	CHECK(strstr(text,
		     "\t_clockprof_request_at -r --request && { _clockprof_request; return; }\n"
		     "\t\tcase $prev in"));
	free(text);
}
