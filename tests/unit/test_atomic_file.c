/* test_atomic_file.c - output paths that are not plain files are written,
 * never replaced; new files honour the umask; no temp file is left.
 * Everything happens in a private temporary directory: device nodes are
 * made there (or reached through a symlink to /dev/null, which is only
 * ever written, never replaced, by correct code). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"
#include "unit.h"

static void scratch(char *dir)
{
	strcpy(dir, "/tmp/cp-atomic-XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = '\0';
}

static void remove_tree(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "  cannot remove %s\n", dir);
}

/* Entries in dir other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static int slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (int)n;
}

TEST(atomic_file_new_file_honours_umask)
{
	char dir[64], path[128], buf[64];
	struct cp_error err = { 0 };
	struct stat st;
	mode_t old = umask(077);
	int rc;

	scratch(dir);
	CHECK(dir[0]);
	snprintf(path, sizeof(path), "%s/run.json", dir);
	rc = cp_write_file_atomic(path, "secret\n", 7, &err);
	umask(old);
	CHECK_INT(rc, 0);
	CHECK(stat(path, &st) == 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	CHECK(slurp(path, buf, sizeof(buf)) == 7);
	CHECK_STR(buf, "secret\n");
	CHECK_INT(entries(dir), 1);
	/* Replacing keeps the existing file's mode. */
	CHECK(chmod(path, 0640) == 0);
	CHECK_INT(cp_write_file_atomic(path, "again\n", 6, &err), 0);
	CHECK(stat(path, &st) == 0);
	CHECK_INT(st.st_mode & 0777, 0640);
	CHECK_INT(entries(dir), 1);
	remove_tree(dir);
}

/* A symlink is opened as given and written through, in place: never
 * resolved and renamed over (which as root went past
 * fs.protected_symlinks to whatever another user's link named). */
TEST(atomic_file_symlink_written_through_in_place)
{
	char dir[64], link[128], target[128], dangling[128], buf[64];
	struct cp_error err = { 0 };
	struct stat before, after;

	scratch(dir);
	CHECK(dir[0]);
	snprintf(target, sizeof(target), "%s/real.json", dir);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	CHECK_INT(cp_write_file_atomic(target, "old text", 8, &err), 0);
	CHECK(chmod(target, 0604) == 0);
	CHECK(stat(target, &before) == 0);
	CHECK(symlink("real.json", link) == 0);
	CHECK_INT(cp_write_file_atomic(link, "new", 3, &err), 0);
	CHECK(lstat(link, &after) == 0);
	CHECK(S_ISLNK(after.st_mode));
	CHECK(stat(target, &after) == 0);
	/* The same file, truncated and written: not a new one renamed. */
	CHECK(after.st_ino == before.st_ino);
	CHECK_INT(after.st_mode & 0777, 0604);
	CHECK(slurp(target, buf, sizeof(buf)) == 3);
	CHECK_STR(buf, "new");
	/* A link to nothing yet makes its file, as a shell's `>` does. */
	snprintf(dangling, sizeof(dangling), "%s/later.json", dir);
	CHECK(symlink("made.json", dangling) == 0);
	CHECK_INT(cp_write_file_atomic(dangling, "made", 4, &err), 0);
	CHECK(lstat(dangling, &after) == 0 && S_ISLNK(after.st_mode));
	snprintf(target, sizeof(target), "%s/made.json", dir);
	CHECK(slurp(target, buf, sizeof(buf)) == 4);
	CHECK_STR(buf, "made");
	CHECK_INT(entries(dir), 4);
	remove_tree(dir);
}

/* Opened and dropped: what the commands do to prove a path writable. */
static int opens(const char *path, struct cp_error *err)
{
	struct cp_atomic_out *o = cp_atomic_open(path, NULL, err);

	cp_atomic_abort(o);
	return o ? 0 : -1;
}

TEST(atomic_file_char_device_written_in_place)
{
	char dir[64], link[128], node[128];
	struct cp_error err = { 0 };
	struct stat st;

	scratch(dir);
	CHECK(dir[0]);
	/* A symlink to /dev/null: the old code renamed a file over the link. */
	snprintf(link, sizeof(link), "%s/null", dir);
	CHECK(symlink("/dev/null", link) == 0);
	CHECK_INT(cp_write_file_atomic(link, "x", 1, &err), 0);
	CHECK(lstat(link, &st) == 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
	CHECK_INT(opens(link, &err), 0);
	/* Our own null device node, where we may make one (root). */
	snprintf(node, sizeof(node), "%s/nulldev", dir);
	if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		CHECK_INT(opens(node, &err), 0);
		CHECK_INT(cp_write_file_atomic(node, "x", 1, &err), 0);
		CHECK(lstat(node, &st) == 0);
		CHECK(S_ISCHR(st.st_mode));
	}
	CHECK_INT(entries(dir), 1 + (access(node, F_OK) == 0));
	remove_tree(dir);
}

