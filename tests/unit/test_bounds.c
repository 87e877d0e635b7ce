/* test_bounds.c - the bounds file grammar (lib/gate/bounds.c) and its
 * SHA-256 fingerprint (lib/util/sha256.c over libgcrypt; digests from FIPS
 * 180-4's examples and python3 hashlib). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "bounds.h"
#include "error.h"
#include "sha256.h"
#include "unit.h"

static int parse(const char *text, struct cp_bounds *b, struct cp_error *err)
{
	return cp_bounds_parse(text, strlen(text), ".clockprof-bounds", b, err);
}

TEST(bounds_design_example)
{
	static const char text[] =
		"# clock reads must not grow\n"
		"clock_reads/op        +0        # exact measure: any increase fails\n"
		"clock_reads.*/op      +0\n"
		"\n"
		"instructions:u/op     +1%\n"
		"cycles*/op            +3.5%\n"
		"   *                  +5%\r\n";
	struct cp_bounds b;
	struct cp_error err = { 0 };
	struct cp_bound_rule *r;

	CHECK_INT(parse(text, &b, &err), 0);
	CHECK_INT(b.nrules, 5);
	CHECK_STR(b.rules[0].pattern, "clock_reads/op");
	CHECK_INT(b.rules[0].line, 2);
	CHECK_INT(b.rules[0].relative, 0);
	CHECK_NEAR(b.rules[0].value, 0, 0);
	CHECK_INT(b.rules[3].line, 6);
	CHECK_INT(b.rules[3].relative, 1);
	CHECK_NEAR(b.rules[3].value, 3.5, 1e-12);
	CHECK_STR(b.rules[3].text, "+3.5%");
	CHECK_STR(b.rules[4].pattern, "*");
	/* First match wins; '*' crosses '/'. */
	r = cp_bounds_match(&b, "clock_reads.gettimeofday/op", 1);
	CHECK_INT(r->line, 3);
	r = cp_bounds_match(&b, "clock_reads/op", 1);
	CHECK_INT(r->line, 2);
	r = cp_bounds_match(&b, "cycles:u/op", 0);
	CHECK_INT(r->line, 6);
	r = cp_bounds_match(&b, "task-clock/op", 0);
	CHECK_INT(r->line, 7);
	CHECK_INT(b.rules[4].matched, 1);
	CHECK_INT(b.rules[2].matched, 0);
	cp_bounds_free(&b);
}

TEST(bounds_defaults_apply_without_rule)
{
	struct cp_bounds b;
	struct cp_error err = { 0 };
	struct cp_bound_rule *r;

	CHECK_INT(parse("clock_reads/op +1\n", &b, &err), 0);
	r = cp_bounds_match(&b, "task-clock/op", 0);
	CHECK_STR(r->text, "+5%");
	CHECK_INT(r->relative, 1);
	CHECK_INT(r->line, 0);
	r = cp_bounds_match(&b, "calls.x/op", 1);
	CHECK_STR(r->text, "+0");
	CHECK_INT(r->relative, 0);
	cp_bounds_free(&b);
	cp_bounds_init_defaults(&b);
	CHECK(b.file == NULL);
	CHECK_STR(cp_bounds_match(&b, "x", 0)->text, CP_BOUND_DEFAULT_SAMPLED);
	cp_bounds_free(&b);
}

/* The defaults' floor: +0.05 absolute for a sampled default on a base
 * median below 1 and for an exact default that varies; never for a rule
 * of the file, nor for a constant exact measure. */
TEST(bounds_default_floor)
{
	struct cp_bounds b;
	struct cp_error err = { 0 };
	const struct cp_bound_rule *r;

	CHECK_INT(parse("file/op +5%\n", &b, &err), 0);
	r = cp_bounds_floor(&b, cp_bounds_match(&b, "cpu-migrations/op", 0), 0.0, 0);
	CHECK(r == &b.default_floor);
	CHECK_STR(r->text, CP_BOUND_DEFAULT_FLOOR);
	CHECK_INT(r->relative, 0);
	CHECK_NEAR(r->value, 0.05, 0);
	CHECK(cp_bounds_floor(&b, &b.default_sampled, 0.999, 0) == &b.default_floor);
	CHECK(cp_bounds_floor(&b, &b.default_sampled, 1.0, 0) == &b.default_sampled);
	CHECK(cp_bounds_floor(&b, &b.default_exact, 5.5, 1) == &b.default_floor);
	CHECK(cp_bounds_floor(&b, &b.default_exact, 0.5, 0) == &b.default_exact);
	r = cp_bounds_match(&b, "file/op", 0);
	CHECK(cp_bounds_floor(&b, r, 0.0, 1) == r);
	CHECK_INT(b.default_sampled.matched, 1);
	cp_bounds_count_floor(&b, 0);
	CHECK_INT(b.default_sampled.matched, 0);
	CHECK_INT(b.default_floor.matched, 1);
	cp_bounds_free(&b);
}

TEST(bounds_hash_inside_glob_is_not_a_comment)
{
	struct cp_bounds b;
	struct cp_error err = { 0 };

	CHECK_INT(parse("a#b +2 #c\n#only a comment +3\n", &b, &err), 0);
	CHECK_INT(b.nrules, 1);
	CHECK_STR(b.rules[0].pattern, "a#b");
	CHECK_NEAR(b.rules[0].value, 2, 0);
	cp_bounds_free(&b);
}

