/* metrics_text.h - a profile, cumulative since counting began, as the
 * Prometheus text exposition format (version 0.0.4): what --metrics-file
 * writes for node_exporter's textfile collector and --serve answers at
 * /metrics (docs/metrics.md names every metric).
 *
 * Counters must never go down while clockprof runs, or Prometheus takes
 * the drop for a restart and rate() lies. The counts of one window are
 * cumulative, so they only grow; what could break that is the call-site
 * label set: a site named in one snapshot and missing from a later one,
 * or ten thousand sites each a series of its own. So call-site labels
 * are sticky: the first max_sites sites seen keep their own label for
 * the life of the state (the caller keeps one for the whole process),
 * every later one is summed into site="other", and a site keeps its
 * last value when a snapshot lacks it. No label ever holds a pid: a
 * restarted target continues the same series. */
#ifndef CP_METRICS_TEXT_H
#define CP_METRICS_TEXT_H

#include <stddef.h>
#include <stdint.h>

struct cp_buf;
struct cp_profile;

/* The exposition format's version, as its Content-Type names it. */
#define CP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* Call sites with a label of their own (--metrics-sites) by default,
 * and at most: each is a series in Prometheus. */
#define CP_METRICS_SITES_DEFAULT 100
#define CP_METRICS_SITES_MAX 10000

struct cp_metrics_site;

/* The sticky label state: which sites have a label, and the last value
 * each series had. Zero it, then set max_sites (0: every site is
 * "other"). */
struct cp_metrics_state {
	size_t max_sites;
	struct cp_metrics_site *sites; /* labelled, in the order first seen */
	size_t n, cap;
	uint64_t other; /* site="other": its last value */
};

/* Appends the text of p to b (check b->failed), and updates s: the
 * labels given, the last values. */
void cp_metrics_render(struct cp_metrics_state *s, const struct cp_profile *p, struct cp_buf *b);
void cp_metrics_state_free(struct cp_metrics_state *s);

#endif
