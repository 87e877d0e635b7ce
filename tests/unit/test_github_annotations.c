/* test_github_annotations.c - workflow commands (lib/gate/github_annotations.c):
 * escaping per GitHub's documented rules, the 10-error cap, and names
 * that try to inject commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "github_annotations.h"
#include "unit.h"
#include "verdict_fixture.h"

static char *annotations(const json_t *v, int *lines)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*lines = cp_github_annotations_write(f, v);
	fclose(f);
	return buf;
}

TEST(github_escape_rules)
{
	char buf[128];

	cp_github_escape_data(buf, sizeof(buf), "a%b\r\nc:d,e");
	CHECK_STR(buf, "a%25b%0D%0Ac:d,e");
	cp_github_escape_property(buf, sizeof(buf), "a%b\r\nc:d,e");
	CHECK_STR(buf, "a%25b%0D%0Ac%3Ad%2Ce");
	cp_github_escape_data(buf, 6, "%%%"); /* never half an escape */
	CHECK_STR(buf, "%25");
}

TEST(github_at_most_ten_errors_then_a_notice)
{
	const char *names[12];
	char storage[12][16], *out, *line;
	json_t *v;
	int lines, errors = 0, notices = 0;

	for (int i = 0; i < 12; i++) {
		snprintf(storage[i], sizeof(storage[i]), "m%02d/op", i);
		names[i] = storage[i];
	}
	v = fixture_regressed_verdict(names, 12, 0);
	CHECK(v != NULL);
	out = annotations(v, &lines);
	CHECK_INT(lines, 11);
	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (!strncmp(line, "::error title=", 14))
			errors++;
		else if (!strncmp(line, "::notice title=clockprof::2 more measures regressed", 51))
			notices++;
		else
			unit_fail(__FILE__, __LINE__, "unexpected line: %.80s", line);
	}
	CHECK_INT(errors, 10);
	CHECK_INT(notices, 1);
	free(out);
	json_decref(v);
}

TEST(github_hostile_names_cannot_inject)
{
	static const char *const names[] = {
		"x\n::error::pwned", "y\r\n::add-mask::secret", "100%0A", "a::b,c",
		"`tick`|pipe",	     "::stop-commands::abc",
	};
	json_t *v = fixture_regressed_verdict(names, 6, 0);
	char *out, *line;
	int lines, n = 0;

	CHECK(v != NULL);
	out = annotations(v, &lines);
	CHECK_INT(lines, 6);
	CHECK(strchr(out, '\r') == NULL);
	for (line = out; *line; line = strchr(line, '\n') + 1) {
		/* Every line is one of ours. */
		CHECK(!strncmp(line, "::error title=clockprof%3A ", 27));
		n++;
	}
	CHECK_INT(n, 6);
	CHECK(strstr(out, "\n::add-mask") == NULL);
	CHECK(strstr(out, "\n::stop-commands") == NULL);
	CHECK(strstr(out, "\n::error::pwned") == NULL);
	/* Titles escape ':' and ','; messages escape '%'. */
	CHECK(strstr(out, "title=clockprof%3A a%3A%3Ab%2Cc regressed::") != NULL);
	CHECK(strstr(out, "Measure '100%250A'") != NULL);
	CHECK(strstr(out, "Measure 'x\\n::error::pwned'") != NULL);
	free(out);
	json_decref(v);
}

TEST(github_stop_commands_token)
{
	char *buf = NULL, token[33], token2[33];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char want[128];

	cp_github_stop_commands(f, token);
	cp_github_resume_commands(f, token);
	fclose(f);
	CHECK_INT(strlen(token), 32);
	CHECK(strspn(token, "0123456789abcdef") == 32);
	snprintf(want, sizeof(want), "::stop-commands::%s\n::%s::\n", token, token);
	CHECK_STR(buf, want);
	free(buf);
	f = fopen("/dev/null", "w");
	cp_github_stop_commands(f, token2);
	fclose(f);
	CHECK(strcmp(token, token2) != 0);
}

/* The line a regressed per-site measure gained most is the annotation's
 * file= and line=; a path from the target stays one property, and one the
 * runner could not take as it is (a control byte) points nowhere. */
TEST(github_error_points_at_the_line_that_gained)
{
	static const char *const paths[] = { "src/a,b:c.c", "src/x\ny.c" };
	static const char *const want[] = { "::error file=src/a%2Cb%3Ac.c,line=42,title=",
					    "::error title=" };
	/* The message names the line too (C-escaped, then the runner's data
	 * escaping): the one place it shows when file= cannot. */
	static const char *const said[] = { "; gained reads at src/a,b:c.c:42 (1 -> 2)\n",
					    "; gained reads at src/x\\ny.c:42 (1 -> 2)\n" };

	for (int i = 0; i < 2; i++) {
		const char *names[] = { "clock_reads@f/op" };
		json_t *v = fixture_regressed_verdict(names, 1, 0);
		json_t *m = json_array_get(json_object_get(v, "measures"), 0);
		char *out;
		int lines;

		json_object_set_new(m, "lines",
				    json_pack("[{s:s, s:i, s:f, s:f, s:s}]", "file", paths[i],
					      "line", 42, "base", 1.0, "head", 2.0, "repo_path",
					      paths[i]));
		out = annotations(v, &lines);
		CHECK(out && !strncmp(out, want[i], strlen(want[i])));
		CHECK(out && strstr(out, said[i]) != NULL);
		CHECK_INT(lines, 1);
		free(out);
		json_decref(v);
	}
}
