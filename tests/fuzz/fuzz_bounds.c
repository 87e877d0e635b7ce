/* fuzz_bounds.c - a bounds file (the repository's, so a pull request's):
 * parsed, then asked for the rule of a few measure names. */
#include "bounds.h"
#include "error.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "clock_reads/op", "time.ns/op",
					     "calls.now/op", "" };
	struct cp_bound_rule rule;
	struct cp_bounds b;
	struct cp_error err;
	char *s = fuzz_string(data, size);

	if (!s)
		return 0;
	if (cp_bounds_parse((const char *)data, size, "fuzz", &b, &err) == 0) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			cp_bounds_match(&b, names[i], (int)(i & 1));
		cp_bounds_free(&b);
	}
	cp_bound_parse_value(s, &rule);
	free(s);
	return 0;
}
