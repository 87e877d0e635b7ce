/* anatomy_reads.h - the reads of run.json "anatomy" (docs/run-json.md),
 * read straight from the run document: found by id, named, and matched
 * between runs. compare names a reusable read that head removed
 * (lib/gate/compare_reusable.c); the report draws and lists them
 * (lib/report/report_anatomy.c). A read's id holds only within its run;
 * between runs a read is its site and its callers. */
#ifndef CP_ANATOMY_READS_H
#define CP_ANATOMY_READS_H

#include <jansson.h>

#include "buf.h"

/* anatomy.reads' entry whose id is id_value (an integer), or NULL. */
const json_t *cp_anatomy_read(const json_t *anatomy, const json_t *id_value);

/* Appends, unescaped, "function file:line" of a frame (a read or one of
 * its callers; " (inlined at line N)" after it where the read's
 * inlined_at says so) to plain; then, with callers, " ← caller file:line" for
 * each caller (all, innermost first), or only the outermost one ("← … ←"
 * marking those left out) when all is 0. */
void cp_anatomy_read_label(struct cp_buf *plain, const json_t *frame, int callers, int all);

/* Whether reads a and b of two runs are the same read: the same function,
 * file, line and inlined_at line, and callers that agree as far as both name them (a run
 * names as many callers as it takes to tell its reads apart, so one run
 * may name fewer than another). */
int cp_anatomy_same_read(const json_t *a, const json_t *b);

#endif
