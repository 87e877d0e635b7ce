/* test_speedscope.c - lib/runfile/speedscope: speedscope's JSON file format. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "error.h"
#include "speedscope.h"
#include "unit.h"

TEST(speedscope_frames_samples_weights)
{
	const char *a[] = { "main", "handle_request", "now_ns" };
	const char *b[] = { "main", "std::vector<int>::at(int const&)" };
	const char *bad[] = { "main", "\xff\xfe" };
	struct cp_stack st[] = {
		{ a, 3, 200, NULL }, { b, 2, 5, NULL }, { bad, 2, 1, NULL }, { a, 1, 0, NULL }
	};
	char *text = cp_speedscope_render(st, 4, "clock reads: server (pid 1)");
	json_error_t jerr;
	json_t *doc, *frames, *prof, *samples, *weights;

	CHECK(text);
	doc = json_loads(text, 0, &jerr);
	free(text);
	CHECK(doc);
	CHECK_STR(json_string_value(json_object_get(doc, "$schema")),
		  "https://www.speedscope.app/file-format-schema.json");
	frames = json_object_get(json_object_get(doc, "shared"), "frames");
	CHECK_INT(json_array_size(frames), 5); /* main, handle_request, now_ns, at, ?? */
	CHECK_STR(json_string_value(json_object_get(json_array_get(frames, 0), "name")), "main");
	CHECK_STR(json_string_value(json_object_get(json_array_get(frames, 3), "name")),
		  "std::vector<int>::at(int const&)");
	CHECK_STR(json_string_value(json_object_get(json_array_get(frames, 4), "name")), "??");
	prof = json_array_get(json_object_get(doc, "profiles"), 0);
	CHECK_STR(json_string_value(json_object_get(prof, "type")), "sampled");
	CHECK_STR(json_string_value(json_object_get(prof, "unit")), "none");
	CHECK_INT(json_integer_value(json_object_get(prof, "endValue")), 206);
	samples = json_object_get(prof, "samples");
	weights = json_object_get(prof, "weights");
	CHECK_INT(json_array_size(samples), 3); /* the zero-count stack is dropped */
	CHECK_INT(json_array_size(weights), 3);
	CHECK_INT(json_integer_value(json_array_get(weights, 0)), 200);
	/* root first: main, handle_request, now_ns */
	CHECK_INT(json_integer_value(json_array_get(json_array_get(samples, 0), 0)), 0);
	CHECK_INT(json_integer_value(json_array_get(json_array_get(samples, 0), 2)), 2);
	CHECK_INT(json_integer_value(json_array_get(json_array_get(samples, 1), 1)), 3);
	json_decref(doc);
}

TEST(speedscope_write_file)
{
	const char *a[] = { "main" };
	struct cp_stack st[] = { { a, 1, 2, NULL } };
	char dir[] = "/tmp/cp-speedscope-XXXXXX", path[80];
	struct cp_error err = { 0 };
	json_error_t jerr;
	json_t *doc;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.speedscope.json", dir);
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK_INT(cp_speedscope_write(f, st, 1, "x", &err), 0);
	CHECK(fclose(f) == 0);
	doc = json_load_file(path, 0, &jerr);
	unlink(path);
	rmdir(dir);
	CHECK(doc);
	CHECK_STR(json_string_value(json_object_get(doc, "name")), "x");
	json_decref(doc);
}

TEST(speedscope_frames_carry_file_and_line)
{
	/* handle_request reads at two lines: two frames, each with its
	 * line; a frame without a position (the clock entry) has neither. */
	const char *a[] = { "handle_request", "now_ns", "clock_gettime" };
	const struct cp_frame_pos pa[] = { { "t.c", 60, "/bin/t", NULL, false },
					   { "t.c", 23, "/bin/t", NULL, true },
					   { NULL, 0, "/lib/libc.so.6", NULL, false } };
	const struct cp_frame_pos pb[] = { { "t.c", 66, "/bin/t", NULL, false },
					   { "t.c", 23, "/bin/t", NULL, true },
					   { NULL, 0, "/lib/libc.so.6", NULL, false } };
	struct cp_stack st[] = { { a, 3, 2, pa }, { a, 3, 3, pb } };
	char *text = cp_speedscope_render(st, 2, "x");
	json_t *doc, *frames, *f;

	CHECK(text);
	doc = json_loads(text, 0, NULL);
	free(text);
	CHECK(doc);
	frames = json_object_get(json_object_get(doc, "shared"), "frames");
	CHECK_INT(json_array_size(frames), 4); /* handle_request twice, now_ns, clock_gettime */
	f = json_array_get(frames, 0);
	CHECK_STR(json_string_value(json_object_get(f, "file")), "t.c");
	CHECK_INT(json_integer_value(json_object_get(f, "line")), 60);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(frames, 1), "line")), 23);
	f = json_array_get(frames, 2);
	CHECK_STR(json_string_value(json_object_get(f, "name")), "clock_gettime");
	CHECK(!json_object_get(f, "file") && !json_object_get(f, "line"));
	f = json_array_get(frames, 3);
	CHECK_STR(json_string_value(json_object_get(f, "name")), "handle_request");
	CHECK_INT(json_integer_value(json_object_get(f, "line")), 66);
	/* now_ns at 23 is one frame, in both stacks */
	CHECK_INT(
		json_integer_value(json_array_get(
			json_array_get(
				json_object_get(json_array_get(json_object_get(doc, "profiles"), 0),
						"samples"),
				1),
			1)),
		1);
	json_decref(doc);
}
