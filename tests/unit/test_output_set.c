/* test_output_set.c - one command's outputs agree with its exit code: the
 * staged files are written first, the outputs that cannot be staged after,
 * and the last of the set (verdict.json) is put in place last, or, when any
 * output failed and none may be, not at all (an older one stays). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"
#include "output_set.h"
#include "unit.h"

/* Each writer notes its letter, so the order of the writes shows. */
struct order {
	char seen[8];
	size_t n;
};

static int note(FILE *f, struct order *o, char c)
{
	o->seen[o->n++] = c;
	fputs(c == 'v' ? "new verdict" : "other", f);
	return 0;
}

static int write_a(FILE *f, void *ctx, struct cp_error *err)
{
	(void)err;
	return note(f, ctx, 'a');
}

static int write_v(FILE *f, void *ctx, struct cp_error *err)
{
	(void)err;
	return note(f, ctx, 'v');
}

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/* An HTML report to /dev/full (a device: written after the staged files)
 * fails; verdict.json, already written to its temp file, is not put in
 * place under ALL_OR_NONE, and is under KEEP_LAST. */
static void run_set(enum cp_outputs_policy policy, const char *expect)
{
	char dir[] = "/tmp/cp-outset-XXXXXX", verdict[64], buf[64];
	struct order seen = { 0 };
	struct cp_error err = { 0 };
	struct cp_output outs[2] = { { "/dev/full", write_a, &seen, NULL },
				     { verdict, write_v, &seen, NULL } };

	CHECK(mkdtemp(dir));
	snprintf(verdict, sizeof(verdict), "%s/verdict.json", dir);
	CHECK_INT(cp_write_file_atomic(verdict, "old verdict", 11, &err), 0);
	CHECK_INT(cp_outputs_open(outs, 2, NULL, &err), 0);
	/* /dev/full takes a small write into stdio's buffer: the flush fails. */
	CHECK_INT(cp_outputs_write(outs, 2, policy, &err), -1);
	CHECK(strstr(err.msg, "/dev/full") != NULL);
	CHECK_STR(seen.seen, "va"); /* the staged verdict first */
	CHECK_INT(cp_outputs_publish(outs, 2, &err), 0);
	slurp(verdict, buf, sizeof(buf));
	CHECK_STR(buf, expect);
	CHECK_INT(entries(dir), 1); /* no temp file left */
	unlink(verdict);
	rmdir(dir);
}

TEST(output_set_failed_output_keeps_the_verdict_out)
{
	run_set(CP_OUTPUTS_ALL_OR_NONE, "old verdict");
}

TEST(output_set_keep_last_keeps_what_was_measured)
{
	run_set(CP_OUTPUTS_KEEP_LAST, "new verdict");
}

/* An output that cannot be opened fails the open, and none is left open
 * (the first one's temp file is gone). */
TEST(output_set_open_fails_whole)
{
	char dir[] = "/tmp/cp-outset-XXXXXX", first[64];
	struct cp_error err = { 0 };
	struct cp_output outs[2] = { { first, NULL, NULL, NULL },
				     { "/nonexistent-dir/verdict.json", NULL, NULL, NULL } };

	CHECK(mkdtemp(dir));
	snprintf(first, sizeof(first), "%s/report.html", dir);
	CHECK_INT(cp_outputs_open(outs, 2, NULL, &err), -1);
	CHECK(strstr(err.msg, "/nonexistent-dir") != NULL);
	CHECK(outs[0].out == NULL && outs[1].out == NULL);
	CHECK_INT(entries(dir), 0);
	rmdir(dir);
}
