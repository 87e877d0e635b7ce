/* report_flame.c - the table that goes with each flame graph. The flame
 * graph itself is drawn by report.js from the embedded stacks; this table
 * carries the same story for readers without JavaScript (or a screen
 * reader): which functions the clock reads pass through, or, for base vs
 * head, where they grew or shrank. */
#include <math.h>
#include <stdlib.h>

#include "report_html.h"
#include "report_sections.h"

struct ranked {
	const struct cp_func_total *f;
	double key;
};

static int by_key_desc(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->key, y = ((const struct ranked *)b)->key;

	return (x < y) - (x > y);
}

/* Ranks the functions: by reads for one side, by the size of the per-op change for two.
 * Returns NULL when out of memory. */
static struct ranked *rank_functions(struct cp_func_total *f, size_t n, int sides,
				     const double div[2])
{
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	size_t i;

	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		r[i].f = &f[i];
		r[i].key = sides == 1 ? f[i].v[0] : fabs(f[i].v[1] / div[1] - f[i].v[0] / div[0]);
	}
	qsort(r, n, sizeof(*r), by_key_desc);
	return r;
}

/* The opening of the table: its caption and its column headings. */
static void function_table_head(struct cp_buf *b, int sides, size_t shown, size_t n,
				const char *unit)
{
	cp_buf_puts(b, "<div class=\"scroll\"><table class=\"sortable functions\"><caption>");
	if (sides == 1)
		cp_buf_printf(b, "Top %zu of %zu functions by clock reads through them", shown, n);
	else
		cp_buf_printf(b, "Top %zu of %zu functions by change in clock reads (", shown, n);
	if (sides == 2) {
		cp_buf_text(b, unit);
		cp_buf_puts(b, ")");
	}
	cp_buf_puts(b, "</caption><thead><tr><th>function</th>");
	if (sides == 1) {
		cp_buf_puts(
			b,
			"<th class=\"num\">reads</th><th class=\"num\">share</th><th class=\"num\">");
		cp_buf_text(b, unit);
		cp_buf_puts(b, "</th>");
	} else {
		cp_buf_puts(
			b,
			"<th class=\"num\">base</th><th class=\"num\">head</th><th class=\"num\">change</th><th>direction</th>");
	}
	cp_buf_puts(b, "</tr></thead><tbody>");
}

/* The cells of one function's row for a single run: reads, share, reads per op. */
static void function_cells_one(struct cp_buf *b, const struct cp_stacks *st,
			       const struct cp_func_total *x, const double div[2])
{
	double total = st->total[0];

	cp_html_td_num(b, x->v[0]);
	cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.1f%%</td>",
		      total > 0 ? x->v[0] / total : 0, total > 0 ? 100 * x->v[0] / total : 0);
	cp_html_td_num(b, x->v[0] / div[0]);
}

/* The cells of one function's row for base vs head: both per-op values,
 * the change, its direction. */
static void function_cells_diff(struct cp_buf *b, const struct cp_func_total *x,
				const double div[2])
{
	double base = x->v[0] / div[0], head = x->v[1] / div[1];
	double d = head - base;

	cp_html_td_num(b, base);
	cp_html_td_num(b, head);
	cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%s", d, d > 0 ? "+" : "");
	cp_html_num(b, d);
	cp_buf_puts(b, "</td>");
	cp_buf_puts(b, d > 0 ? "<td class=\"more\">▲ more in head</td>" :
		       d < 0 ? "<td class=\"less\">▼ less in head</td>" :
			       "<td class=\"same\">= same</td>");
}

void cp_report_function_table(struct cp_buf *b, const struct cp_stacks *st, int sides,
			      const double div[2], const char *unit)
{
	struct cp_func_total *f;
	struct ranked *r;
	size_t n = cp_stacks_functions(st, &f), shown, i;

	if (n == (size_t)-1 || !(r = rank_functions(f, n, sides, div))) {
		if (n != (size_t)-1)
			free(f);
		b->failed = 1;
		return;
	}
	shown = n < CP_REPORT_TOP_FUNCTIONS ? n : CP_REPORT_TOP_FUNCTIONS;
	function_table_head(b, sides, shown, n, unit);
	for (i = 0; i < shown; i++) {
		const struct cp_func_total *x = r[i].f;

		cp_buf_puts(b, "<tr>");
		cp_html_td_code(b, st->names.keys[x->name]);
		if (sides == 1)
			function_cells_one(b, st, x, div);
		else
			function_cells_diff(b, x, div);
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody>");
	if (n > shown)
		cp_buf_printf(
			b,
			"<tfoot><tr><td colspan=\"%d\">%zu more functions not listed</td></tr></tfoot>",
			sides == 1 ? 4 : 5, n - shown);
	cp_buf_puts(b, "</table></div>");
	free(r);
	free(f);
}
