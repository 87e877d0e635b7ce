/* report_stacks.c - see report_stacks.h. */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "key_table.h"
#include "report_stacks.h"

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ULL

static uint64_t stack_hash(const void *ctx, size_t i)
{
	const struct cp_stacks *s = ctx;

	return hash_bytes(s->stacks[i].frames, s->stacks[i].n * sizeof(uint32_t), HASH_SEED);
}

static long intern(struct cp_stacks *s, const char *name)
{
	bool added;

	return cp_key_index(&s->names, name, &added);
}

/* Adds count to the stack frames[0..n) on side, taking frames when new. */
static int add_stack(struct cp_stacks *s, uint32_t *frames, uint32_t n, double count, int side)
{
	size_t j;
	uint64_t h = hash_bytes(frames, n * sizeof(uint32_t), HASH_SEED);

	if ((s->nstacks + 1) * 2 > s->stack_slots_cap &&
	    cp_slots_grow(&s->stack_slots, &s->stack_slots_cap, 1024, s->nstacks, stack_hash, s))
		return -1;
	j = h & (s->stack_slots_cap - 1);
	for (; s->stack_slots[j]; j = (j + 1) & (s->stack_slots_cap - 1)) {
		struct cp_report_stack *st = &s->stacks[s->stack_slots[j] - 1];

		if (st->n == n && !memcmp(st->frames, frames, n * sizeof(*frames))) {
			st->count[side] += count;
			free(frames);
			return 0;
		}
	}
	if (cp_grow(&s->stacks, &s->stacks_cap, s->nstacks + 1, sizeof(*s->stacks)))
		return -1;
	s->stacks[s->nstacks] = (struct cp_report_stack){ .frames = frames, .n = n };
	s->stacks[s->nstacks].count[side] = count;
	s->stack_slots[j] = (uint32_t)s->nstacks + 1;
	s->nstacks++;
	return 0;
}

size_t cp_stacks_add(struct cp_stacks *s, const json_t *stacks, int side)
{
	size_t i, taken = 0;
	const json_t *st;

	if (!json_is_array(stacks))
		return 0;
	json_array_foreach(stacks, i, st) {
		const json_t *frames = json_object_get(st, "frames");
		const json_t *count = json_object_get(st, "count");
		size_t n = json_array_size(frames), k;
		uint32_t *idx;
		int ok = 1;

		if (!n || !json_is_number(count) || json_number_value(count) < 0)
			continue;
		idx = malloc(n * sizeof(*idx));
		if (!idx) {
			s->failed = 1;
			return taken;
		}
		for (k = 0; k < n && ok; k++) {
			const char *name = json_string_value(json_array_get(frames, k));
			long id = name ? intern(s, name) : -1;

			if (id < 0) {
				ok = 0;
				s->failed |= name != NULL;
			}
			idx[k] = (uint32_t)id;
		}
		if (!ok) {
			free(idx);
			continue;
		}
		if (add_stack(s, idx, (uint32_t)n, json_number_value(count), side)) {
			free(idx);
			s->failed = 1;
			return taken;
		}
		s->total[side] += json_number_value(count);
		taken++;
	}
	return taken;
}

/* Orders stacks by their frames, so that stacks sharing a prefix are
 * adjacent: report.js then builds the tree without lookups. */
static int by_frames(const void *pa, const void *pb)
{
	const struct cp_report_stack *a = *(const struct cp_report_stack *const *)pa;
	const struct cp_report_stack *b = *(const struct cp_report_stack *const *)pb;

	for (uint32_t i = 0; i < a->n && i < b->n; i++)
		if (a->frames[i] != b->frames[i])
			return a->frames[i] < b->frames[i] ? -1 : 1;
	return (a->n > b->n) - (a->n < b->n);
}

/* A count as JSON: an integer when it is one, so the page stays small. */
static json_t *count_json(double c)
{
	if (c == (double)(json_int_t)c && c < 9007199254740992.0)
		return json_integer((json_int_t)c);
	return json_real(c);
}

json_t *cp_stacks_to_json(const struct cp_stacks *s, int sides)
{
	json_t *doc = json_object(), *names = json_array(), *stacks = json_array();
	const struct cp_report_stack **order = malloc((s->nstacks ? s->nstacks : 1) *
						      sizeof(*order));

	if (!doc || !names || !stacks || !order)
		goto fail;
	for (size_t i = 0; i < s->nstacks; i++)
		order[i] = &s->stacks[i];
	qsort(order, s->nstacks, sizeof(*order), by_frames);
	json_object_set_new(doc, "names", names);
	json_object_set_new(doc, "stacks", stacks);
	for (size_t i = 0; i < s->names.n; i++)
		if (json_array_append_new(names, json_string(s->names.keys[i])))
			goto fail_doc;
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct cp_report_stack *st = order[i];
		json_t *row = json_array();

		if (!row || json_array_append_new(stacks, row))
			goto fail_doc;
		for (int side = 0; side < sides; side++)
			if (json_array_append_new(row, count_json(st->count[side])))
				goto fail_doc;
		for (uint32_t k = 0; k < st->n; k++)
			if (json_array_append_new(row, json_integer(st->frames[k])))
				goto fail_doc;
	}
	free(order);
	return doc;
fail:
	json_decref(names);
	json_decref(stacks);
fail_doc:
	free(order);
	json_decref(doc);
	return NULL;
}

size_t cp_stacks_functions(const struct cp_stacks *s, struct cp_func_total **out)
{
	size_t nnames = s->names.n;
	struct cp_func_total *f = calloc(nnames ? nnames : 1, sizeof(*f));
	uint32_t *seen = calloc(nnames ? nnames : 1, sizeof(*seen));

	if (!f || !seen) {
		free(f);
		free(seen);
		return (size_t)-1;
	}
	for (size_t i = 0; i < nnames; i++)
		f[i].name = (uint32_t)i;
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct cp_report_stack *st = &s->stacks[i];

		for (uint32_t k = 0; k < st->n; k++) {
			uint32_t id = st->frames[k];

			if (seen[id] == i + 1)
				continue; /* recursion: count a stack once */
			seen[id] = (uint32_t)i + 1;
			f[id].v[0] += st->count[0];
			f[id].v[1] += st->count[1];
		}
	}
	free(seen);
	*out = f;
	return nnames;
}

void cp_stacks_free(struct cp_stacks *s)
{
	for (size_t i = 0; i < s->nstacks; i++)
		free(s->stacks[i].frames);
	free(s->stacks);
	free(s->stack_slots);
	cp_key_table_free(&s->names);
	memset(s, 0, sizeof(*s));
}
