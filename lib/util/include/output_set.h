/* output_set.h - the files one command writes, opened before its work and
 * put in place in an order that keeps them true to its exit code.
 *
 * Opened first (cp_outputs_open): an output that cannot be written fails
 * before anything is launched, attached or loaded, and a FIFO waits for
 * its reader there, where Ctrl-C still ends the wait (fifo_open.h). Then,
 * once the results are known (cp_outputs_write), every output that can be
 * staged (a regular or new file: atomic_file.h) is written to its temp
 * file, then the outputs that cannot be (devices, FIFOs, symlinks,
 * stdout); the caller may append what cannot be staged either
 * ($GITHUB_STEP_SUMMARY) after that; last (cp_outputs_publish) the temp
 * files are renamed into place in the order of the set, its last output
 * (verdict.json, run.json) last of all. So a command that fails on an
 * output never leaves its last one in place to say otherwise. */
#ifndef CP_OUTPUT_SET_H
#define CP_OUTPUT_SET_H

#include <stddef.h>
#include <stdio.h>

#include "fifo_open.h"

struct cp_error;
struct cp_atomic_out;

/* Writes one output's bytes to f; 0, or -1 with err filled (an error of
 * the stream itself is found and named by the set). */
typedef int (*cp_output_writer)(FILE *f, void *ctx, struct cp_error *err);

struct cp_output {
	const char *path;	/* NULL: not asked for */
	cp_output_writer write; /* NULL: written already, through out */
	void *ctx;
	struct cp_atomic_out *out; /* set by cp_outputs_open */
};

/* How a failed output affects the others. */
enum cp_outputs_policy {
	/* None is put in place (compare: verdict.json, markdown, HTML). */
	CP_OUTPUTS_ALL_OR_NONE,
	/* The others still are, the last above all: run.json holds what was
	 * measured, and a report made from it must not cost it. */
	CP_OUTPUTS_KEEP_LAST,
};

/* Opens outs[0..n) (those with a path); -1 with err and none left open
 * when one cannot be. notice: told of a FIFO that waits for its reader. */
int cp_outputs_open(struct cp_output *outs, size_t n, cp_wait_notice notice, struct cp_error *err);

/* Writes the staged outputs, then the others. 0, or -1 with the first
 * failure in err: under ALL_OR_NONE every output is then dropped; under
 * KEEP_LAST only the failed ones are, and the rest are still published. */
int cp_outputs_write(struct cp_output *outs, size_t n, enum cp_outputs_policy policy,
		     struct cp_error *err);

/* Puts the staged outputs in place in order and releases every output;
 * 0, or -1 with err (those after the failed one are dropped). */
int cp_outputs_publish(struct cp_output *outs, size_t n, struct cp_error *err);

/* Drops every output still open (temp files vanish). */
void cp_outputs_abort(struct cp_output *outs, size_t n);

#endif
