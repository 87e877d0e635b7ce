/* report_timeline.c - one common shape of request (run.json
 * anatomy.shapes[]) drawn as a row of a timeline, and the names of its
 * reads (report_anatomy.h). The row is an inline SVG written here, not by
 * report.js, so it reads without JavaScript; its geometry goes in SVG
 * attributes (the page's Content-Security-Policy allows no style
 * attribute). Reads are marks at their p50 time since the request's first
 * read; marks closer than TL_MIN_SEP are spread apart so that each stays
 * visible (the times are written in the labels and tooltips). Above the
 * axis: the syscalls and switches between two reads; below: each read's
 * name. A reusable read is ringed, joined by an arc to the read it could
 * reuse, and says so with the share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anatomy_reads.h"
#include "json_file.h"
#include "report_anatomy.h"
#include "report_html.h"

#define TL_W 1000.0 /* viewBox width */
#define TL_PAD 14.0
#define TL_MIN_SEP 16.0
#define TL_LH 14.0 /* one lane of text */
#define TL_MAX_LANES 12
#define TL_MAX_STEPS 64 /* drawn; the step table lists them all */
#define TL_LABEL_CHARS 60
#define TL_NOTE_CHARS 40
#define TL_CHAR_W 6.7 /* estimated width of a character of 11px monospace */
#define TL_ARC_H 22.0

void cp_html_ns(struct cp_buf *b, double ns)
{
	double a = fabs(ns);

	if (!isfinite(ns))
		cp_buf_puts(b, "n/a");
	else if (a < 1000)
		cp_buf_printf(b, "%.0f ns", ns);
	else if (a < 1e6)
		cp_buf_printf(b, "%.3g \xc2\xb5s", ns / 1e3);
	else if (a < 1e9)
		cp_buf_printf(b, "%.3g ms", ns / 1e6);
	else
		cp_buf_printf(b, "%.3g s", ns / 1e9);
}

/* The length in bytes of the first max_chars characters of s (UTF-8:
 * continuation bytes are not characters). */
static size_t cut_at(const char *s, size_t max_chars, int *cut)
{
	size_t i = 0, chars = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (chars++ == max_chars) {
			*cut = 1;
			return i;
		}
	}
	*cut = 0;
	return i;
}

void cp_html_text_cut(struct cp_buf *b, const char *s, size_t max_chars)
{
	int cut;
	size_t n = cut_at(s ? s : "", max_chars, &cut);

	cp_buf_textn(b, s ? s : "", n);
	if (cut)
		cp_buf_puts(b, "\xe2\x80\xa6");
}

/* How many characters s shows once cut at max_chars. */
static size_t shown_chars(const char *s, size_t max_chars)
{
	size_t chars = 0;

	for (; *s && chars <= max_chars; s++)
		chars += ((unsigned char)*s & 0xc0) != 0x80;
	return chars > max_chars ? max_chars + 1 : chars;
}

/* The step before k that read k's clock last, by anatomy.reads' clock
 * names; without them, the last step before k that read `reuses`. */
static long earlier_step(const json_t *anatomy, const json_t *steps, size_t k, const json_t *reuses)
{
	const json_t *mine = json_object_get(
		cp_anatomy_read(anatomy, json_object_get(json_array_get(steps, k), "read")),
		"clock");

	for (size_t j = k; j-- > 0;) {
		const json_t *id = json_object_get(json_array_get(steps, j), "read");
		const json_t *clock = json_object_get(cp_anatomy_read(anatomy, id), "clock");

		if (json_is_string(mine) && json_is_string(clock) ? json_equal(mine, clock) :
								    json_equal(id, reuses))
			return (long)j;
	}
	return -1;
}

