/* compare_markdown.h - the verdict as GitHub-flavoured markdown, for a pull
 * request comment or the job summary ($GITHUB_STEP_SUMMARY).
 *
 * A headline ("fail: N of M measures outside bounds"), a table of only the
 * regressed and inconclusive measures, and the full table folded inside
 * <details>. Every string that came from the target or a run file (measure
 * names, units, environment values, warnings) is shown as a code span:
 * C-escaped control bytes, pipes escaped for the table, a backtick fence
 * longer than any backtick run inside, so nothing can break the table, add
 * HTML, links or mentions. GitHub caps a step summary at 1 MiB, so the
 * output is kept under a byte budget and says so when rows were left out. */
#ifndef CP_COMPARE_MARKDOWN_H
#define CP_COMPARE_MARKDOWN_H

#include <jansson.h>
#include <stddef.h>

struct cp_error;

/* GitHub's limit on a job summary. */
#define CP_MARKDOWN_MAX_BYTES (1024 * 1024)

/* The markdown for verdict, at most max_bytes long (a budget of 0 means
 * CP_MARKDOWN_MAX_BYTES - 1); malloc'ed, NULL when out of memory. */
char *cp_compare_markdown(const json_t *verdict, size_t max_bytes);
/* The same, the measures taken one at a time from ms. */
struct cp_verdict_measures;
char *cp_compare_markdown_of(const json_t *verdict, const struct cp_verdict_measures *ms,
			     size_t max_bytes);

/* Writes s as an inline code span safe inside a GFM table cell into buf
 * (NUL-terminated, cut at max_chars characters of s with "…"). */
void cp_markdown_code(char *buf, size_t len, const char *s, size_t max_chars);

#endif
