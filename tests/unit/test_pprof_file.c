/* test_pprof_file.c - lib/runfile/pprof_file: the profile.proto written for
 * --pprof, decoded again with the same generated protobuf-c code: each
 * string, function, mapping and location once, samples with the counts
 * given, lines innermost first, requests at the boundary function. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof_file.h"
#include "profile.h"
#include "profile.pb-c.h"
#include "unit.h"

typedef Perftools__Profiles__Profile pb_profile;

/* gunzip of the writer's bytes, decoded; NULL when either fails. */
static pb_profile *decode(const struct cp_profile *p)
{
	size_t len = 0, cap = 1 << 20;
	unsigned char *gz = cp_pprof_render(p, &len), *raw = malloc(cap);
	z_stream z = { 0 };
	pb_profile *prof = NULL;

	if (gz && raw && inflateInit2(&z, 15 + 16) == Z_OK) {
		z.next_in = gz;
		z.avail_in = (uInt)len;
		z.next_out = raw;
		z.avail_out = (uInt)cap;
		if (inflate(&z, Z_FINISH) == Z_STREAM_END)
			prof = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
		inflateEnd(&z);
	}
	free(gz);
	free(raw);
	return prof;
}

static const char *s_of(const pb_profile *prof, int64_t i)
{
	return i >= 0 && (size_t)i < prof->n_string_table ? prof->string_table[i] : "(bad index)";
}

static const Perftools__Profiles__Location *loc_of(const pb_profile *prof, uint64_t id)
{
	for (size_t i = 0; i < prof->n_location; i++)
		if (prof->location[i]->id == id)
			return prof->location[i];
	return NULL;
}

static const char *fn_name(const pb_profile *prof, uint64_t id)
{
	for (size_t i = 0; i < prof->n_function; i++)
		if (prof->function[i]->id == id)
			return s_of(prof, prof->function[i]->name);
	return "(no function)";
}

/* Whether every string of the table is there once, "" first. */
static int strings_unique(const pb_profile *prof)
{
	if (!prof->n_string_table || strcmp(prof->string_table[0], ""))
		return 0;
	for (size_t i = 0; i < prof->n_string_table; i++)
		for (size_t j = i + 1; j < prof->n_string_table; j++)
			if (!strcmp(prof->string_table[i], prof->string_table[j]))
				return 0;
	return 1;
}

static void two_sites(struct cp_profile *p, struct cp_call_site *sites, char **inl)
{
	/* One place read through two clock functions: one location, two
	 * samples. The other site has now_ns inlined into handle_request, at
	 * its line 60. */
	sites[0] = (struct cp_call_site){ .function = "read_mono",
					  .file = "t.c",
					  .line = 31,
					  .module = "/bin/t",
					  .build_id = "abcd",
					  .via = "clock_gettime",
					  .count = 5 };
	sites[1] = sites[0];
	sites[1].via = "timespec_get";
	sites[1].count = 2;
	sites[2] = (struct cp_call_site){ .function = "handle_request",
					  .file = "t.c",
					  .line = 23,
					  .inlined = inl,
					  .ninlined = 1,
					  .inlined_at_file = "t.c",
					  .inlined_at_line = 60,
					  .module = "/bin/t",
					  .build_id = "abcd",
					  .via = "clock_gettime",
					  .count = 7 };
	p->call_sites.sites = sites;
	p->call_sites.n = 3;
	snprintf(p->request_text, sizeof(p->request_text), "func:handle_request");
	snprintf(p->request_symbol, sizeof(p->request_symbol), "handle_request");
	snprintf(p->request_file, sizeof(p->request_file), "/bin/t");
	p->request_in_main = true;
	p->totals.requests = 4;
	p->clock_window_s = 1.5;
	snprintf(p->started_at, sizeof(p->started_at), "2026-12-01T04:50:14Z");
}

