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
	CP_MECHANISM_COUNT
};

/* "uprobe", "breakpoint", "patch": the names of --mechanism and run.json. */
const char *cp_mechanism_name(enum cp_mechanism m);
int cp_mechanism_parse(const char *name, enum cp_mechanism *m, struct cp_error *err);

#endif
