/* atomic_file.c - see atomic_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"

/* Where the bytes of an output path go. */
enum out_kind {
	OUT_STDOUT,	/* "-" */
	OUT_IN_PLACE,	/* device, FIFO, socket, /dev/fd/N, /proc: opened and written */
	OUT_REPLACE,	/* regular or new file: temp file renamed over it */
};

struct out_target {
	enum out_kind kind;
	char path[PATH_MAX];	/* for OUT_REPLACE: the file a symlink points to */
	char dir[PATH_MAX];	/* for OUT_REPLACE: its directory */
	bool exists;
	mode_t mode;		/* of the existing file */
};

int cp_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* dirname() may modify its argument, so it works on a copy. */
static void dir_of(const char *path, char *dir, size_t size)
{
	char copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(dir, size, "%s", dirname(copy));
}

/* Paths that name an already open file (the shell's >(...), /dev/stdout,
 * /proc/self/fd/N) or a kernel file: they cannot be replaced, only written. */
static bool names_open_file(const char *path)
{
	return !strncmp(path, "/proc/", 6) || !strncmp(path, "/dev/fd/", 8) ||
	       !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr");
}

/* Follows the symlinks of the last component (not through /proc's magic
 * links, which name open files), so a link to a regular file keeps being a
 * link and the file it points to is replaced. */
static int resolve_links(const char *path, char *out, bool *in_place)
{
	char link[PATH_MAX], dir[PATH_MAX], next[PATH_MAX];
	struct stat st;

	snprintf(out, PATH_MAX, "%s", path);
	for (int hops = 0; hops < 40; hops++) {
		if (names_open_file(out)) {
			*in_place = true;
			return 0;
		}
		if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode))
			return 0;
		ssize_t n = readlink(out, link, sizeof(link) - 1);

		if (n < 0)
			return -1;
		link[n] = '\0';
		dir_of(out, dir, sizeof(dir));
		if (link[0] == '/')
			snprintf(next, sizeof(next), "%s", link);
		else if (snprintf(next, sizeof(next), "%s/%s", dir, link) >= (int)sizeof(next))
			return errno = ENAMETOOLONG, -1;
		memcpy(out, next, sizeof(next));
	}
	return errno = ELOOP, -1;
}

