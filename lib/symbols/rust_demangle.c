/* rust_demangle.c - names in Rust's v0 symbol mangling ("_R...").
 *
 * libstdc++'s demangler knows only the Itanium scheme, which Rust's legacy
 * mangling follows. Rust's standard library ships compiled with v0 (rustc
 * 1.95 here), so the wrappers a clock read passes through
 * (std::time::Instant::now, std::sys::pal::unix::time::Timespec::now) and
 * the std frames of every Rust stack would otherwise read _RNvMNtCs...;
 * user crates follow when their default changes. The grammar is RFC 2603;
 * names print as Rust's own demangler prints them in its short form
 * (binutils' c++filt too, less the crate hashes):
 * <std::time::Instant>::now, <T as Trait>::f, f::<T>, {closure#0}.
 * Anything not decoded here (punycode identifiers, string or struct
 * constants) makes it give up, and the caller shows the raw name. */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rust_demangle.h"

#define MAX_DEPTH 100
#define MAX_OUTPUT 8192
/* Backrefs let a short symbol name a huge tree; real ones expand to a few
 * thousand nodes at most. Past this, give up rather than spend seconds. */
#define MAX_STEPS 200000

struct demangler {
	const char *s;		/* the symbol after "_R" */
	size_t len, pos;
	char out[MAX_OUTPUT];
	size_t out_len;
	int depth;
	unsigned long steps;
	uint64_t bound_lifetimes;	/* lifetimes bound by enclosing binders */
	bool quiet;		/* parsing without printing (an impl's path) */
	bool generics_open;	/* trait_path_open left a "<" to close */
	bool failed;
};

static bool fail(struct demangler *d)
{
	d->failed = true;
	return false;
}

static char peek(const struct demangler *d)
{
	return d->pos < d->len ? d->s[d->pos] : '\0';
}

static bool eat(struct demangler *d, char c)
{
	if (!c || peek(d) != c)
		return false;
	d->pos++;
	return true;
}

static void print_n(struct demangler *d, const char *s, size_t n)
{
	if (d->quiet || d->failed)
		return;
	if (d->out_len + n >= MAX_OUTPUT) {
		fail(d);
		return;
	}
	memcpy(d->out + d->out_len, s, n);
	d->out_len += n;
	d->out[d->out_len] = '\0';
}

static void print(struct demangler *d, const char *s)
{
	print_n(d, s, strlen(s));
}

static void print_u64(struct demangler *d, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	print(d, buf);
}

/* <base-62-number>: "_" is 0; digits 0-9a-zA-Z then "_" are that plus 1. */
static uint64_t base62(struct demangler *d)
{
	uint64_t x = 0;
	char c;

	if (eat(d, '_'))
		return 0;
	while ((c = peek(d)) && c != '_') {
		unsigned digit;

		if (c >= '0' && c <= '9')
			digit = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'z')
			digit = 10 + (unsigned)(c - 'a');
		else if (c >= 'A' && c <= 'Z')
			digit = 36 + (unsigned)(c - 'A');
		else
			return fail(d), 0;
		if (x > (UINT64_MAX - 1 - digit) / 62)
			return fail(d), 0;
		x = x * 62 + digit;
		d->pos++;
	}
	if (!eat(d, '_'))
		return fail(d), 0;
	return x + 1;
}

/* ["s" <base-62-number>]: which of several same-named items; 0 if absent. */
static uint64_t disambiguator(struct demangler *d)
{
	return eat(d, 's') ? base62(d) + 1 : 0;
}

/* <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes> */
static bool identifier(struct demangler *d, const char **name, size_t *n)
{
	size_t len = 0;

	if (peek(d) == 'u')
		return fail(d);	/* punycode: not decoded here */
	if (!isdigit((unsigned char)peek(d)))
		return fail(d);
	if (!eat(d, '0')) {
		while (isdigit((unsigned char)peek(d))) {
			if (len > d->len)
				return fail(d);
			len = len * 10 + (size_t)(peek(d) - '0');
			d->pos++;
		}
	}
	eat(d, '_');
	if (len > d->len - d->pos)
		return fail(d);
	/* Non-ASCII names come punycoded: anything else is not a symbol. */
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)d->s[d->pos + i]) && d->s[d->pos + i] != '_')
			return fail(d);
	*name = d->s + d->pos;
	*n = len;
	d->pos += len;
	return true;
}

