/* compare_lines.c - see compare_lines.h.
 *
 * Lines are not matched by their numbers alone: a read added above
 * another moves it down, and base and head are often built in checkouts
 * of their own, whose absolute paths differ. So a head file is matched to
 * the base file whose path ends in the most of the same components, and
 * within one file the two sides' lines (in order, each with its reads per
 * op) are aligned as a diff aligns text, a pair scored by what it most
 * likely is: the same line unchanged, a line that only moved (same
 * reads), a line whose count changed where it was, or any other pair in
 * order. What a head line reads beyond its pair (all of it, unpaired) is
 * what it gained. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare_lines.h"
#include "compare_run.h"
#include "grow.h"
#include "run_file.h"

/* One line of the function on one side: its reads per op summed over the
 * side's runs, then their mean. */
struct line_reads {
	const char *file; /* as the runs name it */
	const char *key;  /* file below the side's shared directory */
	long long line;
	double per_op;
};

struct side_lines {
	struct line_reads *v;
	size_t n, cap;
	size_t runs; /* runs that have a line of the function */
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

/* per_op is exact for reads in requests; a change under 1% is not named
 * either. */
int cp_same_reads(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(a)) + 0.01 * fmax(fabs(a), fabs(b));
}

/* FUNCTION of a per-site measure's name, and its length; NULL for any
 * other measure. */
static const char *site_function(const char *name, size_t *len)
{
	size_t n = strlen(name), p = strlen(CP_SITE_MEASURE_PREFIX);
	size_t s = strlen(CP_SITE_MEASURE_SUFFIX);

	if (n <= p + s || strncmp(name, CP_SITE_MEASURE_PREFIX, p) ||
	    strcmp(name + n - s, CP_SITE_MEASURE_SUFFIX))
		return NULL;
	*len = n - p - s;
	return name + p;
}

static int add_line(struct side_lines *t, const char *file, long long line, double per_op)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].line == line && !strcmp(t->v[i].file, file)) {
			t->v[i].per_op += per_op;
			return 0;
		}
	if (cp_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return -1;
	t->v[t->n++] =
		(struct line_reads){ .file = file, .key = file, .line = line, .per_op = per_op };
	return 0;
}

/* The function's lines over a side's runs; a run without any of them (or
 * without ops) is left out of the mean, as the measure leaves it out. A
 * read in a helper inlined into the function is at the function's own
 * line that calls it (inlined), else at the helper's. */
static int side_lines(struct side_lines *t, const struct cp_compare_side *side, const char *fn,
		      size_t fnlen, int inlined)
{
	for (size_t r = 0; r < side->n; r++) {
		const struct cp_compare_run *run = &side->runs[r];
		int has = 0;

		for (size_t i = 0; i < run->nsites; i++) {
			const struct cp_run_site *s = &run->sites[i];
			int at = inlined && s->at_file;
			const char *file = at ? s->at_file : s->file;
			long long line = at ? s->at_line : s->line;

			if (strlen(s->function) != fnlen || memcmp(s->function, fn, fnlen) ||
			    !file || line <= 0 || !isfinite(s->per_op))
				continue;
			if (add_line(t, file, line, s->per_op))
				return -1;
			has = 1;
		}
		t->runs += has;
	}
	for (size_t i = 0; i < t->n; i++)
		t->v[i].per_op /= (double)t->runs;
	return 0;
}

/* How many whole trailing path components a and b share
 * ("/w/b/src/x.c" and "/w/h/src/x.c": 2). */
static size_t shared_tail(const char *a, const char *b)
{
	size_t i = strlen(a), j = strlen(b), parts = 0;

	while (i > 0 && j > 0 && a[i - 1] == b[j - 1]) {
		i--, j--;
		if (a[i] == '/')
			parts++;
	}
	/* The whole of one name, or up to a '/' in both: one more part. */
	if ((i == 0 || a[i - 1] == '/') && (j == 0 || b[j - 1] == '/') && a[i] != '/')
		parts++;
	return parts;
}

/* Base and head are often built in checkouts of their own: a head file
 * is base's file whose path ends the same way for the most components
 * (its name at least), and keeps its own path when base has none. */
