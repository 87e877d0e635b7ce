/* test_metrics_text.c - lib/runfile/metrics_text: the Prometheus text of a
 * profile holds its counts exactly, label values from the target escaped
 * per the format (a quote, backslash or newline cannot forge a label or a
 * line), the reads-per-request histogram cumulative, perf counters only
 * where measured, and the sticky call-site labels: the first N sites
 * keep theirs, later ones go to "other", and no value goes down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "metrics_text.h"
#include "profile.h"
#include "unit.h"

static char *render(struct cp_metrics_state *s, const struct cp_profile *p)
{
	struct cp_buf b = { 0 };

	cp_metrics_render(s, p, &b);
	if (b.failed) {
		cp_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* The sample line that starts with head (name and labels), or NULL. */
static const char *line_of(const char *text, const char *head)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, head, strlen(head)) && l[strlen(head)] == ' ')
			return l;
	return NULL;
}

static long long value_of(const char *text, const char *head)
{
	const char *l = line_of(text, head);

	return l ? strtoll(l + strlen(head) + 1, NULL, 10) : -1;
}

static void demo_profile(struct cp_profile *p, struct cp_call_site *sites, char **inl)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->target.exe, sizeof(p->target.exe), "/bin/t");
	snprintf(p->request_text, sizeof(p->request_text), "func:handle_request");
	p->totals.all.reads = 70;
	p->totals.all.by_entry[CP_ENTRY_CLOCK_GETTIME] = 40;
	p->totals.all.by_entry[CP_ENTRY_GETTIMEOFDAY] = 20;
	p->totals.all.by_entry[CP_ENTRY_TIME] = 10;
	p->totals.all.by_path[CP_PATH_VDSO] = 70;
	p->totals.all.by_clock[0] = 40;
	p->totals.all.by_clock[1] = 30;
	p->totals.in_requests.reads = 63;
	p->totals.requests = 9;
	p->totals.hist[7] = 8;
	p->totals.hist[600 > CP_HIST_SLOTS - 1 ? CP_HIST_SLOTS - 1 : 600] = 1;
	p->pause_ms[0] = p->pause_ms[1] = -1;
	sites[0] = (struct cp_call_site){ .function = "handle_request",
					  .file = "t.c",
					  .line = 23,
					  .inlined = inl,
					  .ninlined = 1,
					  .module = "/bin/t",
					  .via = "clock_gettime",
					  .count = 20 };
	sites[1] = (struct cp_call_site){
		.function = "read_time", .module = "/bin/t", .via = "time", .count = 10
	};
	p->call_sites.sites = sites;
	p->call_sites.n = 2;
}

