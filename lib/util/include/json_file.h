/* json_file.h - reading and writing clockprof's JSON files (run.json,
 * verdict.json) with jansson: duplicate keys rejected, a validator run on
 * what was read, one clear line on failure, atomic writes. */
#ifndef CP_JSON_FILE_H
#define CP_JSON_FILE_H

#include <jansson.h>

struct cp_error;

/* Checks a parsed document; `what` names it in messages. */
typedef int (*cp_json_validator)(const json_t *doc, const char *what,
				 struct cp_error *err);

/* Loads path and validates it; on success *doc holds a new reference.
 * Unreadable, invalid or rejected files fail with CP_EXIT_USAGE. */
int cp_json_load_file(const char *path, cp_json_validator validate, json_t **doc,
		      struct cp_error *err);

/* The whole text of path (malloc'd, *len bytes, not NUL-terminated),
 * read with plain read(2): jansson's file reader takes the stdio lock per
 * byte. NULL with CP_EXIT_USAGE when unreadable or over 1 GiB. */
char *cp_json_read_text(const char *path, size_t *len, struct cp_error *err);

/* Serialises doc (indented, sorted keys, ASCII) and writes it atomically to
 * path ("-": standard output). */
int cp_json_write_file(const json_t *doc, const char *path, struct cp_error *err);

/* The two halves of cp_json_write_file: the text (malloc'ed; NULL when
 * out of memory), and writing a text made by it. */
char *cp_json_text(const json_t *doc);
int cp_json_write_text(const char *text, const char *path, struct cp_error *err);

/* A string from outside (the target, the command line) as a JSON string:
 * valid UTF-8 whatever its bytes (utf8.h), or jansson would refuse it and
 * the whole document be lost. json null for NULL (and out of memory). */
json_t *cp_json_utf8(const char *s);

/* The string at key in object o, or absent when there is none (no such
 * member, or not a string): documents read back are not trusted to hold
 * the types they should. */
const char *cp_json_str(const json_t *o, const char *key, const char *absent);

#endif
