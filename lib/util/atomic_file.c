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
#include "fifo_open.h"

/* Where the bytes of an output path go. */
enum out_kind {
	OUT_STDOUT,   /* "-" */
	OUT_IN_PLACE, /* device, FIFO, socket, symlink, /proc: opened and written */
	OUT_REPLACE,  /* regular or new file: temp file renamed over it */
};

struct out_target {
	enum out_kind kind;
	bool link; /* a symlink: opened as given, the kernel follows it */
	char path[PATH_MAX];
	char dir[PATH_MAX]; /* for OUT_REPLACE: its directory */
	bool exists;
	mode_t mode; /* of the existing file */
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

/* Kernel files under /proc cannot be replaced, only written (or not). */
static bool names_kernel_file(const char *path)
{
	return !strncmp(path, "/proc/", 6);
}

/* A symlink is never resolved here: resolving it and renaming over what
 * it names would let a link planted in /tmp by another user aim root's
 * write anywhere, past fs.protected_symlinks. It is opened as given, as a
 * shell's `>` does, so the kernel's rules and permissions decide. */
static int classify(const char *path, struct out_target *t, struct cp_error *err)
{
	struct stat st;

	memset(t, 0, sizeof(*t));
	if (!strcmp(path, "-"))
		return t->kind = OUT_STDOUT, 0;
	if (!*path)
		return cp_fail(err, CP_EXIT_USAGE, "output path is empty");
	if (snprintf(t->path, sizeof(t->path), "%s", path) >= (int)sizeof(t->path))
		return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path,
			       strerror(ENAMETOOLONG));
	t->kind = OUT_REPLACE;
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT)
			return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path,
				       strerror(errno));
	} else if (S_ISLNK(st.st_mode)) {
		t->link = true;
		t->kind = OUT_IN_PLACE;
	} else if (S_ISDIR(st.st_mode)) {
		return cp_fail(err, CP_EXIT_USAGE,
			       "cannot write %s: it is a directory; give a file name", path);
	} else {
		t->exists = true;
		t->mode = st.st_mode & 07777;
		/* Root may open any kernel file for writing; its mode says
		 * whether it takes writes at all. */
		if (names_kernel_file(path) && S_ISREG(st.st_mode) && !(st.st_mode & 0222))
			return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path,
				       strerror(EACCES));
		if (!S_ISREG(st.st_mode) || names_kernel_file(path))
			t->kind = OUT_IN_PLACE;
	}
	if (t->kind == OUT_REPLACE && names_kernel_file(path))
		t->kind = OUT_IN_PLACE; /* no new file there: open() says so */
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
	if (!t->exists && (linkat(fd, "", AT_FDCWD, t->path, AT_EMPTY_PATH) == 0 ||
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
	char *name; /* the path as given, for messages */
	FILE *f;
	int fd;
	bool interrupted; /* a stop signal ended the wait for a reader */
};

/* A symlink may be made (O_CREAT), as by a shell's `>`, when it points
 * nowhere yet; a device or FIFO that vanished is not. */
static int open_target(struct cp_atomic_out *o, cp_wait_notice notice)
{
	int flags = O_TRUNC | O_CLOEXEC | (o->t.link ? O_CREAT : 0);

	switch (o->t.kind) {
	case OUT_STDOUT:
		o->fd = STDOUT_FILENO;
		o->f = stdout;
		return 0;
	case OUT_IN_PLACE:
		o->fd = cp_open_for_writing(o->t.path, flags, 0666, notice);
		o->interrupted = o->fd < 0 && errno == EINTR;
		break;
	case OUT_REPLACE: o->fd = open_temp(o->t.dir, 0666, o->tmp, sizeof(o->tmp)); break;
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

static void open_failed(const struct cp_atomic_out *o, struct cp_error *err)
{
	struct stat st;

	if (o->interrupted)
		cp_fail(err, CP_EXIT_USAGE,
			"cannot write %s: interrupted while waiting for a reader", o->name);
	else if (o->t.kind == OUT_REPLACE && errno == ENOENT &&
		 (stat(o->t.dir, &st) != 0 || !S_ISDIR(st.st_mode)))
		cp_fail(err, CP_EXIT_USAGE, "cannot write %s: directory %s does not exist", o->name,
			o->t.dir);
	else if (o->t.kind == OUT_REPLACE || (!o->t.exists && !o->t.link))
		cp_fail(err, CP_EXIT_USAGE, "cannot write %s: cannot create a file in %s (%s)",
			o->name, o->t.dir, strerror(errno));
	else
		cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", o->name, strerror(errno));
}

struct cp_atomic_out *cp_atomic_open(const char *path, cp_wait_notice notice, struct cp_error *err)
{
	struct cp_atomic_out *o = calloc(1, sizeof(*o));

	if (!o || !(o->name = strdup(path))) {
		free(o);
		cp_fail(err, CP_EXIT_USAGE, "cannot write %s: out of memory", path);
		return NULL;
	}
	if (classify(path, &o->t, err))
		goto fail;
	if (open_target(o, notice)) {
		open_failed(o, err);
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

bool cp_atomic_staged(const struct cp_atomic_out *o)
{
	return o->t.kind == OUT_REPLACE;
}

/* Flushes the bytes; a file to replace also gets its mode (an existing
 * file keeps its own; a new one has 0666 less the umask) and reaches the
 * disk, so that only the rename is left. */
static int finish(struct cp_atomic_out *o)
{
	if (fflush(o->f) != 0 || ferror(o->f))
		return errno ? -1 : (errno = EIO, -1);
	if (o->t.kind != OUT_REPLACE)
		return 0;
	if ((o->t.exists && fchmod(o->fd, o->t.mode) != 0) || fsync(o->fd) != 0)
		return -1;
	return 0;
}

static void write_failed(const struct cp_atomic_out *o, int saved, struct cp_error *err)
{
	if (o->t.kind == OUT_STDOUT)
		cp_fail(err, CP_EXIT_USAGE, "cannot write to standard output: %s", strerror(saved));
	else
		cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", o->name, strerror(saved));
}

int cp_atomic_flush(struct cp_atomic_out *o, struct cp_error *err)
{
	errno = 0;
	if (finish(o) == 0)
		return 0;
	write_failed(o, errno, err);
	return -1;
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
	if (!rc && o->t.kind == OUT_REPLACE)
		rc = publish(o->fd, o->tmp, &o->t);
	saved = errno;
	if (rc && o->tmp[0])
		unlink(o->tmp);
	if (rc)
		write_failed(o, saved, err);
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

int cp_write_file_atomic(const char *path, const void *buf, size_t len, struct cp_error *err)
{
	struct cp_atomic_out *o = cp_atomic_open(path, NULL, err);

	if (!o)
		return -1;
	if (len && fwrite(buf, 1, len, o->f) != len) {
		write_failed(o, errno, err);
		cp_atomic_abort(o);
		return -1;
	}
	return cp_atomic_commit(o, err);
}
