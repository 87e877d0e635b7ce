/* verdict_fixture.c - see verdict_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "compare.h"
#include "run_file.h"
#include "verdict_file.h"
#include "verdict_fixture.h"

json_t *fixture_run_doc(const char *clocksource, const char *kernel)
{
	/* Each document is another run: compare refuses the same run twice. */
	static int serial;
	char started[48];
	json_t *doc = json_pack("{s:s, s:{s:s, s:s}, s:b, s:f, s:{s:i, s:s, s:s, s:s},"
				" s:{s:s, s:s, s:s, s:b, s:s}, s:{s:i}, s:{}}",
				"schema", CP_RUN_SCHEMA, "tool", "name", "clockprof", "version",
				"0.1.0", "complete", 1, "duration_s", 2.0, "target", "pid", 1,
				"comm", "srv", "exe", "/srv", "build_id", "b1", "host", "kernel",
				kernel, "cpu", "x", "clocksource", clocksource, "pmu", 0,
				"tool_version", "0.1.0", "clock_reads", "total", 1, "measures");

	snprintf(started, sizeof(started), "2026-01-01T00:00:00.%06dZ", serial++);
	json_object_set_new(doc, "started_at", json_string(started));
	return doc;
}

static void set_exact(json_t *doc, const char *name, double value, const char *unit)
{
	json_object_set_new(json_object_get(doc, "measures"), name,
			    json_pack("{s:f, s:s, s:s, s:s}", "value", value, "unit", unit, "kind",
				      "exact", "better", "lower"));
}

int fixture_regressed_result(const char *const *names, size_t n, int within,
			     struct fixture_result *f)
{
	static const char *const files[] = { "base.json", "head.json" };
	json_t *b = fixture_run_doc("tsc", "6.1"), *h = fixture_run_doc("tsc", "6.1");
	char name[600];
	int rc = -1;

	memset(f, 0, sizeof(*f));
	f->base = (struct cp_compare_side){ &f->runs[0], files, 1 };
	f->head = (struct cp_compare_side){ &f->runs[1], files + 1, 1 };
	cp_bounds_init_defaults(&f->bounds);
	for (size_t i = 0; i < n; i++) {
		set_exact(b, names[i], 1, "reads/op");
		set_exact(h, names[i], 2, "reads/op");
		if (within) {
			snprintf(name, sizeof(name), "%s.same", names[i]);
			set_exact(b, name, 1, "u");
			set_exact(h, name, 1, "u");
		}
	}
	if (cp_compare_run_from_doc(b, 0, &f->runs[0]) == 0 &&
	    cp_compare_run_from_doc(h, 0, &f->runs[1]) == 0 &&
	    cp_compare(&f->base, &f->head, &f->bounds, NULL, &f->result, NULL) == 0) {
		f->judged = 1;
		rc = 0;
	}
	json_decref(b);
	json_decref(h);
	if (rc)
		fixture_result_free(f);
	return rc;
}

void fixture_result_free(struct fixture_result *f)
{
	if (f->judged)
		cp_compare_result_free(&f->result);
	cp_bounds_free(&f->bounds);
	cp_compare_run_free(&f->runs[0]);
	cp_compare_run_free(&f->runs[1]);
	memset(f, 0, sizeof(*f));
}

json_t *fixture_regressed_verdict(const char *const *names, size_t n, int within)
{
	struct fixture_result f;
	json_t *v;

	if (fixture_regressed_result(names, n, within, &f))
		return NULL;
	v = cp_verdict_build(&f.result, &f.bounds, &f.base, &f.head);
	fixture_result_free(&f);
	return v;
}
