/* cli_options.c - see cli_options.h. The parser is getopt_long, fed with
 * the long and short option lists built from the table; help is laid out
 * from the same table. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "suggest.h"

#define HELP_WIDTH 79
#define HELP_COLUMN 26 /* where an option's help starts */

/* An option table: each option's fields on the rows they were written
 * in (clang-format would give every field a line of its own). */
/* clang-format off */
const struct cp_option cp_common_options[] = {
	{ .id = CP_OPT_QUIET, .short_name = 'q', .long_name = "quiet",
	  .help = "print nothing but errors (no summary, table or progress)" },
	{ .id = CP_OPT_VERBOSE, .short_name = 'v', .long_name = "verbose",
	  .help = "say more on stderr: libbpf's messages when probing, the files "
		  "compare and report read" },
	{ .id = CP_OPT_COLOR, .long_name = "color", .value = "WHEN",
	  .help = "colour terminal output: auto (default: on a TTY, unless NO_COLOR is "
	  "set), always or never",
	  .complete = CP_COMPLETE_WORDS, .words = "auto always never" },
	{ .id = CP_OPT_COLOR, .long_name = "colour", .value = "WHEN",
	  .help = "",
	  .complete = CP_COMPLETE_WORDS, .words = "auto always never", .hidden = 1 },
	{ .id = CP_OPT_HELP, .short_name = 'h', .long_name = "help",
	  .help = "show this help and exit" },
	{ .id = CP_OPT_VERSION, .long_name = "version",
	  .help = "show the version and exit" },
	{ 0 },
};
/* clang-format on */

static void add_options(struct cp_cli *cli, const struct cp_option *o, size_t *nl, size_t *ns)
{
	for (; o->long_name && *nl < 2 * CP_CLI_MAX_OPTIONS && *ns + 3 < sizeof(cli->shortopts);
	     o++) {
		cli->longopts[(*nl)++] = (struct option){ o->long_name,
							  !o->value   ? no_argument :
							  o->optional ? optional_argument :
									required_argument,
							  NULL, o->id };
		if (o->short_name) {
			cli->shortopts[(*ns)++] = o->short_name;
			if (o->value)
				cli->shortopts[(*ns)++] = ':';
		}
	}
}

void cp_cli_init(struct cp_cli *cli, const struct cp_command_spec *spec, int argc, char **argv)
{
	size_t nl = 0, ns = 0;

	memset(cli, 0, sizeof(*cli));
	cli->spec = spec;
	cli->argc = argc;
	cli->argv = argv;
	cli->color = -1;
	if (spec->order == CP_ORDER_STOP)
		cli->shortopts[ns++] = '+';
	else if (spec->order == CP_ORDER_IN_ORDER)
		cli->shortopts[ns++] = '-';
	cli->shortopts[ns++] = ':'; /* a missing value is told apart */
	add_options(cli, spec->options, &nl, &ns);
	add_options(cli, cp_common_options, &nl, &ns);
	optind = 0; /* 0: getopt starts afresh (it keeps state) */
	opterr = 0;
}

const struct cp_option *cp_cli_find(const struct cp_command_spec *spec, int id)
{
	for (const struct cp_option *o = spec->options; o->long_name; o++)
		if (o->id == id)
			return o;
	for (const struct cp_option *o = cp_common_options; o->long_name; o++)
		if (o->id == id)
			return o;
	return NULL;
}

void cp_cli_option_name(const struct cp_option *o, char *buf, size_t size)
{
	if (o->short_name)
		snprintf(buf, size, "-%c/--%s", o->short_name, o->long_name);
	else
		snprintf(buf, size, "--%s", o->long_name);
}

/* "; did you mean --duration?" for an unknown long option ("--duraton",
 * "--duraton=5"), from the names the command takes; "" when none is close. */
