/* summary_anatomy.h - the summary's "could reuse" lines (--anatomy,
 * docs/anatomy.md), for summary.c. */
#ifndef CP_SUMMARY_ANATOMY_H
#define CP_SUMMARY_ANATOMY_H

#include <stdio.h>

struct cp_profile;

/* Up to CP_SUMMARY_REUSE_SHOWN reads that could reuse an earlier one,
 * largest saving first, each with the file:line of both reads, the share
 * and the gap's p50; or the line saying why no read was judged. Nothing
 * without --anatomy. */
#define CP_SUMMARY_REUSE_SHOWN 5
void cp_summary_anatomy(FILE *out, const struct cp_profile *p);

#endif
