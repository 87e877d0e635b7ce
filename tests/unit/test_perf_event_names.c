/* test_perf_event_names.c - the -e/--events parser: perf's names, aliases
 * and modifiers, canonical names, and one clear error per mistake. */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "perf_event_names.h"
#include "unit.h"

static struct cp_event_spec *parse_ok(const char *list, size_t *n)
{
	struct cp_event_spec *specs = NULL;
	struct cp_error err = { 0 };

	if (cp_events_parse(list, &specs, n, &err))
		return NULL;
	return specs;
}

static const char *parse_err(const char *list, struct cp_error *err)
{
	struct cp_event_spec *specs = NULL;
	size_t n = 99;

	memset(err, 0, sizeof(*err));
	if (cp_events_parse(list, &specs, &n, err) == 0) {
		free(specs);
		return NULL;
	}
	if (specs || n != 0)
		return "(output not cleared)";
	return err->msg;
}

TEST(events_default_list)
{
	static const char *const want[] = {
		"instructions:u",  "instructions:k",   "branches:u",	 "branches:k",
		"branch-misses:u", "branch-misses:k",  "cycles:u",	 "cycles:k",
		"task-clock",	   "context-switches", "cpu-migrations", "page-faults",
	};
	size_t n;
	struct cp_event_spec *s = parse_ok(cp_events_default_list(), &n);

	CHECK(s);
	CHECK_INT(n, 12);
	for (size_t i = 0; i < n; i++)
		CHECK_STR(s[i].name, want[i]);
	CHECK_INT(s[0].type, PERF_TYPE_HARDWARE);
	CHECK_INT(s[0].config, PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(!s[0].exclude_user && s[0].exclude_kernel && s[0].exclude_hv);
	CHECK(s[1].exclude_user && !s[1].exclude_kernel && s[1].exclude_hv);
	CHECK(cp_event_is_hardware(&s[7]));
	CHECK_INT(s[8].type, PERF_TYPE_SOFTWARE);
	CHECK_INT(s[8].config, PERF_COUNT_SW_TASK_CLOCK);
	CHECK(!s[8].exclude_user && !s[8].exclude_kernel && !s[8].exclude_hv);
	CHECK(!cp_event_is_hardware(&s[8]));
	CHECK_STR(s[0].unit, "instructions");
	CHECK_STR(s[8].unit, "ns");
	CHECK_STR(s[11].unit, "page-faults");
	free(s);
}

TEST(events_aliases_are_canonical)
{
	size_t n;
	struct cp_event_spec *s = parse_ok(
		" cs , faults:u,cpu-cycles:k,branch-instructions,migrations,idle-cycles-frontend",
		&n);

	CHECK(s);
	CHECK_INT(n, 6);
	CHECK_STR(s[0].name, "context-switches");
	CHECK_INT(s[0].config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	CHECK_STR(s[1].name, "page-faults:u");
	CHECK_INT(s[1].config, PERF_COUNT_SW_PAGE_FAULTS);
	CHECK(s[1].exclude_kernel && !s[1].exclude_user);
	CHECK_STR(s[2].name, "cycles:k");
	CHECK_INT(s[2].config, PERF_COUNT_HW_CPU_CYCLES);
	CHECK_STR(s[3].name, "branches");
	CHECK_STR(s[4].name, "cpu-migrations");
	CHECK_STR(s[5].name, "stalled-cycles-frontend");
	free(s);
}

TEST(events_modifier_order_and_case)
{
	size_t n;
	struct cp_event_spec *s = parse_ok("Instructions:ku,TASK-CLOCK:u,cycles:h", &n);

	CHECK(s);
	CHECK_INT(n, 3);
	CHECK_STR(s[0].name, "instructions:uk");
	CHECK(!s[0].exclude_user && !s[0].exclude_kernel && s[0].exclude_hv);
	CHECK_STR(s[1].name, "task-clock:u");
	CHECK_STR(s[2].name, "cycles:h");
	CHECK(s[2].exclude_user && s[2].exclude_kernel && !s[2].exclude_hv);
	free(s);
}

TEST(events_cache_and_raw)
{
	size_t n;
	struct cp_event_spec *s = parse_ok(
		"L1-dcache-load-misses,llc-loads:u,dTLB-store-misses,r00C0:u", &n);

	CHECK(s);
	CHECK_INT(n, 4);
	CHECK_STR(s[0].name, "L1-dcache-load-misses");
	CHECK_INT(s[0].type, PERF_TYPE_HW_CACHE);
	CHECK_INT(s[0].config, PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_READ << 8 |
				       PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	CHECK_STR(s[1].name, "LLC-loads:u");
	CHECK_INT(s[1].config, PERF_COUNT_HW_CACHE_LL | PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16);
	CHECK_STR(s[2].name, "dTLB-store-misses");
	CHECK_INT(s[2].config, PERF_COUNT_HW_CACHE_DTLB | PERF_COUNT_HW_CACHE_OP_WRITE << 8 |
				       PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	CHECK_STR(s[3].name, "rc0:u");
	CHECK_INT(s[3].type, PERF_TYPE_RAW);
	CHECK_INT(s[3].config, 0xc0);
	CHECK(cp_event_is_hardware(&s[0]) && cp_event_is_hardware(&s[3]));
	free(s);
}

TEST(events_unknown_name_suggests)
{
	struct cp_error err;
	const char *msg = parse_err("instructions:u,instrutions:k", &err);

	CHECK(msg);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(msg, "unknown event \"instrutions\""));
	CHECK(strstr(msg, "did you mean instructions"));
	msg = parse_err("context-switch", &err);
	CHECK(msg && strstr(msg, "context-switches"));
	msg = parse_err("sched:sched_switch", &err);
	CHECK(msg && strstr(msg, "tracepoint") && !strstr(msg, "unknown event"));
	msg = parse_err("zzzzzzzzzz", &err);
	CHECK(msg && strstr(msg, "unknown event") && !strstr(msg, "did you mean"));
	msg = parse_err("r", &err);
	CHECK(msg && strstr(msg, "unknown event \"r\""));
	msg = parse_err("rxyz", &err);
	CHECK(msg && strstr(msg, "unknown event"));
}

TEST(events_bad_modifiers)
{
	struct cp_error err;
	const char *msg;

	msg = parse_err("cycles:p", &err);
	CHECK(msg && strstr(msg, "'p'") && strstr(msg, "does not sample"));
	msg = parse_err("cycles:x", &err);
	CHECK(msg && strstr(msg, "unknown modifier 'x'"));
	msg = parse_err("cycles:", &err);
	CHECK(msg && strstr(msg, "empty modifier"));
	msg = parse_err(":u", &err);
	CHECK(msg && strstr(msg, "no event name"));
	/* Scheduler events happen in the kernel: user-only is always 0. */
	msg = parse_err("cs:u", &err);
	CHECK(msg && strstr(msg, "would always count 0"));
	msg = parse_err("cpu-migrations:u", &err);
	CHECK(msg && strstr(msg, "would always count 0"));
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
}

TEST(events_list_shape_errors)
{
	struct cp_error err;
	const char *msg;

	msg = parse_err("", &err);
	CHECK(msg && strstr(msg, "empty list"));
	msg = parse_err("cycles,,cs", &err);
	CHECK(msg && strstr(msg, "empty item"));
	msg = parse_err("cycles,", &err);
	CHECK(msg && strstr(msg, "empty item"));
	msg = parse_err("cs,context-switches", &err);
	CHECK(msg &&
	      strstr(msg,
		     "\"context-switches\" is listed twice (the second time as \"context-switches\")"));
	msg = parse_err("cycles:u,cpu-cycles:u", &err);
	CHECK(msg && strstr(msg, "listed twice"));
	/* Same event at different levels is not a duplicate. */
	size_t n;
	struct cp_event_spec *s = parse_ok("cycles:u,cycles:k,cycles", &n);

	CHECK(s);
	CHECK_INT(n, 3);
	free(s);
}

TEST(events_many_items)
{
	char list[4096] = "";
	size_t n;
	struct cp_event_spec *s;

	/* More than the parser's first allocation (16). */
	for (int i = 0; i < 40; i++) {
		char item[32];

		snprintf(item, sizeof(item), "%sr%x", i ? "," : "", i + 1);
		strcat(list, item);
	}
	s = parse_ok(list, &n);
	CHECK(s);
	CHECK_INT(n, 40);
	CHECK_STR(s[39].name, "r28");
	free(s);
}
