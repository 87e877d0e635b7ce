/* test_json_arena.c - jansson allocations inside a JSON arena
 * (lib/util/json_arena.c), and the parallel work queue (lib/util/parallel.c) that
 * loads run files with them. Under AddressSanitizer (make check-sanitize)
 * a value freed to the wrong allocator, or leaked, fails the run. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "json_arena.h"
#include "parallel.h"
#include "unit.h"

TEST(json_arena_parses_resets_and_reuses)
{
	struct cp_json_arena arena = { 0 };
	json_t *before = json_pack("{s:s}", "made", "with malloc");
	json_t *doc, *kept;

	cp_json_arena_enter(&arena);
	doc = json_loads("{\"host\": {\"kernel\": \"6.1\"}, \"measures\": {\"a\": 1}}",
			 0, NULL);
	CHECK(doc != NULL);
	/* A malloc'd value released inside the arena goes back to malloc
	 * (LeakSanitizer would report it otherwise). */
	json_decref(before);
	cp_json_arena_leave();
	kept = json_deep_copy(json_object_get(doc, "host"));
	CHECK(kept != NULL);
	cp_json_arena_reset(&arena);

	/* The next document reuses the block; the copy is untouched. */
	cp_json_arena_enter(&arena);
	doc = json_loads("{\"host\": {\"kernel\": \"overwritten\"}}", 0, NULL);
	cp_json_arena_leave();
	CHECK(doc != NULL);
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc, "host"), "kernel")),
		  "overwritten");
	CHECK_STR(json_string_value(json_object_get(kept, "kernel")), "6.1");
	json_decref(kept);
	cp_json_arena_release(&arena);
}

TEST(json_arena_takes_values_larger_than_a_block)
{
	struct cp_json_arena arena = { 0 };
	size_t big = 9u << 20;	/* over two blocks */
	char *text = malloc(big + 3);
	json_t *doc;

	CHECK(text != NULL);
	text[0] = '"';
	memset(text + 1, 'x', big);
	text[big + 1] = '"';
	text[big + 2] = 0;
	for (int round = 0; round < 2; round++) {
		cp_json_arena_enter(&arena);
		doc = json_loads(text, JSON_DECODE_ANY, NULL);
		cp_json_arena_leave();
		CHECK(doc != NULL);
		CHECK_INT(json_string_length(doc), big);
		CHECK(json_string_value(doc)[big - 1] == 'x');
		cp_json_arena_reset(&arena);
	}
	free(text);
	cp_json_arena_release(&arena);
}

struct visits {
	int count[1000];
	size_t worker[1000];
};

static void visit(void *ctx, size_t i, size_t worker)
{
	struct visits *v = ctx;

	/* Each item is given to one thread only: no race on its slots. */
	v->count[i]++;
	v->worker[i] = worker;
}

TEST(parallel_for_visits_each_item_once)
{
	static struct visits v;
	size_t workers = cp_parallel_workers(1000);

	CHECK(workers >= 1 && workers <= CP_PARALLEL_MAX_WORKERS);
	CHECK_INT(cp_parallel_workers(0), 1);
	CHECK_INT(cp_parallel_workers(1), 1);
	cp_parallel_for(1000, workers, visit, &v);
	for (int i = 0; i < 1000; i++) {
		CHECK_INT(v.count[i], 1);
		CHECK(v.worker[i] < workers);
	}
	cp_parallel_for(0, workers, visit, &v);	/* nothing to do, nothing done */
	for (int i = 0; i < 1000; i++)
		CHECK_INT(v.count[i], 1);
}
