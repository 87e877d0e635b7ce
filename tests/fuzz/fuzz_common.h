/* fuzz_common.h - what every libFuzzer harness (tests/fuzz/fuzz_*.c) shares:
 * the fuzzer's bytes as a NUL-terminated string, and a JSON document parsed
 * the way clockprof parses files (lib/util/json_file.c). */
#ifndef CP_FUZZ_COMMON_H
#define CP_FUZZ_COMMON_H

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A copy of data with a NUL added (the readers take C strings). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

static inline json_t *fuzz_json(const uint8_t *data, size_t size)
{
	json_error_t jerr;

	return json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
}

/* Writers are fed to the null device: written in place, never replaced
 * (lib/util/atomic_file.c), and nothing piles up on disk. */
#define FUZZ_SINK "/dev/null"

#endif
