/* test_folded.c - lib/runfile/folded: FlameGraph folded stacks. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "error.h"
#include "folded.h"
#include "unit.h"

TEST(folded_sorted_merged_escaped)
{
	const char *a[] = { "main", "serve", "handle_request", "now_ns" };
	const char *b[] = { "main", "tick;tock", "line\nbreak" };
	const char *c[] = { "main", "serve", "handle_request", "now_ns" };
	const char *d[] = { "main", "", "std::map<int, int>::at(int const&)" };
	const char *z[] = { "zzz" };
	struct cp_stack st[] = {
		{ a, 4, 200, NULL }, { b, 3, 7, NULL }, { c, 4, 5, NULL },
		{ d, 3, 1, NULL },   { z, 1, 0, NULL },
	};
	size_t len = 0;
	char *text = cp_folded_render(st, 5, &len);

	CHECK(text);
	CHECK_STR(text, "main;[unknown];std::map<int, int>::at(int const&) 1\n"
			"main;serve;handle_request;now_ns 205\n"
			"main;tick:tock;line break 7\n");
	CHECK_INT(len, strlen(text));
	free(text);
}

TEST(folded_empty_input_gives_empty_file)
{
	size_t len = 1;
	char *text = cp_folded_render(NULL, 0, &len);

	CHECK(text);
	CHECK_STR(text, "");
	CHECK_INT(len, 0);
	free(text);
}

TEST(folded_write_is_atomic_file)
{
	const char *a[] = { "main", "read" };
	struct cp_stack st[] = { { a, 2, 3, NULL } };
	char dir[] = "/tmp/cp-folded-XXXXXX", path[64], buf[64] = "";
	struct cp_error err = { 0 };
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	f = fopen(path, "w");
	CHECK(f);
	CHECK_INT(cp_folded_write(f, st, 1, &err), 0);
	CHECK(fclose(f) == 0);
	f = fopen(path, "r");
	CHECK(f);
	CHECK(fgets(buf, sizeof(buf), f));
	fclose(f);
	unlink(path);
	CHECK_STR(buf, "main;read 3\n");
	rmdir(dir);
}
