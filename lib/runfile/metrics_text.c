/* metrics_text.c - see metrics_text.h. Every sample carries the label
 * executable (the path the target was started by, where known and
 * absolute: the name its users know, a symlink's; else /proc/PID/exe);
 * none carries a pid.
 * Every string from the target or the command line goes through
 * cp_buf_prom_label (prom_escape.h). Counters end in _total; a family is
 * written only when it has samples, and perf counters only where one was
 * measured: an event this host cannot count has no counter at all (never
 * a made-up zero), only clockprof_perf_event_supported 0. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "clock_names.h"
#include "metrics_sites.h"
#include "metrics_text.h"
#include "profile.h"
#include "prom_escape.h"
#include "version.h"

/* The upper bounds (le) of the reads-per-request histogram: exact counts
 * up to 10, then wider; the BPF program's histogram is exact per count up
 * to CP_HIST_SLOTS - 2, so each bucket is an exact sum. */
static const unsigned int hist_bounds[] = {
	0,   1,	  2,   3,   4,
	5,   6,	  7,   8,   9,
	10,  12,  14,  16,  20,
	24,  32,  48,  64,  96,
	128, 192, 256, 384, CP_HIST_SLOTS - 2,
};

static void family(struct cp_buf *b, const char *name, const char *type, const char *help)
{
	cp_buf_printf(b, "# HELP clockprof_%s %s\n# TYPE clockprof_%s %s\n", name, help, name,
		      type);
}

/* The executable label: /usr/bin/redis-server as started, not the
 * /usr/bin/redis-check-rdb it links to; a relative path (./server) would
 * depend on where it was started from: the kernel's then. */
static const char *executable(const struct cp_profile *p)
{
	return p->target.exec_path[0] == '/' ? p->target.exec_path : p->target.exe;
}

/* The start of a sample: name{executable="..." (the caller adds its other
 * labels, each starting with a comma, and ends it with sample_end). */
static void sample(struct cp_buf *b, const struct cp_profile *p, const char *name)
{
	cp_buf_printf(b, "clockprof_%s{executable=\"", name);
	cp_buf_prom_label(b, executable(p));
	cp_buf_puts(b, "\"");
}

static void label(struct cp_buf *b, const char *key, const char *value)
{
	cp_buf_printf(b, ",%s=\"", key);
	cp_buf_prom_label(b, value);
	cp_buf_puts(b, "\"");
}

/* A sample with its first label past the executable. */
static void sample_by(struct cp_buf *b, const struct cp_profile *p, const char *name,
		      const char *key, const char *value)
{
	sample(b, p, name);
	label(b, key, value);
}

static void end_u64(struct cp_buf *b, unsigned long long v)
{
	cp_buf_printf(b, "} %llu\n", v);
}

static void end_double(struct cp_buf *b, double v)
{
	cp_buf_printf(b, "} %.17g\n", v);
}

/* One counter by a label whose values are names of an index (entry, clock,
 * path); zero counts written unless skip_zero. */
static void counts_by(struct cp_buf *b, const struct cp_profile *p, const char *name,
		      const char *key, const __u64 *counts, int n, const char *(*of)(int),
		      int skip_zero)
{
	for (int i = 0; i < n; i++) {
		if (skip_zero && !counts[i])
			continue;
		sample_by(b, p, name, key, of(i));
		end_u64(b, counts[i]);
	}
}

static void clock_reads(struct cp_buf *b, const struct cp_profile *p)
{
	const struct cp_read_counts *all = &p->totals.all;

	family(b, "clock_reads_total", "counter",
	       "Clock reads counted (every one, never sampled), by the entry called.");
	counts_by(b, p, "clock_reads_total", "entry", all->by_entry, CP_ENTRY_MAX, cp_entry_name,
		  0);
	family(b, "clock_reads_by_clock_total", "counter", "Clock reads by clock id.");
	counts_by(b, p, "clock_reads_by_clock_total", "clock", all->by_clock, CP_CLOCK_SLOTS,
		  cp_clock_name, 1);
	family(b, "clock_reads_by_path_total", "counter",
	       "Clock reads by the path that served them: vdso (user space) or syscall.");
	counts_by(b, p, "clock_reads_by_path_total", "path", all->by_path, CP_PATH_MAX,
		  cp_path_name, 0);
	family(b, "clock_reads_in_requests_total", "counter",
	       "Clock reads inside complete requests.");
	sample(b, p, "clock_reads_in_requests_total");
	end_u64(b, p->totals.in_requests.reads);
}

