/* summary.h - the text a person reads at the end of attach/run (and the
 * one-line live view while the window is open). */
#ifndef CP_SUMMARY_H
#define CP_SUMMARY_H

#include <stdio.h>

struct cp_profile;

/* color: mark warnings in colour (for a terminal that wants it). */
void cp_summary_print(FILE *out, const struct cp_profile *p, int color);
/* One line, no newline, for a refreshing TTY display. */
void cp_summary_live(FILE *out, const struct cp_profile *p);

#endif
