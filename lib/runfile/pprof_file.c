/* pprof_file.c - a run as pprof's profile.proto; see pprof_file.h.
 *
 * The protobuf-c code is generated at build time from the profile.proto
 * Debian ships with pprof (Makefile: PPROF_GEN). A profile is tables that
 * refer to each other by index or id: strings, functions, mappings and
 * locations are each kept once (a small hash table per kind, keyed by what
 * makes them the same), then packed and gzip-compressed. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "error.h"
#include "grow.h"
#include "key_table.h"
#include "pprof_file.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "symbolize.h"
#include "utf8.h"
#include "version.h"

typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__ValueType pb_value_type;

/* One line of a location as the writer is given it. */
struct line_in {
	const char *function; /* NULL: unknown */
	const char *file;     /* NULL: unknown */
	int line;	      /* 0: unknown */
};

struct location {
	pb_location l;
	pb_line *lines;
	pb_line **line_ptrs;
};

struct sample {
	pb_sample s;
	uint64_t *ids;
	int64_t values[2]; /* clock_reads, requests */
	pb_label via;
	pb_label *label_ptr;
};

struct pprof {
	struct cp_key_table strings, functions, mappings, locations;
	pb_function *fn;
	size_t fn_cap;
	pb_mapping *map;
	size_t map_cap;
	struct location *loc;
	size_t nloc, loc_cap; /* nloc: those filled (to free) */
	struct sample *smp;
	size_t nsmp, smp_cap;
	bool failed;
};

/* The string table index of s (valid UTF-8 from here on; "" for NULL). */
static int64_t str(struct pprof *pp, const char *s)
{
	char *valid = cp_utf8_dup(s ? s : "");
	bool added;
	long i = valid ? cp_key_index(&pp->strings, valid, &added) : -1;

	free(valid);
	if (i < 0) {
		pp->failed = true;
		return 0;
	}
	return i;
}

/* The index of key (taken: freed here) in t, with room made for its entry
 * in the array *items (of elem bytes each) when it is new (*added says
 * so); -1, the profile failed, when out of memory (a NULL key too). */
static long entry_index(struct pprof *pp, struct cp_key_table *t, char *key, void *items,
			size_t *cap, size_t elem, bool *added)
{
	long i = key ? cp_key_index(t, key, added) : -1;

	free(key);
	if (i < 0 || (*added && cp_grow(items, cap, (size_t)i + 1, elem))) {
		pp->failed = true;
		return -1;
	}
	return i;
}

/* A key of the parts joined by a separator no name holds; NULL when out
 * of memory (the profile is then failed). */
