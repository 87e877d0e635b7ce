/* bounds.h - the bounds file: how much worse each measure may get.
 *
 * The user keeps a `.clockprof-bounds` file in their repository (grammar:
 * docs/bounds.md): one rule per line, `GLOB BOUND`, first match
 * wins, `#` starts a comment, BOUND is `+N%` (relative) or `+N` (absolute,
 * in the measure's unit), an allowed change in the measure's bad
 * direction; `-N%` or `-N` demands an improvement of at least N. A line
 * `removed-ok GLOB` lets measures matching GLOB disappear from the head
 * (otherwise a measure present in every base run and missing from the
 * head fails the gate). Measures no rule matches fall back to the
 * built-in defaults, which are also what applies without a file: exact
 * measures +0 (any increase fails), sampled measures +5%, both with an
 * absolute floor (+0.05 in the measure's unit) where they would demand
 * more than runs of an unchanged build can show: a sampled measure whose
 * base median is below 1 (+5% of 0.02 context switches per op is no
 * bound), and an exact measure that varies between runs. */
#ifndef CP_BOUNDS_H
#define CP_BOUNDS_H

#include <stddef.h>

struct cp_error;

/* Built-in defaults (documented in docs/gating.md). */
#define CP_BOUND_DEFAULT_EXACT "+0"
#define CP_BOUND_DEFAULT_SAMPLED "+5%"
/* The floor of both defaults, absolute: it equals +5% at a base median of
 * 1, so the sampled default is continuous there (docs/bounds.md). */
#define CP_BOUND_DEFAULT_FLOOR "+0.05"

struct cp_bound_rule {
	char *pattern;	/* fnmatch(3) glob, flags 0: '*' crosses '/' */
	int relative;	/* 1: value is a percentage; 0: absolute */
	double value;	/* allowed worsening; < 0 demands improvement */
	int removed_ok; /* a `removed-ok GLOB` line, not a bound */
	char text[40];	/* as written, normalised: "+5%", "+0" */
	int line;	/* 1-based line in the file; 0 for a default */
	size_t matched; /* measures this rule was chosen for */
};

struct cp_bounds {
	char *file;	 /* path as given, NULL for built-in defaults */
	char sha256[65]; /* hex digest of the file bytes, "" without */
	struct cp_bound_rule *rules;
	size_t nrules, rules_cap;
	struct cp_bound_rule default_exact, default_sampled;
	struct cp_bound_rule default_floor; /* CP_BOUND_DEFAULT_FLOOR */
};

/* Fills b with no rules, only the built-in defaults. */
void cp_bounds_init_defaults(struct cp_bounds *b);

/* Parses text (len bytes, need not be NUL-terminated); name is used in
 * error messages ("NAME:LINE: ..."). On error b is left empty and the
 * failure is CP_EXIT_USAGE. */
int cp_bounds_parse(const char *text, size_t len, const char *name, struct cp_bounds *b,
		    struct cp_error *err);

/* Reads and parses path, and records its path and sha256. */
int cp_bounds_load(const char *path, struct cp_bounds *b, struct cp_error *err);

/* Parses one bound ("+5%", "+0.5", "+3", "-2%") into
 * rule->relative/value/text. */
int cp_bound_parse_value(const char *s, struct cp_bound_rule *rule);

/* The rule for measure name (first match wins, then the default for its
 * kind); counts the match in rule->matched. Never NULL. */
struct cp_bound_rule *cp_bounds_match(struct cp_bounds *b, const char *name, int exact);

/* The rule that judges a measure matched to r (by cp_bounds_match): the
 * floor instead of the sampled default when the base median is below 1,
 * and instead of the exact default when the exact measure varies between
 * runs (judged as sampled); r itself otherwise, and always for a rule of
 * the file. Counts nothing: cp_bounds_count_floor() does, once. */
const struct cp_bound_rule *cp_bounds_floor(const struct cp_bounds *b,
					    const struct cp_bound_rule *r, double base_median,
					    int varies);

/* Moves one match from the default the measure matched (exact or not) to
 * the floor that judged it instead. */
void cp_bounds_count_floor(struct cp_bounds *b, int exact);

/* The `removed-ok` rule that lets measure name disappear from the head
 * (counted as matched), or NULL. */
struct cp_bound_rule *cp_bounds_removed_ok(struct cp_bounds *b, const char *name);

/* For a measure on one side only (added or removed, no bound applies):
 * counts the first bound rule matching name as matched, so that a rule
 * written for it is not reported as matching nothing. */
void cp_bounds_note_unjudged(struct cp_bounds *b, const char *name);

void cp_bounds_free(struct cp_bounds *b);

#endif
