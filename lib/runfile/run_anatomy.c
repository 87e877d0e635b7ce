/* run_anatomy.c - see run_anatomy.h. */
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "run_anatomy.h"
#include "utf8.h"

/* A name from the target (valid UTF-8), or null. */
static json_t *text_or_null(const char *s)
{
	char *valid = s ? cp_utf8_dup(s) : NULL;
	json_t *j = valid ? json_string(valid) : json_null();

	free(valid);
	return j ? j : json_null();
}

static json_t *line_or_null(const char *file, int line)
{
	return file && line > 0 ? json_integer(line) : json_null();
}

/* Where the read's function calls the inlined helper that reads, as
 * call_sites[].inlined_at says it; null where nothing is inlined. */
static json_t *inlined_at(const struct cp_anatomy_read *r)
{
	if (r->inlined_at_line <= 0)
		return json_null();
	return json_pack("{s:o, s:i}", "file", text_or_null(r->inlined_at_file), "line",
			 r->inlined_at_line);
}

static json_t *build_read(size_t id, const struct cp_anatomy_read *r)
{
	json_t *callers = json_array();
	char clock[32];

	for (size_t i = 0; i < r->ncallers; i++)
		json_array_append_new(
			callers, json_pack("{s:o, s:o, s:o}", "function",
					   text_or_null(r->callers[i].function), "file",
					   text_or_null(r->callers[i].file), "line",
					   line_or_null(r->callers[i].file, r->callers[i].line)));
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o}", "id", (json_int_t)id,
			 "function", text_or_null(r->function), "file", text_or_null(r->file),
			 "line", line_or_null(r->file, r->line), "inlined_at", inlined_at(r),
			 "module", text_or_null(r->module), "via", text_or_null(r->via), "clock",
			 cp_anatomy_clock_name(r->id.clock, clock, sizeof(clock)), "callers",
			 callers);
}

static json_t *build_step(const struct cp_anatomy_step *st)
{
	json_t *syscalls = json_array();

	for (unsigned i = 0; i < st->nsyscalls; i++) {
		const char *name = cp_anatomy_syscall_name(st->syscalls[i]);
		char unknown[32];

		snprintf(unknown, sizeof(unknown), "syscall %d", (int)st->syscalls[i]);
		json_array_append_new(syscalls, json_string(name ? name : unknown));
	}
	return json_pack("{s:I, s:I, s:I, s:o, s:{s:I, s:I}}", "read", (json_int_t)st->read,
			 "at_ns", (json_int_t)st->at_ns, "gap_ns", (json_int_t)st->gap_ns,
			 "syscalls", syscalls, "switches", "voluntary", (json_int_t)st->voluntary,
			 "preempted", (json_int_t)st->preempted);
}

static json_t *build_shapes(const struct cp_anatomy *a)
{
	json_t *shapes = json_array();

	for (size_t i = 0; i < a->nshapes; i++) {
		const struct cp_anatomy_shape *sh = &a->shapes[i];
		json_t *steps = json_array();

		for (size_t k = 0; k < sh->nsteps; k++)
			json_array_append_new(steps, build_step(&sh->steps[k]));
		json_array_append_new(shapes, json_pack("{s:I, s:f, s:o}", "requests",
							(json_int_t)sh->requests, "share",
							sh->share, "steps", steps));
	}
	return shapes;
}

static json_t *build_reusable(const struct cp_anatomy *a)
{
	json_t *reusable = json_array();

	for (size_t i = 0; i < a->nreusable; i++) {
		const struct cp_anatomy_reuse *u = &a->reusable[i];

		json_array_append_new(reusable,
				      json_pack("{s:I, s:I, s:f, s:{s:I, s:I}, s:f}", "read",
						(json_int_t)u->read, "reuses",
						(json_int_t)u->reuses, "share", u->share, "gap_ns",
						"p50", (json_int_t)u->gap_p50_ns, "p99",
						(json_int_t)u->gap_p99_ns, "per_op", u->per_op));
	}
	return reusable;
}