static void suggest_long(const struct cp_command_spec *spec, const char *arg, char *hint,
			 size_t size)
{
	const struct cp_option *lists[2] = { spec->options, cp_common_options };
	char wanted[64];
	struct cp_suggest s;

	snprintf(wanted, sizeof(wanted), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	cp_suggest_init(&s, wanted);
	for (int l = 0; l < 2; l++)
		for (const struct cp_option *o = lists[l]; o->long_name; o++)
			if (!o->hidden)
				cp_suggest_add(&s, o->long_name);
	cp_suggest_format_prefixed(&s, "--", hint, size);
}

static int bad_option(struct cp_cli *cli, int c, struct cp_error *err)
{
	const struct cp_option *o = optopt ? cp_cli_find(cli->spec, optopt) : NULL;
	const char *arg = optind > 0 && optind <= cli->argc ? cli->argv[optind - 1] : "?";
	char name[80], hint[200] = "";

	if (o) {
		cp_cli_option_name(o, name, sizeof(name));
		if (c == ':')
			return cp_fail(err, CP_EXIT_USAGE,
				       "option %s needs a value (%s); see 'clockprof %s --help'",
				       name, o->value, cli->spec->name);
		return cp_fail(err, CP_EXIT_USAGE,
			       "option %s takes no value; see 'clockprof %s --help'", name,
			       cli->spec->name);
	}
	if (optopt)
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "%.70s", arg);
	if (!optopt && !strncmp(arg, "--", 2))
		suggest_long(cli->spec, arg, hint, sizeof(hint));
	if (hint[0])
		return cp_fail(err, CP_EXIT_USAGE,
			       "unknown option '%s'%s (see 'clockprof %s --help')", name, hint,
			       cli->spec->name);
	return cp_fail(err, CP_EXIT_USAGE, "unknown option '%s'; see 'clockprof %s --help'", name,
		       cli->spec->name);
}

/* A value option given twice that is not .repeatable: refused, not the
 * last one silently kept (`-o a.json ... -o b.json` wrote only b). */
static int repeated(struct cp_cli *cli, int id, struct cp_error *err)
{
	const struct cp_option *o = cp_cli_find(cli->spec, id);
	char name[80];

	if (!o || !o->value || o->repeatable)
		return 0;
	for (int i = 0; i < cli->nseen; i++) {
		if (cli->seen[i] != id)
			continue;
		cp_cli_option_name(o, name, sizeof(name));
		return cp_fail(err, CP_EXIT_USAGE,
			       "option %s given twice; give it once (see 'clockprof %s --help')",
			       name, cli->spec->name);
	}
	if (cli->nseen < CP_CLI_MAX_OPTIONS)
		cli->seen[cli->nseen++] = id;
	return 0;
}

int cp_cli_next(struct cp_cli *cli, struct cp_error *err)
{
	for (;;) {
		int c = cli->ended ? -1 :
				     getopt_long(cli->argc, cli->argv, cli->shortopts,
						 cli->longopts, NULL);

		cli->value = optarg;
		if (c >= 0 && c != ':' && c != '?' && repeated(cli, c, err))
			return CP_OPT_ERROR;
		switch (c) {
		case -1:
			/* In order, what follows "--" is operands too, not dropped. */
			cli->ended = 1;
			if (cli->spec->order == CP_ORDER_IN_ORDER && optind < cli->argc) {
				cli->value = cli->argv[optind++];
				return CP_OPT_OPERAND;
			}
			return CP_OPT_END;
		case ':':
		case '?': bad_option(cli, c, err); return CP_OPT_ERROR;
		case CP_OPT_QUIET: cli->quiet = 1; break;
		case CP_OPT_VERBOSE: cli->verbose++; break;
		case CP_OPT_COLOR:
			cli->color = !strcmp(optarg, "always") ? 1 :
				     !strcmp(optarg, "never")  ? 0 :
								 -1;
			if (strcmp(optarg, "auto") && cli->color < 0) {
				cp_fail(err, CP_EXIT_USAGE,
					"--color must be auto, always or never, not '%.60s'",
					optarg);
				return CP_OPT_ERROR;
			}
			break;
		default: return c;
		}
	}
}

