/* speedscope.h - call stacks in speedscope's own JSON file format.
 *
 * speedscope (https://www.speedscope.app) opens the file directly and shows
 * the clock-reading stacks as a flame chart, left-heavy view and sandwich
 * table: one "sampled" profile whose samples are the distinct stacks and
 * whose weights are their read counts. A frame carries its file and line
 * where they are known (struct cp_frame_pos): a function seen at two lines
 * is two frames. */
#ifndef CP_SPEEDSCOPE_H
#define CP_SPEEDSCOPE_H

#include <stddef.h>

#include "folded.h" /* struct cp_stack */

struct cp_error;

/* Renders the document (malloc'd JSON text). name titles the profile, e.g.
 * "clock reads: server (pid 4242)". Frame names that are not valid UTF-8
 * have the offending bytes replaced by '?'. */
char *cp_speedscope_render(const struct cp_stack *stacks, size_t n, const char *name);

/* Writes it to f (an output of output_set.h); fails with CP_EXIT_PROFILE
 * when out of memory (a stream error is the caller's). */
int cp_speedscope_write(FILE *f, const struct cp_stack *stacks, size_t n, const char *name,
			struct cp_error *err);

#endif
