/* verdict_measures.c - see verdict_measures.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "compare.h"
#include "json_file.h"
#include "verdict_measures.h"

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *side_stats(const struct cp_side_stats *s, int present)
{
	if (!present)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:I}", "median", num(s->median), "lo", num(s->lo), "hi",
			 num(s->hi), "n", (json_int_t)s->n);
}

static json_t *interval(const struct cp_interval *c)
{
	if (isnan(c->point))
		return json_null();
	return json_pack("{s:o, s:o, s:o}", "point", num(c->point), "lo", num(c->lo), "hi",
			 num(c->hi));
}

/* A copy, not a reference: writers build measures on several threads at
 * once, and the result's arrays are shared by all of them. */
static json_t *strings_copy(const json_t *a)
{
	json_t *copy = json_array();
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
		json_array_append_new(copy, json_string(json_string_value(v)));
	return copy;
}

json_t *cp_verdict_measure_json(const struct cp_measure_verdict *m)
{
	int judged = m->in_base && m->in_head;
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(m->name));
	json_object_set_new(o, "unit", json_string(m->unit));
	json_object_set_new(o, "kind", json_string(m->exact ? "exact" : "sampled"));
	json_object_set_new(o, "better", json_string(m->higher_is_better ? "higher" : "lower"));
	json_object_set_new(o, "base", side_stats(&m->base, m->in_base));
	json_object_set_new(o, "head", side_stats(&m->head, m->in_head));
	json_object_set_new(o, "change_pct", judged ? interval(&m->change_pct) : json_null());
	json_object_set_new(o, "change_abs", judged ? interval(&m->change_abs) : json_null());
	json_object_set_new(o, "judged_as",
			    !judged ? json_null() :
				      json_string(m->exact && !m->judged_sampled ? "exact" :
										   "sampled"));
	json_object_set_new(o, "test",
			    m->test_exact < 0 ?
				    json_null() :
				    json_string(m->test_exact ? "exact-u" : "approx-u"));
	json_object_set_new(o, "interval",
			    m->interval_ratio < 0 ?
				    json_null() :
				    json_string(m->interval_ratio ? "ratio" : "shift"));
	json_object_set_new(o, "p_value", num(m->p_value));
	json_object_set_new(o, "p_adjusted", num(m->p_adjusted));
	json_object_set_new(o, "in_holm_family", json_boolean(m->in_family));
	json_object_set_new(o, "p_beyond_bound", num(m->p_beyond));
	json_object_set_new(o, "p_beyond_bound_adjusted", num(m->p_beyond_adjusted));
	json_object_set_new(o, "not_excluded",
			    m->not_excluded[0] ? json_string(m->not_excluded) : json_null());
	json_object_set_new(o, "fails_gate",
			    json_boolean(m->status == CP_MEASURE_REGRESSED || m->blocking));
	json_object_set_new(o, "bound", m->bound ? json_string(m->bound->text) : json_null());
	json_object_set_new(o, "bound_rule",
			    m->bound ? json_pack("{s:o, s:s}", "line",
						 m->bound->line ? json_integer(m->bound->line) :
								  json_null(),
						 "pattern", m->bound->pattern) :
				       json_null());
	json_object_set_new(o, "status", json_string(cp_measure_status_name(m->status)));
	json_object_set_new(o, "direction",
			    !judged ? json_null() :
				      json_string(m->direction > 0 ? "worse" :
						  m->direction < 0 ? "better" :
								     "same"));
	json_object_set_new(o, "reason", json_string(m->reason ? m->reason : ""));
	json_object_set_new(o, "noise_floor_pct", num(m->noise_floor_pct));
	json_object_set_new(o, "runs_needed",
			    m->runs_needed ? json_integer((json_int_t)m->runs_needed) :
					     json_null());
	json_object_set_new(o, "warnings", strings_copy(m->warnings));
	if (m->lines)
		json_object_set(o, "lines", m->lines);
	return o;
}

int cp_verdict_status_rank(const char *status)
{
	static const char *const order[] = { "regressed", "inconclusive", "improved",
					     "removed",	  "added",	  "within" };

	for (int i = 0; i < 6; i++)
		if (status && !strcmp(status, order[i]))
			return i;
	return 6;
}

void cp_verdict_measures_of_doc(struct cp_verdict_measures *ms, const json_t *verdict)
{
	const json_t *a = json_object_get(verdict, "measures");

	ms->array = json_is_array(a) ? a : NULL;
	ms->result = NULL;
	ms->n = json_array_size(ms->array);
}

void cp_verdict_measures_of_result(struct cp_verdict_measures *ms,
				   const struct cp_compare_result *r)
{
	ms->array = NULL;
	ms->result = r;
	ms->n = r->n;
}

json_t *cp_verdict_measures_get(const struct cp_verdict_measures *ms, size_t i)
{
	if (i >= ms->n)
		return NULL;
	if (ms->result)
		return cp_verdict_measure_json(&ms->result->measures[i]);
	return json_incref(json_array_get(ms->array, i));
}

static void key_of(const struct cp_verdict_measures *ms, size_t i, int *rank, const char **name)
{
	if (ms->result) {
		const struct cp_measure_verdict *m = &ms->result->measures[i];

		*rank = cp_verdict_status_rank(cp_measure_status_name(m->status));
		*name = m->name;
	} else {
		const json_t *m = json_array_get(ms->array, i);

		*rank = cp_verdict_status_rank(cp_json_str(m, "status", NULL));
		*name = cp_json_str(m, "name", "");
	}
}

static int by_rank_then_name(const void *a, const void *b, void *ctx)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const char *nx, *ny;
	int rx, ry;

	key_of(ctx, x, &rx, &nx);
	key_of(ctx, y, &ry, &ny);
	return rx != ry ? rx - ry : strcmp(nx ? nx : "", ny ? ny : "");
}

size_t *cp_verdict_measures_sorted(const struct cp_verdict_measures *ms)
{
	size_t *order = malloc((ms->n + 1) * sizeof(*order));

	if (!order)
		return NULL;
	for (size_t i = 0; i < ms->n; i++)
		order[i] = i;
	qsort_r(order, ms->n, sizeof(*order), by_rank_then_name, (void *)ms);
	return order;
}
