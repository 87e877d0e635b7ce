/* test_utf8.c - target names made valid UTF-8: each invalid byte becomes
 * U+FFFD, as docs/run-json.md says (it was '?', which a real '?' in a path
 * could not be told from). */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "utf8.h"

#define FFFD "\xef\xbf\xbd"

/* cp_utf8_dup(s) compared with want, and freed. */
static int dup_is(const char *s, const char *want)
{
	char *got = cp_utf8_dup(s);
	int same = got && !strcmp(got, want);

	free(got);
	return same;
}

TEST(utf8_keeps_valid_text)
{
	const char *s = "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x95\x90 ns::now() a?b";

	CHECK(dup_is(s, s));
	CHECK(dup_is("", ""));
}

TEST(utf8_replaces_each_invalid_byte_with_fffd)
{
	CHECK(dup_is("h\xffx", "h" FFFD "x"));
	CHECK(dup_is("a\xc3", "a" FFFD));			   /* cut at the end */
	CHECK(dup_is("\xc0\xafz", FFFD FFFD "z"));		   /* overlong */
	CHECK(dup_is("\xed\xa0\x80z", FFFD FFFD FFFD "z"));	   /* surrogate */
	CHECK(dup_is("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD));	   /* past U+10FFFF */
	CHECK(dup_is("/srv/caf\xe9/app", "/srv/caf" FFFD "/app")); /* Latin-1 path */
	CHECK(cp_utf8_dup(NULL) == NULL);
}

/* A name longer than CP_STRING_MAX (a C++ symbol of megabytes) is cut, at
 * a character, to end in the mark within the limit; one of 20 KB is whole. */
TEST(utf8_cuts_a_name_past_64_kib_with_a_mark)
{
	size_t big = 3 * CP_STRING_MAX, mark = strlen(CP_STRING_CUT_MARK);
	char *s = malloc(big + 1), *got;

	CHECK(s != NULL);
	for (size_t i = 0; i < big; i += 2)
		memcpy(s + i, "\xc3\xa9", 2); /* two-byte characters */
	s[big] = '\0';
	got = cp_utf8_dup(s);
	CHECK(got != NULL);
	CHECK(strlen(got) <= CP_STRING_MAX && strlen(got) > CP_STRING_MAX - mark - 2);
	CHECK(!strcmp(got + strlen(got) - mark, CP_STRING_CUT_MARK));
	CHECK(!memcmp(got, s, strlen(got) - mark));
	CHECK((strlen(got) - mark) % 2 == 0); /* no character split */
	free(got);
	s[20000] = '\0';
	got = cp_utf8_dup(s);
	CHECK(got && !strcmp(got, s));
	free(got);
	s[CP_STRING_MAX] = '\0'; /* exactly at the limit: whole */
	got = cp_utf8_dup(s);
	CHECK(got && !strcmp(got, s));
	free(got);
	free(s);
}
