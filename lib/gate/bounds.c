/* bounds.c - see bounds.h. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "error.h"
#include "grow.h"
#include "sha256.h"

/* A bounds file is a few dozen lines; refuse anything absurd. */
#define MAX_BOUNDS_FILE (1 << 20)

static void set_default(struct cp_bound_rule *r, const char *pattern, const char *bound)
{
	memset(r, 0, sizeof(*r));
	r->pattern = (char *)pattern; /* static, never freed */
	cp_bound_parse_value(bound, r);
}

void cp_bounds_init_defaults(struct cp_bounds *b)
{
	memset(b, 0, sizeof(*b));
	set_default(&b->default_exact, "(default exact)", CP_BOUND_DEFAULT_EXACT);
	set_default(&b->default_sampled, "(default sampled)", CP_BOUND_DEFAULT_SAMPLED);
	set_default(&b->default_floor, "(default floor)", CP_BOUND_DEFAULT_FLOOR);
}

int cp_bound_parse_value(const char *s, struct cp_bound_rule *rule)
{
	const char *p = s;
	char *end;
	double v;
	int pct = 0;

	if (*p != '+' && *p != '-')
		return -1;
	p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	v = strtod(p, &end);
	/* strtod also takes hex, inf, nan and exponents: allow digits and one
	 * decimal point only, so the file reads the same to people. */
	for (const char *q = p; q < end; q++)
		if (!isdigit((unsigned char)*q) && *q != '.')
			return -1;
	if (errno || !isfinite(v) || v < 0 || v > 1e15)
		return -1;
	if (*end == '%') {
		pct = 1;
		end++;
	}
	if (*end)
		return -1;
	rule->relative = pct;
	rule->value = *s == '-' ? -v : v;
	snprintf(rule->text, sizeof(rule->text), "%s", s);
	return 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Splits one line (already cut at its comment) into whitespace-separated
 * tokens; returns how many were found, at most max (more returns max + 1). */
static int tokens(char *line, char **tok, int max)
{
	int n = 0;

	for (char *p = line; *p;) {
		while (is_space(*p))
			p++;
		if (!*p)
			break;
		if (n == max)
			return max + 1;
		tok[n++] = p;
		while (*p && !is_space(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

/* The new rule at the end of b->rules, zeroed. */
static struct cp_bound_rule *new_rule(struct cp_bounds *b)
{
	struct cp_bound_rule *r;

	if (cp_grow(&b->rules, &b->rules_cap, b->nrules + 1, sizeof(*b->rules)))
		return NULL;
	r = &b->rules[b->nrules];
	memset(r, 0, sizeof(*r));
	return r;
}

static int add_removed_ok(struct cp_bounds *b, const char *glob, int lineno, const char *name,
			  struct cp_error *err)
{
	struct cp_bound_rule *r;
	char *pattern;

	if (!glob)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s:%d: 'removed-ok' needs one GLOB: 'removed-ok NAME-GLOB'", name,
			       lineno);
	if (!(r = new_rule(b)) || !(pattern = strdup(glob)))
		return cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", name);
	r->pattern = pattern;
	r->removed_ok = 1;
	snprintf(r->text, sizeof(r->text), "removed-ok");
	r->line = lineno;
	b->nrules++;
	return 0;
}

static int parse_line(char *line, int lineno, const char *name, struct cp_bounds *b,
		      struct cp_error *err)
{
	char *tok[2], *hash;
	int n;
	struct cp_bound_rule *r;

	/* '#' starts a comment at the start of a line or after whitespace;
	 * elsewhere it is part of a glob. */
	for (hash = line; (hash = strchr(hash, '#')); hash++)
		if (hash == line || is_space(hash[-1])) {
			*hash = '\0';
			break;
		}
	n = tokens(line, tok, 2);
	if (n == 0)
		return 0;
	if (!strcmp(tok[0], "removed-ok"))
		return add_removed_ok(b, n == 2 ? tok[1] : NULL, lineno, name, err);
	if (n == 1)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s:%d: rule '%.60s' has no bound; write 'GLOB +N%%' or 'GLOB +N'",
			       name, lineno, tok[0]);
	if (n > 2)
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s:%d: too many fields; a rule is 'GLOB +N%%' or 'GLOB +N' (comments start with #)",
			name, lineno);
	if (!(r = new_rule(b)))
		return cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", name);
	if (cp_bound_parse_value(tok[1], r))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s:%d: bad bound '%.40s' for '%.60s'; expected +N%% (relative) or +N (absolute), e.g. +5%% or +0 (-N%% or -N to demand an improvement)",
			name, lineno, tok[1], tok[0]);
	r->pattern = strdup(tok[0]);
	if (!r->pattern)
		return cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", name);
	r->line = lineno;
	b->nrules++;
	return 0;
}

int cp_bounds_parse(const char *text, size_t len, const char *name, struct cp_bounds *b,
		    struct cp_error *err)
{
	size_t start = 0;
	int lineno = 0;

	cp_bounds_init_defaults(b);
	while (start < len) {
		size_t end = start;
		char *line;
		int rc;

		while (end < len && text[end] != '\n')
			end++;
		lineno++;
		if (memchr(text + start, '\0', end - start)) {
			cp_bounds_free(b);
			return cp_fail(err, CP_EXIT_USAGE, "%s:%d: NUL byte; a bounds file is text",
				       name, lineno);
		}
		line = strndup(text + start, end - start);
		if (!line) {
			cp_bounds_free(b);
			return cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", name);
		}
		rc = parse_line(line, lineno, name, b, err);
		free(line);
		if (rc) {
			cp_bounds_free(b);
			return -1;
		}
		start = end + 1;
	}
	return 0;
}

int cp_bounds_load(const char *path, struct cp_bounds *b, struct cp_error *err)
{
	FILE *f = fopen(path, "rb");
	int open_errno = errno; /* before anything else can change it */
	char *buf;
	size_t len;

	cp_bounds_init_defaults(b);
	if (!f)
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot read bounds file: %s", path,
			       strerror(open_errno));
	buf = malloc(MAX_BOUNDS_FILE + 1);
	if (!buf) {
		fclose(f);
		return cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", path);
	}
	len = fread(buf, 1, MAX_BOUNDS_FILE + 1, f);
	if (ferror(f)) {
		int e = errno;

		fclose(f);
		free(buf);
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot read bounds file: %s", path,
			       strerror(e));
	}
	fclose(f);
	if (len > MAX_BOUNDS_FILE) {
		free(buf);
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: bounds file is larger than 1 MiB; is it the right file?", path);
	}
	if (cp_bounds_parse(buf, len, path, b, err)) {
		free(buf);
		return -1;
	}
	cp_sha256_hex(buf, len, b->sha256);
	free(buf);
	b->file = strdup(path);
	if (!b->file) {
		cp_bounds_free(b);
		return cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", path);
	}
	return 0;
}