static char *join_key(struct pprof *pp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *join_key(struct pprof *pp, const char *fmt, ...)
{
	va_list ap;
	char *key = NULL;

	va_start(ap, fmt);
	if (vasprintf(&key, fmt, ap) < 0) {
		key = NULL;
		pp->failed = true;
	}
	va_end(ap);
	return key;
}

/* The id of the function named name in file (one per pair). */
static uint64_t function_id(struct pprof *pp, const char *name, const char *file)
{
	int64_t n = str(pp, name ? name : "[unknown]"), f = str(pp, file);
	bool added;
	long i = entry_index(pp, &pp->functions,
			     join_key(pp, "%lld:%lld", (long long)n, (long long)f), &pp->fn,
			     &pp->fn_cap, sizeof(*pp->fn), &added);

	if (i < 0)
		return 0;
	if (added) {
		perftools__profiles__function__init(&pp->fn[i]);
		pp->fn[i].id = (uint64_t)i + 1;
		pp->fn[i].name = pp->fn[i].system_name = n;
		pp->fn[i].filename = f;
	}
	return (uint64_t)i + 1;
}

/* The id of the mapping of module (one per file; its build-id is the
 * first one given), 0 for none. */
static uint64_t mapping_id(struct pprof *pp, const char *module, const char *build_id)
{
	bool added;
	long i;

	if (!module)
		return 0;
	i = entry_index(pp, &pp->mappings, cp_utf8_dup(module), &pp->map, &pp->map_cap,
			sizeof(*pp->map), &added);
	if (i < 0)
		return 0;
	if (added) {
		perftools__profiles__mapping__init(&pp->map[i]);
		pp->map[i].id = (uint64_t)i + 1;
		pp->map[i].filename = str(pp, module);
		/* Names and lines come with the profile: pprof must not
		 * look for the files to symbolize them again. */
		pp->map[i].has_functions = pp->map[i].has_filenames = true;
		pp->map[i].has_line_numbers = pp->map[i].has_inline_frames = true;
	}
	if (!pp->map[i].build_id && build_id && *build_id)
		pp->map[i].build_id = str(pp, build_id);
	return (uint64_t)i + 1;
}

/* Fills a new location's lines (innermost first) from the function ids. */
static int fill_location(struct location *l, uint64_t id, uint64_t map, const uint64_t *fns,
			 const struct line_in *in, size_t n)
{
	perftools__profiles__location__init(&l->l);
	l->lines = calloc(n ? n : 1, sizeof(*l->lines));
	l->line_ptrs = calloc(n ? n : 1, sizeof(*l->line_ptrs));
	if (!l->lines || !l->line_ptrs)
		return -1;
	for (size_t k = 0; k < n; k++) {
		perftools__profiles__line__init(&l->lines[k]);
		l->lines[k].function_id = fns[k];
		l->lines[k].line = in[k].line > 0 ? in[k].line : 0;
		l->line_ptrs[k] = &l->lines[k];
	}
	l->l.id = id;
	l->l.mapping_id = map;
	l->l.n_line = n;
	l->l.line = l->line_ptrs;
	return 0;
}

/* The id of the location of in[0..n) (innermost first) in module: one per
 * distinct mapping, functions and lines. */
static uint64_t location_id(struct pprof *pp, const char *module, const char *build_id,
			    const struct line_in *in, size_t n)
{
	uint64_t map = mapping_id(pp, module, build_id), fns[n ? n : 1];
	size_t size = 32 + n * 48, at;
	char *key = malloc(size);
	bool added;
	long i;

	if (!key || pp->failed) { /* after a failure, nothing more is added */
		pp->failed = true;
		free(key);
		return 0;
	}
	at = (size_t)snprintf(key, size, "%llu", (unsigned long long)map);
	for (size_t k = 0; k < n; k++) {
		fns[k] = function_id(pp, in[k].function, in[k].file);
		at += (size_t)snprintf(key + at, size - at, "|%llu:%d", (unsigned long long)fns[k],
				       in[k].line);
	}
	i = entry_index(pp, &pp->locations, key, &pp->loc, &pp->loc_cap, sizeof(*pp->loc), &added);
	if (i < 0)
		return 0;
	if (added) {
		pp->nloc = (size_t)i + 1;
		if (fill_location(&pp->loc[i], (uint64_t)i + 1, map, fns, in, n))
			pp->failed = true;
	}
	return (uint64_t)i + 1;
}

/* Adds a sample at ids (leaf first, taken), with a `via` label when
 * given. */
static void add_sample(struct pprof *pp, uint64_t *ids, size_t n, uint64_t reads, uint64_t requests,
		       const char *via)
{
	struct sample *s;

	if (cp_grow(&pp->smp, &pp->smp_cap, pp->nsmp + 1, sizeof(*pp->smp))) {
		free(ids);
		pp->failed = true;
		return;
	}
	s = &pp->smp[pp->nsmp++];
	memset(s, 0, sizeof(*s));
	perftools__profiles__sample__init(&s->s);
	s->ids = ids;
	s->s.n_location_id = n;
	s->values[0] = (int64_t)reads;
	s->values[1] = (int64_t)requests;
	if (via) {
		perftools__profiles__label__init(&s->via);
		s->via.key = str(pp, "via");
		s->via.str = str(pp, via);
		s->label_ptr = &s->via;
	}
}

/* One sample per call site: its location is the site (the innermost
 * inlined function at the site's file:line, then the functions it is
 * inlined into: the outermost at inlined_at, those between at 0, unknown,
 * as run.json does not hold their lines). */
static void add_call_sites(struct pprof *pp, const struct cp_call_sites *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cp_call_site *c = &cs->sites[i];
		size_t n = c->ninlined + 1;
		struct line_in in[n];
		uint64_t *ids = malloc(sizeof(*ids));

		if (!ids || !c->count) {
			free(ids);
			pp->failed |= !ids;
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			/* innermost first: inlined[] is outermost first */
			const char *fn = k + 1 < n ? c->inlined[n - 2 - k] : c->function;

			in[k] = (struct line_in){ fn, k ? NULL : c->file, k ? 0 : c->line };
		}
		if (n > 1 && c->inlined_at_line > 0)
			in[n - 1] = (struct line_in){ c->function, c->inlined_at_file,
						      c->inlined_at_line };
		if (!c->file)
			in[0].line = 0;
		ids[0] = location_id(pp, c->module, c->build_id, in, n);
		add_sample(pp, ids, 1, c->count, 0, c->via);
	}
}

