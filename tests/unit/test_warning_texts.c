/* test_warning_texts.c - no warning a run gives is ever cut. A run's
 * warnings are made by cp_mech_warn, cp_mech_warn_closing and
 * cp_profile_warn, which allocate each text whole (no room to outgrow).
 * This test reads every call of them in lib/ (their format strings,
 * resolved through a file's own #defines and both arms of a ?:) and
 * fails when a format is not a literal it can read, or cuts an argument:
 * a precision on %s, which cut "syscall() in ... (5 bytes or more, or 2
 * wi". And the functions keep a long text whole. */
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mechanism.h"
#include "profile_window.h"
#include "unit.h"

#define MAX_FORMATS 512
#define FORMAT_SIZE 1024

/* The calls that make a warning (the format is the second argument). */
static const char *const warners[] = { "cp_mech_warn(", "cp_mech_warn_closing(",
				       "cp_profile_warn(" };

struct format {
	char text[FORMAT_SIZE];
	char where[160];
	bool literal; /* made of string literals alone */
};

static struct format formats[MAX_FORMATS];
static int nformats;

/* The file's text with its comments blanked (strings and lines kept). */
static void blank_comments(char *s)
{
	for (char quote = 0; *s; s++) {
		if (quote) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == quote)
				quote = 0;
		} else if (*s == '"' || *s == '\'') {
			quote = *s;
		} else if (s[0] == '/' && s[1] == '*') {
			for (; *s && !(s[0] == '*' && s[1] == '/'); s++)
				*s = *s == '\n' ? '\n' : ' '; /* the lines kept */
			if (*s)
				s[0] = s[1] = ' ';
		} else if (s[0] == '/' && s[1] == '/') {
			for (; *s && *s != '\n'; s++)
				*s = ' ';
			if (!*s)
				break;
		}
	}
}

/* Past the string literal at s (its opening quote), its text appended to
 * out (an escape as the one character it stands for). */
static const char *take_literal(const char *s, char *out, size_t size)
{
	size_t n = strlen(out);

	for (s++; *s && *s != '"'; s++) {
		if (*s == '\\' && s[1])
			s++;
		if (n + 1 < size)
			out[n++] = *s;
	}
	out[n] = 0;
	return *s ? s + 1 : s;
}

/* Past one argument at s: at the ',' or ')' that ends it. */
static const char *skip_argument(const char *s)
{
	int depth = 0;

	for (; *s; s++) {
		if (*s == '"' || *s == '\'') {
			char q = *s;

			for (s++; *s && *s != q; s++)
				if (*s == '\\' && s[1])
					s++;
		} else if (*s == '(' || *s == '[' || *s == '{') {
			depth++;
		} else if ((*s == ')' || *s == ']' || *s == '}') && depth-- == 0) {
			return s;
		} else if (*s == ',' && depth == 0) {
			return s;
		}
	}
	return s;
}

/* The string literals of `#define name` in file, appended to out; false
 * when it has none. */
static bool macro_text(const char *file, const char *name, size_t len, char *out, size_t size)
{
	for (const char *d = strstr(file, "#define "); d; d = strstr(d + 1, "#define ")) {
		const char *s = d + 8;

		if (strncmp(s, name, len) || (s[len] != ' ' && s[len] != '\t'))
			continue;
		for (s += len; *s && (*s != '\n' || s[-1] == '\\'); s++)
			if (*s == '"')
				s = take_literal(s, out, size) - 1;
		return true;
	}
	return false;
}

static struct format *new_format(const char *path, int line)
{
	struct format *f = nformats < MAX_FORMATS ? &formats[nformats++] : NULL;

	if (f) {
		memset(f, 0, sizeof(*f));
		snprintf(f->where, sizeof(f->where), "%s:%d", path, line);
		f->literal = true;
	}
	return f;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* The format argument from s to its end: one format per arm of a ?:
 * (what comes before a '?' is the condition, dropped). */
static void take_formats(const char *file, const char *s, const char *path, int line)
{
	const char *end = skip_argument(s);
	struct format *f = new_format(path, line);

	while (f && s < end) {
		if (*s == '"') {
			s = take_literal(s, f->text, sizeof(f->text));
		} else if (*s == '?') {
			memset(f->text, 0, sizeof(f->text));
			f->literal = true;
			s++;
		} else if (*s == ':') {
			f = new_format(path, line);
			s++;
		} else if (ident_char(*s)) {
			const char *id = s;

			while (ident_char(*s))
				s++;
			f->literal &= macro_text(file, id, (size_t)(s - id), f->text,
						 sizeof(f->text));
		} else {
			s++;
		}
	}
}

static int scan_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t len = strlen(path);
	char *file;
	FILE *fp;

