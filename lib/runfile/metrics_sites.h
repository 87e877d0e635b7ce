/* metrics_sites.h - the sticky call-site labels of metrics_text.h: which
 * sites have a label of their own, kept across snapshots. */
#ifndef CP_METRICS_SITES_H
#define CP_METRICS_SITES_H

#include <stdbool.h>
#include <stdint.h>

#include "call_sites.h"
#include "metrics_text.h"

/* One labelled site: its three label values (malloc'd, valid UTF-8 not
 * guaranteed: escaped when written) and the value it last had. */
struct cp_metrics_site {
	char *site;	/* "handle_request > now_ns": function, inlined ones */
	char *location; /* "file.c:23", else the module, else "" */
	char *via;	/* the clock function called */
	uint64_t value;
};

/* Folds one cumulative snapshot of call sites into s: a site already
 * labelled takes its count (sites with the same labels summed), a new
 * one gets a label while fewer than max_sites have one, the rest are
 * summed into s->other. No value goes down: a site missing from cs, or
 * an "other" smaller than before, keeps its last value. 0, or -1 when
 * out of memory (s stays usable). */
int cp_metrics_sites_update(struct cp_metrics_state *s, const struct cp_call_sites *cs);

#endif
