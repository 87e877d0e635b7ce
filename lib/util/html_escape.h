/* html_escape.h - putting untrusted text into an HTML page.
 *
 * Every name clockprof shows comes from the profiled program (symbols, file
 * paths, command lines) or from a file someone handed us, so none of it may
 * ever be read by a browser as markup. Two contexts are covered:
 *
 *   - text and quoted attribute values: & < > " ' become character
 *     references, and C0 control characters (other than tab, newline and
 *     carriage return) become U+FFFD, so `operator<<` and
 *     `</script><img src=x onerror=alert(1)>` render literally;
 *   - JSON inside <script type="application/json">: < > & become \u003c
 *     \u003e \u0026 and U+2028/U+2029 become \u2028/\u2029, so the data
 *     block can neither close its element nor break a JavaScript parser.
 *
 * Both work on byte ranges and never fail except for allocation. */
#ifndef CP_HTML_ESCAPE_H
#define CP_HTML_ESCAPE_H

#include <stddef.h>

/* Bytes cp_html_escape_to() writes for s[0..n) (no terminating NUL). */
size_t cp_html_escaped_len(const char *s, size_t n);

/* Writes the escaped form of s[0..n) to out, which must have room for
 * cp_html_escaped_len(s, n) bytes; returns the bytes written. */
size_t cp_html_escape_to(char *out, const char *s, size_t n);

/* The escaped form of the NUL-terminated s as a new string (free() it);
 * NULL when out of memory. A NULL s gives "". */
char *cp_html_escape(const char *s);

/* Bytes cp_json_script_escape_to() writes for the JSON text j[0..n). */
size_t cp_json_script_escaped_len(const char *j, size_t n);

/* Rewrites serialised JSON j[0..n) so that it can sit between
 * <script type="application/json"> and </script>; out needs
 * cp_json_script_escaped_len(j, n) bytes. The result parses to the same
 * value: the characters rewritten only ever occur inside JSON strings. */
size_t cp_json_script_escape_to(char *out, const char *j, size_t n);

#endif
