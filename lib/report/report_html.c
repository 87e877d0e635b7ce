/* report_html.c - see report_html.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_html.h"

int cp_rj_num(const json_t *obj, const char *key, double *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		return 0;
	*out = json_number_value(v);
	return 1;
}

/* Drops trailing zeros after a decimal point: "5.50" -> "5.5". */
static void trim_zeros(char *s)
{
	char *dot = strchr(s, '.'), *end;

	if (!dot || strchr(s, 'e'))
		return;
	end = s + strlen(s) - 1;
	while (end > dot && *end == '0')
		*end-- = '\0';
	if (end == dot)
		*end = '\0';
}

void cp_html_num(struct cp_buf *b, double v)
{
	double a = fabs(v);
	char tmp[64], out[96];
	size_t n, o = 0, digits, first;

	if (!isfinite(v)) {
		cp_buf_puts(b, "n/a");
		return;
	}
	if (a >= 1e15 || (a > 0 && a < 0.001)) {
		snprintf(tmp, sizeof(tmp), "%.3g", v);
		cp_buf_puts(b, tmp);
		return;
	}
	if (a >= 1000 || v == floor(v)) {
		snprintf(tmp, sizeof(tmp), "%.0f", v);
		n = strlen(tmp);
		first = tmp[0] == '-';
		digits = n - first;
		if (first)
			out[o++] = '-';
		for (size_t i = first; i < n; i++) {
			out[o++] = tmp[i];
			digits--;
			if (digits && digits % 3 == 0)
				out[o++] = ',';
		}
		out[o] = '\0';
		cp_buf_puts(b, out);
		return;
	}
	snprintf(tmp, sizeof(tmp),
		 a >= 100 ? "%.1f" :
		 a >= 10  ? "%.2f" :
		 a >= 1	  ? "%.3f" :
			    "%.3g",
		 v);
	trim_zeros(tmp);
	cp_buf_puts(b, tmp);
}

void cp_html_pct(struct cp_buf *b, double v)
{
	if (!isfinite(v)) {
		cp_buf_puts(b, "n/a");
		return;
	}
	cp_buf_printf(b, "%+.2f%%", v);
}

void cp_html_td_num(struct cp_buf *b, double v)
{
	if (!isfinite(v)) {
		cp_buf_puts(b, "<td class=\"num na\" data-v=\"\">n/a</td>");
		return;
	}
	cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">", v);
	cp_html_num(b, v);
	cp_buf_puts(b, "</td>");
}

void cp_html_td_code(struct cp_buf *b, const char *text)
{
	cp_buf_puts(b, "<td><code>");
	cp_buf_text(b, text ? text : "");
	cp_buf_puts(b, "</code></td>");
}

void cp_html_td_json(struct cp_buf *b, const json_t *v)
{
	if (json_is_number(v)) {
		cp_html_td_num(b, json_number_value(v));
	} else if (json_is_string(v)) {
		cp_buf_puts(b, "<td>");
		cp_buf_text(b, json_string_value(v));
		cp_buf_puts(b, "</td>");
	} else if (json_is_boolean(v)) {
		cp_buf_puts(b, json_is_true(v) ? "<td>yes</td>" : "<td>no</td>");
	} else {
		cp_buf_puts(b, "<td class=\"na\" data-v=\"\">n/a</td>");
	}
}

void cp_html_td_members(struct cp_buf *b, const json_t *o, const char *const *keys)
{
	for (; *keys; keys++) {
		const char *dot = strchr(*keys, '.');
		const json_t *v = o;

		if (dot) {
			char outer[64];

			snprintf(outer, sizeof(outer), "%.*s", (int)(dot - *keys), *keys);
			v = json_object_get(v, outer);
		}
		cp_html_td_json(b, json_object_get(v, dot ? dot + 1 : *keys));
	}
}

void cp_html_json_text(struct cp_buf *b, const json_t *v)
{
	char *s;

	if (json_is_string(v)) {
		cp_buf_text(b, json_string_value(v));
		return;
	}
	if (json_is_number(v)) {
		cp_html_num(b, json_number_value(v));
		return;
	}
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	cp_buf_text(b, s ? s : "n/a");
	free(s);
}

void cp_html_fact(struct cp_buf *b, const char *term, const char *text)
{
	if (!text)
		return;
	cp_buf_puts(b, "<dt>");
	cp_buf_text(b, term);
	cp_buf_puts(b, "</dt><dd>");
	cp_buf_text(b, text);
	cp_buf_puts(b, "</dd>");
}

void cp_html_json_join(struct cp_buf *b, const json_t *array, const char *sep)
{
	const json_t *v;
	size_t i;

	json_array_foreach((json_t *)array, i, v) {
		if (i)
			cp_buf_puts(b, sep);
		cp_html_json_text(b, v);
	}
}
