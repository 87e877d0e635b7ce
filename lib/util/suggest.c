/* suggest.c - see suggest.h. */
#include <stdio.h>
#include <string.h>

#include "suggest.h"

/* Levenshtein distance, two rows; names are short. Long names are capped so
 * a hostile symbol table costs bounded time. */
size_t cp_edit_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, 256), lb = strnlen(b, 256);
	size_t row[257], prev, tmp;

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = prev + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

void cp_suggest_init(struct cp_suggest *s, const char *wanted)
{
	memset(s, 0, sizeof(*s));
	s->wanted = wanted;
}

void cp_suggest_add(struct cp_suggest *s, const char *candidate)
{
	/* About one edit in three letters: "sendtoo" finds sendto, while
	 * "nosuch" (6 letters) is 4 edits from mount and finds nothing. */
	size_t limit = (strlen(s->wanted) + 2) / 3, d;
	int i;

	/* A name that contains the wanted one ("handle" in "handle_request")
	 * is as good a guess as a one-letter typo. */
	d = strstr(candidate, s->wanted) ? 1 : cp_edit_distance(s->wanted, candidate);
	if (d > limit)
		return;
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->best[i], candidate))
			return;
	if (s->n == 3 && d >= s->dist[2])
		return;
	if (s->n < 3)
		s->n++;
	for (i = s->n - 1; i > 0 && s->dist[i - 1] > d; i--) {
		s->best[i] = s->best[i - 1];
		s->dist[i] = s->dist[i - 1];
	}
	s->best[i] = candidate;
	s->dist[i] = d;
}

void cp_suggest_format_prefixed(const struct cp_suggest *s, const char *prefix, char *buf,
				size_t size)
{
	const char *p = prefix;

	if (s->n == 0)
		snprintf(buf, size, "%s", "");
	else if (s->n == 1)
		snprintf(buf, size, "; did you mean %s%s?", p, s->best[0]);
	else if (s->n == 2)
		snprintf(buf, size, "; did you mean %s%s or %s%s?", p, s->best[0], p, s->best[1]);
	else
		snprintf(buf, size, "; did you mean %s%s, %s%s or %s%s?", p, s->best[0], p,
			 s->best[1], p, s->best[2]);
}

void cp_suggest_format(const struct cp_suggest *s, char *buf, size_t size)
{
	cp_suggest_format_prefixed(s, "", buf, size);
}