static void check_bad(const char *text, const char *want_in_msg)
{
	struct cp_bounds b;
	struct cp_error err = { 0 };

	if (parse(text, &b, &err) != -1) {
		unit_fail(__FILE__, __LINE__, "accepted bad bounds text \"%s\"", text);
		return;
	}
	if (err.exit_code != CP_EXIT_USAGE || !strstr(err.msg, want_in_msg))
		unit_fail(__FILE__, __LINE__, "message \"%s\" lacks \"%s\"", err.msg, want_in_msg);
	CHECK_INT(b.nrules, 0);
}

TEST(bounds_bad_lines_name_their_line)
{
	check_bad("a +1\nb\n", ".clockprof-bounds:2: rule 'b' has no bound");
	check_bad("# c\n\nx 5%\n", ".clockprof-bounds:3: bad bound '5%'");
	check_bad("x --5%\n", ":1: bad bound '--5%'");
	check_bad("removed-ok\n", ":1: 'removed-ok' needs one GLOB");
	check_bad("removed-ok a b\n", ":1: 'removed-ok' needs one GLOB");
	check_bad("x +5%%\n", ":1: bad bound");
	check_bad("x +abc\n", ":1: bad bound");
	check_bad("x +1e3\n", ":1: bad bound");
	check_bad("x +0x10\n", ":1: bad bound");
	check_bad("x +inf\n", ":1: bad bound");
	check_bad("x +\n", ":1: bad bound");
	check_bad("x +5% y\n", ":1: too many fields");
	check_bad("ok +1\n\n\nx +5% +6%\n", ":4: too many fields");
	check_bad("x +1\ny\0 +2\n", ""); /* strlen stops at NUL: 'y' */
}

/* -N% and -N demand an improvement; removed-ok lines are not bounds. */
TEST(bounds_improvement_and_removed_ok)
{
	struct cp_bounds b;
	struct cp_error err = { 0 };
	struct cp_bound_rule *r;

	CHECK_INT(parse("removed-ok old/*\nfast/* -5%\nexact/* -1\n* +2%\n", &b, &err), 0);
	CHECK_INT(b.nrules, 4);
	CHECK(b.rules[0].removed_ok);
	r = cp_bounds_match(&b, "fast/x", 0);
	CHECK(r->relative && r->value == -5);
	CHECK_STR(r->text, "-5%");
	r = cp_bounds_match(&b, "exact/y", 1);
	CHECK(!r->relative && r->value == -1);
	/* removed-ok never serves as a bound ... */
	r = cp_bounds_match(&b, "old/z", 0);
	CHECK_STR(r->text, "+2%");
	/* ... only for a measure gone from the head. */
	CHECK(cp_bounds_removed_ok(&b, "old/z") == &b.rules[0]);
	CHECK(cp_bounds_removed_ok(&b, "new/z") == NULL);
	CHECK_INT(b.rules[0].matched, 1);
	cp_bounds_note_unjudged(&b, "fast/gone");
	CHECK_INT(b.rules[1].matched, 2);
	cp_bounds_free(&b);
}

TEST(bounds_nul_byte_rejected)
{
	static const char text[] = "x +1\ny +2\0\n";
	struct cp_bounds b;
	struct cp_error err = { 0 };

	CHECK_INT(cp_bounds_parse(text, sizeof(text) - 1, "f", &b, &err), -1);
	CHECK(strstr(err.msg, "f:2: NUL byte") != NULL);
}

TEST(bounds_load_records_path_and_sha256)
{
	char path[] = "/tmp/clockprof-bounds-XXXXXX";
	int fd = mkstemp(path);
	struct cp_bounds b;
	struct cp_error err = { 0 };

	CHECK(fd >= 0);
	CHECK_INT(write(fd, "abc", 3), 3);
	close(fd);
	/* "abc" is not a valid rule (no bound): line 1. */
	CHECK_INT(cp_bounds_load(path, &b, &err), -1);
	CHECK(strstr(err.msg, ":1:") != NULL);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "* +5%\n", 6), 6);
	close(fd);
	CHECK_INT(cp_bounds_load(path, &b, &err), 0);
	CHECK_STR(b.file, path);
	/* python3 -c "import hashlib; print(hashlib.sha256(b'* +5%\n').hexdigest())" */
	CHECK_STR(b.sha256, "25e8f25fe997dbd567c27636d9c17d1ed6e4659f4e99f82730a11c23782b2729");
	cp_bounds_free(&b);
	unlink(path);
	CHECK_INT(cp_bounds_load(path, &b, &err), -1);
	CHECK(strstr(err.msg, "cannot read bounds file") != NULL);
	CHECK(strstr(err.msg, "No such file or directory") != NULL); /* not "Success" */
}

TEST(sha256_known_digests)
{
	static const char *const long_msg =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	unsigned char buf[1024 + 55];
	char hex[65];

	cp_sha256_hex("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	cp_sha256_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cp_sha256_hex(long_msg, strlen(long_msg), hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* hashlib.sha256(bytes(range(256))*4 + b"x"*55): two padding blocks. */
	for (int i = 0; i < 1024; i++)
		buf[i] = (unsigned char)i;
	memset(buf + 1024, 'x', 55);
	cp_sha256_hex(buf, sizeof(buf), hex);
	CHECK_STR(hex, "415c3b5c395cb8896358cda2f03a8c43395029c22ed119c0e76617d75c9b65e9");
}
