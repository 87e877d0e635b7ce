/* interval_record.c - see interval_record.h. The record is run.json's
 * builder run on a view of the difference between two snapshots, so an
 * interval says everything run.json says, by the same code. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "call_sites.h"
#include "counters.h"
#include "grow.h"
#include "interval_record.h"
#include "run_file.h"

int cp_interval_writer_init(struct cp_interval_writer *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->view = calloc(1, sizeof(*w->view));
	return w->view ? 0 : -1;
}

static void free_sites(struct cp_interval_writer *w)
{
	for (size_t i = 0; i < w->nsites; i++)
		free(w->sites[i].key);
	w->nsites = 0;
}

void cp_interval_writer_free(struct cp_interval_writer *w)
{
	free_sites(w);
	free(w->sites);
	free(w->prev_ctr);
	free(w->dsites);
	free(w->view);
	memset(w, 0, sizeof(*w));
}

/* Sites that name the same place are one site (call_sites.c merges them
 * by this key): the key says which place, whatever the order or the
 * snapshot. */
static char *site_key(const struct cp_call_site *s)
{
	return cp_call_site_place_key(s);
}

/* What a count grew by: 0, not a wrapped number, should it not have. */
static uint64_t grew(uint64_t cur, uint64_t old)
{
	return cur >= old ? cur - old : 0;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct cp_interval_site *)a)->key,
		      ((const struct cp_interval_site *)b)->key);
}

static const struct cp_interval_site *find_site(const struct cp_interval_writer *w, const char *key)
{
	struct cp_interval_site k = { .key = (char *)key };

	return w->nsites ? bsearch(&k, w->sites, w->nsites, sizeof(k), by_key) : NULL;
}

/* Every field of cp_totals is a count, all but the largest request's reads,
 * which is the run's so far. Counts never go down: a snapshot older than
 * the last (none is) would give 0, not a wrapped number. */
static void diff_totals(struct cp_totals *d, const struct cp_totals *cur,
			const struct cp_totals *prev)
{
	const uint64_t *c = (const uint64_t *)cur, *p = (const uint64_t *)prev;
	uint64_t *o = (uint64_t *)d;

	_Static_assert(sizeof(struct cp_totals) % sizeof(uint64_t) == 0,
		       "cp_totals holds 64-bit counts only");
	for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		o[i] = grew(c[i], p[i]);
	d->max_reads_per_request = cur->max_reads_per_request;
}