static bool enter(struct demangler *d)
{
	return (++d->depth <= MAX_DEPTH && ++d->steps <= MAX_STEPS) || fail(d);
}

static bool leave(struct demangler *d, bool ok)
{
	d->depth--;
	return ok && !d->failed;
}

/* "B" <base-62-number>, the "B" eaten: the earlier position it names
 * (never this one or later, so parsing cannot loop). *follow is false
 * while nothing is printed (an impl's own path): the backref is then only
 * skipped, since walking it could take time exponential in the symbol's
 * length. */
static bool backref_target(struct demangler *d, size_t *target, bool *follow)
{
	size_t here = d->pos - 1;
	uint64_t t = base62(d);

	if (d->failed || t >= here)
		return fail(d);
	*target = (size_t)t;
	*follow = !d->quiet;
	return true;
}

/* Runs fn at a backref's target and comes back. */
static bool backref(struct demangler *d, bool (*fn)(struct demangler *, bool),
		    bool arg)
{
	size_t target, resume;
	bool follow, ok;

	if (!backref_target(d, &target, &follow))
		return false;
	if (!follow)
		return true;
	if (!enter(d))
		return false;
	resume = d->pos;
	d->pos = target;
	ok = fn(d, arg);
	d->pos = resume;
	return leave(d, ok);
}

/* 'a, 'b, ... counted from the innermost binder; '_ for an erased one. */
static void print_lifetime(struct demangler *d, uint64_t index)
{
	char buf[32];
	uint64_t depth;

	if (index == 0) {
		print(d, "'_");
		return;
	}
	if (index > d->bound_lifetimes) {
		fail(d);
		return;
	}
	depth = d->bound_lifetimes - index;
	if (depth < 26)
		snprintf(buf, sizeof(buf), "'%c", (char)('a' + depth));
	else
		snprintf(buf, sizeof(buf), "'_%" PRIu64, depth);
	print(d, buf);
}

/* ["G" <base-62-number>]: for<'a, ...>, binding that many more lifetimes. */
static uint64_t binder(struct demangler *d)
{
	uint64_t n;

	if (!eat(d, 'G'))
		return 0;
	n = base62(d) + 1;
	if (d->failed || n > 1000)
		return fail(d), 0;
	print(d, "for<");
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			print(d, ", ");
		d->bound_lifetimes++;
		print_lifetime(d, 1);
	}
	print(d, "> ");
	return n;
}

static bool path(struct demangler *d, bool in_value);
static bool type(struct demangler *d, bool unused);

static bool constant(struct demangler *d, bool unused)
{
	char kind;
	uint64_t v = 0;
	bool negative;
	int digits = 0;

	(void)unused;
	if (eat(d, 'B'))
		return backref(d, constant, false);
	if (eat(d, 'p')) {
		print(d, "_");
		return true;
	}
	kind = peek(d);
	if (!kind || !strchr("abchijlmnostxy", kind))
		return fail(d);	/* str, struct and float constants: not here */
	d->pos++;
	negative = eat(d, 'n');
	while (!eat(d, '_')) {
		char c = peek(d);
		unsigned h = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? 10 + (unsigned)(c - 'a') : 16;

		if (h == 16 || ++digits > 16)
			return fail(d);
		v = v << 4 | h;
		d->pos++;
	}
	if (kind == 'b') {
		if (v > 1)
			return fail(d);
		print(d, v ? "true" : "false");
	} else if (kind == 'c') {
		char buf[8];

		if (v < 0x20 || v >= 0x7f || v == '\'' || v == '\\')
			return fail(d);
		snprintf(buf, sizeof(buf), "'%c'", (char)v);
		print(d, buf);
	} else {
		if (negative)
			print(d, "-");
		print_u64(d, v);
	}
	return true;
}

/* <generic-arg> {...} "E": lifetimes, types and "K" <const>. */
static bool generic_args(struct demangler *d)
{
	for (int i = 0; !eat(d, 'E'); i++) {
		bool ok;

		if (d->failed || d->pos >= d->len)
			return fail(d);
		if (i)
			print(d, ", ");
		if (eat(d, 'L')) {
			print_lifetime(d, base62(d));
			ok = !d->failed;
		} else if (eat(d, 'K')) {
			ok = constant(d, false);
		} else {
			ok = type(d, false);
		}
		if (!ok)
			return false;
	}
	return true;
}