static void call_sites(struct cp_buf *b, struct cp_metrics_state *s, const struct cp_profile *p)
{
	if (cp_metrics_sites_update(s, &p->call_sites))
		b->failed = 1;
	if (!s->n && !s->other)
		return;
	family(b, "call_site_reads_total", "counter",
	       "Clock reads by call site; sites past the labelled ones are summed in site=\"other\".");
	for (size_t i = 0; i < s->n; i++) {
		sample_by(b, p, "call_site_reads_total", "site", s->sites[i].site);
		label(b, "location", s->sites[i].location);
		label(b, "via", s->sites[i].via);
		end_u64(b, s->sites[i].value);
	}
	if (s->n < s->max_sites && !s->other)
		return;
	sample(b, p, "call_site_reads_total");
	cp_buf_puts(b, ",site=\"other\",location=\"\",via=\"\"");
	end_u64(b, s->other);
}

static void extra_probes(struct cp_buf *b, const struct cp_profile *p)
{
	if (!p->nprobes)
		return;
	family(b, "probe_calls_total", "counter", "Calls of a --probe entry point.");
	for (int i = 0; i < p->nprobes; i++) {
		sample_by(b, p, "probe_calls_total", "probe", p->probes[i].symbol);
		end_u64(b, p->totals.all.probe_calls[i]);
	}
}

/* Requests and reads per request, a histogram: cumulative buckets from
 * the exact per-count histogram, its sum the reads inside requests. */
static void requests(struct cp_buf *b, const struct cp_profile *p)
{
	const struct cp_totals *t = &p->totals;
	unsigned long long below = 0;
	unsigned int next = 0;

	if (!p->request_text[0])
		return;
	family(b, "requests_total", "counter", "Complete requests (boundary to boundary).");
	sample_by(b, p, "requests_total", "boundary", p->request_text);
	end_u64(b, t->requests);
	family(b, "reads_per_request", "histogram", "Clock reads in one complete request.");
	for (size_t i = 0; i < sizeof(hist_bounds) / sizeof(hist_bounds[0]); i++) {
		char le[16];

		for (; next <= hist_bounds[i]; next++)
			below += t->hist[next];
		snprintf(le, sizeof(le), "%u", hist_bounds[i]);
		sample_by(b, p, "reads_per_request_bucket", "le", le);
		end_u64(b, below);
	}
	sample_by(b, p, "reads_per_request_bucket", "le", "+Inf");
	end_u64(b, t->requests);
	sample(b, p, "reads_per_request_sum");
	end_u64(b, t->in_requests.reads);
	sample(b, p, "reads_per_request_count");
	end_u64(b, t->requests);
}

static void lost(struct cp_buf *b, const struct cp_profile *p)
{
	const struct cp_totals *t = &p->totals;
	const struct {
		const char *kind;
		__u64 n;
	} kinds[] = {
		{ "site_unnamed", t->site_unnamed },
		{ "site_uncredited", t->site_uncredited },
		{ "stack_dropped", t->stack_drops },
		{ "stack_copy_dropped", t->stack_copy_drops },
		{ "stack_preempted", t->stacks_preempted },
	};

	family(b, "lost_events_total", "counter",
	       "Reads counted but not attributed in full (docs/metrics.md says each kind).");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		sample_by(b, p, "lost_events_total", "kind", kinds[i].kind);
		end_u64(b, kinds[i].n);
	}
}

/* How the reads were seen: the mechanism, whether auto fell back (and
 * why), the pauses of the patch, the traps, the window so far. */
static void health(struct cp_buf *b, const struct cp_profile *p)
{
	static const char *const phase[2] = { "attach", "detach" };

	family(b, "probe_info", "gauge",
	       "1, labelled with the mechanism that counts, the one asked for and why auto fell back (\"\": it did not).");
	sample_by(b, p, "probe_info", "mechanism", cp_mechanism_name(p->mechanism));
	label(b, "requested", cp_mechanism_name(p->requested_mechanism));
	label(b, "fallback_reason", p->fallback_reason);
	end_u64(b, 1);
	family(b, "probe_fallback", "gauge",
	       "1 when auto counted with the fallback, not the patch.");
	sample(b, p, "probe_fallback");
	end_u64(b, p->fallback_reason[0] != '\0');
	if (p->pause_ms[0] >= 0 || p->pause_ms[1] >= 0)
		family(b, "probe_pause_seconds", "gauge",
		       "How long one thread of the target was held to attach or detach the patch.");
	for (int i = 0; i < 2; i++) {
		if (p->pause_ms[i] < 0)
			continue;
		sample_by(b, p, "probe_pause_seconds", "phase", phase[i]);
		end_double(b, p->pause_ms[i] / 1000);
	}
	family(b, "probe_hits_total", "counter",
	       "Probe hits that trap (uprobes, breakpoints, the boundary).");
	sample(b, p, "probe_hits_total");
	end_u64(b, p->totals.trap_hits);
	family(b, "attach_seconds", "gauge", "From clockprof's start until the probes were live.");
	sample(b, p, "attach_seconds");
	end_double(b, p->attach_s);
	family(b, "window_seconds", "gauge", "How long the window has been open.");
	sample(b, p, "window_seconds");
	end_double(b, p->duration_s);
	lost(b, p);
}

