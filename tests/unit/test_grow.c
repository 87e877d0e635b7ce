/* test_grow.c - malloc'd arrays (grow.h): an array of owned strings freed
 * whole by cp_free_strings (its leaks show under make check-sanitize). */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "unit.h"

TEST(free_strings_frees_a_grown_list)
{
	char **v = NULL;
	size_t n = 0, cap = 0;

	for (int i = 0; i < 40; i++) {
		CHECK(!cp_grow(&v, &cap, n + 1, sizeof(*v)));
		CHECK((v[n] = strdup(i % 2 ? "gettimeofday" : "clock_gettime")) != NULL);
		n++;
	}
	CHECK(cap >= 40);
	cp_free_strings(v, n);
}

TEST(free_strings_takes_an_empty_list)
{
	cp_free_strings(NULL, 0);
	cp_free_strings(calloc(1, sizeof(char *)), 0);
}
