/* compare_reusable.c - see compare_reusable.h. A reusable read is matched
 * between runs by what it is, not by its id (which holds only in its run):
 * its read and the earlier read it could reuse, each by function, file,
 * line and callers (anatomy_reads.h). Base's entry is named as removed
 * when every base run whose reuse was judged lists it and no head run
 * whose reuse was judged does, so that a read near the share limit,
 * listed in some runs only, is not named. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anatomy_reads.h"
#include "compare_notes.h"
#include "compare_reusable.h"
#include "json_file.h"

/* A run's anatomy when its reuse was judged, else NULL. */
static const json_t *judged_anatomy(const struct cp_compare_run *run)
{
	const json_t *a = json_object_get(run->doc, "anatomy");

	return json_is_true(json_object_get(a, "judged")) ? a : NULL;
}

/* Why a side's runs lack the measure, into buf. */
static const char *lacking_why(const struct cp_compare_side *s, char *buf, size_t len)
{
	size_t with = 0;
	const char *why = NULL;

	for (size_t r = 0; r < s->n; r++) {
		const json_t *a = json_object_get(s->runs[r].doc, "anatomy");

		with += json_is_object(a);
		if (json_is_object(a) && !json_is_true(json_object_get(a, "judged")) && !why)
			why = cp_json_str(a, "not_judged_because", "no reason given");
	}
	if (!with)
		return "they were profiled without --anatomy";
	if (!why)
		return "their anatomy does not give it";
	snprintf(buf, len, "their reuse was not judged: %.160s", why);
	return buf;
}

static void explain_one_sided(struct cp_compare_result *out, const struct cp_compare_side *base,
			      const struct cp_compare_side *head)
{
	char buf[200];

	for (size_t i = 0; i < out->n; i++) {
		struct cp_measure_verdict *mv = &out->measures[i];
		int in_base = mv->status == CP_MEASURE_REMOVED;

		if (strcmp(mv->name, CP_REUSABLE_MEASURE) ||
		    (!in_base && mv->status != CP_MEASURE_ADDED))
			continue;
		cp_compare_set_reason(mv,
				      "not judged: the %s runs have it, the %s runs do not (%s); "
				      "it is judged only when both sides have it",
				      in_base ? "base" : "head", in_base ? "head" : "base",
				      lacking_why(in_base ? head : base, buf, sizeof(buf)));
	}
}

/* Whether anatomy a lists read (of another run) as reusable with reuses. */
static int lists_reuse(const json_t *a, const json_t *read, const json_t *reuses)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(a, "reusable"), i, e)
		if (cp_anatomy_same_read(cp_anatomy_read(a, json_object_get(e, "read")), read) &&
		    cp_anatomy_same_read(cp_anatomy_read(a, json_object_get(e, "reuses")), reuses))
			return 1;
	return 0;
}

/* Whether anatomy a has read (of another run) among its reads. */
static int makes_read(const json_t *a, const json_t *read)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(a, "reads"), i, r)
		if (cp_anatomy_same_read(r, read))
			return 1;
	return 0;
}

/* Whether the pair is listed in every base run with a judged anatomy,
 * and in no head run with one; *still_read: a head run still reads it. */
static int removed(const struct cp_compare_side *base, const struct cp_compare_side *head,
		   const json_t *read, const json_t *reuses, int *still_read)
{
	*still_read = 0;
	for (size_t r = 0; r < base->n; r++) {
		const json_t *a = judged_anatomy(&base->runs[r]);

		if (a && !lists_reuse(a, read, reuses))
			return 0;
	}
	for (size_t r = 0; r < head->n; r++) {
		const json_t *a = judged_anatomy(&head->runs[r]);

		if (a && lists_reuse(a, read, reuses))
			return 0;
		*still_read |= a && makes_read(a, read);
	}
	return 1;
}

/* A read as verdict.json names it: its site and callers, no run's id. */
static json_t *read_json(const json_t *r)
{
	const json_t *callers = json_object_get(r, "callers");

	return json_pack("{s:o?, s:o?, s:o?, s:o}", "function",
			 json_deep_copy(json_object_get(r, "function")), "file",
			 json_deep_copy(json_object_get(r, "file")), "line",
			 json_deep_copy(json_object_get(r, "line")), "callers",
			 json_is_array(callers) ? json_deep_copy(callers) : json_array());
}

