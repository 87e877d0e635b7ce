/* json_walk.c - see json_walk.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "grow.h"
#include "json_walk.h"

#define MAX_TEXT_BYTES CP_JSON_MAX_FILE_BYTES
/* The first read; each next one doubles what was read. The fuzz build
 * makes it tiny, so that values cross read boundaries. */
#ifndef CP_JSON_WALK_FIRST_READ
#define CP_JSON_WALK_FIRST_READ (64u << 10)
#endif

/* What the walk expected where the text went wrong: jansson is shown the
 * rest of the text behind a prefix that puts its parser in the same
 * place, so it finds the same fault and words it as it always does. */
static const char *const state_prefix[] = {
	/* the space: a token of
						 * the rest must not join
						 * the prefix's last one */
	"{ ",	     /* a key or '}' after '{' */
	"{\"\" ",    /* ':' after a key */
	"{\"\":0 ",  /* ',' or '}' after a value */
	"{\"\":0, ", /* a key after ',' */
	"{} ",	     /* the end of the text after the object */
	"{\"\": ",   /* a value (its fault, or the byte after it) */
};
enum walk_state { AFTER_OPEN, AFTER_KEY, AFTER_VALUE, AFTER_COMMA, AFTER_END, IN_VALUE };

static int line_at(const struct cp_json_walk *w, size_t at);

/* A string whose text already runs past CP_STRING_MAX_TEXT: refused
 * before any more of it is read, naming the member being read and the
 * line the string starts on. */
static int too_long(struct cp_json_walk *w, size_t open)
{
	char where[320];

	snprintf(where, sizeof(where), "a string in %s (line %d)",
		 w->field[0] ? w->field : "the document", line_at(w, open));
	cp_json_string_too_long(w->err, w->what, where, 0);
	return w->failed = 1, -1;
}

/* Reads on, when the text comes from a file: as much again as was read
 * so far, so a file refused early is never read whole, and a value that
 * spans a read is parsed again only a few times. 1 when bytes came, 0 at
 * the end, -1 on a failure (w->err set, and the walk ends with it). */
static int read_more(struct cp_json_walk *w)
{
	size_t want = w->len ? w->len : CP_JSON_WALK_FIRST_READ;
	const char *nul;
	ssize_t got;
	size_t open;

	if (!w->reading || w->failed)
		return w->failed ? -1 : 0;
	if (w->len + want > MAX_TEXT_BYTES)
		want = MAX_TEXT_BYTES - w->len + 1;
	if (cp_grow(&w->own, &w->cap, w->len + want, 1)) {
		cp_fail(w->err, CP_EXIT_USAGE, "%s: cannot read: out of memory", w->what);
		return w->failed = 1, -1;
	}
	w->text = w->own;
	do
		got = read(w->fd, w->own + w->len, want);
	while (got < 0 && errno == EINTR);
	if (got < 0) {
		cp_fail(w->err, CP_EXIT_USAGE, "%s: cannot read: %s", w->what, strerror(errno));
		return w->failed = 1, -1;
	}
	if (got == 0) {
		w->reading = 0; /* the caller closes fd */
		return 0;
	}
	/* jansson takes a raw NUL byte for the end of some values and reads
	 * on (where a whole-text parse and a walk would differ); JSON text
	 * never has one. */
	if ((nul = memchr(w->own + w->len, '\0', (size_t)got))) {
		w->len += (size_t)got;
		cp_fail(w->err, CP_EXIT_USAGE, "%s: invalid JSON: NUL byte (line %d)", w->what,
			line_at(w, (size_t)(nul - w->own)));
		return w->failed = 1, -1;
	}
	w->len += (size_t)got;
	if ((open = cp_json_scan_strings(&w->scan, w->own, w->len)) != (size_t)-1)
		return too_long(w, open);
	if (w->len > MAX_TEXT_BYTES) {
		cp_fail(w->err, CP_EXIT_USAGE, "%s: cannot read: larger than %lu MiB", w->what,
			MAX_TEXT_BYTES >> 20);
		return w->failed = 1, -1;
	}
	return 1;
}

static void read_all(struct cp_json_walk *w)
{
	while (read_more(w) > 0)
		;
}

static int line_at(const struct cp_json_walk *w, size_t at)
{
	int line = 1;

	for (const char *p = w->text, *end = w->text + at; (p = memchr(p, '\n', (size_t)(end - p)));
	     p++)
		line++;
	return line;
}

