/* compare_lines.c - see compare_lines.h.
 *
 * Lines are not matched by their numbers alone: a read added above
 * another moves it down, and base and head are often built in checkouts
 * of their own, whose absolute paths differ. So each side's files are
 * named below the directory all of that side's files of the function
 * share, and within one file the two sides' lines (in order, each with its
 * reads per op) are aligned as a diff aligns text: an unchanged read
 * matches its moved line by its count, and only what is left over (a new
 * line, or a line whose count rose) gained. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_lines.h"
#include "compare_run.h"
#include "grow.h"

#define SITE_PREFIX "clock_reads@"
#define SITE_SUFFIX "/op"

/* One line of the function on one side: its reads per op summed over the
 * side's runs, then their mean. */
struct line_reads {
	const char *file;	/* as the runs name it */
	const char *key;	/* file below the side's shared directory */
	long long line;
	double per_op;
};

struct side_lines {
	struct line_reads *v;
	size_t n, cap;
	size_t runs;		/* runs that have a line of the function */
};

/* A line that gained: head's line, base's reads per op there (0: new). */
struct gained {
	const struct line_reads *head;
	double base;
};

struct gained_list {
	struct gained *v;
	size_t n, cap;
};

static int same_reads(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(a));
}

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

static int add_line(struct side_lines *t, const struct cp_run_site *s)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].line == s->line && !strcmp(t->v[i].file, s->file)) {
			t->v[i].per_op += s->per_op;
			return 0;
		}
	if (cp_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return -1;
	t->v[t->n++] = (struct line_reads){ .file = s->file, .key = s->file, .line = s->line,
					    .per_op = s->per_op };
	return 0;
}

/* The function's lines over a side's runs; a run without any of them (or
 * without ops) is left out of the mean, as the measure leaves it out. */
static int side_lines(struct side_lines *t, const struct cp_compare_side *side, const char *fn,
		      size_t fnlen)
{
	for (size_t r = 0; r < side->n; r++) {
		const struct cp_compare_run *run = &side->runs[r];
		int has = 0;

		for (size_t i = 0; i < run->nsites; i++) {
			const struct cp_run_site *s = &run->sites[i];

			if (strlen(s->function) != fnlen || memcmp(s->function, fn, fnlen) ||
			    !s->file || s->line <= 0 || isnan(s->per_op))
				continue;
			if (add_line(t, s))
				return -1;
			has = 1;
		}
		t->runs += has;
	}
	for (size_t i = 0; i < t->n; i++)
		t->v[i].per_op /= (double)t->runs;
	return 0;
}

/* Names each file below the directory the side's files share ("src/x.c"
 * of "/ws/base/src/x.c" and "/ws/base/src/y.h"; "x.c" alone). */
static void key_files(struct side_lines *t)
{
	size_t shared = t->n ? strlen(t->v[0].file) : 0;

	for (size_t i = 1; i < t->n; i++) {
		size_t k = 0;

		while (k < shared && t->v[i].file[k] == t->v[0].file[k])
			k++;
		shared = k;
	}
	while (shared > 0 && t->v[0].file[shared - 1] != '/')
		shared--;
	for (size_t i = 0; i < t->n; i++)
		t->v[i].key = t->v[i].file + shared;
}

