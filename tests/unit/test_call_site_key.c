/* test_call_site_key.c - the place key of a resolved call site: a site
 * whose function, wrapper or inlined function name could not be copied
 * (out of memory while describing it) has no key, and the merge drops it,
 * rather than the key reading a NULL name. */
#include <stdlib.h>

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