/* The locations of one stack, leaf first: each address is one location,
 * the frames inlined into it its lines (innermost first). */
static void add_stack(struct pprof *pp, const struct cp_stack *st)
{
	uint64_t *ids = malloc((st->n_frames ? st->n_frames : 1) * sizeof(*ids));
	struct line_in in[st->n_frames ? st->n_frames : 1];
	size_t nids = 0, end = st->n_frames;

	if (!ids || !st->count) {
		pp->failed |= !ids;
		free(ids);
		return;
	}
	while (end > 0) {
		size_t start = end - 1, n = 0;
		const struct cp_frame_pos *pos = st->pos;

		while (start > 0 && pos && pos[start].inlined)
			start--;
		for (size_t k = end; k-- > start; n++)
			in[n] = (struct line_in){ st->frames[k], pos ? pos[k].file : NULL,
						  pos && pos[k].file ? pos[k].line : 0 };
		ids[nids++] = location_id(pp, pos ? pos[start].module : NULL,
					  pos ? pos[start].build_id : NULL, in, n);
		end = start;
	}
	add_sample(pp, ids, nids, st->count, 0, NULL);
}

/* The requests of a func: boundary, at the boundary function (by its
 * name, in its file; no line: the boundary is a function's entry). */
static void add_requests(struct pprof *pp, const struct cp_profile *p)
{
	char *name;
	struct line_in in;
	uint64_t *ids;

	if (!p->request_text[0] || p->request_text[0] == 's' || !p->request_symbol[0])
		return;
	name = cp_symbol_display_name(p->request_symbol);
	ids = malloc(sizeof(*ids));
	if (!name || !ids) {
		free(name);
		free(ids);
		pp->failed = true;
		return;
	}
	in = (struct line_in){ name, NULL, 0 };
	ids[0] = location_id(pp, p->request_file[0] ? p->request_file : NULL,
			     p->request_in_main ? p->target.build_id : NULL, &in, 1);
	add_sample(pp, ids, 1, 0, p->totals.requests, NULL);
	free(name);
}

/* The clock window's start, from run.json's started_at (to the second). */
static int64_t start_ns(const char *rfc3339)
{
	struct tm tm = { 0 };
	const char *end = strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ", &tm);

	return end && !*end ? (int64_t)timegm(&tm) * 1000000000LL : 0;
}

/* A value type: a type and a unit, both strings. */
static void value_type(struct pprof *pp, pb_value_type *v, const char *type, const char *unit)
{
	perftools__profiles__value_type__init(v);
	v->type = str(pp, type);
	v->unit = str(pp, unit);
}

/* What the writer keeps for the profile's own fields. */
struct header {
	pb_value_type types[2], period_type;
	pb_value_type *type_ptrs[2];
	int64_t comments[3];
	char text[3][1024];
};

static void fill_header(struct pprof *pp, const struct cp_profile *p, struct header *h,
			Perftools__Profiles__Profile *prof)
{
	value_type(pp, &h->types[0], "clock_reads", "count");
	value_type(pp, &h->types[1], "requests", "count");
	value_type(pp, &h->period_type, "clock_reads", "count");
	h->type_ptrs[0] = &h->types[0];
	h->type_ptrs[1] = &h->types[1];
	prof->n_sample_type = 2;
	prof->sample_type = h->type_ptrs;
	prof->period_type = &h->period_type;
	prof->period = 1; /* every read counted, none sampled */
	prof->default_sample_type = h->types[0].type;
	prof->time_nanos = start_ns(p->started_at);
	prof->duration_nanos = (int64_t)(p->clock_window_s * 1e9);
	snprintf(h->text[0], sizeof(h->text[0]), "clockprof %s", CLOCKPROF_VERSION);
	cp_utf8_format(h->text[1], sizeof(h->text[1]), "target: %s (pid %d)", p->target.comm,
		       (int)p->target.pid);
	snprintf(h->text[2], sizeof(h->text[2]),
		 "clock reads counted by %s: every read, not sampled%s",
		 cp_mechanism_name(p->mechanism), p->stacks_recorded ? "; whole stacks" : "");
	for (int i = 0; i < 3; i++)
		h->comments[i] = str(pp, h->text[i]);
	prof->n_comment = 3;
	prof->comment = h->comments;
}

