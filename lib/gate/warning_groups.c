/* warning_groups.c - see warning_groups.h. A group is keyed by its
 * warning's text with each number taken out (a 0x01 byte in its place);
 * it keeps, per number, the smallest and the largest as they were written. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warning_groups.h"

#define SLOT '\001'
#define MAX_NUMBERS 16

json_t *cp_warning_groups_new(void)
{
	return json_object();
}

/* The length of the number at s ("84", "0.5"), or 0. */
static size_t number_len(const char *s)
{
	size_t n = 0;

	while (isdigit((unsigned char)s[n]))
		n++;
	if (n && s[n] == '.' && isdigit((unsigned char)s[n + 1]))
		for (n++; isdigit((unsigned char)s[n]); n++)
			;
	return n;
}

/* Widens the range of one number of the group (a [min, max] array). */
static void widen(json_t *range, const char *num, size_t len)
{
	json_t *v = json_stringn(num, len);
	double x = strtod(json_string_value(v), NULL);

	if (json_array_size(range) < 2) {
		json_array_append(range, v);
		json_array_append_new(range, v);
		return;
	}
	if (x < strtod(json_string_value(json_array_get(range, 0)), NULL))
		json_array_set(range, 0, v);
	if (x > strtod(json_string_value(json_array_get(range, 1)), NULL))
		json_array_set(range, 1, v);
	json_decref(v);
}

void cp_warning_groups_add(json_t *groups, const char *text)
{
	size_t len = strlen(text), k = 0, n = 0, nums[MAX_NUMBERS][2];
	char *key = malloc(len + 1);
	json_t *g, *ranges;

	if (!key)
		return;
	for (const char *s = text; *s;) {
		size_t l = n < MAX_NUMBERS && (s == text || !isalnum((unsigned char)s[-1])) ?
				   number_len(s) :
				   0;

		if (l) {
			nums[n][0] = (size_t)(s - text);
			nums[n++][1] = l;
			key[k++] = SLOT;
			s += l;
		} else {
			/* A 0x01 of the text itself must not read as a number. */
			key[k++] = *s == SLOT ? '?' : *s;
			s++;
		}
	}
	key[k] = '\0';
	if (!(g = json_object_get(groups, key))) {
		g = json_pack("{s:i, s:[]}", "count", 0, "ranges");
		json_object_set_new(groups, key, g);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(json_object_get(g, "ranges"), json_array());
	}
	json_object_set_new(g, "count",
			    json_integer(json_integer_value(json_object_get(g, "count")) + 1));
	ranges = json_object_get(g, "ranges");
	for (size_t i = 0; i < n; i++)
		widen(json_array_get(ranges, i), text + nums[i][0], nums[i][1]);
	free(key);
}

/* The group's text: its key with each number slot filled by "a" or "a-b". */
static char *render(const char *key, const json_t *ranges)
{
	char *out = NULL;
	size_t size = 0, slot = 0;
	FILE *f = open_memstream(&out, &size);

	if (!f)
		return NULL;
	for (const char *s = key; *s; s++) {
		const json_t *r = *s == SLOT ? json_array_get(ranges, slot++) : NULL;
		const char *lo = json_string_value(json_array_get(r, 0));
		const char *hi = json_string_value(json_array_get(r, 1));

		if (*s != SLOT)
			fputc(*s, f);
		else if (lo && hi && strcmp(lo, hi))
			fprintf(f, "%s-%s", lo, hi);
		else if (lo)
			fputs(lo, f);
	}
	fclose(f);
	return out;
}

void cp_warning_groups_each(const json_t *groups,
			    void (*fn)(const char *text, size_t count, void *arg), void *arg)
{
	const char *key;
	json_t *g;

	json_object_foreach((json_t *)groups, key, g) {
		char *text = render(key, json_object_get(g, "ranges"));

		if (text)
			fn(text, (size_t)json_integer_value(json_object_get(g, "count")), arg);
		free(text);
	}
}
