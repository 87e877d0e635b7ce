/* suggest.h - "did you mean": the closest names to a mistyped one, for the
 * error messages of request specs, symbols and syscall names. */
#ifndef CP_SUGGEST_H
#define CP_SUGGEST_H

#include <stddef.h>

struct cp_suggest {
	const char *best[3]; /* closest first; pointers into the caller's names */
	size_t dist[3];
	int n;
	const char *wanted;
};

void cp_suggest_init(struct cp_suggest *s, const char *wanted);
/* Considers one candidate name (kept by pointer: it must outlive s). */
void cp_suggest_add(struct cp_suggest *s, const char *candidate);
/* Formats "; did you mean a, b or c?" (or "" when nothing is close). */
void cp_suggest_format(const struct cp_suggest *s, char *buf, size_t size);
/* The same, each name after prefix ("--" for options). */
void cp_suggest_format_prefixed(const struct cp_suggest *s, const char *prefix, char *buf,
				size_t size);
size_t cp_edit_distance(const char *a, const char *b);

#endif
