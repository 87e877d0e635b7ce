/* test_key_table.c - strings numbered in the order first seen
 * (key_table.h), as the pprof writer's tables and the report's frame
 * names use them. */
#include <stdio.h>

#include "key_table.h"
#include "unit.h"

TEST(key_table_numbers_keys_in_the_order_first_seen)
{
	struct cp_key_table t = { 0 };
	char name[32] = "handle_request";
	bool added;

	CHECK_INT(cp_key_index(&t, name, &added), 0);
	CHECK(added);
	CHECK_INT(cp_key_index(&t, "clock_gettime", &added), 1);
	name[0] = 'H'; /* the table holds its own copy */
	CHECK_INT(cp_key_index(&t, "handle_request", &added), 0);
	CHECK(!added);
	CHECK_STR(t.keys[0], "handle_request");
	CHECK_INT(t.n, 2);
	cp_key_table_free(&t);
	CHECK(!t.keys && !t.n);
}

TEST(key_table_finds_every_key_after_growing)
{
	struct cp_key_table t = { 0 };
	char key[32];
	bool added;

	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "f%d", i);
		CHECK_INT(cp_key_index(&t, key, &added), i);
	}
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "f%d", i);
		CHECK_INT(cp_key_index(&t, key, &added), i);
		CHECK(!added);
	}
	cp_key_table_free(&t);
}