static int fail_at(struct cp_json_walk *w, size_t at, const json_error_t *e)
{
	if (w->failed)
		return -1; /* the read failed: that is the message */
	return cp_fail(w->err, CP_EXIT_USAGE, "%s: invalid JSON: %s (line %d)", w->what, e->text,
		       line_at(w, at) + (e->line > 0 ? e->line - 1 : 0));
}

static int fail_structure(struct cp_json_walk *w, size_t at, enum walk_state s)
{
	size_t plen = strlen(state_prefix[s]), rest;
	json_error_t e;
	char *buf;
	json_t *v;

	read_all(w);
	if (w->failed)
		return -1;
	rest = w->len - at;
	if (!(buf = malloc(plen + rest + 1)))
		return cp_fail(w->err, CP_EXIT_USAGE, "%s: out of memory", w->what);
	memcpy(buf, state_prefix[s], plen);
	memcpy(buf + plen, w->text + at, rest);
	v = json_loadb(buf, plen + rest, JSON_REJECT_DUPLICATES, &e);
	free(buf);
	if (v) { /* cannot happen: the walk stopped at a fault */
		json_decref(v);
		return cp_fail(w->err, CP_EXIT_USAGE, "%s: invalid JSON (line %d)", w->what,
			       line_at(w, at));
	}
	return fail_at(w, at, &e);
}

int cp_json_walk_peek(struct cp_json_walk *w, size_t *at)
{
	for (;;) {
		while (*at < w->len && w->text[*at] && strchr(" \t\r\n", w->text[*at]))
			(*at)++;
		if (*at < w->len)
			return (unsigned char)w->text[*at];
		if (read_more(w) <= 0)
			return -1;
	}
}

/* One value at *at, parsed by jansson with flags. A value that ends (or
 * fails) where the text read so far ends may go on in what is not read
 * yet ("12" of "125"): it is parsed again with more. */
static json_t *parse_one(struct cp_json_walk *w, size_t at, size_t flags, json_error_t *e)
{
	for (;;) {
		json_t *v = json_loadb(w->text + at, w->len - at,
				       JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | flags, e);

		if (v && at + (size_t)e->position < w->len)
			return v;
		json_decref(v);
		if (read_more(w) <= 0)
			return w->failed ?
				       NULL :
				       json_loadb(w->text + at, w->len - at,
						  JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | flags,
						  e);
	}
}

json_t *cp_json_walk_value(struct cp_json_walk *w, size_t *at)
{
	json_error_t e;
	json_t *v;

	cp_json_walk_peek(w, at);
	v = parse_one(w, *at, JSON_REJECT_DUPLICATES, &e);
	if (!v) {
		/* Parsed alone, a value's fault can read differently (the
		 * context jansson quotes): said as the whole text says it. */
		fail_structure(w, *at, IN_VALUE);
		return NULL;
	}
	if (cp_json_check_strings(v, w->what, w->field, w->err)) {
		json_decref(v);
		return NULL;
	}
	*at += (size_t)e.position;
	return v;
}

/* A key is lexed as any string (with \\u0000 let through, so that the
 * message for it is the one jansson gives keys). */
static json_t *parse_key(struct cp_json_walk *w, size_t *at, enum walk_state s)
{
	json_error_t e;
	json_t *v = parse_one(w, *at, JSON_ALLOW_NUL, &e);

	if (!v) {
		fail_structure(w, *at, s);
		return NULL;
	}
	*at += (size_t)e.position;
	return v;
}

/* Fails as jansson does for a bad key: the key's own text quoted when
 * it is short. */
static int key_fail(struct cp_json_walk *w, size_t key_at, const char *msg)
{
	json_error_t e;
	size_t end = key_at;
	json_t *key = parse_key(w, &end, AFTER_OPEN);

	json_decref(key);
	if (end - key_at <= 20)
		snprintf(e.text, sizeof(e.text), "%s near '%.*s'", msg, (int)(end - key_at),
			 w->text + key_at);
	else
		snprintf(e.text, sizeof(e.text), "%s", msg);
	e.line = 1;
	return fail_at(w, key_at, &e);
}

