/* cli_completion.c - see cli_completion.h. The script needs bash only (not
 * the bash-completion package); names come from our own tables, so they
 * need no quoting beyond what the tables hold (letters, digits, '-'). */
#include <string.h>

#include "cli_completion.h"

/* -r SPEC: "func:" or "syscall:", then the names the binary lists
 * (`clockprof --complete-functions EXE PREFIX`, `--complete-syscalls
 * PREFIX`), read line by line: never through compgen -W, which would
 * expand a "$(...)" in a hostile executable's symbol names. bash splits
 * "func:name" at ':' (COMP_WORDBREAKS), so the word may come as "func" ":"
 * "name": _clockprof_request_at finds the option either way, leaving the
 * kind in rkind when bash split it off, and the part to complete in rcur.
 * The executable is the command after "--" (run, ab) or attach's PID. */
#define REQUEST_HELPERS \
	"_clockprof_request_at() {\n" \
	"\tlocal n=$COMP_CWORD o\n" \
	"\trkind= rcur=${COMP_WORDS[n]}\n" \
	"\tif [[ $rcur == : ]]; then rkind=${COMP_WORDS[n-1]} rcur= n=$((n-2))\n" \
	"\telif ((n > 1)) && [[ ${COMP_WORDS[n-1]} == : ]]; then rkind=${COMP_WORDS[n-2]} n=$((n-3))\n" \
	"\telse n=$((n-1)); fi\n" \
	"\t((n > 1)) || return 1\n" \
	"\tfor o; do [[ ${COMP_WORDS[n]} == \"$o\" ]] && return 0; done\n" \
	"\treturn 1\n" \
	"}\n" \
	"_clockprof_target() {\n" \
	"\tlocal i w p\n" \
	"\tfor ((i = 2; i < ${#COMP_WORDS[@]}; i++)); do\n" \
	"\t\tw=${COMP_WORDS[i]} p=${COMP_WORDS[i-1]}\n" \
	"\t\tif [[ $w == -- ]]; then\n" \
	"\t\t\t((i + 1 != COMP_CWORD)) || return 1\n" \
	"\t\t\tw=${COMP_WORDS[i+1]}\n" \
	"\t\t\tif [[ $w == */* ]]; then printf '%s\\n' \"$w\"; elif [[ -n $w ]]; then type -P -- \"$w\"; fi\n" \
	"\t\t\treturn\n" \
	"\t\tfi\n" \
	"\t\tif [[ $sub == attach && $w =~ ^[0-9]+$ && $p != -d && $p != --duration && $p != --ops && -e /proc/$w/exe ]]; then\n" \
	"\t\t\tprintf '%s\\n' \"/proc/$w/exe\"; return\n" \
	"\t\tfi\n" \
	"\tdone\n" \
	"\treturn 1\n" \
	"}\n" \
	"_clockprof_request() {\n" \
	"\tlocal prefix= exe\n" \
	"\tif [[ -z $rkind ]]; then\n" \
	"\t\tcase $rcur in\n" \
	"\t\tfunc:*|syscall:*) rkind=${rcur%%:*} prefix=${rcur%%:*}: rcur=${rcur#*:};;\n" \
	"\t\t*) COMPREPLY=($(compgen -W \"func: syscall:\" -- \"$rcur\")); compopt -o nospace 2>/dev/null; return;;\n" \
	"\t\tesac\n" \
	"\tfi\n" \
	"\tCOMPREPLY=()\n" \
	"\tcase $rkind in\n" \
	"\tsyscall) mapfile -t COMPREPLY < <(\"${COMP_WORDS[0]}\" --complete-syscalls \"$rcur\" 2>/dev/null);;\n" \
	"\tfunc) exe=$(_clockprof_target) && [[ -n $exe ]] &&\n" \
	"\t\tmapfile -t COMPREPLY < <(\"${COMP_WORDS[0]}\" --complete-functions \"$exe\" \"$rcur\" 2>/dev/null);;\n" \
	"\tesac\n" \
	"\t[[ -n $prefix ]] && COMPREPLY=(\"${COMPREPLY[@]/#/$prefix}\")\n" \
	"}\n"

static const char helpers[] =
	"_clockprof_pids() { COMPREPLY=($(compgen -W \"$(cd /proc 2>/dev/null && echo [0-9]*)\" -- \"$1\")); }\n"
	"_clockprof_files() { compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$1\")); }\n"
	"_clockprof_dirs() { compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$1\")); }\n"
	"_clockprof_commands() { compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -c -- \"$1\")); }\n" REQUEST_HELPERS;

/* The start of _clockprof: cur and prev with "--color=WHEN" split by bash
 * at '=', the first word, and the position of a '--' (a command follows). */
