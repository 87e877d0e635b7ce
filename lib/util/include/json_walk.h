/* json_walk.h - a JSON object read member by member, with jansson.
 *
 * json_loadb() builds the tree of a whole document before anyone can look
 * at it: a run file of a million measures is gigabytes of values before a
 * reader could say it holds too many. Here jansson parses one member's
 * value at a time (JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK: one value,
 * and error.position says how far it read); only the braces, colons and
 * commas between members are looked at here, and a fault there is put to
 * jansson too, so every message is jansson's own, with the line of the
 * whole file, as json_loadb() on the whole text would have said it. */
#ifndef CP_JSON_WALK_H
#define CP_JSON_WALK_H

#include <jansson.h>
#include <stddef.h>

#include "json_file.h"

struct cp_error;

struct cp_json_walk {
	const char *text; /* the document (read so far) */
	size_t len;
	const char *what; /* names it in messages */
	struct cp_error *err;
	/* Set by cp_json_walk_file, which reads as the walk goes (all zero:
	 * the text is all there). */
	int reading; /* fd has more to read */
	int fd;
	int failed; /* a read failed; err says why */
	char *own;
	size_t cap;
	/* Strings too long are refused as they are read (json_file.h), and
	 * named by the member being read: field, "target.cmdline". */
	struct cp_json_string_scan scan;
	char field[256];
};

/* Called for each member: key (decoded), key_at (offset of its token),
 * *at (offset of the value). It consumes the value, with cp_json_walk_value
 * or cp_json_walk_object, moving *at past it. 0, or -1 with w->err set. */
typedef int (*cp_json_member_fn)(struct cp_json_walk *w, void *ctx, const char *key, size_t key_at,
				 size_t *at);

/* Walks the object at *at (after whitespace), calling fn for each member;
 * *at ends past its closing brace. A key that seen (the object fn fills,
 * or any object holding the keys read so far) already has is refused as
 * a duplicate, as JSON_REJECT_DUPLICATES does. 0, or -1 with w->err set. */
int cp_json_walk_object(struct cp_json_walk *w, size_t *at, const json_t *seen,
			cp_json_member_fn fn, void *ctx);

/* Parses the one value at *at (duplicate keys inside rejected) and moves
 * *at past it: a new reference, or NULL with w->err set. */
json_t *cp_json_walk_value(struct cp_json_walk *w, size_t *at);

/* The first character at or after *at that is not whitespace (*at moved
 * to it), or -1 at the end of the text. */
int cp_json_walk_peek(struct cp_json_walk *w, size_t *at);

/* Reads path and walks its top-level object with seen and fn; the text
 * must end after it. A document that is not an object is parsed whole instead and
 * returned in *other (the caller says what is wrong with it; NULL when it
 * is an object). The file is read as the walk needs it: one refused
 * early is never read whole. A text with a NUL byte is refused (jansson
 * would read on past it in some places), and so is a string (key or
 * value) longer than CP_STRING_MAX, as soon as its text is read past
 * CP_STRING_MAX_TEXT, else once parsed: neither the file nor the string
 * is held whole. A file larger than CP_JSON_MAX_FILE_BYTES is refused by
 * its size. Fails with CP_EXIT_USAGE. */
int cp_json_walk_file(const char *path, const json_t *seen, cp_json_member_fn fn, void *ctx,
		      json_t **other, struct cp_error *err);

#endif