static bool fn_signature(struct demangler *d)
{
	uint64_t bound = binder(d);
	const char *abi;
	size_t n;
	bool ok = true;

	if (eat(d, 'U'))
		print(d, "unsafe ");
	if (eat(d, 'K')) {
		print(d, "extern \"");
		if (eat(d, 'C')) {
			print(d, "C");
		} else if (identifier(d, &abi, &n)) {
			for (size_t i = 0; i < n; i++)
				print_n(d, abi[i] == '_' ? "-" : &abi[i], 1);
		}
		print(d, "\" ");
	}
	print(d, "fn(");
	for (int i = 0; ok && !eat(d, 'E'); i++) {
		if (d->failed || d->pos >= d->len) {
			ok = fail(d);
			break;
		}
		if (i)
			print(d, ", ");
		ok = type(d, false);
	}
	print(d, ")");
	if (ok && !eat(d, 'u')) {
		print(d, " -> ");
		ok = type(d, false);
	}
	d->bound_lifetimes -= bound;
	return ok;
}

/* A dyn trait's path, leaving its generic arguments' "<" open for the
 * associated-type bindings that may follow (Iterator<Item = u8>):
 * d->generics_open says whether it did. Set last, as the arguments may
 * hold dyn traits of their own. */
static bool trait_path_open(struct demangler *d, bool unused)
{
	bool ok;

	(void)unused;
	if (eat(d, 'B'))
		return backref(d, trait_path_open, false);
	if (eat(d, 'I')) {
		ok = path(d, false);
		print(d, "<");
		ok = ok && generic_args(d);
		d->generics_open = true;
		return ok;
	}
	ok = path(d, false);
	d->generics_open = false;
	return ok;
}

static bool dyn_bounds(struct demangler *d)
{
	uint64_t bound;
	bool ok = true;

	print(d, "dyn ");
	bound = binder(d);
	for (int i = 0; ok && !eat(d, 'E'); i++) {
		bool open;

		if (d->failed || d->pos >= d->len) {
			ok = fail(d);
			break;
		}
		if (i)
			print(d, " + ");
		ok = trait_path_open(d, false);
		open = d->generics_open;
		while (ok && eat(d, 'p')) {
			const char *name;
			size_t n;

			print(d, open ? ", " : "<");
			open = true;
			ok = identifier(d, &name, &n);
			if (ok) {
				print_n(d, name, n);
				print(d, " = ");
				ok = type(d, false);
			}
		}
		if (open)
			print(d, ">");
	}
	d->bound_lifetimes -= bound;
	if (ok && eat(d, 'L')) {
		uint64_t lt = base62(d);

		if (lt) {
			print(d, " + ");
			print_lifetime(d, lt);
		}
	} else {
		ok = fail(d);
	}
	return ok && !d->failed;
}

static const char *basic_type(char c)
{
	switch (c) {
	case 'a': return "i8";
	case 'b': return "bool";
	case 'c': return "char";
	case 'd': return "f64";
	case 'e': return "str";
	case 'f': return "f32";
	case 'h': return "u8";
	case 'i': return "isize";
	case 'j': return "usize";
	case 'l': return "i32";
	case 'm': return "u32";
	case 'n': return "i128";
	case 'o': return "u128";
	case 'p': return "_";
	case 's': return "i16";
	case 't': return "u16";
	case 'u': return "()";
	case 'v': return "...";
	case 'x': return "i64";
	case 'y': return "u64";
	case 'z': return "!";
	default: return NULL;
	}
}

