/* test_call_site_key.c - the place key of a resolved call site: a site
 * whose function, wrapper or inlined function name could not be copied
 * (out of memory while describing it) has no key, and the merge drops it,
 * rather than the key reading a NULL name; and where a site is, for a
 * person. */
#include <stdlib.h>
#include <string.h>

#include "call_sites.h"
#include "unit.h"

TEST(call_site_key_without_a_name_is_null)
{
	struct cp_call_site no_function = { .via = "clock_gettime", .line = 3 };
	struct cp_call_site no_via = { .function = "main", .line = 3 };

	char *names[] = { "now_ns", NULL };
	struct cp_call_site no_inlined = { .function = "main", .via = "clock_gettime", .line = 3,
					   .inlined = names, .ninlined = 2 };

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

/* One helper inlined at two lines of its caller is two places, named
 * apart by the caller's line; a site read in a helper from another file
 * names that file too. */
TEST(call_site_inlined_at_two_lines_is_two_places)
{
	char *names[] = { "now_ns" };
	struct cp_call_site a = { .function = "handle_request", .via = "clock_gettime",
				  .file = "srv.c", .line = 23, .inlined = names, .ninlined = 1,
				  .inlined_at_file = "srv.c", .inlined_at_line = 60 };
	struct cp_call_site b = a, other_file = a, unknown = a, no_file = a;
	char *ka, *kb, *where;

	b.inlined_at_line = 66;
	other_file.inlined_at_file = "main.c";
	unknown.inlined_at_file = NULL;
	unknown.inlined_at_line = 0;
	no_file.inlined_at_file = NULL;
	ka = cp_call_site_place_key(&a);
	kb = cp_call_site_place_key(&b);
	CHECK(ka && kb && strcmp(ka, kb));
	free(ka);
	free(kb);
	CHECK_STR((where = cp_call_site_location(&a)), "srv.c:23 (inlined at line 60)");
	free(where);
	CHECK_STR((where = cp_call_site_location(&other_file)), "srv.c:23 (inlined at main.c:60)");
	free(where);
	CHECK_STR((where = cp_call_site_location(&unknown)), "srv.c:23");
	free(where);
	/* DWARF named the line but no file: still told apart */
	CHECK_STR((where = cp_call_site_location(&no_file)), "srv.c:23 (inlined at line 60)");
	free(where);
	no_file.inlined_at_line = 66;
	ka = cp_call_site_place_key(&a);
	kb = cp_call_site_place_key(&no_file);
	CHECK(ka && kb && strcmp(ka, kb));
	free(ka);
	free(kb);
}

TEST(call_site_location_without_a_line)
{
	struct cp_call_site in_module = { .function = "f", .via = "time", .module = "/usr/bin/srv" };
	struct cp_call_site in_file = { .function = "f", .via = "time", .file = "srv.c" };
	struct cp_call_site nowhere = { .function = "f", .via = "time" };
	char *where;

	CHECK_STR((where = cp_call_site_location(&in_module)), "/usr/bin/srv");
	free(where);
	CHECK_STR((where = cp_call_site_location(&in_file)), "srv.c");
	free(where);
	CHECK_STR((where = cp_call_site_location(&nowhere)), "");
	free(where);
}