const json_t *cp_anatomy_step_reuse(const json_t *anatomy, const json_t *steps, size_t k,
				    size_t *from)
{
	const json_t *read = json_object_get(json_array_get(steps, k), "read"), *e;
	size_t i;

	if (!json_is_integer(read))
		return NULL;
	json_array_foreach(json_object_get(anatomy, "reusable"), i, e) {
		const json_t *reuses = json_object_get(e, "reuses");
		long j;

		if (!json_equal(json_object_get(e, "read"), read) || !json_is_integer(reuses))
			continue;
		/* A pair only where the earlier read is the clock's latest. */
		j = earlier_step(anatomy, steps, k, reuses);
		if (j >= 0 &&
		    json_equal(json_object_get(json_array_get(steps, (size_t)j), "read"), reuses)) {
			*from = (size_t)j;
			return e;
		}
	}
	return NULL;
}

/* One step of the drawn shape. */
struct tl_step {
	const json_t *step, *read, *reuse; /* reuse: its reusable entry */
	size_t from;			   /* the step it could reuse */
	double at, x;
	double lx0, lx1; /* its label's extent */
	int lane, end_anchor;
	int note_lane;		   /* -1: nothing between it and the last */
	double nx;		   /* the note's middle */
	struct cp_buf label, note; /* plain text */
};

struct tl {
	struct tl_step *st;
	size_t n, total;
	int lanes, note_lanes;
	double axis, height;
};

/* A lane of ends[] (*used of them) where [x0, x1] fits, taken. */
static int lane_for(double *ends, int *used, double x0, double x1)
{
	int best = 0;

	for (int i = 0; i < *used; i++) {
		if (ends[i] + 6 <= x0) {
			ends[i] = x1;
			return i;
		}
		if (ends[i] < ends[best])
			best = i;
	}
	if (*used < TL_MAX_LANES)
		best = (*used)++;
	ends[best] = x1;
	return best;
}

/* Marks at their time, spread TL_MIN_SEP apart, fitted into the width. */
static void place_marks(struct tl *t)
{
	double max_at = 0, span = TL_W - 2 * TL_PAD, last;

	for (size_t i = 0; i < t->n; i++) {
		double at = -1;

		cp_rj_num(t->st[i].step, "at_ns", &at);
		t->st[i].at = isfinite(at) && at > 0 ? at : 0;
		if (t->st[i].at > max_at)
			max_at = t->st[i].at;
	}
	for (size_t i = 0; i < t->n; i++) {
		double x = TL_PAD + (max_at > 0 ? t->st[i].at / max_at * span : 0);

		if (i && x < t->st[i - 1].x + TL_MIN_SEP)
			x = t->st[i - 1].x + TL_MIN_SEP;
		t->st[i].x = x;
	}
	last = t->n ? t->st[t->n - 1].x : TL_PAD;
	if (last > TL_W - TL_PAD)
		for (size_t i = 0; i < t->n; i++)
			t->st[i].x = TL_PAD + (t->st[i].x - TL_PAD) * span / (last - TL_PAD);
}

/* What lay between step i and the one before: its syscalls, its switches. */
static void step_note(struct cp_buf *note, const json_t *step)
{
	const json_t *sw = json_object_get(step, "switches");
	const json_t *call;
	double vol = 0, pre = 0;
	size_t i;

	/* Plain text: escaped once, where it is written. */
	json_array_foreach(json_object_get(step, "syscalls"), i, call)
		cp_buf_printf(note, "%s%s", i ? ", " : "",
			      json_is_string(call) ? json_string_value(call) : "?");
	cp_rj_num(sw, "voluntary", &vol);
	cp_rj_num(sw, "preempted", &pre);
	if (vol > 0)
		cp_buf_printf(note, "%s%.0f switch%s", note->len ? "; " : "", vol,
			      vol == 1 ? "" : "es");
	if (pre > 0)
		cp_buf_printf(note, "%s%.0f preempted", note->len ? "; " : "", pre);
}