TEST(metrics_counts_exact_and_histogram_cumulative)
{
	static struct cp_profile p;
	struct cp_call_site sites[2];
	char *inl[] = { "now_ns" }, *t;
	struct cp_metrics_state s = { .max_sites = 10 };

	demo_profile(&p, sites, inl);
	t = render(&s, &p);
	CHECK(t);
	CHECK_INT(
		value_of(
			t,
			"clockprof_clock_reads_total{executable=\"/bin/t\",entry=\"clock_gettime\"}"),
		40);
	CHECK_INT(value_of(t, "clockprof_clock_reads_total{executable=\"/bin/t\",entry=\"time\"}"),
		  10);
	CHECK_INT(
		value_of(
			t,
			"clockprof_clock_reads_by_clock_total{executable=\"/bin/t\",clock=\"CLOCK_MONOTONIC\"}"),
		30);
	/* a clock with no reads has no series; a path (fixed set) has its zero */
	CHECK(!strstr(t, "CLOCK_TAI"));
	CHECK_INT(
		value_of(
			t,
			"clockprof_clock_reads_by_path_total{executable=\"/bin/t\",path=\"syscall\"}"),
		0);
	CHECK_INT(
		value_of(
			t,
			"clockprof_call_site_reads_total{executable=\"/bin/t\",site=\"handle_request > now_ns\",location=\"t.c:23\",via=\"clock_gettime\"}"),
		20);
	CHECK_INT(
		value_of(
			t,
			"clockprof_call_site_reads_total{executable=\"/bin/t\",site=\"read_time\",location=\"/bin/t\",via=\"time\"}"),
		10);
	CHECK(!strstr(t, "site=\"other\",location")); /* room for every site */
	CHECK_INT(
		value_of(
			t,
			"clockprof_requests_total{executable=\"/bin/t\",boundary=\"func:handle_request\"}"),
		9);
	CHECK_INT(value_of(t, "clockprof_reads_per_request_bucket{executable=\"/bin/t\",le=\"6\"}"),
		  0);
	CHECK_INT(value_of(t, "clockprof_reads_per_request_bucket{executable=\"/bin/t\",le=\"7\"}"),
		  8);
	CHECK_INT(value_of(t,
			   "clockprof_reads_per_request_bucket{executable=\"/bin/t\",le=\"510\"}"),
		  8);
	CHECK_INT(value_of(t,
			   "clockprof_reads_per_request_bucket{executable=\"/bin/t\",le=\"+Inf\"}"),
		  9);
	CHECK_INT(value_of(t, "clockprof_reads_per_request_sum{executable=\"/bin/t\"}"), 63);
	CHECK_INT(value_of(t, "clockprof_reads_per_request_count{executable=\"/bin/t\"}"), 9);
	CHECK(strstr(t, "# TYPE clockprof_reads_per_request histogram\n"));
	CHECK(strstr(t, "# TYPE clockprof_clock_reads_total counter\n"));
	CHECK(!strstr(t, "pid"));
	CHECK(!strstr(t, "probe_pause_seconds")); /* not the patch: no pause */
	free(t);
	cp_metrics_state_free(&s);
}

TEST(metrics_labels_from_the_target_escaped)
{
	static struct cp_profile p;
	struct cp_call_site sites[2];
	char *inl[] = { "now_ns" }, *t;
	struct cp_metrics_state s = { .max_sites = 10 };

	demo_profile(&p, sites, inl);
	snprintf(p.target.exe, sizeof(p.target.exe), "/srv/a\"b\\c\nd\xff");
	sites[1].function = "evil\"} 99\nclockprof_forged{x=\"1";
	t = render(&s, &p);
	CHECK(t);
	CHECK(strstr(t, "executable=\"/srv/a\\\"b\\\\c\\nd\xef\xbf\xbd\""));
	CHECK(strstr(t, "site=\"evil\\\"} 99\\nclockprof_forged{x=\\\"1\""));
	/* every line is a comment or starts with a clockprof_ sample */
	for (const char *l = t; *l; l = strchr(l, '\n') + 1)
		CHECK(!strncmp(l, "# ", 2) || !strncmp(l, "clockprof_", 10));
	CHECK(!strstr(t, "\nclockprof_forged"));
	free(t);
	cp_metrics_state_free(&s);
}

