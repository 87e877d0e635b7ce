/* perf_event_names.c - see perf_event_names.h. The names and aliases are
 * perf(1)'s (tools/perf "perf list"), so a command line copied from a perf
 * stat session works unchanged. */
#include <ctype.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "grow.h"
#include "perf_event_names.h"
#include "suggest.h"

struct named_event {
	const char *name;  /* canonical */
	const char *alias; /* or NULL */
	uint32_t type;
	uint64_t config;
	const char *unit;
};

static const struct named_event named_events[] = {
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles" },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions" },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
	  "cache-references" },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache-misses" },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	  "branches" },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses" },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus-cycles" },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles" },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles" },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "cycles" },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "ns" },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns" },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults" },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	  "context-switches" },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	  "cpu-migrations" },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "page-faults" },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page-faults" },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "faults" },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "faults" },
	{ "cgroup-switches", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES,
	  "context-switches" },
};

/* Generic cache events are "<cache>-<op>s" or "<cache>-<op>-misses". */
static const struct {
	const char *name;
	uint64_t id;
} cache_ids[] = {
	{ "L1-dcache", PERF_COUNT_HW_CACHE_L1D }, { "L1-icache", PERF_COUNT_HW_CACHE_L1I },
	{ "LLC", PERF_COUNT_HW_CACHE_LL },	  { "dTLB", PERF_COUNT_HW_CACHE_DTLB },
	{ "iTLB", PERF_COUNT_HW_CACHE_ITLB },	  { "branch", PERF_COUNT_HW_CACHE_BPU },
	{ "node", PERF_COUNT_HW_CACHE_NODE },
};

static const struct {
	const char *access; /* "loads" */
	const char *miss;   /* "load-misses" */
	uint64_t id;
} cache_ops[] = {
	{ "loads", "load-misses", PERF_COUNT_HW_CACHE_OP_READ },
	{ "stores", "store-misses", PERF_COUNT_HW_CACHE_OP_WRITE },
	{ "prefetches", "prefetch-misses", PERF_COUNT_HW_CACHE_OP_PREFETCH },
};

/* A few cache names for "did you mean"; the full set is the product. */
static const char *const cache_examples[] = {
	"L1-dcache-loads", "L1-dcache-load-misses", "L1-icache-load-misses", "LLC-loads",
	"LLC-load-misses", "dTLB-load-misses",	    "iTLB-load-misses",
};

static const char default_list[] = "instructions:u,instructions:k,branches:u,branches:k,"
				   "branch-misses:u,branch-misses:k,cycles:u,cycles:k,"
				   "task-clock,context-switches,cpu-migrations,page-faults";

const char *cp_events_default_list(void)
{
	return default_list;
}

bool cp_event_is_hardware(const struct cp_event_spec *spec)
{
	return spec->type == PERF_TYPE_HARDWARE || spec->type == PERF_TYPE_HW_CACHE ||
	       spec->type == PERF_TYPE_RAW;
}

static bool lookup_named(const char *base, struct cp_event_spec *s)
{
	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		const struct named_event *e = &named_events[i];

		if (strcasecmp(base, e->name) && !(e->alias && !strcasecmp(base, e->alias)))
			continue;
		snprintf(s->name, sizeof(s->name), "%s", e->name);
		s->type = e->type;
		s->config = e->config;
		s->unit = e->unit;
		return true;
	}
	return false;
}

static bool lookup_cache(const char *base, struct cp_event_spec *s)
{
	for (size_t c = 0; c < sizeof(cache_ids) / sizeof(cache_ids[0]); c++) {
		size_t len = strlen(cache_ids[c].name);
		const char *rest = base + len;

		if (strncasecmp(base, cache_ids[c].name, len) || *rest != '-')
			continue;
		rest++;
		for (size_t o = 0; o < sizeof(cache_ops) / sizeof(cache_ops[0]); o++) {
			bool miss = !strcasecmp(rest, cache_ops[o].miss);

			if (!miss && strcasecmp(rest, cache_ops[o].access))
				continue;
			snprintf(s->name, sizeof(s->name), "%s-%s", cache_ids[c].name,
				 miss ? cache_ops[o].miss : cache_ops[o].access);
			s->type = PERF_TYPE_HW_CACHE;
			s->config = cache_ids[c].id | cache_ops[o].id << 8 |
				    (uint64_t)(miss ? PERF_COUNT_HW_CACHE_RESULT_MISS :
						      PERF_COUNT_HW_CACHE_RESULT_ACCESS)
					    << 16;
			s->unit = "events";
			return true;
		}
	}
	return false;
}