/* Label and note texts, and the lanes they go in. */
static void place_texts(struct tl *t)
{
	double ends[TL_MAX_LANES] = { 0 }, note_ends[TL_MAX_LANES] = { 0 };

	for (size_t i = 0; i < t->n; i++) {
		struct tl_step *s = &t->st[i];
		double w;

		cp_buf_printf(&s->label, "%zu. ", i + 1);
		if (s->reuse)
			cp_buf_printf(&s->label, "could reuse %zu.: ", s->from + 1);
		if (s->read)
			cp_anatomy_read_label(&s->label, s->read, 1, 0);
		else
			cp_buf_puts(&s->label, "(unknown read)");
		w = (double)shown_chars(s->label.data ? s->label.data : "", TL_LABEL_CHARS) *
		    TL_CHAR_W;
		s->end_anchor = s->x + w > TL_W - 2;
		s->lx0 = s->end_anchor ? s->x - w : s->x;
		s->lx1 = s->lx0 + w;
		s->lane = lane_for(ends, &t->lanes, s->lx0, s->lx1);
		s->note_lane = -1;
		/* The first read's: since the request began, written from it. */
		if (!i)
			cp_buf_puts(&s->note, "before: ");
		step_note(&s->note, s->step);
		if (s->note.len == (i ? 0 : strlen("before: ")))
			continue;
		w = (double)shown_chars(s->note.data, TL_NOTE_CHARS) * TL_CHAR_W;
		s->nx = i ? (t->st[i - 1].x + s->x) / 2 : s->x + w / 2;
		s->nx = fmin(fmax(s->nx, w / 2 + 2), TL_W - w / 2 - 2);
		s->note_lane = lane_for(note_ends, &t->note_lanes, s->nx - w / 2, s->nx + w / 2);
	}
	t->axis = 6 + t->note_lanes * TL_LH + TL_ARC_H;
	t->height = t->axis + 16 + t->lanes * TL_LH + 6;
}

/* The tooltip of a mark: the read in full, its times, what came before
 * it, and what it could reuse. */
static void mark_title(struct cp_buf *b, const struct tl *t, const struct tl_step *s, size_t i)
{
	struct cp_buf plain = { 0 };
	double gap = NAN, v;

	cp_buf_printf(&plain, "%zu. ", i + 1);
	cp_anatomy_read_label(&plain, s->read, 1, 1);
	cp_buf_puts(&plain, "; at ");
	cp_html_ns(&plain, s->at);
	cp_rj_num(s->step, "gap_ns", &gap);
	if (i) {
		cp_buf_puts(&plain, ", ");
		cp_html_ns(&plain, gap);
		cp_buf_puts(&plain, " after the read before");
	}
	if (s->note_lane >= 0)
		cp_buf_printf(&plain, i ? "; between them: %s" : "; since the request began, %s",
			      s->note.data);
	if (s->reuse) {
		cp_buf_printf(&plain, "; could reuse the value of %zu. ", s->from + 1);
		cp_anatomy_read_label(&plain, t->st[s->from].read, 1, 1);
		if (cp_rj_num(s->reuse, "share", &v))
			cp_buf_printf(&plain, " (held in %.1f%% of the sampled requests with both)",
				      100 * v);
	}
	cp_buf_puts(b, "<title>");
	cp_buf_text(b, plain.data);
	cp_buf_puts(b, "</title>");
	cp_buf_free(&plain);
}

/* The arc from the read a reusable read could reuse to it, its share at
 * the top. */
static void reuse_arc(struct cp_buf *b, const struct tl *t, const struct tl_step *s)
{
	double x0 = t->st[s->from].x, x1 = s->x, mid = (x0 + x1) / 2, share;

	cp_buf_printf(b, "<path class=\"reuse-arc\" d=\"M%.1f %.1f Q%.1f %.1f %.1f %.1f\"/>", x0,
		      t->axis - 6, mid, t->axis - TL_ARC_H - 4, x1, t->axis - 6);
	if (cp_rj_num(s->reuse, "share", &share) && isfinite(share))
		cp_buf_printf(b,
			      "<text class=\"reuse-share\" x=\"%.1f\" y=\"%.1f\" "
			      "text-anchor=\"middle\">%.0f%%</text>",
			      fmin(fmax(mid, 16), TL_W - 16), t->axis - TL_ARC_H / 2 - 4,
			      100 * share);
}

