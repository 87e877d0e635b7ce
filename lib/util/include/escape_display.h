/* escape_display.h - the one way a string from the target (symbol, path,
 * command line, comm, a measure name read from a run file) is shown: on the
 * terminal, on stderr, in markdown and in CI annotations.
 *
 * Such a string may carry a newline (a forged "::error" line in a CI log),
 * escape sequences that drive the terminal, or Unicode that reorders what
 * is shown (bidi overrides, "Trojan Source"). Each of those is written as a
 * visible C-style escape instead, so the output is one line per item and
 * reads as it is. */
#ifndef CP_ESCAPE_DISPLAY_H
#define CP_ESCAPE_DISPLAY_H

#include <stddef.h>

/* Escapes s into buf (always terminated): backslash as \\; C0 controls and
 * DEL as \n, \r, \t or \xNN; C1 controls (U+0080-U+009F), the bidi controls
 * U+200E/F, U+202A-U+202E, U+2066-U+2069 and the separators U+2028/U+2029
 * as \uNNNN; bytes that are not UTF-8 as \xNN; other characters as they
 * are. Shows at most max_chars characters, ending with "…" when cut;
 * never cuts an escape or a UTF-8 sequence in two. */
void cp_escape_display(char *buf, size_t len, const char *s, size_t max_chars);

#endif