static int by_file_line(const void *a, const void *b)
{
	const struct line_reads *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int add_gained(struct gained_list *g, const struct line_reads *h, double base)
{
	if (!(h->per_op > base) || same_reads(base, h->per_op))
		return 0;
	if (cp_grow(&g->v, &g->cap, g->n + 1, sizeof(*g->v)))
		return -1;
	g->v[g->n++] = (struct gained){ h, base };
	return 0;
}

/* The best alignment's score of b[0..i) with h[0..j) for every i, j: a
 * pair of lines with the same reads scores 2 on the same line number, 1
 * moved (so an unchanged line keeps its place when it can). */
static int *align(const struct line_reads *b, size_t nb, const struct line_reads *h, size_t nh)
{
	int *s = calloc((nb + 1) * (nh + 1), sizeof(*s));

	for (size_t i = 1; s && i <= nb; i++)
		for (size_t j = 1; j <= nh; j++) {
			int best = s[(i - 1) * (nh + 1) + j], left = s[i * (nh + 1) + j - 1];

			if (left > best)
				best = left;
			if (same_reads(b[i - 1].per_op, h[j - 1].per_op)) {
				int pair = s[(i - 1) * (nh + 1) + j - 1] +
					   (b[i - 1].line == h[j - 1].line ? 2 : 1);

				if (pair > best)
					best = pair;
			}
			s[i * (nh + 1) + j] = best;
		}
	return s;
}

static int score(const struct line_reads *b, const struct line_reads *h)
{
	return b->line == h->line ? 2 : 1;
}

/* For each head line, the base line the best alignment pairs it with
 * (same reads), or -1. */
static long *matches(const struct line_reads *b, size_t nb, const struct line_reads *h, size_t nh)
{
	int *s = align(b, nb, h, nh);
	long *m = malloc((nh ? nh : 1) * sizeof(*m));
	size_t i = nb, j = nh, w = nh + 1;

	if (!s || !m) {
		free(s);
		free(m);
		return NULL;
	}
	for (size_t k = 0; k < nh; k++)
		m[k] = -1;
	while (i > 0 && j > 0) {
		if (same_reads(b[i - 1].per_op, h[j - 1].per_op) &&
		    s[i * w + j] == s[(i - 1) * w + j - 1] + score(&b[i - 1], &h[j - 1]))
			m[--j] = (long)--i;
		else if (s[(i - 1) * w + j] >= s[i * w + j - 1])
			i--;
		else
			j--;
	}
	free(s);
	return m;
}

/* Between two paired lines, head's other lines are set in order against
 * base's other lines there (a count that rose, or fell) and the rest are
 * new; those that read more than their base counterpart gained. */
static int gained_in_file(struct gained_list *g, const struct line_reads *b, size_t nb,
			  const struct line_reads *h, size_t nh)
{
	long *m = matches(b, nb, h, nh);
	size_t bi = 0, j = 0;
	int rc = 0;

	if (!m)
		return -1;
	while (!rc && j <= nh) {
		size_t next = j, bend;

		while (next < nh && m[next] < 0)
			next++;
		bend = next < nh ? (size_t)m[next] : nb;
		for (size_t k = 0; !rc && j + k < next; k++)
			rc = add_gained(g, &h[j + k], bi + k < bend ? b[bi + k].per_op : 0);
		bi = bend + 1;
		j = next + 1;
	}
	free(m);
	return rc;
}

/* Aligns each file head has against the same file of base. */
static int gained_by_file(struct gained_list *g, struct side_lines *b, struct side_lines *h)
{
	size_t i = 0, k = 0;

	key_files(b);
	key_files(h);
	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), by_file_line);
	if (h->n)
		qsort(h->v, h->n, sizeof(*h->v), by_file_line);
	while (k < h->n) {
		size_t hend = k, bend;

		while (hend < h->n && !strcmp(h->v[hend].key, h->v[k].key))
			hend++;
		while (i < b->n && strcmp(b->v[i].key, h->v[k].key) < 0)
			i++;
		bend = i;
		while (bend < b->n && !strcmp(b->v[bend].key, h->v[k].key))
			bend++;
		if (gained_in_file(g, b->v + i, bend - i, h->v + k, hend - k))
			return -1;
		i = bend;
		k = hend;
	}
	return 0;
}

/* Most gained first; then by file and line, for a stable order. */
static int by_gain(const void *a, const void *b)
{
	const struct gained *x = a, *y = b;
	double gx = x->head->per_op - x->base, gy = y->head->per_op - y->base;

	if (!same_reads(gx, gy))
		return gx < gy ? 1 : -1;
	return by_file_line(x->head, y->head);
}

/* file relative to root, when it is there (symbolic links resolved): an
 * absolute path only when it names root's directory to begin with, a
 * relative one taken from root. */
static json_t *repo_path(const char *file, const char *root)
{
	char top[PATH_MAX], path[PATH_MAX], real[PATH_MAX];
	json_t *rel;
	size_t n;
	int len;

	if (!realpath(root ? root : ".", top))
		return json_null();
	n = strcmp(top, "/") ? strlen(top) : 0;
	if (file[0] == '/' && (strncmp(file, top, n) || file[n] != '/'))
		return json_null();
	len = file[0] == '/' ? snprintf(path, sizeof(path), "%s", file) :
			       snprintf(path, sizeof(path), "%s/%s", top, file);
	if (len < 0 || (size_t)len >= sizeof(path) || !realpath(path, real) ||
	    strncmp(real, top, n) || real[n] != '/')
		return json_null();
	rel = json_string(real + n + 1);	/* NULL: not UTF-8 */
	return rel ? rel : json_null();
}

static json_t *lines_json(struct gained_list *g, const char *root)
{
	json_t *lines = json_array();

	if (g->n)
		qsort(g->v, g->n, sizeof(*g->v), by_gain);
	for (size_t i = 0; lines && i < g->n && i < CP_SITE_LINES_MAX; i++) {
		const struct line_reads *h = g->v[i].head;

		if (json_array_append_new(lines, json_pack("{s:s, s:I, s:f, s:f, s:o}", "file", h->file,
				"line", (json_int_t)h->line, "base", g->v[i].base, "head", h->per_op,
				"repo_path", repo_path(h->file, root)))) {
			json_decref(lines);
			return NULL;
		}
	}
	return lines;
}

static json_t *site_lines(const char *fn, size_t fnlen, const struct cp_compare_side *base,
			  const struct cp_compare_side *head, const char *root)
{
	struct side_lines b = { 0 }, h = { 0 };
	struct gained_list g = { 0 };
	json_t *lines = NULL;

	if (!side_lines(&b, base, fn, fnlen) && !side_lines(&h, head, fn, fnlen) &&
	    !gained_by_file(&g, &b, &h))
		lines = lines_json(&g, root);
	free(b.v);
	free(h.v);
	free(g.v);
	return lines;
}

int cp_compare_name_lines(struct cp_compare_result *r, const struct cp_compare_side *base,
			  const struct cp_compare_side *head, const char *source_root)
{
	for (size_t i = 0; i < r->n; i++) {
		struct cp_measure_verdict *m = &r->measures[i];
		size_t len;
		const char *fn = site_function(m->name, &len);

		if (!fn || m->status != CP_MEASURE_REGRESSED)
			continue;
		if (!(m->lines = site_lines(fn, len, base, head, source_root)))
			return -1;
	}
	return 0;
}