/* The profile's pointer arrays over the tables built, slices of one
 * block that prof->function owns (one allocation to fail, one to free);
 * 0 or -1. */
static int link_tables(struct pprof *pp, Perftools__Profiles__Profile *prof)
{
	void **block;

	prof->n_function = pp->functions.n;
	prof->n_mapping = pp->mappings.n;
	prof->n_location = pp->locations.n;
	prof->n_sample = pp->nsmp;
	block = calloc(prof->n_function + prof->n_mapping + prof->n_location + prof->n_sample + 1,
		       sizeof(*block));
	if (!block)
		return -1;
	prof->function = (pb_function **)block;
	prof->mapping = (pb_mapping **)(block + prof->n_function);
	prof->location = (pb_location **)(block + prof->n_function + prof->n_mapping);
	prof->sample = (pb_sample **)(block + prof->n_function + prof->n_mapping +
				      prof->n_location);
	for (size_t i = 0; i < prof->n_function; i++)
		prof->function[i] = &pp->fn[i];
	for (size_t i = 0; i < prof->n_mapping; i++)
		prof->mapping[i] = &pp->map[i];
	for (size_t i = 0; i < prof->n_location; i++)
		prof->location[i] = &pp->loc[i].l;
	for (size_t i = 0; i < pp->nsmp; i++) {
		struct sample *s = &pp->smp[i];

		s->s.location_id = s->ids;
		s->s.n_value = 2;
		s->s.value = s->values;
		s->s.n_label = s->label_ptr ? 1 : 0;
		s->s.label = s->label_ptr ? &s->label_ptr : NULL;
		prof->sample[i] = &s->s;
	}
	prof->n_string_table = pp->strings.n;
	prof->string_table = pp->strings.keys;
	return 0;
}

/* gzip of in[0..n) (malloc'd, *len bytes); NULL when out of memory. */
static unsigned char *gzip(const unsigned char *in, size_t n, size_t *len)
{
	z_stream z = { 0 };
	size_t cap = compressBound((uLong)n) + 64;
	unsigned char *out = malloc(cap);

	/* 15 + 16: a gzip header and trailer, as pprof reads it */
	if (!out || deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return NULL;
	}
	*len = z.total_out;
	deflateEnd(&z);
	return out;
}

static void pprof_free(struct pprof *pp, Perftools__Profiles__Profile *prof)
{
	for (size_t i = 0; i < pp->nloc; i++) {
		free(pp->loc[i].lines);
		free(pp->loc[i].line_ptrs);
	}
	for (size_t i = 0; i < pp->nsmp; i++)
		free(pp->smp[i].ids);
	free(prof->function); /* the block of all four pointer arrays */
	free(pp->fn);
	free(pp->map);
	free(pp->loc);
	free(pp->smp);
	cp_key_table_free(&pp->strings);
	cp_key_table_free(&pp->functions);
	cp_key_table_free(&pp->mappings);
	cp_key_table_free(&pp->locations);
}

unsigned char *cp_pprof_render(const struct cp_profile *p, size_t *len)
{
	struct pprof pp = { 0 };
	struct header h;
	Perftools__Profiles__Profile prof;
	unsigned char *packed = NULL, *out = NULL;
	size_t size;

	perftools__profiles__profile__init(&prof);
	str(&pp, ""); /* the string table starts with "" */
	fill_header(&pp, p, &h, &prof);
	if (p->stacks_recorded)
		for (size_t i = 0; i < p->stacks.n; i++)
			add_stack(&pp, &p->stacks.stacks[i]);
	else
		add_call_sites(&pp, &p->call_sites);
	add_requests(&pp, p);
	if (!pp.failed && !link_tables(&pp, &prof)) {
		size = perftools__profiles__profile__get_packed_size(&prof);
		packed = malloc(size ? size : 1);
		if (packed && perftools__profiles__profile__pack(&prof, packed) == size)
			out = gzip(packed, size, len);
	}
	free(packed);
	pprof_free(&pp, &prof);
	return out;
}

int cp_pprof_write(FILE *f, const struct cp_profile *p, struct cp_error *err)
{
	size_t len = 0;
	unsigned char *bytes = cp_pprof_render(p, &len);

	if (!bytes)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory writing the pprof profile");
	fwrite(bytes, 1, len, f);
	free(bytes);
	return 0;
}