static int classify(const char *path, struct out_target *t, struct cp_error *err)
{
	bool in_place = false;
	struct stat st;

	memset(t, 0, sizeof(*t));
	if (!strcmp(path, "-"))
		return t->kind = OUT_STDOUT, 0;
	if (!*path)
		return cp_fail(err, CP_EXIT_USAGE, "output path is empty");
	if (resolve_links(path, t->path, &in_place))
		return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
	if (stat(t->path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return cp_fail(err, CP_EXIT_USAGE,
				       "cannot write %s: it is a directory; give a file name", path);
		t->exists = true;
		t->mode = st.st_mode & 07777;
		if (!S_ISREG(st.st_mode))
			in_place = true;
	}
	t->kind = in_place ? OUT_IN_PLACE : OUT_REPLACE;
	if (in_place)
		snprintf(t->path, sizeof(t->path), "%s", path);
	dir_of(t->path, t->dir, sizeof(t->dir));
	return 0;
}

/* A temporary file in dir that no kill can leave behind: O_TMPFILE has no
 * name until it is linked. Where the filesystem lacks it, a named file,
 * created with 0666 so that the umask applies as for any new file. */
static int open_temp(const char *dir, mode_t mode, char *name, size_t size)
{
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);

	name[0] = '\0';
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	for (int tries = 0; tries < 100; tries++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(name, size, "%s/.clockprof.%d.%lx", dir, (int)getpid(),
			 (unsigned long)ts.tv_nsec ^ ((unsigned long)tries << 20));
		fd = open(name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		name[0] = '\0';
	return fd;
}

/* Gives an O_TMPFILE file its name; a named temp file is just renamed. */
static int publish(int fd, const char *tmp, const struct out_target *t)
{
	char proc[64], name[PATH_MAX + 32];

	if (tmp[0])
		return rename(tmp, t->path);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!t->exists &&
	    (linkat(fd, "", AT_FDCWD, t->path, AT_EMPTY_PATH) == 0 ||
	     linkat(AT_FDCWD, proc, AT_FDCWD, t->path, AT_SYMLINK_FOLLOW) == 0))
		return 0;
	/* linkat cannot replace: link under a fresh name, then rename over. */
	for (int tries = 0; tries < 100; tries++) {
		snprintf(name, sizeof(name), "%s/.clockprof.%d.%d", t->dir, (int)getpid(), tries);
		if (linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH) == 0 ||
		    linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0) {
			if (rename(name, t->path) == 0)
				return 0;
			int saved = errno;

			unlink(name);
			return errno = saved, -1;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

static void fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* One output being written: the temp file (or the file itself, in place,
 * or standard output) behind a stdio stream. */
struct cp_atomic_out {
	struct out_target t;
	char tmp[PATH_MAX + 32];
	char *name;		/* the path as given, for messages */
	FILE *f;
	int fd;
};

static int open_target(struct cp_atomic_out *o)
{
	switch (o->t.kind) {
	case OUT_STDOUT:
		o->fd = STDOUT_FILENO;
		o->f = stdout;
		return 0;
	case OUT_IN_PLACE:
		o->fd = open(o->t.path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		break;
	case OUT_REPLACE:
		o->fd = open_temp(o->t.dir, 0666, o->tmp, sizeof(o->tmp));
		break;
	}
	if (o->fd < 0)
		return -1;
	if (!(o->f = fdopen(o->fd, "w"))) {
		int saved = errno;

		close(o->fd);
		if (o->tmp[0])
			unlink(o->tmp);
		return errno = saved, -1;
	}
	return 0;
}

struct cp_atomic_out *cp_atomic_open(const char *path, struct cp_error *err)
{
	struct cp_atomic_out *o = calloc(1, sizeof(*o));

	if (!o || !(o->name = strdup(path))) {
		free(o);
		cp_fail(err, CP_EXIT_USAGE, "cannot write %s: out of memory", path);
		return NULL;
	}
	if (classify(path, &o->t, err))
		goto fail;
	if (open_target(o)) {
		cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	return o;
fail:
	free(o->name);
	free(o);
	return NULL;
}

FILE *cp_atomic_stream(struct cp_atomic_out *o)
{
	return o->f;
}

/* Flushes the bytes and, for a replaced file, gives it its mode and name.
 * An existing file keeps its mode; a new one gets 0666 less the umask. */
static int finish(struct cp_atomic_out *o)
{
	if (fflush(o->f) != 0 || ferror(o->f))
		return errno ? -1 : (errno = EIO, -1);
	if (o->t.kind != OUT_REPLACE)
		return 0;
	if ((o->t.exists && fchmod(o->fd, o->t.mode) != 0) || fsync(o->fd) != 0 ||
	    publish(o->fd, o->tmp, &o->t) != 0)
		return -1;
	return 0;
}

static void release(struct cp_atomic_out *o)
{
	if (o->t.kind != OUT_STDOUT)
		fclose(o->f);
	free(o->name);
	free(o);
}

int cp_atomic_commit(struct cp_atomic_out *o, struct cp_error *err)
{
	int rc, saved;

	errno = 0;
	rc = finish(o);
	saved = errno;
	if (rc && o->tmp[0])
		unlink(o->tmp);
	if (rc && o->t.kind == OUT_STDOUT)
		cp_fail(err, CP_EXIT_USAGE, "cannot write to standard output: %s",
			strerror(saved));
	else if (rc)
		cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", o->name, strerror(saved));
	if (!rc && o->t.kind == OUT_REPLACE)
		fsync_dir(o->t.dir);
	release(o);
	return rc ? -1 : 0;
}

void cp_atomic_abort(struct cp_atomic_out *o)
{
	if (!o)
		return;
	if (o->t.kind == OUT_STDOUT)
		fflush(o->f);
	if (o->tmp[0])
		unlink(o->tmp);
	release(o);
}

int cp_write_file_atomic(const char *path, const void *buf, size_t len,
			 struct cp_error *err)
{
	struct cp_atomic_out *o = cp_atomic_open(path, err);

	if (!o)
		return -1;
	if (len && fwrite(buf, 1, len, o->f) != len) {
		int saved = errno;

		if (o->t.kind == OUT_STDOUT)
			cp_fail(err, CP_EXIT_USAGE, "cannot write to standard output: %s",
				strerror(saved));
		else
			cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path, strerror(saved));
		cp_atomic_abort(o);
		return -1;
	}
	return cp_atomic_commit(o, err);
}

/* Proves the directory takes a new file by making one (which vanishes). */
static int try_create_in(const char *dir)
{
	char tmp[PATH_MAX + 32];
	int fd = open_temp(dir, 0600, tmp, sizeof(tmp));

	if (fd < 0)
		return -1;
	close(fd);
	if (tmp[0])
		unlink(tmp);
	return 0;
}

int cp_check_writable(const char *path, struct cp_error *err)
{
	struct out_target t;
	struct stat st;
	int fd;

	if (classify(path, &t, err))
		return -1;
	if (t.kind == OUT_STDOUT)
		return 0;
	if (t.kind == OUT_IN_PLACE) {
		/* Opening a FIFO for writing waits for its reader: only ask. */
		if (stat(t.path, &st) != 0)
			fd = -1;
		else if (S_ISFIFO(st.st_mode))
			fd = access(t.path, W_OK) ? -1 : INT_MAX;
		/* Root may open any kernel file for writing; its mode says
		 * whether it takes writes at all. */
		else if (S_ISREG(st.st_mode) && !(st.st_mode & 0222))
			fd = -1, errno = EACCES;
		else
			fd = open(t.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path,
				       strerror(errno));
		if (fd != INT_MAX)
			close(fd);
		return 0;
	}
	if (stat(t.dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return cp_fail(err, CP_EXIT_USAGE,
			       "cannot write %s: directory %s does not exist",
			       path, t.dir);
	if (try_create_in(t.dir) != 0)
		return cp_fail(err, CP_EXIT_USAGE,
			       "cannot write %s: cannot create a file in %s (%s)",
			       path, t.dir, strerror(errno));
	return 0;
}
