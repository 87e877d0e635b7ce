/* test_interval_record.c - --interval's records: each is the difference of
 * two cumulative snapshots (totals, call sites matched by place whatever
 * their order, counters), numbered and timed back to back. */
#include <stdlib.h>
#include <string.h>

#include "interval_record.h"
#include "profile.h"
#include "unit.h"

static struct cp_call_site site(const char *fn, int line, uint64_t count, uint64_t inreq)
{
	return (struct cp_call_site){ .function = (char *)fn,
				      .file = (char *)"srv.c",
				      .line = line,
				      .module = (char *)"/srv/server",
				      .via = (char *)"clock_gettime",
				      .count = count,
				      .in_requests = inreq };
}

static json_int_t int_at(json_t *doc, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(doc, a), b));
}

/* The count of the call site named fn in the record, -1: absent. */
static json_int_t site_count(json_t *doc, const char *fn)
{
	json_t *sites = json_object_get(doc, "call_sites"), *s;
	size_t i;

	json_array_foreach(sites, i, s)
		if (!strcmp(json_string_value(json_object_get(s, "function")), fn))
			return json_integer_value(json_object_get(s, "count"));
	return -1;
}

TEST(interval_record_is_the_difference_of_snapshots)
{
	struct cp_interval_writer w;
	struct cp_profile *p = calloc(1, sizeof(*p));
	struct cp_call_site first[2] = { site("serve", 10, 30, 20), site("log", 20, 5, 0) };
	/* The second snapshot lists the sites in another order, and a new one. */
	struct cp_call_site second[3] = { site("log", 20, 105, 0), site("serve", 10, 30, 20),
					  site("tick", 30, 7, 0) };
	json_t *a, *b;

	CHECK(p && cp_interval_writer_init(&w, NULL) == 0);
	p->dist_event = -1;
	p->totals.all.reads = 35;
	p->totals.all.by_clock[1] = 35;
	p->totals.max_reads_per_request = 3;
	p->duration_s = 1.0;
	p->call_sites = (struct cp_call_sites){ first, 2 };
	a = cp_interval_record_build(&w, p, false);
	CHECK(a != NULL);
	CHECK_STR(json_string_value(json_object_get(a, "schema")), "clockprof.interval/1");
	CHECK_INT(int_at(a, "interval", "index"), 0);
	CHECK_INT(int_at(a, "clock_reads", "total"), 35);
	CHECK_INT(site_count(a, "serve"), 30);

	p->totals.all.reads = 142;
	p->totals.all.by_clock[1] = 142;
	p->duration_s = 2.5;
	p->call_sites = (struct cp_call_sites){ second, 3 };
	b = cp_interval_record_build(&w, p, true);
	CHECK(b != NULL);
	CHECK_INT(int_at(b, "interval", "index"), 1);
	CHECK(json_is_true(json_object_get(json_object_get(b, "interval"), "last")));
	CHECK(json_real_value(json_object_get(json_object_get(b, "interval"), "start_s")) == 1.0);
	CHECK(json_real_value(json_object_get(json_object_get(b, "interval"), "seconds")) == 1.5);
	CHECK_INT(int_at(b, "clock_reads", "total"), 107);
	CHECK_INT(site_count(b, "log"), 100);
	CHECK_INT(site_count(b, "tick"), 7);
	CHECK_INT(site_count(b, "serve"), -1); /* nothing new there: left out */
	CHECK_INT(json_array_size(json_object_get(b, "call_sites")), 2);
	json_decref(a);
	json_decref(b);
	cp_interval_writer_free(&w);
	free(p);
}

/* The sum of the record's call-site counts. */
static json_int_t sites_sum(json_t *doc)
{
	json_t *s;
	json_int_t sum = 0;
	size_t i;

	json_array_foreach(json_object_get(doc, "call_sites"), i, s)
		sum += json_integer_value(json_object_get(s, "count"));
	return sum;
}

TEST(interval_record_tells_sites_apart_by_their_inlined_chain)
{
	/* now_ns inlined into helper_a and into helper_b: one function, file
	 * and line, two places (call_sites.c keeps them apart). */
	char *chain_a[] = { "helper_a" }, *chain_b[] = { "helper_b" };
	struct cp_interval_writer w;
	struct cp_profile *p = calloc(1, sizeof(*p));
	struct cp_call_site first[2] = { site("now_ns", 5, 1000, 0), site("now_ns", 5, 40, 0) };
	struct cp_call_site second[2] = { site("now_ns", 5, 1100, 0), site("now_ns", 5, 50, 0) };
	json_t *a, *b;

	first[0].inlined = second[0].inlined = chain_a;
	first[1].inlined = second[1].inlined = chain_b;
	first[0].ninlined = first[1].ninlined = second[0].ninlined = second[1].ninlined = 1;
	CHECK(p && cp_interval_writer_init(&w, NULL) == 0);
	p->dist_event = -1;
	p->totals.all.reads = 1040;
	p->call_sites = (struct cp_call_sites){ first, 2 };
	a = cp_interval_record_build(&w, p, false);
	p->totals.all.reads = 1150;
	p->call_sites = (struct cp_call_sites){ second, 2 };
	b = cp_interval_record_build(&w, p, true);
	CHECK(a && b);
	CHECK_INT(sites_sum(b), 110); /* 100 + 10, not 1100 - 40 + ... */
	json_decref(a);
	json_decref(b);
	cp_interval_writer_free(&w);
	free(p);
}