TEST(pprof_call_sites_locations_once_requests_at_boundary)
{
	static struct cp_profile p;
	struct cp_call_site sites[3];
	char *inl[] = { "now_ns" };
	pb_profile *prof;
	const Perftools__Profiles__Location *l;

	memset(&p, 0, sizeof(p));
	two_sites(&p, sites, inl);
	prof = decode(&p);
	CHECK(prof);
	CHECK(strings_unique(prof));
	CHECK_INT(prof->n_sample_type, 2);
	CHECK_STR(s_of(prof, prof->sample_type[0]->type), "clock_reads");
	CHECK_STR(s_of(prof, prof->sample_type[1]->type), "requests");
	CHECK_INT(prof->period, 1);
	CHECK_INT(prof->time_nanos, 1796100614LL * 1000000000LL);
	CHECK_INT(prof->duration_nanos, 1500000000LL);
	CHECK_INT(prof->n_mapping, 1); /* /bin/t once, with its build-id */
	CHECK_STR(s_of(prof, prof->mapping[0]->build_id), "abcd");
	CHECK_INT(prof->n_location, 3); /* read_mono:31, now_ns in handle_request, handle_request */
	CHECK_INT(prof->n_sample, 4);
	CHECK_INT(prof->sample[0]->location_id[0], prof->sample[1]->location_id[0]);
	CHECK_INT(prof->sample[0]->value[0], 5);
	CHECK_INT(prof->sample[1]->value[0], 2);
	CHECK_STR(s_of(prof, prof->sample[1]->label[0]->str), "timespec_get");
	l = loc_of(prof, prof->sample[2]->location_id[0]);
	CHECK(l && l->n_line == 2); /* innermost first */
	CHECK_STR(fn_name(prof, l->line[0]->function_id), "now_ns");
	CHECK_INT(l->line[0]->line, 23);
	CHECK_STR(fn_name(prof, l->line[1]->function_id), "handle_request");
	CHECK_INT(l->line[1]->line, 60); /* where it calls now_ns */
	/* requests: the boundary function's own location, its function the
	 * one now_ns is inlined into */
	CHECK_INT(prof->sample[3]->value[0], 0);
	CHECK_INT(prof->sample[3]->value[1], 4);
	l = loc_of(prof, prof->sample[3]->location_id[0]);
	CHECK(l && l->n_line == 1);
	CHECK_STR(fn_name(prof, l->line[0]->function_id), "handle_request");
	perftools__profiles__profile__free_unpacked(prof, NULL);
}

TEST(pprof_stacks_share_locations_inlined_as_lines)
{
	static struct cp_profile p;
	const char *a[] = { "main", "handle_request", "now_ns", "clock_gettime" };
	const struct cp_frame_pos pa[] = { { "t.c", 71, "/bin/t", "ab", false },
					   { "t.c", 60, "/bin/t", "ab", false },
					   { "t.c", 23, "/bin/t", "ab", true },
					   { NULL, 0, "/lib/libc.so.6", NULL, false } };
	struct cp_frame_pos pb[4];
	struct cp_stack st[2] = { { a, 4, 3, pa }, { a, 4, 4, pb } };
	pb_profile *prof;
	const Perftools__Profiles__Location *l;

	memcpy(pb, pa, sizeof(pb));
	pb[1].line = 66; /* the other inlined call */
	memset(&p, 0, sizeof(p));
	p.stacks_recorded = true;
	p.stacks.stacks = st;
	p.stacks.n = 2;
	prof = decode(&p);
	CHECK(prof);
	CHECK(strings_unique(prof));
	CHECK_INT(prof->n_mapping, 2);
	/* main, clock_gettime shared; now_ns in handle_request at 60 and 66 */
	CHECK_INT(prof->n_location, 4);
	CHECK_INT(prof->n_sample, 2);		      /* no boundary: no requests sample */
	CHECK_INT(prof->sample[0]->n_location_id, 3); /* leaf first */
	CHECK_INT(prof->sample[0]->location_id[0], prof->sample[1]->location_id[0]);
	CHECK_INT(prof->sample[0]->location_id[2], prof->sample[1]->location_id[2]);
	CHECK(prof->sample[0]->location_id[1] != prof->sample[1]->location_id[1]);
	CHECK_INT(prof->sample[1]->value[0], 4);
	l = loc_of(prof, prof->sample[1]->location_id[1]);
	CHECK(l && l->n_line == 2);
	CHECK_STR(fn_name(prof, l->line[0]->function_id), "now_ns");
	CHECK_INT(l->line[0]->line, 23);
	CHECK_STR(fn_name(prof, l->line[1]->function_id), "handle_request");
	CHECK_INT(l->line[1]->line, 66);
	CHECK_INT(prof->n_function, 4); /* each function once */
	perftools__profiles__profile__free_unpacked(prof, NULL);
}

TEST(pprof_strings_from_the_target_made_utf8)
{
	static struct cp_profile p;
	struct cp_call_site site = { .function = "bad\xff",
				     .file = "caf\xe9.c",
				     .line = 3,
				     .module = "/srv/caf\xe9",
				     .via = "time",
				     .count = 1 };
	pb_profile *prof;

	memset(&p, 0, sizeof(p));
	p.call_sites.sites = &site;
	p.call_sites.n = 1;
	prof = decode(&p);
	CHECK(prof);
	for (size_t i = 0; i < prof->n_string_table; i++)
		CHECK(!strchr(prof->string_table[i], '\xff') &&
		      !strchr(prof->string_table[i], '\xe9'));
	CHECK_STR(s_of(prof, prof->mapping[0]->filename), "/srv/caf\xef\xbf\xbd");
	perftools__profiles__profile__free_unpacked(prof, NULL);
}