json_t *cp_run_anatomy_build(const struct cp_anatomy *a)
{
	json_t *reads = json_array();

	for (size_t i = 0; i < a->nreads; i++)
		json_array_append_new(reads, build_read(i, &a->reads[i]));
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:f, s:b, s:o, s:o, s:o, s:I, "
			 "s:o, s:f}",
			 "sample_size", (json_int_t)a->sample_size, "sampled_requests",
			 (json_int_t)a->sampled_requests, "truncated_requests",
			 (json_int_t)a->truncated_requests, "outside_burst_requests",
			 (json_int_t)a->outside_burst_requests, "untimed_requests",
			 (json_int_t)a->untimed_requests, "requests", (json_int_t)a->requests,
			 "every_request", a->every_request, "reuse_gap_ns",
			 (json_int_t)a->reuse_gap_ns, "reuse_share", a->reuse_share, "judged",
			 a->judged, "not_judged_because",
			 a->judged ? json_null() : text_or_null(a->not_judged_because), "reads",
			 reads, "shapes", build_shapes(a), "other_requests",
			 (json_int_t)a->other_requests, "reusable",
			 a->judged ? build_reusable(a) : json_array(), "reusable_per_op",
			 a->judged ? a->reusable_per_op : 0.0);
}

void cp_run_anatomy_measure(json_t *measures, const struct cp_anatomy *a)
{
	if (!a->on || !a->judged)
		return;
	json_object_set_new(measures, CP_REUSABLE_MEASURE,
			    json_pack("{s:f, s:s, s:s, s:s}", "value", a->reusable_per_op, "unit",
				      "reads/op", "kind", a->every_request ? "exact" : "sampled",
				      "better", "lower"));
}

static int bad(struct cp_error *err, const char *what, const char *member, size_t i,
	       const char *problem)
{
	if (i == (size_t)-1)
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid run file: anatomy.%s %s", what,
			       member, problem);
	return cp_fail(err, CP_EXIT_USAGE, "%s: invalid run file: anatomy.reusable[%zu].%s %s",
		       what, i, member, problem);
}

/* Whether o[key] is a whole number in [0, below). */
static bool index_ok(const json_t *o, const char *key, json_int_t below)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < below;
}

static int check_reuse(const json_t *u, size_t i, json_int_t nreads, const char *what,
		       struct cp_error *err)
{
	const json_t *gap = json_object_get(u, "gap_ns");
	double share = json_number_value(json_object_get(u, "share"));

	if (!index_ok(u, "read", nreads))
		return bad(err, what, "read", i, "is not the index of one of anatomy.reads");
	if (!index_ok(u, "reuses", nreads))
		return bad(err, what, "reuses", i, "is not the index of one of anatomy.reads");
	if (!json_is_number(json_object_get(u, "share")) || share < 0 || share > 1)
		return bad(err, what, "share", i, "is not a number from 0 to 1");
	if (!json_is_number(json_object_get(u, "per_op")) ||
	    json_number_value(json_object_get(u, "per_op")) < 0)
		return bad(err, what, "per_op", i, "is not a number of at least 0");
	if (!index_ok(gap, "p50", INT64_MAX) || !index_ok(gap, "p99", INT64_MAX))
		return bad(err, what, "gap_ns", i, "lacks whole numbers p50 and p99");
	return 0;
}

int cp_run_anatomy_validate(const json_t *doc, const char *what, struct cp_error *err)
{
	static const char *const counts[] = { "sampled_requests", "truncated_requests", "requests",
					      "other_requests" };
	static const char *const optional[] = { "outside_burst_requests", "untimed_requests" };
	const json_t *a = json_object_get(doc, "anatomy"), *u;
	const json_t *reads = json_object_get(a, "reads"),
		     *reusable = json_object_get(a, "reusable");
	size_t i;

	if (!a)
		return 0;
	if (!json_is_object(a))
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid run file: anatomy is not an object",
			       what);
	if (!json_is_boolean(json_object_get(a, "judged")))
		return bad(err, what, "judged", (size_t)-1, "is not true or false");
	if (!json_is_array(reads) || !json_is_array(json_object_get(a, "shapes")) ||
	    !json_is_array(reusable))
		return bad(err, what, "reads, shapes or reusable", (size_t)-1, "is not an array");
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (!index_ok(a, counts[i], INT64_MAX))
			return bad(err, what, counts[i], (size_t)-1, "is not a whole number");
	for (i = 0; i < 2; i++) /* added since: optional */
		if (json_object_get(a, optional[i]) && !index_ok(a, optional[i], INT64_MAX))
			return bad(err, what, optional[i], (size_t)-1, "is not a whole number");
	json_array_foreach(reusable, i, u)
		if (check_reuse(u, i, (json_int_t)json_array_size(reads), what, err))
			return -1;
	return 0;
}
