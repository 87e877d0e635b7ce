/* folded.c - FlameGraph folded stacks; see folded.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "folded.h"

struct line {
	char *stack;
	uint64_t count;
};

/* Appends name to buf[*at], escaping what the format cannot hold. */
static void put_frame(char *buf, size_t *at, const char *name)
{
	if (!name || !*name)
		name = "[unknown]";
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		unsigned char c = *p;

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = ' ';
		buf[(*at)++] = (char)c;
	}
}

static char *join_stack(const struct cp_stack *s)
{
	size_t size = 1, at = 0;
	char *buf;

	for (size_t i = 0; i < s->n_frames; i++)
		size += (s->frames[i] && *s->frames[i] ? strlen(s->frames[i]) : 9) + 1;
	buf = malloc(size);
	if (!buf)
		return NULL;
	for (size_t i = 0; i < s->n_frames; i++) {
		if (i)
			buf[at++] = ';';
		put_frame(buf, &at, s->frames[i]);
	}
	if (!s->n_frames)
		put_frame(buf, &at, NULL);
	buf[at] = '\0';
	return buf;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->stack, ((const struct line *)b)->stack);
}

char *cp_folded_render(const struct cp_stack *stacks, size_t n, size_t *len)
{
	struct line *lines = calloc(n ? n : 1, sizeof(*lines));
	size_t m = 0, w = 0, size = 1, at = 0;
	char *out = NULL;

	if (!lines)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!stacks[i].count)
			continue;
		lines[m].stack = join_stack(&stacks[i]);
		if (!lines[m].stack)
			goto out;
		lines[m++].count = stacks[i].count;
	}
	qsort(lines, m, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < m; i++) {
		if (w && strcmp(lines[w - 1].stack, lines[i].stack) == 0) {
			lines[w - 1].count += lines[i].count;
			free(lines[i].stack);
			continue;
		}
		lines[w++] = lines[i];
	}
	m = w;
	for (size_t i = 0; i < m; i++)
		size += strlen(lines[i].stack) + 22;
	out = malloc(size);
	if (!out)
		goto out;
	for (size_t i = 0; i < m; i++)
		at += (size_t)snprintf(out + at, size - at, "%s %" PRIu64 "\n", lines[i].stack,
				       lines[i].count);
	out[at] = '\0';
	*len = at;
out:
	for (size_t i = 0; i < m; i++)
		free(lines[i].stack);
	free(lines);
	return out;
}

int cp_folded_write(FILE *f, const struct cp_stack *stacks, size_t n, struct cp_error *err)
{
	size_t len = 0;
	char *text = cp_folded_render(stacks, n, &len);

	if (!text)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory writing the folded stacks");
	fwrite(text, 1, len, f);
	free(text);
	return 0;
}
