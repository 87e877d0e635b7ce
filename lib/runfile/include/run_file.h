/* run_file.h - run.json (contract "clockprof.run/1", docs/run-json.md):
 * one profiling window of one process. The writer turns a finished
 * struct cp_profile into the document; the loader validates a document for
 * compare and report. Both use jansson. */
#ifndef CP_RUN_FILE_H
#define CP_RUN_FILE_H

#include <jansson.h>

#include "json_file.h"

struct cp_error;
struct cp_profile;

#define CP_RUN_SCHEMA "clockprof.run/1"

/* A per-site measure's name: CP_SITE_MEASURE_PREFIX FUNCTION
 * CP_SITE_MEASURE_SUFFIX ("clock_reads@handle_request/op"), written per
 * call site's function and read back by the gate to name its lines. */
#define CP_SITE_MEASURE_PREFIX "clock_reads@"
#define CP_SITE_MEASURE_SUFFIX "/op"

/* The most measures a run file may hold (a real run has one per counter and
 * clock, tens to a few thousand): beyond it compare and report would need
 * memory and time out of proportion, so the file is refused (exit 2). */
#define CP_RUN_MAX_MEASURES 200000

/* Loads path and checks the members that compare and report rely on
 * (schema, tool, complete, target, host, clock_reads, measures with value,
 * unit, kind, better; clock_reads.mechanism and host.breakpoints_fire when
 * present). On success *doc holds a new reference. Invalid or
 * unreadable input fails with CP_EXIT_USAGE and a message naming the file
 * and the member. */
int cp_run_file_load(const char *path, json_t **doc, struct cp_error *err);

/* Called with each measure of a run file, in file order, once it is
 * known to be valid; name and m live only during the call. Returns 0, or
 * -1 when out of memory. */
typedef int (*cp_run_measure_fn)(void *ctx, const char *name, const json_t *m);

/* Loads path as cp_run_file_load() does, member by member: a file with
 * more than CP_RUN_MAX_MEASURES measures is refused when the one past the
 * limit is reached, before the rest is parsed. With fn, each measure goes
 * to fn and is not kept (*doc then has "measures": {}), so the file's
 * tree is never built whole. */
int cp_run_file_read(const char *path, cp_run_measure_fn fn, void *ctx, json_t **doc,
		     struct cp_error *err);

/* Parses path for a reader that learns from the schema what the file is
 * (clockprof report takes run files and verdicts): a run file is checked
 * as cp_run_file_load() checks it, and its measures are kept as their
 * JSON text (a string, the object's own bytes: a tree of them is ten
 * times their size), to be walked again (json_walk.h) when they are
 * drawn. Any other document comes back whole and unchecked. A "measures"
 * object of more than CP_RUN_MAX_MEASURES members is refused when the
 * one past the limit is reached. */
int cp_run_file_parse(const char *path, json_t **doc, struct cp_error *err);

/* Checks an already parsed document; `what` names it in messages. */
int cp_run_file_validate(const json_t *doc, const char *what, struct cp_error *err);

/* How the clock reads of a valid document were counted: its
 * clock_reads.mechanism ("uprobe" or "breakpoint"), or "breakpoint" when
 * it has none (written before there was a choice). */
const char *cp_run_mechanism(const json_t *doc);

/* What an op is in a valid document (lib/runfile/run_boundary.c): its
 * request boundary as resolved, one text whatever its spelling
 * ("func:(main executable):handle_request", "func:libc.so.6:read",
 * "syscall:read", "none"; files without request.boundary by their spec),
 * into buf, which is returned; and its ops_source ("request", "--ops",
 * "none"). */
const char *cp_run_boundary(const json_t *doc, char *buf, size_t len);
const char *cp_run_ops_source(const json_t *doc);

/* Builds the run.json document of a finished profile (new reference). */
json_t *cp_run_file_build(const struct cp_profile *profile);

#endif
