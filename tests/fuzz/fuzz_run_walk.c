/* fuzz_run_walk.c - the run file read member by member (lib/util/json_walk.c,
 * lib/runfile/run_file_load.c) against the whole-text parse it replaces:
 * the same bytes must give the same document, or the same message (but
 * for a raw NUL byte, which the walk refuses and jansson reads past), and
 * the gate's compact load the same measures and digest as a run made from
 * the whole document. */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compare_run.h"
#include "error.h"
#include "fuzz_common.h"
#include "json_file.h"
#include "run_file.h"

static void same_run(const json_t *doc, const char *path)
{
	struct cp_compare_run whole, compact;
	struct cp_error err;

	if (cp_compare_run_from_doc(doc, 0, &whole))
		return;
	if (cp_compare_load_runs(&path, 1, 0, &compact, &err))
		abort();	/* loaded whole, refused member by member */
	if (strcmp(whole.digest, compact.digest) || whole.nmeasures != compact.nmeasures)
		abort();
	for (size_t k = 0; k < whole.nmeasures; k++)
		if (strcmp(whole.measures[k].name, compact.measures[k].name) ||
		    strcmp(whole.measures[k].unit, compact.measures[k].unit))
			abort();
	cp_compare_run_free(&whole);
	cp_compare_run_free(&compact);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cp_error walked = { 0 }, parsed = { 0 };
	json_error_t jerr;
	char path[64];
	json_t *a = NULL, *b;
	int fd = memfd_create("fuzz-run", MFD_CLOEXEC), ra, rb;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ra = cp_run_file_load(path, &a, &walked);
	if (memchr(data, '\0', size)) {	/* refused, unlike jansson */
		if (ra == 0)
			abort();
		close(fd);
		return 0;
	}
	b = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (!b)
		cp_fail(&parsed, CP_EXIT_USAGE, "%s: invalid JSON: %s (line %d)", path,
			jerr.text, jerr.line);
	/* Both readers cap strings at 64 KiB; the walker may refuse one
	 * from its text (naming its line) before it is parsed: then only the
	 * refusal must agree. */
	rb = !b ? -1 : cp_json_check_strings(b, path, "", &parsed) ? -1 :
	     cp_run_file_validate(b, path, &parsed);
	if (ra != rb || (ra == 0 && !json_equal(a, b)) ||
	    (ra != 0 && strcmp(walked.msg, parsed.msg) &&
	     !(strstr(walked.msg, "64 KiB") && strstr(parsed.msg, "64 KiB")))) {
		fprintf(stderr, "walked: %d %s\nparsed: %d %s\n", ra, walked.msg, rb, parsed.msg);
		abort();
	}
	if (ra == 0)
		same_run(b, path);
	json_decref(a);
	json_decref(b);
	close(fd);
	return 0;
}
