/* test_summary_traps.c - the summary (lib/runfile/summary.c) speaks of
 * traps only where traps were taken: a cost per trap and the counters'
 * "includes their cost" need probe hits, and the mechanism decides what
 * trapped (with the vDSO patch, not the clock reads). The patch once said
 * "about 19.5 us of CPU each" beside 0 traps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "summary.h"
#include "summary_fixture.h"
#include "unit.h"

static struct cp_event_spec task_clock = { .name = "task-clock", .unit = "ns" };
static struct cp_counter_value task_clock_value = { .supported = true, .value = 5e8 };

/* A 2 s window of 100 reads, counters shared with it, counted by m with
 * hits traps; the self-test timed a trap at 19.5 us. */
static void profile_of(struct cp_profile *p, enum cp_mechanism m, unsigned long long hits)
{
	memset(p, 0, sizeof(*p));
	p->target.pid = 42;
	snprintf(p->target.comm, sizeof(p->target.comm), "server");
	snprintf(p->target.exe, sizeof(p->target.exe), "/srv/server");
	p->complete = true;
	p->duration_s = p->clock_window_s = p->counter_window_s = 2;
	p->clock_window_cpu_s = 0.5;
	p->mechanism = p->requested_mechanism = m;
	p->totals.all.reads = 100;
	p->totals.trap_hits = hits;
	p->cost_ns_per_hit = 19500;
	p->selftest.calls = p->selftest.hits = 200;
	p->event_specs = &task_clock;
	p->counters = &task_clock_value;
	p->nevents = 1;
	p->counters_measured = true;
}

TEST(summary_patch_without_traps_says_no_trap_cost)
{
	struct cp_profile p;
	char *text;

	profile_of(&p, CP_MECHANISM_PATCH, 0);
	text = summary_of(&p);
	CHECK(strstr(text, "probe hits (traps) 0 (patch") != NULL);
	CHECK(strstr(text, "us of CPU each") == NULL);
	CHECK(strstr(text, "probe cost") == NULL);
	CHECK(strstr(text, "shared with the clock probes") == NULL);
	CHECK(strstr(text, "shared with the counting, in the target: nothing trapped") != NULL);
	free(text);
}

TEST(summary_uprobe_with_traps_says_their_cost)
{
	struct cp_profile p;
	char *text;

	profile_of(&p, CP_MECHANISM_UPROBE, 100);
	text = summary_of(&p);
	CHECK(strstr(text,
		     "probe hits (traps) 100 (uprobe; self-test: 200 of 200 calls counted), about 19.5 us of CPU each") !=
	      NULL);
	CHECK(strstr(text, "estimated") != NULL);
	CHECK(strstr(text, "shared with the clock probes: includes their cost") != NULL);
	free(text);
}

/* Uprobes placed but never hit (the target read no clock): no cost. */
TEST(summary_uprobe_never_hit_says_nothing_trapped)
{
	struct cp_profile p;
	char *text;

	profile_of(&p, CP_MECHANISM_UPROBE, 0);
	p.totals.all.reads = 0;
	text = summary_of(&p);
	CHECK(strstr(text, "us of CPU each") == NULL);
	CHECK(strstr(text, "includes their cost") == NULL);
	CHECK(strstr(text, "nothing trapped") != NULL);
	free(text);
}

/* The patch with a probe left to the kernel (a boundary it could not
 * close in the target): those traps cost, the clock reads did not. */
TEST(summary_patch_with_boundary_traps_blames_those_probes)
{
	struct cp_profile p;
	char *text;

	profile_of(&p, CP_MECHANISM_PATCH, 10);
	text = summary_of(&p);
	CHECK(strstr(text, "about 19.5 us of CPU each") != NULL);
	CHECK(strstr(text, "shared with the clock probes") == NULL);
	CHECK(strstr(text, "the probes that trapped: includes their cost") != NULL);
	free(text);
}
