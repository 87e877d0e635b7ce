/* test_proc_maps_read.c - cp_proc_maps_read gives a process's whole map as
 * the kernel writes it, line for line, field for field: a child's map of
 * hundreds of mappings (more text than one read returns), files named
 * with spaces, one deleted since it was mapped, one under a path near
 * PATH_MAX long. And an entry is small: an array of a long map spans a
 * few pages, not one a line (each page first touched is a fault). */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_maps.h"
#include "unit.h"

#define PAGES 600 /* mappings made by mprotect of every other page */
#define LEVELS 18 /* directories of NAME_LEN characters each */
#define NAME_LEN 200
#define REF_CAP (4u << 20) /* the reference read of /proc/PID/maps */

struct fixture {
	char dir[64], spaced[128], gone[128], deep[PATH_MAX];
	pid_t child;
};

static int create_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc;

	if (fd < 0)
		return -1;
	rc = ftruncate(fd, 4096);
	close(fd);
	return rc;
}

static bool map_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	if (fd >= 0)
		close(fd);
	return p != MAP_FAILED;
}

/* The deep path: LEVELS directories under f->dir, then the file "f". */
static int make_deep(struct fixture *f)
{
	size_t len = strlen(f->dir);

	memcpy(f->deep, f->dir, len + 1);
	for (int i = 0; i < LEVELS; i++) {
		f->deep[len++] = '/';
		memset(f->deep + len, 'a' + i, NAME_LEN);
		len += NAME_LEN;
		f->deep[len] = '\0';
		if (mkdir(f->deep, 0700))
			return -1;
	}
	memcpy(f->deep + len, "/f", 3);
	return create_file(f->deep);
}

/* In the child: the mappings, then "y" (or "n") on ready, then idle, so
 * its map holds still while the parent reads it (this process's own
 * changes as it allocates, under AddressSanitizer at every call). */
