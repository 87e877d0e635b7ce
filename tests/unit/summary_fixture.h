/* summary_fixture.h - the terminal summary of a profile, as text, for the
 * tests of its wording. */
#ifndef CP_SUMMARY_FIXTURE_H
#define CP_SUMMARY_FIXTURE_H

struct cp_profile;

/* What cp_summary_print writes for p (malloc'd; the caller frees it). */
char *summary_of(const struct cp_profile *p);

#endif
