/* cli_options.h - one option table per subcommand, from which the parser
 * (getopt_long underneath), `--help`, the man page (cli_man.h) and bash
 * completion (cli_completion.h) are all made, so that none of them can
 * drift from what the parser accepts (as argp or git's parse-options do).
 *
 * A subcommand describes itself once in a struct cp_command_spec; the
 * options every subcommand shares (--help, --version, -q, -v, --color) are
 * added by the parser and mean the same everywhere. */
#ifndef CP_CLI_OPTIONS_H
#define CP_CLI_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#include "error.h"

/* What the value of an option, or an operand, names: completion offers
 * these (a word list comes from cp_option.words). */
enum cp_complete {
	CP_COMPLETE_NONE, /* a free value: nothing to offer */
	CP_COMPLETE_FILE,
	CP_COMPLETE_DIR,
	CP_COMPLETE_PID,
	CP_COMPLETE_COMMAND, /* a program, then its arguments */
	CP_COMPLETE_WORDS,   /* one of cp_option.words */
	CP_COMPLETE_REQUEST, /* func: or syscall:, then a name of the target
				 * (the PID's or COMMAND's executable) or a
				 * syscall, which the binary lists */
};

/* How operands (non-options) mix with options, as getopt_long orders them. */
enum cp_arg_order {
	CP_ORDER_PERMUTE,  /* options anywhere: `attach 1234 -d 1` */
	CP_ORDER_STOP,	   /* options end at the first operand: `run CMD -x` */
	CP_ORDER_IN_ORDER, /* operands returned in turn: `--base A B --head C` */
};

/* Ids of the shared options; a subcommand's own ids are its short letter
 * or a value from CP_OPT_FIRST_LONG on. */
enum {
	CP_OPT_END = -1,    /* no more options */
	CP_OPT_ERROR = -2,  /* bad option: message in the cp_error */
	CP_OPT_OPERAND = 1, /* CP_ORDER_IN_ORDER: an operand, in cli->value */
	CP_OPT_HELP = 'h',
	CP_OPT_QUIET = 'q',
	CP_OPT_VERBOSE = 'v',
	CP_OPT_VERSION = 0x1000,
	CP_OPT_COLOR,
	CP_OPT_FIRST_LONG = 0x1100,
};

#define CP_CLI_MAX_OPTIONS 40

struct cp_option {
	int id;		 /* returned by cp_cli_next */
	char short_name; /* 0: long form only */
	const char *long_name;
	const char *value;	   /* metavariable ("FILE"); NULL: takes no value */
	const char *help;	   /* one paragraph, wrapped when printed */
	enum cp_complete complete; /* what the value names */
	const char *words;	   /* CP_COMPLETE_WORDS: space-separated */
	int hidden;		   /* accepted, not shown (aliases such as --colour) */
	int optional;		   /* its value may be left out: --NAME or --NAME=VALUE
				 * only (shown "--NAME[=VALUE]"; never a short form) */
	int repeatable;		   /* a value option that may be given again (--probe,
				 * --base): any other is refused the second time,
				 * rather than the last one silently winning */
};

/* Rows that recur in the option tables: -o FILE, what it writes said by
 * HELP; of the long form only, a flag (no value) and an option whose
 * value is a file (completed as one). */
#define CP_OPTION_OUTPUT(HELP) \
	{ \
		.id = 'o', .short_name = 'o', .long_name = "output", .value = "FILE", \
		.help = HELP, .complete = CP_COMPLETE_FILE \
	}
#define CP_OPTION_FILE(ID, NAME, VALUE, HELP) \
	{ \
		.id = ID, .long_name = NAME, .value = VALUE, .help = HELP, \
		.complete = CP_COMPLETE_FILE \
	}
#define CP_OPTION_FLAG(ID, NAME, HELP) \
	{ \
		.id = ID, .long_name = NAME, .help = HELP \
	}

struct cp_command_spec {
	const char *name;		 /* "attach" */
	const char *synopsis[3];	 /* after "clockprof NAME ", NULL-ended */
	const char *summary;		 /* one line, for `clockprof --help` and the man page */
	const char *description;	 /* paragraphs split by a blank line; a
					 * paragraph whose lines start with two
					 * spaces is shown as it is (examples) */
	const struct cp_option *options; /* ends with { 0 } */
	const char *notes;		 /* after the options, same form as description */
	const char *exit_codes;		 /* one line */
	enum cp_arg_order order;
	enum cp_complete operands; /* what the operands name */
};

/* The whole program: what the man page and completion are made from. */
struct cp_program_spec {
	const char *name; /* "clockprof" */
	const char *version;
	const char *summary;	 /* one line */
	const char *description; /* paragraphs, as in cp_command_spec */
	const struct cp_command_spec *const *commands;
	size_t ncommands;
	const char *exit_status; /* paragraphs */
	const char *environment; /* paragraphs */
	const char *see_also;	 /* one line */
};

/* The options every subcommand takes, ending with { 0 }. */
extern const struct cp_option cp_common_options[];

struct cp_cli {
	const struct cp_command_spec *spec;
	int argc;
	char **argv;
	const char *value;	      /* the last option's value, or the operand */
	int quiet, verbose;	      /* -q, -v (counted) */
	int color;		      /* --color: 1 always, 0 never, -1 auto (default) */
	int ended;		      /* getopt_long has returned -1 */
	int seen[CP_CLI_MAX_OPTIONS]; /* ids of the value options given */
	int nseen;
	struct option longopts[2 * CP_CLI_MAX_OPTIONS + 1];
	char shortopts[3 * CP_CLI_MAX_OPTIONS + 4];
};

/* Prepares to parse argv[1..argc) (argv[0] is the subcommand's name). */
void cp_cli_init(struct cp_cli *cli, const struct cp_command_spec *spec, int argc, char **argv);
/* The next option's id (its value in cli->value), CP_OPT_OPERAND,
 * CP_OPT_END (then cp_cli_rest() is the first operand left), or
 * CP_OPT_ERROR with one wording for every subcommand in err (an unknown
 * long option with the closest names; a value option given twice that is
 * not .repeatable). -q, -v and --color are taken here (into cli) and not
 * returned. */
int cp_cli_next(struct cp_cli *cli, struct cp_error *err);
/* Index in argv of the first argument the parser did not take. */
int cp_cli_rest(const struct cp_cli *cli);

/* The table entry of id in spec or the common options (NULL if none). */
const struct cp_option *cp_cli_find(const struct cp_command_spec *spec, int id);
/* "-d/--duration" or "--html" for messages. */
void cp_cli_option_name(const struct cp_option *o, char *buf, size_t size);
/* Colour decision for --color=MODE ("auto", "always", "never"; NULL means
 * auto): auto is colour only when fd is a TTY and NO_COLOR is unset or
 * empty. Returns 1 or 0, or -1 for an unknown mode. */
int cp_color_wanted(const char *mode, int fd);

/* Colour decision: cli->color, or for auto a TTY on fd without NO_COLOR. */
int cp_cli_color(const struct cp_cli *cli, int fd);

/* `clockprof NAME --help`: usage, description, options, notes, exit codes. */
void cp_cli_help(FILE *out, const struct cp_command_spec *spec);

/* Prints text filled to 79 columns, then a newline. */
void cp_cli_wrap(FILE *out, const char *text);

/* Calls fn for each paragraph of text (split at blank lines), telling
 * whether it is shown as it is (its lines start with two spaces). */
void cp_cli_paragraphs(const char *text,
		       void (*fn)(const char *p, size_t len, int literal, void *arg), void *arg);

#endif
