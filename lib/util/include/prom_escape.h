/* prom_escape.h - a string from the target (a symbol, a path, a command
 * line) as a label value of the Prometheus text exposition format 0.0.4.
 * Such a string may hold a double quote (ending the value early and
 * forging labels after it), a backslash or a newline (forging a whole
 * sample line): the format's own escapes are written instead, and bytes
 * that are not UTF-8 become U+FFFD, since the format is UTF-8 text. */
#ifndef CP_PROM_ESCAPE_H
#define CP_PROM_ESCAPE_H

struct cp_buf;

/* Appends s (NULL: nothing) to b as the inside of a quoted label value:
 * backslash as \\, double quote as \", newline as \n (the three escapes
 * the format has), other characters as they are, made valid UTF-8. */
void cp_buf_prom_label(struct cp_buf *b, const char *s);

#endif
