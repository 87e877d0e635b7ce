/* compare_evidence.h - refusing runs that measured nothing
 * (lib/gate/compare_evidence.c). */
#ifndef CP_COMPARE_EVIDENCE_H
#define CP_COMPARE_EVIDENCE_H

#include "compare.h"

/* Fails (CP_EXIT_USAGE), naming the side and what it lacks, when a side
 * has a request boundary and no complete request in any of its runs, or
 * when no run of either side read the clock: such runs hold no evidence
 * to judge. One side reading nothing while the other reads is a result
 * (a head that removed every read) and passes. */
int cp_compare_check_evidence(const struct cp_compare_side *base,
			      const struct cp_compare_side *head, struct cp_error *err);

#endif