static const char prologue[] =
	"_clockprof() {\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= sub=${COMP_WORDS[1]} dashdash=0 i opts operands rkind rcur\n"
	"\t((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	"\tif [[ $cur == = ]]; then cur=; elif [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
	"\tfor ((i = 2; i < COMP_CWORD; i++)); do [[ ${COMP_WORDS[i]} == -- ]] && { dashdash=$i; break; }; done\n";

static const char *operand_kind(enum cp_complete c)
{
	switch (c) {
	case CP_COMPLETE_FILE: return "file";
	case CP_COMPLETE_DIR: return "dir";
	case CP_COMPLETE_PID: return "pid";
	case CP_COMPLETE_COMMAND: return "command";
	default: return "none";
	}
}

/* One `case $prev in` arm per kind of value, listing the options that
 * take it. */
static void value_arm(FILE *out, const struct cp_option *lists[2], enum cp_complete kind,
		      const char *action)
{
	int any = 0;

	for (int l = 0; l < 2; l++)
		for (const struct cp_option *o = lists[l]; o->long_name; o++) {
			if (!o->value || o->optional || o->complete != kind ||
			    kind == CP_COMPLETE_WORDS)
				continue;
			if (o->short_name)
				fprintf(out, "%s-%c", any++ ? "|" : "\t\t", o->short_name);
			fprintf(out, "%s--%s", any++ ? "|" : "\t\t", o->long_name);
		}
	if (any)
		fprintf(out, ") %s; return;;\n", action);
}

static void words_arms(FILE *out, const struct cp_option *lists[2])
{
	for (int l = 0; l < 2; l++)
		for (const struct cp_option *o = lists[l]; o->long_name; o++)
			if (o->value && o->complete == CP_COMPLETE_WORDS)
				fprintf(out,
					"\t\t--%s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return;;\n",
					o->long_name, o->words);
}

/* Before `case $prev`: the value of -r may have been split at ':'. */
static void request_arm(FILE *out, const struct cp_option *o)
{
	int any = 0;

	for (; o->long_name; o++) {
		if (o->complete != CP_COMPLETE_REQUEST)
			continue;
		fprintf(out, "%s", any++ ? " " : "\t\t_clockprof_request_at");
		if (o->short_name)
			fprintf(out, " -%c", o->short_name);
		fprintf(out, " --%s", o->long_name);
	}
	if (any)
		fputs(" && { _clockprof_request; return; }\n", out);
}

static void command_case(FILE *out, const struct cp_command_spec *c)
{
	const struct cp_option *lists[2] = { c->options, cp_common_options };

	fprintf(out, "\t%s)\n", c->name);
	request_arm(out, c->options);
	fputs("\t\tcase $prev in\n", out);
	value_arm(out, lists, CP_COMPLETE_FILE, "_clockprof_files \"$cur\"");
	value_arm(out, lists, CP_COMPLETE_DIR, "_clockprof_dirs \"$cur\"");
	value_arm(out, lists, CP_COMPLETE_PID, "_clockprof_pids \"$cur\"");
	words_arms(out, lists);
	value_arm(out, lists, CP_COMPLETE_NONE, "COMPREPLY=()");
	fputs("\t\tesac\n\t\topts=\"", out);
	for (int l = 0, n = 0; l < 2; l++)
		for (const struct cp_option *o = lists[l]; o->long_name; o++) {
			if (o->hidden)
				continue;
			if (o->short_name)
				fprintf(out, "%s-%c", n++ ? " " : "", o->short_name);
			fprintf(out, "%s--%s%s", n++ ? " " : "", o->long_name,
				o->id == CP_OPT_COLOR ? "=" : "");
		}
	fprintf(out, "\"\n\t\toperands=%s;;\n", operand_kind(c->operands));
}

/* After the options: a command after '--', an option name, or an operand. */
static const char epilogue[] =
	"\t*) return;;\n"
	"\tesac\n"
	"\tif ((dashdash > 0)) && [[ $operands == command ]]; then\n"
	"\t\tif ((COMP_CWORD == dashdash + 1)); then _clockprof_commands \"$cur\"; else _clockprof_files \"$cur\"; fi\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif [[ $cur == -* ]]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	"\t\t[[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcase $operands in\n"
	"\tpid) _clockprof_pids \"$cur\";;\n"
	"\tfile) _clockprof_files \"$cur\";;\n"
	"\tdir) _clockprof_dirs \"$cur\";;\n"
	"\tcommand) _clockprof_commands \"$cur\";;\n"
	"\tesac\n"
	"}\n"
	"complete -F _clockprof clockprof\n";

void cp_cli_bash_completion(FILE *out, const struct cp_program_spec *prog)
{
	fprintf(out,
		"# bash completion for %s: generated by '%s --completion bash'\n"
		"# from its option tables; do not edit.\n",
		prog->name, prog->name);
	fputs(helpers, out);
	fputs(prologue, out);
	fputs("\tif ((COMP_CWORD == 1)); then\n\t\tCOMPREPLY=($(compgen -W \"", out);
	for (size_t i = 0; i < prog->ncommands; i++)
		fprintf(out, "%s ", prog->commands[i]->name);
	fputs("help --help --version\" -- \"$cur\"))\n\t\treturn\n\tfi\n", out);
	fputs("\tcase $sub in\n\thelp)\n\t\t((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W \"",
	      out);
	for (size_t i = 0; i < prog->ncommands; i++)
		fprintf(out, "%s%s", i ? " " : "", prog->commands[i]->name);
	fputs("\" -- \"$cur\"))\n\t\treturn;;\n", out);
	for (size_t i = 0; i < prog->ncommands; i++)
		command_case(out, prog->commands[i]);
	fputs(epilogue, out);
}
