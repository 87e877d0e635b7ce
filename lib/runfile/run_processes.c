/* run_processes.c - see run_processes.h. A process that the window
 * followed but could not count (it exec()ed another program, or its
 * counts could not be had) is listed with `counted` false and reads
 * null, never a made-up 0; the rollup leaves it out. */
#include <stdlib.h>
#include <string.h>

#include "json_file.h"
#include "profile.h"
#include "run_processes.h"

/* The executable a row ran: its own (a process attach was given, and
 * those it forked), else the target's (a fork runs its parent's image);
 * NULL for one that exec()ed another. */
static const char *executable_of(const struct cp_profile *p, const struct cp_process_row *r)
{
	return r->execed ? NULL : r->executable ? r->executable : p->target.exe;
}

static json_t *seconds_or_null(double s)
{
	return s < 0 ? json_null() : json_real(s);
}

static json_t *per_request(uint64_t in_requests, uint64_t requests)
{
	return requests ? json_real((double)in_requests / (double)requests) : json_null();
}

json_t *cp_run_processes_build(const struct cp_profile *p)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct cp_process_row *r = &p->processes[i];
		const char *exe = executable_of(p, r);
		bool counted = r->known && !r->execed;

		/* One key and its value a line (clang-format would pack them): */
		/* clang-format off */
		json_array_append_new(a, json_pack(
			"{s:i, s:i, s:o, s:o, s:o, s:o, s:b, s:b, s:o, s:I, s:o}",
			"pid", (int)r->pid, "parent", (int)r->ppid,
			"command", cp_json_utf8(r->command),
			"executable", exe ? cp_json_utf8(exe) : json_null(),
			"start_s", json_real(r->start_s),
			"exit_s", seconds_or_null(i == 0 && p->target_exited ? p->clock_window_s :
						  r->end_s),
			"execed", r->execed, "counted", counted,
			"reads", counted ? json_integer((json_int_t)r->reads) : json_null(),
			"requests", (json_int_t)r->requests,
			"reads_per_request", per_request(r->in_requests, r->requests)));
		/* clang-format on */
	}
	return a;
}

int cp_run_rollup(const struct cp_profile *p, struct cp_exe_rollup **out, size_t *n)
{
	struct cp_exe_rollup *u = calloc(p->nprocesses ? p->nprocesses : 1, sizeof(*u));

	*out = u;
	*n = 0;
	if (!u)
		return -1;
	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct cp_process_row *r = &p->processes[i];
		const char *exe = executable_of(p, r);
		size_t j = 0;

		if (!exe || !r->known)
			continue;
		while (j < *n && strcmp(u[j].exe, exe))
			j++;
		if (j == *n)
			u[(*n)++] = (struct cp_exe_rollup){ .exe = exe, .min_reads = r->reads };
		u[j].processes++;
		u[j].reads += r->reads;
		u[j].requests += r->requests;
		u[j].in_requests += r->in_requests;
		if (r->reads < u[j].min_reads)
			u[j].min_reads = r->reads;
		if (r->reads > u[j].max_reads)
			u[j].max_reads = r->reads;
	}
	return 0;
}

json_t *cp_run_executables_build(const struct cp_profile *p)
{
	struct cp_exe_rollup *u;
	json_t *a = json_array();
	size_t n;

	cp_run_rollup(p, &u, &n);
	for (size_t j = 0; j < n; j++)
		json_array_append_new(
			a, json_pack("{s:o, s:I, s:I, s:I, s:o, s:{s:I, s:I}}", "executable",
				     cp_json_utf8(u[j].exe), "processes",
				     (json_int_t)u[j].processes, "reads", (json_int_t)u[j].reads,
				     "requests", (json_int_t)u[j].requests, "reads_per_request",
				     per_request(u[j].in_requests, u[j].requests),
				     "reads_per_process", "min", (json_int_t)u[j].min_reads, "max",
				     (json_int_t)u[j].max_reads));
	free(u);
	return a;
}
