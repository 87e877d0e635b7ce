/* compare_boundary.c - per-op measures divide by ops, and what an op is
 * comes from the request boundary (-r) or --ops: base runs counted per
 * handle_request() and head runs per clock_gettime() call show 5 -> 1
 * reads/op as an improvement while the code read one more. So runs that
 * differ in the boundary (as resolved, not as spelled) or in ops_source
 * are not compared, unless the user says the change is meant
 * (--allow-mismatch); counting mechanisms are checked apart (compare_admit.c),
 * with no such way out. */
#include <stdio.h>
#include <string.h>

#include "compare_boundary.h"
#include "error.h"
#include "run_file.h"
#include "utf8.h"

#define KEY_MAX 1200

struct op_field {
	const char *name; /* in messages */
	const char *(*key)(const json_t *doc, char *buf, size_t len);
};

static const char *boundary_key(const json_t *doc, char *buf, size_t len)
{
	return cp_run_boundary(doc, buf, len);
}

static const char *ops_source_key(const json_t *doc, char *buf, size_t len)
{
	snprintf(buf, len, "%s", cp_run_ops_source(doc));
	return buf;
}

static const struct op_field fields[] = {
	{ "request boundary (-r)", boundary_key },
	{ "ops_source", ops_source_key },
};

static const char *name_of(const struct cp_compare_side *s, size_t r)
{
	return s->names && s->names[r] ? s->names[r] : "?";
}

/* The first run of both sides (base first) whose field f differs from
 * the first base run's; 0 when they all agree. */
static int first_other(const struct op_field *f, const struct cp_compare_side *base,
		       const struct cp_compare_side *head, char *ref, char *other,
		       const char **side, const char **name)
{
	const struct cp_compare_side *sides[2] = { base, head };

	f->key(base->runs[0].doc, ref, KEY_MAX);
	for (int s = 0; s < 2; s++)
		for (size_t r = 0; r < sides[s]->n; r++)
			if (strcmp(f->key(sides[s]->runs[r].doc, other, KEY_MAX), ref)) {
				*side = s ? "head" : "base";
				*name = name_of(sides[s], r);
				return 1;
			}
	return 0;
}

int cp_compare_check_ops(const struct cp_compare_side *base, const struct cp_compare_side *head,
			 int allow, json_t *warnings, struct cp_error *err)
{
	char ref[KEY_MAX], other[KEY_MAX], line[2 * KEY_MAX];
	const char *side, *name;

	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		if (!first_other(&fields[f], base, head, ref, other, &side, &name))
			continue;
		cp_utf8_format(
			line, sizeof(line),
			"base run %.200s and %s run %.200s differ in the %s: %.300s vs %.300s",
			name_of(base, 0), side, name, fields[f].name, ref, other);
		if (!allow)
			return cp_fail(
				err, CP_EXIT_USAGE,
				"%s; their per-op measures count different things: profile both "
				"sides alike, or give --allow-mismatch if the change is meant",
				line);
		json_array_append_new(warnings,
				      json_sprintf("%s (allowed by --allow-mismatch)", line));
	}
	return 0;
}
