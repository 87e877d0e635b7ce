/* run_processes.h - run.json's `processes` and `executables`: each process
 * a window counted (the target, then those it forked, when run followed
 * them) and the same rolled up by executable. Inside lib/runfile only. */
#ifndef CP_RUN_PROCESSES_H
#define CP_RUN_PROCESSES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct cp_profile;

/* The `processes` array (new reference). */
json_t *cp_run_processes_build(const struct cp_profile *p);
/* The counted processes rolled up by the executable they ran. */
struct cp_exe_rollup {
	const char *exe; /* the profile's (not copied) */
	size_t processes;
	uint64_t reads, requests, in_requests;
	uint64_t min_reads, max_reads;
};

/* The rollup, one entry per executable in the order first met (malloc'd,
 * *n entries); -1 out of memory. */
int cp_run_rollup(const struct cp_profile *p, struct cp_exe_rollup **out, size_t *n);
/* The `executables` array: one row per executable of the counted
 * processes (new reference). */
json_t *cp_run_executables_build(const struct cp_profile *p);

#endif
