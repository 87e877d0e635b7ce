/* main.c - runs the registered unit tests; see unit.h. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "unit.h"

static struct unit_test *tests;
static int current_failed, current_skipped;

void unit_register(struct unit_test *t)
{
	t->next = tests;
	tests = t;
}

void unit_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	current_failed = 1;
	fprintf(stderr, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void unit_skip(const char *reason)
{
	current_skipped = 1;
	fprintf(stderr, "  skipped: %s\n", reason);
}

/* Fixtures and targets are built beside this binary ($(O)/tests next to
 * $(O)/unit-tests), so running it directly finds them; $CP_TEST_BUILD
 * points elsewhere. */
const char *unit_build_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("CP_TEST_BUILD");
	ssize_t n;
	char *slash;

	if (env)
		return env;
	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - sizeof("/tests"));
	if (n <= 0)
		return "build/tests";
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	strcpy(slash ? slash : dir, "/tests");
	return dir;
}

bool unit_built(char *path, size_t size, const char *file)
{
	char why[PATH_MAX + 64];

	snprintf(path, size, "%s/%s", unit_build_dir(), file);
	if (access(path, R_OK) == 0)
		return true;
	snprintf(why, sizeof(why), "%s not built (make test-fixtures test-targets)", path);
	unit_skip(why);
	return false;
}

long unit_pages_held(const void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1), end = (uintptr_t)p + len;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	long held = 0;
	uint64_t e;

	if (fd < 0)
		return -1;
	for (uintptr_t at = start; held >= 0 && at < end; at += page) {
		if (pread(fd, &e, sizeof(e), (off_t)(at / page * sizeof(e))) != sizeof(e))
			held = -1;
		else if (e >> 63)
			held++;
	}
	close(fd);
	return held;
}

int unit_libc_path(char *path, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(path, size, "%s", p);
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static int selected(const struct unit_test *t, int argc, char **argv)
{
	if (argc <= 1)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strstr(t->name, argv[i]) || strstr(t->file, argv[i]))
			return 1;
	return 0;
}

/* Registration prepends, so reverse to run tests in file order. */
static struct unit_test *reversed(struct unit_test *t)
{
	struct unit_test *out = NULL;

	while (t) {
		struct unit_test *next = t->next;

		t->next = out;
		out = t;
		t = next;
	}
	return out;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;

	/* A line per test as it ends, even when LeakSanitizer ends the
	 * process at exit with stdout's buffer unwritten. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (struct unit_test *t = reversed(tests); t; t = t->next) {
		if (!selected(t, argc, argv))
			continue;
		current_failed = current_skipped = 0;
		t->fn();
		if (current_failed) {
			failed++;
			printf("FAIL %s (%s)\n", t->name, t->file);
		} else if (current_skipped) {
			skipped++;
			printf("SKIP %s\n", t->name);
		} else {
			passed++;
			printf("ok   %s\n", t->name);
		}
	}
	printf("unit: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