int cp_cli_rest(const struct cp_cli *cli)
{
	(void)cli;
	return optind;
}

int cp_color_wanted(const char *mode, int fd)
{
	const char *no_color = getenv("NO_COLOR");

	if (!mode || !strcmp(mode, "auto"))
		return isatty(fd) && !(no_color && *no_color);
	if (!strcmp(mode, "always"))
		return 1;
	if (!strcmp(mode, "never"))
		return 0;
	return -1;
}

int cp_cli_color(const struct cp_cli *cli, int fd)
{
	if (cli->color >= 0)
		return cli->color;
	return cp_color_wanted("auto", fd);
}

void cp_cli_paragraphs(const char *text,
		       void (*fn)(const char *p, size_t len, int literal, void *arg), void *arg)
{
	if (!text)
		return;
	while (*text) {
		const char *end = strstr(text, "\n\n");
		size_t len = end ? (size_t)(end - text) : strlen(text);

		fn(text, len, !strncmp(text, "  ", 2), arg);
		text += len;
		while (*text == '\n')
			text++;
	}
}

/* Prints len bytes of words, filling lines up to HELP_WIDTH; col is where
 * the cursor stands, indent where continuation lines start. */
static void wrap(FILE *out, const char *s, size_t len, int col, int indent)
{
	const char *end = s + len;

	while (s < end) {
		size_t w;

		while (s < end && (*s == ' ' || *s == '\n'))
			s++;
		for (w = 0; s + w < end && s[w] != ' ' && s[w] != '\n'; w++)
			;
		if (!w)
			break;
		if (col > indent && col + 1 + (int)w > HELP_WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(s, 1, w, out);
		col += (int)w;
		s += w;
	}
	fputc('\n', out);
}

void cp_cli_wrap(FILE *out, const char *text)
{
	wrap(out, text, strlen(text), 0, 0);
}

static void help_paragraph(const char *p, size_t len, int literal, void *arg)
{
	FILE *out = arg;

	fputc('\n', out);
	if (literal)
		fprintf(out, "%.*s\n", (int)len, p);
	else
		wrap(out, p, len, 0, 0);
}

static void help_options(FILE *out, const char *title, const struct cp_option *o)
{
	fprintf(out, "\n%s:\n", title);
	for (; o->long_name; o++) {
		const char *eq = o->value ? (o->id == CP_OPT_COLOR ? "=" :
					     o->optional	   ? "[=" :
								     " ") :
					    "";
		char label[80];
		int n;

		if (o->hidden)
			continue;
		if (o->short_name)
			n = snprintf(label, sizeof(label), "  -%c, --%s%s%s", o->short_name,
				     o->long_name, eq, o->value ? o->value : "");
		else
			n = snprintf(label, sizeof(label), "      --%s%s%s%s", o->long_name, eq,
				     o->value ? o->value : "", o->optional ? "]" : "");
		fputs(label, out);
		if (n + 2 > HELP_COLUMN)
			fprintf(out, "\n%*s", HELP_COLUMN, "");
		else
			fprintf(out, "%*s", HELP_COLUMN - n, "");
		wrap(out, o->help, strlen(o->help), HELP_COLUMN, HELP_COLUMN);
	}
}

void cp_cli_help(FILE *out, const struct cp_command_spec *spec)
{
	for (int i = 0; i < 3 && spec->synopsis[i]; i++)
		fprintf(out, "%s clockprof %s %s\n", i ? "      " : "usage:", spec->name,
			spec->synopsis[i]);
	fputc('\n', out);
	wrap(out, spec->summary, strlen(spec->summary), 0, 0);
	cp_cli_paragraphs(spec->description, help_paragraph, out);
	help_options(out, "Options", spec->options);
	help_options(out, "Common options", cp_common_options);
	cp_cli_paragraphs(spec->notes, help_paragraph, out);
	if (spec->exit_codes) {
		fputc('\n', out);
		wrap(out, spec->exit_codes, strlen(spec->exit_codes), 0, 0);
	}
}
