/* test_html_escape.c - names from the profiled program must never become
 * markup: the text/attribute escaper and the JSON-in-<script> escaper. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "html_escape.h"
#include "unit.h"

static char *script_escape(const char *json)
{
	size_t n = strlen(json), len = cp_json_script_escaped_len(json, n);
	char *out = malloc(len + 1);

	if (!out)
		return NULL;
	out[cp_json_script_escape_to(out, json, n)] = '\0';
	return out;
}

TEST(html_escape_hostile_symbol)
{
	char *s = cp_html_escape("</script><img src=x onerror=alert(1)>");

	CHECK_STR(s, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
	free(s);
}

TEST(html_escape_operator_shift)
{
	char *s = cp_html_escape("std::ostream& operator<<(std::ostream&, T const&)");

	CHECK_STR(s, "std::ostream&amp; operator&lt;&lt;(std::ostream&amp;, T const&amp;)");
	free(s);
}

TEST(html_escape_quotes_for_attributes)
{
	char *s = cp_html_escape("/opt/\"><svg onload='x'>");

	CHECK_STR(s, "/opt/&quot;&gt;&lt;svg onload=&#39;x&#39;&gt;");
	free(s);
}

TEST(html_escape_entity_stays_literal)
{
	char *s = cp_html_escape("a&amp;b");

	CHECK_STR(s, "a&amp;amp;b");
	free(s);
}

TEST(html_escape_controls_and_utf8)
{
	char *s = cp_html_escape("tab\there\x01\x1f\x7f na\xc3\xafve \xe2\x80\xa8");

	/* Controls become U+FFFD; tab and UTF-8 (even U+2028) pass as text. */
	CHECK_STR(s, "tab\there\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd na\xc3\xafve \xe2\x80\xa8");
	free(s);
}

TEST(html_escape_null_and_empty)
{
	char *a = cp_html_escape(NULL), *b = cp_html_escape("");

	CHECK_STR(a, "");
	CHECK_STR(b, "");
	free(a);
	free(b);
}

TEST(html_escape_length_matches_output)
{
	const char *in = "<a href=\"x\">&'</a>\x02";
	char buf[128];
	size_t len = cp_html_escaped_len(in, strlen(in));

	CHECK_INT(cp_html_escape_to(buf, in, strlen(in)), len);
	CHECK(len < sizeof(buf));
}

TEST(json_script_escape_closes_nothing)
{
	char *s = script_escape("{\"f\":\"</script><!--&x\"}");

	CHECK_STR(s, "{\"f\":\"\\u003c/script\\u003e\\u003c!--\\u0026x\"}");
	free(s);
}

TEST(json_script_escape_line_separators)
{
	char *s = script_escape("[\"a\xe2\x80\xa8"
				"b\xe2\x80\xa9"
				"c\xe2\x80\xa7\"]");

	/* U+2027 is not a line terminator and stays as it is. */
	CHECK_STR(s, "[\"a\\u2028b\\u2029c\xe2\x80\xa7\"]");
	free(s);
}

TEST(json_script_escape_round_trips)
{
	json_t *v = json_pack("{s:s}", "name",
			      "</script><img src=x onerror=alert(1)>\xe2\x80\xa8&\\<");
	char *dumped = json_dumps(v, JSON_COMPACT), *s = script_escape(dumped);
	json_t *back = json_loads(s, 0, NULL);

	CHECK(strchr(s, '<') == NULL && strchr(s, '>') == NULL && strchr(s, '&') == NULL);
	CHECK(strstr(s, "\xe2\x80\xa8") == NULL);
	CHECK(back && json_equal(v, back));
	json_decref(back);
	json_decref(v);
	free(dumped);
	free(s);
}
