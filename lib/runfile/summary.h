/* summary.h - the text a person reads at the end of attach/run (and the
 * one-line live view while the window is open). */
#ifndef CP_SUMMARY_H
#define CP_SUMMARY_H

#include <stdio.h>

struct cp_profile;

void cp_summary_print(FILE *out, const struct cp_profile *p);
/* One line, no newline, for a refreshing TTY display. */
void cp_summary_live(FILE *out, const struct cp_profile *p);

#endif
