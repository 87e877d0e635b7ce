/* metrics_sink.h - where the metrics text goes while a window is open
 * and at its end: --metrics-file (replaced atomically, for
 * node_exporter's textfile collector) and the --serve child
 * (metrics_serve.h). One sink lives as long as clockprof: it holds the
 * sticky label state (metrics_text.h), so counters stay monotonic across
 * every text it renders.
 *
 * Three moments feed it: each --interval (cp_metrics_sink_interval, the
 * on_interval callback of profile.h: the file and the server), each live
 * tick of the window (cp_metrics_sink_live: the server only, so a scrape
 * sees the counts grow before any interval), and the window's end
 * (cp_metrics_sink_final: the text for the output set, which writes the
 * file as it writes run.json, and for the server). */
#ifndef CP_METRICS_SINK_H
#define CP_METRICS_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "metrics_text.h"

struct cp_error;
struct cp_profile;
struct cp_metrics_server;

struct cp_metrics_sink {
	struct cp_metrics_state state;
	const char *file; /* --metrics-file; NULL: none */
	/* Whether the file is replaced at each interval: only a regular
	 * file, or a new one, is (a FIFO or device would block the window
	 * on its reader; a symlink is written in place, not atomically):
	 * the others get the final text alone. */
	bool file_each_interval;
	struct cp_metrics_server *server; /* --serve; NULL: none */
	unsigned failures;		  /* intervals whose file could not be written */
};

/* Sets the sink up for file (may be NULL), with max_sites call-site
 * labels; the server is the caller's to start and set. */
void cp_metrics_sink_init(struct cp_metrics_sink *k, const char *file, size_t max_sites);

/* on_interval: renders p, replaces the file (when file_each_interval) and
 * gives the text to the server. A file that cannot be written is counted
 * in failures (the caller says so): the window goes on. 0 or -1. */
int cp_metrics_sink_interval(struct cp_metrics_sink *k, const struct cp_profile *p,
			     struct cp_error *err);

/* The live tick: renders p for the server alone (nothing without one). */
void cp_metrics_sink_live(struct cp_metrics_sink *k, const struct cp_profile *p);

/* The final text: rendered, given to the server, and written to f (an
 * output of output_set.h; f may be NULL: the server alone). */
int cp_metrics_sink_final(struct cp_metrics_sink *k, const struct cp_profile *p, FILE *f,
			  struct cp_error *err);

/* Stops the server (it then ends) and frees the state. */
void cp_metrics_sink_release(struct cp_metrics_sink *k);

#endif