static void draw_gaps(struct cp_buf *b, const struct tl *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tl_step *s = &t->st[i];
		const json_t *sc = json_object_get(s->step, "syscalls");
		double vol = 0;

		cp_rj_num(json_object_get(s->step, "switches"), "voluntary", &vol);
		if (i)
			cp_buf_printf(b,
				      "<line class=\"gap%s%s\" x1=\"%.1f\" y1=\"%.1f\" "
				      "x2=\"%.1f\" y2=\"%.1f\"/>",
				      json_array_size(sc) ? " sys" : "", vol > 0 ? " sw" : "",
				      t->st[i - 1].x, t->axis, s->x, t->axis);
		if (s->note_lane < 0)
			continue;
		cp_buf_printf(b,
			      "<text class=\"between\" x=\"%.1f\" y=\"%.1f\" "
			      "text-anchor=\"middle\">",
			      s->nx, 6 + (s->note_lane + 1) * TL_LH - 3);
		cp_html_text_cut(b, s->note.data, TL_NOTE_CHARS);
		cp_buf_puts(b, "</text>");
	}
}

static void draw_marks(struct cp_buf *b, const struct tl *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tl_step *s = &t->st[i];
		double ly = t->axis + 16 + (s->lane + 1) * TL_LH - 3;

		if (s->reuse)
			reuse_arc(b, t, s);
		cp_buf_printf(b, "<g class=\"mark%s\" data-step=\"%zu\">",
			      s->reuse ? " reusable" : "", i + 1);
		mark_title(b, t, s, i);
		cp_buf_printf(b,
			      "<line class=\"leader\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			      "y2=\"%.1f\"/>",
			      s->x, t->axis + 6, s->x, ly - 9);
		if (s->reuse)
			cp_buf_printf(b,
				      "<circle class=\"ring\" cx=\"%.1f\" cy=\"%.1f\" r=\"8.5\"/>",
				      s->x, t->axis);
		cp_buf_printf(b, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"/>", s->x,
			      t->axis);
		cp_buf_printf(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\"%s>", s->x, ly,
			      s->end_anchor ? " text-anchor=\"end\"" : "");
		cp_html_text_cut(b, s->label.data, TL_LABEL_CHARS);
		cp_buf_puts(b, "</text></g>");
	}
}

static void tl_free(struct tl *t)
{
	for (size_t i = 0; i < t->n; i++) {
		cp_buf_free(&t->st[i].label);
		cp_buf_free(&t->st[i].note);
	}
	free(t->st);
}

void cp_report_timeline(struct cp_buf *b, const json_t *anatomy, const json_t *shape, size_t index,
			size_t s)
{
	const json_t *steps = json_object_get(shape, "steps");
	struct tl t = { 0 };

	t.total = json_array_size(steps);
	t.n = t.total < TL_MAX_STEPS ? t.total : TL_MAX_STEPS;
	if (!t.n)
		return;
	if (!(t.st = calloc(t.n, sizeof(*t.st)))) {
		b->failed = 1;
		return;
	}
	for (size_t i = 0; i < t.n; i++) {
		t.st[i].step = json_array_get(steps, i);
		t.st[i].read = cp_anatomy_read(anatomy, json_object_get(t.st[i].step, "read"));
		t.st[i].reuse = cp_anatomy_step_reuse(anatomy, steps, i, &t.st[i].from);
	}
	place_marks(&t);
	place_texts(&t);
	cp_buf_printf(b,
		      "<svg class=\"timeline\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		      "aria-labelledby=\"tl-%zu-%zu\"><title id=\"tl-%zu-%zu\">Shape %zu: "
		      "%zu reads in order%s</title>",
		      TL_W, ceil(t.height), index, s, index, s, s + 1, t.total,
		      t.n < t.total ? " (the first 64 drawn)" : "");
	cp_buf_printf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
		      TL_PAD, t.axis, TL_W - TL_PAD, t.axis);
	draw_gaps(b, &t);
	draw_marks(b, &t);
	cp_buf_puts(b, "</svg>");
	tl_free(&t);
}
