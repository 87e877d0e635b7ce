/* report_anatomy.h - the pieces of the report's "Anatomy of a request"
 * section (run.json "anatomy", docs/run-json.md): report_anatomy.c writes
 * the section's notes and tables, report_timeline.c draws each common
 * shape as a timeline; the reads are found and named by anatomy_reads.h.
 * Every name comes from the target and goes out escaped (cp_buf_text). */
#ifndef CP_REPORT_ANATOMY_H
#define CP_REPORT_ANATOMY_H

#include <jansson.h>
#include <stddef.h>

#include "anatomy_reads.h"
#include "buf.h"

/* A time in ns as people read it: "80 ns", "1.25 µs", "3.4 ms", "n/a". */
void cp_html_ns(struct cp_buf *b, double ns);

/* s escaped, cut after max_chars characters (UTF-8) with "…". */
void cp_html_text_cut(struct cp_buf *b, const char *s, size_t max_chars);

/* The reusable entry (anatomy.reusable) that step k of steps is, and in
 * *from the index of the earlier step whose value it could reuse (the
 * latest read of the same clock before it, when that is the entry's
 * earlier read); NULL when step k is none. */
const json_t *cp_anatomy_step_reuse(const json_t *anatomy, const json_t *steps, size_t k,
				    size_t *from);

/* Shape s (its index in anatomy.shapes) of run `index` as one timeline
 * row: an inline SVG drawn here, so it needs no JavaScript. */
void cp_report_timeline(struct cp_buf *b, const json_t *anatomy, const json_t *shape, size_t index,
			size_t s);

#endif
