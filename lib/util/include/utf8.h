/* utf8.h - names from the target (comm, paths, command lines, symbols) are
 * bytes, not text: JSON and HTML need valid UTF-8, and jansson refuses a
 * string that is not (the whole run.json would be lost). Each invalid byte
 * becomes '?', in place, so the length never changes. */
#ifndef CP_UTF8_H
#define CP_UTF8_H

#include <stdarg.h>
#include <stddef.h>

/* Length in bytes of the valid UTF-8 character at s, with its code point
 * in *cp; 0 when it is not one (or s is at its end). */
size_t cp_utf8_decode(const char *s, unsigned int *cp);

/* Makes s valid UTF-8 in place; returns s. NULL is fine. */
char *cp_utf8_sanitize(char *s);

/* vsnprintf into buf, then cp_utf8_sanitize: a text cut at size ends
 * mid-character, and a warning or line cut so must not be lost. */
char *cp_utf8_vformat(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