static void key_files(struct side_lines *b, struct side_lines *h)
{
	for (size_t i = 0; i < h->n; i++) {
		size_t best = 0;

		for (size_t k = 0; k < b->n; k++) {
			size_t parts = shared_tail(b->v[k].file, h->v[i].file);

			if (parts > best) {
				best = parts;
				h->v[i].key = b->v[k].file;
			}
		}
	}
}

static int by_file_line(const void *a, const void *b)
{
	const struct line_reads *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int add_gained(struct gained_list *g, const struct line_reads *h, double base)
{
	if (!(h->per_op > base) || cp_same_reads(base, h->per_op))
		return 0;
	if (cp_grow(&g->v, &g->cap, g->n + 1, sizeof(*g->v)))
		return -1;
	g->v[g->n++] = (struct gained){ h, base };
	return 0;
}

/* What pairing base line b with head line h is worth in the alignment:
 * an unchanged line (same number, same reads) most, then a line that
 * only moved, then one whose count changed where it was, then any other
 * pair in order (a line that moved and changed); on par, fewer pairs. */
static int score(const struct line_reads *b, const struct line_reads *h)
{
	int same = cp_same_reads(b->per_op, h->per_op);

	return b->line == h->line ? (same ? 8 : 3) : (same ? 4 : 1);
}

/* Alignments past this many cells pair lines by number only: a file of
 * generated code with thousands of reading lines. */
#define ALIGN_CELLS_MAX (4u << 20)

/* The best alignment's score of b[0..i) with h[0..j) for every i, j, as
 * a diff aligns text: pairs keep their order. */
static int *align(const struct line_reads *b, size_t nb, const struct line_reads *h, size_t nh)
{
	size_t w = nh + 1;
	int *s = calloc((nb + 1) * w, sizeof(*s));

	for (size_t i = 1; s && i <= nb; i++)
		for (size_t j = 1; j <= nh; j++) {
			int up = s[(i - 1) * w + j], left = s[i * w + j - 1];
			int pair = s[(i - 1) * w + j - 1] + score(&b[i - 1], &h[j - 1]);

			s[i * w + j] = pair > up && pair > left ? pair : up > left ? up : left;
		}
	return s;
}

/* For each head line, the base line the alignment pairs it with, or -1;
 * past ALIGN_CELLS_MAX, the base line of the same number. */
static long *matches(const struct line_reads *b, size_t nb, const struct line_reads *h, size_t nh)
{
	long *m = malloc((nh ? nh : 1) * sizeof(*m));
	size_t i = nb, j = nh, w = nh + 1;
	int *s;

	for (size_t k = 0; m && k < nh; k++)
		m[k] = -1;
	if (!m || (nb + 1) > ALIGN_CELLS_MAX / w) {
		for (size_t k = 0, a = 0; m && k < nh; k++) {
			while (a < nb && b[a].line < h[k].line)
				a++;
			m[k] = a < nb && b[a].line == h[k].line ? (long)a : -1;
		}
		return m;
	}
	if (!(s = align(b, nb, h, nh))) {
		free(m);
		return NULL;
	}
	while (i > 0 && j > 0) {
		if (s[i * w + j] == s[(i - 1) * w + j - 1] + score(&b[i - 1], &h[j - 1]))
			m[--j] = (long)--i;
		else if (s[(i - 1) * w + j] >= s[i * w + j - 1])
			i--;
		else
			j--;
	}
	free(s);
	return m;
}

/* A head line paired with a base line gained what it reads more; one
 * paired with none is new. */
static int gained_in_file(struct gained_list *g, const struct line_reads *b, size_t nb,
			  const struct line_reads *h, size_t nh)
{
	long *m = matches(b, nb, h, nh);
	int rc = 0;

	if (!m)
		return -1;
	for (size_t j = 0; !rc && j < nh; j++)
		rc = add_gained(g, &h[j], m[j] >= 0 ? b[m[j]].per_op : 0);
	free(m);
	return rc;
}

/* Aligns each file head has against the same file of base. */
static int gained_by_file(struct gained_list *g, struct side_lines *b, struct side_lines *h)
{
	size_t i = 0, k = 0;

	key_files(b, h);
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
		if (gained_in_file(g, bend > i ? b->v + i : NULL, bend - i, h->v + k, hend - k))
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

	if (gx != gy)
		return gx < gy ? 1 : -1;
	return by_file_line(x->head, y->head);
}

/* Whether path names dir or a file below it, by its letters. */
static int lexically_below(const char *path, const char *dir)
{
	size_t n = strcmp(dir, "/") ? strlen(dir) : 0;

	return !strncmp(path, dir, n) && path[n] == '/';
}

/* file relative to root, when it is a regular file there (symbolic links
 * resolved): an absolute path only when it names root (as given, or as
 * resolved) to begin with, so that no path elsewhere is looked up; a
 * relative one taken from root. */
static json_t *repo_path(const char *file, const char *root)
{
	char top[PATH_MAX], given[PATH_MAX], path[PATH_MAX], real[PATH_MAX], cwd[PATH_MAX];
	struct stat st;
	json_t *rel;
	size_t n;
	int len;

	root = root ? root : ".";
	if (!realpath(root, top) || !getcwd(cwd, sizeof(cwd)))
		return json_null();
	len = root[0] == '/' ? snprintf(given, sizeof(given), "%s", root) :
			       snprintf(given, sizeof(given), "%s/%s", cwd, root);
	if (len < 0 || (size_t)len >= sizeof(given) ||
	    (file[0] == '/' && !lexically_below(file, top) && !lexically_below(file, given)))
		return json_null();
	len = file[0] == '/' ? snprintf(path, sizeof(path), "%s", file) :
			       snprintf(path, sizeof(path), "%s/%s", top, file);
	if (len < 0 || (size_t)len >= sizeof(path) || !realpath(path, real) ||
	    !lexically_below(real, top) || stat(real, &st) || !S_ISREG(st.st_mode))
		return json_null();
	n = strcmp(top, "/") ? strlen(top) : 0;
	rel = json_string(real + n + 1); /* NULL: not UTF-8 */
	return rel ? rel : json_null();
}

static json_t *lines_json(struct gained_list *g, const char *root)
{
	json_t *lines = json_array();

	if (g->n)
		qsort(g->v, g->n, sizeof(*g->v), by_gain);
	for (size_t i = 0; lines && i < g->n && i < CP_SITE_LINES_MAX; i++) {
		const struct line_reads *h = g->v[i].head;

		if (!isfinite(h->per_op) || !isfinite(g->v[i].base))
			continue;
		if (json_array_append_new(
			    lines, json_pack("{s:s, s:I, s:f, s:f, s:o}", "file", h->file, "line",
					     (json_int_t)h->line, "base", g->v[i].base, "head",
					     h->per_op, "repo_path", repo_path(h->file, root)))) {
			json_decref(lines);
			return NULL;
		}
	}
	return lines;
}

/* Whether every run of side names the function's lines that call its
 * inlined helpers: a run written before inlined_at was, beside one
 * written since, would pair a helper's line with the caller's (and merge
 * the calls one splits), so both sides name the helper's then. */
static int names_inlined_at(const struct cp_compare_side *side)
{
	for (size_t r = 0; r < side->n; r++)
		if (!side->runs[r].names_inlined_at)
			return 0;
	return 1;
}

static json_t *site_lines(const char *fn, size_t fnlen, const struct cp_compare_side *base,
			  const struct cp_compare_side *head, const char *root)
{
	struct side_lines b = { 0 }, h = { 0 };
	struct gained_list g = { 0 };
	json_t *lines = NULL;

	int inlined = names_inlined_at(base) && names_inlined_at(head);

	if (!side_lines(&b, base, fn, fnlen, inlined) &&
	    !side_lines(&h, head, fn, fnlen, inlined) && !gained_by_file(&g, &b, &h))
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
		/* Lines it cannot name (out of memory for the alignment) leave
		 * the verdict as it is, without them. */
		if (!(m->lines = site_lines(fn, len, base, head, source_root)) &&
		    !(m->lines = json_array()))
			return -1;
	}
	return 0;
}
