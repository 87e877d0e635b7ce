/* test_call_site_key.c - the place key of a resolved call site: a site
 * whose function, wrapper or inlined function name could not be copied
 * (out of memory while describing it) has no key, and the merge drops it,
 * rather than the key reading a NULL name; and where a site is, for a
 * person. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_sites.h"
#include "unit.h"

TEST(call_site_key_without_a_name_is_null)
{
	struct cp_call_site no_function = { .via = "clock_gettime", .line = 3 };
	struct cp_call_site no_via = { .function = "main", .line = 3 };

	char *names[] = { "now_ns", NULL };
	struct cp_call_site no_inlined = { .function = "main",
					   .via = "clock_gettime",
					   .line = 3,
					   .inlined = names,
					   .ninlined = 2 };

	CHECK(cp_call_site_place_key(&no_function) == NULL);
	CHECK(cp_call_site_place_key(&no_via) == NULL);
	CHECK(cp_call_site_place_key(&no_inlined) == NULL);
}

TEST(call_site_key_names_function_and_via)
{
	struct cp_call_site c = { .function = "main", .via = "clock_gettime", .line = 3 };
	char *key = cp_call_site_place_key(&c);

	CHECK(key != NULL);
	CHECK(strstr(key, "main") && strstr(key, "clock_gettime"));
	free(key);
}

/* Whether a and b have keys, and different ones. */
static int two_places(const struct cp_call_site *a, const struct cp_call_site *b)
{
	char *ka = cp_call_site_place_key(a), *kb = cp_call_site_place_key(b);
	int apart = ka && kb && strcmp(ka, kb);

	free(ka);
	free(kb);
	return apart;
}

/* Where c is, as cp_call_site_location says it, in buf. */
static const char *location(const struct cp_call_site *c, char *buf, size_t len)
{
	char *where = cp_call_site_location(c);

	snprintf(buf, len, "%s", where ? where : "(out of memory)");
	free(where);
	return buf;
}

/* One helper inlined at two lines of its caller is two places, named
 * apart by the caller's line (by the line alone where DWARF names no
 * file); a site read in a helper from another file names that file too. */
TEST(call_site_inlined_at_two_lines_is_two_places)
{
	char *names[] = { "now_ns" }, buf[128];
	struct cp_call_site a = { .function = "handle_request",
				  .via = "clock_gettime",
				  .file = "srv.c",
				  .line = 23,
				  .inlined = names,
				  .ninlined = 1,
				  .inlined_at_file = "srv.c",
				  .inlined_at_line = 60 };
	struct cp_call_site b = a, other_file = a, unknown = a, no_file = a;

	b.inlined_at_line = 66;
	other_file.inlined_at_file = "main.c";
	unknown.inlined_at_file = NULL;
	unknown.inlined_at_line = 0;
	no_file.inlined_at_file = NULL;
	CHECK(two_places(&a, &b));
	CHECK_STR(location(&a, buf, sizeof(buf)), "srv.c:23 (inlined at line 60)");
	CHECK_STR(location(&other_file, buf, sizeof(buf)), "srv.c:23 (inlined at main.c:60)");
	CHECK_STR(location(&unknown, buf, sizeof(buf)), "srv.c:23");
	CHECK_STR(location(&no_file, buf, sizeof(buf)), "srv.c:23 (inlined at line 60)");
	no_file.inlined_at_line = 66;
	CHECK(two_places(&a, &no_file));
}

TEST(call_site_location_without_a_line)
{
	struct cp_call_site in_module = { .function = "f",
					  .via = "time",
					  .module = "/usr/bin/srv" };
	struct cp_call_site in_file = { .function = "f", .via = "time", .file = "srv.c" };
	struct cp_call_site nowhere = { .function = "f", .via = "time" };
	char buf[128];

	CHECK_STR(location(&in_module, buf, sizeof(buf)), "/usr/bin/srv");
	CHECK_STR(location(&in_file, buf, sizeof(buf)), "srv.c");
	CHECK_STR(location(&nowhere, buf, sizeof(buf)), "");
}
