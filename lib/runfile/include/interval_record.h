/* interval_record.h - --interval's records: what one interval counted, as
 * the difference of two cumulative snapshots of the window (profile.h's
 * on_interval contract), shaped as run.json (cp_run_file_build on a view
 * of the difference) with schema clockprof.interval/1 and an "interval"
 * object, written as one compact JSON line, flushed (tail -f, jq).
 * docs/run-json.md describes the record. */
#ifndef CP_INTERVAL_RECORD_H
#define CP_INTERVAL_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

#define CP_INTERVAL_SCHEMA "clockprof.interval/1"

/* One call site of the previous snapshot: its merge key and counts. */
struct cp_interval_site {
	char *key; /* function, file, line, module, via */
	uint64_t count, in_requests;
};

/* What the next record is measured from. Its size follows the number of
 * call sites of the last snapshot (capped by the mechanism) and of
 * counters, never the number of intervals. */
struct cp_interval_writer {
	FILE *out;	     /* NULL: build only (tests) */
	unsigned long index; /* the next record's, from 0 */
	double prev_s;	     /* the last snapshot's duration_s */
	struct cp_totals prev;
	struct cp_counter_value *prev_ctr;
	size_t nctr;
	struct cp_interval_site *sites; /* sorted by key */
	size_t nsites, cap;
	struct cp_profile *view;     /* the difference, as a profile */
	struct cp_call_site *dsites; /* the view's call sites */
	size_t dcap;
	/* Given each interval's view (a profile of what the interval alone
	 * counted) once its record is built, for other per-interval outputs
	 * (--pprof's series); NULL: none. */
	void (*on_view)(const struct cp_profile *view, void *arg);
	void *view_arg;
};

/* out may be NULL (cp_interval_record_build alone). 0, or -1: no memory. */
int cp_interval_writer_init(struct cp_interval_writer *w, FILE *out);
void cp_interval_writer_free(struct cp_interval_writer *w);

/* The record of what p (cumulative) holds beyond the last snapshot given,
 * which p then becomes (new reference; NULL: no memory). last: p is the
 * window's final profile (interval.last in the record). */
json_t *cp_interval_record_build(struct cp_interval_writer *w, const struct cp_profile *p,
				 bool last);

/* Builds the record and writes it to w->out as one line, flushed. 0, or
 * -1 (no memory, or the write failed: errno). */
int cp_interval_record_write(struct cp_interval_writer *w, const struct cp_profile *p, bool last);

#endif