static int by_count_desc(const void *a, const void *b)
{
	uint64_t x = ((const struct cp_call_site *)a)->count;
	uint64_t y = ((const struct cp_call_site *)b)->count;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The view's sites: those that counted in the interval, with the
 * interval's counts (their names borrowed from p), most reads first. */
static int diff_sites(struct cp_interval_writer *w, const struct cp_call_sites *cur)
{
	size_t n = 0;

	if (cp_grow(&w->dsites, &w->dcap, cur->n, sizeof(*w->dsites)))
		return -1;
	for (size_t i = 0; i < cur->n; i++) {
		char *key = site_key(&cur->sites[i]);
		const struct cp_interval_site *old;

		if (!key)
			return -1;
		old = find_site(w, key);
		free(key);
		w->dsites[n] = cur->sites[i];
		w->dsites[n].count = grew(cur->sites[i].count, old ? old->count : 0);
		w->dsites[n].in_requests = grew(cur->sites[i].in_requests,
						old ? old->in_requests : 0);
		if (w->dsites[n].count)
			n++;
	}
	if (n) /* dsites is NULL until a site comes: qsort wants a pointer */
		qsort(w->dsites, n, sizeof(*w->dsites), by_count_desc);
	w->view->call_sites.sites = w->dsites;
	w->view->call_sites.n = n;
	return 0;
}

/* The snapshot's sites become the previous ones. */
static int keep_sites(struct cp_interval_writer *w, const struct cp_call_sites *cur)
{
	free_sites(w);
	if (cp_grow(&w->sites, &w->cap, cur->n, sizeof(*w->sites)))
		return -1;
	for (size_t i = 0; i < cur->n; i++) {
		w->sites[i] = (struct cp_interval_site){ site_key(&cur->sites[i]),
							 cur->sites[i].count,
							 cur->sites[i].in_requests };
		if (!w->sites[i].key)
			return -1;
		w->nsites = i + 1;
	}
	if (w->nsites)
		qsort(w->sites, w->nsites, sizeof(*w->sites), by_key);
	return 0;
}

/* Counters are sums over the target's threads: their difference is the
 * interval's, scaled by the interval's own running ratio. */
static int diff_counters(struct cp_interval_writer *w, const struct cp_profile *p,
			 struct cp_counter_value *d)
{
	if (!p->counters_measured || !p->counters || !d) /* d: NULL without events */
		return 0;
	if (w->nctr != p->nevents) {
		free(w->prev_ctr);
		w->prev_ctr = calloc(p->nevents, sizeof(*w->prev_ctr));
		if (!w->prev_ctr)
			return -1;
		w->nctr = p->nevents;
	}
	for (size_t i = 0; i < p->nevents; i++) {
		d[i] = p->counters[i];
		if (!d[i].supported)
			continue;
		d[i].raw = grew(d[i].raw, w->prev_ctr[i].raw);
		d[i].time_enabled = grew(d[i].time_enabled, w->prev_ctr[i].time_enabled);
		d[i].time_running = grew(d[i].time_running, w->prev_ctr[i].time_running);
		cp_counter_value_finish(&d[i]);
	}
	memcpy(w->prev_ctr, p->counters, p->nevents * sizeof(*w->prev_ctr));
	return 0;
}

/* The figures that are not counts of the interval: per-request
 * distributions, stacks, the anatomy (judged once the window closes) and
 * the split window's are the whole run's, left out; ops are the
 * interval's requests (an --ops N is the run's). */
static void view_figures(struct cp_profile *v, const struct cp_profile *p, double seconds)
{
	v->duration_s = seconds;
	v->clock_window_s = seconds;
	v->counter_window_s = v->counters_measured ? seconds : 0;
	v->stacks = (struct cp_named_stacks){ 0 };
	v->anatomy = (struct cp_anatomy){ 0 };
	v->dist_event = -1;
	v->dist = (struct cp_dist){ 0 };
	v->cpu_ns_per_request[0] = v->cpu_ns_per_request[1] = 0;
	v->clock_window_cpu_s = 0;
	v->counters_split = false;
	if (p->request_text[0] && p->ops_source != CP_OPS_FLAG) {
		v->ops_source = CP_OPS_REQUEST;
		v->ops = (double)v->totals.requests;
	} else {
		v->ops_source = CP_OPS_NONE;
		v->ops = 0;
	}
}

static json_t *add_interval(json_t *doc, unsigned long index, double start, double end, bool last)
{
	json_object_set_new(doc, "schema", json_string(CP_INTERVAL_SCHEMA));
	json_object_set_new(doc, "interval",
			    json_pack("{s:I, s:f, s:f, s:f, s:b}", "index", (json_int_t)index,
				      "start_s", start, "end_s", end, "seconds", end - start,
				      "last", last));
	return doc;
}

json_t *cp_interval_record_build(struct cp_interval_writer *w, const struct cp_profile *p,
				 bool last)
{
	struct cp_counter_value *ctr = NULL;
	double start = w->prev_s, end = p->duration_s > start ? p->duration_s : start;
	json_t *doc = NULL;

	if (p->nevents && !(ctr = calloc(p->nevents, sizeof(*ctr))))
		return NULL;
	*w->view = *p;
	diff_totals(&w->view->totals, &p->totals, &w->prev);
	w->view->counters = ctr;
	if (diff_sites(w, &p->call_sites) || diff_counters(w, p, ctr) ||
	    keep_sites(w, &p->call_sites))
		goto out;
	view_figures(w->view, p, end - start);
	doc = cp_run_file_build(w->view);
	if (doc)
		add_interval(doc, w->index, start, end, last);
	if (doc && w->on_view)
		w->on_view(w->view, w->view_arg);
	w->prev = p->totals;
	w->prev_s = end;
	w->index++;
out:
	free(ctr);
	w->view->counters = NULL;
	w->view->call_sites = (struct cp_call_sites){ 0 };
	return doc;
}

int cp_interval_record_write(struct cp_interval_writer *w, const struct cp_profile *p, bool last)
{
	json_t *doc = cp_interval_record_build(w, p, last);
	int rc;

	if (!doc) {
		errno = ENOMEM;
		return -1;
	}
	rc = json_dumpf(doc, w->out, JSON_COMPACT);
	json_decref(doc);
	if (rc || fputc('\n', w->out) == EOF || fflush(w->out))
		return -1;
	return 0;
}
