/* verdict_measures.c - see verdict_measures.h. */
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "json_file.h"
#include "verdict_file.h"
#include "verdict_measures.h"

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

static void key_of(const struct cp_verdict_measures *ms, size_t i, int *rank,
		   const char **name)
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
