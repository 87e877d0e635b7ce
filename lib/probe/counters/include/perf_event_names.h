/* perf_event_names.h - the -e/--events LIST: perf-style event names with
 * :u/:k modifiers turned into what perf_event_open needs.
 *
 * Users know the names from perf(1) ("instructions:u", "cs", "faults",
 * "L1-dcache-load-misses", "r00c0"), so clockprof accepts the same spellings
 * and aliases. Every spec carries one canonical name ("cs:u" becomes
 * "context-switches:u") because that name is the key of the run.json
 * `counters` member and of the `NAME/op` measures that compare matches
 * across runs: two spellings of one event must compare as one. */
#ifndef CP_PERF_EVENT_NAMES_H
#define CP_PERF_EVENT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cp_error;

struct cp_event_spec {
	char name[64]; /* canonical, with modifiers: "instructions:u" */
	uint32_t type; /* PERF_TYPE_HARDWARE, _SOFTWARE, _HW_CACHE, _RAW */
	uint64_t config;
	bool exclude_user;
	bool exclude_kernel;
	bool exclude_hv;
	const char *unit; /* static: "instructions", "ns", "page-faults" */
};

/* The set counted when -e is not given: the hardware events split by
 * privilege level, then the software events every kernel has. */
const char *cp_events_default_list(void);

/* Parses a comma-separated LIST ("instructions:u,cycles:k,task-clock,cs").
 * On success *specs is a malloc'ed array of *n specs in LIST order (free()
 * it). Unknown names, unknown or sampling-only modifiers, empty items and an
 * event listed twice fail with CP_EXIT_USAGE and one line naming the item
 * (with a "did you mean" for a misspelt name). */
int cp_events_parse(const char *list, struct cp_event_spec **specs, size_t *n,
		    struct cp_error *err);

/* True for events counted by the CPU's PMU (hardware, cache, raw), which
 * exist only where a hardware PMU does. */
bool cp_event_is_hardware(const struct cp_event_spec *spec);

#endif
