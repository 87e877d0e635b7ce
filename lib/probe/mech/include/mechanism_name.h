/* mechanism_name.h - the mechanisms by name: what --mechanism takes and
 * run.json's clock_reads.mechanism says. What a mechanism is and does is
 * inside lib/probe (lib/probe/mech/mechanism.h). */
#ifndef CP_MECHANISM_NAME_H
#define CP_MECHANISM_NAME_H

struct cp_error;

enum cp_mechanism {
	CP_MECHANISM_UPROBE,
	CP_MECHANISM_BREAKPOINT,
	CP_MECHANISM_PATCH,
	CP_MECHANISM_COUNT,
	/* Not a mechanism but a choice, made before anything is counted
	 * (lib/probe/mech/mech_choice.c): the patch, or uprobes when the
	 * patch cannot be used here (the reason kept) or --stacks is asked. */
	CP_MECHANISM_AUTO = CP_MECHANISM_COUNT,
};

/* What `attach`, `run` and `ab` count with when --mechanism is not given:
 * the one place the default is decided. CP_MECHANISM_DEFAULT_NAME is its
 * name as --help says it (a unit test holds the two together). */
#define CP_MECHANISM_DEFAULT CP_MECHANISM_AUTO
#define CP_MECHANISM_DEFAULT_NAME "auto"

/* "uprobe", "breakpoint", "patch", "auto": the names of --mechanism and
 * run.json (clock_reads.mechanism never says "auto": probe.requested_mechanism
 * may). */
const char *cp_mechanism_name(enum cp_mechanism m);
int cp_mechanism_parse(const char *name, enum cp_mechanism *m, struct cp_error *err);

#endif
