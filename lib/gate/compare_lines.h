/* compare_lines.h - where in the source a regressed per-site measure
 * gained its reads.
 *
 * clock_reads@FUNCTION/op adds up every call site of FUNCTION, so that it
 * survives a rebuild that moves lines; when it regresses, the reviewer
 * still has to find which line added a read. The runs' call_sites say: a
 * site's file, line and reads per op. Summed per line of FUNCTION and
 * averaged over the runs of a side that have the function, each side's
 * lines of a file are aligned as a diff aligns text (a head file is the
 * base file whose path ends the same way: base and head are often built
 * in checkouts of their own), pairing an unchanged line, then a moved
 * one, then one whose count changed; a head line that reads more than
 * its pair, or has none, gained. */
#ifndef CP_COMPARE_LINES_H
#define CP_COMPARE_LINES_H

#include "compare.h"

/* The most lines named for one measure. */
#define CP_SITE_LINES_MAX 10

/* For every regressed clock_reads@FUNCTION/op of r, sets its lines:
 * [{file, line, base, head, repo_path}], at most CP_SITE_LINES_MAX, most
 * gained first; file and line as head's call_sites give them (a read
 * inside a helper inlined into FUNCTION: FUNCTION's own line that calls
 * it, inlined_at, where every run names it; a relative file taken from
 * the site's comp_dir), base the reads per op of
 * the base line paired with it (0: none), repo_path the file relative to
 * source_root (NULL: the current directory) or null when it is not a
 * file below it. [] when no line gained (the runs have no line
 * information, or no ops). -1 when out of memory. */
int cp_compare_name_lines(struct cp_compare_result *r, const struct cp_compare_side *base,
			  const struct cp_compare_side *head, const char *source_root);

#endif
