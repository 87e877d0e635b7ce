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

/* Rust's legacy names are Itanium names whose last component is "h" and
 * 16 hex digits (17h...E): a hash of the crate and signature, noise to a
 * reader. Told from C++ on the mangled name, which C++ never ends so.
 * Compilers may append a suffix after it (".0", ThinLTO's ".llvm.N"), not
 * part of the name. Returns the length up to the final 'E', or 0 when
 * name is not such a name. */
static size_t rust_legacy_length(const char *name)
{
	size_t len = strlen(name);

	if (strncmp(name, "_ZN", 3) != 0)
		return 0;
	for (size_t end = len; end >= 24; end--) {
		bool hex = true;

		if (end < len && name[end] != '.')
			continue;
		if (name[end - 1] != 'E' || strncmp(name + end - 20, "17h", 3) != 0)
			continue;
		for (size_t i = end - 17; i < end - 1 && hex; i++)
			hex = isxdigit((unsigned char)name[i]) && !isupper((unsigned char)name[i]);
		if (hex)
			return end;
	}
	return 0;
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

char *cp_demangle(const char *name)
{
	int status = 0;
	char *out, *bare;
	size_t len, out_len;

	if (!name || name[0] != '_')
		return NULL;
	/* v0 names end where their grammar does: a suffix is ignored there. */
	if (name[1] == 'R')
		return cp_rust_demangle(name);
	if (name[1] != 'Z')
		return NULL;
	len = rust_legacy_length(name);
	if (!len)	/* C++: libstdc++ shows suffixes as "[clone .N]" */
		return __cxa_demangle(name, NULL, NULL, &status);
	if (!(bare = strndup(name, len)))
		return NULL;
	out = __cxa_demangle(bare, NULL, NULL, &status);
	free(bare);
	if (out && (out_len = strlen(out)) > 19 &&
	    strncmp(out + out_len - 19, "::h", 3) == 0) {
		out[out_len - 19] = '\0';
		unescape_rust_legacy(out);
	}
	return out;
}
