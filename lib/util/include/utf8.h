/* utf8.h - names from the target (comm, paths, command lines, symbols) are
 * bytes, not text: JSON and HTML need valid UTF-8, and jansson refuses a
 * string that is not (the whole run.json would be lost). Each invalid byte
 * becomes '?', in place, so the length never changes. */
#ifndef CP_UTF8_H
#define CP_UTF8_H

#include <stddef.h>

/* Length in bytes of the valid UTF-8 character at s, with its code point
 * in *cp; 0 when it is not one (or s is at its end). */
size_t cp_utf8_decode(const char *s, unsigned int *cp);

/* Makes s valid UTF-8 in place; returns s. NULL is fine. */
char *cp_utf8_sanitize(char *s);

#endif