/* One member: its key, the colon, then fn for the value. */
static int member(struct cp_json_walk *w, size_t *at, const json_t *seen, cp_json_member_fn fn,
		  void *ctx, enum walk_state s, size_t *value_at)
{
	size_t key_at, field_len;
	char name[320];
	json_t *key;
	int rc;

	if (cp_json_walk_peek(w, at) != '"')
		return fail_structure(w, *at, s);
	key_at = *at;
	if (!(key = parse_key(w, at, s)))
		return -1;
	if (strlen(json_string_value(key)) != json_string_length(key)) {
		json_decref(key);
		return key_fail(w, key_at, "NUL byte in object key not supported");
	}
	if (json_string_length(key) > CP_STRING_MAX) {
		snprintf(name, sizeof(name), "a key in %s (line %d)",
			 w->field[0] ? w->field : "the document", line_at(w, key_at));
		rc = cp_json_string_too_long(w->err, w->what, name, json_string_length(key));
		json_decref(key);
		return rc;
	}
	/* Before the colon, as jansson checks. */
	if (json_object_get(seen, json_string_value(key))) {
		json_decref(key);
		return key_fail(w, key_at, "duplicate object key");
	}
	if (cp_json_walk_peek(w, at) != ':') {
		json_decref(key);
		return fail_structure(w, *at, AFTER_KEY);
	}
	(*at)++;
	cp_json_walk_peek(w, at);
	*value_at = *at;
	/* The member's place, for messages: "target", "measures.NAME". */
	field_len = strlen(w->field);
	cp_json_place(w->field, sizeof(w->field), field_len, json_string_value(key), 0);
	rc = fn(w, ctx, json_string_value(key), key_at, at);
	w->field[field_len] = '\0';
	json_decref(key);
	return rc;
}

int cp_json_walk_object(struct cp_json_walk *w, size_t *at, const json_t *seen,
			cp_json_member_fn fn, void *ctx)
{
	enum walk_state s = AFTER_OPEN;
	size_t value_at = 0;
	int c;

	if (cp_json_walk_peek(w, at) != '{') {
		json_decref(cp_json_walk_value(w, at));
		return cp_fail(w->err, CP_EXIT_USAGE, "%s: invalid JSON: object expected (line %d)",
			       w->what, line_at(w, *at));
	}
	(*at)++;
	if (cp_json_walk_peek(w, at) == '}') {
		(*at)++;
		return 0;
	}
	for (;;) {
		if (member(w, at, seen, fn, ctx, s, &value_at))
			return -1;
		c = cp_json_walk_peek(w, at);
		if (c == '}')
			break;
		/* After a number or a word, jansson read the next byte as
		 * part of that token: the value goes to it again. */
		if (c != ',')
			return strchr("}]\" \t\r\n", w->text[*at - 1]) ?
				       fail_structure(w, *at, AFTER_VALUE) :
				       fail_structure(w, value_at, IN_VALUE);
		(*at)++;
		s = AFTER_COMMA;
	}
	(*at)++;
	return 0;
}

int cp_json_walk_file(const char *path, const json_t *seen, cp_json_member_fn fn, void *ctx,
		      json_t **other, struct cp_error *err)
{
	struct cp_json_walk w = { .what = path, .err = err };
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	size_t at = 0;
	struct stat st;
	json_error_t e;

	*other = NULL;
	if (fd < 0)
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot read: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && (unsigned long long)st.st_size > MAX_TEXT_BYTES) {
		close(fd);
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot read: larger than %lu MiB", path,
			       MAX_TEXT_BYTES >> 20);
	}
	w.fd = fd;
	w.reading = 1;
	w.text = "";
	if (cp_json_walk_peek(&w, &at) != '{') {
		/* Not an object: jansson says what is wrong with the text, the
		 * caller what is wrong with the value. */
		read_all(&w);
		if (!w.failed) { /* else err says why already */
			*other = json_loadb(w.text, w.len, JSON_REJECT_DUPLICATES, &e);
			rc = *other ? 0 : fail_at(&w, 0, &e);
		}
	} else if (cp_json_walk_object(&w, &at, seen, fn, ctx) == 0) {
		rc = cp_json_walk_peek(&w, &at) < 0 ? 0 : fail_structure(&w, at, AFTER_END);
	}
	if (w.failed)
		rc = -1;
	close(fd);
	free(w.own);
	return rc;
}