struct cp_bound_rule *cp_bounds_match(struct cp_bounds *b, const char *name, int exact)
{
	struct cp_bound_rule *r = exact ? &b->default_exact : &b->default_sampled;

	for (size_t i = 0; i < b->nrules; i++)
		if (!b->rules[i].removed_ok && fnmatch(b->rules[i].pattern, name, 0) == 0) {
			r = &b->rules[i];
			break;
		}
	r->matched++;
	return r;
}

const struct cp_bound_rule *cp_bounds_floor(const struct cp_bounds *b,
					    const struct cp_bound_rule *r, double base_median,
					    int varies)
{
	if ((r == &b->default_sampled && base_median < 1) || (r == &b->default_exact && varies))
		return &b->default_floor;
	return r;
}

void cp_bounds_count_floor(struct cp_bounds *b, int exact)
{
	struct cp_bound_rule *from = exact ? &b->default_exact : &b->default_sampled;

	if (from->matched)
		from->matched--;
	b->default_floor.matched++;
}

struct cp_bound_rule *cp_bounds_removed_ok(struct cp_bounds *b, const char *name)
{
	for (size_t i = 0; i < b->nrules; i++)
		if (b->rules[i].removed_ok && fnmatch(b->rules[i].pattern, name, 0) == 0) {
			b->rules[i].matched++;
			return &b->rules[i];
		}
	return NULL;
}

void cp_bounds_note_unjudged(struct cp_bounds *b, const char *name)
{
	for (size_t i = 0; i < b->nrules; i++)
		if (!b->rules[i].removed_ok && fnmatch(b->rules[i].pattern, name, 0) == 0) {
			b->rules[i].matched++;
			return;
		}
}

void cp_bounds_free(struct cp_bounds *b)
{
	for (size_t i = 0; i < b->nrules; i++)
		free(b->rules[i].pattern);
	free(b->rules);
	free(b->file);
	cp_bounds_init_defaults(b);
}