/* "r" and 1 to 16 hex digits: a raw PMU event code, as in perf. */
static bool lookup_raw(const char *base, struct cp_event_spec *s)
{
	size_t len = strlen(base);
	char *end;

	if (len < 2 || len > 17 || (base[0] != 'r' && base[0] != 'R'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isxdigit((unsigned char)base[i]))
			return false;
	s->type = PERF_TYPE_RAW;
	s->config = strtoull(base + 1, &end, 16);
	snprintf(s->name, sizeof(s->name), "r%llx", (unsigned long long)s->config);
	s->unit = "events";
	return true;
}

static int unknown_event(const char *base, const char *item, struct cp_error *err)
{
	const char *colon = strchr(item, ':');

	struct cp_suggest sg;
	char hint[200];

	/* "sched:sched_switch": after the colon a name, not modifiers. */
	if (colon && colon[1 + strspn(colon + 1, "ukhpPGHI")] != '\0')
		return cp_fail(
			err, CP_EXIT_USAGE,
			"--events: \"%.80s\" looks like a tracepoint; clockprof counts hardware and software events only (e.g. instructions:u, task-clock, cs)",
			item);

	cp_suggest_init(&sg, base);
	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		cp_suggest_add(&sg, named_events[i].name);
		if (named_events[i].alias)
			cp_suggest_add(&sg, named_events[i].alias);
	}
	for (size_t i = 0; i < sizeof(cache_examples) / sizeof(cache_examples[0]); i++)
		cp_suggest_add(&sg, cache_examples[i]);
	cp_suggest_format(&sg, hint, sizeof(hint));
	return cp_fail(
		err, CP_EXIT_USAGE,
		"--events: unknown event \"%.80s\"%s (names as in perf list, e.g. instructions:u, task-clock, cs)",
		base, hint);
}

/* perf's rule: naming any of u, k, h excludes the levels not named. */
static int parse_modifiers(const char *item, const char *mods, struct cp_event_spec *s,
			   struct cp_error *err)
{
	bool u = false, k = false, h = false;

	if (!*mods)
		return cp_fail(err, CP_EXIT_USAGE,
			       "--events: \"%.80s\" has an empty modifier after ':' (use :u or :k)",
			       item);
	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'p':
		case 'P':
		case 'S':
		case 'D':
		case 'W':
		case 'I':
		case 'G':
		case 'H':
		case 'e':
		case 'b':
			return cp_fail(
				err, CP_EXIT_USAGE,
				"--events: modifier '%c' of \"%.80s\" is not supported: clockprof counts events, it does not sample them (use :u or :k)",
				*m, item);
		default:
			return cp_fail(
				err, CP_EXIT_USAGE,
				"--events: unknown modifier '%c' in \"%.80s\" (use :u for user space, :k for the kernel)",
				*m, item);
		}
	}
	s->exclude_user = !u;
	s->exclude_kernel = !k;
	s->exclude_hv = !h;
	size_t len = strlen(s->name);
	snprintf(s->name + len, sizeof(s->name) - len, ":%s%s%s", u ? "u" : "", k ? "k" : "",
		 h ? "h" : "");
	return 0;
}

static int parse_item(const char *item, struct cp_event_spec *s, struct cp_error *err)
{
	char base[128];
	const char *colon = strchr(item, ':');
	size_t len = colon ? (size_t)(colon - item) : strlen(item);

	memset(s, 0, sizeof(*s));
	if (len == 0)
		return cp_fail(err, CP_EXIT_USAGE,
			       "--events: \"%.80s\" has no event name before ':'", item);
	if (len >= sizeof(base))
		return cp_fail(err, CP_EXIT_USAGE, "--events: event name \"%.60s...\" is too long",
			       item);
	memcpy(base, item, len);
	base[len] = '\0';
	if (!lookup_named(base, s) && !lookup_cache(base, s) && !lookup_raw(base, s))
		return unknown_event(base, item, err);
	if (colon && parse_modifiers(item, colon + 1, s, err))
		return -1;
	/* The scheduler counts these in kernel context: user-only they read
	 * 0 whatever the program does, a number that would only mislead. */
	if (s->type == PERF_TYPE_SOFTWARE && s->exclude_kernel &&
	    (s->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
	     s->config == PERF_COUNT_SW_CPU_MIGRATIONS ||
	     s->config == PERF_COUNT_SW_CGROUP_SWITCHES))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"--events: \"%.80s\" would always count 0: %.40s happen in the kernel, so they cannot be counted user-only (drop the modifier)",
			item, base);
	return 0;
}

int cp_events_parse(const char *list, struct cp_event_spec **specs, size_t *n, struct cp_error *err)
{
	struct cp_event_spec *out = NULL;
	size_t count = 0, cap = 0;
	const char *p = list;

	*specs = NULL;
	*n = 0;
	if (!list || !*list)
		return cp_fail(
			err, CP_EXIT_USAGE,
			"--events: empty list (give names such as instructions:u,task-clock)");
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[160];

		while (len && isspace((unsigned char)*p))
			p++, len--;
		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		if (len == 0) {
			free(out);
			return cp_fail(
				err, CP_EXIT_USAGE,
				"--events: empty item in \"%.100s\" (remove the extra comma)",
				list);
		}
		if (len >= sizeof(item)) {
			free(out);
			return cp_fail(err, CP_EXIT_USAGE,
				       "--events: item \"%.60s...\" is too long", p);
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (cp_grow(&out, &cap, count + 1, sizeof(*out))) {
			free(out);
			return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
		}
		if (parse_item(item, &out[count], err)) {
			free(out);
			return -1;
		}
		for (size_t i = 0; i < count; i++) {
			if (strcmp(out[i].name, out[count].name))
				continue;
			cp_fail(err, CP_EXIT_USAGE,
				"--events: \"%s\" is listed twice (the second time as \"%s\")",
				out[i].name, item);
			free(out);
			return -1;
		}
		count++;
		if (!end)
			break;
		p = end + 1;
	}
	*specs = out;
	*n = count;
	return 0;
}