static void child_maps(const struct fixture *f, int ready)
{
	long page = sysconf(_SC_PAGESIZE);
	char *pages = mmap(NULL, (size_t)(PAGES * page), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok = pages != MAP_FAILED;

	for (int i = 0; ok && i < PAGES; i += 2)
		ok = !mprotect(pages + i * page, (size_t)page, PROT_READ);
	ok = ok && map_file(f->spaced) && map_file(f->gone) && map_file(f->deep);
	if (write(ready, ok ? "y" : "n", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static int fixture_make(struct fixture *f)
{
	int pfd[2];
	char c = 0;

	snprintf(f->dir, sizeof(f->dir), "/tmp/cp-maps-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->spaced, sizeof(f->spaced), "%s/a file  with spaces", f->dir);
	snprintf(f->gone, sizeof(f->gone), "%s/gone soon (x)", f->dir);
	if (create_file(f->spaced) || create_file(f->gone) || make_deep(f) || pipe(pfd))
		return -1;
	if ((f->child = fork()) == 0)
		child_maps(f, pfd[1]);
	close(pfd[1]);
	if (f->child < 0 || read(pfd[0], &c, 1) != 1)
		c = 0;
	close(pfd[0]);
	return c == 'y' ? unlink(f->gone) : -1;
}

static void fixture_remove(struct fixture *f)
{
	if (f->child > 0) {
		kill(f->child, SIGKILL);
		waitpid(f->child, NULL, 0);
	}
	unlink(f->spaced);
	unlink(f->gone);
	if (f->deep[0]) {
		char *slash;

		unlink(f->deep);
		while ((slash = strrchr(f->deep, '/')) && strlen(f->deep) > strlen(f->dir)) {
			*slash = '\0';
			rmdir(f->deep);
		}
	}
	if (f->dir[0])
		rmdir(f->dir);
}

/* /proc/PID/maps into buf. */
static size_t read_ref(pid_t pid, char *buf, size_t cap)
{
	char path[64];
	int fd;
	size_t n = 0;
	ssize_t got = 1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && got > 0 && n + 1 < cap)
		if ((got = read(fd, buf + n, cap - n - 1)) > 0)
			n += (size_t)got;
	if (fd >= 0)
		close(fd);
	buf[n] = '\0';
	return n;
}

/* A line as the reference parse reads it. */
struct ref_map {
	uint64_t start, end, offset, ino;
	unsigned dev_major, dev_minor;
	char perms[5];
	bool deleted;
	const char *path;
};

/* The reference parse, written apart from the product's: fields split at
 * their separators, the path the rest of the line after the inode's
 * padding, " (deleted)" the kernel's suffix. */
static int ref_parse(char *line, struct ref_map *m)
{
	char *e;
	size_t len;

	m->start = strtoull(line, &e, 16);
	if (*e != '-')
		return -1;
	m->end = strtoull(e + 1, &e, 16);
	if (*e != ' ' || strlen(e) < 6 || e[5] != ' ')
		return -1;
	memcpy(m->perms, e + 1, 4);
	m->perms[4] = '\0';
	m->offset = strtoull(e + 6, &e, 16);
	m->dev_major = (unsigned)strtoul(e + 1, &e, 16);
	if (*e != ':')
		return -1;
	m->dev_minor = (unsigned)strtoul(e + 1, &e, 16);
	m->ino = strtoull(e + 1, &e, 10);
	while (*e == ' ')
		e++;
	len = strlen(e);
	m->deleted = len > 10 && !strcmp(e + len - 10, " (deleted)");
	if (m->deleted)
		e[len - 10] = '\0';
	m->path = e;
	return 0;
}

/* The first entry of got[0..n) that differs from the reference text's
 * line; n when none does. -1: the counts differ. */
static long first_difference(char *ref, const struct cp_proc_map *got, size_t n)
{
	size_t i = 0;

	for (char *line = strtok(ref, "\n"); line; line = strtok(NULL, "\n"), i++) {
		struct ref_map r;

		if (i >= n || ref_parse(line, &r))
			return -1;
		if (r.start != got[i].start || r.end != got[i].end || r.offset != got[i].offset ||
		    strcmp(r.perms, got[i].perms) || r.dev_major != got[i].dev_major ||
		    r.dev_minor != got[i].dev_minor || r.ino != got[i].ino ||
		    r.deleted != got[i].deleted || strcmp(r.path, got[i].path))
			return (long)i;
	}
	return i == n ? (long)n : -1;
}

static const struct cp_proc_map *find(const struct cp_proc_map *v, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].path, path))
			return &v[i];
	return NULL;
}

/* Reads pid's map until it was the same just before and just after;
 * *maps then holds it and ref its text. */
static int read_stable(pid_t pid, char *ref, char *again, struct cp_proc_map **maps, size_t *n)
{
	for (int tries = 0; tries < 100; tries++) {
		read_ref(pid, ref, REF_CAP);
		if (cp_proc_maps_read(pid, maps, n))
			return -1;
		read_ref(pid, again, REF_CAP);
		if (!strcmp(ref, again))
			return 0;
		free(*maps);
	}
	return -1;
}

static void check_map(struct fixture *f, char *ref, char *again)
{
	struct cp_proc_map *maps;
	const struct cp_proc_map *m;
	size_t n;
	long diff;

	CHECK(read_stable(f->child, ref, again, &maps, &n) == 0);
	diff = first_difference(ref, maps, n);
	if (diff != (long)n)
		free(maps);
	CHECK_INT(diff, (long)n);
	CHECK(n > PAGES);
	m = find(maps, n, f->spaced);
	CHECK(m && !m->deleted);
	m = find(maps, n, f->gone);
	CHECK(m && m->deleted);
	m = find(maps, n, f->deep);
	CHECK(m && strlen(m->path) > (size_t)LEVELS * NAME_LEN);
	free(maps);
}

TEST(proc_maps_read_is_the_kernels_map_line_for_line)
{
	struct fixture f = { .child = 0 };
	char *ref = malloc(REF_CAP), *again = malloc(REF_CAP);

	if (ref && again && fixture_make(&f) == 0)
		check_map(&f, ref, again);
	else
		unit_fail(__FILE__, __LINE__, "cannot make the mappings to read");
	fixture_remove(&f);
	free(ref);
	free(again);
}

TEST(proc_map_entry_is_small)
{
	CHECK(sizeof(struct cp_proc_map) <= 64);
}

/* A target that runs this test's executable and is no descendant of this
 * process (its parent exited), with a child of its own: both pids in
 * pids[0..1], the target's first. */
static bool orphan_with_child(pid_t pids[2])
{
	int ready[2];
	pid_t mid;
	bool ok = false;

	if (pipe(ready))
		return false;
	mid = fork();
	if (mid == 0) {
		if (fork() == 0) {
			pid_t got[2] = { getpid(), fork() };

			if (got[1] == 0)
				pause();
			(void)!write(ready[1], got, sizeof(got));
			pause();
		}
		_exit(0);
	}
	close(ready[1]);
	if (mid > 0) {
		waitpid(mid, NULL, 0);
		ok = read(ready[0], pids, 2 * sizeof(pid_t)) == (ssize_t)(2 * sizeof(pid_t)) &&
		     pids[0] > 0 && pids[1] > 0;
	}
	close(ready[0]);
	return ok;
}

/* A child forked after a followed target's tree was listed (attach --tree
 * on a shell loop) maps the boundary's file as its parent does: it is the
 * target's own, not another process's that would drop following. Here the
 * target runs this test's executable and is no descendant of this process
 * (clockprof's own are never another user), and the file is that
 * executable, which the target's forked child maps too. */
TEST(proc_maps_other_user_spares_the_targets_descendants)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t t[2] = { 0, 0 }, other, spared;
	bool made = orphan_with_child(t);

	CHECK(len > 0 && made);
	exe[len] = '\0';
	other = cp_proc_maps_other_user(exe, t[0], NULL, 0, false);
	spared = cp_proc_maps_other_user(exe, t[0], NULL, 0, true);
	kill(t[1], SIGKILL);
	kill(t[0], SIGKILL);
	/* without following, the child is another user (the first found
	 * may be another process of the host running these tests) */
	CHECK(other != 0);
	CHECK(spared != t[1]);
}

/* clockprof's own children (its registrar, forked from clockprof, maps
 * every library clockprof does) are no other user of a file: one found
 * made `run -r func:libjansson.so.4:...` stop following the target's
 * forks, naming the registrar as "not the target's". */
TEST(proc_maps_other_user_spares_clockprofs_own_children)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int ready[2];
	pid_t helper, other;
	char c;

	CHECK(len > 0 && pipe(ready) == 0);
	exe[len] = '\0';
	helper = fork();
	if (helper == 0) {
		close(ready[0]);
		(void)!write(ready[1], "r", 1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	CHECK(helper > 0);
	(void)!read(ready[0], &c, 1);
	close(ready[0]);
	/* the target: a process that maps none of it (init) */
	other = cp_proc_maps_other_user(exe, 1, NULL, 0, false);
	kill(helper, SIGKILL);
	waitpid(helper, NULL, 0);
	CHECK(other != helper);
}