/* Whether list already names the pair (a run that lists it twice). */
static int listed(const json_t *list, const json_t *read, const json_t *reuses)
{
	const json_t *e;
	size_t i;

	json_array_foreach(list, i, e)
		if (cp_anatomy_same_read(json_object_get(e, "read"), read) &&
		    cp_anatomy_same_read(json_object_get(e, "reuses"), reuses))
			return 1;
	return 0;
}

/* Appends entry to list, kept largest base per_op first. */
static int insert_by_saving(json_t *list, json_t *entry)
{
	double v = json_number_value(json_object_get(entry, "per_op"));
	size_t at = 0;

	if (!entry)
		return -1;
	while (at < json_array_size(list) &&
	       json_number_value(json_object_get(json_array_get(list, at), "per_op")) >= v)
		at++;
	return json_array_insert_new(list, at, entry);
}

static json_t *removed_reuses(const struct cp_compare_side *base,
			      const struct cp_compare_side *head, const json_t *first)
{
	json_t *list = json_array();
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(first, "reusable"), i, e) {
		const json_t *read = cp_anatomy_read(first, json_object_get(e, "read"));
		const json_t *reuses = cp_anatomy_read(first, json_object_get(e, "reuses"));
		int still_read;

		if (!list || !read || !reuses || listed(list, read, reuses) ||
		    !removed(base, head, read, reuses, &still_read))
			continue;
		/* Copies: the verdict outlives the runs' documents. */
		if (insert_by_saving(
			    list, json_pack("{s:o, s:o, s:o?, s:o?, s:o?, s:b}", "read",
					    read_json(read), "reuses", read_json(reuses), "share",
					    json_deep_copy(json_object_get(e, "share")), "gap_ns",
					    json_deep_copy(json_object_get(e, "gap_ns")), "per_op",
					    json_deep_copy(json_object_get(e, "per_op")),
					    "still_read", still_read))) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

int cp_compare_reusable(struct cp_compare_result *out, const struct cp_compare_side *base,
			const struct cp_compare_side *head)
{
	const json_t *first = NULL;
	int head_judged = 0;

	explain_one_sided(out, base, head);
	for (size_t r = 0; r < base->n && !first; r++)
		first = judged_anatomy(&base->runs[r]);
	for (size_t r = 0; r < head->n; r++)
		head_judged |= judged_anatomy(&head->runs[r]) != NULL;
	if (!first || !head_judged)
		return 0; /* not compared: reusable_removed stays NULL */
	out->reusable_removed = removed_reuses(base, head, first);
	return out->reusable_removed ? 0 : -1;
}

/* Entry e's read and the read it could reuse, named, and its per op. */
static void entry_texts(const json_t *e, struct cp_buf *read, struct cp_buf *reuses, char *per_op,
			size_t len)
{
	double v = json_number_value(json_object_get(e, "per_op"));

	cp_anatomy_read_label(read, json_object_get(e, "read"), 1, 0);
	cp_anatomy_read_label(reuses, json_object_get(e, "reuses"), 1, 0);
	if (json_is_number(json_object_get(e, "per_op")) && isfinite(v))
		snprintf(per_op, len, "%.3g", v);
	else
		snprintf(per_op, len, "n/a");
}

void cp_reusable_removed_each(const json_t *verdict,
			      void (*fn)(const struct cp_reusable_removed_line *, void *),
			      void *arg)
{
	const json_t *list = json_object_get(verdict, "reusable_removed"), *e;
	size_t i, n = json_array_size(list);

	json_array_foreach(list, i, e) {
		struct cp_buf read = { 0 }, reuses = { 0 };
		char per_op[32];
		struct cp_reusable_removed_line line = { "", "", per_op, "", 0 };

		if (i == CP_REUSABLE_REMOVED_SHOWN) {
			line.more = n - i;
			fn(&line, arg);
			return;
		}
		entry_texts(e, &read, &reuses, per_op, sizeof(per_op));
		line.read = read.data ? read.data : "";
		line.reuses = reuses.data ? reuses.data : "";
		line.outcome = json_is_true(json_object_get(e, "still_read")) ?
				       "still read, no longer reusable" :
				       "the read is gone";
		fn(&line, arg);
		cp_buf_free(&read);
		cp_buf_free(&reuses);
	}
}
