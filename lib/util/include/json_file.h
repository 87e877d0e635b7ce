/* json_file.h - reading and writing clockprof's JSON files (run.json,
 * verdict.json) with jansson: duplicate keys rejected, a validator run on
 * what was read, one clear line on failure, atomic writes. */
#ifndef CP_JSON_FILE_H
#define CP_JSON_FILE_H

#include <jansson.h>
#include <stddef.h>

#include "utf8.h"

struct cp_error;

/* Checks a parsed document; `what` names it in messages. */
typedef int (*cp_json_validator)(const json_t *doc, const char *what, struct cp_error *err);

/* Strings in the files clockprof reads are at most CP_STRING_MAX bytes
 * (utf8.h), keys included: a longer one fails the file with CP_EXIT_USAGE
 * naming it, before jansson holds it where that can be told from the text
 * alone. JSON text a string takes is at least as long as the string and
 * at most 6 times (\u0001): text longer than this is a string too long. */
#define CP_STRING_MAX_TEXT (6 * CP_STRING_MAX)

/* Where a scan of JSON text for strings too long stands, across reads. */
struct cp_json_string_scan {
	size_t at;   /* scanned up to here */
	size_t open; /* the quote of the string being scanned */
	int in_string, escaped;
};

/* Scans text[scan->at..len) on from where the scan stood: the offset of
 * the opening quote of a string whose text is longer than
 * CP_STRING_MAX_TEXT, or (size_t)-1 while there is none. */
size_t cp_json_scan_strings(struct cp_json_string_scan *scan, const char *text, size_t len);

/* Fails with CP_EXIT_USAGE when a string in v (keys included) is longer
 * than CP_STRING_MAX, naming it by its place: field is v's ("target";
 * "" for the whole document). */
int cp_json_check_strings(const json_t *v, const char *what, const char *field,
			  struct cp_error *err);

/* Names a member (key, its first 80 bytes) or else element index of the
 * value at path[0..len) in path: "target" + "cmdline" + [3] is
 * "target.cmdline[3]". Returns the new length (cut to fit size). */
size_t cp_json_place(char *path, size_t size, size_t len, const char *key, size_t index);

/* The failure for a string too long: what (the file), where (its place),
 * and its length in bytes (0: only known to be too long). */
int cp_json_string_too_long(struct cp_error *err, const char *what, const char *where,
			    size_t bytes);

/* Loads path and validates it; on success *doc holds a new reference.
 * Unreadable, invalid or rejected files (a string too long included) fail
 * with CP_EXIT_USAGE. */
int cp_json_load_file(const char *path, cp_json_validator validate, json_t **doc,
		      struct cp_error *err);

/* Fails with CP_EXIT_USAGE unless doc is a JSON object whose "schema" is
 * schema: the first check of a document read back, kind naming its sort
 * in the message ("run", "verdict"). */
int cp_json_check_schema(const json_t *doc, const char *what, const char *kind, const char *schema,
			 struct cp_error *err);

/* Far beyond any run file or verdict (a run with --stacks of a large C++
 * program is some 100 MB); a bigger input is a mistake, refused by its
 * size before it is read. */
#define CP_JSON_MAX_FILE_BYTES (1UL << 30)

/* The whole text of path (malloc'd, *len bytes, not NUL-terminated),
 * read with plain read(2): jansson's file reader takes the stdio lock per
 * byte. NULL with CP_EXIT_USAGE when unreadable or over
 * CP_JSON_MAX_FILE_BYTES (a file that says so is not read at all). */
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
