/* json_walk.c - see json_walk.h. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json_file.h"
#include "json_walk.h"

/* What the walk expected where the text went wrong: jansson is shown the
 * rest of the text behind a prefix that puts its parser in the same
 * place, so it finds the same fault and words it as it always does. */
static const char *const state_prefix[] = {	/* the space: a token of
						 * the rest must not join
						 * the prefix's last one */
	"{ ",		/* a key or '}' after '{' */
	"{\"\" ",	/* ':' after a key */
	"{\"\":0 ",	/* ',' or '}' after a value */
	"{\"\":0, ",	/* a key after ',' */
	"{} ",		/* the end of the text after the object */
	"{\"\": ",	/* a value (its fault, or the byte after it) */
};
enum walk_state { AFTER_OPEN, AFTER_KEY, AFTER_VALUE, AFTER_COMMA, AFTER_END, IN_VALUE };

static int line_at(const struct cp_json_walk *w, size_t at)
{
	int line = 1;

	for (const char *p = w->text, *end = w->text + at;
	     (p = memchr(p, '\n', (size_t)(end - p))); p++)
		line++;
	return line;
}

static int fail_at(struct cp_json_walk *w, size_t at, const json_error_t *e)
{
	return cp_fail(w->err, CP_EXIT_USAGE, "%s: invalid JSON: %s (line %d)",
		       w->what, e->text, line_at(w, at) + (e->line > 0 ? e->line - 1 : 0));
}

static int fail_structure(struct cp_json_walk *w, size_t at, enum walk_state s)
{
	size_t plen = strlen(state_prefix[s]), rest = w->len - at;
	char *buf = malloc(plen + rest + 1);
	json_error_t e;
	json_t *v;

	if (!buf)
		return cp_fail(w->err, CP_EXIT_USAGE, "%s: out of memory", w->what);
	memcpy(buf, state_prefix[s], plen);
	memcpy(buf + plen, w->text + at, rest);
	v = json_loadb(buf, plen + rest, JSON_REJECT_DUPLICATES, &e);
	free(buf);
	if (v) {	/* cannot happen: the walk stopped at a fault */
		json_decref(v);
		return cp_fail(w->err, CP_EXIT_USAGE, "%s: invalid JSON (line %d)",
			       w->what, line_at(w, at));
	}
	return fail_at(w, at, &e);
}

int cp_json_walk_peek(const struct cp_json_walk *w, size_t *at)
{
	while (*at < w->len && w->text[*at] && strchr(" \t\r\n", w->text[*at]))
		(*at)++;
	return *at < w->len ? (unsigned char)w->text[*at] : -1;
}

json_t *cp_json_walk_value(struct cp_json_walk *w, size_t *at)
{
	json_error_t e;
	json_t *v;

	cp_json_walk_peek(w, at);
	v = json_loadb(w->text + *at, w->len - *at,
		       JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &e);
	if (!v) {
		/* Parsed alone, a value's fault can read differently (the
		 * context jansson quotes): said as the whole text says it. */
		fail_structure(w, *at, IN_VALUE);
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
	json_t *v = json_loadb(w->text + *at, w->len - *at,
			       JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &e);

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
		snprintf(e.text, sizeof(e.text), "%s near '%.*s'", msg,
			 (int)(end - key_at), w->text + key_at);
	else
		snprintf(e.text, sizeof(e.text), "%s", msg);
	e.line = 1;
	return fail_at(w, key_at, &e);
}

/* One member: its key, the colon, then fn for the value. */
static int member(struct cp_json_walk *w, size_t *at, const json_t *seen,
		  cp_json_member_fn fn, void *ctx, enum walk_state s, size_t *value_at)
{
	size_t key_at;
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
	rc = fn(w, ctx, json_string_value(key), key_at, at);
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

int cp_json_walk_file(const char *path, const json_t *seen, cp_json_member_fn fn,
		      void *ctx, json_t **other, struct cp_error *err)
{
	struct cp_json_walk w = { .what = path, .err = err };
	char *text = cp_json_read_text(path, &w.len, err);
	size_t at = 0;
	json_error_t e;
	const char *nul;
	int rc = -1;

	*other = NULL;
	if (!text)
		return -1;
	w.text = text;
	/* jansson takes a raw NUL byte for the end of some values and reads
	 * on (where a whole-text parse and a walk would differ); JSON text
	 * never has one. */
	if ((nul = memchr(text, '\0', w.len))) {
		cp_fail(err, CP_EXIT_USAGE, "%s: invalid JSON: NUL byte (line %d)", path,
			line_at(&w, (size_t)(nul - text)));
		free(text);
		return -1;
	}
	if (cp_json_walk_peek(&w, &at) != '{') {
		/* Not an object: jansson says what is wrong with the text, the
		 * caller what is wrong with the value. */
		*other = json_loadb(text, w.len, JSON_REJECT_DUPLICATES, &e);
		if (*other)
			rc = 0;
		else
			fail_at(&w, 0, &e);
	} else if (cp_json_walk_object(&w, &at, seen, fn, ctx) == 0) {
		rc = cp_json_walk_peek(&w, &at) < 0 ? 0 : fail_structure(&w, at, AFTER_END);
	}
	free(text);
	return rc;
}