TEST(metrics_sites_sticky_other_and_never_down)
{
	static struct cp_profile p;
	struct cp_call_site sites[2];
	char *inl[] = { "now_ns" }, *t;
	const char *first =
		"clockprof_call_site_reads_total{executable=\"/bin/t\",site=\"handle_request > now_ns\",location=\"t.c:23\",via=\"clock_gettime\"}";
	const char *other =
		"clockprof_call_site_reads_total{executable=\"/bin/t\",site=\"other\",location=\"\",via=\"\"}";
	struct cp_metrics_state s = { .max_sites = 1 };

	demo_profile(&p, sites, inl);
	/* first snapshot: only read_time is named so far */
	p.call_sites.sites = &sites[1];
	p.call_sites.n = 1;
	t = render(&s, &p);
	CHECK(t && !line_of(t, first));
	CHECK_INT(value_of(t, other), 0); /* the labels are full: "other" from 0 */
	free(t);
	/* second: read_time keeps its label; handle_request, new, is "other" */
	p.call_sites.sites = sites;
	p.call_sites.n = 2;
	sites[1].count = 15;
	t = render(&s, &p);
	CHECK(t);
	CHECK_INT(
		value_of(
			t,
			"clockprof_call_site_reads_total{executable=\"/bin/t\",site=\"read_time\",location=\"/bin/t\",via=\"time\"}"),
		15);
	CHECK_INT(value_of(t, other), 20);
	CHECK(!line_of(t, first));
	free(t);
	/* third: a snapshot that lacks both keeps their last values */
	p.call_sites.n = 0;
	t = render(&s, &p);
	CHECK(t);
	CHECK_INT(
		value_of(
			t,
			"clockprof_call_site_reads_total{executable=\"/bin/t\",site=\"read_time\",location=\"/bin/t\",via=\"time\"}"),
		15);
	CHECK_INT(value_of(t, other), 20);
	free(t);
	cp_metrics_state_free(&s);
}

TEST(metrics_perf_events_only_where_measured)
{
	static struct cp_profile p;
	struct cp_call_site sites[2];
	char *inl[] = { "now_ns" }, *t;
	struct cp_event_spec specs[3] = { { .name = "task-clock", .unit = "ns" },
					  { .name = "cycles:u", .unit = "cycles" },
					  { .name = "context-switches",
					    .unit = "context-switches" } };
	struct cp_counter_value values[3] = { { .supported = true,
						.scaled = true,
						.raw = 3000000000,
						.value = 6000000000,
						.time_enabled = 2000000000,
						.time_running = 1000000000 },
					      { .supported = false },
					      { .supported = true,
						.raw = 947,
						.value = 947,
						.time_enabled = 1000000000,
						.time_running = 1000000000 } };
	struct cp_metrics_state s = { .max_sites = 10 };

	demo_profile(&p, sites, inl);
	p.event_specs = specs;
	p.counters = values;
	p.nevents = 3;
	t = render(&s, &p); /* not measured yet: nothing said about them */
	CHECK(t && !strstr(t, "perf_event"));
	free(t);
	p.counters_measured = true;
	t = render(&s, &p);
	CHECK(t);
	/* one unit a metric, in its name, no unit label: counts of events,
	 * and perf's clocks (ns) in seconds */
	CHECK_INT(
		value_of(
			t,
			"clockprof_perf_events_total{executable=\"/bin/t\",event=\"context-switches\"}"),
		947);
	CHECK_INT(
		value_of(
			t,
			"clockprof_perf_event_seconds_total{executable=\"/bin/t\",event=\"task-clock\"}"),
		3);
	CHECK(!strstr(t, "clockprof_perf_events_total{executable=\"/bin/t\",event=\"task-clock\""));
	CHECK(!strstr(t, "unit="));
	/* raw, never the scaled estimate (which can go down); the times scale it */
	CHECK_INT(
		value_of(
			t,
			"clockprof_perf_event_enabled_seconds_total{executable=\"/bin/t\",event=\"task-clock\"}"),
		2);
	CHECK_INT(
		value_of(
			t,
			"clockprof_perf_event_running_seconds_total{executable=\"/bin/t\",event=\"task-clock\"}"),
		1);
	CHECK(!strstr(t, "clockprof_perf_events_total{executable=\"/bin/t\",event=\"cycles:u\""));
	CHECK(!strstr(
		t, "clockprof_perf_event_seconds_total{executable=\"/bin/t\",event=\"cycles:u\""));
	CHECK_INT(
		value_of(
			t,
			"clockprof_perf_event_supported{executable=\"/bin/t\",event=\"cycles:u\"}"),
		0);
	CHECK_INT(
		value_of(
			t,
			"clockprof_perf_event_supported{executable=\"/bin/t\",event=\"task-clock\"}"),
		1);
	free(t);
	cp_metrics_state_free(&s);
}
