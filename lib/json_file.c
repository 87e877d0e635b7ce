/* json_file.c - see json_file.h. */
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "error.h"
#include "json_file.h"

int cp_json_load_file(const char *path, cp_json_validator validate, json_t **doc,
		      struct cp_error *err)
{
	json_error_t jerr;
	json_t *d = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);

	if (!d)
		return cp_fail(err, CP_EXIT_USAGE, "%s: %s%s (line %d)", path,
			       jerr.line <= 0 ? "cannot read: " : "invalid JSON: ",
			       jerr.text, jerr.line);
	if (validate && validate(d, path, err)) {
		json_decref(d);
		return -1;
	}
	*doc = d;
	return 0;
}

int cp_json_write_file(const json_t *doc, const char *path, struct cp_error *err)
{
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	int rc;

	if (!text)
		return cp_fail(err, CP_EXIT_USAGE, "cannot serialise %s", path);
	rc = cp_write_file_atomic(path, text, strlen(text), err);
	if (rc == 0 && strcmp(path, "-") == 0)
		rc = cp_write_file_atomic(path, "\n", 1, err);
	free(text);
	return rc;
}
