/* compare_lines.c - see compare_lines.h. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_lines.h"
#include "compare_run.h"
#include "grow.h"
#include "json_file.h"

#define SITE_PREFIX "clock_reads@"
#define SITE_SUFFIX "/op"

/* One line of the function: its reads per op summed over a side's runs. */
struct line_reads {
	const char *file;	/* in a run's call_sites */
	json_int_t line;
	double sum[2];		/* base, head */
};

struct line_table {
	struct line_reads *v;
	size_t n, cap;
};

/* FUNCTION of a per-site measure's name, and its length; NULL for any
 * other measure. */
static const char *site_function(const char *name, size_t *len)
{
	size_t n = strlen(name), p = strlen(SITE_PREFIX), s = strlen(SITE_SUFFIX);

	if (n <= p + s || strncmp(name, SITE_PREFIX, p) || strcmp(name + n - s, SITE_SUFFIX))
		return NULL;
	*len = n - p - s;
	return name + p;
}

static struct line_reads *line_of(struct line_table *t, const char *file, json_int_t line)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].line == line && !strcmp(t->v[i].file, file))
			return &t->v[i];
	if (cp_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return NULL;
	t->v[t->n] = (struct line_reads){ .file = file, .line = line };
	return &t->v[t->n++];
}

/* Adds one run's reads per op of the function's sites, by line. */
static int add_run(struct line_table *t, const json_t *sites, const char *fn, size_t fnlen,
		   int side)
{
	const json_t *s;
	size_t i;

	json_array_foreach(sites, i, s) {
		const char *name = cp_json_str(s, "function", NULL), *file = cp_json_str(s, "file", NULL);
		const json_t *line = json_object_get(s, "line"), *per_op = json_object_get(s, "per_op");
		struct line_reads *r;

		if (!name || strlen(name) != fnlen || memcmp(name, fn, fnlen) || !file ||
		    !json_is_integer(line) || !json_is_number(per_op))
			continue;
		if (!(r = line_of(t, file, json_integer_value(line))))
			return -1;
		r->sum[side] += json_number_value(per_op);
	}
	return 0;
}

/* file relative to root, when it is there (symbolic links resolved). */
static json_t *repo_path(const char *file, const char *root)
{
	char top[PATH_MAX], path[2 * PATH_MAX], real[PATH_MAX];
	json_t *rel;
	size_t n;

	if (!realpath(root ? root : ".", top))
		return json_null();
	snprintf(path, sizeof(path), "%s%s%s", file[0] == '/' ? "" : top,
		 file[0] == '/' ? "" : "/", file);
	if (!realpath(path, real))
		return json_null();
	n = strcmp(top, "/") ? strlen(top) : 0;
	if (strncmp(real, top, n) || real[n] != '/')
		return json_null();
	rel = json_string(real + n + 1);	/* NULL: not UTF-8 */
	return rel ? rel : json_null();
}

static double gain(const struct line_reads *r, const size_t n[2])
{
	return r->sum[1] / (double)n[1] - r->sum[0] / (double)n[0];
}

/* Most gained first; then by file and line, for a stable order. */
static int by_gain(const void *a, const void *b, void *n)
{
	const struct line_reads *x = a, *y = b;
	double gx = gain(x, n), gy = gain(y, n);
	int c;

	if (gx != gy)
		return gx < gy ? 1 : -1;
	c = strcmp(x->file, y->file);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static json_t *gained_lines(struct line_table *t, const size_t n[2], const char *root)
{
	json_t *lines = json_array();

	if (t->n)
		qsort_r(t->v, t->n, sizeof(*t->v), by_gain, (void *)n);
	for (size_t i = 0; lines && i < t->n && json_array_size(lines) < CP_SITE_LINES_MAX; i++) {
		const struct line_reads *r = &t->v[i];
		double base = r->sum[0] / (double)n[0];

		if (!(gain(r, n) > 1e-9 * (1 + fabs(base))))
			break;
		if (json_array_append_new(lines, json_pack("{s:s, s:I, s:f, s:f, s:o}",
				"file", r->file, "line", r->line, "base", base,
				"head", r->sum[1] / (double)n[1], "repo_path", repo_path(r->file, root)))) {
			json_decref(lines);
			return NULL;
		}
	}
	return lines;
}

static json_t *site_lines(const char *fn, size_t fnlen, const struct cp_compare_side *base,
			  const struct cp_compare_side *head, const char *root)
{
	const struct cp_compare_side *sides[2] = { base, head };
	const size_t n[2] = { base->n, head->n };
	struct line_table t = { 0 };
	json_t *lines = NULL;

	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < sides[side]->n; i++)
			if (add_run(&t, sides[side]->runs[i].call_sites, fn, fnlen, side))
				goto out;
	lines = gained_lines(&t, n, root);
out:
	free(t.v);
	return lines;
}

int cp_compare_name_lines(struct cp_compare_result *r, const struct cp_compare_side *base,
			  const struct cp_compare_side *head, const char *source_root)
{
	for (size_t i = 0; i < r->n; i++) {
		struct cp_measure_verdict *m = &r->measures[i];
		size_t len;
		const char *fn = site_function(m->name, &len);

		if (!fn || m->status != CP_MEASURE_REGRESSED || !base->n || !head->n)
			continue;
		if (!(m->lines = site_lines(fn, len, base, head, source_root)))
			return -1;
	}
	return 0;
}
