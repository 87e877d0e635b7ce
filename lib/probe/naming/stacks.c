/* stacks.c - see stacks.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_ranges.h"
#include "grow.h"
#include "stacks.h"
#include "symbolize.h"
#include "utf8.h"

struct frames {
	char **v;
	struct cp_frame_pos *pos; /* as v */
	size_t n, cap, pos_cap;
};

/* Appends a frame: its name and position (strings copied, valid UTF-8). */
static void push(struct frames *f, const char *name, const struct cp_frame_info *info,
		 const char *file, int line, bool inlined)
{
	if (cp_grow(&f->v, &f->cap, f->n + 1, sizeof(*f->v)) ||
	    cp_grow(&f->pos, &f->pos_cap, f->n + 1, sizeof(*f->pos)))
		return;
	f->pos[f->n] = (struct cp_frame_pos){
		.file = cp_utf8_dup(file),
		.line = file ? line : 0,
		.module = cp_utf8_dup(info->module),
		.build_id = cp_utf8_dup(info->build_id),
		.inlined = inlined,
	};
	f->v[f->n++] = cp_utf8_dup(name ? name : "?");
}

/* Whether a module is the C library (glibc's libc.so.6, musl's). */
static bool in_c_library(const char *module)
{
	const char *base = module ? strrchr(module, '/') : NULL;

	base = base ? base + 1 : module;
	return base && (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc.musl", 9) ||
			!strncmp(base, "ld-musl", 7));
}

/* The frames of one address, outermost first: the function, then the
 * functions inlined into it down to the one holding addr. The leaf is a
 * probe site (a function's entry, a PLT stub, a vDSO entry) and the C
 * library's frames are its own: both are named from symbol tables alone,
 * so that naming a few stacks does not inflate all of libc6-dbg's
 * compressed DWARF (80-280 ms here, against 3-8 ms without it). */
static void name_address(struct cp_symbolizer *sym, __u64 addr, bool leaf, struct frames *f)
{
	struct cp_frame_info info;
	char label[512];

	cp_symbolize_symbol(sym, addr, &info);
	if (!leaf && !in_c_library(info.module))
		cp_symbolize(sym, addr, &info);
	cp_frame_label(&info, false, label, sizeof(label));
	/* Each frame's line is where it went on to the next: the outer
	 * function's, where the first inlined one was inlined; the innermost
	 * one's, the address's own. */
	for (size_t i = 0; i <= info.n_inlined; i++) {
		const struct cp_inline_frame *next = i < info.n_inlined ? &info.inlined[i] : NULL;

		push(f, i ? info.inlined[i - 1].function : label, &info,
		     next ? next->call_file : info.file, next ? next->call_line : info.line, i > 0);
	}
}

/* The frames and their lines joined by separators no name contains:
 * stacks that name the same path from the same lines have the same key,
 * and are merged by sorting on it. */
static char *frames_key(const struct frames *f)
{
	size_t len = 1;
	char *key, *p;

	for (size_t i = 0; i < f->n; i++)
		len += strlen(f->v[i]) + (f->pos[i].file ? strlen(f->pos[i].file) : 0) + 16;
	key = p = malloc(len);
	if (!key)
		return NULL;
	*p = '\0';
	for (size_t i = 0; i < f->n; i++)
		p += sprintf(p, "%s\x1e%s:%d\x1f", f->v[i], f->pos[i].file ? f->pos[i].file : "",
			     f->pos[i].line);
	return key;
}

struct keyed {
	char *key;
	struct frames frames;
	__u64 count;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

static void free_pos(struct cp_frame_pos *pos, size_t n)
{
	for (size_t i = 0; pos && i < n; i++) {
		free((char *)pos[i].file);
		free((char *)pos[i].module);
		free((char *)pos[i].build_id);
	}
	free(pos);
}

static void free_frames(struct frames *f)
{
	cp_free_strings(f->v, f->n);
	free_pos(f->pos, f->n);
}

int cp_stack_depth_in_code(const struct cp_stack_key *key, const struct cp_code_ranges *code,
			   bool *cut)
{
	int depth = 0;

	*cut = false;
	for (; depth < CP_STACK_DEPTH && key->pc[depth]; depth++) {
		/* Every frame but the leaf is a return address: its call
		 * instruction is the byte before it. */
		__u64 at = depth ? key->pc[depth] - 1 : key->pc[depth];

		if (code && !cp_code_ranges_has(code, at)) {
			*cut = true;
			break;
		}
	}
	return depth;
}

/* Names the frames of raw kept by cp_stack_depth_in_code, root first, into
 * *k; -1 when out of memory. */
static int name_stack(struct cp_symbolizer *sym, const struct cp_stack_count *raw,
		      const struct cp_code_ranges *code, struct keyed *k, uint64_t *truncated)
{
	struct frames f = { 0 };
	bool cut;
	int depth = cp_stack_depth_in_code(&raw->key, code, &cut);

	if (cut)
		*truncated += raw->count;
	/* Root first; each caller named at its call instruction. */
	for (int d = depth - 1; d >= 0; d--)
		name_address(sym, d == 0 ? raw->key.pc[d] : raw->key.pc[d] - 1, d == 0, &f);
	k->key = frames_key(&f);
	k->frames = f;
	k->count = raw->count;
	if (!k->key) {
		free_frames(&f);
		return -1;
	}
	return 0;
}

int cp_named_stacks_build(struct cp_symbolizer *sym, const struct cp_stack_count *raw, size_t nraw,
			  struct cp_named_stacks *out)
{
	struct keyed *all = calloc(nraw ? nraw : 1, sizeof(*all));
	struct cp_code_ranges code;
	bool have_code;
	size_t n = 0;

	out->n = 0;
	out->truncated = 0;
	out->stacks = calloc(nraw ? nraw : 1, sizeof(*out->stacks));
	if (!out->stacks || !all) {
		free(all);
		return -1;
	}
	/* The code mapped now (before naming, which may read the maps
	 * again): a frame elsewhere is where the walk lost its way. Not
	 * known (out of memory): nothing is cut. */
	have_code = cp_symbolizer_code(sym, &code) == 0;
	for (size_t i = 0; i < nraw; i++)
		if (name_stack(sym, &raw[i], have_code ? &code : NULL, &all[n], &out->truncated) ==
		    0)
			n++;
	cp_code_ranges_free(&code);
	qsort(all, n, sizeof(*all), by_key);
	for (size_t i = 0; i < n; i++) {
		if (out->n && !strcmp(all[i].key, all[i - 1].key)) {
			out->stacks[out->n - 1].count += all[i].count;
			free_frames(&all[i].frames);
			continue;
		}
		out->stacks[out->n].frames = (const char *const *)all[i].frames.v;
		out->stacks[out->n].n_frames = all[i].frames.n;
		out->stacks[out->n].pos = all[i].frames.pos;
		out->stacks[out->n++].count = all[i].count;
	}
	for (size_t i = 0; i < n; i++)
		free(all[i].key);
	free(all);
	return 0;
}

void cp_named_stacks_free(struct cp_named_stacks *st)
{
	for (size_t i = 0; i < st->n; i++) {
		for (size_t j = 0; j < st->stacks[i].n_frames; j++)
			free((char *)st->stacks[i].frames[j]);
		free((void *)st->stacks[i].frames);
		free_pos((struct cp_frame_pos *)st->stacks[i].pos, st->stacks[i].n_frames);
	}
	free(st->stacks);
	st->stacks = NULL;
	st->n = 0;
	st->truncated = 0;
}
