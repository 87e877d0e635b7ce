/* demangle.c - see demangle.h. */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "rust_demangle.h"

/* Declared by <cxxabi.h> for C++; the symbol has C linkage. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

/* Rust's legacy names end in "::h" and 16 hex digits: a hash of the crate
 * and signature, noise to a reader. */
static bool ends_with_rust_hash(const char *s, size_t len)
{
	if (len < 19 || strncmp(s + len - 19, "::h", 3) != 0)
		return false;
	for (size_t i = len - 16; i < len; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

static int hex_digit(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

/* Rust's legacy scheme spells what C++ names cannot hold as $...$ escapes
 * ({closure} is _$u7b$$u7b$closure$u7d$$u7d$, <T as U> is $LT$T$u20$as$u20$U$GT$)
 * and :: inside a component as "..". Decoded in place (never longer). */
static void unescape_rust_legacy(char *s)
{
	static const struct {
		const char *code;
		char c;
	} codes[] = {
		{ "SP", '@' }, { "BP", '*' }, { "RF", '&' }, { "LT", '<' },
		{ "GT", '>' }, { "LP", '(' }, { "RP", ')' }, { "C", ',' },
	};
	char *out = s;
	bool component_start = true;

	while (*s) {
		char *end;

		if (component_start && s[0] == '_' && s[1] == '$')
			s++;	/* a component cannot start with '$': "_" was added */
		component_start = false;
		if (s[0] == ':' && s[1] == ':') {
			*out++ = *s++;
			*out++ = *s++;
			component_start = true;
		} else if (s[0] == '.' && s[1] == '.') {
			*out++ = ':';
			*out++ = ':';
			s += 2;
		} else if (s[0] == '$' && (end = strchr(s + 1, '$'))) {
			size_t len = (size_t)(end - s - 1);
			char c = 0;

			for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
				if (strlen(codes[i].code) == len && !strncmp(s + 1, codes[i].code, len))
					c = codes[i].c;
			if (!c && len == 3 && s[1] == 'u' && isxdigit((unsigned char)s[2]) &&
			    isxdigit((unsigned char)s[3])) {
				int v = hex_digit(s[2]) << 4 | hex_digit(s[3]);

				if (v >= 0x20 && v < 0x7f)
					c = (char)v;
			}
			if (!c) {
				*out++ = *s++;	/* not an escape: keep it */
				continue;
			}
			*out++ = c;
			s = end + 1;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/* LLVM's ThinLTO renames a local symbol it exports across units by
 * appending ".llvm." and a number (seen in Debian's Rust std): not part of
 * the name, and no demangler reads past it. Returns the length before it. */
static size_t without_llvm_suffix(const char *name)
{
	const char *dot = strstr(name, ".llvm.");

	if (!dot || !dot[6])
		return strlen(name);
	for (const char *p = dot + 6; *p; p++)
		if (!isxdigit((unsigned char)*p) && *p != '@')
			return strlen(name);
	return (size_t)(dot - name);
}

char *cp_demangle(const char *name)
{
	int status = 0;
	char *out, *bare = NULL;
	size_t len;

	if (!name || name[0] != '_' || (name[1] != 'R' && name[1] != 'Z'))
		return NULL;
	len = without_llvm_suffix(name);
	if (name[len] && !(name = bare = strndup(name, len)))
		return NULL;
	out = name[1] == 'R' ? cp_rust_demangle(name) :
	      __cxa_demangle(name, NULL, NULL, &status);
	free(bare);
	if (out && ends_with_rust_hash(out, (len = strlen(out)))) {
		out[len - 19] = '\0';
		unescape_rust_legacy(out);
	}
	return out;
}
