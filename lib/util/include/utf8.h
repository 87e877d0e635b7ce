/* utf8.h - names from the target (comm, paths, command lines, symbols) are
 * bytes, not text: JSON and HTML need valid UTF-8, and jansson refuses a
 * string that is not (the whole run.json would be lost). Each invalid byte
 * becomes U+FFFD, the replacement character, as docs/run-json.md says: a
 * '?' could not be told from a real one. */
#ifndef CP_UTF8_H
#define CP_UTF8_H

#include <stdarg.h>
#include <stddef.h>

/* Length in bytes of the valid UTF-8 character at s, with its code point
 * in *cp; 0 when it is not one (or s is at its end). */
size_t cp_utf8_decode(const char *s, unsigned int *cp);

/* The longest string clockprof writes into a JSON file or reads from one,
 * in bytes of UTF-8 (docs/run-json.md): a name from the target can be
 * megabytes, and a reader must not be made to hold or draw that. */
#define CP_STRING_MAX 65536
/* What ends a name cut to CP_STRING_MAX. */
#define CP_STRING_CUT_MARK "\xe2\x80\xa6[cut]"

/* A malloc'd copy of s that is valid UTF-8: each byte that is not part of
 * a valid character becomes U+FFFD (three bytes); one longer than
 * CP_STRING_MAX is cut, at a character, to end in CP_STRING_CUT_MARK
 * within it. NULL for NULL, or when out of memory. */
char *cp_utf8_dup(const char *s);

/* vsnprintf into buf, made valid UTF-8 as cp_utf8_dup makes it (U+FFFD)
 * and cut at a whole character: a warning or a line cut at size must not
 * end mid-character (a JSON writer would drop it). Returns buf. */
char *cp_utf8_vformat(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* The same, from arguments. */
char *cp_utf8_format(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
