/* folded.h - call stacks in FlameGraph's "folded" text format.
 *
 * `clockprof --folded FILE` writes the stacks that read the clock so that
 * flamegraph.pl, inferno or speedscope draw them: one line per distinct
 * stack, frames root first joined by ';', one space, an integer count.
 * Lines are sorted so that two runs diff cleanly. */
#ifndef CP_FOLDED_H
#define CP_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks.h"

struct cp_error;

/* Renders stacks as folded text (malloc'd, NUL-terminated; *len without
 * the NUL). Names are made safe for the format: ';' becomes ':', line
 * breaks and other control characters become spaces, an empty name
 * becomes "[unknown]". Identical stacks are merged, zero counts dropped. */
char *cp_folded_render(const struct cp_stack *stacks, size_t n, size_t *len);

/* Writes the folded text to f (an output of output_set.h); fails with
 * CP_EXIT_PROFILE when out of memory (a stream error is the caller's). */
int cp_folded_write(FILE *f, const struct cp_stack *stacks, size_t n, struct cp_error *err);

#endif
