/* test_utf8.c - target names made valid UTF-8 without changing length. */
#include <string.h>

#include "unit.h"
#include "utf8.h"

TEST(utf8_keeps_valid_text)
{
	char s[] = "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x95\x90 ns::now()";
	char copy[sizeof(s)];

	memcpy(copy, s, sizeof(s));
	CHECK_STR(cp_utf8_sanitize(s), copy);
}

TEST(utf8_replaces_each_invalid_byte)
{
	char lone[] = "h\xffx";
	char cut[] = "a\xc3";
	char overlong[] = "\xc0\xafz";
	char surrogate[] = "\xed\xa0\x80z";

	CHECK_STR(cp_utf8_sanitize(lone), "h?x");
	CHECK_STR(cp_utf8_sanitize(cut), "a?");
	CHECK_STR(cp_utf8_sanitize(overlong), "??z");
	CHECK_STR(cp_utf8_sanitize(surrogate), "???" "z");
	CHECK(cp_utf8_sanitize(NULL) == NULL);
}