	(void)ftw;
	if (type != FTW_F || len < 2 || strcmp(path + len - 2, ".c") || !(fp = fopen(path, "r")))
		return 0;
	file = calloc(1, (size_t)st->st_size + 1);
	if (file && fread(file, 1, (size_t)st->st_size, fp) == (size_t)st->st_size) {
		blank_comments(file);
		for (size_t w = 0; w < sizeof(warners) / sizeof(warners[0]); w++)
			for (const char *c = strstr(file, warners[w]); c;
			     c = strstr(c + 1, warners[w])) {
				const char *s = c + strlen(warners[w]);
				int line = 1;

				if (!strncmp(s, "struct ", 7) || (c > file && ident_char(c[-1])))
					continue; /* the definition, another name */
				if (*(s = skip_argument(s)) != ',')
					continue;
				for (const char *p = file; p < c; p++)
					line += *p == '\n';
				take_formats(file, s + 1, path, line);
			}
	}
	free(file);
	fclose(fp);
	return 0;
}

/* Whether format f cuts an argument: a %s with a precision. */
static bool cuts(const char *f)
{
	for (f = strchr(f, '%'); f; f = strchr(f, '%')) {
		bool precision;

		f += 1 + strspn(f + 1, "-+ #0123456789*");
		if (*f == '%') {
			f++;
			continue;
		}
		precision = *f == '.';
		f += strspn(f, ".0123456789*");
		f += strspn(f, "hlzjtL");
		if (*f == 's' && precision)
			return true;
	}
	return false;
}

static bool has_format(const char *start)
{
	for (int i = 0; i < nformats; i++)
		if (!strncmp(formats[i].text, start, strlen(start)))
			return true;
	return false;
}

TEST(no_warning_text_of_a_run_is_ever_cut)
{
	nformats = 0;
	CHECK(nftw("lib", scan_file, 16, FTW_PHYS) == 0);
	/* the scan sees the calls: the mechanism's, the window's, the closing one */
	CHECK(nformats > 40 && has_format("syscall() in ") &&
	      has_format("the request boundary is traced at sys_enter") &&
	      has_format("probe overhead is about") && has_format("the vDSO of "));
	for (int i = 0; i < nformats; i++) {
		const struct format *f = &formats[i];

		if (!f->literal)
			unit_fail(__FILE__, __LINE__,
				  "%s: a warning's format that is not a literal: \"%s\"", f->where,
				  f->text);
		else if (cuts(f->text))
			unit_fail(__FILE__, __LINE__,
				  "%s: a warning cut by a precision on %%s: \"%s\"", f->where,
				  f->text);
	}
}

TEST(a_long_warning_is_kept_whole)
{
	static struct cp_profile p;
	struct cp_mech m = { 0 };
	char why[3000];

	memset(why, 'w', sizeof(why) - 1);
	why[sizeof(why) - 1] = 0;
	cp_mech_warn(&m, "syscall() in %s is a uprobe (%s)", "/lib/libc.so", why);
	CHECK_INT(m.nwarnings, 1);
	CHECK_INT(strlen(m.warnings[0]),
		  strlen("syscall() in /lib/libc.so is a uprobe ()") + strlen(why));
	cp_profile_warn(&p, "%s", m.warnings[0]);
	CHECK_INT(p.nwarnings, 1);
	CHECK_STR(p.warnings[0], m.warnings[0]);
	cp_mech_warn_closing(&m, "closing: %s", why);
	CHECK_INT(strlen(m.closing_warning), strlen("closing: ") + strlen(why));
	free(m.warnings[0]);
	free(m.closing_warning);
	free(p.warnings[0]);
}