TEST(atomic_file_fifo_reader_gets_the_data)
{
	char dir[64], fifo[128], buf[64] = "";
	struct cp_error err = { 0 };
	struct stat st;
	int status, pfd[2];
	pid_t reader;

	scratch(dir);
	CHECK(dir[0]);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(pipe(pfd) == 0);
	reader = fork();
	CHECK(reader >= 0);
	if (reader == 0) {
		/* Relays what the FIFO carries to the parent. */
		int fd = open(fifo, O_RDONLY);
		char b[64];
		ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof(b));

		if (n > 0 && write(pfd[1], b, (size_t)n) != n)
			_exit(2);
		_exit(n > 0 ? 0 : 1);
	}
	close(pfd[1]);
	CHECK_INT(cp_write_file_atomic(fifo, "through", 7, &err), 0);
	CHECK(waitpid(reader, &status, 0) == reader);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(read(pfd[0], buf, sizeof(buf) - 1) == 7);
	close(pfd[0]);
	CHECK_STR(buf, "through");
	CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK_INT(entries(dir), 1);
	remove_tree(dir);
}

TEST(atomic_file_dev_fd_written)
{
	char path[64], buf[64] = "";
	struct cp_error err = { 0 };
	int pfd[2];

	CHECK(pipe(pfd) == 0);
	snprintf(path, sizeof(path), "/dev/fd/%d", pfd[1]);
	CHECK_INT(cp_write_file_atomic(path, "piped", 5, &err), 0);
	close(pfd[1]);
	CHECK(read(pfd[0], buf, sizeof(buf) - 1) == 5);
	close(pfd[0]);
	CHECK_STR(buf, "piped");
}

TEST(atomic_file_proc_checked_before_work)
{
	struct cp_error err = { 0 };

	/* /proc takes no new files; the check must say so up front, even
	 * for root, who passes access(W_OK) there. */
	CHECK_INT(opens("/proc/clockprof-run.json", &err), -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(err.msg, "/proc") != NULL);
	CHECK_INT(opens("/proc/self/status", &err), -1);
}

/* Written piece by piece: the old file stays whole until the commit
 * (a reader sees the old bytes or all of the new ones), an abort leaves
 * it as it was, and neither leaves a temp file behind. */
TEST(atomic_file_streamed_replaces_only_at_commit)
{
	char dir[64], path[128], buf[64];
	struct cp_error err = { 0 };
	struct cp_atomic_out *o;

	scratch(dir);
	CHECK(dir[0]);
	snprintf(path, sizeof(path), "%s/verdict.json", dir);
	CHECK_INT(cp_write_file_atomic(path, "old", 3, &err), 0);
	CHECK((o = cp_atomic_open(path, NULL, &err)) != NULL);
	fputs("new ", cp_atomic_stream(o));
	fflush(cp_atomic_stream(o));
	CHECK(slurp(path, buf, sizeof(buf)) == 3);
	CHECK_STR(buf, "old");
	fputs("text", cp_atomic_stream(o));
	CHECK_INT(cp_atomic_commit(o, &err), 0);
	CHECK(slurp(path, buf, sizeof(buf)) == 8);
	CHECK_STR(buf, "new text");
	CHECK((o = cp_atomic_open(path, NULL, &err)) != NULL);
	fputs("dropped", cp_atomic_stream(o));
	cp_atomic_abort(o);
	CHECK(slurp(path, buf, sizeof(buf)) == 8);
	CHECK_STR(buf, "new text");
	CHECK_INT(entries(dir), 1);
	/* A device is written in place, as with one buffer. */
	CHECK((o = cp_atomic_open("/dev/null", NULL, &err)) != NULL);
	fputs("x", cp_atomic_stream(o));
	CHECK_INT(cp_atomic_commit(o, &err), 0);
	remove_tree(dir);
}

/* A full device fails the commit with the file named, exit 2. */
TEST(atomic_file_streamed_write_failure_reported)
{
	struct cp_error err = { 0 };
	struct cp_atomic_out *o = cp_atomic_open("/dev/full", NULL, &err);
	char big[8192];

	if (!o) {
		unit_skip("no /dev/full");
		return;
	}
	memset(big, 'x', sizeof(big));
	fwrite(big, 1, sizeof(big), cp_atomic_stream(o));
	CHECK_INT(cp_atomic_commit(o, &err), -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(err.msg, "/dev/full") != NULL);
}
