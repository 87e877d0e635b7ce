/* test_warning_groups.c - lib/gate/warning_groups: like warnings (the same
 * words, other numbers) merged, with their numbers as ranges. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "warning_groups.h"

struct seen {
	char text[8][200];
	size_t count[8];
	int n;
};

static void collect(const char *text, size_t count, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s", text);
		s->count[s->n++] = count;
	}
}

TEST(warning_groups_merge_like_warnings_with_ranges)
{
	const char *in[] = {
		"probe overhead is about 91% of 0.15 s",
		"probe overhead is about 84% of 0.15 s",
		"12 reads have no stack",
		"probe overhead is about 100% of 0.2 s",
		"12 reads have no stack",
		"v2 was seen\001 here", /* digits inside a word stay text */
		"v3 was seen\001 here",
	};
	struct seen s = { 0 };
	json_t *g = cp_warning_groups_new();

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		cp_warning_groups_add(g, in[i]);
	cp_warning_groups_each(g, collect, &s);
	json_decref(g);
	CHECK_INT(s.n, 4);
	CHECK_STR(s.text[0], "probe overhead is about 84-100% of 0.15-0.2 s");
	CHECK_INT(s.count[0], 3);
	CHECK_STR(s.text[1], "12 reads have no stack"); /* one figure: as it was */
	CHECK_INT(s.count[1], 2);
	CHECK_STR(s.text[2], "v2 was seen? here");
	CHECK_STR(s.text[3], "v3 was seen? here");
}
