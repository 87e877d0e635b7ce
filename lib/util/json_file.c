/* json_file.c - see json_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"
#include "grow.h"
#include "json_file.h"
#include "utf8.h"

#define MAX_JSON_FILE_BYTES CP_JSON_MAX_FILE_BYTES

/* Reads the whole file into one buffer. jansson's own file reader takes the
 * stdio lock for every byte, which made loading 60 run files on two threads
 * no faster than on one; parsing from memory has no lock at all. */
char *cp_json_read_text(const char *path, size_t *len, struct cp_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t hint, cap = 0, n = 0;
	char *buf = NULL;
	ssize_t got;

	if (fd < 0) {
		cp_fail(err, CP_EXIT_USAGE, "%s: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	/* The size is a hint only: /proc files and pipes report 0. */
	hint = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
	if (hint > MAX_JSON_FILE_BYTES) {
		cp_fail(err, CP_EXIT_USAGE, "%s: cannot read: larger than %lu MiB", path,
			MAX_JSON_FILE_BYTES >> 20);
		goto fail;
	}
	for (;;) {
		if (n == cap) {
			size_t need = buf ? cap + 1 : hint;

			if (need > MAX_JSON_FILE_BYTES) {
				cp_fail(err, CP_EXIT_USAGE, "%s: cannot read: larger than %lu MiB",
					path, MAX_JSON_FILE_BYTES >> 20);
				goto fail;
			}
			if (cp_grow(&buf, &cap, need, 1)) {
				cp_fail(err, CP_EXIT_USAGE, "%s: cannot read: out of memory", path);
				goto fail;
			}
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cp_fail(err, CP_EXIT_USAGE, "%s: cannot read: %s", path, strerror(errno));
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	*len = n;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

size_t cp_json_scan_strings(struct cp_json_string_scan *scan, const char *text, size_t len)
{
	for (size_t i = scan->at; i < len; i++) {
		char c = text[i];

		if (!scan->in_string) {
			const char *q = memchr(text + i, '"', len - i);

			if (!q)
				break;
			i = (size_t)(q - text);
			scan->in_string = 1;
			scan->open = i;
		} else if (scan->escaped) {
			scan->escaped = 0;
		} else if (c == '\\') {
			scan->escaped = 1;
		} else if (c == '"') {
			scan->in_string = 0;
		}
		if (scan->in_string && i - scan->open > CP_STRING_MAX_TEXT)
			return scan->open;
	}
	scan->at = len;
	return (size_t)-1;
}

int cp_json_string_too_long(struct cp_error *err, const char *what, const char *where, size_t bytes)
{
	if (bytes)
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s: %s is a string of %zu bytes; clockprof reads strings of at most %d bytes (64 KiB)",
			what, where, bytes, CP_STRING_MAX);
	return cp_fail(err, CP_EXIT_USAGE,
		       "%s: %s is longer than 64 KiB; clockprof reads strings of at most %d bytes",
		       what, where, CP_STRING_MAX);
}

size_t cp_json_place(char *path, size_t size, size_t len, const char *key, size_t index)
{
	int n = key ? snprintf(path + len, size - len, "%s%.80s%s", len ? "." : "", key,
			       strlen(key) > 80 ? "..." : "") :
		      snprintf(path + len, size - len, "[%zu]", index);

	return n < 0 || (size_t)n >= size - len ? size - 1 : len + (size_t)n;
}

static int check_at(const json_t *v, const char *what, char *path, size_t size, size_t len,
		    struct cp_error *err)
{
	const char *key;
	const json_t *m;
	size_t i;

	if (json_is_string(v) && json_string_length(v) > CP_STRING_MAX)
		return cp_json_string_too_long(err, what, len ? path : "the document",
					       json_string_length(v));
	json_object_foreach((json_t *)v, key, m) {
		size_t at = cp_json_place(path, size, len, key, 0);

		if (strlen(key) > CP_STRING_MAX)
			return cp_json_string_too_long(err, what, "a key", strlen(key));
		if (check_at(m, what, path, size, at, err))
			return -1;
		path[len] = '\0';
	}
	json_array_foreach(v, i, m) {
		size_t at = cp_json_place(path, size, len, NULL, i);

		if (check_at(m, what, path, size, at, err))
			return -1;
		path[len] = '\0';
	}
	return 0;
}

int cp_json_check_strings(const json_t *v, const char *what, const char *field,
			  struct cp_error *err)
{
	char path[512];

	snprintf(path, sizeof(path), "%s", field);
	return check_at(v, what, path, sizeof(path), strlen(path), err);
}

int cp_json_load_file(const char *path, cp_json_validator validate, json_t **doc,
		      struct cp_error *err)
{
	json_error_t jerr;
	size_t len;
	char *text = cp_json_read_text(path, &len, err);
	json_t *d;

	struct cp_json_string_scan scan = { 0 };

	if (!text)
		return -1;
	if (cp_json_scan_strings(&scan, text, len) != (size_t)-1) {
		free(text);
		return cp_json_string_too_long(err, path, "a string", 0);
	}
	d = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!d)
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid JSON: %s (line %d)", path,
			       jerr.text, jerr.line);
	if (cp_json_check_strings(d, path, "", err) || (validate && validate(d, path, err))) {
		json_decref(d);
		return -1;
	}
	*doc = d;
	return 0;
}

char *cp_json_text(const json_t *doc)
{
	return json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
}

int cp_json_write_text(const char *text, const char *path, struct cp_error *err)
{
	int rc = cp_write_file_atomic(path, text, strlen(text), err);

	if (rc == 0 && strcmp(path, "-") == 0)
		rc = cp_write_file_atomic(path, "\n", 1, err);
	return rc;
}

int cp_json_write_file(const json_t *doc, const char *path, struct cp_error *err)
{
	char *text = cp_json_text(doc);
	int rc;

	if (!text)
		return cp_fail(err, CP_EXIT_USAGE, "cannot serialise %s", path);
	rc = cp_json_write_text(text, path, err);
	free(text);
	return rc;
}

json_t *cp_json_utf8(const char *s)
{
	char *copy = cp_utf8_dup(s);
	json_t *j = copy ? json_string(copy) : NULL;

	free(copy);
	return j ? j : json_null();
}

const char *cp_json_str(const json_t *o, const char *key, const char *absent)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : absent;
}

int cp_json_check_schema(const json_t *doc, const char *what, const char *kind, const char *schema,
			 struct cp_error *err)
{
	const json_t *s;

	if (!json_is_object(doc))
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid %s file: not a JSON object", what,
			       kind);
	s = json_object_get(doc, "schema");
	if (!json_is_string(s) || strcmp(json_string_value(s), schema) != 0)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: not a clockprof %s file (schema must be \"%s\")", what, kind,
			       schema);
	return 0;
}
