/* code_ranges.c - see code_ranges.h. */
#include <stdlib.h>
#include <string.h>

#include "code_ranges.h"

static int by_start(const void *a, const void *b)
{
	const struct cp_code_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorts and merges overlapping or adjacent ranges in place. */
static void merge(struct cp_code_ranges *r)
{
	size_t out = 0;

	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), by_start);
	for (size_t i = 0; i < r->n; i++) {
		if (out && r->v[i].start <= r->v[out - 1].end) {
			if (r->v[i].end > r->v[out - 1].end)
				r->v[out - 1].end = r->v[i].end;
			continue;
		}
		r->v[out++] = r->v[i];
	}
	r->n = out;
}

int cp_code_ranges_from_maps(const struct cp_proc_map *maps, size_t n, struct cp_code_ranges *out)
{
	out->n = 0;
	out->v = malloc((n ? n : 1) * sizeof(*out->v));
	if (!out->v)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (maps[i].perms[2] == 'x' && maps[i].start < maps[i].end &&
		    strcmp(maps[i].path, "[uprobes]") != 0)
			out->v[out->n++] = (struct cp_code_range){ maps[i].start, maps[i].end };
	merge(out);
	return 0;
}

bool cp_code_ranges_has(const struct cp_code_ranges *r, uint64_t addr)
{
	size_t lo = 0, hi = r->n;

	/* the first range that ends after addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->v[lo].start <= addr;
}

int cp_code_ranges_copy(const struct cp_code_ranges *src, struct cp_code_ranges *out)
{
	out->n = 0;
	out->v = malloc((src->n ? src->n : 1) * sizeof(*out->v));
	if (!out->v)
		return -1;
	memcpy(out->v, src->v, src->n * sizeof(*out->v));
	out->n = src->n;
	return 0;
}

void cp_code_ranges_free(struct cp_code_ranges *r)
{
	free(r->v);
	r->v = NULL;
	r->n = 0;
}