/* The perf counter families: each raw count in its base unit (events,
 * or seconds for the clocks perf counts in ns: one unit a metric, as
 * Prometheus wants), then the two times that scale them. */
enum perf_family { PERF_EVENTS, PERF_SECONDS, PERF_ENABLED, PERF_RUNNING };

static bool counts_time(const struct cp_event_spec *e)
{
	return e->unit && strcmp(e->unit, "ns") == 0;
}

static bool in_family(const struct cp_profile *p, size_t i, enum perf_family f)
{
	if (!p->counters[i].supported)
		return false;
	if (f == PERF_EVENTS || f == PERF_SECONDS)
		return counts_time(&p->event_specs[i]) == (f == PERF_SECONDS);
	return true;
}

/* One counter family over the supported events that belong to it;
 * nothing when none does. */
static void perf_counter_family(struct cp_buf *b, const struct cp_profile *p, const char *name,
				const char *help, enum perf_family f)
{
	bool any = false;

	for (size_t i = 0; i < p->nevents; i++) {
		const struct cp_counter_value *v = &p->counters[i];

		if (!in_family(p, i, f))
			continue;
		if (!any)
			family(b, name, "counter", help);
		any = true;
		sample_by(b, p, name, "event", p->event_specs[i].name);
		if (f == PERF_EVENTS)
			end_u64(b, v->raw);
		else
			end_double(b, (f == PERF_SECONDS ? v->raw :
				       f == PERF_ENABLED ? v->time_enabled :
							   v->time_running) /
					      1e9);
	}
}

/* Perf counters where measured; an unsupported event has no counter. */
static void perf_events(struct cp_buf *b, const struct cp_profile *p)
{
	int any = 0;

	if (!p->nevents || !p->counters_measured)
		return;
	family(b, "perf_event_supported", "gauge",
	       "1 when this host counts the perf event, 0 when it cannot (then it has no counter).");
	for (size_t i = 0; i < p->nevents; i++) {
		sample_by(b, p, "perf_event_supported", "event", p->event_specs[i].name);
		end_u64(b, p->counters[i].supported);
		any |= p->counters[i].supported;
	}
	if (!any)
		return;
	/* Raw counts and the two times, never the scaled estimate: a scaled
	 * value can go down when the running ratio changes, which Prometheus
	 * would take for a counter reset. raw * enabled / running scales. */
	perf_counter_family(b, p, "perf_events_total",
			    "Perf events counted in the counter window, raw (while on the PMU).",
			    PERF_EVENTS);
	perf_counter_family(
		b, p, "perf_event_seconds_total",
		"Time counted by a perf clock event (task-clock, cpu-clock) in the counter window, raw (while on the PMU), in seconds.",
		PERF_SECONDS);
	perf_counter_family(b, p, "perf_event_enabled_seconds_total",
			    "Time each perf event was enabled, in seconds.", PERF_ENABLED);
	perf_counter_family(
		b, p, "perf_event_running_seconds_total",
		"Time each perf event was on the PMU, in seconds (below enabled: multiplexed).",
		PERF_RUNNING);
}

void cp_metrics_render(struct cp_metrics_state *s, const struct cp_profile *p, struct cp_buf *b)
{
	family(b, "build_info", "gauge", "1, labelled with clockprof's version.");
	cp_buf_printf(b, "clockprof_build_info{version=\"%s\"} 1\n", CLOCKPROF_VERSION);
	family(b, "executable_info", "gauge",
	       "1, labelled with the file the kernel runs (/proc/PID/exe) for the executable label.");
	sample_by(b, p, "executable_info", "file", p->target.exe);
	end_u64(b, 1);
	clock_reads(b, p);
	call_sites(b, s, p);
	extra_probes(b, p);
	requests(b, p);
	health(b, p);
	perf_events(b, p);
}
