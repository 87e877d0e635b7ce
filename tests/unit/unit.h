/* unit.h - the unit-test harness: a test is `TEST(name) { CHECK(...); }` in
 * any tests/unit/test_*.c file; it registers itself at start-up, and
 * tests/unit/main.c runs every registered test (or those whose names contain
 * the command-line arguments) and prints "unit: N passed, N failed, N skipped".
 * Unit tests need no privileges. */
#ifndef CP_UNIT_H
#define CP_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct unit_test {
	const char *name;
	const char *file;
	void (*fn)(void);
	struct unit_test *next;
};

void unit_register(struct unit_test *t);
/* Marks the running test failed; CHECK* call it and then return. */
void unit_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Marks the running test skipped, with the reason printed. */
void unit_skip(const char *reason);
/* Directory holding test fixtures built by make (build/tests). */
const char *unit_build_dir(void);
/* The path of what make built there (file: "fixtures/clock_truth.so",
 * "targets/reads_target"); false, with the test skipped, when it was not
 * built. */
bool unit_built(char *path, size_t size, const char *file);

/* The path of the C library this process runs with, from its own memory
 * map; 0 when none is mapped. */
int unit_libc_path(char *path, size_t size);

/* How many pages of [p, p + len) this process holds in memory, from
 * /proc/self/pagemap; -1 when that cannot be read. */
long unit_pages_held(const void *p, size_t len);

#define TEST(name) \
	static void name(void); \
	static struct unit_test name##_entry = { #name, __FILE__, name, 0 }; \
	__attribute__((constructor)) static void name##_register(void) \
	{ \
		unit_register(&name##_entry); \
	} \
	static void name(void)

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			unit_fail(__FILE__, __LINE__, "%s", #cond); \
			return; \
		} \
	} while (0)

#define CHECK_INT(a, b) \
	do { \
		long long a_ = (long long)(a), b_ = (long long)(b); \
		if (a_ != b_) { \
			unit_fail(__FILE__, __LINE__, "%s == %lld, expected %lld", #a, a_, b_); \
			return; \
		} \
	} while (0)

#define CHECK_STR(a, b) \
	do { \
		const char *a_ = (a), *b_ = (b); \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) { \
			unit_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a, \
				  a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			return; \
		} \
	} while (0)

/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol) \
	do { \
		double a_ = (a), b_ = (b), t_ = (tol); \
		if (!(a_ - b_ <= t_ && b_ - a_ <= t_)) { \
			unit_fail(__FILE__, __LINE__, "%s == %.9g, expected %.9g +- %g", #a, a_, \
				  b_, t_); \
			return; \
		} \
	} while (0)

#endif
