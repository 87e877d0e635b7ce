/* compare_reusable.h - what compare says of the runs' anatomy (run.json
 * "anatomy", docs/gating.md): why clock_reads_reusable/op was not judged
 * when one side lacks it, and the reusable reads of base that head
 * removed. */
#ifndef CP_COMPARE_REUSABLE_H
#define CP_COMPARE_REUSABLE_H

#include "buf.h"
#include "compare.h"

/* The measure of the reads per op that could reuse an earlier value: in a
 * run with --anatomy whose gaps are exact (anatomy.judged). Judged only
 * when both sides have it; on one side it is shown, never failing. */
#define CP_REUSABLE_MEASURE "clock_reads_reusable/op"

/* Once the measures are judged: the reason CP_REUSABLE_MEASURE is on one
 * side only, and out->reusable_removed (compare.h). -1 when out of
 * memory. */
int cp_compare_reusable(struct cp_compare_result *out, const struct cp_compare_side *base,
			const struct cp_compare_side *head);

/* How many entries the terminal and the markdown list; verdict.json has
 * them all. */
#define CP_REUSABLE_REMOVED_SHOWN 5

/* What the terminal and the markdown say of an entry of verdict.json
 * "reusable_removed": the read and the read it could reuse, named (plain
 * text: the caller escapes it), its reads per op in base, and whether head
 * still makes the read; or, past the first CP_REUSABLE_REMOVED_SHOWN, how
 * many more there are (more > 0, the rest empty). */
struct cp_reusable_removed_line {
	const char *read, *reuses, *per_op, *outcome;
	size_t more;
};

/* Calls fn for each line of verdict's "reusable_removed". */
void cp_reusable_removed_each(const json_t *verdict,
			      void (*fn)(const struct cp_reusable_removed_line *, void *),
			      void *arg);

#endif