static bool type(struct demangler *d, bool unused)
{
	const char *basic = basic_type(peek(d));
	bool ok = true;
	char c;

	(void)unused;
	if (basic) {
		d->pos++;
		print(d, basic);
		return true;
	}
	if (!enter(d))
		return false;
	switch ((c = peek(d))) {
	case 'A':		/* [T; N] */
	case 'S':		/* [T] */
		d->pos++;
		print(d, "[");
		ok = type(d, false);
		if (ok && c == 'A') {
			print(d, "; ");
			ok = constant(d, false);
		}
		print(d, "]");
		break;
	case 'R':		/* &'a T, &mut T */
	case 'Q':
		d->pos++;
		print(d, "&");
		if (eat(d, 'L')) {
			uint64_t lt = base62(d);

			if (lt) {
				print_lifetime(d, lt);
				print(d, " ");
			}
		}
		if (c == 'Q')
			print(d, "mut ");
		ok = type(d, false);
		break;
	case 'P':		/* *const T, *mut T */
	case 'O':
		d->pos++;
		print(d, c == 'P' ? "*const " : "*mut ");
		ok = type(d, false);
		break;
	case 'F':
		d->pos++;
		ok = fn_signature(d);
		break;
	case 'D':
		d->pos++;
		ok = dyn_bounds(d);
		break;
	case 'T': {		/* (A, B), (A,) */
		int n = 0;

		d->pos++;
		print(d, "(");
		while (ok && !eat(d, 'E')) {
			if (d->failed || d->pos >= d->len) {
				ok = fail(d);
				break;
			}
			if (n++)
				print(d, ", ");
			ok = type(d, false);
		}
		print(d, n == 1 ? ",)" : ")");
		break;
	}
	case 'B':
		d->pos++;
		ok = backref(d, type, false);
		break;
	default:
		ok = path(d, false);
		break;
	}
	return leave(d, ok);
}

static bool path(struct demangler *d, bool in_value)
{
	const char *name;
	size_t n;
	uint64_t dis;
	bool ok = true, quiet;
	char tag, ns;

	if (!enter(d))
		return false;
	switch ((tag = peek(d))) {
	case 'C':		/* crate root */
		d->pos++;
		disambiguator(d);
		ok = identifier(d, &name, &n);
		if (ok)
			print_n(d, name, n);
		break;
	case 'N':		/* parent::name */
		d->pos++;
		ns = peek(d);
		if (!isalpha((unsigned char)ns)) {
			ok = fail(d);
			break;
		}
		d->pos++;
		ok = path(d, in_value);
		dis = ok ? disambiguator(d) : 0;
		ok = ok && identifier(d, &name, &n);
		if (!ok)
			break;
		if (islower((unsigned char)ns)) {
			if (n) {
				print(d, "::");
				print_n(d, name, n);
			}
			break;
		}
		/* Special namespaces: {closure#0}, {shim:vtable#0}, ... */
		print(d, ns == 'C' ? "::{closure" : ns == 'S' ? "::{shim" : "::{");
		if (ns != 'C' && ns != 'S')
			print_n(d, &ns, 1);
		if (n) {
			print(d, ":");
			print_n(d, name, n);
		}
		print(d, "#");
		print_u64(d, dis);
		print(d, "}");
		break;
	case 'M':		/* <Type>::... */
	case 'X':		/* <Type as Trait>::... */
	case 'Y':
		d->pos++;
		if (tag != 'Y') {
			/* The impl's own path only says where the impl is. */
			quiet = d->quiet;
			d->quiet = true;
			disambiguator(d);
			ok = path(d, false);
			d->quiet = quiet;
		}
		print(d, "<");
		ok = ok && type(d, false);
		if (ok && tag != 'M') {
			print(d, " as ");
			ok = path(d, false);
		}
		print(d, ">");
		break;
	case 'I':		/* path::<args> in a value, path<args> in a type */
		d->pos++;
		ok = path(d, in_value);
		if (!ok)
			break;
		print(d, in_value ? "::<" : "<");
		ok = generic_args(d);
		print(d, ">");
		break;
	case 'B':
		d->pos++;
		ok = backref(d, path, in_value);
		break;
	default:
		ok = fail(d);
		break;
	}
	return leave(d, ok);
}

char *cp_rust_demangle(const char *name)
{
	struct demangler *d;
	char *out = NULL;

	if (!name || strncmp(name, "_R", 2) != 0)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->s = name + 2;
	d->len = strlen(d->s);
	/* The path (an encoding version would come first: none is defined
	 * yet); what may follow it, the instantiating crate and a vendor
	 * suffix, is not part of the name. */
	if (isupper((unsigned char)peek(d)) && path(d, true) && d->out_len) {
		if (isupper((unsigned char)peek(d))) {
			d->quiet = true;	/* the instantiating crate */
			path(d, false);
		}
		if (!d->failed && (!peek(d) || peek(d) == '.' || peek(d) == '$'))
			out = strdup(d->out);
	}
	free(d);
	return out;
}
