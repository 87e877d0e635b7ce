/* compare_admit.h - which runs the gate judges, before any measure is:
 * the same run given twice, runs counted by different mechanisms or over
 * different processes, runs whose ops differ (compare_boundary.h) and
 * runs that measured nothing (compare_evidence.h) are refused; runs cut
 * short are left out and listed; the sides' host fingerprints are
 * compared (sampled measures are judged only on one host); the runs' own
 * warnings are carried into the verdict. */
#ifndef CP_COMPARE_ADMIT_H
#define CP_COMPARE_ADMIT_H

#include <stddef.h>

#include "compare.h"
#include "error.h"

/* Admits the runs of base and head: b and h are the runs judged (in
 * *mem, freed by the caller), *unjudged set when a side has no complete
 * run; out gets the excluded runs, the environments, the warnings; env_why
 * names the fingerprint fields that differ ("" when none). -1 with err
 * when the runs are refused. */
int cp_compare_admit(const struct cp_compare_side *base, const struct cp_compare_side *head,
		     struct cp_compare_side *b, struct cp_compare_side *h, void **mem,
		     int *unjudged, struct cp_compare_result *out, char *env_why, size_t why_len,
		     struct cp_error *err);

#endif
