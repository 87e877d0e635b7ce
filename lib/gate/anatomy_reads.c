/* anatomy_reads.c - see anatomy_reads.h. */
#include <string.h>

#include "anatomy_reads.h"
#include "json_file.h"

const json_t *cp_anatomy_read(const json_t *anatomy, const json_t *id_value)
{
	const json_t *reads = json_object_get(anatomy, "reads"), *r;
	json_int_t id;
	size_t i;

	if (!json_is_integer(id_value))
		return NULL;
	id = json_integer_value(id_value);
	r = id >= 0 ? json_array_get(reads, (size_t)id) : NULL;
	if (json_is_integer(json_object_get(r, "id")) &&
	    json_integer_value(json_object_get(r, "id")) == id)
		return r;
	json_array_foreach(reads, i, r)
		if (json_is_integer(json_object_get(r, "id")) &&
		    json_integer_value(json_object_get(r, "id")) == id)
			return r;
	return NULL;
}

/* " (inlined at line N)", or "... at FILE:N" in another file, where the
 * read's function calls the helper inlined into it that reads (a read's
 * inlined_at: two reads of one inlined helper differ by it alone). */
static void inlined_at_name(struct cp_buf *plain, const json_t *f, const char *file)
{
	const json_t *at = json_object_get(f, "inlined_at");
	const char *at_file = cp_json_str(at, "file", NULL);
	double line = json_number_value(json_object_get(at, "line"));

	if (!(line > 0 && line < 1e12))
		return;
	if (at_file && strcmp(at_file, file))
		cp_buf_printf(plain, " (inlined at %s:%.0f)", at_file, line);
	else
		cp_buf_printf(plain, " (inlined at line %.0f)", line);
}

static void frame_name(struct cp_buf *plain, const json_t *f)
{
	const char *fn = cp_json_str(f, "function", NULL), *file = cp_json_str(f, "file", NULL);
	double line = json_number_value(json_object_get(f, "line"));

	cp_buf_puts(plain, fn ? fn : "??");
	if (!file)
		return;
	cp_buf_puts(plain, " ");
	cp_buf_puts(plain, file);
	if (line > 0 && line < 1e12)
		cp_buf_printf(plain, ":%.0f", line);
	inlined_at_name(plain, f, file);
}

void cp_anatomy_read_label(struct cp_buf *plain, const json_t *frame, int callers, int all)
{
	const json_t *cs = json_object_get(frame, "callers"), *c;
	size_t n = json_array_size(cs), i;

	frame_name(plain, frame);
	if (!callers || !n)
		return;
	if (!all) {
		cp_buf_puts(plain,
			    n > 1 ? " \xe2\x86\x90 \xe2\x80\xa6 \xe2\x86\x90 " : " \xe2\x86\x90 ");
		frame_name(plain, json_array_get(cs, n - 1));
		return;
	}
	json_array_foreach(cs, i, c) {
		cp_buf_puts(plain, " \xe2\x86\x90 ");
		frame_name(plain, c);
	}
}

static int same_string(const json_t *a, const json_t *b, const char *key)
{
	const char *x = cp_json_str(a, key, NULL), *y = cp_json_str(b, key, NULL);

	return x && y ? !strcmp(x, y) : x == y;
}

static int same_frame(const json_t *a, const json_t *b)
{
	const json_t *la = json_object_get(a, "line"), *lb = json_object_get(b, "line");
	const json_t *ia = json_object_get(json_object_get(a, "inlined_at"), "line");
	const json_t *ib = json_object_get(json_object_get(b, "inlined_at"), "line");

	return same_string(a, b, "function") && same_string(a, b, "file") &&
	       (json_is_number(la) && json_is_number(lb) ?
			json_number_value(la) == json_number_value(lb) :
			!la == !lb) &&
	       json_number_value(ia) == json_number_value(ib);
}

int cp_anatomy_same_read(const json_t *a, const json_t *b)
{
	const json_t *ca = json_object_get(a, "callers"), *cb = json_object_get(b, "callers");
	size_t n = json_array_size(ca) < json_array_size(cb) ? json_array_size(ca) :
							       json_array_size(cb);

	if (!a || !b || !same_frame(a, b))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!same_frame(json_array_get(ca, i), json_array_get(cb, i)))
			return 0;
	return 1;
}
